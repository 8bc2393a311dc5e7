#include "paced_frame.hpp"

namespace eddy {

PacedFrame planPacedFrame(RealtimePacer& pacer, Session& session, Simulation& sim, double wall,
                          bool fresh) {
  PacedFrame f;
  const Session::TimeEstimate now = session.estimateTime();
  sim.profiler().collect(false);  // completed events only: never waits
  const double cost = sim.profiler().meanStepMs() * 1e-3;
  // A cost still unknown before this session's first step, while events are
  // outstanding, or before a timed step (one in profile_every) has ended
  // since the profiler's statistics were reset (--stats, bench frame), will be
  // known soon: one step a frame meanwhile. A simulation that has stepped and
  // records no device time at all is paced without a cap.
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
