// dfsph.hpp: the DFSPH solver (Bender & Koschier, SCA 2015 / TVCG 2017), the
// second SPH solver (`--set solver=dfsph`), on the pipeline's sorted particles
// and neighbour list (list mode). DfsphKernels owns DFSPH's own buffers
// (factor, warm-start pressures, solver state) and enqueues its phases, each
// one kernel of kernels/sph/sph_dfsph.cl and one profiler row; it works on any
// buffers (DfsphBuffers), so the kernel tests drive it without a pipeline.
// DfsphSolver plugs it into SphSim (solver.hpp): non-pressure forces are
// sph_forces with zero pressure. Nothing waits on the device except the
// read-backs and a solve's first done-flag poll (at most 50 us, see
// setPolling): a step's batches come from the 8-word solver state of the
// step two before, read without blocking (normally long complete).
// Design, buffers and costs: docs/ARCHITECTURE.md ("DFSPH").
#pragma once

#include "cl.hpp"
#include "kernel_args.hpp"
#include "profiler.hpp"
#include "solver.hpp"
#include "wcsph.hpp"

#include "eddy_shared.h"

#include <algorithm>
#include <array>
#include <deque>
#include <memory>
#include <string>
#include <vector>

namespace eddy {

// Values the kernels see, as floats on the device.
struct DfsphParams {
  double h = 0, mass = 0, rho0 = 0, gradScale = 1, spacing = 0;
  double velocityCfl = 0.4, minDt = 1e-6, maxDt = 1e-3, restitution = 0.5;
  double gravity = 0;  // |g| (along -y), for the gravity-wave bound of dt
  double densityTolerance = 0.05, divergenceTolerance = 0.1;  // percent
  double c0 = 0, boundaryViscosity = 0;  // the boundary force's friction term
  // The least iterations of the density solve (min_iterations) and of the
  // divergence solve (divergence_min_iterations); both stop at maxIterations.
  unsigned minIterations = 2, maxIterations = 100, divergenceMinIterations = 2;
  unsigned leastIterations(unsigned slot) const {
    return slot == EDDY_DFSPH_SLOT_DIV ? divergenceMinIterations : minIterations;
  }
  // Chebyshev semi-iterative acceleration of both solves (sph_dfsph_rate):
  // the estimated spectral radius of the relaxed Jacobi iteration, 0 = off.
  double chebyshevRho = 0;
  // The relaxation w of both solves' Jacobi updates: at most EDDY_DFSPH_OMEGA,
  // less with a wide support (dfsphJacobiOmega, sph.hpp).
  double omega = EDDY_DFSPH_OMEGA;
  // density_relaxation: the density solve's residual is beta (rho - rho0) +
  // dt Drho/Dt (sph_dfsph_rate); 1 = the predicted compression (Bender &
  // Koschier).
  double densityRelaxation = 1;
  // true: every solve gets max_iterations rounds (no batch from earlier steps).
  bool exactSolves = false;
  // The pressure gradient renormalised by the measured packing
  // (gradient_correction = packing; sph_dfsph.cl, dfsph_gradient_measure);
  // false: the identity (the lattice's grad_scale alone).
  bool gradientCorrection = false;
};

// The pipeline's buffers (sorted order) the solver reads and writes.
struct DfsphBuffers {
  const cl::Buffer* pos = nullptr;      // float4, read (integrate writes)
  const cl::Buffer* vel = nullptr;      // float4
  const cl::Buffer* nlist = nullptr;    // uint, nlist[EDDY_SPH_LIST_SLOT(k, i, n)]
  const cl::Buffer* nbcount = nullptr;  // uint, list entries of i (self included)
  const cl::Buffer* rhop = nullptr;     // float2 (rho, p)
  const cl::Buffer* acc = nullptr;      // float4, non-pressure accelerations
  const cl::Buffer* clock = nullptr;    // float, EDDY_SPH_CLOCK_*
  const cl::Buffer* counters = nullptr;  // uint, EDDY_SPH_CNT_*
  size_t n = 0;
  // Entries per particle of nlist (the pair gradients get as many; 0: no
  // pair gradients, the solves evaluate the kernel per pair).
  size_t listCapacity = 0;
  std::array<double, 3> tank{};
  cl_uint laneBits = 0;  // 2^laneBits work-items per particle (sph_common.cl, "Lanes")
  // Boundary particles (boundary.hpp); null: none. dfsph_density's sums
  // walk the boundary grid (the fluid's cells: dims, invCell) and keep the
  // solves' boundary terms; cells is the fluid's cell table
  // (sph_boundary_force).
  SphBoundary* boundary = nullptr;
  const cl::Buffer* cells = nullptr;
  cl_int4 dims{};
  cl_float invCell = 1;
};

class SphParticles;
// The pipeline's buffers of `p` (its boundary included, lanes and list
// capacity as it has them) with the solver's own rhop and acc.
DfsphBuffers dfsphBuffersOf(SphParticles& p, const cl::Buffer& rhop, const cl::Buffer& acc);

// Arguments of the kernels of kernels/sph/sph_dfsph.cl, in their order
// (kernel_args.hpp).
// kb: DFSPH's per-particle rows (EDDY_DFSPH_K_*, kstride floats each); ctl:
// its control words (EDDY_DFSPH_CTL_*). One buffer each, not one per array:
// a launch's host time grows with its buffer arguments (docs/PERFORMANCE.md).
struct DfsphDensityArgs {
  const cl::Buffer &pos, &vel, &nlist, &nbcount, &rhop, &kb, &ctl, &clock;
  const cl::Buffer &bpos, &bvel, &bcells;
  cl_uint nbound;
  cl_int4 dims;
  cl_float invCell;
  cl_uint withPressure, correct;
  cl_float rho0;
  cl_uint n;
  cl_float4 tank;
  cl_float h, mass, gradScale;
  cl_uint laneBits, kstride;
  const cl::Buffer& pairs;
  cl_uint usePairs;
  const cl::Buffer& warmAcc;  // the density warm start's pressure term, for predict
  auto args() const {
    return std::tie(pos, vel, nlist, nbcount, rhop, kb, ctl, clock, bpos, bvel, bcells, nbound,
                    dims, invCell, withPressure, correct, rho0, n, tank, h, mass, gradScale,
                    laneBits, kstride, pairs, usePairs, warmAcc);
  }
};
struct DfsphRateArgs {
  const cl::Buffer &pos, &vel, &nlist, &nbcount, &rhop, &kb, &ctl, &clock;
  cl_uint nbound;  // boundary particles: their sums are in kb (EDDY_DFSPH_K_BND)
  cl_uint slot, n;
  cl_float4 tank;
  cl_float h, mass, rho0, tolerance;
  cl_uint minIter, maxIter;
  cl_float chebyshevRho, omega, beta;
  cl_uint laneBits, kstride;
  const cl::Buffer& pairs;
  cl_uint usePairs;
  auto args() const {
    return std::tie(pos, vel, nlist, nbcount, rhop, kb, ctl, clock, nbound, slot, n, tank, h, mass, rho0, tolerance, minIter, maxIter,
                    chebyshevRho, omega, beta, laneBits, kstride, pairs, usePairs);
  }
};
struct DfsphVelocityArgs {
  const cl::Buffer &pos, &vel, &nlist, &nbcount, &kb, &ctl, &clock;
  cl_uint nbound;  // boundary particles: their sums are in kb (EDDY_DFSPH_K_BND)
  cl_uint slot, useDt, commit, n;
  cl_float4 tank;
  cl_float h, mass, gradScale;
  cl_uint laneBits, kstride;
  const cl::Buffer& pairs;
  cl_uint usePairs;
  auto args() const {
    return std::tie(pos, vel, nlist, nbcount, kb, ctl, clock, nbound, slot, useDt, commit, n, tank, h, mass, gradScale, laneBits, kstride,
                    pairs, usePairs);
  }
};
struct DfsphDtArgs {
  const cl::Buffer &clock, &counters, &ctl;
  cl_float spacing, cfl, minDt, maxDt, gravity, tankHeight;
  auto args() const {
    return std::tie(clock, counters, ctl, spacing, cfl, minDt, maxDt, gravity, tankHeight);
  }
};
struct DfsphPredictArgs {
  const cl::Buffer &vel, &acc, &warmAcc, &ctl, &clock;
  cl_uint n;
  cl_float gradScale;
  auto args() const { return std::tie(vel, acc, warmAcc, ctl, clock, n, gradScale); }
};
struct DfsphIntegrateArgs {
  const cl::Buffer &pos, &vel, &rhop, &kb, &clock, &counters;
  cl_uint n;
  cl_float4 tank;
  cl_float restitution;
  cl_uint kstride;
  auto args() const {
    return std::tie(pos, vel, rhop, kb, clock, counters, n, tank, restitution, kstride);
  }
};
struct DfsphReorderArgs {
  const cl::Buffer &order, &kbIn, &kbOut;
  cl_uint n, kstride, warm;
  auto args() const { return std::tie(order, kbIn, kbOut, n, kstride, warm); }
};

// Iterations and final average errors (percent, see sph_dfsph.cl) of the two
// solves of one step.
using DfsphStats = SphSolveStats;

class DfsphKernels {
 public:
  // thinWalls: SphKernelConfig::thinWalls (a tank axis thinner than h).
  DfsphKernels(Context& ctx, size_t capacity, Profiler& profiler, bool correctlyRoundedDivSqrt,
               bool thinWalls = false);
  ~DfsphKernels();
  DfsphKernels(const DfsphKernels&) = delete;
  DfsphKernels& operator=(const DfsphKernels&) = delete;

  // One DFSPH step after the pipeline, except the non-pressure forces, which
  // the caller enqueues between beginStep() and finishStep():
  //   beginStep: density + factor + the divergence warm start (and the sum of
  //              the density warm start's pressure term), divergence solve;
  //   finishStep: dt, predict (+ that term), density solve, integrate.
  void beginStep(const DfsphBuffers& b, const DfsphParams& p);
  void finishStep(const DfsphBuffers& b, const DfsphParams& p);

  // Phases one by one (tests). runDensity with withPressure writes the last
  // step's pressure (k + kv/dt) rho^2 into rhop (refresh for output), else 0.
  void runDensity(const DfsphBuffers& b, const DfsphParams& p, bool withPressure = false);
  void runDivergenceSolve(const DfsphBuffers& b, const DfsphParams& p);
  void runDt(const DfsphBuffers& b, const DfsphParams& p);
  // predict reads the density warm start's pressure term that the last
  // runDensity of a step (withPressure false) summed from the k it found.
  void runPredict(const DfsphBuffers& b, const DfsphParams& p);
  void runDensitySolve(const DfsphBuffers& b, const DfsphParams& p);
  void runIntegrate(const DfsphBuffers& b, const DfsphParams& p);
  // The fluid's force on the boundary particles from the pressures both
  // solves applied this step (k + kv/dt; sph_boundary_force), before the
  // positions move (finishStep runs it between the density solve and integrate).
  void runBoundaryForce(const DfsphBuffers& b, const DfsphParams& p);
  // Single launches (tests): one rate kernel (slot EDDY_DFSPH_SLOT_DIV or
  // _DEN) with its check, one velocity update of dk (commit: k += dk).
  void runRate(unsigned slot, const DfsphBuffers& b, const DfsphParams& p);
  void runVelocity(unsigned slot, bool commit, const DfsphBuffers& b, const DfsphParams& p);
  // The pipeline's reorder: the warm-start values follow the permutation
  // `order` (source slot of each sorted slot) of n particles; stepStart:
  // scaled by the warm-start fractions (EDDY_DFSPH_WARM_*) for the step.
  void reorder(const cl::Buffer& order, size_t n, bool stepStart);

  // Rounds the solve in slot gets this step (from the state of two steps
  // before, see beginStep).
  unsigned batch(unsigned slot, const DfsphParams& p) const;

  // Early stop of a solve's launches. From the round after the one its last
  // known solve converged in (c + 1), each round is followed by a non-blocking read
  // of the slot's done flag into pinned host memory; once one of them has
  // arrived showing done, the solve's remaining rounds (and its final rate),
  // which the device would run as no-ops, are not launched at all. Only the
  // host's launches change: the results are the same bits whatever the reads
  // show (tested). It pays where the host's launches limit a step (small N
  // on NVIDIA's OpenCL: ~12 us of host time per launch, the device's work
  // a few us); where the device is behind, no read has arrived in time and
  // the batch runs whole, as before, and after a solve whose polls spared
  // nothing the next ones go without (1, 3, 7, ... 63 solves). The first
  // poll of a solve is waited for up to 50 us while such polls have been
  // arriving that fast (the device keeping up). EDDY_DFSPH_POLL=0 turns it
  // off.
  void setPolling(bool on) { polling_ = on; }
  // Tests: wait for each read (every solve then stops right after the round
  // that converged), to check that the skipped launches change nothing.
  void setPollWait(bool on) { pollWait_ = on; }
  // One round ahead: from the round a solve is expected to converge on, the
  // host waits for the read of the round before the newest (spinning, then
  // blocking) while the newest runs, and launches the next only if that read
  // shows the solve still going. Past that expected round at most one
  // launched round of a solve is a no-op, and the device does not wait for
  // the host's decision (it runs the newest round meanwhile). Where the device is behind the host, the
  // free-running polls arrive too late to spare anything, and the batches'
  // margins (up to twice the rounds needed) run as no-ops.
  // automatic (the default): on a GPU from kPollAheadMinParticles particles,
  // where it pays, off below and on CPU devices. Measured on the H200
  // (bench realtime, dfsph, three runs each alternated in one call,
  // docs/PERFORMANCE.md, session 17): +1.3 % at 101 306 particles, +3.5 %
  // at 207 646, +2.3 % at 1M, but -5 % at 54 000, -16 % at 16 000 and
  // -26 % at 6 750, where a round is shorter than the host's reaction to a
  // read and the device idles while the host waits. The bits are the same
  // either way (only no-op rounds are spared). EDDY_DFSPH_POLL_AHEAD=0|1
  // (developer aid) sets off|on.
  enum class PollAhead { automatic, on, off };
  static constexpr size_t kPollAheadMinParticles = 100000;
  void setPollAhead(PollAhead mode) { aheadMode_ = mode; }
  void setPollAhead(bool on) { aheadMode_ = on ? PollAhead::on : PollAhead::off; }
  // Whether a solve over n particles goes one round ahead.
  bool pollAhead(size_t n) const;
  // Whether the last solve went one round ahead.
  bool pollAheadUsed() const { return aheadUsed_; }
  // How many launched rounds the host keeps ahead of the read it waits for
  // (1: the read of the round before the newest; 2: two before, ...): more
  // hides more of the host's reaction, at up to that many no-op rounds a
  // solve. EDDY_DFSPH_POLL_AHEAD_DEPTH=K (developer aid) sets it.
  void setPollAheadDepth(unsigned depth) { aheadDepth_ = std::max(depth, 1u); }
  // Pair gradients (sph_dfsph.cl, DFSPH_STORED_BEGIN): dfsph_density stores
  // the scalar g_ij = m c_g W'(q_ij) of every list slot (4 bytes each,
  // listCapacity a particle, as the list), and the solves' rate, velocity
  // and predict kernels take m grad W_ij = g_ij (x_i - x_j) from it instead
  // of a square root and the kernel's polynomial per pair per iteration.
  // automatic: on a GPU from kPairGradientsMinParticles particles, where it
  // pays (H200: +10 % real-time factor at 207 646 particles, +15 % at 1M,
  // -2 % at 101 306; docs/PERFORMANCE.md, session 15), off on CPU devices
  // (PoCL measured faster with them, but they change every CPU run's
  // rounding, the CI tests' included: docs/ARCHITECTURE.md). Never where the buffer would not fit in a
  // quarter of the device's memory or its largest allocation. The developer
  // aid EDDY_DFSPH_PAIRS=0|1 sets off|on. The choice is made at each
  // runDensity (the store); the results differ from the evaluated kernel
  // only in rounding.
  enum class PairGradients { automatic, on, off };
  static constexpr size_t kPairGradientsMinParticles = 150000;
  void setPairGradients(PairGradients mode) { pairsMode_ = mode; }
  void setPairGradients(bool on) { pairsMode_ = on ? PairGradients::on : PairGradients::off; }
  // Whether the last runDensity stored them (the solves read them).
  bool pairGradients() const { return pairsOn_; }
  // Rounds launched, and rounds the reads spared, since construction.
  unsigned long long roundsLaunched() const { return roundsLaunched_; }
  unsigned long long roundsSpared() const { return roundsSpared_; }

  // Read-backs / uploads (blocking; tests, snapshots). The state (8 uints,
  // EDDY_DFSPH_ST_*) is part of a snapshot: it sets the next step's batches.
  std::vector<cl_float2> readFactor(size_t n);  // (1 / (s D_i), neighbours with images)
  std::vector<cl_float> readDivergencePressure(size_t n);  // kv = k dt (divergence)
  std::vector<cl_float> readDensityPressure(size_t n);     // k = p / rho^2
  std::vector<cl_float> readDk(size_t n);
  std::vector<cl_uint> readState();
  // The residuals the solves stopped on (EDDY_DFSPH_CTL_RESIDUAL: divergence,
  // density; percent).
  std::array<cl_float, 2> readResiduals();
  // The gradient renormalisation the kernels apply (EDDY_DFSPH_CTL_GRAD: xx,
  // yy, zz, xy, xz, yz); part of a snapshot, as it carries into the next step.
  std::array<cl_float, 6> readGradient();
  void writeGradient(const std::array<cl_float, 6>& c);
  void writePressures(const std::vector<cl_float>& kdiv, const std::vector<cl_float>& kden);
  void writeDk(const std::vector<cl_float>& dk);
  void writeState(const std::vector<cl_uint>& state);
  DfsphStats stats();  // blocking: the last step's solves

  // The latest stats read without waiting (diagnostics).
  DfsphStats polledStats();
  // The rate kernel of the program built with EDDY_DFSPH_TWO_SUMS (the density
  // solve at density_relaxation < 1), built the first time it is asked for.
  KernelFunctorOf<DfsphRateArgs>& relaxedRate();

 private:
  // A non-blocking read of the solver state at the end of a step.
  struct StateRead {
    std::vector<cl_uint> host;
    cl::Event event;
    bool pending = false, accounted = true;
  };
  // twoSums: the rate kernel that also sums the error (EDDY_DFSPH_TWO_SUMS,
  // density_relaxation < 1; sph_dfsph.cl).
  static cl::Program buildProgram(Context& ctx, bool crDivSqrt, bool thinWalls, bool twoSums = false);
  EnqueueArgs perParticle(size_t n) const;  // one work-item a particle
  EnqueueArgs lanes(const DfsphBuffers& b) const;
  bool collect(StateRead& r, bool wait);
  void solve(unsigned slot, unsigned rounds, const DfsphBuffers& b, const DfsphParams& p);
  void solveAhead(unsigned slot, unsigned rounds, unsigned from, unsigned long long id,
                  const DfsphBuffers& b, const DfsphParams& p);
  // The polls that have arrived (oldest first, without waiting unless
  // pollWait_, or up to spinUs microseconds for the oldest of `solve`):
  // whether one of solve `solve` shows it done.
  bool polledDone(unsigned long long solve, double spinUs);
  // One round ahead (setPollAhead): waits for every poll but the newest;
  // whether one of solve `solve` shows it done.
  bool polledDoneAhead(unsigned long long solve);
  void enqueuePoll(unsigned slot, unsigned long long solve);
  static DfsphStats decode(const std::vector<cl_uint>& s);
  void account(const std::vector<cl_uint>& st);  // adds a step's counts to the means

  Context& ctx_;
  Profiler& prof_;
  size_t cap_;
  bool crDivSqrt_;
  bool thinWalls_;
  cl::Program program_;
  cl::Program relaxedProgram_;  // empty until relaxedRate()
  std::unique_ptr<KernelFunctorOf<DfsphRateArgs>> rateRelaxed_;
  // The per-particle rows of each order (EDDY_DFSPH_K_*, kstride_ floats
  // each; cur_ is the current order) and the control words (EDDY_DFSPH_CTL_*).
  cl::Buffer kb_[2], ctl_;
  size_t kstride_ = 0;
  // The density solve's warm-start pressure term of each particle (a float4
  // a particle of the capacity), summed by dfsph_density and read by predict
  // in the same step (sph_dfsph.cl).
  cl::Buffer warmAcc_;
  std::vector<cl_float> readRow(unsigned row, size_t count);
  cl::Buffer noBoundary_, noBoundaryCells_;  // stand-ins when b.boundary is null
  // The pair gradients (setPairGradients): a float per list slot, allocated
  // at the first runDensity that uses them (pairsCap_ slots a particle).
  cl::Buffer pairs_;
  size_t pairsCap_ = 0;
  PairGradients pairsMode_ = PairGradients::automatic;
  bool pairsOn_ = false, pairsFailed_ = false;
  bool preparePairs(const DfsphBuffers& b);  // pairsOn_ for this density: allocates
  // The kernels' pairs argument: the buffer, or a stand-in while off (unread).
  const cl::Buffer& pairsArg() const { return pairsOn_ ? pairs_ : noBoundary_; }
  SphBoundaryView boundaryView(const DfsphBuffers& b) const;
  int cur_ = 0;
  // The state reads of the last two steps: beginStep takes reads_[next_]
  // (two steps old) for the batches, finishStep reads into it again.
  StateRead reads_[2];
  int next_ = 0;
  std::vector<cl_uint> batchState_;   // the state this step's batches come from
  std::vector<cl_uint> latestState_;  // the newest state read (stats)
  double sumDen_ = 0, sumDiv_ = 0, stepsRead_ = 0;
  unsigned long long cutSolves_ = 0;
  // Done-flag polls (see setPolling): pinned host words, a ring of
  // kPollWords; the outstanding reads in order, with the solve they belong to.
  static constexpr size_t kPollWords = 256;
  struct Poll {
    cl::Event event;
    size_t word;
    unsigned long long solve;
  };
  cl::Buffer pollPinned_;
  cl_uint* pollHost_ = nullptr;
  std::deque<Poll> polls_;
  size_t pollNext_ = 0;
  unsigned long long solves_ = 0, roundsLaunched_ = 0, roundsSpared_ = 0;
  unsigned pollBackoff_ = 0, pollSkip_ = 0;  // solves to go without polls (see solve)
  static constexpr double kPollSpinUs = 50;   // longest wait for a first poll (see solve)
  bool polling_ = true, pollWait_ = false, pollSpinOk_ = true, aheadUsed_ = false;
  PollAhead aheadMode_ = PollAhead::automatic;
  unsigned aheadDepth_ = 1;

  KernelFunctorOf<DfsphDensityArgs> density_{program_, "sph_dfsph_density"};
  KernelFunctorOf<DfsphRateArgs> rate_{program_, "sph_dfsph_rate"};
  KernelFunctorOf<DfsphVelocityArgs> velocity_{program_, "sph_dfsph_velocity"};
  KernelFunctorOf<DfsphDtArgs> dt_{program_, "sph_dfsph_dt"};
  KernelFunctorOf<DfsphPredictArgs> predict_{program_, "sph_dfsph_predict"};
  KernelFunctorOf<DfsphIntegrateArgs> integrate_{program_, "sph_dfsph_integrate"};
  KernelFunctorOf<DfsphReorderArgs> reorder_{program_, "sph_dfsph_reorder"};
};

// The SphSolver: DfsphKernels around sph_forces (non-pressure forces).
class DfsphSolver : public SphSolver {
 public:
  DfsphSolver(Context& ctx, SphParticles& particles, const SphKernelConfig& cfg);

  std::string name() const override { return "dfsph"; }
  // Solves cut short.
  std::string compressionAdvice(const SphPhysics& phys, const Params& params) const override;
  // rho and the last step's pressure (k + kv/dt) rho^2 (refresh for output).
  void computeDensity(SphParticles& p, const SphPhysics& phys) override;
  // The non-pressure accelerations (gravity, viscosity, cohesion).
  void computeAccelerations(SphParticles& p, const SphPhysics& phys) override;
  const cl::Buffer& densityPressure() const override { return rhop_; }
  const cl::Buffer& accelerations() const override { return acc_; }
  void step(SphParticles& p, const SphPhysics& phys) override;
  void reordered(SphParticles& p, bool stepStart) override;
  double wallClearance(double spacing) const override { return EDDY_DFSPH_WALL_CLEARANCE * spacing; }
  bool solveStats(SphSolveStats& out) override;
  bool polledSolveStats(SphSolveStats& out) override;
  void settingsChanged(const SphPhysics& phys) override {
    if (phys.densityRelaxation < 1.0) kernels_.relaxedRate();
  }
  void saveState(SnapshotWriter& out, size_t n) override;
  void restoreState(const SphState& st) override;
  DfsphKernels& kernels() { return kernels_; }
  static DfsphParams params(const SphPhysics& phys);
  // The time step's bound from the explicit artificial viscosity (the
  // non-pressure forces are explicit; only the pressure is solved): Monaghan's
  // viscous term with a speed c0 is stable for dt <= 0.4 hs / (0.6 alpha c0)
  // (Monaghan 1992, the viscous part of the WCSPH bound; hs = h / 2), alpha
  // the larger of `viscosity` and `boundary_viscosity`. DFSPH's dt (from the
  // velocity alone) ignored it: at viscosity 2, or speed_of_sound 1500 at
  // the default viscosity, the dam break gained energy (potential energy 1.02
  // to 1.07 of the start, the fluid spread to 1.6 times its volume) and
  // exited 0. At the default settings it is far above max_dt (5 ms against
  // 1 ms at the app's dam break): max_dt still decides. Lowers max_dt, never
  // below min_dt.
  static float viscousDtLimit(const SphPhysics& phys);
  static constexpr double kViscousDtFactor = 0.4 / 0.6;

 private:
  DfsphBuffers buffers(SphParticles& p) const;
  cl::Program forcesProgram_;
  cl::Buffer rhop_, acc_;
  DfsphKernels kernels_;
  KernelFunctorOf<SphForcesArgs> forces_{forcesProgram_, "sph_forces"};
};

}  // namespace eddy
