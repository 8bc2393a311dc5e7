// dfsph.hpp: the DFSPH solver (Bender & Koschier, SCA 2015 / TVCG 2017), the
// second SPH solver (`--set solver=dfsph`), on the pipeline's sorted particles
// and neighbour list (list mode). DfsphKernels owns DFSPH's own buffers
// (factor, warm-start pressures, solver state) and enqueues its phases, each
// one kernel of kernels/sph/sph_dfsph.cl and one profiler row; it works on any
// buffers (DfsphBuffers), so the kernel tests drive it without a pipeline.
// DfsphSolver plugs it into SphSim (solver.hpp): non-pressure forces are
// sph_forces with zero pressure. Nothing waits on the device except the
// read-backs and, once per step, the previous step's 8-word state (batches).
// Design, buffers and costs: docs/ARCHITECTURE.md ("DFSPH").
#pragma once

#include "cl.hpp"
#include "profiler.hpp"
#include "solver.hpp"

#include "eddy_shared.h"

#include <array>
#include <string>
#include <vector>

namespace eddy {

// Values the kernels see, as floats on the device.
struct DfsphParams {
  double h = 0, mass = 0, rho0 = 0, gradScale = 1, spacing = 0;
  double velocityCfl = 0.4, minDt = 1e-6, maxDt = 1e-3, restitution = 0.5;
  double densityTolerance = 0.05, divergenceTolerance = 0.1;  // percent
  unsigned minIterations = 2, maxIterations = 100;
  // true: every solve gets max_iterations rounds (no batch from the last step).
  bool exactSolves = false;
};

// The pipeline's buffers (sorted order) the solver reads and writes.
struct DfsphBuffers {
  const cl::Buffer* pos = nullptr;      // float4, read (integrate writes)
  const cl::Buffer* vel = nullptr;      // float4
  const cl::Buffer* nlist = nullptr;    // uint, nlist[k * n + i]
  const cl::Buffer* nbcount = nullptr;  // uint, list entries of i (self included)
  const cl::Buffer* rhop = nullptr;     // float2 (rho, p)
  const cl::Buffer* acc = nullptr;      // float4, non-pressure accelerations
  const cl::Buffer* clock = nullptr;    // float, EDDY_SPH_CLOCK_*
  const cl::Buffer* counters = nullptr;  // uint, EDDY_SPH_CNT_*
  size_t n = 0;
  std::array<double, 3> tank{};
};

// Iterations and final average errors (percent, see sph_dfsph.cl) of the two
// solves of one step.
using DfsphStats = SphSolveStats;

class DfsphKernels {
 public:
  DfsphKernels(Context& ctx, size_t capacity, Profiler& profiler, bool correctlyRoundedDivSqrt);
  ~DfsphKernels();
  DfsphKernels(const DfsphKernels&) = delete;
  DfsphKernels& operator=(const DfsphKernels&) = delete;

  // One DFSPH step after the pipeline, except the non-pressure forces, which
  // the caller enqueues between beginStep() and finishStep():
  //   beginStep: density + factor, divergence solve (warm start first);
  //   finishStep: dt, predict (+ density warm start), density solve, integrate.
  void beginStep(const DfsphBuffers& b, const DfsphParams& p);
  void finishStep(const DfsphBuffers& b, const DfsphParams& p);

  // Phases one by one (tests). runDensity with withPressure writes the last
  // step's pressure (k + kv/dt) rho^2 into rhop (refresh for output), else 0.
  void runDensity(const DfsphBuffers& b, const DfsphParams& p, bool withPressure = false);
  void runDivergenceSolve(const DfsphBuffers& b, const DfsphParams& p);
  void runDt(const DfsphBuffers& b, const DfsphParams& p);
  void runPredict(const DfsphBuffers& b, const DfsphParams& p);
  void runDensitySolve(const DfsphBuffers& b, const DfsphParams& p);
  void runIntegrate(const DfsphBuffers& b, const DfsphParams& p);
  // Single launches (tests): one rate kernel (slot EDDY_DFSPH_SLOT_DIV or
  // _DEN), its check, one velocity update of dk (commit: k += dk).
  void runRate(unsigned slot, const DfsphBuffers& b, const DfsphParams& p);
  void runCheck(unsigned slot, const DfsphBuffers& b, const DfsphParams& p);
  void runVelocity(unsigned slot, bool commit, const DfsphBuffers& b, const DfsphParams& p);
  // The pipeline's reorder: the warm-start values follow the permutation
  // `order` (source slot of each sorted slot) of n particles.
  void reorder(const cl::Buffer& order, size_t n);

  // Rounds the solve in slot gets this step (from the last step's state).
  unsigned batch(unsigned slot, const DfsphParams& p) const;

  // Read-backs / uploads (blocking; tests, snapshots). The state (8 uints,
  // EDDY_DFSPH_ST_*) is part of a snapshot: it sets the next step's batches.
  std::vector<cl_float2> readFactor(size_t n);  // (1 / (s D_i), neighbours with images)
  std::vector<cl_float> readDivergencePressure(size_t n);  // kv = k dt (divergence)
  std::vector<cl_float> readDensityPressure(size_t n);     // k = p / rho^2
  std::vector<cl_float> readDk(size_t n);
  std::vector<cl_uint> readState();
  void writePressures(const std::vector<cl_float>& kdiv, const std::vector<cl_float>& kden);
  void writeDk(const std::vector<cl_float>& dk);
  void writeState(const std::vector<cl_uint>& state);
  DfsphStats stats();  // blocking: the last step's solves

  // The latest stats read without waiting (polled every step; diagnostics).
  DfsphStats polledStats();

 private:
  static cl::Program buildProgram(Context& ctx, bool crDivSqrt);
  cl::NDRange global(size_t n) const;
  size_t groups(size_t n) const;
  void pollState();
  void solve(unsigned slot, unsigned rounds, const DfsphBuffers& b, const DfsphParams& p);
  static DfsphStats decode(const std::vector<cl_uint>& s);

  Context& ctx_;
  Profiler& prof_;
  size_t cap_;
  cl::Program program_;
  cl::Buffer aux_, kdiv_[2], kden_[2], dk_, partial_, state_;
  int cur_ = 0;
  std::vector<cl_uint> stateHost_;  // target of the per-step non-blocking read
  std::vector<cl_uint> lastState_;  // the last step's state, once read
  void account(const std::vector<cl_uint>& st);  // adds a step's counts to the means
  double sumDen_ = 0, sumDiv_ = 0, stepsRead_ = 0;
  cl::Event stateRead_;
  bool statePending_ = false;

  cl::KernelFunctor<cl::Buffer, cl::Buffer, cl::Buffer, cl::Buffer, cl::Buffer, cl::Buffer,
                    cl::Buffer, cl::Buffer, cl_uint, cl_uint, cl_float4, cl_float, cl_float,
                    cl_float>
      density_{program_, "sph_dfsph_density"};
  cl::KernelFunctor<cl::Buffer, cl::Buffer, cl::Buffer, cl::Buffer, cl::Buffer, cl::Buffer,
                    cl::Buffer, cl::Buffer, cl::Buffer, cl_uint, cl_float4, cl_float, cl_float,
                    cl_float>
      divRate_{program_, "sph_dfsph_divergence_rate"};
  cl::KernelFunctor<cl::Buffer, cl::Buffer, cl::Buffer, cl::Buffer, cl::Buffer, cl::Buffer,
                    cl::Buffer, cl::Buffer, cl::Buffer, cl::Buffer, cl::Buffer, cl_uint, cl_float4,
                    cl_float, cl_float, cl_float, cl_float>
      denRate_{program_, "sph_dfsph_density_rate"};
  cl::KernelFunctor<cl::Buffer, cl::Buffer, cl::Buffer, cl_uint, cl_uint, cl_uint, cl_float,
                    cl_float, cl_uint, cl_uint>
      check_{program_, "sph_dfsph_check"};
  cl::KernelFunctor<cl::Buffer, cl::Buffer, cl::Buffer, cl::Buffer, cl::Buffer, cl::Buffer,
                    cl::Buffer, cl::Buffer, cl_uint, cl_uint, cl_uint, cl_uint, cl_float4,
                    cl_float, cl_float, cl_float>
      velocity_{program_, "sph_dfsph_velocity"};
  cl::KernelFunctor<cl::Buffer, cl::Buffer, cl_float, cl_float, cl_float, cl_float> dt_{
      program_, "sph_dfsph_dt"};
  cl::KernelFunctor<cl::Buffer, cl::Buffer, cl::Buffer, cl::Buffer, cl::Buffer, cl::Buffer,
                    cl::Buffer, cl_uint, cl_float4, cl_float, cl_float, cl_float>
      predict_{program_, "sph_dfsph_predict"};
  cl::KernelFunctor<cl::Buffer, cl::Buffer, cl::Buffer, cl::Buffer, cl::Buffer, cl::Buffer,
                    cl::Buffer, cl_uint, cl_float4, cl_float>
      integrate_{program_, "sph_dfsph_integrate"};
  cl::KernelFunctor<cl::Buffer, cl::Buffer, cl::Buffer, cl::Buffer, cl::Buffer, cl_uint>
      reorder_{program_, "sph_dfsph_reorder"};
};

// The SphSolver: DfsphKernels around sph_forces (non-pressure forces).
class DfsphSolver : public SphSolver {
 public:
  DfsphSolver(Context& ctx, SphParticles& particles, const SphKernelConfig& cfg);

  std::string name() const override { return "dfsph"; }
  // rho and the last step's pressure (k + kv/dt) rho^2 (refresh for output).
  void computeDensity(SphParticles& p, const SphPhysics& phys) override;
  // The non-pressure accelerations (gravity, viscosity, cohesion).
  void computeAccelerations(SphParticles& p, const SphPhysics& phys) override;
  const cl::Buffer& densityPressure() const override { return rhop_; }
  const cl::Buffer& accelerations() const override { return acc_; }
  void step(SphParticles& p, const SphPhysics& phys) override;
  void reordered(SphParticles& p) override;
  bool solveStats(SphSolveStats& out) override;
  void saveState(SnapshotWriter& out, size_t n) override;
  void restoreState(const SphState& st) override;
  DfsphKernels& kernels() { return kernels_; }
  static DfsphParams params(const SphPhysics& phys);

 private:
  DfsphBuffers buffers(SphParticles& p) const;
  cl::Program forcesProgram_;
  cl::Buffer rhop_, acc_;
  DfsphKernels kernels_;
  cl::KernelFunctor<cl::Buffer, cl::Buffer, cl::Buffer, cl::Buffer, cl::Buffer, cl::Buffer,
                    cl::Buffer, cl::Buffer, cl_uint, cl_int4, cl_float, cl_float4, cl_float,
                    cl_float, cl_float, cl_float, cl_float, cl_float, cl_float, cl_float>
      forces_{forcesProgram_, "sph_forces"};
};

}  // namespace eddy
