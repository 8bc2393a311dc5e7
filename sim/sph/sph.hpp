// sph.hpp: weakly compressible SPH (WCSPH) on the device, SI units.
//
// One step = hash -> radix sort -> reorder -> cell table -> [neighbour list]
// -> density -> forces -> dt -> integrate, each phase one kernel and one
// profiler row (see docs/ARCHITECTURE.md, "SPH"). The particle state lives in
// SORTED order: positionBuffer() is the float4 position buffer of the current
// step, re-permuted every step (cell order); ids_ maps back to the stable
// particle index (used by --out).
#pragma once

#include "bodies.hpp"
#include "interact.hpp"
#include "particles.hpp"
#include "probes.hpp"
#include "simulation.hpp"
#include "solver.hpp"

#include "eddy_shared.h"

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace eddy {

// Declared SPH parameters (scene geometry, physics, integration).
const std::vector<ParamDesc>& sphParamDecl();
const std::vector<std::string>& sphSceneNames();  // the scene table of sph_scenes.cpp, dam_break (the default) first
// The most particles one SPH simulation takes: 2^31 - 1 (cl_uint ids, int kernels).
inline constexpr size_t kMaxSphParticles = 0x7fffffffu;
// The neighbour list's entries a particle at the default smoothing ratio
// (and the least sphAutoListCapacity gives).
inline constexpr unsigned kSphDefaultListCapacity = 96;
// The most w times sphLatticeJacobiMax a DFSPH solve is given (under the 2
// where relaxed Jacobi diverges): just above the default support's own
// (0.5 x 3.03 = 1.52, so that it keeps 0.5), about 25 % under 2 for packings
// less regular than the lattice (a lattice jittered by 0.1 dx raised the
// largest eigenvalue by 22 % at 2.2 and 14 % at 2.6).
inline constexpr double kDfsphJacobiMargin = 1.55;
// The support (smoothing_ratio) at which boundary_inset is given in dx
// (the default; sphBoundaryInset).
inline constexpr double kSphInsetReferenceRatio = 2.2;

// The automatic speed of sound (parameter speed_of_sound = 0): this factor
// times the largest speed expected (sphFlowSpeed, at least 1 mm/s), so that
// density varies by about 1 % (Monaghan 1994). The scenes' hydrostatic start
// and SphSim use it.
inline constexpr double kSphSoundSpeedFactor = 10.0;
double sphSoundSpeed(double speedOfSound, double expectedSpeed);
// The speed cohesion (surface_tension gamma: Akinci et al. 2013, the forces
// kernel's pull gamma m C(r) between neighbours) gives a particle of a flat
// free surface over one support h: sqrt(a h), with `a` the net pull on a
// lattice particle (spacing dx, h = ratio dx) whose neighbours lie in its
// layer and below. Holding that pull costs a pressure of about rho0 a h, a
// density change of a h / c0^2: c0 = 10 sqrt(a h) keeps it at 1 %. 0 when
// gamma <= 0.
double sphCohesionSpeed(double gamma, double rho0, double dx, double smoothingRatio);
// The largest speed the automatic speed of sound must allow for: the
// scene's estimate `sceneSpeed` (free fall of its tallest water,
// SphSetup::expectedSpeed, made at gravity `sceneGravity`) rescaled to
// `gravity` (sqrt(g / g_scene), both at least 1e-3 m/s^2: a live change of
// gravity changes it), the kinematic bodies' fastest points `bodySpeed`, and
// the cohesion's `cohesionSpeed`. Without these last two and at the scene's
// gravity it is `sceneSpeed`, bit for bit.
double sphFlowSpeed(double sceneSpeed, double sceneGravity, double gravity, double bodySpeed,
                    double cohesionSpeed);
// The density error (mean max(rho - rho0, 0) / rho0, percent) above which a
// run warns that the fluid is compressed far beyond what the solver aims at
// (SphSim::runWarnings): WCSPH's dam breaks and wave tanks keep 0.1-0.4 %
// (its density varies by about 1 % at most), DFSPH its density_tolerance
// (0.05 %). The local maximum (max_density_ratio) is no measure: a coarse
// wave tank's WCSPH run ends with one particle at 1.22 rho0 and a mean of 0.36 %.
inline constexpr double kSphCompressionWarningPercent = 2.0;
// The speed above which a fluid particle counts as blown up although finite
// (Simulation::blowUpSpeed): kBlowUpSpeedFactor times the fastest this setup
// can move it: free fall over the tank's height at `gravity`, the scene's
// expected speed, the particles' initial speeds, the kinematic bodies'
// surfaces, and at least 1 m/s. A restart or a solid edit takes the speeds
// of the state it continues as its initial speeds.
double sphBlowUpSpeed(const SphSetup& setup, double gravity);

// Builds a named scene from the parameter values (spacing, geometry, seed...).
// Throws eddy::Error naming the parameter when the geometry does not fit.
// Water columns start in WCSPH's hydrostatic equilibrium (layers squeezed as
// the Tait equation wants) with the wcsph solver, at rest density otherwise
// (an incompressible solver would push the squeeze apart in its first step).
// `obstacles` (--obstacle, config "obstacles") are added to the scene's own
// solids as static obstacles; fluid particles inside any solid (or within
// half a spacing of it) are not created.
SphSetup makeSphScene(std::string_view scene, const Params& params,
                      const std::vector<ShapeSpec>& obstacles = {});

// The particle count and tank of a named scene, from its geometry alone:
// nothing is allocated (checked against the limits before makeSphScene).
// Exact, except for a scene with solids (its own or `obstacles`) or bodies
// whose count before they remove the fluid inside them passes the limit
// 2^31 - 1: then that count, an upper bound, to be refused.
struct SphSceneSize {
  size_t count = 0;
  std::array<double, 3> tank{};
  double spacing = 0;
};
SphSceneSize sphSceneSize(std::string_view scene, const Params& params,
                          const std::vector<ShapeSpec>& obstacles = {});
// makeSphScene after `check(size)` (the size sphSceneSize gives: `check`
// throws to refuse it), before the particles take host memory. A scene whose
// count needs its particles (solids, bodies) is made once, not again.
SphSetup makeSphScene(std::string_view scene, const Params& params, const std::vector<ShapeSpec>& obstacles,
                      const std::function<void(const SphSceneSize&)>& check);

// Parameters that contradict each other (min_dt above max_dt, a least
// iteration count above max_iterations): throws eddy::Error naming both.
// Checked when a scene is built or a run starts, not per change.
void sphCheckParams(const Params& params);
// The solids of a scene with these parameters, host only, before anything is
// built (SimulationType::checkScene): every shape is made (a mesh file read
// and checked), an obstacle must reach into the tank (partly through a wall
// is fine), a body must lie inside it, and a floating body (the scene's or a
// declared one) must be at least kSphBodyMinSpacings spacings across in its
// smallest extent. A problem of a declared obstacle or body throws
// SolidSpecError with its index; anything else eddy::Error.
inline constexpr double kSphBodyMinSpacings = 1.0;
// A kinematic body's fastest surface point may move at most this fast (m/s):
// the speed of sound in water, beyond which neither solver's model holds (a
// period of 1e-30 s would collapse the time step to nothing).
inline constexpr double kSphMaxBodySpeed = 1500;
void sphCheckScene(std::string_view scene, const Params& params, const std::vector<ShapeSpec>& obstacles,
                   const std::vector<BodySpec>& bodies);
// The same checks of declared obstacles and bodies for a tank of this size
// (m, from the origin) and spacing dx: a scene's, or solids added to a
// running simulation (SphSim::withSolids: the app's panel and drops).
void sphCheckSolids(const std::array<double, 3>& tank, double dx,
                    const std::vector<ShapeSpec>& obstacles, const std::vector<BodySpec>& bodies);
// A floating body among bodies[first ..] must not start inside any of
// `solids` or another body (the pairs of two kinematic bodies, and the pairs
// within bodies[.. first), are not checked): an overlap deeper than half a
// spacing throws SolidSpecError with the body's index less `first`.
void sphCheckBodyClearance(double dx, const std::vector<ShapeSpec>& solids, const std::vector<BodySpec>& bodies,
                           size_t first = 0);

// The declared parameters that building `scene` does not read (e.g.
// tank_length for spheric_dam_break, whose tank is fixed; bodies for any
// scene but wave_tank).
std::vector<std::string> sphSceneUnusedParams(std::string_view scene);

// A file of the repository's data/ folder (EDDY_DATA_DIR in the environment
// overrides where that is).
std::string sphDataFile(const std::string& relative);
// The particles of `in` that lie outside every solid by at least
// `clearance`, and where a box, sphere or cylinder is too thin for the full
// boundary `inset` (boundaryInsetOf: its boundary particles lie closer to
// its surface) by that much more: the fluid's first layer then starts as far
// from the boundary particles as beside a thick solid. Without it, fluid half
// a spacing off a piston one spacing thick summed to 1.22 rho0 and DFSPH's
// first steps threw it off at 19 m/s (wave_tank, spacing 0.04 m). A mesh's
// thin parts are not widened.
void dropInsideSolids(const std::vector<SphSolid>& solids, double clearance, double inset,
                      const std::vector<SphParticle>& in, std::vector<SphParticle>& out);

// The dam-break column with `target` particles (3-D block a x 2a x a in a
// 4a x 2.5a x a tank) at rest density: the benchmark's scene.
SphSetup makeSphBenchScene(size_t target, const Params& params);
// The parameters of that scene (makeSphBenchScene builds "dam_break" with them).
Params sphBenchParams(size_t target, const Params& params);

struct SphCounters {
  uint64_t escaped = 0;    // integrate: outside the tank / non-finite, put back
  uint64_t outOfGrid = 0;  // hash: outside the grid, clamped
  uint64_t overflow = 0;   // neighbour list entries beyond capacity (list mode)
  uint64_t penetrations = 0;  // boundary_guard: inside a solid, put back outside
};

struct SphDiagnostics {
  double time = 0, dt = 0, kinetic = 0, potential = 0, maxSpeed = 0, frontX = 0, backHeight = 0;
  double maxDensityRatio = 0, meanNeighbours = 0;  // max rho/rho0; neighbours within h, self excluded
  // Pressure solves of the last step (DFSPH); an explicit solver (WCSPH): 0
  // iterations and the measured average compression max(rho - rho0, 0) in %.
  SphSolveStats solve;
  SphCounters counters;
};

// The exact device state of an SPH run between steps, as stored in a restart
// snapshot, plus the scene geometry the simulation was built from.
struct SphState {
  SphSetup setup;                 // tank, spacing, expected speed; particles = pos/vel
  std::vector<cl_float4> pos, vel;  // current slot order (sorted by the last step)
  std::vector<cl_uint> ids;       // stable particle id of each slot
  std::vector<cl_float> clock;    // device clock (time as hi + lo, dt)
  std::vector<cl_uint> counters;  // escape/overflow counters and the running maxima
  size_t capacity = 0;            // buffer capacity when saved (0: not stored, older files)
  // DFSPH's warm start (slot order) and solver state; empty: none saved.
  std::vector<cl_float> kdiv, kden;
  std::vector<cl_uint> dfsphState;
  std::vector<cl_float> dfsphGradient;  // 6 (xx, yy, zz, xy, xz, yz), or none
  // Rigid bodies' device state (EDDY_BODY_STRIDE float4 each); specs in setup.bodies.
  std::vector<cl_float4> bodies;
  // WCSPH's carried density (density_diffusion > 0, slot order); empty: none saved.
  std::vector<cl_float> rho;
  bool rhoPending = false;  // its advance by the last step's dt is still to come
  // The probes the saved run sampled, and their running state (the probes
  // alone are in setup.probes); none: the run sampled none.
  std::optional<SphProbeState> probes;
};
class Snapshot;
// Decodes and checks the SPH blobs of a snapshot holding `count` particles
// (sizes, finite values, ids a permutation, a positive geometry). Host only.
SphState decodeSphState(const Snapshot& snap, size_t count);
// The mesh files a snapshot's obstacles and bodies read (its solids decoded
// and checked as decodeSphState does; no particle decoded).
std::vector<std::string> sphSnapshotMeshFiles(const Snapshot& snap);

// The SPH simulation: the particle pipeline (particles.hpp) plus the solver
// chosen by the `solver` parameter (solver.hpp), with the front-end hooks,
// diagnostics, output and snapshots.
class SphSim : public Simulation {
 public:
  SphSim(Context& ctx, const Params& params, const SphSetup& setup, SphKernelConfig cfg = {});
  // With a given solver instead of the `solver` parameter's (tests, new solvers).
  SphSim(Context& ctx, const Params& params, const SphSetup& setup, SphKernelConfig cfg,
         const SphSolverFactory& solver);
  ~SphSim() override;

  // Limits, before anything is allocated: `count` particles in `tank` at
  // `spacing` (capacity from cfg.capacity, else capacity_factor) must stay
  // within 2^31 - 1 particles, 2^30 grid cells and the device's memory.
  // Throws eddy::Error naming the count and the limit. Sizes in double/64-bit:
  // a crafted snapshot's tank of 1e30 m cannot overflow them.
  static void checkFits(const DeviceInfo& info, size_t count, const std::array<double, 3>& tank,
                        double spacing, const Params& params, const SphKernelConfig& cfg = {});

  std::string kind() const override { return "sph"; }
  size_t size() const override { return n_; }
  void step() override;
  double syncTime() override;
  // The last completed clock read (collected here if it has completed; never
  // waits): the time after that step and the dt that step took.
  ClockSample clockSample() override;
  void restoreClock(uint64_t steps, double time) override {
    Simulation::restoreClock(steps, time);
    clockStep_ = steps;  // the sample restoreState() read is of this step
  }

  std::vector<std::string> diagColumns() const override;
  std::vector<double> diagRow() override;
  std::vector<std::string> stateColumns() const override;
  // boundary_particles: the boundary particles of the solids.
  std::vector<std::pair<std::string, double>> summaryValues() const override {
    return {{"boundary_particles", double(particles_->boundary().size())}};
  }
  // escaped / overflow > 0 at the end of a run.
  std::vector<std::string> runWarnings(const std::vector<double>& lastRow) const override;
  std::vector<std::vector<double>> stateRows() override;
  // Current positions (x, y, z, 0), float4, in the sorted order of the last step.
  const cl::Buffer& positionBuffer() const override { return particles_->positions(); }

  // Front-end hooks (desktop app). Colour fields are in the slot order of
  // positionBuffer(): density and pressure of the last step belong to it.
  std::vector<std::string> colorFields() const override { return {"speed", "density", "pressure"}; }
  cl::Event writeColorField(size_t index, const cl::Buffer& out) override;
  bool supportsPush() const override { return true; }
  cl::Event push(const Ray& ray, float radius, const Vec3f& dv) override;
  std::optional<Box> domain() const override;
  float particleRadius() const override { return float(0.5 * phys_.spacing); }
  // Drop a block of fluid: every site of the scene's lattice (centres at
  // (i + 1/2) dx per axis, as the scenes place them) whose centre lies in
  // [box.lo, box.hi) and whose cell lies inside the tank gets a particle at
  // rest, appended after the current slots with the next ids (size() .. ),
  // then density is refreshed (colour fields belong to the new count). Only
  // uploads are enqueued (non-blocking); nothing waits on the device. Throws
  // eddy::Error, changing nothing, for a box with no site in the tank or a
  // block that does not fit capacity().
  bool supportsAddBlock() const override { return true; }
  void addBlock(const Box& box) override;
  size_t capacity() const override { return cap_; }
  // The lattice sites addBlock would fill: index ranges [lo, hi) per axis
  // (empty if any hi <= lo). Host only (tests, messages).
  struct BlockSites {
    std::array<long long, 3> lo{}, hi{};
    size_t count() const;
  };
  BlockSites blockSites(const Box& box) const;

  // Probes (probes.hpp): sampled after every step where the cadence wants.
  bool supportsProbes() const override { return true; }
  std::vector<ProbeSpec> builtinProbes() const override { return builtinProbes_; }
  std::optional<ProbeCadence> keptProbeCadence() const override;
  void startProbes(const std::vector<ProbeSpec>& probes, const ProbeCadence& cadence,
                   ProbeSink sink) override;
  void flushProbes() override;
  SphProbes* probes() { return probes_.get(); }

  // Solids for the desktop app (simulation.hpp; sim/sph/solid_edit.cpp):
  // the boundary particles (bpos, declaration order) and the edit.
  const cl::Buffer* solidPoints() const override;
  size_t solidPointCount() const override;
  bool solidsMove() const override { return bodies_ != nullptr; }
  bool supportsSolidEdit() const override { return true; }
  std::vector<ShapeSpec> obstacles() const override;
  size_t bodyCount() const override { return bodies_ ? bodies_->size() : 0; }
  std::unique_ptr<Simulation> withSolids(const std::vector<ShapeSpec>& obstacles,
                                         const std::vector<BodySpec>& addBodies) override;

  // Blow-up check, restart snapshots.
  std::vector<const cl::Buffer*> finiteCheckBuffers() const override {
    return {&particles_->positions(), &particles_->velocities()};
  }
  double blowUpSpeed() const override { return blowUpSpeed_; }
  std::string blowUpSpeedBasis() const override;
  const cl::Buffer* timeBuffer() const override {
    static_assert(EDDY_SPH_CLOCK_T_HI == 0 && EDDY_SPH_CLOCK_T_LO == 1, "timeBuffer: hi, lo first");
    return &particles_->clock();
  }
  PutBackCounters putBackCounters() const override {
    return {&particles_->counters(), EDDY_SPH_CNT_ESCAPED, EDDY_SPH_CNT_NONFINITE};
  }
  void saveState(SnapshotWriter& out) override;
  // Puts a decoded state back (the simulation was built from state.setup).
  void restoreState(const SphState& state);

  // The phases of one step, public so that tests can run them one by one:
  // the pipeline's (hash .. neighbours, dt, integrate) and the solver's
  // (density = computeDensity, forces = computeAccelerations).
  void runHash() { particles_->runHash(); }
  void runSort() { particles_->runSort(); }
  void runReorder() { particles_->runReorder(); }
  void runCells() { particles_->runCells(); }
  void runNeighbours() { particles_->runNeighbours(); }  // list mode only
  void runDensity() { solver_->computeDensity(*particles_, phys_); }
  void runForces() { solver_->computeAccelerations(*particles_, phys_); }
  void runDt() { particles_->runDt(phys_); }
  void runIntegrate() { particles_->runIntegrate(solver_->accelerations(), phys_); }
  // hash .. density on the current positions (no time advance): used before
  // diagnostics and output so density/pressure belong to the positions.
  void refreshDensity();
  void saveProbes(SnapshotWriter& out);

  // Read-backs (blocking; tests, diagnostics, output).
  std::vector<cl_float4> readPositions();
  std::vector<cl_float4> readVelocities();
  std::vector<cl_float4> readAccelerations();
  std::vector<cl_float2> readDensityPressure();  // (rho, p) per sorted particle
  std::vector<cl_uint> readKeys();               // after hash: per particle; after sort: sorted
  std::vector<cl_uint> readOrder();              // after sort: source index of each sorted slot
  std::vector<cl_uint> readIds();                // stable particle id of each slot
  std::vector<cl_uint> readCells();              // 2 per cell: start, end (EMPTY, 0 if empty)
  std::vector<cl_uint> readNeighbourCounts();    // real neighbours within h, self included
  std::vector<cl_uint> readNeighbourList();      // list mode: entry k of i at EDDY_SPH_LIST_SLOT(k, i, n)
  SphCounters readCounters();
  // Device clock: time and the dt of the last step.
  std::array<double, 2> readClock();
  // Overwrites positions and velocities (current order) and the dt the next
  // integrate uses (tests).
  void writeState(const std::vector<cl_float4>& pos, const std::vector<cl_float4>& vel);
  void writeAccelerations(const std::vector<cl_float4>& acc);
  void writeDt(float dt);

  SphDiagnostics diagnostics();
  std::vector<std::string> solverStatus(bool mayRead) override;
  const SphPhysics& physics() const { return phys_; }
  const SphKernelConfig& kernelConfig() const { return cfg_; }
  std::array<int, 3> gridDims() const { return particles_->gridDims(); }
  double cellSize() const { return particles_->cellSize(); }
  unsigned keyBits() const { return particles_->keyBits(); }
  size_t numCells() const { return particles_->numCells(); }
  const std::array<double, 3>& tank() const { return tank_; }
  SphParticles& particles() { return *particles_; }
  SphBoundary& boundary() { return particles_->boundary(); }
  const std::vector<SphSolid>& solids() const { return solids_; }
  SphSolver& solver() { return *solver_; }
  // The rigid bodies (none: nullptr).
  SphBodies* bodies() { return bodies_.get(); }
  // One row per body: body, x, y, z (centroid), qw, qx, qy, qz, vx, vy, vz.
  std::vector<std::string> objectColumns() const override;
  std::vector<std::vector<double>> objectRows() override;

 private:
  // Mean max(rho - rho0, 0) / rho0 in percent over the densities rp (slot order).
  double measuredDensityError(const std::vector<cl_float2>& rp) const;
  void syncParams();
  InteractKernels& interact();
  void waitUploads();

  size_t n_;
  size_t cap_ = 0;  // particles the buffers hold (>= n_)
  SphKernelConfig cfg_;
  SphPhysics phys_;
  double expectedSpeed_ = 0;         // SphSetup::expectedSpeed
  double expectedSpeedGravity_ = 0;  // the gravity it was made at
  double bodySpeed_ = 0;             // the kinematic bodies' fastest point (m/s)
  double blowUpSpeed_ = kNoSpeedLimit;  // sphBlowUpSpeed of the setup it was built from
  std::array<double, 3> tank_{};
  double spacing_ = 0;
  // Recurring launches of a step replayed as command buffers (GPUs that offer
  // them; sim/core/launch_batch.hpp). Declared before the parts that launch
  // through profiler_, so that it outlives them.
  std::unique_ptr<LaunchBatch> batch_;
  std::unique_ptr<SphParticles> particles_;
  std::unique_ptr<SphSolver> solver_;
  std::unique_ptr<SphBodies> bodies_;
  std::vector<SphSolid> solids_;  // as declared (snapshots)
  // Per solid: its mesh file's content hash when it was read ("" for a
  // primitive, or a file that could not be hashed), for snapshots.
  std::vector<std::string> meshHashes_;
  unsigned long long paramsSeen_ = ~0ull;
  double lastDt_ = 0;
  std::unique_ptr<InteractKernels> interact_;  // built on first use (app only)
  std::vector<ProbeSpec> builtinProbes_;       // the scene's (setup.probes)
  std::unique_ptr<SphProbes> probes_;          // startProbes()
  // A restored run's probe state (SphState::probes), for the first startProbes().
  std::optional<SphProbeState> keptProbes_;
  // time() without stalling: every few steps a non-blocking read of the device
  // clock; the next step() takes its value once the read has completed.
  void pollClock();
  std::array<cl_float, EDDY_SPH_CLOCK_SIZE> clockHost_{};
  cl::Event clockRead_;
  bool clockPending_ = false;
  uint64_t clockReadStep_ = 0;  // step of the last clock read
  uint64_t clockStep_ = 0;      // the step time_ and lastDt_ belong to
  void collectClock();          // takes a completed read's values (never waits)
  // addBlock's host staging, alive until its non-blocking uploads completed.
  struct Upload {
    std::vector<cl_float4> pos, vel;
    std::vector<cl_uint> ids;
    std::vector<cl::Event> events;
  } upload_;
};

// ---- Host maths of the smoothing kernel (double) ----------------------------

// Wendland C2 (3-D, support h): W(r) and dW/dr, 0 for r >= h: the one
// definition the kernels use too (kernels/common/sph_kernel.h), in double.
double sphKernelW(double r, double h);
double sphKernelDW(double r, double h);
// Mass that gives density rho0 on a cubic lattice of spacing dx (h = support).
double sphLatticeMass(double rho0, double dx, double h);
// -sum_k V x_k dW/dx over that lattice (1 for an exact discrete gradient).
double sphLatticeGradientNorm(double dx, double h);
// The largest eigenvalue of D^-1 A on the cubic lattice with support h/dx =
// smoothingRatio: A the operator of DFSPH's solves (a pressure unknown's
// change to the density change rate it causes, sph_dfsph.cl (1)-(2)), D its
// diagonal. A relaxed Jacobi iteration of weight w converges only while
// w times this stays under 2; it grows with the support (2.61 at 2.0, 3.03
// at 2.2, 4.20 at 2.6, 6.25 at 3.0).
double sphLatticeJacobiMax(double smoothingRatio);
// The relaxation of DFSPH's Jacobi solves at that support:
// min(EDDY_DFSPH_OMEGA, kDfsphJacobiMargin / sphLatticeJacobiMax).
double dfsphJacobiOmega(double smoothingRatio);
// The depth (m) below a solid's surface at which its boundary particles lie:
// boundary_inset x dx at smoothing_ratio kSphInsetReferenceRatio, in
// proportion to the support otherwise. The fluid rests where its own sum and
// the sheet's give rho0, a fixed fraction of h off the sheet (about 0.7 dx
// at 2.2), so an inset fixed in dx left a gap that grew with the support:
// at 3.0 a submerged box (DFSPH, dx 0.04 m) felt 1.23 rho g V against 0.93
// at 2.2, and the fluid beside a box in a still tank started compressed
// (1.09 m/s after 5 steps). Scaled: 0.89 rho g V, 0.05 m/s. (wave_tank at
// 3.0 still starts with a kick, scaled or not: docs/USAGE.md.)
double sphBoundaryInset(const Params& p, double dx);
// The neighbour list's entries a particle when SphKernelConfig leaves it
// automatic (0): 1.5 times the lattice's sites within the support h/dx =
// `smoothingRatio` (self included), at least kSphDefaultListCapacity (the
// default ratio 2.2: 33 sites, 96 entries), at most 1024 (3.0: 140; 4.0:
// 377). A fixed 96 overflowed at 3.0 (93 sites): DFSPH, missing neighbours,
// blew up.
unsigned sphAutoListCapacity(double smoothingRatio);

}  // namespace eddy
