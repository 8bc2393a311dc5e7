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

// Fixed stepping's steps per frame (`--substeps K`, the app's and `bench
// frame`'s): at most this many.
constexpr unsigned kMaxSubsteps = 10000;

struct PacedFrame {
  uint64_t steps = 0;
  bool probe = false;          // one step to learn dt or a step's device time: not planned
  RealtimePacer::Plan plan;    // the pacer's plan (a probe's: one step, RealtimePacer::probe)
};

// Until both the time step and a step's device time are known, a frame runs
// one step (a probe): an unknown device, PoCL on two cores, must not start
// with a burst. The pacer still counts the probe's wall time as owed and
// carries what the step leaves owed (RealtimePacer::probe), so the frames
// after it make up the start (a recording started with the run covers its
// video's length x speed). SPH knows dt after its first clock read
// (8 steps), the device time a frame or two after the first step. A pacer
// with an infinite budget (a batch recording: nobody waits for its frames)
// reads the device clock exactly each frame instead and waits for no step's
// device time. `wall`: this frame's wall seconds. `fresh`: the pacer starts
// afresh (after a pause, a rebuild or fixed steps): reset() before observing.
PacedFrame planPacedFrame(RealtimePacer& pacer, Session& session, Simulation& sim, double wall,
                          bool fresh);

}  // namespace eddy
