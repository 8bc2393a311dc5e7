// profiler.hpp: per-phase device times from OpenCL event profiling.
//
// Each kernel launch hands its event to record(); collect() later reads
// CL_PROFILING_COMMAND_START/END of the events that have completed (it never
// waits unless asked), so timing never stalls the pipeline.
//
// Sampling: launches made through run()/launch() get an event only in one
// step out of sampleEvery() (steps 0, K, 2K, ...); the others are enqueued
// without one. An event costs about 8 us of host time per launch on NVIDIA's
// OpenCL (12 us with its collection), twice the launch itself, and at small
// N the host's enqueue is what limits a step (docs/PERFORMANCE.md,
// "Profiling events"). The statistics are then those of the sampled steps:
// means and shares as before, counts and totals over sampledSteps().
#pragma once

#include "cl.hpp"
#include "kernel_args.hpp"
#include "launch_batch.hpp"

#include <cstdint>
#include <deque>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

namespace eddy {

struct PhaseStats {
  std::string name;
  double lastMs = 0, meanMs = 0, minMs = 0, maxMs = 0;  // over the window
  double totalMs = 0;                                  // since reset
  uint64_t count = 0;                                  // since reset
};

class Profiler {
 public:
  explicit Profiler(size_t window = 128) : window_(window) {}

  // Remember the event of one launch of `phase` in the current step.
  void record(const std::string& phase, const cl::Event& event);

  // Launches `kernel` with `args`; in a sampled step with an event that is
  // recorded for `phase`, otherwise without an event.
  // Within an open LaunchBatch (setBatch) and outside a sampled step, the
  // launch is deferred to the batch instead (launch_batch.hpp).
  template <class... Ts, class... As>
  void run(std::string_view phase, KernelFunctor<Ts...>& kernel, const EnqueueArgs& range,
           As&&... args) {
    if (batch_ && batch_->deferring()) {
      if (!sampling()) {
        batch_->add<Ts...>(kernel.kernel(), range, std::forward<As>(args)...);
        return;
      }
      batch_->flush();  // none deferred in a sampled step: kept for order
    }
    if (sampling())
      record(std::string(phase), kernel(range, std::forward<As>(args)...));
    else
      kernel.enqueue(range, nullptr, std::forward<As>(args)...);
  }
  // The same with the arguments in a kernel_args.hpp struct.
  template <class Args>
  void launch(std::string_view phase, KernelFunctorOf<Args>& kernel, const EnqueueArgs& range,
              const Args& a) {
    std::apply([&](const auto&... x) { run(phase, kernel, range, x...); }, a.args());
  }

  // The batch that unsampled launches go to while it is open (nullptr: none).
  void setBatch(LaunchBatch* batch) { batch_ = batch; }
  LaunchBatch* batch() const { return batch_; }

  // One step in `every` (>= 1) is sampled; 1 = every launch has an event.
  void setSampleEvery(uint64_t every) { every_ = every < 1 ? 1 : every; }
  uint64_t sampleEvery() const { return every_; }
  // Whether the launches of the current step are timed.
  bool sampling() const { return step_ % every_ == 0; }
  // Steps ended since the last reset(), and how many of them were sampled.
  uint64_t steps() const { return step_ - resetStep_; }
  uint64_t sampledSteps() const { return sampled_; }
  // The device time of every step since reset() estimated from the sampled
  // steps' total `sampledMs` (itself when every step is sampled).
  double allStepsMs(double sampledMs) const {
    return sampled_ ? sampledMs * double(steps()) / double(sampled_) : sampledMs;
  }
  // Marks the end of a simulation step (groups events for the step time).
  void endStep() {
    if (sampling()) ++sampled_;
    ++step_;
  }
  // Moves every completed event into the statistics. With wait = true, first
  // waits for all pending events (use at the end of a headless run).
  void collect(bool wait = false);
  // Pending (not yet completed) events: callers use this to bound queue depth.
  size_t pending() const { return pending_.size(); }
  // Waits until at most `keep` events are outstanding, then collects. Bounds
  // how far the host runs ahead without draining the whole queue.
  void drainTo(size_t keep);
  // Steps ended since the oldest step with an event still pending (0: none
  // pending). With sampling, steps after the last sampled one are not seen.
  uint64_t stepsPending() const { return pending_.empty() ? 0 : step_ - pending_.front().step; }
  // Waits for the events of the steps older than the last `keep` steps.
  void drainStepsTo(uint64_t keep);

  std::vector<PhaseStats> stats() const;  // in first-seen order
  // Device time of each completed step (sum of its kernels), oldest first.
  const std::deque<double>& stepHistoryMs() const { return stepHistory_; }
  double meanStepMs() const;
  // Text table: phase, last, mean, min, max (ms), share of the step.
  std::string table() const;
  void reset();

 private:
  struct Pending {
    size_t phase;
    uint64_t step;
    cl::Event event;
  };
  struct Phase {
    std::string name;
    std::deque<double> window;
    double last = 0, total = 0;
    uint64_t count = 0;
  };
  size_t phaseIndex(const std::string& name);

  size_t window_;
  LaunchBatch* batch_ = nullptr;
  uint64_t step_ = 0, sampled_ = 0, every_ = 1, resetStep_ = 0;
  std::deque<Pending> pending_;
  std::vector<Phase> phases_;
  uint64_t openStep_ = UINT64_MAX;  // step whose time is being summed
  double openStepMs_ = 0;
  std::deque<double> stepHistory_;
};

}  // namespace eddy
