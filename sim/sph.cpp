#include "sph.hpp"

#include "snapshot.hpp"

#include "eddy_shared.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace eddy {

const std::vector<ParamDesc>& sphParamDecl() {
  // name, label, group, unit, min, max, default, description, integer, rebuild, log
  static const std::vector<ParamDesc> decl = {
      {"spacing", "Particle spacing", "Scene", "m", 1e-4, 1.0, 0.002,
       "Initial lattice spacing dx. Sets the resolution: mass = rho0 dx^3 (calibrated so the "
       "lattice sums to rho0), support radius h = smoothing_ratio * dx.",
       false, true, true},
      {"column_width", "Column width", "Scene", "m", 1e-3, 100.0, 0.05715,
       "Width a of the water column(s) along x, from the back wall at x = 0 (Martin & Moyce "
       "1952: a = 2.25 in). Rounded to whole particles.",
       false, true, true},
      {"column_height", "Column height", "Scene", "m", 1e-3, 100.0, 0.1143,
       "Height of the water column(s) (n^2 a; default n^2 = 2). Rounded to whole particles.",
       false, true, true},
      {"tank_length", "Tank length", "Scene", "m", 1e-3, 1000.0, 0.4,
       "Inside length of the closed tank along x (walls at x = 0 and x = tank_length).", false,
       true, true},
      {"tank_height", "Tank height", "Scene", "m", 1e-3, 1000.0, 0.2,
       "Inside height of the closed tank (floor y = 0, lid y = tank_height; gravity along -y).",
       false, true, true},
      {"depth", "Slab depth", "Scene", "m", 1e-4, 1000.0, 0.008,
       "Depth of tank and water along z (rounded to whole particles). A thin slab of >= 4 "
       "particles between free-slip walls gives the 2-D-like experiment.",
       false, true, true},
      {"pool_height", "Pool height (drop)", "Scene", "m", 0.0, 1000.0, 0.04,
       "drop: depth of the water pool the drop falls into.", false, true, false},
      {"drop_radius", "Drop radius (drop)", "Scene", "m", 1e-3, 100.0, 0.025,
       "drop: radius of the falling sphere (clipped by the slab walls when depth < 2 r).", false,
       true, false},
      {"drop_height", "Drop centre height (drop)", "Scene", "m", 1e-3, 1000.0, 0.13,
       "drop: initial height of the sphere's centre above the floor.", false, true, false},
      {"jitter", "Lattice jitter", "Scene", "spacing", 0.0, 0.3, 0.0,
       "Random displacement of each particle, uniform in +-jitter*dx per axis (seeded).", false,
       true, false},
      {"seed", "Random seed", "Scene", "", 0, 4294967295.0, 1,
       "Seed of the lattice jitter; the same seed gives the same particles.", true, true, false},
      {"capacity_factor", "Capacity (x particles)", "Scene", "", 1.0, 64.0, 1.0,
       "Particle buffers are allocated for ceil(capacity_factor x the scene's count) particles: "
       "the room for blocks of fluid dropped into the running simulation (desktop app, "
       "'Drop block'). Memory grows with it (about 0.5 KB per particle of capacity); steps "
       "cost only what is in use. 1 = no room (eddy-cli, bench); the desktop app starts "
       "SPH with 4.",
       false, true, false},
      {"rest_density", "Rest density", "Physics", "kg/m^3", 1.0, 1e5, 1000.0,
       "rho0 of the fluid (water: 1000).", false, true, true},
      {"speed_of_sound", "Speed of sound", "Physics", "m/s", 0.0, 1e5, 0.0,
       "c0 of the Tait equation p = rho0 c0^2/7 ((rho/rho0)^7 - 1). 0 = automatic: 10x the "
       "largest speed the scene can reach (sqrt(2 g H) of its tallest water), so density "
       "varies by about 1%.",
       false, false, false},
      {"viscosity", "Artificial viscosity alpha", "Physics", "", 0.0, 2.0, 0.02,
       "alpha of Monaghan's (1992) artificial viscosity; the equivalent kinematic viscosity is "
       "about alpha h c0 / 10.",
       false, false, false},
      {"gravity", "Gravity", "Physics", "m/s^2", 0.0, 1000.0, 9.81,
       "Gravitational acceleration, along -y.", false, false, false},
      {"surface_tension", "Surface tension (cohesion)", "Physics", "m^4/(kg s^2)", 0.0, 1e3, 0.0,
       "gamma of the cohesion force of Akinci et al. (2013); 0 = off.", false, false, false},
      {"smoothing_ratio", "Support radius / spacing", "Physics", "", 1.2, 4.0, 2.2,
       "h / dx with h the support radius of the Wendland C2 kernel. 2.2 gives 32 neighbours "
       "on the lattice and a pressure-gradient sum within 2.3% of exact (2.0: 26 neighbours, "
       "5% low; 3.0: 92 neighbours, 0.3%).",
       false, true, false},
      {"wall_restitution", "Wall restitution", "Physics", "", 0.0, 1.0, 0.5,
       "A particle that crosses a wall plane is mirrored back and its normal velocity "
       "multiplied by -restitution (free slip along the wall).",
       false, false, false},
      {"cfl", "CFL number", "Integration", "", 1e-3, 0.5, 0.1,
       "dt = min(max_dt, cfl h / (c0 + |v|max), cfl sqrt(h / |a|max)), computed on the device "
       "every step (h = support radius).",
       false, false, false},
      {"max_dt", "Largest time step", "Integration", "s", 1e-8, 0.1, 1e-3,
       "Upper bound of the adaptive time step.", false, false, true},
      {"velocity_cfl", "Velocity CFL (DFSPH)", "Integration", "", 1e-3, 1.0, 0.4,
       "DFSPH: dt = velocity_cfl spacing / v, v = |v|max + |a|max dt (non-pressure "
       "accelerations), clamped to [min_dt, max_dt]; computed on the device. No speed of sound.",
       false, false, false},
      {"min_dt", "Smallest time step (DFSPH)", "Integration", "s", 1e-9, 0.1, 1e-6,
       "DFSPH: lower bound of the adaptive time step.", false, false, true},
      {"density_tolerance", "Density tolerance (DFSPH)", "Solver", "%", 1e-4, 10.0, 0.05,
       "DFSPH: the constant-density solve iterates until the average predicted compression "
       "max(rho* - rho0, 0) is at most this percentage of rho0.",
       false, false, true},
      {"divergence_tolerance", "Divergence tolerance (DFSPH)", "Solver", "%", 1e-4, 10.0, 0.1,
       "DFSPH: the divergence solve iterates until the average max(Drho/Dt, 0) dt / rho0 is at "
       "most this percentage (as SPlisHSPlasH).",
       false, false, true},
      {"min_iterations", "Minimum iterations (DFSPH)", "Solver", "", 0, 1000, 2,
       "DFSPH: each solve applies at least this many iterations.", true, false, false},
      {"max_iterations", "Maximum iterations (DFSPH)", "Solver", "", 1, 1000, 100,
       "DFSPH: each solve stops after this many iterations even if not within tolerance (the "
       "error reached is reported). Each possible iteration costs three kernel launches per "
       "step, no-ops once converged.",
       true, false, false},
  };
  return decl;
}

namespace {

cl_float4 f4(double x, double y, double z, double w = 0) { return makeFloat4(x, y, z, w); }
double fl(double x) { return double(float(x)); }  // the value the device sees

}  // namespace

double sphKernelW(double r, double h) {
  if (r >= h) return 0;
  const double q = r / h, t = 1 - q;
  return 21.0 / (2.0 * M_PI * h * h * h) * t * t * t * t * (1 + 4 * q);
}

double sphKernelDW(double r, double h) {
  if (r >= h) return 0;
  const double q = r / h, t = 1 - q;
  return 21.0 / (2.0 * M_PI * h * h * h) * (-20.0 * q * t * t * t) / h;
}

double sphLatticeMass(double rho0, double dx, double h) {
  const int k = int(std::ceil(h / dx)) + 1;
  double sum = 0;
  for (int i = -k; i <= k; ++i)
    for (int j = -k; j <= k; ++j)
      for (int l = -k; l <= k; ++l)
        sum += sphKernelW(dx * std::sqrt(double(i * i + j * j + l * l)), h);
  return rho0 / sum;
}

double sphLatticeGradientNorm(double dx, double h) {
  const int k = int(std::ceil(h / dx)) + 1;
  double sum = 0, wsum = 0;
  for (int i = -k; i <= k; ++i)
    for (int j = -k; j <= k; ++j)
      for (int l = -k; l <= k; ++l) {
        const double r = dx * std::sqrt(double(i * i + j * j + l * l));
        wsum += sphKernelW(r, h);
        if (r > 0) sum -= (i * dx) * sphKernelDW(r, h) * (i * dx) / r;
      }
  return sum / wsum;  // V = 1 / wsum (the calibrated volume per particle)
}

double sphReferencePressure(double rho, double rho0, double B) {
  return std::max(0.0, B * (std::pow(rho / rho0, 7.0) - 1.0));
}

cl::Program SphSim::buildProgram(Context& ctx, const SphKernelConfig& cfg) {
  if (ctx.info().maxWorkGroup < EDDY_SPH_WG)
    throw Error("SPH needs work-groups of " + std::to_string(EDDY_SPH_WG) + " items; " +
                ctx.info().name + " allows " + std::to_string(ctx.info().maxWorkGroup));
  std::string opts = "-DSPH_WG=" + std::to_string(EDDY_SPH_WG) +
                     " -DSPH_NLIST=" + std::string(cfg.neighbourList ? "1" : "0");
  if (cfg.correctlyRoundedDivSqrt && ctx.info().correctlyRoundedDivSqrt)
    opts += " -cl-fp32-correctly-rounded-divide-sqrt";
  return ctx.buildProgram({"sph_common.cl", "sph_hash.cl", "sph_reorder.cl", "sph_cells.cl",
                           "sph_neighbours.cl", "sph_density.cl", "sph_forces.cl",
                           "sph_integrate.cl"},
                          opts);
}

SphSim::SphSim(Context& ctx, const Params& params, const SphSetup& setup, SphKernelConfig cfg)
    : Simulation(ctx, sphParamDecl()),
      n_(setup.particles.size()),
      cfg_(cfg),
      program_(buildProgram(ctx, cfg)),
      sorter_(ctx) {
  params_ = params;
  if (n_ == 0) throw Error("SPH: the scene has no particles");
  if (n_ > 0x7fffffffu) throw Error("SPH: too many particles (limit 2^31 - 1)");
  if (cfg_.neighbourList && (cfg_.listCapacity == 0 || cfg_.listCapacity > 1024))
    throw Error("SPH: neighbour list capacity must be 1..1024");
  for (int a = 0; a < 3; ++a)
    if (!(setup.tank[a] > 0)) throw Error("SPH: tank dimensions must be positive");
  if (!(setup.spacing > 0)) throw Error("SPH: spacing must be positive");
  // Capacity: the initial count plus addBlock's headroom.
  if (cfg_.capacity) {
    cap_ = cfg_.capacity;
  } else {
    const double want = std::ceil(params_.get("capacity_factor") * double(n_));
    cap_ = want >= double(0x7fffffffu) ? size_t(0x7fffffffu) : size_t(want);
  }
  if (cap_ < n_ || cap_ > 0x7fffffffu)
    throw Error("SPH: capacity " + std::to_string(cap_) + " must lie in [" + std::to_string(n_) +
                " (the particle count), 2^31 - 1]");
  tank_ = setup.tank;
  expectedSpeed_ = setup.expectedSpeed;
  spacing_ = setup.spacing;

  // Derived constants, rounded to float: exactly what the kernels see.
  phys_.spacing = setup.spacing;
  phys_.rho0 = fl(params_.get("rest_density"));
  const double hExact = params_.get("smoothing_ratio") * setup.spacing;
  phys_.h = fl(hExact);
  phys_.mass = fl(sphLatticeMass(phys_.rho0, setup.spacing, phys_.h));
  phys_.gradScale = fl(1.0 / sphLatticeGradientNorm(setup.spacing, phys_.h));

  // The grid covers the tank; cell size slightly above h (EDDY_SPH_CELL_SLACK).
  cell_ = phys_.h * double(EDDY_SPH_CELL_SLACK);
  double cells = 1;
  for (int a = 0; a < 3; ++a) {
    dims_[a] = std::max(1, int(std::ceil(tank_[a] / cell_)));
    cells *= dims_[a];
  }
  if (cells > double(1u << 30))
    throw Error("SPH: the grid would have " + std::to_string(size_t(cells)) +
                " cells (tank / support radius); more than 2^30: make the tank smaller or the "
                "spacing larger");
  numCells_ = size_t(cells);
  keyBits_ = 1;
  while ((size_t(1) << keyBits_) < numCells_) ++keyBits_;

  // Every per-particle buffer is allocated for cap_ particles; kernels use n_.
  const size_t v4 = cap_ * sizeof(cl_float4), u = cap_ * sizeof(cl_uint);
  const size_t listBytes = cfg_.neighbourList ? u * cfg_.listCapacity : sizeof(cl_uint);
  const size_t total = 7 * v4 + 7 * u + cap_ * sizeof(cl_float2) + numCells_ * 8 + listBytes;
  checkDeviceMemory(ctx.info(), total, std::max({v4, numCells_ * 8, listBytes}),
                    cap_ == n_ ? std::to_string(n_) + " SPH particles"
                               : std::to_string(n_) + " SPH particles (capacity " +
                                     std::to_string(cap_) + ")");

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
    rhop_ = ctx.createBuffer(CL_MEM_READ_WRITE, cap_ * sizeof(cl_float2), "SPH rhop");
    acc_ = ctx.createBuffer(CL_MEM_READ_WRITE, v4, "SPH acc");
    counters_ = ctx.createBuffer(CL_MEM_READ_WRITE, EDDY_SPH_NUM_COUNTERS * sizeof(cl_uint), "SPH counters");
    clock_ = ctx.createBuffer(CL_MEM_READ_WRITE, EDDY_SPH_CLOCK_SIZE * sizeof(cl_float), "SPH clock");

    std::vector<cl_float4> p(n_), v(n_), a(cap_, f4(0, 0, 0));
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
    q.enqueueWriteBuffer(acc_, CL_TRUE, 0, v4, a.data());
    const std::vector<cl_uint> zeros(EDDY_SPH_NUM_COUNTERS, 0);
    q.enqueueWriteBuffer(counters_, CL_TRUE, 0, zeros.size() * sizeof(cl_uint), zeros.data());
    const std::vector<cl_float> clk(EDDY_SPH_CLOCK_SIZE, 0.0f);
    q.enqueueWriteBuffer(clock_, CL_TRUE, 0, clk.size() * sizeof(cl_float), clk.data());
    const cl_uint zero = 0;
    q.enqueueWriteBuffer(nlist_, CL_TRUE, 0, sizeof zero, &zero);
  } catch (const cl::Error& e) {
    throw Error("SPH setup: " + describe(e));
  }
  if (cfg_.dfsph) {
    if (!cfg_.neighbourList) throw Error("SPH: the DFSPH solver needs the neighbour list");
    dfsph_ = std::make_unique<DfsphSolver>(ctx, cap_, profiler_, cfg_.correctlyRoundedDivSqrt);
  }
  syncParams();
  refreshDensity();
}

SphSim::~SphSim() {
  try {
    waitUploads();  // the staging vectors must outlive their transfers
    // A pending clock read writes into clockHost_: never free it under the device.
    if (clockPending_) clockRead_.wait();
  } catch (...) {
    // teardown: nothing to report to
  }
}

void SphSim::waitUploads() {
  if (upload_.events.empty()) return;
  cl::Event::waitForEvents(upload_.events);
  upload_.events.clear();
}

size_t SphSim::BlockSites::count() const {
  size_t c = 1;
  for (int a = 0; a < 3; ++a) c *= hi[a] > lo[a] ? size_t(hi[a] - lo[a]) : 0;
  return c;
}

SphSim::BlockSites SphSim::blockSites(const Box& box) const {
  BlockSites b;
  for (int a = 0; a < 3; ++a) {
    // Cells [i dx, (i+1) dx) of the lattice inside the tank: i < floor(L / dx)
    // (the tolerance keeps L = k dx from losing its last cell to rounding).
    const double cells = std::floor(tank_[a] / spacing_ + 1e-9);
    // Centre (i + 1/2) dx in [lo, hi)  <=>  lo/dx - 1/2 <= i < hi/dx - 1/2.
    auto index = [&](float x) {
      const double v = std::ceil(double(x) / spacing_ - 0.5);
      return (long long)std::clamp(v, 0.0, cells);
    };
    b.lo[a] = index(box.lo[a]);
    b.hi[a] = index(box.hi[a]);
  }
  return b;
}

void SphSim::addBlock(const Box& box) {
  for (int a = 0; a < 3; ++a)
    if (!std::isfinite(box.lo[a]) || !std::isfinite(box.hi[a]))
      throw Error("SPH drop block: the box has a non-finite corner");
  const BlockSites b = blockSites(box);
  const size_t k = b.count();
  auto corner = [](const Vec3f& v) {
    return "(" + std::to_string(v[0]) + ", " + std::to_string(v[1]) + ", " +
           std::to_string(v[2]) + ")";
  };
  if (k == 0)
    throw Error("SPH drop block: the box " + corner(box.lo) + " .. " + corner(box.hi) +
                " m holds no particle site inside the tank (spacing " +
                std::to_string(spacing_) + " m)");
  if (k > cap_ - n_)
    throw Error("SPH drop block: the block has " + std::to_string(k) + " particles but only " +
                std::to_string(cap_ - n_) + " of the capacity " + std::to_string(cap_) +
                " are free (" + std::to_string(n_) +
                " in use); raise capacity_factor (rebuilds the scene)");

  // Stage the block on the host; the previous block's transfers finished long ago.
  waitUploads();
  upload_.pos.clear();
  upload_.ids.clear();
  upload_.pos.reserve(k);
  upload_.ids.reserve(k);
  const double dx = spacing_;
  for (long long l = b.lo[2]; l < b.hi[2]; ++l)
    for (long long j = b.lo[1]; j < b.hi[1]; ++j)
      for (long long i = b.lo[0]; i < b.hi[0]; ++i) {
        upload_.pos.push_back(f4((double(i) + 0.5) * dx, (double(j) + 0.5) * dx, (double(l) + 0.5) * dx));
        upload_.ids.push_back(cl_uint(n_ + upload_.ids.size()));
      }
  upload_.vel.assign(k, f4(0, 0, 0));
  try {
    auto& q = ctx_.queue();
    upload_.events.resize(3);
    // In queue order after the last step's integrate: appended at the end of
    // the current slot order.
    q.enqueueWriteBuffer(pos_[cur_], CL_FALSE, n_ * sizeof(cl_float4), k * sizeof(cl_float4),
                         upload_.pos.data(), nullptr, &upload_.events[0]);
    q.enqueueWriteBuffer(vel_[cur_], CL_FALSE, n_ * sizeof(cl_float4), k * sizeof(cl_float4),
                         upload_.vel.data(), nullptr, &upload_.events[1]);
    q.enqueueWriteBuffer(id_[cur_], CL_FALSE, n_ * sizeof(cl_uint), k * sizeof(cl_uint),
                         upload_.ids.data(), nullptr, &upload_.events[2]);
    q.flush();
  } catch (const cl::Error& e) {
    throw Error("SPH drop block: upload failed: " + describe(e));
  }
  n_ += k;
  // Density and pressure of the new count (colour fields, diagnostics); the
  // next step recomputes everything else from positions and velocities.
  syncParams();
  refreshDensity();
}

void SphSim::syncParams() {
  if (params_.version() == paramsSeen_) return;
  const double g = params_.get("gravity");
  double c0 = params_.get("speed_of_sound");
  if (c0 <= 0) c0 = 10.0 * std::max(expectedSpeed_, 1e-3);
  phys_.c0 = fl(c0);
  phys_.B = fl(phys_.rho0 * c0 * c0 / 7.0);
  phys_.alpha = fl(params_.get("viscosity"));
  phys_.gravity = fl(g);
  phys_.gamma = fl(params_.get("surface_tension"));
  phys_.cfl = fl(params_.get("cfl"));
  phys_.maxDt = fl(params_.get("max_dt"));
  phys_.restitution = fl(params_.get("wall_restitution"));
  auto& d = dfsphParams_;
  d.h = phys_.h;
  d.mass = phys_.mass;
  d.rho0 = phys_.rho0;
  d.gradScale = phys_.gradScale;
  d.spacing = fl(spacing_);
  d.velocityCfl = fl(params_.get("velocity_cfl"));
  d.minDt = fl(params_.get("min_dt"));
  d.maxDt = phys_.maxDt;
  d.restitution = phys_.restitution;
  d.densityTolerance = fl(params_.get("density_tolerance"));
  d.divergenceTolerance = fl(params_.get("divergence_tolerance"));
  d.minIterations = unsigned(params_.get("min_iterations"));
  d.maxIterations = unsigned(params_.get("max_iterations"));
  paramsSeen_ = params_.version();
}

cl::NDRange SphSim::global() const { return cl::NDRange(roundUp(n_, EDDY_SPH_WG)); }

namespace {
cl_int4 int4Of(const std::array<int, 3>& d) {
  cl_int4 v;
  v.s[0] = d[0];
  v.s[1] = d[1];
  v.s[2] = d[2];
  v.s[3] = 0;
  return v;
}
}  // namespace

void SphSim::runHash() {
  try {
    profiler_.record("hash", hash_(cl::EnqueueArgs(ctx_.queue(), global(), cl::NDRange(EDDY_SPH_WG)),
                                   pos_[cur_], keys_, vals_, counters_, cl_uint(n_),
                                   int4Of(dims_), cl_float(1.0 / cell_)));
  } catch (const cl::Error& e) {
    throw Error("SPH hash kernel: " + describe(e));
  }
}

void SphSim::runSort() { sorter_.sort(keys_, vals_, tmpKeys_, tmpVals_, n_, keyBits_, profiler_); }

void SphSim::runReorder() {
  const int next = 1 - cur_;
  try {
    profiler_.record("reorder",
                     reorder_(cl::EnqueueArgs(ctx_.queue(), global(), cl::NDRange(EDDY_SPH_WG)),
                              vals_, pos_[cur_], vel_[cur_], id_[cur_], pos_[next], vel_[next],
                              id_[next], cl_uint(n_)));
  } catch (const cl::Error& e) {
    throw Error("SPH reorder kernel: " + describe(e));
  }
  cur_ = next;
  if (dfsph_) dfsph_->reorder(vals_, n_);
}

void SphSim::runCells() {
  try {
    auto& q = ctx_.queue();
    profiler_.record("cells_clear",
                     cellsClear_(cl::EnqueueArgs(q, cl::NDRange(roundUp(numCells_, EDDY_SPH_WG)),
                                                 cl::NDRange(EDDY_SPH_WG)),
                                 cells_, cl_uint(numCells_)));
    profiler_.record("cells", cells_k_(cl::EnqueueArgs(q, global(), cl::NDRange(EDDY_SPH_WG)),
                                       keys_, cells_, cl_uint(n_)));
  } catch (const cl::Error& e) {
    throw Error("SPH cell table kernels: " + describe(e));
  }
}

void SphSim::runNeighbours() {
  if (!cfg_.neighbourList) return;
  try {
    profiler_.record(
        "neighbours",
        neighbours_(cl::EnqueueArgs(ctx_.queue(), global(), cl::NDRange(EDDY_SPH_WG)), pos_[cur_],
                    cells_, nlist_, nbcount_, counters_, cl_uint(n_), int4Of(dims_),
                    cl_float(1.0 / cell_), cl_float(phys_.h), cl_uint(cfg_.listCapacity)));
  } catch (const cl::Error& e) {
    throw Error("SPH neighbour list kernel: " + describe(e));
  }
}

static cl_float4 tank4(const std::array<double, 3>& t) { return f4(t[0], t[1], t[2]); }

void SphSim::runDensity() {
  try {
    profiler_.record(
        "density",
        density_(cl::EnqueueArgs(ctx_.queue(), global(), cl::NDRange(EDDY_SPH_WG)), pos_[cur_],
                 cells_, nlist_, nbcount_, rhop_, cl_uint(n_), int4Of(dims_),
                 cl_float(1.0 / cell_), tank4(tank_), cl_float(phys_.h), cl_float(phys_.mass),
                 cl_float(phys_.rho0), cl_float(phys_.B)));
  } catch (const cl::Error& e) {
    throw Error("SPH density kernel: " + describe(e));
  }
}

void SphSim::runForces() {
  try {
    profiler_.record(
        "forces",
        forces_(cl::EnqueueArgs(ctx_.queue(), global(), cl::NDRange(EDDY_SPH_WG)), pos_[cur_],
                vel_[cur_], rhop_, cells_, nlist_, nbcount_, acc_, counters_, cl_uint(n_),
                int4Of(dims_), cl_float(1.0 / cell_), tank4(tank_), cl_float(phys_.h),
                cl_float(phys_.mass), cl_float(phys_.c0), cl_float(phys_.alpha),
                cl_float(phys_.gravity), cl_float(phys_.gamma), cl_float(phys_.rho0),
                cl_float(phys_.gradScale)));
  } catch (const cl::Error& e) {
    throw Error("SPH forces kernel: " + describe(e));
  }
}

void SphSim::runDt() {
  try {
    profiler_.record("dt", dt_(cl::EnqueueArgs(ctx_.queue(), cl::NDRange(1)), clock_, counters_,
                               cl_float(phys_.h), cl_float(phys_.c0), cl_float(phys_.cfl),
                               cl_float(phys_.maxDt)));
  } catch (const cl::Error& e) {
    throw Error("SPH time-step kernel: " + describe(e));
  }
}

void SphSim::runIntegrate() {
  try {
    profiler_.record(
        "integrate",
        integrate_(cl::EnqueueArgs(ctx_.queue(), global(), cl::NDRange(EDDY_SPH_WG)), pos_[cur_],
                   vel_[cur_], acc_, clock_, counters_, cl_uint(n_), tank4(tank_),
                   cl_float(phys_.restitution)));
  } catch (const cl::Error& e) {
    throw Error("SPH integrate kernel: " + describe(e));
  }
}

void SphSim::refreshDensity() {
  runHash();
  runSort();
  runReorder();
  runCells();
  runNeighbours();
  if (dfsph_)
    dfsph_->runDensity(dfsphBuffers(), dfsphParams_, true);
  else
    runDensity();
}

DfsphBuffers SphSim::dfsphBuffers() const {
  DfsphBuffers b;
  b.pos = &pos_[cur_];
  b.vel = &vel_[cur_];
  b.nlist = &nlist_;
  b.nbcount = &nbcount_;
  b.rhop = &rhop_;
  b.acc = &acc_;
  b.clock = &clock_;
  b.counters = &counters_;
  b.n = n_;
  b.tank = tank_;
  return b;
}

InteractKernels& SphSim::interact() {
  if (!interact_) interact_ = std::make_unique<InteractKernels>(ctx_);
  return *interact_;
}

cl::Event SphSim::writeColorField(size_t index, const cl::Buffer& out) {
  if (index == 0) return interact().speed(vel_[cur_], out, n_);
  if (index == 1 || index == 2) return interact().component2(rhop_, out, n_, unsigned(index - 1));
  return Simulation::writeColorField(index, out);
}

cl::Event SphSim::push(const Ray& ray, float radius, const Vec3f& dv) {
  return interact().push(pos_[cur_], vel_[cur_], n_, ray, radius, dv);
}

std::optional<Box> SphSim::domain() const {
  Box b;
  for (int a = 0; a < 3; ++a) b.hi[a] = float(tank_[a]);
  return b;
}

void SphSim::saveState(SnapshotWriter& out) {
  out.addF64("sph/tank_x", tank_[0]);
  out.addF64("sph/tank_y", tank_[1]);
  out.addF64("sph/tank_z", tank_[2]);
  out.addF64("sph/spacing", spacing_);
  out.addF64("sph/expected_speed", expectedSpeed_);
  out.addU64("sph/capacity", cap_);
  out.addArray("sph/pos", readPositions());
  out.addArray("sph/vel", readVelocities());
  out.addArray("sph/ids", readIds());
  std::vector<cl_float> clk(EDDY_SPH_CLOCK_SIZE);
  std::vector<cl_uint> cnt(EDDY_SPH_NUM_COUNTERS);
  auto& q = ctx_.queue();
  q.enqueueReadBuffer(clock_, CL_TRUE, 0, clk.size() * sizeof(cl_float), clk.data());
  q.enqueueReadBuffer(counters_, CL_TRUE, 0, cnt.size() * sizeof(cl_uint), cnt.data());
  out.addArray("sph/clock", clk);
  out.addArray("sph/counters", cnt);
  if (dfsph_) {
    out.addArray("sph/dfsph_kdiv", dfsph_->readDivergencePressure(n_));
    out.addArray("sph/dfsph_kden", dfsph_->readDensityPressure(n_));
    out.addArray("sph/dfsph_state", dfsph_->readState());
  }
}

void SphSim::restoreState(const SphState& st) {
  if (st.pos.size() != n_ || st.vel.size() != n_ || st.ids.size() != n_ ||
      st.clock.size() != EDDY_SPH_CLOCK_SIZE || st.counters.size() != EDDY_SPH_NUM_COUNTERS)
    throw Error("SPH restore: the state does not match the simulation's size");
  try {
    auto& q = ctx_.queue();
    q.finish();
    writeState(st.pos, st.vel);
    q.enqueueWriteBuffer(id_[cur_], CL_TRUE, 0, n_ * sizeof(cl_uint), st.ids.data());
    q.enqueueWriteBuffer(clock_, CL_TRUE, 0, st.clock.size() * sizeof(cl_float), st.clock.data());
    q.enqueueWriteBuffer(counters_, CL_TRUE, 0, st.counters.size() * sizeof(cl_uint),
                         st.counters.data());
    if (dfsph_) {
      if (st.kdiv.size() == n_ && st.kden.size() == n_)
        dfsph_->writePressures(st.kdiv, st.kden);
      else
        dfsph_->writePressures(std::vector<cl_float>(n_, 0.0f), std::vector<cl_float>(n_, 0.0f));
      if (st.dfsphState.size() == EDDY_DFSPH_STATE_SIZE) dfsph_->writeState(st.dfsphState);
    }
  } catch (const cl::Error& e) {
    throw Error("SPH restore: " + describe(e));
  }
  syncTime();
}

SphState decodeSphState(const Snapshot& snap, size_t count) {
  if (count == 0 || count > 0x7fffffffu)
    snap.fail("particle count " + std::to_string(count) + " is outside [1, 2^31 - 1]");
  SphState s;
  s.setup.tank = {snap.f64("sph/tank_x"), snap.f64("sph/tank_y"), snap.f64("sph/tank_z")};
  s.setup.spacing = snap.f64("sph/spacing");
  s.setup.expectedSpeed = snap.f64("sph/expected_speed");
  for (double v : {s.setup.tank[0], s.setup.tank[1], s.setup.tank[2], s.setup.spacing})
    if (!std::isfinite(v) || !(v > 0)) snap.fail("SPH tank and spacing must be finite and > 0");
  if (!std::isfinite(s.setup.expectedSpeed) || s.setup.expectedSpeed < 0)
    snap.fail("SPH expected speed must be finite and >= 0");
  s.pos = snap.array<cl_float4>("sph/pos", count);
  s.vel = snap.array<cl_float4>("sph/vel", count);
  s.ids = snap.array<cl_uint>("sph/ids", count);
  s.clock = snap.array<cl_float>("sph/clock", EDDY_SPH_CLOCK_SIZE);
  s.counters = snap.array<cl_uint>("sph/counters", EDDY_SPH_NUM_COUNTERS);
  if (snap.has("sph/dfsph_kdiv") || snap.has("sph/dfsph_kden")) {
    s.kdiv = snap.array<cl_float>("sph/dfsph_kdiv", count);
    s.kden = snap.array<cl_float>("sph/dfsph_kden", count);
    s.dfsphState = snap.array<cl_uint>("sph/dfsph_state", EDDY_DFSPH_STATE_SIZE);
    for (size_t i = 0; i < count; ++i)
      if (!std::isfinite(s.kdiv[i]) || !std::isfinite(s.kden[i]))
        snap.fail("the DFSPH pressure of particle " + std::to_string(i) + " is not finite");
  }
  if (snap.has("sph/capacity")) {
    const uint64_t cap = snap.u64("sph/capacity");
    if (cap < count || cap > 0x7fffffffu)
      snap.fail("SPH capacity " + std::to_string(cap) + " is outside [" + std::to_string(count) +
                " (the particle count), 2^31 - 1]");
    s.capacity = size_t(cap);
  }
  std::vector<bool> seen(count, false);
  s.setup.particles.resize(count);
  for (size_t i = 0; i < count; ++i) {
    for (int k = 0; k < 3; ++k)
      if (!std::isfinite(s.pos[i].s[k]) || !std::isfinite(s.vel[i].s[k]))
        snap.fail("particle " + std::to_string(i) + " has a non-finite value");
    if (s.ids[i] >= count || seen[s.ids[i]])
      snap.fail("particle ids are not a permutation of 0 .. " + std::to_string(count - 1));
    seen[s.ids[i]] = true;
    s.setup.particles[i] = SphParticle{s.pos[i].s[0], s.pos[i].s[1], s.pos[i].s[2],
                                       s.vel[i].s[0], s.vel[i].s[1], s.vel[i].s[2]};
  }
  for (float c : s.clock)
    if (!std::isfinite(c)) snap.fail("the SPH clock is not finite");
  return s;
}

void SphSim::pollClock() {
  if (clockPending_ &&
      clockRead_.getInfo<CL_EVENT_COMMAND_EXECUTION_STATUS>() == CL_COMPLETE) {
    time_ = double(clockHost_[EDDY_SPH_CLOCK_T_HI]) + double(clockHost_[EDDY_SPH_CLOCK_T_LO]);
    lastDt_ = double(clockHost_[EDDY_SPH_CLOCK_DT]);
    clockPending_ = false;
  }
  if (!clockPending_ && steps_ >= clockReadStep_ + 8) {
    clockReadStep_ = steps_;
    try {
      ctx_.queue().enqueueReadBuffer(clock_, CL_FALSE, 0, sizeof(clockHost_), clockHost_.data(),
                                     nullptr, &clockRead_);
    } catch (const cl::Error& e) {
      throw Error("SPH clock read: " + describe(e));
    }
    clockPending_ = true;
  }
}

void SphSim::step() {
  pollClock();
  syncParams();
  if (dfsph_) {
    // Pipeline, then DFSPH around the non-pressure forces (sph_forces with
    // rhop's pressure 0: gravity, viscosity, cohesion and the maxima for dt).
    runHash();
    runSort();
    runReorder();
    runCells();
    runNeighbours();
    const DfsphBuffers b = dfsphBuffers();
    dfsph_->beginStep(b, dfsphParams_);
    runForces();
    dfsph_->finishStep(b, dfsphParams_);
    ++steps_;
    profiler_.endStep();
    throttle();
    return;
  }
  refreshDensity();
  runForces();
  runDt();
  runIntegrate();
  ++steps_;
  profiler_.endStep();
  throttle();
}

template <class T>
static std::vector<T> readBuf(cl::CommandQueue& q, const cl::Buffer& b, size_t n) {
  std::vector<T> out(n);
  if (n) q.enqueueReadBuffer(b, CL_TRUE, 0, n * sizeof(T), out.data());
  return out;
}

std::vector<cl_float4> SphSim::readPositions() { return readBuf<cl_float4>(ctx_.queue(), pos_[cur_], n_); }
std::vector<cl_float4> SphSim::readVelocities() { return readBuf<cl_float4>(ctx_.queue(), vel_[cur_], n_); }
std::vector<cl_float4> SphSim::readAccelerations() { return readBuf<cl_float4>(ctx_.queue(), acc_, n_); }
std::vector<cl_float2> SphSim::readDensityPressure() { return readBuf<cl_float2>(ctx_.queue(), rhop_, n_); }
std::vector<cl_uint> SphSim::readKeys() { return readBuf<cl_uint>(ctx_.queue(), keys_, n_); }
std::vector<cl_uint> SphSim::readOrder() { return readBuf<cl_uint>(ctx_.queue(), vals_, n_); }
std::vector<cl_uint> SphSim::readIds() { return readBuf<cl_uint>(ctx_.queue(), id_[cur_], n_); }
std::vector<cl_uint> SphSim::readCells() { return readBuf<cl_uint>(ctx_.queue(), cells_, 2 * numCells_); }
std::vector<cl_uint> SphSim::readNeighbourCounts() { return readBuf<cl_uint>(ctx_.queue(), nbcount_, n_); }
std::vector<cl_uint> SphSim::readNeighbourList() {
  if (!cfg_.neighbourList) return {};
  return readBuf<cl_uint>(ctx_.queue(), nlist_, n_ * cfg_.listCapacity);
}

SphCounters SphSim::readCounters() {
  const auto c = readBuf<cl_uint>(ctx_.queue(), counters_, EDDY_SPH_NUM_COUNTERS);
  SphCounters s;
  s.escaped = c[EDDY_SPH_CNT_ESCAPED];
  s.outOfGrid = c[EDDY_SPH_CNT_OUT_OF_GRID];
  s.overflow = c[EDDY_SPH_CNT_OVERFLOW];
  return s;
}

std::array<double, 2> SphSim::readClock() {
  const auto c = readBuf<cl_float>(ctx_.queue(), clock_, EDDY_SPH_CLOCK_SIZE);
  return {double(c[EDDY_SPH_CLOCK_T_HI]) + double(c[EDDY_SPH_CLOCK_T_LO]),
          double(c[EDDY_SPH_CLOCK_DT])};
}

double SphSim::syncTime() {
  if (clockPending_) {
    clockRead_.wait();
    clockPending_ = false;
  }
  const auto c = readClock();
  time_ = c[0];
  lastDt_ = c[1];
  return time_;
}

void SphSim::writeState(const std::vector<cl_float4>& pos, const std::vector<cl_float4>& vel) {
  if (pos.size() != n_ || vel.size() != n_) throw Error("SPH writeState: wrong particle count");
  auto& q = ctx_.queue();
  q.enqueueWriteBuffer(pos_[cur_], CL_TRUE, 0, n_ * sizeof(cl_float4), pos.data());
  q.enqueueWriteBuffer(vel_[cur_], CL_TRUE, 0, n_ * sizeof(cl_float4), vel.data());
}

void SphSim::writeAccelerations(const std::vector<cl_float4>& acc) {
  if (acc.size() != n_) throw Error("SPH writeAccelerations: wrong particle count");
  ctx_.queue().enqueueWriteBuffer(acc_, CL_TRUE, 0, n_ * sizeof(cl_float4), acc.data());
}

void SphSim::writeDt(float dt) {
  ctx_.queue().enqueueWriteBuffer(clock_, CL_TRUE, EDDY_SPH_CLOCK_DT * sizeof(cl_float),
                                  sizeof(cl_float), &dt);
}

SphDiagnostics SphSim::diagnostics() {
  syncParams();
  refreshDensity();
  SphDiagnostics d;
  const auto p = readPositions();
  const auto v = readVelocities();
  const auto rp = readDensityPressure();
  const auto nb = readNeighbourCounts();
  d.counters = readCounters();
  syncTime();
  d.time = time_;
  d.dt = lastDt_;
  const double m = phys_.mass, g = phys_.gravity, dx = phys_.spacing;
  double nbSum = 0;
  d.frontX = 0;
  for (size_t i = 0; i < n_; ++i) {
    const double vx = v[i].s[0], vy = v[i].s[1], vz = v[i].s[2];
    const double v2 = vx * vx + vy * vy + vz * vz;
    d.kinetic += 0.5 * m * v2;
    d.potential += m * g * p[i].s[1];
    d.maxSpeed = std::max(d.maxSpeed, std::sqrt(v2));
    // fluid extends half a spacing beyond the outermost particle centre
    d.frontX = std::max(d.frontX, double(p[i].s[0]) + 0.5 * dx);
    if (p[i].s[0] <= phys_.h) d.backHeight = std::max(d.backHeight, double(p[i].s[1]) + 0.5 * dx);
    d.maxDensityRatio = std::max(d.maxDensityRatio, double(rp[i].s[0]) / phys_.rho0);
    nbSum += double(nb[i]) - 1.0;
  }
  d.frontX = std::min(d.frontX, tank_[0]);
  d.backHeight = std::min(d.backHeight, tank_[1]);
  d.meanNeighbours = nbSum / double(n_);
  if (dfsph_) {
    const DfsphStats st = dfsph_->stats();
    d.densityIterations = st.densityIterations;
    d.divergenceIterations = st.divergenceIterations;
    d.densityError = st.densityError;
    d.divergenceError = st.divergenceError;
  } else {
    // WCSPH: the measured average compression, as DFSPH's density error.
    double e = 0;
    for (size_t i = 0; i < n_; ++i) e += std::max(0.0, double(rp[i].s[0]) - phys_.rho0);
    d.densityError = 100.0 * e / (double(n_) * phys_.rho0);
  }
  return d;
}

std::vector<std::string> SphSim::diagColumns() const {
  return {"step",      "time",    "dt",
          "kinetic",   "max_speed", "front_x",
          "back_height", "escaped", "potential",
          "max_density_ratio", "mean_neighbours", "overflow",
          "density_iterations", "divergence_iterations", "density_error", "divergence_error"};
}

std::vector<double> SphSim::diagRow() {
  const auto d = diagnostics();
  return {double(steps_),
          d.time,
          d.dt,
          d.kinetic,
          d.maxSpeed,
          d.frontX,
          d.backHeight,
          double(d.counters.escaped + d.counters.outOfGrid),
          d.potential,
          d.maxDensityRatio,
          d.meanNeighbours,
          double(d.counters.overflow),
          double(d.densityIterations),
          double(d.divergenceIterations),
          d.densityError,
          d.divergenceError};
}

std::vector<std::string> SphSim::stateColumns() const {
  return {"x", "y", "z", "vx", "vy", "vz", "density", "pressure"};
}

std::vector<std::vector<double>> SphSim::stateRows() {
  refreshDensity();
  const auto p = readPositions();
  const auto v = readVelocities();
  const auto rp = readDensityPressure();
  const auto ids = readIds();
  std::vector<std::vector<double>> rows(n_);
  for (size_t i = 0; i < n_; ++i) {
    const size_t k = ids[i];
    if (k >= n_) throw Error("SPH output: corrupt particle id " + std::to_string(k));
    rows[k] = {p[i].s[0], p[i].s[1], p[i].s[2], v[i].s[0],
               v[i].s[1], v[i].s[2], rp[i].s[0], rp[i].s[1]};
  }
  return rows;
}

// ---- CPU references ----------------------------------------------------------

bool sphIsNeighbour(const cl_float4& a, const cl_float4& b, float h) {
  const float dx = a.s[0] - b.s[0], dy = a.s[1] - b.s[1], dz = a.s[2] - b.s[2];
  const float xx = dx * dx, yy = dy * dy, zz = dz * dz;
  const float r2 = (xx + yy) + zz;
  return r2 < h * h;
}

namespace {

struct Walls {
  unsigned mask = 0;
  double w[3] = {0, 0, 0};
};

// The kernel's choice of walls, evaluated in float as the kernel does.
Walls wallsOf(const cl_float4& p, const std::array<double, 3>& tank, double h) {
  Walls W;
  const float hf = float(h);
  for (int a = 0; a < 3; ++a) {
    const float x = p.s[a], L = float(tank[a]);
    if (x <= L - x) {
      if (x < hf) W.mask |= 1u << a;
    } else {
      W.w[a] = L;
      if (L - x < hf) W.mask |= 1u << a;
    }
  }
  return W;
}

}  // namespace

void sphReferenceDensity(const SphReferenceInput& in, std::vector<double>& rho,
                         std::vector<unsigned>& count) {
  const size_t n = in.pos.size();
  const double h = in.phys.h;
  rho.assign(n, 0);
  count.assign(n, 0);
  for (size_t i = 0; i < n; ++i) {
    const Walls W = wallsOf(in.pos[i], in.tank, h);
    double sum = 0;
    for (size_t j = 0; j < n; ++j) {
      if (!sphIsNeighbour(in.pos[i], in.pos[j], float(h))) continue;
      ++count[i];
      double q[3], d2 = 0;
      for (int a = 0; a < 3; ++a) {
        q[a] = in.pos[j].s[a];
        const double d = double(in.pos[i].s[a]) - q[a];
        d2 += d * d;
      }
      sum += sphKernelW(std::sqrt(d2), h);
      for (unsigned s = W.mask; s; s = (s - 1) & W.mask) {
        double g2 = 0;
        for (int a = 0; a < 3; ++a) {
          const double g = (s >> a) & 1 ? 2 * W.w[a] - q[a] : q[a];
          const double d = double(in.pos[i].s[a]) - g;
          g2 += d * d;
        }
        sum += sphKernelW(std::sqrt(g2), h);
      }
    }
    rho[i] = in.phys.mass * sum;
  }
}

void sphReferenceForces(const SphReferenceInput& in, std::vector<std::array<double, 3>>& acc,
                        std::vector<double>& scale) {
  const size_t n = in.pos.size();
  const auto& P = in.phys;
  const double h = P.h, hs = 0.5 * h, eta2 = 0.01 * hs * hs;
  acc.assign(n, {0, 0, 0});
  scale.assign(n, 0);
  auto cohesion = [&](double r) {
    const double c = 32.0 / (M_PI * std::pow(h, 9));
    const double a = std::pow(h - r, 3) * r * r * r;
    return 2 * r > h ? c * a : c * (2 * a - std::pow(h, 6) / 64.0);
  };
  for (size_t i = 0; i < n; ++i) {
    const Walls W = wallsOf(in.pos[i], in.tank, h);
    const double rhoi = in.rhop[i].s[0], pri = P.gradScale * in.rhop[i].s[1] / (rhoi * rhoi);
    double a[3] = {0, 0, 0}, sc = 0;
    for (size_t j = 0; j < n; ++j) {
      if (!sphIsNeighbour(in.pos[i], in.pos[j], float(h))) continue;
      const double rhoj = in.rhop[j].s[0], prj = P.gradScale * in.rhop[j].s[1] / (rhoj * rhoj);
      const double cvis = P.alpha * P.c0 * hs * 2.0 / (rhoi + rhoj);
      for (unsigned s = W.mask;; s = (s - 1) & W.mask) {  // s = mask .. 0 (0 = the real pair)
        double d[3], dv[3], r2 = 0, vr = 0;
        for (int ax = 0; ax < 3; ++ax) {
          const bool m = (s >> ax) & 1;
          const double q = m ? 2 * W.w[ax] - in.pos[j].s[ax] : in.pos[j].s[ax];
          const double vj = m ? -double(in.vel[j].s[ax]) : double(in.vel[j].s[ax]);
          d[ax] = double(in.pos[i].s[ax]) - q;
          dv[ax] = double(in.vel[i].s[ax]) - vj;
          r2 += d[ax] * d[ax];
          vr += dv[ax] * d[ax];
        }
        const double r = std::sqrt(r2);
        if (r < h) {
          const double pi = vr < 0 ? -cvis * vr / (r2 + eta2) : 0.0;
          const double f = r > 0 ? sphKernelDW(r, h) / r : 0.0;  // grad W = f * d
          double coh = 0;
          if (s == 0 && P.gamma > 0 && r2 > 0)
            coh = P.gamma * P.mass * (2 * P.rho0 / (rhoi + rhoj)) * cohesion(r) / r;
          for (int ax = 0; ax < 3; ++ax) {
            const double t = -P.mass * (pri + prj + pi) * f * d[ax] - coh * d[ax];
            a[ax] += t;
            sc += std::fabs(t);
          }
        }
        if (s == 0) break;
      }
    }
    a[1] -= P.gravity;
    acc[i] = {a[0], a[1], a[2]};
    scale[i] = sc + P.gravity;
  }
}

}  // namespace eddy
