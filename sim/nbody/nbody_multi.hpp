// nbody_multi.hpp: one N-body run split over several OpenCL devices.
//
// Device d owns the contiguous block of bodies [first_d, first_d + count_d):
// it drifts and kicks them, and computes their forces from ALL bodies — its own
// block (the local tile, done first) and every other device's block, which
// arrives through the host each step while the local tile is being computed.
// Every device keeps the positions of all bodies (double-buffered); the blocks
// are exchanged with non-blocking reads/writes chained by events. Shares follow
// each device's measured speed (a short calibration of the gravity kernel) or
// are given explicitly. Design: docs/ARCHITECTURE.md, "Multi-device N-body".
#pragma once

#include "nbody.hpp"

#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace eddy {

struct MultiNBodyOptions {
  // Relative weights, one per device (>= 0, at least one > 0). Empty: measure
  // each device's speed and share the bodies in proportion.
  std::vector<double> shares;
  // Kernel configuration: empty = NBodyKernelConfig::automatic for each device
  // and an even share, one = for every device, or one per device.
  std::vector<NBodyKernelConfig> kernels;
};

// What one device does in a multi-device run.
using NBodyDeviceShare = DeviceShare;  // sim/core/simulation.hpp

// Bodies per device from weights (largest remainder; ties go to the lower
// index), so counts sum to n exactly. Throws eddy::Error for a negative or
// non-finite weight or when all weights are zero.
std::vector<size_t> splitBodies(size_t n, const std::vector<double>& weights);

// Throws eddy::Error naming the first device that cannot hold the positions of
// n bodies (every device keeps all of them, twice). Cheap: call it before
// building a large scene.
void checkMultiNBodyMemory(const std::vector<Context*>& devices, size_t n);

class MultiNBodySim : public Simulation {
 public:
  // The contexts must outlive the simulation. The first device with bodies is
  // the primary one: context(), positionBuffer() and the diagnostics use it.
  // Any failure of one device (build, allocation, calibration) throws an
  // eddy::Error that starts with "device P:D (name): ".
  MultiNBodySim(const std::vector<Context*>& devices, const Params& params,
                const std::vector<Body>& bodies, MultiNBodyOptions opts = {});
  ~MultiNBodySim() override;

  std::string kind() const override { return "nbody"; }
  size_t size() const override { return n_; }
  void step() override;
  // The host's clock is exact; dt is the parameter the next step uses.
  ClockSample clockSample() override { return {steps_, time_, params_.get("dt")}; }
  void finish() override;

  std::vector<std::string> diagColumns() const override { return nbodyDiagColumns(); }
  std::vector<double> diagRow() override;
  std::vector<std::string> stateColumns() const override { return nbodyStateColumns(); }
  std::vector<std::vector<double>> stateRows() override;
  // All positions, complete on the primary device after every step.
  const cl::Buffer& positionBuffer() const override;

  // Recomputes accelerations from the current positions (no kick).
  void computeAccelerations();
  std::vector<cl_float4> readPositions();
  std::vector<cl_float4> readVelocities();
  std::vector<cl_float4> readAccelerations();
  NBodyDiagnostics diagnostics();
  std::optional<double> conservedDrift(const std::vector<double>& firstRow,
                                       const std::vector<double>& lastRow) const override {
    return nbodyEnergyDrift(firstRow, lastRow);
  }
  std::optional<double> virialRatio() override { return diagnostics().virialRatio; }

  const std::vector<NBodyDeviceShare>& shares() const { return shares_; }
  // The OpenCL build options of each device's program, in device order: no
  // two alike (see prepare() for the PoCL cache they keep apart).
  std::vector<std::string> programOptions() const;
  const std::vector<DeviceShare>* deviceShares() const override { return &shares_; }
  // Profiler phase names of device i: "drift@P:D", "gravity@P:D" (one launch
  // per block of sources), "send@P:D" (own block to the host), "recv@P:D"
  // (the other blocks from the host), "potential@P:D" (diagnostics).
  static std::string phase(std::string_view what, const std::string& tag) {
    return std::string(what) + "@" + tag;
  }

 private:
  struct Dev;
  struct Prepared;
  MultiNBodySim(Prepared&& p, const Params& params, const std::vector<Body>& bodies);
  static Prepared prepare(const std::vector<Context*>& devices, const Params& params,
                          const std::vector<Body>& bodies, const MultiNBodyOptions& opts);
  void syncParams();
  cl::Event launchPart(Dev& dv, int buf, const std::vector<cl::Event>& wait, const Dev& src,
                       cl_uint flags, float halfDt);
  void gravity(float halfDt);  // all blocks, no exchange: positions are complete
  void flushAll();
  // Reads a per-device buffer of owned bodies (vel, acc) into one array.
  std::vector<cl_float4> gatherOwned(cl::Buffer Dev::*buffer, const char* what);
  void pollUntil(const std::function<bool()>& done);
  void signalAbandoned(std::vector<cl_event>& users);

  size_t n_;
  std::vector<std::unique_ptr<Dev>> devs_;  // one per device with bodies, in list order
  std::vector<NBodyDeviceShare> shares_;    // one per device given
  int cur_ = 0;
  NBodyKernelParams kp_;  // G, eps^2, dt as the kernels see them
  size_t eventsPerStep_ = 1;
  std::atomic<int> callbacksPending_{0};
};

}  // namespace eddy
