// sph.hpp: weakly compressible SPH (WCSPH) on the device, SI units.
//
// One step = hash -> radix sort -> reorder -> cell table -> [neighbour list]
// -> density -> forces -> dt -> integrate, each phase one kernel and one
// profiler row (see docs/ARCHITECTURE.md, "SPH"). The particle state lives in
// SORTED order: positionBuffer() is the float4 position buffer of the current
// step, re-permuted every step (cell order); ids_ maps back to the stable
// particle index (used by --out).
#pragma once

#include "dfsph.hpp"
#include "interact.hpp"
#include "radix_sort.hpp"
#include "simulation.hpp"

#include "eddy_shared.h"

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace eddy {

// Declared SPH parameters (scene geometry, physics, integration).
const std::vector<ParamDesc>& sphParamDecl();
const std::vector<std::string>& sphSceneNames();  // dam_break (default), drop, double_dam_break

struct SphParticle {
  double x = 0, y = 0, z = 0, vx = 0, vy = 0, vz = 0;
};

// What a scene hands to SphSim: particles inside the tank [0,L] x [0,H] x [0,D].
struct SphSetup {
  std::vector<SphParticle> particles;
  std::array<double, 3> tank{};  // L (x), H (y, up), D (z)
  double spacing = 0;            // lattice spacing: mass = rho0 * dx^3 (calibrated), h = ratio * dx
  double expectedSpeed = 0;      // largest speed expected (m/s): automatic sound speed = 10x this
};

// Builds a named scene from the parameter values (spacing, geometry, seed...).
// Throws eddy::Error naming the parameter when the geometry does not fit.
// compressed: water columns start in WCSPH's hydrostatic equilibrium (layers
// squeezed as the Tait equation wants); false: at rest density (DFSPH, which
// would otherwise push the squeeze apart in its first step).
SphSetup makeSphScene(std::string_view scene, const Params& params, bool compressed = true);

// The dam-break column with `target` particles (3-D block a x 2a x a in a
// 4a x 2.5a x a tank) at rest density: the benchmark's scene.
SphSetup makeSphBenchScene(size_t target, const Params& params);

struct SphKernelConfig {
  // true: a neighbour-list kernel, then density/forces walk the list; false:
  // density/forces iterate the 27 cells directly. The list is the default: on
  // PoCL it is 1.4x faster per step (see docs/ARCHITECTURE.md); both stay
  // selectable (bench sph --mode) for the GPU measurement.
  bool neighbourList = true;
  unsigned listCapacity = 96;  // neighbour list entries per particle (self included)
  // Particles the buffers are allocated for (addBlock headroom); 0 = from the
  // parameter capacity_factor (ceil(factor * initial count)). A restored
  // snapshot passes its saved capacity here. Never below the initial count.
  size_t capacity = 0;
  // Build with -cl-fp32-correctly-rounded-divide-sqrt where the device offers
  // it. NVIDIA's default single-precision divide/sqrt are approximate: on the
  // H200 the forces then differ from the double reference by 1.8e-5 (relative
  // to the sum of the pair terms) instead of 1.8e-6, above the 1e-5 the tests
  // require; exact division costs 11 % of the step there (docs/PERFORMANCE.md).
  bool correctlyRoundedDivSqrt = true;
  // The DFSPH pressure solver (sim/dfsph.hpp) instead of WCSPH's equation of
  // state. Needs the neighbour list.
  bool dfsph = false;
};

struct SphCounters {
  uint64_t escaped = 0;    // integrate: outside the tank / non-finite, put back
  uint64_t outOfGrid = 0;  // hash: outside the grid, clamped
  uint64_t overflow = 0;   // neighbour list entries beyond capacity (list mode)
};

struct SphDiagnostics {
  double time = 0, dt = 0, kinetic = 0, potential = 0, maxSpeed = 0, frontX = 0, backHeight = 0;
  double maxDensityRatio = 0, meanNeighbours = 0;  // max rho/rho0; neighbours within h, self excluded
  // Pressure solve of the last step (DFSPH); WCSPH: 0 iterations and the
  // measured density error, both errors as DFSPH defines them (percent).
  unsigned densityIterations = 0, divergenceIterations = 0;
  double densityError = 0, divergenceError = 0;
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
  std::vector<cl_float> kdiv, kden;  // DFSPH warm start (slot order); empty: none saved
  std::vector<cl_uint> dfsphState;   // DFSPH solver state (EDDY_DFSPH_ST_*); empty: none
  size_t capacity = 0;            // buffer capacity when saved (0: not stored, older files)
};
class Snapshot;
// Decodes and checks the SPH blobs of a snapshot holding `count` particles
// (sizes, finite values, ids a permutation, a positive geometry). Host only.
SphState decodeSphState(const Snapshot& snap, size_t count);

// Values the kernels see (float on the device), derived from the parameters.
struct SphPhysics {
  double h = 0, mass = 0, rho0 = 0, c0 = 0, B = 0, alpha = 0, gravity = 0, gamma = 0, cfl = 0,
         maxDt = 0, restitution = 0, spacing = 0;
  double gradScale = 1;  // 1 / lattice gradient normalisation (pressure term)
};

class SphSim : public Simulation {
 public:
  SphSim(Context& ctx, const Params& params, const SphSetup& setup, SphKernelConfig cfg = {});
  ~SphSim() override;

  std::string kind() const override { return "sph"; }
  size_t size() const override { return n_; }
  void step() override;
  double syncTime() override;

  std::vector<std::string> diagColumns() const override;
  std::vector<double> diagRow() override;
  std::vector<std::string> stateColumns() const override;
  std::vector<std::vector<double>> stateRows() override;
  // Current positions (x, y, z, 0), float4, in the sorted order of the last step.
  const cl::Buffer& positionBuffer() const override { return pos_[cur_]; }

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

  // Blow-up check, restart snapshots.
  std::vector<const cl::Buffer*> finiteCheckBuffers() const override {
    return {&pos_[cur_], &vel_[cur_]};
  }
  void saveState(SnapshotWriter& out) override;
  // Puts a decoded state back (the simulation was built from state.setup).
  void restoreState(const SphState& state);

  // The phases of one step, public so that tests can run them one by one.
  void runHash();
  void runSort();
  void runReorder();
  void runCells();
  void runNeighbours();  // list mode only (no-op in cells mode)
  void runDensity();
  void runForces();
  void runDt();
  void runIntegrate();
  // hash .. density on the current positions (no time advance): used before
  // diagnostics and output so density/pressure belong to the positions.
  void refreshDensity();

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
  std::vector<cl_uint> readNeighbourList();      // list mode: cap * n, column-major
  SphCounters readCounters();
  // Device clock: time and the dt of the last step.
  std::array<double, 2> readClock();
  // Overwrites positions and velocities (current order) and the dt the next
  // integrate uses (tests).
  void writeState(const std::vector<cl_float4>& pos, const std::vector<cl_float4>& vel);
  void writeAccelerations(const std::vector<cl_float4>& acc);
  void writeDt(float dt);

  SphDiagnostics diagnostics();
  const SphPhysics& physics() const { return phys_; }
  const SphKernelConfig& kernelConfig() const { return cfg_; }
  // The DFSPH solver (nullptr for WCSPH) and the values its kernels see.
  DfsphSolver* dfsph() { return dfsph_.get(); }
  const DfsphParams& dfsphParams() const { return dfsphParams_; }
  DfsphBuffers dfsphBuffers() const;
  std::array<int, 3> gridDims() const { return dims_; }
  double cellSize() const { return cell_; }
  unsigned keyBits() const { return keyBits_; }
  size_t numCells() const { return numCells_; }
  const std::array<double, 3>& tank() const { return tank_; }

 private:
  void syncParams();
  InteractKernels& interact();
  static cl::Program buildProgram(Context& ctx, const SphKernelConfig& cfg);
  cl::NDRange global() const;

  void waitUploads();

  size_t n_;
  size_t cap_ = 0;  // particles the buffers hold (>= n_)
  SphKernelConfig cfg_;
  SphPhysics phys_;
  double expectedSpeed_ = 0;
  std::array<double, 3> tank_{};
  double spacing_ = 0;
  std::array<int, 3> dims_{};
  double cell_ = 0;
  size_t numCells_ = 0;
  unsigned keyBits_ = 1;
  cl::Program program_;
  RadixSort sorter_;
  cl::Buffer pos_[2], vel_[2], id_[2];
  cl::Buffer keys_, vals_, tmpKeys_, tmpVals_;
  cl::Buffer cells_, nlist_, nbcount_, rhop_, acc_, counters_, clock_;
  int cur_ = 0;
  unsigned long long paramsSeen_ = ~0ull;
  double lastDt_ = 0;
  std::unique_ptr<InteractKernels> interact_;  // built on first use (app only)
  std::unique_ptr<DfsphSolver> dfsph_;
  DfsphParams dfsphParams_;
  // time() without stalling: every few steps a non-blocking read of the device
  // clock; the next step() takes its value once the read has completed.
  void pollClock();
  std::array<cl_float, EDDY_SPH_CLOCK_SIZE> clockHost_{};
  cl::Event clockRead_;
  bool clockPending_ = false;
  uint64_t clockReadStep_ = 0;  // step of the last clock read
  // addBlock's host staging, alive until its non-blocking uploads completed.
  struct Upload {
    std::vector<cl_float4> pos, vel;
    std::vector<cl_uint> ids;
    std::vector<cl::Event> events;
  } upload_;

  cl::KernelFunctor<cl::Buffer, cl::Buffer, cl::Buffer, cl::Buffer, cl_uint, cl_int4, cl_float>
      hash_{program_, "sph_hash"};
  cl::KernelFunctor<cl::Buffer, cl::Buffer, cl::Buffer, cl::Buffer, cl::Buffer, cl::Buffer,
                    cl::Buffer, cl_uint>
      reorder_{program_, "sph_reorder"};
  cl::KernelFunctor<cl::Buffer, cl_uint> cellsClear_{program_, "sph_cells_clear"};
  cl::KernelFunctor<cl::Buffer, cl::Buffer, cl_uint> cells_k_{program_, "sph_cells"};
  cl::KernelFunctor<cl::Buffer, cl::Buffer, cl::Buffer, cl::Buffer, cl::Buffer, cl_uint, cl_int4,
                    cl_float, cl_float, cl_uint>
      neighbours_{program_, "sph_neighbours"};
  cl::KernelFunctor<cl::Buffer, cl::Buffer, cl::Buffer, cl::Buffer, cl::Buffer, cl_uint, cl_int4,
                    cl_float, cl_float4, cl_float, cl_float, cl_float, cl_float>
      density_{program_, "sph_density"};
  cl::KernelFunctor<cl::Buffer, cl::Buffer, cl::Buffer, cl::Buffer, cl::Buffer, cl::Buffer,
                    cl::Buffer, cl::Buffer, cl_uint, cl_int4, cl_float, cl_float4, cl_float,
                    cl_float, cl_float, cl_float, cl_float, cl_float, cl_float, cl_float>
      forces_{program_, "sph_forces"};
  cl::KernelFunctor<cl::Buffer, cl::Buffer, cl_float, cl_float, cl_float, cl_float> dt_{program_,
                                                                                      "sph_dt"};
  cl::KernelFunctor<cl::Buffer, cl::Buffer, cl::Buffer, cl::Buffer, cl::Buffer, cl_uint, cl_float4,
                    cl_float>
      integrate_{program_, "sph_integrate"};
};

// ---- CPU references in double precision (tests) -----------------------------

// Wendland C2 (3-D, support h): W(r) and dW/dr.
double sphKernelW(double r, double h);
double sphKernelDW(double r, double h);
// Mass that gives density rho0 on a cubic lattice of spacing dx (h = support).
double sphLatticeMass(double rho0, double dx, double h);
// -sum_k V x_k dW/dx over that lattice (1 for an exact discrete gradient).
double sphLatticeGradientNorm(double dx, double h);
// Tait pressure, clamped at 0.
double sphReferencePressure(double rho, double rho0, double B);

struct SphReferenceInput {
  std::vector<cl_float4> pos, vel;
  std::vector<cl_float2> rhop;  // forces only: the device's density and pressure
  std::array<double, 3> tank{};
  SphPhysics phys;
};
// Brute force over all pairs (and their wall images), as the kernels define
// them. Density returns rho per particle; count = real neighbours (r^2 < h^2
// in float, as the kernel evaluates it), self included.
void sphReferenceDensity(const SphReferenceInput& in, std::vector<double>& rho,
                         std::vector<unsigned>& count);
// Accelerations; scale[i] = sum of |pair terms| + g (the size of the sum's rounding).
void sphReferenceForces(const SphReferenceInput& in, std::vector<std::array<double, 3>>& acc,
                        std::vector<double>& scale);
// The float neighbour test of the kernels: (dx*dx + dy*dy) + dz*dz < h*h in float.
bool sphIsNeighbour(const cl_float4& a, const cl_float4& b, float h);

}  // namespace eddy
