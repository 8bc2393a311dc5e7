#include "particles.hpp"
#include "sph.hpp"

#include "io.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <sstream>

namespace eddy {

namespace {
cl_float4 f4(double x, double y, double z, double w = 0) { return makeFloat4(x, y, z, w); }
}  // namespace

SphGrid sphGrid(const std::array<double, 3>& tank, double h) {
  // The grid covers the tank; cell size slightly above h (EDDY_SPH_CELL_SLACK).
  constexpr double kMaxCells = double(1u << 30);
  SphGrid g;
  g.cell = h * double(EDDY_SPH_CELL_SLACK);
  double cells = 1;
  for (int a = 0; a < 3; ++a) {
    const double d = std::max(1.0, std::ceil(tank[a] / g.cell));  // double: no int overflow
    cells *= d;
    g.dims[a] = d <= kMaxCells ? int(d) : 0;
  }
  if (!(cells <= kMaxCells)) {
    std::ostringstream o;
    o << "SPH: the grid would have " << formatNumber(cells) << " cells (tank "
      << formatNumber(tank[0]) << " x " << formatNumber(tank[1]) << " x " << formatNumber(tank[2])
      << " m / cell " << formatNumber(g.cell) << " m); more than the limit 2^30 = "
      << size_t(kMaxCells) << ": make the tank smaller or the spacing larger";
    throw Error(o.str());
  }
  g.numCells = size_t(cells);
  while ((size_t(1) << g.keyBits) < g.numCells) ++g.keyBits;
  return g;
}

std::vector<std::string> sphProgramFiles(std::initializer_list<std::string> files) {
  std::vector<std::string> out{"sph_kernel.h", "sph_common.cl", "sph_solid.cl"};
  out.insert(out.end(), files.begin(), files.end());
  return out;
}

unsigned sphLaneBits(const DeviceInfo& device, size_t n, int override) {
  if (override >= 0) return unsigned(std::min(override, EDDY_SPH_LANE_BITS_LIMIT));
  if (!(device.type & CL_DEVICE_TYPE_GPU) || n == 0) return 0;
  const double cus = double(std::max(device.computeUnits, 1u));
  const double want = cus * EDDY_SPH_LANE_ITEMS_PER_CU, wide = cus * EDDY_SPH_WIDE_LANE_ITEMS_PER_CU;
  unsigned bits = 0;
  while (bits < 2 && double(n << bits) < want) ++bits;  // up to 4 lanes
  while (bits < EDDY_SPH_MAX_LANE_BITS && double(n << (bits + 1)) <= wide) ++bits;
  return bits;
}

int sphLaneOverride() {
  // Developer aid (docs/PERFORMANCE.md): EDDY_SPH_LANES=1|2|4|..|32.
  const char* env = std::getenv("EDDY_SPH_LANES");
  if (!env || !*env) return -1;
  const int lanes = std::atoi(env);
  for (int b = 0; b <= EDDY_SPH_LANE_BITS_LIMIT; ++b)
    if (lanes == (1 << b)) return b;
  throw Error("EDDY_SPH_LANES='" + std::string(env) + "': expected 1, 2, 4, 8, 16 or 32");
}

EnqueueArgs sphLaneLaunch(cl::CommandQueue& queue, size_t n, unsigned laneBits) {
  const size_t perGroup = size_t(EDDY_SPH_WG) >> laneBits;
  const size_t groups = std::max<size_t>((n + perGroup - 1) / perGroup, 1);
  return EnqueueArgs(queue, cl::NDRange(groups * EDDY_SPH_WG), cl::NDRange(EDDY_SPH_WG));
}

std::string SphParticles::buildOptions(const Context& ctx, const SphKernelConfig& cfg) {
  if (ctx.info().maxWorkGroup < EDDY_SPH_WG)
    throw Error("SPH needs work-groups of " + std::to_string(EDDY_SPH_WG) + " items; " +
                ctx.info().name + " allows " + std::to_string(ctx.info().maxWorkGroup));
  std::string opts = "-DSPH_WG=" + std::to_string(EDDY_SPH_WG) +
                     " -DSPH_NLIST=" + std::string(cfg.neighbourList ? "1" : "0");
  if (cfg.correctlyRoundedDivSqrt && ctx.info().correctlyRoundedDivSqrt)
    opts += " -cl-fp32-correctly-rounded-divide-sqrt";
  if (cfg.thinWalls) opts += " -DSPH_THIN_WALLS=1";
  if (cfg.neighbourStage >= 0) opts += " -DSPH_NB_STAGE=" + std::to_string(cfg.neighbourStage);
  return opts;
}

SphParticles::SphParticles(Context& ctx, Profiler& profiler, const SphSetup& setup,
                           const SphKernelConfig& cfg, size_t capacity, double h,
                           const std::vector<SphSolidSamples>& solids)
    : ctx_(ctx),
      profiler_(profiler),
      cfg_(cfg),
      n_(setup.particles.size()),
      cap_(capacity),
      h_(h),
      tank_(setup.tank),
      laneOverride_(cfg.laneBits >= 0 ? std::min(cfg.laneBits, EDDY_SPH_LANE_BITS_LIMIT)
                                      : sphLaneOverride()),
      fusedList_(cfg.neighbourList && cfg.fusedList && envSwitch("EDDY_SPH_FUSED_LIST", true)),
      program_(ctx.buildProgram(sphProgramFiles({"sph_hash.cl", "sph_reorder.cl", "sph_cells.cl",
                                                 "sph_neighbours.cl", "sph_integrate.cl"}),
                                buildOptions(ctx, cfg))),
      sorter_(ctx) {
  if (cfg_.listCapacity == 0) cfg_.listCapacity = sphAutoListCapacity(h / setup.spacing);
  const SphGrid grid = sphGrid(tank_, h);
  dims_ = grid.dims;
  cell_ = grid.cell;
  numCells_ = grid.numCells;
  keyBits_ = grid.keyBits;

  // Every per-particle buffer is allocated for cap_ particles; kernels use n_.
  const size_t v4 = cap_ * sizeof(cl_float4), u = cap_ * sizeof(cl_uint);
  const size_t listBytes = cfg_.neighbourList ? u * EDDY_SPH_LIST_ROUNDUP(cfg_.listCapacity) : sizeof(cl_uint);
  try {
    for (int k = 0; k < 2; ++k) {
      pos_[k] = ctx.createBuffer(CL_MEM_READ_WRITE, v4, "SPH pos");
      vel_[k] = ctx.createBuffer(CL_MEM_READ_WRITE, v4, "SPH vel");
      id_[k] = ctx.createBuffer(CL_MEM_READ_WRITE, u, "SPH id");
    }
    keys_ = ctx.createBuffer(CL_MEM_READ_WRITE, u, "SPH keys");
    vals_ = ctx.createBuffer(CL_MEM_READ_WRITE, u, "SPH vals");
    tmpKeys_ = ctx.createBuffer(CL_MEM_READ_WRITE, u, "SPH tmpKeys");
    tmpVals_ = ctx.createBuffer(CL_MEM_READ_WRITE, u, "SPH tmpVals");
    cells_ = ctx.createBuffer(CL_MEM_READ_WRITE, numCells_ * 2 * sizeof(cl_uint), "SPH cells");
    nlist_ = ctx.createBuffer(CL_MEM_READ_WRITE, listBytes, "SPH nlist");
    nbcount_ = ctx.createBuffer(CL_MEM_READ_WRITE, u, "SPH nbcount");
    counters_ = ctx.createBuffer(CL_MEM_READ_WRITE, EDDY_SPH_NUM_COUNTERS * sizeof(cl_uint), "SPH counters");
    clock_ = ctx.createBuffer(CL_MEM_READ_WRITE, EDDY_SPH_CLOCK_SIZE * sizeof(cl_float), "SPH clock");

    std::vector<cl_float4> p(n_), v(n_);
    std::vector<cl_uint> ids(n_);
    for (size_t i = 0; i < n_; ++i) {
      const auto& s = setup.particles[i];
      p[i] = f4(s.x, s.y, s.z);
      v[i] = f4(s.vx, s.vy, s.vz);
      ids[i] = cl_uint(i);
    }
    auto& q = ctx.queue();
    q.enqueueWriteBuffer(pos_[0], CL_TRUE, 0, n_ * sizeof(cl_float4), p.data());
    q.enqueueWriteBuffer(vel_[0], CL_TRUE, 0, n_ * sizeof(cl_float4), v.data());
    q.enqueueWriteBuffer(id_[0], CL_TRUE, 0, n_ * sizeof(cl_uint), ids.data());
    const std::vector<cl_uint> zeros(EDDY_SPH_NUM_COUNTERS, 0);
    q.enqueueWriteBuffer(counters_, CL_TRUE, 0, zeros.size() * sizeof(cl_uint), zeros.data());
    const std::vector<cl_float> clk(EDDY_SPH_CLOCK_SIZE, 0.0f);
    q.enqueueWriteBuffer(clock_, CL_TRUE, 0, clk.size() * sizeof(cl_float), clk.data());
    const cl_uint zero = 0;
    q.enqueueWriteBuffer(nlist_, CL_TRUE, 0, sizeof zero, &zero);
  } catch (const cl::Error& e) {
    throw Error("SPH setup: " + describe(e));
  }
  boundary_ = std::make_unique<SphBoundary>(ctx, profiler, sorter_, solids, dims_, cell_, keyBits_,
                                            h, buildOptions(ctx, cfg));
}

void SphParticles::grow(size_t k) { n_ += k; }

cl_int4 SphParticles::dims4() const {
  cl_int4 v;
  v.s[0] = dims_[0];
  v.s[1] = dims_[1];
  v.s[2] = dims_[2];
  v.s[3] = 0;
  return v;
}

cl_float4 SphParticles::tank4() const { return f4(tank_[0], tank_[1], tank_[2]); }

EnqueueArgs SphParticles::launch() const {
  return EnqueueArgs(ctx_.launchQueue(), cl::NDRange(roundUp(n_, EDDY_SPH_WG)), cl::NDRange(EDDY_SPH_WG));
}

static_assert(EDDY_SPH_CELL_TILE % EDDY_SPH_WG == 0, "a tile is whole work-groups of cells");

size_t SphParticles::tiles() const { return (numCells_ + EDDY_SPH_CELL_TILE - 1) / EDDY_SPH_CELL_TILE; }

bool SphParticles::countingSort() const {
  if (countingMode_ >= 0) return countingMode_ == 1;
  static const int env = [] {
    const char* v = std::getenv("EDDY_CELL_SORT");
    return v && *v ? int(envSwitch("EDDY_CELL_SORT", false)) : -1;
  }();
  if (env >= 0) return env == 1;
  return !sorter_.bitonicFits(n_, keyBits_);
}

void SphParticles::runHash() {
  tableBuilt_ = false;
  counting_ = countingSort();
  try {
    if (!counting_) {
      profiler_.run("hash", hash_, launch(), pos_[cur_], keys_, vals_, counters_, cl_uint(n_),
                    dims4(), invCell());
      return;
    }
    // The counting sort's buffers are created at its first use (a run that
    // never needs them pays nothing). The counts are zeroed here when they
    // are new, or when a hash's counts were never used by a sort (an
    // exception between the two, or runHash twice); otherwise cell_rank of
    // the last sort left them at zero.
    const bool fresh = !cellCount_();
    if (fresh) {
      cellCount_ = ctx_.createBuffer(CL_MEM_READ_WRITE, numCells_ * sizeof(cl_uint), "SPH cell counts");
      tileSums_ = ctx_.createBuffer(CL_MEM_READ_WRITE, tiles() * sizeof(cl_uint), "SPH cell tile sums");
    }
    if (fresh || countsPending_)
      ctx_.queue().enqueueFillBuffer(cellCount_, cl_uint(0), 0, numCells_ * sizeof(cl_uint));
    countsPending_ = true;
    profiler_.run("hash", hashCount_, launch(), pos_[cur_], keys_, vals_, counters_, cellCount_, cl_uint(n_),
                  dims4(), invCell());
  } catch (const cl::Error& e) {
    throw Error("SPH hash kernel: " + describe(e));
  }
}

void SphParticles::runSort() {
  if (!counting_) {
    sorter_.sort(keys_, vals_, tmpKeys_, tmpVals_, n_, keyBits_, profiler_);
    return;
  }
  if (!countsPending_) return;  // a second sort of these keys: sorted already
  try {
    const EnqueueArgs tileRange(ctx_.launchQueue(), cl::NDRange(tiles() * EDDY_SPH_WG),
                                cl::NDRange(EDDY_SPH_WG));
    const cl_uint cells = cl_uint(numCells_), n = cl_uint(n_);
    profiler_.run("cell_sums", cellSums_, tileRange, cellCount_, tileSums_, cells);
    profiler_.run("cell_table", cellTable_, tileRange, cellCount_, tileSums_, cells_, cells);
    profiler_.run("cell_scatter", cellScatter_, launch(), keys_, cellCount_, tmpKeys_, tmpVals_, n);
    profiler_.run("cell_rank", cellRank_, launch(), tmpKeys_, tmpVals_, cells_, cellCount_, keys_, vals_, n);
  } catch (const cl::Error& e) {
    throw Error("SPH counting sort: " + describe(e));
  }
  countsPending_ = false;
  tableBuilt_ = true;
}

void SphParticles::runReorder() {
  const int next = 1 - cur_;
  try {
    profiler_.run("reorder", reorder_, launch(), vals_, pos_[cur_], vel_[cur_], id_[cur_],
                  pos_[next], vel_[next], id_[next], cl_uint(n_));
  } catch (const cl::Error& e) {
    throw Error("SPH reorder kernel: " + describe(e));
  }
  cur_ = next;
}

void SphParticles::runCells() {
  if (tableBuilt_) return;  // by the counting sort, of the same keys
  try {
    auto& q = ctx_.launchQueue();
    profiler_.run(
        "cells_clear", cellsClear_,
        EnqueueArgs(q, cl::NDRange(roundUp(numCells_, EDDY_SPH_WG)), cl::NDRange(EDDY_SPH_WG)),
        cells_, cl_uint(numCells_));
    profiler_.run("cells", cells_k_, launch(), keys_, cells_, cl_uint(n_));
  } catch (const cl::Error& e) {
    throw Error("SPH cell table kernels: " + describe(e));
  }
}

void SphParticles::runNeighbours() {
  if (!cfg_.neighbourList) return;
  try {
    profiler_.run("neighbours", neighbours_, laneLaunch(), pos_[cur_], cells_, nlist_, nbcount_,
                  counters_, cl_uint(n_), dims4(), invCell(), cl_float(h_),
                  cl_uint(cfg_.listCapacity), laneBits());
  } catch (const cl::Error& e) {
    throw Error("SPH neighbour list kernel: " + describe(e));
  }
}

void SphParticles::update(bool withList) {
  runHash();
  runSort();
  runReorder();
  runCells();
  if (withList) runNeighbours();
}

void SphParticles::runDt(const SphPhysics& phys) {
  try {
    profiler_.run("dt", dt_, EnqueueArgs(ctx_.launchQueue(), cl::NDRange(1)), clock_, counters_,
                  cl_float(phys.h), cl_float(phys.c0), cl_float(phys.cfl), cl_float(phys.maxDt));
  } catch (const cl::Error& e) {
    throw Error("SPH time-step kernel: " + describe(e));
  }
}

void SphParticles::runIntegrate(const cl::Buffer& acc, const SphPhysics& phys) {
  try {
    profiler_.run("integrate", integrate_, launch(), pos_[cur_], vel_[cur_], acc, clock_, counters_,
                  cl_uint(n_), tank4(), cl_float(phys.restitution));
  } catch (const cl::Error& e) {
    throw Error("SPH integrate kernel: " + describe(e));
  }
}

}  // namespace eddy
