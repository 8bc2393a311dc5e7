#include "sph.hpp"

#include "config.hpp"  // kLimitEvery, kMinProbeDt: what a run accepts
#include "io.hpp"
#include "shape_spec_io.hpp"
#include "snapshot.hpp"

#include <nlohmann/json.hpp>

#include "eddy_shared.h"
#include "sph_kernel.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>
#include <utility>

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
      {"bodies", "Floating bodies (wave_tank)", "Scene", "", 0, 10000, 4,
       "wave_tank: the number of floating boxes (density 500 kg/m^3) laid out on a grid in front "
       "of the piston; 0 = the piston alone.",
       true, true, false},
      {"rest_density", "Rest density", "Physics", "kg/m^3", 1.0, 1e5, 1000.0,
       "rho0 of the fluid (water: 1000).", false, true, true},
      {"speed_of_sound", "Speed of sound", "Physics", "m/s", 0.0, 1e5, 0.0,
       "c0 of the Tait equation p = rho0 c0^2/7 ((rho/rho0)^7 - 1). 0 = automatic: 10x the "
       "largest speed the scene can reach (sqrt(2 g H) of its tallest water, a moving body's "
       "fastest point, the cohesion's pull), so density varies by about 1%.",
       false, false, false},
      {"viscosity", "Artificial viscosity alpha", "Physics", "", 0.0, 2.0, 0.02,
       "alpha of Monaghan's (1992) artificial viscosity; the equivalent kinematic viscosity is "
       "about alpha h c0 / 10.",
       false, false, false},
      {"density_diffusion", "Density diffusion delta (WCSPH)", "Physics", "", 0.0, 1.0, 0.1,
       "wcsph: delta of the delta-SPH density diffusion (Molteni & Colagrossi 2009) in the "
       "hydrostatic form of Fourtakas et al. (2019). > 0: the density is carried by the "
       "continuity equation plus this diffusion, which smooths the pressure field (0.1 is the "
       "literature's value, the default); 0 = off: the summation density (9 % faster from "
       "100K particles on an H200, but a noisier pressure; docs/USAGE.md). Stable at the default cfl (the carried density "
       "never falls below 0.5 rho0).",
       false, false, false},
      {"gravity", "Gravity", "Physics", "m/s^2", 0.0, 1000.0, 9.81,
       "Gravitational acceleration, along -y.", false, false, false},
      {"surface_tension", "Surface tension (cohesion)", "Physics", "m^4/(kg s^2)", 0.0, 1e3, 0.0,
       "gamma of the cohesion force of Akinci et al. (2013); 0 = off.", false, false, false},
      {"smoothing_ratio", "Support radius / spacing", "Physics", "", 2.0, 4.0, 2.2,
       "h / dx with h the support radius of the Wendland C2 kernel. 2.2 gives 32 neighbours "
       "on the lattice and a pressure-gradient sum within 2.3% of exact (2.0: 26 neighbours, "
       "5% low; 3.0: 92 neighbours, 0.3%). Not below 2: with fewer neighbours a still tank's "
       "pressure held only 56-93% of its weight (1.4-1.8). The neighbour list grows with it "
       "(1.5 times the lattice's neighbours, at least 96 entries), and DFSPH's Jacobi relaxation "
       "shrinks with it above 2.2 (0.37 at 2.6, 0.25 at 3.0: with 0.5 its solves diverged).",
       false, true, false},
      {"wall_restitution", "Wall restitution", "Physics", "", 0.0, 1.0, 0.5,
       "A particle that crosses a wall plane is mirrored back and its normal velocity "
       "multiplied by -restitution (free slip along the wall).",
       false, false, false},
      {"boundary_spacing", "Boundary spacing (x spacing)", "Physics", "", 0.2, 1.0, 0.5,
       "Spacing of the boundary particles sampled on solids (obstacles, bodies) as a ratio of "
       "the fluid spacing dx (Akinci et al. 2012). 0.5: a surface of boundary particles about "
       "4 per support radius (h = 2.2 dx) across, smooth enough that the dam break's impact "
       "pressure pushes no fluid through a face; coarser lets pressure gaps open between "
       "them.",
       false, true, false},
      {"boundary_inset", "Boundary inset (x spacing)", "Physics", "", 0.0, 1.0, 0.7,
       "Depth below a solid's geometric surface at which its boundary particles are sampled, "
       "as a ratio of dx (a thin part: at most half its half thickness). The fluid's volume "
       "ends about 0.7 dx off the boundary particles, so at 0 that skin adds to the solid "
       "(a 500 kg/m^3 box floated 31.5 % submerged; 43 % at 0.5); 0.7 puts it on the "
       "geometric surface (50 %), where the forces on floating bodies give rho g V. At the default "
       "smoothing_ratio 2.2; in proportion to it otherwise (the fluid's gap is a fraction of h).",
       false, true, false},
      {"boundary_viscosity", "Boundary friction alpha", "Physics", "", 0.0, 2.0, 0.02,
       "alpha_b of the fluid's friction on solids (Akinci et al. 2012, eq. 11 with Monaghan's "
       "form): 0 = free slip; larger values approach no-slip.",
       false, false, false},
      {"cfl", "CFL number", "Integration", "", 1e-3, 0.5, 0.2,
       "dt = min(max_dt, cfl h / max(c + |v|), cfl sqrt(h / |a|max)), computed on the device "
       "every step (h = support radius = 2.2 dx by default: 0.44 dx / (c0 + |v|max) at 0.2, "
       "as GPUSPH's 0.39 dx / c0; WCSPH: c = c0 (rho/rho0)^3 each particle's Tait sound speed, "
       "at least c0, so a squeezed particle shortens the step). 0.2 (was 0.1) halves the steps; measured on PoCL with the "
       "summation density: Martin & Moyce fronts, hydrostatic tanks (with and without a "
       "submerged box) and the obstacle dam break (0 penetrations) as at 0.1.",
       false, false, false},
      {"max_dt", "Largest time step", "Integration", "s", 1e-8, 0.1, 1e-3,
       "Upper bound of the adaptive time step.", false, false, true},
      enumParam("solver", "Solver", "Physics", sphSolverNames(), 0,
                "The SPH solver that turns neighbours into density, pressure and forces "
                "(sim/sph/solvers.cpp). wcsph: weakly compressible SPH, Tait equation of state. "
                "dfsph: incompressible Divergence-Free SPH (Bender & Koschier 2015/2017), two "
                "pressure solves per step and a time step from the velocity alone.",
                true),
      {"velocity_cfl", "Velocity CFL (DFSPH)", "Integration", "", 1e-3, 1.0, 0.4,
       "DFSPH: dt = velocity_cfl spacing / v with v = |v|max + |a|max dt (non-pressure "
       "accelerations) or, if larger, sqrt(g H), a gravity wave over the fluid's depth H "
       "(its extent along gravity), clamped to [min_dt, max_dt], computed on the device. "
       "No speed of sound, except where the explicit artificial viscosity needs a smaller max_dt: "
       "dt <= (0.4/0.6) (h/2) / (alpha c0) (docs/USAGE.md).",
       false, false, false},
      {"min_dt", "Smallest time step (DFSPH)", "Integration", "s", 1e-9, 0.1, 1e-6,
       "DFSPH: lower bound of the adaptive time step.", false, false, true},
      {"density_tolerance", "Density tolerance (DFSPH)", "Solver", "%", 1e-4, 10.0, 0.05,
       "DFSPH: the constant-density solve iterates until the average predicted compression "
       "max(rho* - rho0, 0) is at most this percentage of rho0.",
       false, false, true},
      {"density_relaxation", "Density relaxation (DFSPH)", "Solver", "", 0.1, 1.0, 1.0,
       "DFSPH: the fraction beta of a particle's existing compression rho - rho0 that the "
       "constant-density solve removes within one step: it solves beta (rho - rho0) + dt "
       "Drho/Dt = 0 and stops once that residual's average is within density_tolerance; "
       "density_error stays the predicted compression rho* - rho0. 1: Bender & Koschier's "
       "solve. Below 1 (e.g. 0.5) the pressure of a deep still column stops \"breathing\" "
       "(H200, 200 layers: probe scatter 44-60 % -> 2 % of rho g d at the same iterations), "
       "but the water settles up to about density_tolerance / beta compressed, so "
       "density_error can exceed density_tolerance (docs/USAGE.md).",
       false, false, false},
      {"divergence_tolerance", "Divergence tolerance (DFSPH)", "Solver", "%", 1e-4, 10.0, 0.1,
       "DFSPH: the divergence solve iterates until the average max(Drho/Dt, 0) dt / rho0 is at "
       "most this percentage (as SPlisHSPlasH).",
       false, false, true},
      {"min_iterations", "Minimum iterations (DFSPH)", "Solver", "", 0, 1000, 2,
       "DFSPH: the constant-density solve applies at least this many iterations.", true, false,
       false},
      {"divergence_min_iterations", "Minimum divergence iterations (DFSPH)", "Solver", "", 0,
       1000, 2,
       "DFSPH: the divergence solve applies at least this many iterations (min_iterations is "
       "the density solve's). 1, as SPlisHSPlasH, made bench realtime 6-8 % faster from 54K "
       "particles on an H200, but the flow more sensitive to rounding and the pressure over a "
       "submerged box less exact (docs/USAGE.md).",
       true, false, false},
      {"max_iterations", "Maximum iterations (DFSPH)", "Solver", "", 1, 1000, 100,
       "DFSPH: each solve stops after this many iterations even if not within tolerance (the "
       "error reached is reported).",
       true, false, false},
      {"chebyshev_rho", "Chebyshev acceleration (DFSPH)", "Solver", "", 0.0, 0.999, 0.95,
       "DFSPH: both solves' relaxed Jacobi iterations are accelerated by Chebyshev's "
       "semi-iterative method (Golub & Varga 1961; as Wang 2015 for position-based dynamics): "
       "iteration m applies w_m times the Jacobi step plus (w_m - 1) times the step before, "
       "w_1 = 1, w_2 = 2 / (2 - rho^2), w_m+1 = 4 / (4 - rho^2 w_m), rho this estimate of "
       "the Jacobi iteration's spectral radius, after the first 3 plain iterations of a solve "
       "(EDDY_DFSPH_CHEB_DELAY). About half the iterations at large N; 0 = plain relaxed "
       "Jacobi, which leaves a few % more of the load on submerged solids (docs/USAGE.md).",
       false, false, false},
      enumParam("gradient_correction", "Pressure gradient (DFSPH)", "Solver",
                {"packing", "lattice"}, 0,
                "DFSPH: how the pressure gradient is normalised. lattice: by the cubic "
                "lattice's kernel-gradient sum (grad_scale), exact only on that lattice; a "
                "settled fluid packs differently and its pressure then rests about 2 % high "
                "(the hydrostatic tank). packing: every step also measures the mean second "
                "moment of the kernel gradient over the full-support particles and applies its "
                "inverse (one 3 x 3 matrix for all pairs: momentum is conserved), so the "
                "pressure gradient of the actual packing is right on average "
                "(docs/ARCHITECTURE.md, \"DFSPH\").",
                false),
      {"profile_every", "Profile one step in", "Profiling", "steps", 1, 64, 32,
       "The per-kernel device times (the profiler's rows, --json's profile) are measured on "
       "one step in this many (steps 0, K, 2K, ...); the others launch without OpenCL "
       "events. An event costs about 8.5 us of host time per launch on NVIDIA's OpenCL, more "
       "than the launch itself, and at small N the host's enqueue limits the step. 1 = "
       "every step. No effect on the physics.",
       true, false, false},
  };
  return decl;
}

namespace {

cl_float4 f4(double x, double y, double z, double w = 0) { return makeFloat4(x, y, z, w); }
double fl(double x) { return double(float(x)); }  // the value the device sees

// The fluid keeps EDDY_SOLID_CLEARANCE spacings outside a solid's geometric
// surface (eddy_shared.h): the guard after the move, the contact before it.
constexpr double kSolidClearance = EDDY_SOLID_CLEARANCE;


// Every size of a simulation of n particles, checked against the limits in
// double / 64-bit arithmetic (the inputs may come from a crafted snapshot).
struct SphSizes {
  size_t cap = 0;
  std::array<int, 3> dims{};
  double cell = 0;
  size_t cells = 0, totalBytes = 0, largestBytes = 0;
  std::string what;  // "N SPH particles (capacity C)" for memory messages
};

SphSizes sphSizes(size_t n, const std::array<double, 3>& tank, double h, const Params& params,
                  const SphKernelConfig& cfg) {
  SphSizes z;
  if (n == 0) throw Error("SPH: the scene has no particles");
  if (n > kMaxSphParticles)
    throw Error("SPH: " + std::to_string(n) + " particles are too many (limit 2^31 - 1 = " +
                std::to_string(kMaxSphParticles) + "); make the spacing larger");
  // Capacity: the initial count plus addBlock's headroom.
  if (cfg.capacity) {
    z.cap = cfg.capacity;
  } else {
    const double want = std::ceil(params.get("capacity_factor") * double(n));
    if (want > double(kMaxSphParticles))
      throw Error("SPH: capacity_factor " + formatNumber(params.get("capacity_factor")) + " x " +
                  std::to_string(n) + " particles = " + formatNumber(want) +
                  " is more than the limit 2^31 - 1 = " + std::to_string(kMaxSphParticles));
    z.cap = size_t(want);
  }
  if (z.cap < n || z.cap > kMaxSphParticles)
    throw Error("SPH: capacity " + std::to_string(z.cap) + " must lie in [" + std::to_string(n) +
                " (the particle count), 2^31 - 1]");
  // The grid (the pipeline's own sizing; throws beyond 2^30 cells).
  const SphGrid grid = sphGrid(tank, h);
  z.cell = grid.cell;
  z.dims = grid.dims;
  z.cells = grid.numCells;
  // Every per-particle buffer is allocated for cap particles; kernels use n.
  const size_t v4 = z.cap * sizeof(cl_float4), u = z.cap * sizeof(cl_uint);
  const size_t listCap = cfg.listCapacity ? cfg.listCapacity : sphAutoListCapacity(params.get("smoothing_ratio"));
  const size_t listBytes = cfg.neighbourList ? u * EDDY_SPH_LIST_ROUNDUP(listCap) : sizeof(cl_uint);
  // (+ DFSPH's own: factor float2, warm-start k x 4, dk; whichever solver runs)
  z.totalBytes = 7 * v4 + 7 * u + z.cap * sizeof(cl_float2) + z.cells * 8 + listBytes +
                 z.cap * (sizeof(cl_float2) + 5 * sizeof(cl_float));
  z.largestBytes = std::max({v4, z.cells * 8, listBytes});
  z.what = z.cap == n ? std::to_string(n) + " SPH particles"
                      : std::to_string(n) + " SPH particles (capacity " + std::to_string(z.cap) + ")";
  return z;
}

}  // namespace

double sphSoundSpeed(double speedOfSound, double expectedSpeed) {
  return speedOfSound > 0 ? speedOfSound
                          : kSphSoundSpeedFactor * std::max(expectedSpeed, 1e-3);
}

double sphCohesionSpeed(double gamma, double rho0, double dx, double smoothingRatio) {
  if (!(gamma > 0)) return 0;
  const double h = smoothingRatio * dx;
  const int k = int(std::ceil(smoothingRatio));
  // sum_j C(r) (y_i - y_j) / r over the lattice sites of the layer and below.
  double pull = 0;
  for (int i = -k; i <= k; ++i)
    for (int j = -k; j <= 0; ++j)
      for (int l = -k; l <= k; ++l) {
        const double r = dx * std::sqrt(double(i * i + j * j + l * l));
        if (r > 0 && r < h) pull += sph_cohesion(r, h) * (-j * dx) / r;
      }
  const double a = gamma * sphLatticeMass(rho0, dx, h) * std::fabs(pull);
  return std::sqrt(a * h);
}

double sphFlowSpeed(double sceneSpeed, double sceneGravity, double gravity, double bodySpeed,
                    double cohesionSpeed) {
  double v = sceneSpeed;
  if (gravity != sceneGravity) v *= std::sqrt(std::max(gravity, 1e-3) / std::max(sceneGravity, 1e-3));
  return std::max({v, bodySpeed, cohesionSpeed});
}

// The device's definition (kernels/common/sph_kernel.h), in double.
double sphKernelW(double r, double h) { return r >= h ? 0.0 : sph_w(r, h); }
double sphKernelDW(double r, double h) { return r >= h ? 0.0 : sph_gradw(r, h) * r; }

double sphLatticeMass(double rho0, double dx, double h) {
  const int k = int(std::ceil(h / dx)) + 1;
  double sum = 0;
  for (int i = -k; i <= k; ++i)
    for (int j = -k; j <= k; ++j)
      for (int l = -k; l <= k; ++l)
        sum += sphKernelW(dx * std::sqrt(double(i * i + j * j + l * l)), h);
  return rho0 / sum;
}

unsigned sphAutoListCapacity(double smoothingRatio) {
  const int k = int(std::ceil(smoothingRatio));
  size_t inside = 0;  // lattice sites (self included) closer than the support
  for (int i = -k; i <= k; ++i)
    for (int j = -k; j <= k; ++j)
      for (int l = -k; l <= k; ++l) inside += i * i + j * j + l * l < smoothingRatio * smoothingRatio;
  const size_t want = (3 * inside + 1) / 2;
  return unsigned(std::clamp<size_t>(want, kSphDefaultListCapacity, 1024));
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

double sphLatticeJacobiMax(double smoothingRatio) {
  // On the infinite lattice (spacing 1) every particle is alike and sum_j
  // g_ij = 0 (g_ij = m grad_i W_ij = c W'(q) x_ij / r). A Fourier mode
  // k_j = exp(i K.x_j) of the unknown is an eigenvector of D^-1 A: with
  // (1) and (2) of sph_dfsph.cl its velocity change is
  // -exp(i K.x_i) sum_j g(x_ij) exp(-i K.x_ij) = i exp(i K.x_i) S(K),
  // S(K) = sum_j g(x_ij) sin(K.x_ij), and the rate change it causes is
  // -|S(K)|^2 exp(i K.x_i), so the eigenvalue is |S(K)|^2 / sum_j |g_ij|^2.
  // Its largest over the Brillouin zone: a grid over 0 <= Kz <= Ky <= Kx <=
  // pi (the rest by symmetry), then a pattern search from the best point.
  const double s = smoothingRatio;
  const int k = int(std::ceil(s));
  // Per site within the support: its offset x and W'-part w, g = w x (the
  // constant factor cancels in the ratio).
  struct Site {
    double x, y, z, w;
  };
  std::vector<Site> sites;
  double diag = 0;
  for (int i = -k; i <= k; ++i)
    for (int j = -k; j <= k; ++j)
      for (int l = -k; l <= k; ++l) {
        const double r2 = double(i * i + j * j + l * l);
        if (r2 == 0 || r2 >= s * s) continue;
        const double w = sph_gradw_q(std::sqrt(r2) / s);
        sites.push_back({double(i), double(j), double(l), w});
        diag += w * w * r2;
      }
  if (!(diag > 0)) return 0;
  auto lambda = [&](double a, double b, double c) {
    double sx = 0, sy = 0, sz = 0;
    for (const Site& q : sites) {
      const double wsn = q.w * std::sin(a * q.x + b * q.y + c * q.z);
      sx += wsn * q.x;
      sy += wsn * q.y;
      sz += wsn * q.z;
    }
    return (sx * sx + sy * sy + sz * sz) / diag;
  };
  const int M = 32;
  const double pi = 3.14159265358979323846, step0 = pi / M;
  double best = 0, ka = 0, kb = 0, kc = 0;
  for (int a = 0; a <= M; ++a)
    for (int b = 0; b <= a; ++b)
      for (int c = 0; c <= b; ++c) {
        const double v = lambda(a * step0, b * step0, c * step0);
        if (v > best) best = v, ka = a * step0, kb = b * step0, kc = c * step0;
      }
  for (double h = step0 / 2; h > 1e-6; h /= 2) {
    bool moved = true;
    while (moved) {
      moved = false;
      for (int d = 0; d < 6; ++d) {
        double a = ka, b = kb, c = kc;
        (d / 2 == 0 ? a : d / 2 == 1 ? b : c) += d % 2 ? h : -h;
        const double v = lambda(a, b, c);
        if (v > best) best = v, ka = a, kb = b, kc = c, moved = true;
      }
    }
  }
  return best;
}

double sphBoundaryInset(const Params& p, double dx) {
  return p.get("boundary_inset") * dx * p.get("smoothing_ratio") / kSphInsetReferenceRatio;
}

double dfsphJacobiOmega(double smoothingRatio) {
  const double lmax = sphLatticeJacobiMax(smoothingRatio);
  return lmax > 0 ? std::min(double(EDDY_DFSPH_OMEGA), kDfsphJacobiMargin / lmax) : double(EDDY_DFSPH_OMEGA);
}

SphSim::SphSim(Context& ctx, const Params& params, const SphSetup& setup, SphKernelConfig cfg)
    : SphSim(ctx, params, setup, cfg, sphSolverFactory(params.getChoice("solver"))) {}

double sphBlowUpSpeed(const SphSetup& setup, double gravity) {
  const auto& t = setup.tank;
  // Free fall over the tank's height; the scene's own estimate; 1 m/s.
  double v = std::max({std::sqrt(2 * std::max(gravity, 0.0) * t[1]), setup.expectedSpeed, 1.0});
  for (const SphParticle& p : setup.particles)
    v = std::max(v, std::sqrt(p.vx * p.vx + p.vy * p.vy + p.vz * p.vz));
  // A kinematic body's fastest point in the tank (the scenes keep bodies in
  // it, bodyProblem).
  const Aabb tank{{0, 0, 0}, {t[0], t[1], t[2]}};
  // (a piston without a positive period has none: skipped)
  for (const BodySpec& b : setup.bodies)
    if (b.motion != BodyMotion::Piston || b.piston.period > 0) v = std::max(v, kinematicPeakSpeed(b, tank));
  return kBlowUpSpeedFactor * v;
}

SphSim::SphSim(Context& ctx, const Params& params, const SphSetup& setup, SphKernelConfig cfg,
               const SphSolverFactory& solver)
    : Simulation(ctx, sphParamDecl()), n_(setup.particles.size()), cfg_(cfg) {
  params_ = params;
  if (cfg_.listCapacity == 0) cfg_.listCapacity = sphAutoListCapacity(params_.get("smoothing_ratio"));
  SphParticles::buildOptions(ctx, cfg_);  // checks the work-group size first
  // Command buffers for the step's launches: off (NVIDIA's driver offers
  // none, PoCL gains nothing: docs/PERFORMANCE.md, sessions 31-32);
  // EDDY_COMMAND_BUFFERS=1 turns them on where the device offers them.
  batch_ = std::make_unique<LaunchBatch>(ctx);
  batch_->setEnabled(false);
  profiler_.setBatch(batch_.get());
  if (cfg_.neighbourList && (cfg_.listCapacity == 0 || cfg_.listCapacity > 1024))
    throw Error("SPH: neighbour list capacity must be 1..1024");
  for (int a = 0; a < 3; ++a)
    if (!(setup.tank[a] > 0)) throw Error("SPH: tank dimensions must be positive");
  if (!(setup.spacing > 0)) throw Error("SPH: spacing must be positive");
  tank_ = setup.tank;
  expectedSpeed_ = setup.expectedSpeed;
  expectedSpeedGravity_ = setup.expectedSpeedGravity >= 0 ? setup.expectedSpeedGravity : params_.get("gravity");
  spacing_ = setup.spacing;
  builtinProbes_ = setup.probes;
  blowUpSpeed_ = sphBlowUpSpeed(setup, params_.get("gravity"));

  // Derived constants, rounded to float: exactly what the kernels see.
  phys_.spacing = setup.spacing;
  phys_.rho0 = fl(params_.get("rest_density"));
  const double hExact = params_.get("smoothing_ratio") * setup.spacing;
  phys_.h = fl(hExact);
  for (int a = 0; a < 3; ++a)  // as the kernels decide it, in float
    if (float(tank_[a]) < float(phys_.h)) cfg_.thinWalls = true;
  phys_.mass = fl(sphLatticeMass(phys_.rho0, setup.spacing, phys_.h));
  phys_.gradScale = fl(1.0 / sphLatticeGradientNorm(setup.spacing, phys_.h));
  phys_.jacobiOmega = fl(dfsphJacobiOmega(params_.get("smoothing_ratio")));

  // Every size in double / 64 bits against the limits (sphSizes); the
  // estimate covers the pipeline's and the solver's buffers.
  const SphSizes z = sphSizes(n_, tank_, phys_.h, params_, cfg_);
  cap_ = z.cap;
  checkDeviceMemory(ctx.info(), z.totalBytes, z.largestBytes, z.what);

  // Solids: boundary particles at boundary_spacing x dx, boundary_inset x dx
  // below the surface (at the reference support; sphBoundaryInset), SDF
  // grids of cell dx.
  std::vector<SphSolidSamples> solids;
  solids_ = setup.solids;
  meshHashes_.assign(solids_.size(), std::string());
  const SphTankWalls walls{tank_, phys_.h};
  for (size_t k = 0; k < setup.solids.size(); ++k) {
    const SphSolid& so = setup.solids[k];
    if (so.spec.kind == ShapeKind::Mesh) {
      // Hashed as it is read: a restart snapshot records the geometry this
      // run sampled (a file that cannot be read: sampleSolid says why).
      try {
        meshHashes_[k] = fileContentHash(so.spec.file);
      } catch (const Error&) {
      }
      const std::string& saved = k < setup.meshHashes.size() ? setup.meshHashes[k] : std::string();
      if (!saved.empty() && !meshHashes_[k].empty() && meshHashes_[k] != saved)
        throw Error(so.spec.file + ": the mesh file changed since the snapshot was saved (content hash " +
                    meshHashes_[k] + ", the snapshot recorded " + saved +
                    "); restarting with other geometry would not continue the saved run: restore "
                    "the file as it was, or start a new run");
    }
    try {
      solids.push_back(sampleSolid(so, params_.get("boundary_spacing") * setup.spacing, setup.spacing,
                                   sphBoundaryInset(params_, setup.spacing), &walls));
    } catch (const Error& e) {
      // Name the solid: "shape sampling: ... use a larger spacing" alone does not say which.
      const std::string what = e.what(), name = shapeSpecToString(so.spec);
      if (what.find(name) != std::string::npos) throw;
      throw Error((so.body < 0 ? "obstacle " : "body ") + name + ": " + what);
    }
  }
  // The kinematic bodies' fastest points, for the automatic speed of sound
  // (sphFlowSpeed): over the bounds of each one's boundary particles.
  for (const SphSolidSamples& so : solids) {
    if (so.body < 0 || size_t(so.body) >= setup.bodies.size() || so.local.empty()) continue;
    const BodySpec& b = setup.bodies[size_t(so.body)];
    if (b.motion == BodyMotion::Piston && !(b.piston.period > 0)) continue;  // (none: no motion)
    Aabb box{poseApply(so.pose, so.local[0]), poseApply(so.pose, so.local[0])};
    for (const Vec3d& l : so.local) {
      const Vec3d w = poseApply(so.pose, l);
      for (int a = 0; a < 3; ++a) box.lo[a] = std::min(box.lo[a], w[a]), box.hi[a] = std::max(box.hi[a], w[a]);
    }
    bodySpeed_ = std::max(bodySpeed_, kinematicPeakSpeed(b, box));
  }
  particles_ =
      std::make_unique<SphParticles>(ctx, profiler_, setup, cfg_, cap_, phys_.h, solids);
  solver_ = solver(ctx, *particles_, cfg_);
  if (!solver_) throw Error("SPH: the solver factory built no solver");
  // Rigid bodies on their solids' boundary particles (sim/sph/bodies.hpp).
  if (!setup.bodies.empty())
    bodies_ = std::make_unique<SphBodies>(ctx, profiler_, setup, particles_->boundary());
  syncParams();
  refreshDensity();
}

void SphSim::checkFits(const DeviceInfo& info, size_t count, const std::array<double, 3>& tank,
                       double spacing, const Params& params, const SphKernelConfig& cfg) {
  const double h = fl(params.get("smoothing_ratio") * spacing);  // as the constructor derives it
  const SphSizes z = sphSizes(count, tank, h, params, cfg);
  checkDeviceMemory(info, z.totalBytes, z.largestBytes, z.what);
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
    q.enqueueWriteBuffer(particles_->positions(), CL_FALSE, n_ * sizeof(cl_float4), k * sizeof(cl_float4),
                         upload_.pos.data(), nullptr, &upload_.events[0]);
    q.enqueueWriteBuffer(particles_->velocities(), CL_FALSE, n_ * sizeof(cl_float4), k * sizeof(cl_float4),
                         upload_.vel.data(), nullptr, &upload_.events[1]);
    q.enqueueWriteBuffer(particles_->ids(), CL_FALSE, n_ * sizeof(cl_uint), k * sizeof(cl_uint),
                         upload_.ids.data(), nullptr, &upload_.events[2]);
    q.flush();
  } catch (const cl::Error& e) {
    throw Error("SPH drop block: upload failed: " + describe(e));
  }
  n_ += k;
  particles_->grow(k);
  // Density and pressure of the new count (colour fields, diagnostics); the
  // next step recomputes everything else from positions and velocities.
  syncParams();
  refreshDensity();
}

void SphSim::syncParams() {
  if (params_.version() == paramsSeen_) return;
  const double g = params_.get("gravity");
  const double flow = sphFlowSpeed(
      expectedSpeed_, expectedSpeedGravity_, g, bodySpeed_,
      sphCohesionSpeed(params_.get("surface_tension"), phys_.rho0, spacing_, params_.get("smoothing_ratio")));
  const double c0 = sphSoundSpeed(params_.get("speed_of_sound"), flow);
  phys_.c0 = fl(c0);
  phys_.B = fl(phys_.rho0 * c0 * c0 / 7.0);
  phys_.alpha = fl(params_.get("viscosity"));
  phys_.densityDiffusion = fl(params_.get("density_diffusion"));
  // Tait: rho / rho0 = (1 + p / B)^(1/7) at p = rho0 v^2 / 2 = rho0 g H of the tallest water.
  phys_.startDensityCap =
      fl(phys_.rho0 * std::pow(1.0 + 3.5 * expectedSpeed_ * expectedSpeed_ / (c0 * c0), 1.0 / 7.0));
  phys_.gravity = fl(g);
  phys_.gamma = fl(params_.get("surface_tension"));
  phys_.cfl = fl(params_.get("cfl"));
  phys_.maxDt = fl(params_.get("max_dt"));
  phys_.restitution = fl(params_.get("wall_restitution"));
  phys_.boundaryViscosity = fl(params_.get("boundary_viscosity"));
  phys_.velocityCfl = fl(params_.get("velocity_cfl"));
  phys_.minDt = fl(params_.get("min_dt"));
  phys_.densityTolerance = fl(params_.get("density_tolerance"));
  phys_.divergenceTolerance = fl(params_.get("divergence_tolerance"));
  phys_.minIterations = unsigned(params_.get("min_iterations"));
  phys_.divergenceMinIterations = unsigned(params_.get("divergence_min_iterations"));
  phys_.maxIterations = unsigned(params_.get("max_iterations"));
  phys_.chebyshevRho = fl(params_.get("chebyshev_rho"));
  phys_.densityRelaxation = fl(params_.get("density_relaxation"));
  phys_.gradientCorrection = params_.getChoice("gradient_correction") == "packing";
  profiler_.setSampleEvery(uint64_t(params_.get("profile_every")));
  paramsSeen_ = params_.version();
  if (solver_) solver_->settingsChanged(phys_);
}

void SphSim::refreshDensity() {
  particles_->boundary().update(phys_.rho0);
  particles_->update(!solver_->buildsNeighbourList(*particles_));
  solver_->reordered(*particles_, false);
  runDensity();
}

InteractKernels& SphSim::interact() {
  if (!interact_) interact_ = std::make_unique<InteractKernels>(ctx_);
  return *interact_;
}

cl::Event SphSim::writeColorField(size_t index, const cl::Buffer& out) {
  if (index == 0) return interact().speed(particles_->velocities(), out, n_);
  if (index == 1 || index == 2)
    return interact().component2(solver_->densityPressure(), out, n_, unsigned(index - 1));
  return Simulation::writeColorField(index, out);
}

cl::Event SphSim::push(const Ray& ray, float radius, const Vec3f& dv) {
  return interact().push(particles_->positions(), particles_->velocities(), n_, ray, radius, dv);
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
  out.addF64("sph/expected_speed_gravity", expectedSpeedGravity_);
  out.addU64("sph/capacity", cap_);
  if (!solids_.empty()) {
    // The solids as declared (shape specs, JSON): a restart samples them again
    // exactly as this run did (deterministic sampling), so it is bit-identical.
    nlohmann::json j = nlohmann::json::array();
    // A mesh also records its file's content hash: --load refuses a file
    // that changed since (SphSetup::meshHashes).
    for (size_t k = 0; k < solids_.size(); ++k) {
      nlohmann::json o = shapeSpecToJson(solids_[k].spec);
      o["body"] = solids_[k].body;
      if (!meshHashes_[k].empty()) o["file_hash"] = meshHashes_[k];
      j.push_back(o);
    }
    out.addString("sph/solids", j.dump());
  }
  out.addArray("sph/pos", readPositions());
  out.addArray("sph/vel", readVelocities());
  out.addArray("sph/ids", readIds());
  std::vector<cl_float> clk(EDDY_SPH_CLOCK_SIZE);
  std::vector<cl_uint> cnt(EDDY_SPH_NUM_COUNTERS);
  auto& q = ctx_.queue();
  q.enqueueReadBuffer(particles_->clock(), CL_TRUE, 0, clk.size() * sizeof(cl_float), clk.data());
  q.enqueueReadBuffer(particles_->counters(), CL_TRUE, 0, cnt.size() * sizeof(cl_uint), cnt.data());
  out.addArray("sph/clock", clk);
  out.addArray("sph/counters", cnt);
  solver_->saveState(out, n_);
  saveProbes(out);
  if (bodies_) {
    std::string specs = "[";
    for (size_t b = 0; b < bodies_->specs().size(); ++b)
      specs += (b ? "," : "") + bodySpecToJson(bodies_->specs()[b]).dump();
    out.addString("sph/bodies", specs + "]");
    out.addArray("sph/bodies_state", bodies_->kernels().readRaw());
  }
}

// The probes: those this run samples (else the scene's), one spec text
// each ("sph/probes", JSON); with probes running, also their cadence and
// running state (SphProbeState), so that a restart continues their rows.
void SphSim::saveProbes(SnapshotWriter& out) {
  const std::vector<ProbeSpec>& kept = probes_ ? probes_->probes() : builtinProbes_;
  if (kept.empty()) return;
  nlohmann::json j = nlohmann::json::array();
  for (const auto& p : kept) j.push_back(probeSpecText(p));
  out.addString("sph/probes", j.dump());
  if (!probes_) return;
  const SphProbeState st = probes_->state();
  out.addU64("sph/probe_every", st.cadence.every);
  out.addF64("sph/probe_dt", st.cadence.dt);
  out.addU64("sph/probe_next", st.next);
  out.addArray("sph/probe_windows", st.windows);
}

// The blobs of saveProbes() (absent in snapshots of runs without probes and
// in those written before session 22).
static void decodeSphProbes(const Snapshot& snap, SphState& s) {
  if (!snap.has("sph/probes")) return;
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(snap.string("sph/probes"));
  } catch (const nlohmann::json::exception&) {
    snap.fail("sph/probes is not valid JSON");
  }
  if (!j.is_array() || j.empty()) snap.fail("sph/probes is not a non-empty JSON array");
  for (size_t k = 0; k < j.size(); ++k) {
    if (!j[k].is_string()) snap.fail("probe " + std::to_string(k) + " is not a probe spec text");
    try {
      s.setup.probes.push_back(parseProbeSpec(j[k].get<std::string>()));
    } catch (const Error& e) {
      snap.fail("probe " + std::to_string(k) + ": " + e.what());
    }
  }
  try {
    checkProbeNames(s.setup.probes);
    checkProbesInside(s.setup.probes, s.setup.tank.data());
  } catch (const Error& e) {
    snap.fail(std::string("probes: ") + e.what());
  }
  if (!snap.has("sph/probe_windows")) return;  // kept probes, not sampled
  SphProbeState st;
  st.probes = s.setup.probes;
  st.cadence.every = snap.u64("sph/probe_every");
  st.cadence.dt = snap.f64("sph/probe_dt");
  // Within what --probe-every / --probe-dt accept: every 1 .. 2^40 steps
  // (kept, unused, when dt is set), dt 0 (by steps) or at least kMinProbeDt
  // (a crafted -5, i.e. 2^64 - 5, sampled nothing and said nothing).
  const bool everyOk = st.cadence.every >= kLimitEvery.min && st.cadence.every <= kLimitEvery.max;
  const bool dtOk = st.cadence.dt == 0 || (std::isfinite(st.cadence.dt) && st.cadence.dt >= kMinProbeDt);
  if (!everyOk || !dtOk)
    snap.fail("the probes' cadence (every " + std::to_string(st.cadence.every) + " steps, dt " +
              formatNumber(st.cadence.dt) + " s) is not a cadence: every 1.." + std::to_string(kLimitEvery.max) +
              " steps, dt 0 (by steps) or at least " + formatNumber(kMinProbeDt) + " s");
  const uint64_t next = snap.u64("sph/probe_next");
  if (next > 0xffffffffu) snap.fail("the probes' next sample index " + std::to_string(next) + " is too large");
  st.next = cl_uint(next);
  st.windows = snap.array<cl_float2>("sph/probe_windows", st.probes.size());
  for (const auto& w : st.windows)
    if (!std::isfinite(w.s[0]) || !std::isfinite(w.s[1]) || w.s[1] < 0)
      snap.fail("a probe's running window is not finite (or its duration is negative)");
  s.probes = std::move(st);
}

void SphSim::restoreState(const SphState& st) {
  if (st.pos.size() != n_ || st.vel.size() != n_ || st.ids.size() != n_ ||
      st.clock.size() != EDDY_SPH_CLOCK_SIZE || st.counters.size() != EDDY_SPH_NUM_COUNTERS)
    throw Error("SPH restore: the state does not match the simulation's size");
  try {
    auto& q = ctx_.queue();
    q.finish();
    writeState(st.pos, st.vel);
    q.enqueueWriteBuffer(particles_->ids(), CL_TRUE, 0, n_ * sizeof(cl_uint), st.ids.data());
    q.enqueueWriteBuffer(particles_->clock(), CL_TRUE, 0, st.clock.size() * sizeof(cl_float), st.clock.data());
    q.enqueueWriteBuffer(particles_->counters(), CL_TRUE, 0, st.counters.size() * sizeof(cl_uint),
                         st.counters.data());
    solver_->restoreState(st);
    keptProbes_ = st.probes;
    if (bodies_) {
      if (st.bodies.size() != bodies_->size() * EDDY_BODY_STRIDE)
        throw Error("SPH restore: the snapshot's body state does not match the bodies");
      bodies_->kernels().writeRaw(st.bodies);
      bodies_->place();
    }
  } catch (const cl::Error& e) {
    throw Error("SPH restore: " + describe(e));
  }
  syncTime();
}

// The solids and bodies of a snapshot ("sph/solids", "sph/bodies",
// "sph/bodies_state"): into s.setup.solids / meshHashes / bodies and s.bodies.
static void decodeSphSolids(const Snapshot& snap, SphState& s) {
  if (snap.has("sph/solids")) {
    nlohmann::json j;
    try {
      j = nlohmann::json::parse(snap.string("sph/solids"));
    } catch (const nlohmann::json::exception&) {
      snap.fail("sph/solids is not valid JSON");
    }
    if (!j.is_array()) snap.fail("sph/solids is not a JSON array");
    for (size_t k = 0; k < j.size(); ++k) {
      SphSolid so;
      std::string hash;  // a mesh's (older snapshots: none, not checked)
      try {
        so.spec = shapeSpecFromJson(j[k], "snapshot solid " + std::to_string(k), {}, {"body", "file_hash"});
        so.body = j[k].contains("body") ? j[k]["body"].get<int>() : -1;
        if (j[k].contains("file_hash")) hash = j[k]["file_hash"].get<std::string>();
      } catch (const Error& e) {
        snap.fail(e.what());  // "snapshot solid K: key ...: ..."
      } catch (const std::exception& e) {
        snap.fail(std::string("snapshot solid ") + std::to_string(k) + ": " + e.what());
      }
      if (j[k].contains("file_hash") &&
          (so.spec.kind != ShapeKind::Mesh || !isFileContentHash(hash)))
        snap.fail("solid " + std::to_string(k) + ": file_hash '" + hash +
                  "' is not a mesh file's content hash (fnv1a64: and 16 hex digits)");
      s.setup.solids.push_back(so);
      s.setup.meshHashes.push_back(hash);
    }
  }
  if (snap.has("sph/bodies")) {
    nlohmann::json specs;
    try {
      specs = nlohmann::json::parse(snap.string("sph/bodies"));
    } catch (const nlohmann::json::exception& e) {
      snap.fail(std::string("the bodies are not valid JSON: ") + e.what());
    }
    if (!specs.is_array()) snap.fail("the bodies are not a JSON array");
    std::vector<BodySpec> bodies;
    try {
      for (size_t b = 0; b < specs.size(); ++b)
        bodies.push_back(bodySpecFromSnapshotJson(specs[b], "body " + std::to_string(b)));
    } catch (const Error& e) {
      snap.fail(e.what());
    }
    s.bodies = snap.array<cl_float4>("sph/bodies_state", bodies.size() * EDDY_BODY_STRIDE);
    for (const auto& v : s.bodies)
      for (int k = 0; k < 4; ++k)
        if (!std::isfinite(v.s[k])) snap.fail("the body state is not finite");
    // The bodies' solids follow the static ones (unless the solids were saved too).
    bool saved = false;
    for (const auto& so : s.setup.solids) saved = saved || so.body >= 0;
    if (saved) s.setup.bodies = bodies;
    else addSphBodies(s.setup, bodies, false, 0);
  }
  // Solids that are bodies need the bodies' state (a snapshot without it,
  // cut or crafted, would have turned them into static obstacles).
  for (size_t k = 0; k < s.setup.solids.size(); ++k)
    if (s.setup.solids[k].body >= 0 && !snap.has("sph/bodies"))
      snap.fail("solid " + std::to_string(k) + " is rigid body " + std::to_string(s.setup.solids[k].body) +
                ", but the snapshot holds no bodies (sph/bodies)");
}

std::vector<std::string> sphSnapshotMeshFiles(const Snapshot& snap) {
  SphState s;
  decodeSphSolids(snap, s);  // the solids only: no particle is decoded for this
  std::vector<std::string> files;
  for (const SphSolid& so : s.setup.solids)  // the bodies' shapes are solids too
    if (so.spec.kind == ShapeKind::Mesh) files.push_back(so.spec.file);
  return files;
}

SphState decodeSphState(const Snapshot& snap, size_t count) {
  if (count == 0 || count > 0x7fffffffu)
    snap.fail("particle count " + std::to_string(count) + " is outside [1, 2^31 - 1]");
  SphState s;
  s.setup.tank = {snap.f64("sph/tank_x"), snap.f64("sph/tank_y"), snap.f64("sph/tank_z")};
  s.setup.spacing = snap.f64("sph/spacing");
  s.setup.expectedSpeed = snap.f64("sph/expected_speed");
  // (older snapshots: the saved parameters' gravity, SphSetup)
  if (snap.has("sph/expected_speed_gravity")) {
    s.setup.expectedSpeedGravity = snap.f64("sph/expected_speed_gravity");
    if (!std::isfinite(s.setup.expectedSpeedGravity) || s.setup.expectedSpeedGravity < 0)
      snap.fail("SPH expected speed's gravity must be finite and >= 0");
  }
  for (double v : {s.setup.tank[0], s.setup.tank[1], s.setup.tank[2], s.setup.spacing})
    if (!std::isfinite(v) || !(v > 0)) snap.fail("SPH tank and spacing must be finite and > 0");
  if (!std::isfinite(s.setup.expectedSpeed) || s.setup.expectedSpeed < 0)
    snap.fail("SPH expected speed must be finite and >= 0");
  s.pos = snap.array<cl_float4>("sph/pos", count);
  s.vel = snap.array<cl_float4>("sph/vel", count);
  s.ids = snap.array<cl_uint>("sph/ids", count);
  s.clock = snap.array<cl_float>("sph/clock", EDDY_SPH_CLOCK_SIZE);
  // Snapshots from before the non-finite counter hold one counter fewer (0).
  if (snap.blob("sph/counters").size() == EDDY_SPH_NUM_COUNTERS_V1 * sizeof(cl_uint)) {
    s.counters = snap.array<cl_uint>("sph/counters", EDDY_SPH_NUM_COUNTERS_V1);
    s.counters.resize(EDDY_SPH_NUM_COUNTERS, 0u);
  } else {
    s.counters = snap.array<cl_uint>("sph/counters", EDDY_SPH_NUM_COUNTERS);
  }
  if (snap.has("sph/dfsph_kdiv") || snap.has("sph/dfsph_kden")) {
    s.kdiv = snap.array<cl_float>("sph/dfsph_kdiv", count);
    s.kden = snap.array<cl_float>("sph/dfsph_kden", count);
    s.dfsphState = snap.array<cl_uint>("sph/dfsph_state", EDDY_DFSPH_STATE_SIZE);
    if (snap.has("sph/dfsph_gradient")) {  // written since session 12
      s.dfsphGradient = snap.array<cl_float>("sph/dfsph_gradient", 6);
      for (int k = 0; k < 6; ++k)
        if (!(std::fabs(double(s.dfsphGradient[k]) - (k < 3 ? 1.0 : 0.0)) <=
              double(EDDY_DFSPH_GRAD_LIMIT)))
          snap.fail("the DFSPH gradient renormalisation entry " + std::to_string(k) + " (" +
                    formatNumber(s.dfsphGradient[k]) + ") is not finite or more than " +
                    formatNumber(EDDY_DFSPH_GRAD_LIMIT) + " off the identity");
    }
    for (size_t i = 0; i < count; ++i)
      if (!std::isfinite(s.kdiv[i]) || !std::isfinite(s.kden[i]))
        snap.fail("the DFSPH pressure of particle " + std::to_string(i) + " is not finite");
  }
  decodeSphSolids(snap, s);
  if (snap.has("sph/wcsph_rho")) {
    s.rho = snap.array<cl_float>("sph/wcsph_rho", count);
    for (size_t i = 0; i < count; ++i)
      if (!std::isfinite(s.rho[i]) || !(s.rho[i] > 0))
        snap.fail("the WCSPH density of particle " + std::to_string(i) +
                  " is not finite and positive");
    s.rhoPending = snap.has("sph/wcsph_rho_pending") && snap.u64("sph/wcsph_rho_pending") != 0;
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
  // The device clock is the run's time (SphSim::syncTime): it must be the
  // time the header states (saveSnapshot writes it from this clock), and
  // neither it nor the last dt can be negative (a crafted -1 loaded and ran
  // "at t = -0.999766" although eddy/time = -1 is refused).
  const double clockTime = double(s.clock[EDDY_SPH_CLOCK_T_HI]) + double(s.clock[EDDY_SPH_CLOCK_T_LO]);
  const double headerTime = snap.has("eddy/time") ? snap.f64("eddy/time") : clockTime;
  if (!(clockTime >= 0) || !(s.clock[EDDY_SPH_CLOCK_DT] >= 0) ||
      std::fabs(clockTime - headerTime) > 1e-9 * std::max(1.0, std::fabs(headerTime)))
    snap.fail("the SPH clock (t = " + formatNumber(clockTime) + " s, dt " +
              formatNumber(s.clock[EDDY_SPH_CLOCK_DT]) + " s) is not the snapshot's time (" +
              formatNumber(headerTime) + " s) or is negative");
  decodeSphProbes(snap, s);
  return s;
}

void SphSim::collectClock() {
  if (clockPending_ &&
      clockRead_.getInfo<CL_EVENT_COMMAND_EXECUTION_STATUS>() == CL_COMPLETE) {
    time_ = double(clockHost_[EDDY_SPH_CLOCK_T_HI]) + double(clockHost_[EDDY_SPH_CLOCK_T_LO]);
    lastDt_ = double(clockHost_[EDDY_SPH_CLOCK_DT]);
    clockStep_ = clockReadStep_;
    clockPending_ = false;
  }
}

ClockSample SphSim::clockSample() {
  collectClock();
  return {clockStep_, time_, lastDt_};
}

void SphSim::pollClock() {
  collectClock();
  if (!clockPending_ && steps_ >= clockReadStep_ + 8) {
    clockReadStep_ = steps_;
    try {
      ctx_.queue().enqueueReadBuffer(particles_->clock(), CL_FALSE, 0, sizeof(clockHost_), clockHost_.data(),
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
  particles_->boundary().update(phys_.rho0);
  // From here to the guard the profiler's launches are batched into command
  // buffers where enabled (launch_batch.hpp); a read, a poll or any other
  // use of ctx_.queue() in between hands them to the queue first.
  LaunchBatch::Scope batch(batch_.get());
  particles_->update(!solver_->buildsNeighbourList(*particles_));
  solver_->reordered(*particles_, true);
  solver_->step(*particles_, phys_);
  // No fluid inside a solid (none: no launch).
  particles_->boundary().runGuard(particles_->positions(), particles_->velocities(),
                                  particles_->counters(), particles_->clock(), n_,
                                  kSolidClearance * phys_.spacing, particles_->tank(),
                                  solver_->wallClearance(phys_.spacing));
  batch.close();
  // The bodies move on the fluid's force (bforce of this step) and carry
  // their boundary particles along (sim/sph/bodies.hpp).
  if (bodies_) bodies_->step(*particles_, phys_.gravity);
  ++steps_;
  if (probes_) probes_->afterStep(*particles_, solver_->densityPressure(), phys_.h, phys_.mass, steps_);
  profiler_.endStep();
  throttle();
}

std::string SphSim::blowUpSpeedBasis() const {
  std::ostringstream o;
  o << " m/s, " << kBlowUpSpeedFactor
    << " times the fastest the scene can make them (gravity over the tank's height, its moving "
       "bodies, its initial velocities)";
  return o.str();
}

std::optional<ProbeCadence> SphSim::keptProbeCadence() const {
  if (!keptProbes_) return std::nullopt;
  return keptProbes_->cadence;
}

void SphSim::startProbes(const std::vector<ProbeSpec>& probes, const ProbeCadence& cadence,
                         ProbeSink sink) {
  probes_.reset();
  // A restored run at the saved run's cadence goes on with its probes' rows:
  // no row of the restored state (the uninterrupted run wrote none there, or
  // wrote it before the snapshot), the open windows continued.
  std::optional<SphProbeState> kept = std::exchange(keptProbes_, std::nullopt);
  if (kept && !sameProbeCadence(kept->cadence, cadence)) kept.reset();
  if (probes.empty()) return;
  probes_ = std::make_unique<SphProbes>(ctx_, cfg_, probes, cadence, std::move(sink), spacing_,
                                        tank_[1]);
  if (kept) {
    probes_->continueFrom(*kept);
    return;
  }
  // The first sample: density and pressure of the current positions.
  syncParams();
  refreshDensity();
  probes_->afterStep(*particles_, solver_->densityPressure(), phys_.h, phys_.mass, steps_, true);
}

void SphSim::flushProbes() {
  if (probes_) probes_->flush();
}

template <class T>
static std::vector<T> readBuf(cl::CommandQueue& q, const cl::Buffer& b, size_t n) {
  std::vector<T> out(n);
  if (n) q.enqueueReadBuffer(b, CL_TRUE, 0, n * sizeof(T), out.data());
  return out;
}

std::vector<cl_float4> SphSim::readPositions() { return readBuf<cl_float4>(ctx_.queue(), particles_->positions(), n_); }
std::vector<cl_float4> SphSim::readVelocities() { return readBuf<cl_float4>(ctx_.queue(), particles_->velocities(), n_); }
std::vector<cl_float4> SphSim::readAccelerations() { return readBuf<cl_float4>(ctx_.queue(), solver_->accelerations(), n_); }
std::vector<cl_float2> SphSim::readDensityPressure() { return readBuf<cl_float2>(ctx_.queue(), solver_->densityPressure(), n_); }
std::vector<cl_uint> SphSim::readKeys() { return readBuf<cl_uint>(ctx_.queue(), particles_->keys(), n_); }
std::vector<cl_uint> SphSim::readOrder() { return readBuf<cl_uint>(ctx_.queue(), particles_->order(), n_); }
std::vector<cl_uint> SphSim::readIds() { return readBuf<cl_uint>(ctx_.queue(), particles_->ids(), n_); }
std::vector<cl_uint> SphSim::readCells() { return readBuf<cl_uint>(ctx_.queue(), particles_->cells(), 2 * numCells()); }
std::vector<cl_uint> SphSim::readNeighbourCounts() { return readBuf<cl_uint>(ctx_.queue(), particles_->neighbourCounts(), n_); }
std::vector<cl_uint> SphSim::readNeighbourList() {
  if (!cfg_.neighbourList) return {};
  return readBuf<cl_uint>(ctx_.queue(), particles_->neighbourList(),
                         n_ * EDDY_SPH_LIST_ROUNDUP(cfg_.listCapacity));
}

SphCounters SphSim::readCounters() {
  const auto c = readBuf<cl_uint>(ctx_.queue(), particles_->counters(), EDDY_SPH_NUM_COUNTERS);
  SphCounters s;
  s.escaped = c[EDDY_SPH_CNT_ESCAPED];
  s.outOfGrid = c[EDDY_SPH_CNT_OUT_OF_GRID];
  s.overflow = c[EDDY_SPH_CNT_OVERFLOW];
  s.penetrations = c[EDDY_SPH_CNT_PENETRATIONS];
  return s;
}

std::array<double, 2> SphSim::readClock() {
  const auto c = readBuf<cl_float>(ctx_.queue(), particles_->clock(), EDDY_SPH_CLOCK_SIZE);
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
  clockStep_ = steps_;
  return time_;
}

void SphSim::writeState(const std::vector<cl_float4>& pos, const std::vector<cl_float4>& vel) {
  if (pos.size() != n_ || vel.size() != n_) throw Error("SPH writeState: wrong particle count");
  auto& q = ctx_.queue();
  q.enqueueWriteBuffer(particles_->positions(), CL_TRUE, 0, n_ * sizeof(cl_float4), pos.data());
  q.enqueueWriteBuffer(particles_->velocities(), CL_TRUE, 0, n_ * sizeof(cl_float4), vel.data());
}

void SphSim::writeAccelerations(const std::vector<cl_float4>& acc) {
  if (acc.size() != n_) throw Error("SPH writeAccelerations: wrong particle count");
  ctx_.queue().enqueueWriteBuffer(solver_->accelerations(), CL_TRUE, 0, n_ * sizeof(cl_float4), acc.data());
}

void SphSim::writeDt(float dt) {
  ctx_.queue().enqueueWriteBuffer(particles_->clock(), CL_TRUE, EDDY_SPH_CLOCK_DT * sizeof(cl_float),
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
  if (!solver_->solveStats(d.solve)) {
    // An explicit solver: the measured average compression, as DFSPH's error.
    d.solve.densityError = measuredDensityError(rp);
    d.solve.densityResidual = d.solve.densityError;
  }
  return d;
}

double SphSim::measuredDensityError(const std::vector<cl_float2>& rp) const {
  double e = 0;
  for (size_t i = 0; i < n_ && i < rp.size(); ++i) e += std::max(0.0, double(rp[i].s[0]) - phys_.rho0);
  return n_ ? 100.0 * e / (double(n_) * phys_.rho0) : 0.0;
}

std::vector<std::string> SphSim::solverStatus(bool mayRead) {
  char line[160];
  std::vector<std::string> out;
  SphSolveStats s;
  if (solver_->polledSolveStats(s)) {
    std::snprintf(line, sizeof line, "density solve: %u iterations, error %.3f %% (tol. %g)",
                  s.densityIterations, s.densityError, params_.get("density_tolerance"));
    out.emplace_back(line);
    std::snprintf(line, sizeof line, "divergence solve: %u iterations, error %.3f %% (tol. %g)",
                  s.divergenceIterations, s.divergenceError, params_.get("divergence_tolerance"));
    out.emplace_back(line);
  } else if (mayRead) {
    std::snprintf(line, sizeof line, "explicit (0 iterations), density error %.3f %%",
                  measuredDensityError(readDensityPressure()));
    out.emplace_back(line);
  }
  return out;
}

std::vector<std::string> SphSim::diagColumns() const {
  return {"step",      "time",    "dt",
          "kinetic",   "max_speed", "front_x",
          "back_height", "escaped", "potential",
          "max_density_ratio", "mean_neighbours", "overflow",
          "density_iterations", "divergence_iterations", "density_error", "divergence_error",
          "penetrations", "density_residual"};
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
          double(d.solve.densityIterations),
          double(d.solve.divergenceIterations),
          d.solve.densityError,
          d.solve.divergenceError,
          double(d.counters.penetrations),
          d.solve.densityResidual};
}

std::vector<std::string> SphSim::runWarnings(const std::vector<double>& lastRow) const {
  // Never silent: particles that had to be put back into the tank, list
  // entries dropped, a fluid squeezed far beyond what its solver aims at
  // (with WCSPH: a speed of sound too low for a flow faster than any speed
  // sphFlowSpeed knows of).
  const auto columns = diagColumns();
  std::vector<std::string> out;
  for (size_t i = 0; i < columns.size() && i < lastRow.size(); ++i)
    if ((columns[i] == "escaped" || columns[i] == "overflow" || columns[i] == "penetrations") &&
        lastRow[i] > 0) {
      std::ostringstream o;
      o << columns[i] << " = " << lastRow[i]
        << (columns[i] == "escaped"
                ? " (particle-steps found outside the tank or non-finite and put back)"
            : columns[i] == "overflow"
                ? " (neighbour-list entries beyond the capacity were dropped)"
                : " (particle-steps found inside a solid and put back outside)");
      out.push_back(o.str());
    }
  const size_t e = size_t(std::find(columns.begin(), columns.end(), "density_error") - columns.begin());
  if (e < lastRow.size() && lastRow[e] > kSphCompressionWarningPercent) {
    std::ostringstream o;
    o.precision(3);
    o << "density_error = " << lastRow[e] << " % (the fluid is squeezed by " << lastRow[e] << " % on average; "
      << solver_->compressionAdvice(phys_, params_) << ")";
    out.push_back(o.str());
  }
  return out;
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

std::vector<std::string> SphSim::objectColumns() const {
  if (!bodies_) return {};
  return {"body", "x", "y", "z", "qw", "qx", "qy", "qz", "vx", "vy", "vz"};
}

std::vector<std::vector<double>> SphSim::objectRows() {
  std::vector<std::vector<double>> rows;
  if (!bodies_) return rows;
  const auto st = bodies_->read();
  for (size_t b = 0; b < st.size(); ++b) {
    const auto& s = st[b];
    rows.push_back({double(b), s.position[0], s.position[1], s.position[2], s.orientation[3],
                    s.orientation[0], s.orientation[1], s.orientation[2], s.velocity[0],
                    s.velocity[1], s.velocity[2]});
  }
  return rows;
}

}  // namespace eddy
