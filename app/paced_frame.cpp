#include "paced_frame.hpp"

namespace eddy {

PacedFrame planPacedFrame(RealtimePacer& pacer, Session& session, Simulation& sim, double wall,
                          bool fresh) {
  PacedFrame f;
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
  const bool costComing = session.stepsRun() == 0 || sim.profiler().pending() > 0 ||
                          sim.profiler().sampledSteps() == 0;
  if (!(now.dt > 0) || (!(cost > 0) && costComing)) {
    f.probe = true;
    f.steps = 1;
    return f;
  }
  if (fresh) pacer.reset();
  pacer.observe(now.time);
  f.plan = pacer.plan(wall, now.dt, cost > 0 ? cost : 0.0);
  f.steps = f.plan.steps;
  return f;
}

}  // namespace eddy
