#include "paced_frame.hpp"

#include <cmath>

namespace eddy {

PacedFrame planPacedFrame(RealtimePacer& pacer, Session& session, Simulation& sim, double wall,
                          bool fresh) {
  PacedFrame f;
  // A pacer without a compute budget paces a batch recording, whose frames no
  // one waits for: it reads the device clock exactly (a blocking read, the
  // time and dt of the last step) and needs no step's device time, so only a
  // first frame before any step probes.
  const bool batch = std::isinf(pacer.budget());
  if (batch) sim.syncTime();
  const Session::TimeEstimate now = session.estimateTime();
  sim.profiler().collect(false);  // completed events only: never waits
  // The profiler's recent steps; while its window is empty after a reset of
  // its statistics (--stats after the warm-up, bench frame: the next timed
  // step, one in profile_every, may be frames away), the cost last measured
  // for this session's simulation. A new simulation starts unmeasured.
  if (session.stepsRun() == 0) pacer.forgetStepCost();
  double cost = sim.profiler().meanStepMs() * 1e-3;
  if (cost > 0)
    pacer.rememberStepCost(cost);
  else
    cost = pacer.rememberedStepCost();
  // A cost still unknown before this session's first step, while events are
  // outstanding, or before a timed step has ended since a reset, will be
  // known soon: one step a frame meanwhile (never an uncapped burst). A
  // simulation that has stepped and records no device time at all is paced
  // without a cap.
  const bool costComing = !batch && (session.stepsRun() == 0 || sim.profiler().pending() > 0 ||
                                     sim.profiler().sampledSteps() == 0);
  if (fresh) pacer.reset();
  pacer.observe(now.time);
  if (!(now.dt > 0) || (!(cost > 0) && costComing)) {
    f.probe = true;
    f.plan = pacer.probe(wall, now.dt);  // one step; what it leaves owed is carried
    f.steps = f.plan.steps;
    return f;
  }
  f.plan = pacer.plan(wall, now.dt, cost > 0 ? cost : 0.0);
  f.steps = f.plan.steps;
  return f;
}

}  // namespace eddy
