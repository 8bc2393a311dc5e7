// Every SPH kernel against a CPU reference on the same inputs (random
// particles from a fresh seed, awkward counts), and the smoothing kernel's
// mathematical properties.
#include "eddy_shared.h"
#include "sph.hpp"
#include "sph_run_cases.hpp"
#include "reference/sph_reference.hpp"
#include "wcsph.hpp"
#include "test_util.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>
#include <random>
#include <set>
#include <tuple>

using namespace eddy;

namespace {

const double kDx = 0.01;  // spacing -> h = 0.02 m (smoothing_ratio 2)

// n random particles in a tank sized for about 30 neighbours within h, a few
// of them on walls and in corners (wall images in every combination).
// thin: the tank is 0.8 h deep in z (a slab thinner than h: two layers or fewer), so that most
// particles are within h of both z walls and take images across both.
SphSetup randomSetup(size_t n, unsigned seed, bool thin = false) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(0, 1);
  const double h = 2 * kDx, sphere = 4.0 / 3.0 * M_PI * h * h * h;
  const double volume = std::max(double(n) * sphere / 30.0, 8 * h * h * h);
  const double side = std::cbrt(volume / 0.5);  // L x 0.8L x 0.625L
  SphSetup s;
  s.spacing = kDx;
  s.tank = {side, 0.8 * side, 0.625 * side};
  if (thin) {
    const double x = std::sqrt(volume / 0.5 / (0.8 * h) / 0.8);
    s.tank = {x, 0.8 * x, 0.8 * h};
  }
  s.expectedSpeed = 1.0;
  for (size_t i = 0; i < n; ++i) {
    SphParticle p;
    p.x = u(rng) * s.tank[0];
    p.y = u(rng) * s.tank[1];
    p.z = u(rng) * s.tank[2];
    if (i % 17 == 3) p.x = 0.0;                               // on a wall
    if (i % 23 == 5) { p.x = s.tank[0]; p.y = 0.3 * h; }      // edge
    if (i % 29 == 7) { p.x = 0.2 * h; p.y = 0.1 * h; p.z = s.tank[2] - 0.5 * h; }  // corner
    p.vx = u(rng) - 0.5;
    p.vy = u(rng) - 0.5;
    p.vz = u(rng) - 0.5;
    s.particles.push_back(p);
  }
  return s;
}

Params physicsParams() {
  Params p(sphParamDecl());
  p.set("viscosity", 0.3);
  p.set("surface_tension", 0.2);
  p.set("speed_of_sound", 20.0);
  return p;
}

const std::vector<size_t> kSizes = {1, 13, 127, 1000, 2003};

std::vector<cl_float4> toF4(const SphSetup& s, bool vel) {
  std::vector<cl_float4> out;
  for (const auto& p : s.particles) {
    cl_float4 v;
    v.s[0] = float(vel ? p.vx : p.x);
    v.s[1] = float(vel ? p.vy : p.y);
    v.s[2] = float(vel ? p.vz : p.z);
    v.s[3] = 0;
    out.push_back(v);
  }
  return out;
}

// Keys of positions as the hash kernel computes them (float multiply, floor).
std::vector<cl_uint> cpuKeys(const std::vector<cl_float4>& pos, const SphSim& sim) {
  const float inv = float(1.0 / sim.cellSize());
  const auto d = sim.gridDims();
  std::vector<cl_uint> keys;
  for (const auto& p : pos) {
    int c[3];
    for (int a = 0; a < 3; ++a)
      c[a] = std::clamp(int(std::floor(p.s[a] * inv)), 0, d[a] - 1);
    keys.push_back(cl_uint(c[0] + d[0] * (c[1] + d[1] * c[2])));
  }
  return keys;
}

}  // namespace

TEST(SphKernelFunction, NormalisedAndDerivativeMatchesFiniteDifferences) {
  for (double h : {0.02, 1.0, 3.7}) {
    // 4 pi int_0^h W r^2 dr by Simpson's rule (W is a polynomial in r: exact to rounding).
    const int m = 2000;
    double I = 0;
    for (int k = 0; k <= m; ++k) {
      const double r = h * k / m, w = (k == 0 || k == m) ? 1 : (k % 2 ? 4 : 2);
      I += w * sphKernelW(r, h) * r * r;
    }
    I *= 4 * M_PI * h / m / 3;
    EXPECT_NEAR(I, 1.0, 1e-9) << "h = " << h;
    double maxErr = 0, scale = 0;
    for (int k = 1; k < 100; ++k) {
      const double r = h * k / 100.0, e = 1e-6 * h;
      const double fd = (sphKernelW(r + e, h) - sphKernelW(r - e, h)) / (2 * e);
      maxErr = std::max(maxErr, std::fabs(fd - sphKernelDW(r, h)));
      scale = std::max(scale, std::fabs(sphKernelDW(r, h)));
    }
    EXPECT_LT(maxErr / scale, 1e-7) << "h = " << h;
    EXPECT_EQ(sphKernelW(h, h), 0.0);
    EXPECT_EQ(sphKernelDW(h, h), 0.0);
    EXPECT_EQ(sphKernelDW(0, h), 0.0);  // smooth at the origin: no self force
    EXPECT_GT(sphKernelW(0, h), sphKernelW(0.5 * h, h));
  }
}

TEST(SphKernelFunction, GradientIsAntisymmetricOnTheDevice) {
  // Two particles far from every wall, no gravity: a_1 = -a_2 exactly as the
  // kernel evaluates both sides (pair terms are antisymmetric in (i, j)).
  std::mt19937_64 rng(test::freshSeed());
  std::uniform_real_distribution<double> u(-1, 1);
  for (int trial = 0; trial < 20; ++trial) {
    SphSetup s;
    s.spacing = kDx;
    s.tank = {1, 1, 1};
    s.expectedSpeed = 1;
    SphParticle a, b;
    a.x = a.y = a.z = 0.5;
    b.x = 0.5 + 0.011 * u(rng);
    b.y = 0.5 + 0.011 * u(rng);
    b.z = 0.5 + 0.011 * u(rng);
    a.vx = u(rng); b.vy = u(rng);
    s.particles = {a, b};
    Params p = physicsParams();
    p.set("gravity", 0);
    SphSim sim(test::context(), p, s);
    sim.runForces();
    const auto acc = sim.readAccelerations();
    for (int k = 0; k < 3; ++k)
      EXPECT_NEAR(acc[0].s[k], -acc[1].s[k], 1e-6 * (std::fabs(acc[0].s[k]) + 1e-12));
  }
}

namespace {

// hash -> sort -> reorder -> cells of the positions `pos` against the CPU:
// the keys, the stable order, the permuted particles and the cell table.
void checkHashSortReorderCells(SphSim& sim, const std::vector<cl_float4>& pos,
                               const std::vector<cl_float4>& vel) {
  const size_t n = pos.size();
  sim.writeState(pos, vel);
  sim.runHash();
  const auto keys = sim.readKeys();
  const auto order0 = sim.readOrder();
  const auto expectKeys = cpuKeys(pos, sim);
  ASSERT_EQ(keys, expectKeys);
  for (size_t i = 0; i < n; ++i) ASSERT_EQ(order0[i], i);
  EXPECT_LE(sim.numCells(), size_t(1) << sim.keyBits());
  EXPECT_GT(sim.numCells(), size_t(1) << (sim.keyBits() - 1));

  sim.runSort();
  const auto sorted = sim.readKeys(), order = sim.readOrder();
  std::vector<cl_uint> perm(n);
  std::iota(perm.begin(), perm.end(), 0u);
  std::stable_sort(perm.begin(), perm.end(), [&](cl_uint a, cl_uint b) { return keys[a] < keys[b]; });
  ASSERT_EQ(order, perm) << "sort order or stability";
  for (size_t i = 0; i < n; ++i) ASSERT_EQ(sorted[i], keys[perm[i]]);

  const auto idsBefore = sim.readIds();
  sim.runReorder();
  const auto p2 = sim.readPositions(), v2 = sim.readVelocities();
  const auto ids = sim.readIds();
  for (size_t i = 0; i < n; ++i) {
    for (int k = 0; k < 4; ++k) {
      ASSERT_EQ(p2[i].s[k], pos[perm[i]].s[k]);
      ASSERT_EQ(v2[i].s[k], vel[perm[i]].s[k]);
    }
    ASSERT_EQ(ids[i], idsBefore[perm[i]]);
  }

  sim.runCells();
  const auto cells = sim.readCells();
  std::vector<cl_uint> expect(2 * sim.numCells());
  for (size_t c = 0; c < sim.numCells(); ++c) {
    expect[2 * c] = EDDY_SPH_EMPTY_CELL;
    expect[2 * c + 1] = 0;
  }
  for (size_t i = 0; i < n; ++i) {
    const cl_uint k = sorted[i];
    if (expect[2 * k] == EDDY_SPH_EMPTY_CELL) expect[2 * k] = cl_uint(i);
    expect[2 * k + 1] = cl_uint(i + 1);
  }
  ASSERT_EQ(cells, expect);
}

}  // namespace

// Both sorts of the pipeline (SphParticles::runSort): the radix or bitonic
// sort with the cell kernels, and the counting sort that builds the table.
// Each sim sorts twice (the counting sort's counts must be back to zero), and
// a hash without its sort must not spoil the next one.
TEST(SphKernels, HashSortReorderCellsMatchTheCpu) {
  const unsigned seed = test::freshSeed();
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(0, 1);
  std::vector<std::pair<std::string, SphSetup>> cases;
  for (size_t n : kSizes) cases.emplace_back("random", randomSetup(n, seed + unsigned(n)));
  // Few particles in a large tank: 562 500 cells, 275 tiles of the counting sort.
  SphSetup sparse = randomSetup(2003, seed + 7);
  sparse.tank = {3.0, 1.5, 1.0};
  for (auto& p : sparse.particles) {
    p.x = u(rng) * sparse.tank[0];
    p.y = u(rng) * sparse.tank[1];
    p.z = u(rng) * sparse.tank[2];
  }
  cases.emplace_back("sparse", sparse);
  // Half of the particles crowded into one cell, some on the same point.
  SphSetup crowded = randomSetup(1021, seed + 11);
  for (size_t i = 0; i < crowded.particles.size(); i += 2) {
    auto& p = crowded.particles[i];
    p.x = 0.031 + (i % 3 ? 0.004 * u(rng) : 0.0);
    p.y = 0.027 + (i % 3 ? 0.004 * u(rng) : 0.0);
    p.z = 0.045 + (i % 3 ? 0.004 * u(rng) : 0.0);
  }
  cases.emplace_back("crowded", crowded);
  for (int counting : {0, 1})
    for (const auto& [name, s] : cases) {
      const size_t n = s.particles.size();
      SCOPED_TRACE(name + ", n = " + std::to_string(n) + ", counting sort " + std::to_string(counting) +
                   ", seed " + std::to_string(seed));
      SphSim sim(test::context(), physicsParams(), s);
      sim.particles().setCountingSort(counting);
      ASSERT_EQ(sim.particles().countingSort(), counting == 1);
      auto pos = toF4(s, false);
      const auto vel = toF4(s, true);
      checkHashSortReorderCells(sim, pos, vel);
      if (HasFatalFailure()) return;
      // Moved particles, a hash that is not sorted, then the whole pipeline.
      std::shuffle(pos.begin(), pos.end(), rng);
      sim.writeState(pos, vel);
      sim.runHash();
      for (size_t i = 0; i < n; i += 3) pos[i].s[0] = float(u(rng) * s.tank[0]);
      checkHashSortReorderCells(sim, pos, vel);
      if (HasFatalFailure()) return;
    }
}

// The list of the "neighbours" phase, and the list the first density kernel
// builds instead (fused list, kernels/sph/sph_common.cl): sph_density
// (density_diffusion 0) and sph_continuity (0.1, after the summation start
// that must not count its overflow).
// The list grows with the support: 1.5 times the lattice's sites within
// h/dx (self included), at least 96. A fixed 96 overflowed at 3.0 (93 sites
// on the lattice), and DFSPH, missing neighbours, blew up.
TEST(SphKernels, ListCapacityFollowsTheSmoothingRatio) {
  EXPECT_EQ(sphAutoListCapacity(2.0), 96u);
  EXPECT_EQ(sphAutoListCapacity(2.2), 96u);   // the default: 33 sites
  EXPECT_EQ(sphAutoListCapacity(2.6), 122u);  // 81 sites
  EXPECT_EQ(sphAutoListCapacity(3.0), 140u);  // 93 sites
  EXPECT_EQ(sphAutoListCapacity(4.0), 377u);  // 251 sites
  // A WCSPH still tank at 3.0 (the helper's case): no entry dropped (65 706
  // with 96 entries), still, the list as said.
  Params p(sphParamDecl());
  p.set("smoothing_ratio", 3.0);
  test::stillTank(p, 0.01, 0.2, 0.2, 0.3);
  SphSim sim(test::context(), p, makeSphScene("dam_break", p));
  EXPECT_EQ(sim.kernelConfig().listCapacity, 140u);
  for (int k = 0; k < 60; ++k) sim.step();
  const auto d = sim.diagnostics();
  EXPECT_EQ(d.counters.overflow, 0u);
  EXPECT_LT(d.maxSpeed, 0.1) << "a still tank";
  // Below 2 the lattice holds too few neighbours for the pressure: refused.
  EXPECT_THROW(p.set("smoothing_ratio", 1.9), ParamError);
}

// sphLatticeJacobiMax, from the Fourier symbol of DFSPH's operator, against
// the operator itself applied pair by pair (sph_dfsph.cl (1) and (2), in
// double) on a periodic cubic lattice: power iteration's Rayleigh quotient
// never exceeds it (the periodic lattice's modes are some of the infinite
// lattice's) and comes within 3 % of it (12 sites a side: the modes are
// pi / 6 apart). With the relaxation dfsphJacobiOmega gives, w times that
// eigenvalue stays under 2, where relaxed Jacobi diverges: applying the
// relaxed iteration to the stiffest mode shrinks it, while the fixed
// EDDY_DFSPH_OMEGA makes it grow at 2.6 and 3.0. The default support keeps
// EDDY_DFSPH_OMEGA.
TEST(SphKernels, JacobiBoundIsTheLargestEigenvalueOfTheSolvesOperator) {
  const int L = 12;
  const unsigned seed = test::freshSeed();
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> uni(-1, 1);
  for (double ratio : {2.0, 2.2, 2.6, 3.0}) {
    SCOPED_TRACE("smoothing_ratio " + std::to_string(ratio) + ", seed " + std::to_string(seed));
    const double bound = sphLatticeJacobiMax(ratio);
    // The neighbours of site 0 as offsets and g = grad_i W (spacing 1, h = ratio).
    struct Nb { int dx, dy, dz; double gx, gy, gz; };
    std::vector<Nb> nb;
    const int k = int(std::ceil(ratio));
    for (int i = -k; i <= k; ++i)
      for (int j = -k; j <= k; ++j)
        for (int l = -k; l <= k; ++l) {
          const double r = std::sqrt(double(i * i + j * j + l * l));
          if (r == 0 || r >= ratio) continue;
          const double c = sphKernelDW(r, ratio) / r;  // grad_i W(x_i - x_j) = c (x_i - x_j)
          nb.push_back({i, j, l, -c * i, -c * j, -c * l});  // x_i - x_j = -offset
        }
    const size_t n = size_t(L) * L * L;
    auto site = [&](int x, int y, int z) {
      auto w = [&](int a) { return size_t(((a % L) + L) % L); };
      return (w(z) * L + w(y)) * L + w(x);
    };
    double diag = 0;  // D_i: sum_j g_ij = 0 on the lattice
    for (const Nb& b : nb) diag += b.gx * b.gx + b.gy * b.gy + b.gz * b.gz;
    std::vector<std::array<double, 3>> dv(n);
    // out = D^-1 A k, in two passes as the kernels do.
    auto apply = [&](const std::vector<double>& kv, std::vector<double>& out) {
      for (int z = 0; z < L; ++z)
        for (int y = 0; y < L; ++y)
          for (int x = 0; x < L; ++x) {  // (1): dv_i = -sum_j (k_i + k_j) g_ij
            const size_t i = site(x, y, z);
            std::array<double, 3> a{0, 0, 0};
            for (const Nb& b : nb) {
              const double s = kv[i] + kv[site(x + b.dx, y + b.dy, z + b.dz)];
              a[0] -= s * b.gx, a[1] -= s * b.gy, a[2] -= s * b.gz;
            }
            dv[i] = a;
          }
      for (int z = 0; z < L; ++z)
        for (int y = 0; y < L; ++y)
          for (int x = 0; x < L; ++x) {  // (2): A k = -sum_j (dv_i - dv_j) . g_ij
            const size_t i = site(x, y, z);
            double rate = 0;
            for (const Nb& b : nb) {
              const auto& o = dv[site(x + b.dx, y + b.dy, z + b.dz)];
              rate += (dv[i][0] - o[0]) * b.gx + (dv[i][1] - o[1]) * b.gy + (dv[i][2] - o[2]) * b.gz;
            }
            out[i] = -rate / diag;
          }
    };
    auto norm2 = [](const std::vector<double>& v) {
      double s = 0;
      for (double x : v) s += x * x;
      return std::sqrt(s);
    };
    std::vector<double> kv(n), ak(n);
    for (double& x : kv) x = uni(rng);
    double rayleigh = 0;
    for (int it = 0; it < 300; ++it) {
      apply(kv, ak);
      double num = 0, den = 0;
      for (size_t i = 0; i < n; ++i) num += kv[i] * ak[i], den += kv[i] * kv[i];
      rayleigh = num / den;
      const double norm = norm2(ak);
      ASSERT_GT(norm, 0);
      for (size_t i = 0; i < n; ++i) kv[i] = ak[i] / norm;
    }
    const double w = dfsphJacobiOmega(ratio);
    std::printf("smoothing_ratio %.1f: largest eigenvalue %.4f (periodic lattice %.4f), relaxation %.4f\n",
                ratio, bound, rayleigh, w);
    EXPECT_LE(rayleigh, bound * (1 + 1e-9));
    EXPECT_GT(rayleigh, 0.97 * bound);
    // The relaxed iteration k <- k - w D^-1 A k on the stiffest mode: it must
    // shrink with dfsphJacobiOmega's w, and grows with the fixed
    // EDDY_DFSPH_OMEGA wherever that times the eigenvalue passes 2.
    auto growth = [&](double omega) {
      std::vector<double> e = kv;
      for (int it = 0; it < 30; ++it) {
        apply(e, ak);
        for (size_t i = 0; i < n; ++i) e[i] -= omega * ak[i];
      }
      return norm2(e) / norm2(kv);
    };
    const double g = growth(w);
    EXPECT_LT(g, 0.01) << "relaxation " << w << " does not damp the stiffest mode";
    std::printf("  stiffest mode after 30 relaxed iterations: x %.3g\n", g);
    if (double(EDDY_DFSPH_OMEGA) * rayleigh > 2.05) {
      EXPECT_GT(growth(double(EDDY_DFSPH_OMEGA)), 1.0) << "the fixed relaxation was expected to diverge";
    }
  }
  EXPECT_EQ(dfsphJacobiOmega(2.2), double(EDDY_DFSPH_OMEGA));  // the default support's
  EXPECT_LT(dfsphJacobiOmega(2.6), double(EDDY_DFSPH_OMEGA));  // where 0.5 diverged
}

namespace {
// hash -> sort -> reorder -> cells -> neighbours: the list of the current
// positions built by the separate "neighbours" phase.
void runListPhases(SphSim& sim) {
  sim.runHash();
  sim.runSort();
  sim.runReorder();
  sim.runCells();
  sim.runNeighbours();
}

// The list of every particle against all pairs with the kernels' float
// distance test (sphIsNeighbour): the same set, or (over the capacity cap)
// cap distinct true neighbours. Returns the overflow the counter must show.
uint64_t expectListsEqualBruteForce(SphSim& sim, size_t n, unsigned cap) {
  const auto pos = sim.readPositions();
  const auto cnt = sim.readNeighbourCounts();
  const auto list = sim.readNeighbourList();
  const float h = float(sim.physics().h);
  const bool failedBefore = ::testing::Test::HasFailure();
  uint64_t expectOverflow = 0;
  for (size_t i = 0; i < n; ++i) {
    std::set<cl_uint> brute;
    for (size_t j = 0; j < n; ++j)
      if (sphIsNeighbour(pos[i], pos[j], h)) brute.insert(cl_uint(j));
    std::set<cl_uint> got;
    if (brute.size() <= cap) {
      for (cl_uint k = 0; k < cnt[i]; ++k) got.insert(list[EDDY_SPH_LIST_SLOT(k, i, n)]);
      EXPECT_EQ(cnt[i], brute.size()) << "particle " << i;
      EXPECT_EQ(got, brute) << "particle " << i;
    } else {
      EXPECT_EQ(cnt[i], cap);
      for (cl_uint k = 0; k < cap; ++k) {
        EXPECT_TRUE(brute.count(list[EDDY_SPH_LIST_SLOT(k, i, n)]));
        got.insert(list[EDDY_SPH_LIST_SLOT(k, i, n)]);
      }
      EXPECT_EQ(got.size(), size_t(cap)) << "particle " << i << ": a neighbour stored twice";
      expectOverflow += brute.size() - cap;
    }
    if (!failedBefore && ::testing::Test::HasFailure()) {
      ADD_FAILURE() << "first wrong list: particle " << i << " (the rest not compared)";
      break;
    }
  }
  return expectOverflow;
}
}  // namespace

// The list's slot map (eddy_shared.h, EDDY_SPH_LIST_SLOT): for every group
// size a developer may choose (1 to EDDY_SPH_LIST_GROUP_MAX; 2 the default),
// the entries k < cap of particles i < n land on distinct slots inside the
// n * EDDY_SPH_LIST_ROUNDUP(cap) entries the buffers hold; a group of 1 is
// column-major k n + i, a group of 2 puts entries 2m, 2m + 1 side by side.
// (The macro reads EDDY_SPH_LIST_GROUP where it is expanded: redefined here
// for each group, then restored.)
namespace {
template <unsigned G>
void expectListSlotsAreABijection(size_t n, unsigned cap) {
#pragma push_macro("EDDY_SPH_LIST_GROUP")
#undef EDDY_SPH_LIST_GROUP
#define EDDY_SPH_LIST_GROUP G
  const size_t size = n * EDDY_SPH_LIST_ROUNDUP(cap);
  std::vector<char> used(size, 0);
  for (unsigned k = 0; k < cap; ++k)
    for (size_t i = 0; i < n; ++i) {
      const size_t s = EDDY_SPH_LIST_SLOT(k, i, n);
      ASSERT_LT(s, size) << "group " << G << ", n " << n << ", cap " << cap << ", k " << k;
      EXPECT_FALSE(used[s]) << "group " << G << ", n " << n << ", slot " << s << " twice";
      used[s] = 1;
      if (G == 1) {
        EXPECT_EQ(s, size_t(k) * n + i);
      }
      if (G == 2) {
        EXPECT_EQ(s, (size_t(k / 2) * n + i) * 2 + k % 2);
      }
    }
#pragma pop_macro("EDDY_SPH_LIST_GROUP")
}
}  // namespace

TEST(SphKernels, ListSlotsAreDistinctAndFitTheBufferForEveryGroup) {
  EXPECT_EQ(EDDY_SPH_LIST_GROUP, 2u);  // the layout the host's readers assume
  for (size_t n : {size_t(1), size_t(13), size_t(127), size_t(1000)})
    for (unsigned cap : {1u, 5u, 8u, 96u, 140u}) {
      expectListSlotsAreABijection<1>(n, cap);
      expectListSlotsAreABijection<2>(n, cap);
      expectListSlotsAreABijection<4>(n, cap);
      expectListSlotsAreABijection<EDDY_SPH_LIST_GROUP_MAX>(n, cap);
    }
}

TEST(SphKernels, NeighbourListsEqualBruteForceAndOverflowIsCounted) {
  const unsigned seed = test::freshSeed();
  enum Build { kPhase, kDensity, kContinuity };
  for (Build build : {kPhase, kDensity, kContinuity})
  for (int lb : {0, 2, 5})  // 1, 4 and 32 work-items per particle (sph_common.cl, "Lanes")
  for (size_t n : kSizes) {
    for (unsigned cap : {96u, 8u}) {
      const char* names[] = {"phase neighbours", "fused in density", "fused in continuity"};
      SCOPED_TRACE(std::string(names[build]) + ", n = " + std::to_string(n) + ", cap " +
                   std::to_string(cap) + ", lanes " + std::to_string(1 << lb) + ", seed " +
                   std::to_string(seed));
      const SphSetup s = randomSetup(n, seed + unsigned(n));
      SphKernelConfig cfg;
      cfg.neighbourList = true;
      cfg.listCapacity = cap;
      cfg.laneBits = lb;
      cfg.fusedList = build != kPhase;
      Params params = physicsParams();
      params.set("density_diffusion", build == kContinuity ? 0.1 : 0.0);
      SphSim sim(test::context(), params, s, cfg);
      ASSERT_EQ(sim.solver().buildsNeighbourList(sim.particles()), build != kPhase);
      sim.writeState(toF4(s, false), toF4(s, true));
      const auto before = sim.readCounters().overflow;
      if (build == kPhase) {
        runListPhases(sim);
      } else {
        sim.refreshDensity();  // hash .. cells, then the density kernel(s)
      }
      const uint64_t expectOverflow = expectListsEqualBruteForce(sim, n, cap);
      EXPECT_EQ(sim.readCounters().overflow - before, expectOverflow);
      if (cap == 8 && n > 100) {
        EXPECT_GT(expectOverflow, 0u);  // the case is exercised
      }
    }
  }
}

// The neighbours phase at one lane walks only the cells a sphere of radius h
// around p reaches (sph_common.cl, SPH_NEAR_ROWS_BEGIN): pairs placed across
// a cell's face, edge and corner at distances of h (1 -+ 1e-7 ... 1e-4),
// often with one of them within a hair of the face, edge or corner,
// particles on cell faces and particles beyond the grid (clamped into its
// edge cells) still find exactly the neighbours of the kernels' own float
// test; so do the whole walks (lanes, the build fused in density).
TEST(SphKernels, NeighbourListsAcrossCellFacesEdgesAndCornersEqualBruteForce) {
  const unsigned seed = test::freshSeed();
  for (size_t n : {size_t(2), size_t(131), size_t(2003)})
  for (int build = 0; build < 2; ++build)  // the neighbours phase, the build fused in density
  for (int lb : {0, 2, 5}) {
    SCOPED_TRACE("n = " + std::to_string(n) + (build ? ", fused" : ", phase") + ", lanes " +
                 std::to_string(1 << lb) + ", seed " + std::to_string(seed));
    const SphSetup s = randomSetup(n, seed + unsigned(n));
    SphKernelConfig cfg;
    cfg.neighbourList = true;
    cfg.listCapacity = 256;
    cfg.laneBits = lb;
    cfg.fusedList = build != 0;
    Params params = physicsParams();
    params.set("density_diffusion", 0.0);
    SphSim sim(test::context(), params, s, cfg);
    const double h = sim.physics().h;
    const double cell = h * double(EDDY_SPH_CELL_SLACK);  // SphParticles' grid
    int cells[3];
    for (int a = 0; a < 3; ++a) cells[a] = std::max(1, int(s.tank[a] / cell));
    std::mt19937_64 rng(seed + 99u + unsigned(n));
    std::uniform_real_distribution<double> u(0, 1);
    const double fs[] = {1 - 1e-7, 1 - 1e-6, 1 - 1e-5, 1 - 1e-4, 1 + 1e-7, 1 + 1e-6};
    std::vector<cl_float4> pos = toF4(s, false);
    for (size_t i = 0; i + 1 < n; i += 2) {
      // A grid point C (a corner of up to 8 cells), a direction d across a face
      // (1 axis), an edge (2) or a corner (3), p = C - t d, q = C + (f h - t) d.
      double c[3], d[3] = {0, 0, 0};
      for (int a = 0; a < 3; ++a) c[a] = cell * double(int(u(rng) * (cells[a] + 1)));
      const int axes = 1 + int(u(rng) * 3) % 3;
      const int first = int(u(rng) * 3) % 3;
      for (int k = 0; k < axes; ++k)
        d[(first + k) % 3] = (u(rng) < 0.5 ? -1.0 : 1.0) / std::sqrt(double(axes));
      // t: anywhere, or with q (then p) within 1e-7 .. 1e-2 of f h of C.
      const double f = fs[size_t(u(rng) * 6) % 6] * h;
      const double e = std::pow(10.0, -1.0 - 6.0 * u(rng));
      const int where = int(u(rng) * 3) % 3;
      const double t = where == 0 ? u(rng) * f : (where == 1 ? f * (1 - e) : f * e);
      for (int a = 0; a < 3; ++a) {
        pos[i].s[a] = cl_float(c[a] - t * d[a]);
        pos[i + 1].s[a] = cl_float(c[a] + (f - t) * d[a]);
      }
      if (i % 10 == 4) pos[i].s[1] = cl_float(-0.3 * h);                 // below the grid
      if (i % 10 == 6) pos[i + 1].s[0] = cl_float(s.tank[0] + 0.6 * h);  // beyond its end
      if (i % 14 == 8) pos[i].s[2] = cl_float(cell * double(int(u(rng) * cells[2])));  // on a face
    }
    sim.writeState(pos, toF4(s, true));
    if (build) {
      sim.refreshDensity();
    } else {
      runListPhases(sim);
    }
    EXPECT_EQ(expectListsEqualBruteForce(sim, n, cfg.listCapacity), 0u);
  }
}

// The neighbours phase keeps a lane's first SPH_NB_STAGE hits in local
// memory and walks again only for the rest (kernels/sph/sph_neighbours.cl).
// Every stage size gives the list of the plain two walks (stage 0), slot for
// slot: stage 1 and 3 make most lanes take the second walk for their later
// hits, also where the list overflows.
TEST(SphKernels, NeighbourStageGivesTheSameListSlotForSlot) {
  const unsigned seed = test::freshSeed();
  for (int lb : {1, 2, 5})  // 2, 4 and 32 work-items per particle
  for (size_t n : kSizes) {
    for (unsigned cap : {96u, 8u}) {
      const SphSetup s = randomSetup(n, seed + unsigned(n) + 7u);
      auto build = [&](int stage) {
        SphKernelConfig cfg;
        cfg.neighbourList = true;
        cfg.listCapacity = cap;
        cfg.laneBits = lb;
        cfg.fusedList = false;
        cfg.neighbourStage = stage;
        SphSim sim(test::context(), physicsParams(), s, cfg);
        sim.writeState(toF4(s, false), toF4(s, true));
        runListPhases(sim);
        return std::make_tuple(sim.readNeighbourCounts(), sim.readNeighbourList(),
                               sim.readCounters().overflow);
      };
      const auto plain = build(0);
      for (int stage : {1, 3, -1}) {
        SCOPED_TRACE("n = " + std::to_string(n) + ", cap " + std::to_string(cap) + ", lanes " +
                     std::to_string(1 << lb) + ", stage " + std::to_string(stage) + ", seed " +
                     std::to_string(seed));
        const auto got = build(stage);
        ASSERT_EQ(std::get<0>(got), std::get<0>(plain));
        const auto& a = std::get<1>(got);
        const auto& b = std::get<1>(plain);
        const auto& cnt = std::get<0>(plain);
        for (size_t i = 0; i < n; ++i)
          for (cl_uint k = 0; k < cnt[i]; ++k)
            ASSERT_EQ(a[EDDY_SPH_LIST_SLOT(k, i, n)], b[EDDY_SPH_LIST_SLOT(k, i, n)]) << "particle " << i << ", slot " << k;
        EXPECT_EQ(std::get<2>(got), std::get<2>(plain));
      }
    }
  }
}

TEST(SphKernels, DensityPressureAndForcesMatchTheDoubleReference) {
  const unsigned seed = test::freshSeed();
  // cells mode; list mode with the "neighbours" phase; list mode with the
  // list built by sph_density (fused list)
  for (bool thin : {false, true})
  for (int mode : {0, 1, 2})
    for (int lb : {0, 3})  // 1 and 8 work-items per particle (sph_common.cl, "Lanes")
    for (size_t n : kSizes) {
      const bool list = mode > 0;
      SCOPED_TRACE(std::string(mode == 0 ? "cells" : mode == 1 ? "list" : "fused list") +
                   " mode, n = " + std::to_string(n) + ", lanes " + std::to_string(1 << lb) +
                   ", seed " + std::to_string(seed) + (thin ? ", thin slab" : ""));
      const SphSetup s = randomSetup(n, seed + unsigned(n), thin);
      SphKernelConfig cfg;
      cfg.neighbourList = list;
      cfg.fusedList = mode == 2;
      cfg.laneBits = lb;
      cfg.listCapacity = 1024;  // random clusters can exceed the default 96 (tested above)
      Params params = physicsParams();
      params.set("density_diffusion", 0.0);  // the summation density (sph_density.cl)
      SphSim sim(test::context(), params, s, cfg);
      sim.writeState(toF4(s, false), toF4(s, true));
      sim.refreshDensity();
      ASSERT_EQ(sim.readCounters().overflow, 0u);
      SphReferenceInput in;
      in.pos = sim.readPositions();
      in.vel = sim.readVelocities();
      in.tank = sim.tank();
      in.phys = sim.physics();
      std::vector<double> rho;
      std::vector<unsigned> count;
      sphReferenceDensity(in, rho, count);
      const auto rp = sim.readDensityPressure();
      const auto nb = sim.readNeighbourCounts();
      double maxRho = 0, maxP = 0;
      for (size_t i = 0; i < n; ++i) {
        ASSERT_EQ(nb[i], count[i]) << "neighbour count of particle " << i;
        // rho_i is a float sum of positive terms, one per neighbour and per
        // wall image of it (sphTermsPerNeighbour), added one after
        // the other (per lane); recursive summation of N positive terms is
        // good to (N - 1) u of the sum, and comes near that where the terms
        // are equal and small against the running sum: a wall particle next
        // to the 69 particles stacked in the corner summed ~360 terms and was
        // 9.1e-6 off (seed 953991455, n 2003, 1 lane). 1e-5 for the kernel
        // function's own rounding, plus N u.
        const double terms = double(count[i]) * sphTermsPerNeighbour(in.pos[i], in.tank, in.phys.h);
        const double tol = 1e-5 + terms * std::ldexp(1.0, -24);
        const double e = std::fabs(rp[i].s[0] - rho[i]) / rho[i] / tol;  // in units of the tolerance
        maxRho = std::max(maxRho, e);
        // pressure: the EOS in double of the device's density
        const double pref = sphReferencePressure(rp[i].s[0], in.phys.rho0, in.phys.B);
        maxP = std::max(maxP, std::fabs(rp[i].s[1] - pref) / (std::fabs(pref) + 1e-3 * in.phys.B));
      }
      EXPECT_LT(maxRho, 1.0);
      EXPECT_LT(maxP, 1e-5);

      sim.runForces();
      in.rhop = rp;  // same inputs as the kernel
      std::vector<std::array<double, 3>> acc;
      std::vector<double> scale;
      sphReferenceForces(in, acc, scale);
      const auto a = sim.readAccelerations();
      double maxA = 0;
      for (size_t i = 0; i < n; ++i)
        for (int k = 0; k < 3; ++k)
          maxA = std::max(maxA, std::fabs(a[i].s[k] - acc[i][k]) / scale[i]);
      EXPECT_LT(maxA, 1e-5);
      // The fluid's extent along gravity for DFSPH's time step: max y and
      // max (tank height - y), y clamped to the tank.
      {
        std::vector<cl_uint> c(EDDY_SPH_NUM_COUNTERS);
        test::context().queue().enqueueReadBuffer(sim.particles().counters(), CL_TRUE, 0,
                                                  c.size() * sizeof(cl_uint), c.data());
        const double H = double(float(in.tank[1]));
        double ymax = 0, dmax = 0;
        for (size_t i = 0; i < n; ++i) {
          const double y = std::clamp(double(in.pos[i].s[1]), 0.0, H);
          ymax = std::max(ymax, y);
          dmax = std::max(dmax, double(float(H - y)));
        }
        float fy, fd;
        std::memcpy(&fy, &c[EDDY_SPH_CNT_MAX_Y], sizeof fy);
        std::memcpy(&fd, &c[EDDY_SPH_CNT_MAX_DROP], sizeof fd);
        EXPECT_EQ(double(fy), ymax);
        EXPECT_NEAR(double(fd), dmax, 1e-6 * H);
      }
      std::printf("SPH kernels %s lanes %d n=%zu%s: density err / tol %.2e, pressure %.2e, "
                  "acceleration %.2e\n",
                  mode == 0 ? "cells" : mode == 1 ? "list " : "fused", 1 << lb, n, thin ? " thin" : "", maxRho,
                  maxP, maxA);
    }
}

TEST(SphKernels, MomentumIsConservedPairwise) {
  // A random blob away from the walls, no gravity: sum_i m a_i = 0 up to rounding.
  std::mt19937_64 rng(test::freshSeed());
  std::uniform_real_distribution<double> u(0, 1);
  SphSetup s;
  s.spacing = kDx;
  s.tank = {0.2, 0.2, 0.2};
  s.expectedSpeed = 1;
  for (int i = 0; i < 1500; ++i) {  // in [0.06, 0.14]^3: >= 3h from every wall
    SphParticle p;
    p.x = 0.06 + 0.08 * u(rng);
    p.y = 0.06 + 0.08 * u(rng);
    p.z = 0.06 + 0.08 * u(rng);
    p.vx = u(rng) - 0.5;
    s.particles.push_back(p);
  }
  Params p = physicsParams();
  p.set("gravity", 0);
  for (bool list : {false, true}) {
  SphKernelConfig cfg;
  cfg.neighbourList = list;
  cfg.listCapacity = 1024;  // ~100 neighbours here: no overflow
  SphSim sim(test::context(), p, s, cfg);
  sim.runForces();
  EXPECT_EQ(sim.readCounters().overflow, 0u);
  const auto a = sim.readAccelerations();
  double sum[3] = {0, 0, 0}, mag = 0;
  for (const auto& v : a)
    for (int k = 0; k < 3; ++k) {
      sum[k] += v.s[k];
      mag += std::fabs(v.s[k]);
    }
  for (int k = 0; k < 3; ++k) EXPECT_LT(std::fabs(sum[k]) / mag, 1e-5) << "axis " << k;
  }
}

TEST(SphKernels, TimeStepAndIntegrateMatchTheReference) {
  const unsigned seed = test::freshSeed();
  for (size_t n : kSizes) {
    SCOPED_TRACE("n = " + std::to_string(n) + ", seed " + std::to_string(seed));
    const SphSetup s = randomSetup(n, seed + unsigned(n));
    Params params = physicsParams();
    params.set("max_dt", 0.1);
    SphSim sim(test::context(), params, s);
    sim.writeState(toF4(s, false), toF4(s, true));
    sim.refreshDensity();
    sim.runForces();
    const auto t0 = sim.readClock();
    sim.runDt();
    const auto pos = sim.readPositions(), vel = sim.readVelocities();
    const auto rp = sim.readDensityPressure();
    auto acc = sim.readAccelerations();
    const auto& P = sim.physics();
    // The Courant condition on max_i (c_i + |v_i|), c_i = c0 (rho_i / rho0)^3
    // the Tait sound speed of the particle's density, at least c0.
    double amax = 0, smax = 0, rmax = 0;
    for (size_t i = 0; i < n; ++i) {
      double a2 = 0, v2 = 0;
      for (int k = 0; k < 3; ++k) {
        a2 += double(acc[i].s[k]) * acc[i].s[k];
        v2 += double(vel[i].s[k]) * vel[i].s[k];
      }
      const double r = std::max(1.0, double(rp[i].s[0]) / P.rho0);
      amax = std::max(amax, std::sqrt(a2));
      smax = std::max(smax, P.c0 * r * r * r + std::sqrt(v2));
      rmax = std::max(rmax, r);
    }
    if (n > 100) {
      EXPECT_GT(rmax, 1.01);  // the local sound speed is exercised (random packings clump)
    }
    double dt = std::min(P.maxDt, P.cfl * P.h / smax);
    if (amax > 0) dt = std::min(dt, P.cfl * std::sqrt(P.h / amax));
    const auto clk = sim.readClock();
    EXPECT_NEAR(clk[1], dt, 1e-5 * dt);
    EXPECT_NEAR(clk[0] - t0[0], dt, 1e-5 * dt);

    // Integrate with a large dt and accelerations so that particles cross walls.
    const float bigDt = 0.004f;
    std::mt19937_64 rng(seed + 7);
    std::uniform_real_distribution<double> u(-1, 1);
    for (auto& a : acc)
      for (int k = 0; k < 3; ++k) a.s[k] = float(400.0 * u(rng));
    if (n > 1) acc[n / 2].s[0] = NAN;  // one broken particle: counted, put back
    sim.writeAccelerations(acc);
    sim.writeDt(bigDt);
    const auto esc0 = sim.readCounters().escaped;
    sim.runIntegrate();
    const auto p1 = sim.readPositions(), v1 = sim.readVelocities();
    const auto L = sim.tank();
    const double e = P.restitution;
    size_t crossed = 0;
    for (size_t i = 0; i < n; ++i) {
      if (n > 1 && i == n / 2) {
        for (int k = 0; k < 3; ++k) {
          EXPECT_GE(p1[i].s[k], 0.0f);
          EXPECT_LE(p1[i].s[k], float(L[k]));
          EXPECT_EQ(v1[i].s[k], 0.0f);
        }
        continue;
      }
      for (int k = 0; k < 3; ++k) {
        double v = vel[i].s[k] + double(bigDt) * acc[i].s[k];
        double x = pos[i].s[k] + double(bigDt) * v;
        unsigned turned = 0;
        if (x < 0) { x = -x; v = -e * v; ++crossed; turned = 1; }
        else if (x > L[k]) { x = 2 * L[k] - x; v = -e * v; ++crossed; turned = 1; }
        // the axes turned back go into v.w (bit k), for the continuity equation
        EXPECT_EQ((unsigned(v1[i].s[3]) >> k) & 1u, turned) << "particle " << i << " axis " << k;
        EXPECT_NEAR(p1[i].s[k], x, 1e-5 * (L[k] + 1e-3)) << "particle " << i << " axis " << k;
        EXPECT_NEAR(v1[i].s[k], v, 1e-5 * (std::fabs(v) + 1.0)) << "particle " << i;
        EXPECT_GE(p1[i].s[k], 0.0f);
        EXPECT_LE(p1[i].s[k], float(L[k]));
      }
    }
    EXPECT_EQ(sim.readCounters().escaped - esc0, n > 1 ? 1u : 0u);
    if (n > 100) {
      EXPECT_GT(crossed, 0u);  // the wall case is exercised
    }
  }
}

// The device clock adds each step's dt to the time as a compensated float sum
// hi + lo (sph_integrate.cl, sph_clock_advance). With a dt that float cannot
// hold exactly, 20 000 steps to t = 2.5 s: hi alone drifts by up to an ulp of
// t (2.4e-7 s) and hi + lo must stay on the exact sum (a float emulation of
// the sum gives 0 error; the remainder stored with the wrong sign, as until
// 2026-12-04, gave 2.4e-7 s, and time could step backwards).
TEST(SphKernels, ClockIsTheCompensatedSumOfTheSteps) {
  const SphSetup s = randomSetup(5, test::freshSeed());
  Params params = physicsParams();
  params.set("max_dt", 1.234567e-4);
  SphSim sim(test::context(), params, s);
  const double t0 = sim.readClock()[0];
  double dt = 0, last = t0;
  for (int k = 1; k <= 20000; ++k) {
    sim.runDt();  // the counters' maxima are reset by each: dt = max_dt every time
    if (k == 1) {
      dt = sim.readClock()[1];
      ASSERT_EQ(float(dt), float(1.234567e-4));
    }
    if (k % 2500 == 0) {
      const auto c = sim.readClock();
      ASSERT_EQ(c[1], dt);
      EXPECT_NEAR(c[0] - t0, k * dt, 1e-9) << "after " << k << " steps";
      EXPECT_GT(c[0], last);
      last = c[0];
    }
  }
}

TEST(SphKernels, CellsAndListModesAgree) {
  const SphSetup s = randomSetup(1500, test::freshSeed());
  SphKernelConfig cl;
  cl.neighbourList = true;
  SphSim a(test::context(), physicsParams(), s), b(test::context(), physicsParams(), s, cl);
  for (int k = 0; k < 5; ++k) {
    a.step();
    b.step();
  }
  const auto ra = a.stateRows(), rb = b.stateRows();
  double maxErr = 0;
  for (size_t i = 0; i < ra.size(); ++i)
    for (int k = 0; k < 3; ++k) maxErr = std::max(maxErr, std::fabs(ra[i][k] - rb[i][k]));
  EXPECT_LT(maxErr, 1e-5);  // summation order differs only
}

// At one lane the fused list (kernels/sph/sph_common.cl, "Fused list") sums
// the neighbours in the order the "neighbours" phase stores them, and only
// those it stores: steps with and without it give the same bits, for the
// summation and for delta-SPH, also when the list overflows (capacity 8:
// past it both leave the same neighbours out).
TEST(SphKernels, FusedListGivesTheSameBitsAsTheNeighboursPhase) {
  const SphSetup s = randomSetup(1500, test::freshSeed());
  for (unsigned cap : {1024u, 8u})
  for (double delta : {0.0, 0.1}) {
    SCOPED_TRACE("density_diffusion " + std::to_string(delta) + ", capacity " + std::to_string(cap));
    Params params = physicsParams();
    params.set("density_diffusion", delta);
    SphKernelConfig fused, phase;
    fused.laneBits = phase.laneBits = 0;
    fused.listCapacity = phase.listCapacity = cap;
    phase.fusedList = false;
    SphSim a(test::context(), params, s, fused), b(test::context(), params, s, phase);
    ASSERT_TRUE(a.solver().buildsNeighbourList(a.particles()));
    ASSERT_FALSE(b.solver().buildsNeighbourList(b.particles()));
    for (int k = 0; k < 10; ++k) {
      a.step();
      b.step();
    }
    const auto sameBits = [](const auto& x, const auto& y) {
      return x.size() == y.size() &&
             std::memcmp(x.data(), y.data(), x.size() * sizeof(x[0])) == 0;
    };
    EXPECT_TRUE(sameBits(a.readPositions(), b.readPositions()));
    EXPECT_TRUE(sameBits(a.readVelocities(), b.readVelocities()));
    EXPECT_TRUE(sameBits(a.readDensityPressure(), b.readDensityPressure()));
    EXPECT_EQ(a.readNeighbourCounts(), b.readNeighbourCounts());
    EXPECT_EQ(a.readCounters().overflow, b.readCounters().overflow);
    if (cap == 8) {
      EXPECT_GT(a.readCounters().overflow, 0u);  // the case is exercised
    }
  }
}

// delta-SPH (kernels/sph/sph_continuity.cl): the carried density follows the
// sort, the continuity rate with density diffusion matches the double
// reference, and a step adds dt times that rate.
TEST(SphKernels, ContinuityDensityDiffusionMatchesTheDoubleReference) {
  const unsigned seed = test::freshSeed();
  for (bool thin : {false, true})  // thin: a slab 0.8 h deep, images across both z walls
  for (int mode : {0, 1, 2})  // cells; list; list built by sph_continuity (fused)
    for (int lb : {0, 3})
      for (size_t n : kSizes) {
        const bool list = mode > 0;
        SCOPED_TRACE(std::string(mode == 0 ? "cells" : mode == 1 ? "list" : "fused list") +
                     " mode, n = " + std::to_string(n) + ", lanes " + std::to_string(1 << lb) +
                     ", seed " + std::to_string(seed) + (thin ? ", thin slab" : ""));
        const SphSetup s = randomSetup(n, seed + unsigned(n), thin);
        SphKernelConfig cfg;
        cfg.neighbourList = list;
        cfg.fusedList = mode == 2;
        cfg.laneBits = lb;
        cfg.listCapacity = 1024;
        Params params = physicsParams();
        params.set("density_diffusion", 0.1);
        params.set("gravity", 30.0);  // a large hydrostatic correction, easy to see
        SphSim sim(test::context(), params, s, cfg);
        sim.writeState(toF4(s, false), toF4(s, true));
        // Random carried densities, put in through a restore (slot order).
        std::mt19937_64 rng(seed + 7 * unsigned(n));
        std::uniform_real_distribution<double> u(0.98, 1.03);
        SphState st;
        st.pos = sim.readPositions();
        st.vel = sim.readVelocities();
        st.ids = sim.readIds();
        st.clock.assign(EDDY_SPH_CLOCK_SIZE, 0.0f);
        st.counters.assign(EDDY_SPH_NUM_COUNTERS, 0u);
        std::vector<double> rhoOfId(n);
        for (size_t i = 0; i < n; ++i) {
          st.rho.push_back(float(1000.0 * u(rng)));
          rhoOfId[st.ids[i]] = st.rho.back();
          // axes a wall turned the particle back on in its last step (v.w):
          // their normal velocity does not count (sph_moved_v)
          st.vel[i].s[3] = i % 3 == 1 ? float(rng() % 8) : 0.0f;
        }
        sim.restoreState(st);
        sim.refreshDensity();  // sorts (the densities follow), continuity phase
        ASSERT_EQ(sim.readCounters().overflow, 0u);
        const auto ids = sim.readIds();
        const auto rp = sim.readDensityPressure();
        std::vector<double> rho(n);
        for (size_t i = 0; i < n; ++i) {
          ASSERT_EQ(double(rp[i].s[0]), rhoOfId[ids[i]]) << "carried density of slot " << i;
          rho[i] = rp[i].s[0];
          const double pref = sphReferencePressure(rho[i], 1000.0, sim.physics().B);
          EXPECT_LT(std::fabs(rp[i].s[1] - pref), 1e-5 * (pref + 1e-3 * sim.physics().B));
        }
        SphReferenceInput in;
        in.pos = sim.readPositions();
        in.vel = sim.readVelocities();
        in.tank = sim.tank();
        in.phys = sim.physics();
        std::vector<double> drho, scale;
        sphReferenceContinuity(in, rho, drho, scale);
        auto& solver = dynamic_cast<WcsphSolver&>(sim.solver());
        const auto rate = solver.readDensityRate(n);
        double worst = 0;
        for (size_t i = 0; i < n; ++i)
          worst = std::max(worst, std::fabs(rate[i] - drho[i]) / scale[i]);
        EXPECT_LT(worst, 1e-5);
        {  // every mode: the real count (list modes: the list's length, nothing overflows)
          std::vector<double> rsum;
          std::vector<unsigned> count;
          sphReferenceDensity(in, rsum, count);
          const auto nb = sim.readNeighbourCounts();
          for (size_t i = 0; i < n; ++i) ASSERT_EQ(nb[i], count[i]) << "neighbour count " << i;
        }
        // A step moves the particles; the next density phase (here a refresh,
        // which re-sorts) advances rho by that step's dt times the rate of the
        // new positions and velocities, once: a second refresh changes nothing.
        sim.step();
        const double dt = sim.readClock()[1];
        ASSERT_GT(dt, 0.0);
        std::vector<double> before(n);
        for (size_t i = 0; i < n; ++i) before[ids[i]] = rho[i];
        sim.refreshDensity();
        const auto ids2 = sim.readIds();
        const auto rp2 = sim.readDensityPressure();
        const auto rate2 = solver.readDensityRate(n);
        double worstStep = 0;
        for (size_t i = 0; i < n; ++i) {
          // never below the floor (EDDY_SPH_CARRIED_DENSITY_FLOOR rho0)
          const double expect = std::max(before[ids2[i]] + dt * double(rate2[i]),
                                         double(EDDY_SPH_CARRIED_DENSITY_FLOOR) * 1000.0);
          // float rounding of rho + dt rate: relative to rho + |dt rate|
          const double size = before[ids2[i]] + std::fabs(dt * double(rate2[i]));
          worstStep = std::max(worstStep, std::fabs(rp2[i].s[0] - expect) / size);
        }
        EXPECT_LT(worstStep, 2.5e-7);
        sim.refreshDensity();
        const auto ids3 = sim.readIds();
        const auto rp3 = sim.readDensityPressure();
        for (size_t i = 0; i < n; ++i) {
          ASSERT_EQ(ids3[i], ids2[i]);
          ASSERT_EQ(rp3[i].s[0], rp2[i].s[0]) << "a refresh advanced rho again, slot " << i;
        }
        std::printf("continuity %s lanes %d n=%zu: rate rel err %.2e, step %.2e\n",
                    mode == 0 ? "cells" : mode == 1 ? "list " : "fused", 1 << lb, n, worst, worstStep);
      }
}

// The automatic lane count (sim/sph/particles.cpp, sphLaneBits) on a GPU of
// 132 compute units (the H200): the counts measured best there, 3 runs each
// (docs/PERFORMANCE.md, session 5): 16 lanes at 6 750 particles, 8 at
// 9 826 - 16 000, 4 from 24 334 on while n x 4 < 132 x 2048, then fewer.
// A CPU device always gets one lane; an override wins.
TEST(SphLanes, AutomaticCountFollowsTheParticlesPerComputeUnit) {
  DeviceInfo gpu;
  gpu.type = CL_DEVICE_TYPE_GPU;
  gpu.computeUnits = 132;
  const std::pair<size_t, unsigned> expect[] = {{1, 4},      {6750, 4},   {8448, 4},
                                                {8449, 3},   {9826, 3},   {16000, 3},
                                                {16897, 2},  {24334, 2},  {101306, 2},
                                                {135168, 1}, {270336, 0}, {1062882, 0}};
  for (const auto& [n, bits] : expect) EXPECT_EQ(sphLaneBits(gpu, n), bits) << n;
  DeviceInfo cpu;
  cpu.type = CL_DEVICE_TYPE_CPU;
  cpu.computeUnits = 2;
  EXPECT_EQ(sphLaneBits(cpu, 6750), 0u);
  EXPECT_EQ(sphLaneBits(gpu, 6750, 1), 1u);
  EXPECT_EQ(sphLaneBits(gpu, 6750, 9), unsigned(EDDY_SPH_LANE_BITS_LIMIT));
}

// A whole run sorted either way is the same run, bit for bit (both solvers,
// a scene with moving boundary particles too), the cell table included.
TEST(SphKernels, CountingSortRunsAreBitIdentical) {
  for (const auto& c : test::sphRunCases(60, 20)) {
    std::vector<cl_uint> cells[2];
    test::expectSphRunsBitIdentical(
        c, [](SphSim& s, int run) { s.particles().setCountingSort(run); },
        [&cells](SphSim& s, int run) {
          cells[run] = s.readCells();
          bool sawRank = false;
          s.profiler().collect(true);
          for (const auto& ph : s.profiler().stats()) sawRank |= ph.name == "cell_rank";
          EXPECT_EQ(sawRank, run == 1);
        });
    EXPECT_EQ(cells[0], cells[1]);
  }
}
