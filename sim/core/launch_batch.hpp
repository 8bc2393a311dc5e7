// launch_batch.hpp: recurring runs of kernel launches replayed as one command
// buffer (cl_khr_command_buffer).
//
// At small N a step is bound by the host's launches: each clEnqueueNDRangeKernel
// costs NVIDIA's driver 5.5-9.5 us of host time (docs/PERFORMANCE.md, "what a
// launch costs the host"), about 30 of them a DFSPH step. A step repeats the
// same launches with the same arguments (two sets: the particle buffers swap
// each step), so a run of them can be recorded once and enqueued as one
// command buffer afterwards.
//
//   open()                       add() add() add() ...   flush()      close()
//     |  launches are deferred:  [k1 args][k2 args]...  |             |
//     |  kernel, ranges and a copy of the arguments      v             |
//     |                         the run's exact contents seen before?  |
//     |                           yes: enqueue its command buffer      |
//     |                           no:  enqueue the launches one by one |
//     |                                and record a command buffer     |
//
// Only launches made through Profiler::run are deferred, and only while the
// owner has a batch open (SphSim::step). Anything else must reach the queue
// after them: Context::queue() flushes every batch registered on the context
// before it returns the queue, so a read, a write, a finish or a launch of a
// solver's own comes after the deferred launches; the profiler's launch
// ranges take Context::launchQueue(), which does not flush. Launches in one
// recording run in the recorded order (each waits on the one before through a
// sync point). Each recorded command has a kernel object of its own whose
// arguments never change after recording (PoCL 3.1 reads a command's
// arguments when the buffer is enqueued, not when it was recorded). A
// recording holds its buffers and kernels, so a handle in a signature cannot
// be reused by a new object while the recording lives; recordings unused for
// a while are dropped.
//
// Off unless switched on (setEnabled); SphSim leaves it off: NVIDIA's
// driver 580 offers no cl_khr_command_buffer, and on PoCL it does not pay
// (docs/ARCHITECTURE.md, "Profiling").
// EDDY_COMMAND_BUFFERS=0|1 forces it off or on (a developer aid; the tests
// switch it on with PoCL and compare with the direct launches bit for bit).
#pragma once

#include "cl.hpp"

#include <cstdint>
#include <cstring>
#include <exception>
#include <memory>
#include <string>
#include <type_traits>
#include <unordered_map>
#include <vector>

namespace eddy {

class LaunchBatch {
 public:
  // Detects cl_khr_command_buffer on the context's device; registers with
  // the context, whose queue() flushes the batch (cl.hpp).
  explicit LaunchBatch(Context& ctx);
  ~LaunchBatch();
  LaunchBatch(const LaunchBatch&) = delete;
  LaunchBatch& operator=(const LaunchBatch&) = delete;

  // Whether the device offers command buffers this class can use.
  bool supported() const { return fns_ != nullptr; }
  // Whether EDDY_COMMAND_BUFFERS decides (then setEnabled's argument is ignored).
  bool forced() const { return forced_ >= 0; }
  // Batches only when supported; EDDY_COMMAND_BUFFERS in the environment
  // overrides `on` (read once, at construction).
  void setEnabled(bool on);
  bool enabled() const { return enabled_; }

  // Between open() and close(), add() defers launches; flush() hands what was
  // deferred to the queue; close() flushes. open() inside open() nests.
  void open() { ++depth_; }
  void close();
  // Drops what was deferred without enqueuing it and closes every level (an
  // exception left the step half-launched; see Scope).
  void abandon();
  bool deferring() const { return enabled_ && depth_ > 0; }
  void flush();

  // A launch of `kernel` with its arguments (buffers and plain values).
  template <class... Ts>
  void add(const cl::Kernel& kernel, const EnqueueArgs& range, const Ts&... args) {
    Launch l;
    l.kernel = kernel;
    l.dims = setRange(l, range);
    l.argBegin = uint32_t(cur_.args.size());
    if (!range.wait.empty()) {  // not batched: it waits on events
      flush();
      directWait(l, range, args...);
      return;
    }
    (appendArg(args), ...);
    l.argEnd = uint32_t(cur_.args.size());
    hashLaunch(l);
    cur_.launches.push_back(std::move(l));
  }

  // open() now; close() by the owner at the end of the launches, or abandon()
  // when an exception leaves the scope first.
  class Scope {
   public:
    explicit Scope(LaunchBatch* b) : b_(b), unwinding_(std::uncaught_exceptions()) {
      if (b_) b_->open();
    }
    // Not closed: an exception drops the deferred launches (the step is lost
    // anyway); otherwise they are flushed here.
    ~Scope() {
      if (!b_) return;
      if (std::uncaught_exceptions() > unwinding_) {
        b_->abandon();
        return;
      }
      try {
        b_->close();
      } catch (...) {
        b_->abandon();
      }
    }
    void close() {
      LaunchBatch* b = b_;
      b_ = nullptr;
      if (b) b->close();
    }
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;

   private:
    LaunchBatch* b_;
    int unwinding_;
  };

  struct Stats {
    uint64_t replays = 0;         // command buffers enqueued
    uint64_t replayedLaunches = 0;
    uint64_t recordings = 0;      // command buffers recorded
    uint64_t directLaunches = 0;  // deferred launches enqueued one by one
  };
  const Stats& stats() const { return stats_; }
  size_t recordings() const { return cache_.size(); }

 private:
  struct Arg {
    uint32_t offset, size;  // of its bytes in Run::bytes
  };
  struct Launch {
    cl::Kernel kernel;
    cl_uint dims = 0;
    size_t offset[3] = {0, 0, 0}, global[3] = {0, 0, 0}, local[3] = {0, 0, 0};
    bool hasOffset = false, hasLocal = false;
    uint32_t argBegin = 0, argEnd = 0;
  };
  struct Run {
    std::vector<Launch> launches;
    std::vector<Arg> args;
    std::vector<unsigned char> bytes;
    std::vector<cl::Memory> mems;  // held while deferred or recorded
    uint64_t hash = 1469598103934665603ull;
    void clear() {
      launches.clear();
      args.clear();
      bytes.clear();
      mems.clear();
      hash = 1469598103934665603ull;
    }
  };
  struct Recording;
  struct Fns;

  template <class T>
  void appendArg(const T& x) {
    if constexpr (std::is_base_of_v<cl::Memory, T>) {
      const cl_mem m = x();
      appendBytes(&m, sizeof m);
      cur_.mems.push_back(x);
    } else {
      static_assert(std::is_trivially_copyable_v<T>, "kernel arguments: buffers or plain values");
      appendBytes(&x, sizeof x);
    }
  }
  void appendBytes(const void* p, size_t n);
  static cl_uint setRange(Launch& l, const EnqueueArgs& r);
  void hashLaunch(const Launch& l);
  template <class... Ts>
  void directWait(const Launch& l, const EnqueueArgs& range, const Ts&... args) {
    cl::Kernel k = l.kernel;
    cl_uint index = 0;
    (k.setArg(index++, args), ...);
    range.queue.enqueueNDRangeKernel(k, range.offset, range.global, range.local,
                                     range.wait.empty() ? nullptr : &range.wait, nullptr);
  }
  void enqueueDirect(const Run& run);
  std::unique_ptr<Recording> record(const Run& run);
  static bool same(const Run& a, const Run& b);

  Context& ctx_;
  cl::CommandQueue queue_;
  std::unique_ptr<Fns> fns_;
  bool enabled_ = false;
  int forced_ = -1;  // EDDY_COMMAND_BUFFERS: -1 unset, 0 off, 1 on
  int depth_ = 0;
  Run cur_;
  std::unordered_multimap<uint64_t, std::unique_ptr<Recording>> cache_;
  std::unordered_map<uint64_t, uint64_t> seen_;  // hash -> flush of its last direct run
  uint64_t flushes_ = 0;
  Stats stats_;
};

}  // namespace eddy
