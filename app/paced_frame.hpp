// paced_frame.hpp: the steps one frame runs in real-time mode, for every front
// end that paces a Session to the wall clock (the app's Controller, bench
// frame --realtime): the session's estimate of the simulated time and dt (a
// clock sample, never a blocking read), the device time per step from the
// simulation's profiler (completed events only), and the pacer's plan.
#pragma once

#include "realtime_pacer.hpp"
#include "session.hpp"

#include <cstdint>

namespace eddy {

struct PacedFrame {
  uint64_t steps = 0;
  bool probe = false;          // one step to learn dt or a step's device time: not paced
  RealtimePacer::Plan plan;    // the pacer's plan (when not a probe)
};

// Until both the time step and a step's device time are known, a frame runs
// one step and the pacer waits (a probe): an unknown device, PoCL on two
// cores, must not start with a burst, and the real-time factor reported
// starts with the first paced frame. SPH knows dt after its first clock read
// (8 steps), the device time a frame or two after the first step.
// `wall`: this frame's wall seconds. `fresh`: the pacer starts afresh (after
// a pause, a rebuild, fixed steps or a probe): reset() before observing.
PacedFrame planPacedFrame(RealtimePacer& pacer, Session& session, Simulation& sim, double wall,
                          bool fresh);

}  // namespace eddy
