// simulation.hpp: what the CLI and the GUI see of any simulation.
#pragma once

#include "cl.hpp"
#include "params.hpp"
#include "profiler.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace eddy {

class Simulation {
 public:
  Simulation(Context& ctx, const std::vector<ParamDesc>& decl) : ctx_(ctx), params_(decl) {}
  virtual ~Simulation() = default;
  Simulation(const Simulation&) = delete;
  Simulation& operator=(const Simulation&) = delete;

  virtual std::string kind() const = 0;  // "nbody", "sph"
  virtual size_t size() const = 0;       // particle / body count
  // Advance one step. Kernels are enqueued; nothing waits for them here.
  virtual void step() = 0;

  // Diagnostics: a CSV header and one row (reads back from the device).
  virtual std::vector<std::string> diagColumns() const = 0;
  virtual std::vector<double> diagRow() = 0;
  // Final state: header and one row per particle (reads back).
  virtual std::vector<std::string> stateColumns() const = 0;
  virtual std::vector<std::vector<double>> stateRows() = 0;
  // The buffer holding the current positions (float4 per particle) for drawing.
  virtual const cl::Buffer& positionBuffer() const = 0;
  // Waits until everything the simulation enqueued has completed (end of a
  // headless run, before timing). A multi-device simulation finishes all queues.
  virtual void finish() { ctx_.queue().finish(); }

  double time() const { return time_; }
  // Brings time() up to date where the simulation chooses its time step on
  // the device (SPH: one small blocking read of the device clock) and returns
  // it; free where the host knows the clock (N-body). Front ends call it only
  // when they need the time (--until checks, diagnostics), never every step.
  virtual double syncTime() { return time_; }
  uint64_t steps() const { return steps_; }
  Params& params() { return params_; }
  const Params& params() const { return params_; }
  Profiler& profiler() { return profiler_; }
  Context& context() { return ctx_; }

 protected:
  // Keeps the host from running unboundedly far ahead of the device: collects
  // finished events and, if too many are outstanding, waits on the oldest one
  // (never a clFinish after each kernel).
  void throttle(size_t maxPending = 4096);

  Context& ctx_;
  Params params_;
  Profiler profiler_;
  double time_ = 0;
  uint64_t steps_ = 0;
};

// Throws eddy::Error if `bytes` in `buffers` buffers (largest one `largest`)
// cannot fit the device: checked before any allocation.
void checkDeviceMemory(const DeviceInfo& info, size_t bytes, size_t largest, std::string_view what);

}  // namespace eddy
