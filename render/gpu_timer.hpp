// gpu_timer.hpp: GPU time of each render pass from OpenGL timer queries
// (GL_TIME_ELAPSED). A ring of query sets, one per frame in flight: the
// results of frame f are read kRing frames later, and only once
// GL_QUERY_RESULT_AVAILABLE says so, so timing never stalls the pipeline.
// While the oldest set is still pending, a frame goes untimed instead of
// waiting. Needs a current OpenGL 3.3 context.
#pragma once

#include "gl.hpp"
#include "profiler.hpp"  // PhaseStats (the panel's profiler rows)

#include <deque>
#include <string>
#include <vector>

namespace eddy {

// Per-pass statistics over a window of frames (GL-free).
class PassStats {
 public:
  explicit PassStats(size_t window = 64) : window_(window) {}
  void add(const std::string& pass, double ms);
  // One frame's results are complete: its total is the frame's GPU time.
  void endFrame(double totalMs) { lastFrameMs_ = totalMs; ++frames_; }
  std::vector<PhaseStats> stats() const;  // in first-seen order
  double lastFrameMs() const { return lastFrameMs_; }
  uint64_t frames() const { return frames_; }
  void reset();

 private:
  struct Pass {
    std::string name;
    std::deque<double> window;
    double last = 0, total = 0;
    uint64_t count = 0;
  };
  size_t window_;
  std::vector<Pass> passes_;
  double lastFrameMs_ = 0;
  uint64_t frames_ = 0;
};

class GpuTimer {
 public:
  static constexpr size_t kRing = 4;  // frames in flight before a result is read
  GpuTimer() = default;
  ~GpuTimer();
  GpuTimer(const GpuTimer&) = delete;
  GpuTimer& operator=(const GpuTimer&) = delete;

  // Start of a frame: collect every finished set (never waits), then time
  // this frame if its slot of the ring is free.
  void beginFrame();
  // Time one pass. Passes must not nest (GL_TIME_ELAPSED queries cannot).
  void begin(const char* pass);
  void end();
  // End of the frame's passes.
  void endFrame();

  const PassStats& passes() const { return stats_; }
  PassStats& passes() { return stats_; }
  // Query objects this timer holds (for the leak tests).
  size_t queryObjects() const;
  // Frames skipped because their slot's results were not available yet.
  uint64_t skippedFrames() const { return skipped_; }

 private:
  struct Slot {
    std::vector<GLuint> queries;      // pooled; grown on demand
    std::vector<std::string> names;   // pass of each issued query
    bool pending = false;             // issued, not read yet
  };
  bool collect(Slot& s);  // true once read (or nothing to read)

  Slot ring_[kRing];
  size_t frame_ = 0;
  Slot* cur_ = nullptr;  // slot being filled this frame, or null (untimed)
  bool open_ = false;
  uint64_t skipped_ = 0;
  PassStats stats_;
};

// RAII: times a scope as one pass when a timer is given.
class GpuPass {
 public:
  GpuPass(GpuTimer* t, const char* name) : t_(t) {
    if (t_) t_->begin(name);
  }
  ~GpuPass() {
    if (t_) t_->end();
  }
  GpuPass(const GpuPass&) = delete;
  GpuPass& operator=(const GpuPass&) = delete;

 private:
  GpuTimer* t_;
};

}  // namespace eddy
