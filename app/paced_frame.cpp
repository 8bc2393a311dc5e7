#include "paced_frame.hpp"

namespace eddy {

PacedFrame planPacedFrame(RealtimePacer& pacer, Session& session, Simulation& sim, double wall,
                          bool fresh) {
  PacedFrame f;
  const Session::TimeEstimate now = session.estimateTime();
  sim.profiler().collect(false);  // completed events only: never waits
  const double cost = sim.profiler().meanStepMs() * 1e-3;
  // A cost still unknown before this session's first step, or while events
  // are outstanding, will be known soon; a simulation that has stepped and
  // records no device time at all is paced without a cap.
  const bool costComing = session.stepsRun() == 0 || sim.profiler().pending() > 0;
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
