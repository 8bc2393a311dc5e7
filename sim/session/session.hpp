#pragma once
// The one run loop of eddy: steps or a simulated end time, the blow-up checks
// (every checkEvery steps and once at the end), the diagnostics and export
// cadence, and a stop request (a signal) honoured at a step boundary. Used by
// `eddy-cli run`, `eddy-cli bench frame` and the desktop app's Controller (its
// frames: advance(), frameStart()/frameEnd() and estimateTime() below). No GL,
// no terminal: progress and stopping reach the caller through callbacks.

#include "simulation.hpp"

#include <chrono>
#include <cmath>
#include <cstdint>
#include <functional>
#include <optional>
#include <ostream>
#include <vector>

namespace eddy {

class VtkSeries;

// A rigid body's state (position, orientation or velocity) went non-finite
// (e.g. a body so heavy that its float arithmetic overflowed) while the fluid
// particles may still be finite. A BlowUpError (the run fails the same way,
// exit 1, no final state written) with a message about the bodies.
class BodyBlowUpError : public BlowUpError {
 public:
  BodyBlowUpError(const BlowUp& b, std::string_view sim, size_t badBodies, size_t bodies);
  const char* what() const noexcept override { return message_.c_str(); }

 private:
  std::string message_;
};

struct SessionSettings {
  static constexpr uint64_t kUnbounded = UINT64_MAX;  // steps of a run that never finishes (the app)
  uint64_t steps = 1000;         // this run's steps (counted from the current step)
  std::optional<double> until;   // instead of steps: run until this simulated time
  uint64_t checkEvery = 100;     // NaN/inf check every K steps (0 = only at the end)
  uint64_t diagEvery = 10;       // diagnostics row every K steps (with a diag stream)
  uint64_t exportEvery = 100;    // export frame every K steps (with a series)
};

// How a run() ended.
struct SessionEnd {
  bool stopped = false;  // stop() answered true at a step boundary
  double wallSeconds = 0;
};

class Session {
 public:
  using Clock = std::chrono::steady_clock;

  Session(Simulation& sim, SessionSettings settings);

  // Outputs, attached before begin(): the diagnostics CSV stream (header and
  // rows) and the ParaView series (frames). Both optional.
  void setDiag(std::ostream* diag) { diag_ = diag; }
  void setSeries(VtkSeries* series) { series_ = series; }
  // The rigid objects' CSV (eddy-cli --bodies-out): header step,time + the
  // simulation's objectColumns(), then one row per object at every
  // diagnostics step (diagEvery), the first and the last too. Optional.
  void setObjects(std::ostream* objects) { objects_ = objects; }

  // Writes the diag header and the first row and the first export frame,
  // checks the state (particles, and rigid bodies) before the first step (this also builds the check's
  // kernel before the loop, so that no kernel is compiled once steps run),
  // resets the profiler and starts the wall clock. Throws BlowUpError.
  void begin();

  // One step and whatever the cadence asks for at the step it reaches.
  // Throws BlowUpError when a periodic check finds NaN/inf.
  void step();

  // Whether the run's steps are done or its end time is reached. With
  // `until` the simulated time is read back only now and then (on SPH it is
  // chosen on the device): after half the steps the mean dt says are left.
  bool finished();
  // Whether simulated time t has reached the end time `until`: to within
  // 1e-12 of `until` (the rounding of a sum of time steps), relative, so that
  // --until 1e-12 runs a step (an absolute 1e-12 ran none, silently).
  static bool reached(double t, double until) { return t >= until - 1e-12 * std::fabs(until); }

  // The loop: step() until finished() or stop() says so (asked before every
  // step); progress(step) after every step. Then Simulation::finish() and,
  // whatever checkEvery is, one last check (a blow-up never ends quietly).
  // `stopped` is stop()'s answer after that: a stop that came late still counts.
  SessionEnd run(const std::function<bool()>& stop = {},
                 const std::function<void(uint64_t)>& progress = {});

  // After a run that was not stopped: the last diagnostics row and export
  // frame where the cadence did not just write them. Returns the last row.
  const std::vector<double>& end();

  // ---- Frames: an interactive loop (the desktop app's Controller::frame,
  // bench frame). A frame is frameStart(), up to some steps through advance(),
  // then frameEnd(). A frame loop needs neither begin() nor end() (they write
  // a run's first and last outputs and wait for the device); nothing here
  // waits for the device except frameEnd() of a frame without steps. ----

  // Up to `maxSteps` step()s, fewer where finished() says the run is done (a
  // session with steps = kUnbounded and no `until` never is). Returns the
  // steps run. A blow-up found by step()'s checkEvery cadence is thrown.
  uint64_t advance(uint64_t maxSteps);

  // The answer of the check an earlier frameEnd() enqueued, if the device has
  // given it by now (never waits): a blow-up, or nullopt (finite, or no
  // answer yet, or no check pending). Read at the start of a frame, before
  // its steps, a blow-up stops the stepping at the checked step.
  std::optional<BlowUp> frameStart();
  // After a frame's `steps`: every `everyFrames` frames that ran steps, a
  // check of the state is enqueued (pollFinite: never waits) and the previous
  // check's answer returned; a frame without steps (paused, or the end of a
  // "run N steps") settles the pending answer and checks the steps not yet
  // checked, waiting for that tiny kernel behind work already done.
  // everyFrames = 0: no checks.
  std::optional<BlowUp> frameEnd(uint64_t steps, unsigned everyFrames);

  // The simulated time the steps enqueued so far reach and the current time
  // step, as far as the host knows them without waiting: the simulation's
  // last clock sample (Simulation::clockSample(); on SPH a non-blocking read
  // of the device clock that lags a few steps) extrapolated to the current
  // step with the sample's dt. dt = 0: not known yet (no sample with a time
  // step so far); the time is then the sample's. Used once per frame by
  // the real-time pacing, never per step.
  struct TimeEstimate {
    double time = 0;
    double dt = 0;
  };
  TimeEstimate estimateTime();

  const std::vector<double>& firstRow() const { return first_; }
  const std::vector<double>& lastRow() const { return last_; }
  uint64_t startStep() const { return startStep_; }
  uint64_t stepsRun() const { return sim_.steps() - startStep_; }
  Clock::time_point started() const { return t0_; }
  const SessionSettings& settings() const { return s_; }

 private:
  Simulation& sim_;
  SessionSettings s_;
  std::ostream* diag_ = nullptr;
  VtkSeries* series_ = nullptr;
  std::ostream* objects_ = nullptr;
  void writeObjects();
  // Throws BodyBlowUpError if a rigid body's row has a NaN or infinity.
  void checkObjects(const std::vector<std::vector<double>>& rows);
  uint64_t startStep_ = 0;
  uint64_t nextCheck_ = 0, lastSteps_ = 0;
  double lastTime_ = 0;
  double peakDt_ = 0;  // the largest mean dt between two time checks (until runs)
  static constexpr uint64_t kCollapseSteps = 1000;
  std::vector<double> first_, last_;
  std::optional<uint64_t> diagNonFinite_;  // the first diagnostics row with a NaN/inf
  Clock::time_point t0_{};
  // frameStart()/frameEnd():
  unsigned framesSinceCheck_ = 0;
  bool checkPending_ = false;    // a check is on the device, its answer not yet read
  bool uncheckedSteps_ = false;  // steps ran since the last check was enqueued
};

}  // namespace eddy
