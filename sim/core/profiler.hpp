// profiler.hpp: per-phase device times from OpenCL event profiling.
//
// Each kernel launch hands its event to record(); collect() later reads
// CL_PROFILING_COMMAND_START/END of the events that have completed (it never
// waits unless asked), so timing never stalls the pipeline.
#pragma once

#include "cl.hpp"

#include <cstdint>
#include <deque>
#include <string>
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
  // Marks the end of a simulation step (groups events for the step time).
  void endStep() { ++step_; }
  // Moves every completed event into the statistics. With wait = true, first
  // waits for all pending events (use at the end of a headless run).
  void collect(bool wait = false);
  // Pending (not yet completed) events: callers use this to bound queue depth.
  size_t pending() const { return pending_.size(); }
  // Waits until at most `keep` events are outstanding, then collects. Bounds
  // how far the host runs ahead without draining the whole queue.
  void drainTo(size_t keep);

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
  uint64_t step_ = 0;
  std::deque<Pending> pending_;
  std::vector<Phase> phases_;
  uint64_t openStep_ = UINT64_MAX;  // step whose time is being summed
  double openStepMs_ = 0;
  std::deque<double> stepHistory_;
};

}  // namespace eddy
