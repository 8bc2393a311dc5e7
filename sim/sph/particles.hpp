// particles.hpp: the SPH particle pipeline, shared by every SPH solver.
//
// SphParticles owns the particle state in SORTED (cell) order and the
// neighbour search built on it: per step hash -> radix sort -> reorder ->
// cell table -> [neighbour list], and the shared time integration: the
// adaptive time step (dt) and semi-implicit Euler with the tank walls
// (integrate). Each phase is one kernel and one profiler row. A solver
// (solver.hpp) reads the sorted positions, velocities, cell ranges and the
// neighbour list from here and owns only its own phases and buffers.
#pragma once

#include "probe.hpp"
#include "body_spec.hpp"
#include "boundary.hpp"
#include "radix_sort.hpp"
#include "simulation.hpp"

#include "eddy_shared.h"

#include <array>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <string>
#include <vector>

namespace eddy {

struct SphParticle {
  double x = 0, y = 0, z = 0, vx = 0, vy = 0, vz = 0;
};

// What a scene hands to SphSim: particles inside the tank [0,L] x [0,H] x [0,D].
struct SphSetup {
  std::vector<SphParticle> particles;
  std::array<double, 3> tank{};  // L (x), H (y, up), D (z)
  double spacing = 0;            // lattice spacing: mass = rho0 * dx^3 (calibrated), h = ratio * dx
  double expectedSpeed = 0;      // largest speed expected (m/s): automatic sound speed = 10x this
  // The gravity (m/s^2) expectedSpeed was estimated at (its free fall); < 0:
  // the parameters' gravity when the simulation is made (sphFlowSpeed).
  double expectedSpeedGravity = -1;
  std::vector<ProbeSpec> probes;  // the scene's built-in probes (issue 12)
  // Solids (obstacles, bodies) as boundary particles (boundary.hpp), in
  // declaration order: static obstacles first.
  std::vector<SphSolid> solids;
  // Rigid bodies (sim/sph/bodies.hpp): body b is the solid with body = b.
  std::vector<BodySpec> bodies;
  // A restart: the content hash (fileContentHash) that the file of mesh
  // solid k had when the snapshot was saved, by solid index ("" or beyond the
  // end: not checked). SphSim refuses a mesh file whose content differs: the
  // restart would sample other geometry and not continue the saved run.
  std::vector<std::string> meshHashes;
};

struct SphKernelConfig {
  // true: a neighbour-list kernel, then density/forces walk the list; false:
  // density/forces iterate the 27 cells directly. The list is the default
  // (faster on PoCL, see docs/PERFORMANCE.md); both stay selectable
  // (bench sph --mode) for the GPU measurement.
  bool neighbourList = true;
  // Neighbour list entries per particle (self included); 0: from the
  // smoothing ratio (sphAutoListCapacity), resolved by SphSim.
  unsigned listCapacity = 0;
  // List mode: a solver whose first density kernel can build the list while
  // it sums (WCSPH's sph_density and sph_continuity; kernels/sph/sph_common.cl,
  // "Fused list") does so where it pays (SphParticles::fuseList), and
  // update() leaves out the "neighbours" phase. false (or the developer aid
  // EDDY_SPH_FUSED_LIST=0): always the separate phase, to measure the two
  // against each other (docs/PERFORMANCE.md).
  bool fusedList = true;
  // Particles the buffers are allocated for (addBlock headroom); 0 = from the
  // parameter capacity_factor (ceil(factor * initial count)). A restored
  // snapshot passes its saved capacity here. Never below the initial count.
  size_t capacity = 0;
  // Build with -cl-fp32-correctly-rounded-divide-sqrt where the device offers
  // it: NVIDIA's default single-precision divide/sqrt are approximate and put
  // the forces further from the double reference than the tests allow (figures
  // and cost: docs/PERFORMANCE.md).
  bool correctlyRoundedDivSqrt = true;
  // log2 of the work-items per particle of the neighbour sums (lanes,
  // kernels/sph/sph_common.cl); -1 = automatic (sphLaneBits, or the developer
  // aid EDDY_SPH_LANES). Tests set it to check every lane count on any device.
  int laneBits = -1;
  // A tank axis thinner than the support h (a slab one or two layers deep):
  // the kernels are built with SPH_THIN_WALLS, which mirrors both walls of
  // such an axis (kernels/sph/sph_common.cl, sph_walls). Set by SphSim from
  // its tank; other tanks get the plain nearer-wall code.
  bool thinWalls = false;
  // Hits a lane of the neighbours phase keeps in local memory before it
  // stores them (kernels/sph/sph_neighbours.cl, SPH_NB_STAGE); -1 = the
  // kernel's default. Tests set small values (0: every lane walks twice) to
  // check that the list is the same slot for slot.
  int neighbourStage = -1;
};

// Values the kernels see (float on the device), derived from the parameters.
struct SphPhysics {
  double h = 0, mass = 0, rho0 = 0, c0 = 0, B = 0, alpha = 0, gravity = 0, gamma = 0, cfl = 0,
         maxDt = 0, restitution = 0, spacing = 0;
  double gradScale = 1;  // 1 / lattice gradient normalisation (pressure term)
  // Boundary particles (boundary.hpp): friction alpha_b of the fluid on solids.
  double boundaryViscosity = 0;
  // WCSPH: delta-SPH density diffusion (0 = summation density; wcsph_continuity.hpp).
  double densityDiffusion = 0;
  // WCSPH carried density: the largest density a particle starts from (the
  // Tait density of the scene's deepest hydrostatic pressure, rho0 v^2 / 2
  // with v the expected speed; wcsph_continuity.hpp).
  double startDensityCap = 0;
  // DFSPH (sim/sph/dfsph.hpp): time step and the two pressure solves.
  double velocityCfl = 0.4, minDt = 1e-6, densityTolerance = 0.05, divergenceTolerance = 0.1;
  unsigned minIterations = 2, maxIterations = 100;
  unsigned divergenceMinIterations = 2;
  double chebyshevRho = 0;  // 0: plain relaxed Jacobi (dfsph.hpp)
  // The Jacobi relaxation of DFSPH's solves at this support (dfsphJacobiOmega).
  double jacobiOmega = EDDY_DFSPH_OMEGA;
  double densityRelaxation = 1;  // DFSPH density_relaxation (beta; dfsph.hpp)
  // DFSPH: the pressure gradient renormalised by the packing's measured
  // second moment (gradient_correction = packing; sph_dfsph.cl).
  bool gradientCorrection = false;
};

// The cell grid over the tank: cubes of side h * EDDY_SPH_CELL_SLACK.
struct SphGrid {
  std::array<int, 3> dims{};
  double cell = 0;
  size_t numCells = 0;
  unsigned keyBits = 1;  // bits of the largest cell key (radix sort passes)
};
// Throws eddy::Error when the grid would exceed 2^30 cells (in double: the
// tank may come from a crafted snapshot).
SphGrid sphGrid(const std::array<double, 3>& tank, double h);

// The kernel sources of an SPH program: the shared smoothing kernel
// (kernels/common/sph_kernel.h) and sph_common.cl, then `files`.
std::vector<std::string> sphProgramFiles(std::initializer_list<std::string> files);

// Lanes (kernels/sph/sph_common.cl): log2 of the work-items per particle of
// the neighbour-sum kernels for n particles. GPUs: enough lanes to give each
// compute unit EDDY_SPH_LANE_ITEMS_PER_CU work-items, at most
// 2^EDDY_SPH_MAX_LANE_BITS; other devices: 0 (one work-item per particle).
// `override` >= 0 (SphKernelConfig::laneBits or the developer aid
// EDDY_SPH_LANES, see sphLaneOverride) replaces the choice.
unsigned sphLaneBits(const DeviceInfo& device, size_t n, int override = -1);
// EDDY_SPH_LANES = 1, 2, 4, .. 32 in the environment: that many lanes for
// every SPH neighbour sum (measurements); else -1 (automatic).
int sphLaneOverride();
// The launch of n particles at 2^laneBits work-items each (whole work-groups).
EnqueueArgs sphLaneLaunch(cl::CommandQueue& queue, size_t n, unsigned laneBits);

class SphParticles {
 public:
  // Allocates every per-particle buffer for `capacity` particles (>= the
  // setup's count) and uploads the setup. `h` is the support radius (grid).
  // The caller has checked the device memory.
  // `solids`: the sampled solids of the setup (boundary particles).
  SphParticles(Context& ctx, Profiler& profiler, const SphSetup& setup, const SphKernelConfig& cfg,
               size_t capacity, double h, const std::vector<SphSolidSamples>& solids = {});

  // Program build options every SPH program uses (work-group size, list mode,
  // division): a solver builds its own program with them.
  static std::string buildOptions(const Context& ctx, const SphKernelConfig& cfg);

  // ---- The pipeline's phases (one kernel each, nothing waits). ----
  // Where the sort's bitonic network does not fit (RadixSort::bitonicFits),
  // a counting sort by cell replaces the radix passes (countingSort()): the
  // hash then also counts each cell's particles, and the sort builds the
  // cell table too (rows cell_sums, cell_table, cell_scatter, cell_rank;
  // kernels/sph/sph_cells.cl), so runCells() has nothing left to do. Either
  // way the keys, the order and the table are the same, bit for bit.
  void runHash();
  void runSort();
  void runReorder();
  void runCells();
  // Whether runHash() and runSort() take the counting sort now: automatic
  // (above), or EDDY_CELL_SORT=0|1 (a developer aid; tests force either).
  bool countingSort() const;
  void setCountingSort(int mode) { countingMode_ = mode; }  // -1 automatic, 0 off, 1 on
  void runNeighbours();  // list mode only (no-op in cells mode)
  // hash .. neighbours: the neighbour data of the current positions.
  // withList = false leaves the list to the solver's first density kernel
  // (SphSolver::buildsNeighbourList: fused list); the cell table is built.
  void update(bool withList = true);
  // dt = min(max_dt, cfl h / (c0 + s), cfl sqrt(h / |a|max)) from the maxima
  // a solver left in counters() (s: the largest |v|, for WCSPH plus the
  // particle's sound speed beyond c0, sph_forces.cl); advances the device clock.
  void runDt(const SphPhysics& phys);
  // v += a dt; x += v dt; walls (restitution); escapes counted.
  void runIntegrate(const cl::Buffer& acc, const SphPhysics& phys);

  // ---- What a solver reads (current slot order). ----
  Context& context() { return ctx_; }
  Profiler& profiler() { return profiler_; }
  const SphKernelConfig& config() const { return cfg_; }
  size_t size() const { return n_; }
  size_t capacity() const { return cap_; }
  const cl::Buffer& positions() const { return pos_[cur_]; }
  const cl::Buffer& velocities() const { return vel_[cur_]; }
  const cl::Buffer& ids() const { return id_[cur_]; }
  const cl::Buffer& keys() const { return keys_; }
  const cl::Buffer& order() const { return vals_; }
  const cl::Buffer& cells() const { return cells_; }         // uint2 (start, end) per cell
  const cl::Buffer& neighbourList() const { return nlist_; }  // list mode, EDDY_SPH_LIST_SLOT layout
  const cl::Buffer& neighbourCounts() const { return nbcount_; }
  cl_uint listCapacity() const { return cl_uint(cfg_.listCapacity); }  // entries per particle
  const cl::Buffer& counters() const { return counters_; }
  const cl::Buffer& clock() const { return clock_; }
  // Kernel arguments of the grid and the tank.
  cl_uint count() const { return cl_uint(n_); }
  cl_int4 dims4() const;
  cl_float invCell() const { return cl_float(1.0 / cell_); }
  cl_float4 tank4() const;
  EnqueueArgs launch() const;  // n items rounded up to work-groups of EDDY_SPH_WG
  // Neighbour sums: 2^laneBits() work-items per particle (sphLaneBits).
  cl_uint laneBits() const { return cl_uint(sphLaneBits(ctx_.info(), n_, laneOverride_)); }
  EnqueueArgs laneLaunch() const { return sphLaneLaunch(ctx_.launchQueue(), n_, laneBits()); }
  // Whether a solver that can build the list in its first density kernel
  // should now (SphKernelConfig::fusedList): in list mode at one lane per
  // particle, or at any lane count set explicitly (SphKernelConfig::laneBits:
  // the tests). Automatic lanes (small N on a GPU) keep the "neighbours"
  // phase: there the fused kernel's body runs in the divergent candidate walk
  // and cost more than the list walk it saves (H200, 101 306 particles with
  // 4 lanes: 0.141 against 0.117 ms; docs/PERFORMANCE.md).
  bool fuseList() const {
    return fusedList_ && (laneBits() == 0 || cfg_.laneBits >= 0);
  }

  std::array<int, 3> gridDims() const { return dims_; }
  double cellSize() const { return cell_; }
  unsigned keyBits() const { return keyBits_; }
  size_t numCells() const { return numCells_; }
  size_t tiles() const;  // of EDDY_SPH_CELL_TILE cells (the counting sort)
  const std::array<double, 3>& tank() const { return tank_; }

  // The boundary particles of the solids (none: size() 0, kernels skip them).
  SphBoundary& boundary() { return *boundary_; }
  const SphBoundary& boundary() const { return *boundary_; }

  // The count grows (addBlock, after appending at the end of the current slots).
  void grow(size_t k);

 private:
  Context& ctx_;
  Profiler& profiler_;
  SphKernelConfig cfg_;
  size_t n_, cap_;
  double h_;
  std::array<double, 3> tank_{};
  std::array<int, 3> dims_{};
  double cell_ = 0;
  size_t numCells_ = 0;
  unsigned keyBits_ = 1;
  int laneOverride_ = -1;
  bool fusedList_ = false;  // cfg.fusedList in list mode, unless EDDY_SPH_FUSED_LIST=0
  cl::Program program_;
  RadixSort sorter_;
  cl::Buffer pos_[2], vel_[2], id_[2];
  cl::Buffer keys_, vals_, tmpKeys_, tmpVals_;
  cl::Buffer cells_, nlist_, nbcount_, counters_, clock_;
  // Counting sort: particles per cell (zero between steps; the scatter's
  // cursors within one) and per tile of EDDY_SPH_CELL_TILE cells; created at
  // the first counting sort.
  cl::Buffer cellCount_, tileSums_;
  int countingMode_ = -1;
  bool counting_ = false;      // the path runHash() took
  bool countsPending_ = false;  // counted by runHash(), not yet used (and zeroed) by runSort()
  bool tableBuilt_ = false;     // runSort() built the cell table of these keys
  int cur_ = 0;
  std::unique_ptr<SphBoundary> boundary_;

  KernelFunctor<cl::Buffer, cl::Buffer, cl::Buffer, cl::Buffer, cl_uint, cl_int4, cl_float>
      hash_{program_, "sph_hash"};
  KernelFunctor<cl::Buffer, cl::Buffer, cl::Buffer, cl::Buffer, cl::Buffer, cl::Buffer,
                    cl::Buffer, cl_uint>
      reorder_{program_, "sph_reorder"};
  KernelFunctor<cl::Buffer, cl_uint> cellsClear_{program_, "sph_cells_clear"};
  KernelFunctor<cl::Buffer, cl::Buffer, cl_uint> cells_k_{program_, "sph_cells"};
  KernelFunctor<cl::Buffer, cl::Buffer, cl::Buffer, cl::Buffer, cl::Buffer, cl_uint, cl_int4, cl_float>
      hashCount_{program_, "sph_hash_count"};
  KernelFunctor<cl::Buffer, cl::Buffer, cl_uint> cellSums_{program_, "sph_cell_sums"};
  KernelFunctor<cl::Buffer, cl::Buffer, cl::Buffer, cl_uint> cellTable_{program_, "sph_cell_table"};
  KernelFunctor<cl::Buffer, cl::Buffer, cl::Buffer, cl::Buffer, cl_uint> cellScatter_{
      program_, "sph_cell_scatter"};
  KernelFunctor<cl::Buffer, cl::Buffer, cl::Buffer, cl::Buffer, cl::Buffer, cl::Buffer, cl_uint>
      cellRank_{program_, "sph_cell_rank"};
  KernelFunctor<cl::Buffer, cl::Buffer, cl::Buffer, cl::Buffer, cl::Buffer, cl_uint, cl_int4,
                    cl_float, cl_float, cl_uint, cl_uint>
      neighbours_{program_, "sph_neighbours"};
  KernelFunctor<cl::Buffer, cl::Buffer, cl_float, cl_float, cl_float, cl_float> dt_{program_,
                                                                                      "sph_dt"};
  KernelFunctor<cl::Buffer, cl::Buffer, cl::Buffer, cl::Buffer, cl::Buffer, cl_uint, cl_float4,
                    cl_float>
      integrate_{program_, "sph_integrate"};
};

}  // namespace eddy
