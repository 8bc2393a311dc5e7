// Dropping a block of fluid into a running SPH simulation (SphSim::addBlock,
// the desktop app's "Drop block"): capacity headroom, the lattice sites filled,
// the state after it (steps, ids, snapshots) and the errors.
#include "eddy_shared.h"
#include "factory.hpp"
#include "snapshot.hpp"
#include "sph.hpp"
#include "test_util.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <random>
#include <set>
#include <tuple>

using namespace eddy;

namespace {

// A small dam break: about 1600 particles in a 100 x 50 x 4 cell tank.
Params smallParams(double capacityFactor) {
  Params p(sphParamDecl());
  p.set("spacing", 0.004);
  p.set("depth", 0.016);
  p.set("capacity_factor", capacityFactor);
  return p;
}

SceneSpec damBreak() {
  SceneSpec s;
  s.sim = "sph";
  s.scene = "dam_break";
  return s;
}

std::unique_ptr<SphSim> makeSph(const Params& p) {
  auto sim = makeSimulation(test::context(), damBreak(), p);
  auto* sph = dynamic_cast<SphSim*>(sim.get());
  if (!sph) throw std::runtime_error("not an SphSim");
  sim.release();
  return std::unique_ptr<SphSim>(sph);
}

using Site = std::tuple<long long, long long, long long>;

// Independent reference: every lattice site (i + 1/2) dx of a cell inside the
// tank (i over all whole cells) whose centre lies in [lo, hi), by brute force.
std::set<Site> referenceSites(const Box& b, const std::array<double, 3>& tank, double dx) {
  std::array<long long, 3> cells{};
  for (int a = 0; a < 3; ++a) cells[a] = (long long)std::llround(tank[a] / dx);
  auto in = [&](int a, long long i) {
    const double c = (double(i) + 0.5) * dx;
    return c >= double(b.lo[a]) && c < double(b.hi[a]) && (double(i) + 1) * dx <= tank[a] * (1 + 1e-12);
  };
  std::set<Site> s;
  for (long long l = 0; l < cells[2]; ++l)
    for (long long j = 0; j < cells[1]; ++j)
      for (long long i = 0; i < cells[0]; ++i)
        if (in(0, i) && in(1, j) && in(2, l)) s.insert({i, j, l});
  return s;
}

bool isPermutation(const std::vector<cl_uint>& ids) {
  std::vector<bool> seen(ids.size(), false);
  for (cl_uint id : ids) {
    if (id >= ids.size() || seen[id]) return false;
    seen[id] = true;
  }
  return true;
}

// Positions by id.
std::vector<cl_float4> byId(const std::vector<cl_float4>& v, const std::vector<cl_uint>& ids) {
  std::vector<cl_float4> out(v.size());
  for (size_t i = 0; i < v.size(); ++i) out[ids[i]] = v[i];
  return out;
}

// A random box in the upper part of the tank that may stick out of it on any side.
Box randomBox(std::mt19937_64& rng, const std::array<double, 3>& tank) {
  std::uniform_real_distribution<double> u(0, 1);
  Box b;
  for (int a = 0; a < 3; ++a) {
    const double lo0 = a == 1 ? 0.55 : -0.1, lo1 = a == 1 ? 0.8 : 0.6;
    const double lo = (lo0 + (lo1 - lo0) * u(rng)) * tank[a];
    const double w = (0.3 + 0.4 * u(rng)) * tank[a];  // > one spacing on every axis
    b.lo[a] = float(lo);
    b.hi[a] = float(lo + w);
  }
  // Keep it clear of the dam-break column (x < 0.06 m) so no fluid overlaps.
  b.lo[0] = std::max(b.lo[0], 0.08f);
  b.hi[0] = std::max(b.hi[0], b.lo[0] + 0.02f);
  return b;
}

void expectInTankAndFinite(SphSim& sim) {
  const auto p = sim.readPositions(), v = sim.readVelocities();
  const auto& t = sim.tank();
  for (size_t i = 0; i < p.size(); ++i)
    for (int a = 0; a < 3; ++a) {
      ASSERT_TRUE(std::isfinite(p[i].s[a]) && std::isfinite(v[i].s[a])) << "slot " << i;
      ASSERT_GE(p[i].s[a], 0.f) << "slot " << i;
      ASSERT_LE(p[i].s[a], float(t[a])) << "slot " << i;
    }
}

}  // namespace

TEST(SphBlock, CapacityFollowsTheFactorAndIsAllocated) {
  const auto before = deviceMemoryInUse();
  auto one = makeSph(smallParams(1.0));
  const auto withOne = deviceMemoryInUse();
  const size_t n = one->size();
  ASSERT_GT(n, 1000u);
  EXPECT_EQ(one->capacity(), n);  // eddy-cli / bench: no headroom
  auto more = makeSph(smallParams(2.5));
  const auto withMore = deviceMemoryInUse();
  EXPECT_EQ(more->size(), n);
  EXPECT_EQ(more->capacity(), size_t(std::ceil(2.5 * double(n))));
  // Per-particle buffers (pos/vel x2, acc: float4; id x2, keys, vals, tmp x2,
  // nbcount: uint; rhop: float2; the neighbour list) scale with the capacity,
  // and the memory check's estimate (7 float4 + 7 uint + float2 + list per
  // particle) is not below what is allocated.
  const long long a = withOne.bytes - before.bytes, b = withMore.bytes - withOne.bytes;
  const double list = 4.0 * EDDY_SPH_LIST_ROUNDUP(one->kernelConfig().listCapacity);
  const double extra = double(more->capacity() - n);
  EXPECT_GE(double(b - a), (5 * 16 + 7 * 4 + 8 + list) * extra);
  EXPECT_LE(double(b - a), (7 * 16 + 7 * 4 + 8 + list) * extra);
  // The app's default headroom is a declared parameter; eddy-cli keeps 1.
  EXPECT_EQ(Params(sphParamDecl()).get("capacity_factor"), 1.0);
}

TEST(SphBlock, FillsTheLatticeSitesOfBoxAndTankAtRest) {
  const unsigned seed = test::freshSeed();
  std::mt19937_64 rng(seed);
  auto sim = makeSph(smallParams(10.0));  // room for two of the largest random blocks
  const size_t n0 = sim->size();
  const double dx = sim->physics().spacing;
  const auto oldPos = byId(sim->readPositions(), sim->readIds());
  const auto oldVel = byId(sim->readVelocities(), sim->readIds());
  size_t expectedTotal = n0;
  for (int round = 0; round < 2; ++round) {
    const Box box = randomBox(rng, sim->tank());
    const auto want = referenceSites(box, sim->tank(), dx);
    ASSERT_FALSE(want.empty()) << "seed " << seed;
    const size_t before = sim->size();
    sim->addBlock(box);
    ASSERT_EQ(sim->size() - before, want.size()) << "seed " << seed << " round " << round;
    expectedTotal += want.size();
    ASSERT_EQ(sim->size(), expectedTotal);

    const auto ids = sim->readIds();
    ASSERT_EQ(ids.size(), sim->size());
    ASSERT_TRUE(isPermutation(ids)) << "seed " << seed;
    const auto pos = byId(sim->readPositions(), ids), vel = byId(sim->readVelocities(), ids);
    // The new ids [before, size()) are exactly the wanted sites, at rest.
    std::set<Site> got;
    for (size_t k = before; k < sim->size(); ++k) {
      long long idx[3];
      for (int a = 0; a < 3; ++a) {
        const double c = pos[k].s[a];
        idx[a] = std::llround(c / dx - 0.5);
        EXPECT_NEAR(c, (double(idx[a]) + 0.5) * dx, 1e-6 * dx + 1e-7 * std::fabs(c)) << "id " << k;
        EXPECT_EQ(vel[k].s[a], 0.f) << "id " << k;
      }
      got.insert({idx[0], idx[1], idx[2]});
    }
    EXPECT_EQ(got, want) << "seed " << seed << " round " << round;
    // The particles already there did not move (no step ran).
    for (size_t k = 0; k < n0; ++k)
      for (int a = 0; a < 3; ++a) {
        ASSERT_EQ(pos[k].s[a], oldPos[k].s[a]) << "id " << k;
        ASSERT_EQ(vel[k].s[a], oldVel[k].s[a]) << "id " << k;
      }
    // Density/pressure (colour fields) belong to the new count: the block's
    // interior sits at about rest density.
    const auto rp = sim->readDensityPressure();
    ASSERT_EQ(rp.size(), sim->size());
    for (const auto& r : rp) ASSERT_TRUE(std::isfinite(r.s[0]) && r.s[0] > 0);
  }
  // --out's rows (by id) cover everything.
  EXPECT_EQ(sim->stateRows().size(), sim->size());
}

TEST(SphBlock, StepsAfterADropKeepEveryParticleInTheTank) {
  const unsigned seed = test::freshSeed();
  std::mt19937_64 rng(seed);
  auto sim = makeSph(smallParams(5.0));
  for (int k = 0; k < 20; ++k) sim->step();
  sim->addBlock(randomBox(rng, sim->tank()));
  const size_t n = sim->size();
  for (int k = 0; k < 150; ++k) sim->step();
  ASSERT_EQ(sim->size(), n);
  expectInTankAndFinite(*sim);
  const auto c = sim->readCounters();
  EXPECT_EQ(c.escaped, 0u) << "seed " << seed;
  EXPECT_EQ(c.outOfGrid, 0u) << "seed " << seed;
  EXPECT_TRUE(isPermutation(sim->readIds()));
  EXPECT_FALSE(sim->checkFiniteNow().has_value());
  // The block fell: its particles moved down and gained speed.
  const auto d = sim->diagnostics();
  EXPECT_GT(d.maxSpeed, 0.1);
  EXPECT_TRUE(std::isfinite(d.kinetic) && std::isfinite(d.potential));
  for (double v : sim->diagRow()) EXPECT_TRUE(std::isfinite(v));
  // The colour hooks cover every particle.
  const auto speed = test::context().createBuffer(CL_MEM_READ_WRITE, n * sizeof(cl_float), "test");
  sim->writeColorField(0, speed).wait();
  std::vector<cl_float> s(n);
  test::context().queue().enqueueReadBuffer(speed, CL_TRUE, 0, n * sizeof(cl_float), s.data());
  const auto v = sim->readVelocities();
  for (size_t i = 0; i < n; ++i) {
    const double ref = std::sqrt(double(v[i].s[0]) * v[i].s[0] + double(v[i].s[1]) * v[i].s[1] +
                                 double(v[i].s[2]) * v[i].s[2]);
    ASSERT_NEAR(s[i], ref, 1e-5 * ref + 1e-7) << "slot " << i;
  }
}

TEST(SphBlock, FullCapacityThrowsAndChangesNothing) {
  auto probe = makeSph(smallParams(1.0));
  const size_t n0 = probe->size();
  // Full from the start: capacity_factor 1.
  Box box;
  box.lo = {0.2f, 0.12f, 0.0f};
  box.hi = {0.24f, 0.16f, 0.016f};
  const size_t k = referenceSites(box, probe->tank(), probe->physics().spacing).size();
  ASSERT_GT(k, 0u);
  const auto p0 = probe->readPositions(), v0 = probe->readVelocities();
  const auto i0 = probe->readIds();
  try {
    probe->addBlock(box);
    FAIL() << "addBlock into a full simulation did not throw";
  } catch (const Error& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("capacity"), std::string::npos) << m;
    EXPECT_NE(m.find(std::to_string(k) + " particles"), std::string::npos) << m;
  }
  EXPECT_EQ(probe->size(), n0);
  const auto p1 = probe->readPositions(), v1 = probe->readVelocities();
  EXPECT_EQ(std::memcmp(p0.data(), p1.data(), n0 * sizeof(cl_float4)), 0);
  EXPECT_EQ(std::memcmp(v0.data(), v1.data(), n0 * sizeof(cl_float4)), 0);
  EXPECT_EQ(probe->readIds(), i0);

  // Exactly the room for one block: it fits to the last slot, the next does not.
  SphKernelConfig cfg;
  cfg.capacity = n0 + k;
  const Params params = smallParams(1.0);
  auto sim = std::make_unique<SphSim>(test::context(), params, makeSphScene("dam_break", params), cfg);
  EXPECT_EQ(sim->capacity(), n0 + k);
  sim->addBlock(box);
  EXPECT_EQ(sim->size(), sim->capacity());
  const auto p2 = sim->readPositions();
  EXPECT_THROW(sim->addBlock(box), Error);
  EXPECT_EQ(sim->size(), n0 + k);
  const auto p3 = sim->readPositions();
  EXPECT_EQ(std::memcmp(p2.data(), p3.data(), p2.size() * sizeof(cl_float4)), 0);
  sim->step();
  expectInTankAndFinite(*sim);
}

TEST(SphBlock, EmptyOrOutsideBoxesThrowClearly) {
  auto sim = makeSph(smallParams(4.0));
  const size_t n0 = sim->size();
  auto expectThrow = [&](Box b, const char* what) {
    try {
      sim->addBlock(b);
      ADD_FAILURE() << what << ": no throw";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("SPH drop block"), std::string::npos) << e.what();
    }
    EXPECT_EQ(sim->size(), n0) << what;
  };
  Box b;
  b.lo = {0.2f, 0.1f, 0.0f};
  b.hi = {0.2f, 0.15f, 0.016f};  // zero width
  expectThrow(b, "zero width");
  b.hi = {0.1f, 0.15f, 0.016f};  // inverted
  expectThrow(b, "inverted");
  b.lo = {0.5f, 0.1f, 0.0f};  // beyond the far wall (tank 0.4 m long)
  b.hi = {0.7f, 0.15f, 0.016f};
  expectThrow(b, "outside");
  b.lo = {0.2f, 0.1f, 0.0f};  // between two sites: centres at 0.102, 0.106
  b.hi = {0.3f, 0.1015f, 0.016f};
  expectThrow(b, "between sites");
  b.hi = {0.3f, std::nanf(""), 0.016f};
  expectThrow(b, "NaN");
  // A box covering far more than the tank is clipped to the tank's sites.
  b.lo = {-1.f, 0.168f, -1.f};
  b.hi = {2.f, 5.f, 1.f};
  const auto want = referenceSites(b, sim->tank(), sim->physics().spacing);
  EXPECT_EQ(want.size(), 100u * 8u * 4u);  // y centres 0.170 .. 0.198 in the 0.2 m tank
  sim->addBlock(b);
  EXPECT_EQ(sim->size(), n0 + want.size());
  expectInTankAndFinite(*sim);
}

// A snapshot taken after a drop restores the exact state (count, capacity,
// slot order, ids) and running on gives the same bits as never stopping.
TEST(SphBlock, SnapshotAfterADropRestoresBitIdentically) {
  const unsigned seed = test::freshSeed();
  std::mt19937_64 rng(seed);
  const Params params = smallParams(5.0);
  auto sim = makeSph(params);
  for (int k = 0; k < 7; ++k) sim->step();
  sim->addBlock(randomBox(rng, sim->tank()));
  const std::string path = test::tempDir() + "/block.snap";
  saveSnapshot(*sim, damBreak(), path);
  auto loaded = loadSnapshot(test::context(), Snapshot::read(path));
  auto& b = dynamic_cast<SphSim&>(*loaded.sim);
  ASSERT_EQ(b.size(), sim->size());
  EXPECT_EQ(b.capacity(), sim->capacity());
  EXPECT_EQ(b.steps(), sim->steps());
  EXPECT_EQ(b.readIds(), sim->readIds());
  const int K = 23;
  for (int k = 0; k < K; ++k) {
    sim->step();
    b.step();
  }
  const size_t n = sim->size();
  const auto pa = sim->readPositions(), pb = b.readPositions();
  const auto va = sim->readVelocities(), vb = b.readVelocities();
  const auto aa = sim->readAccelerations(), ab = b.readAccelerations();
  EXPECT_EQ(std::memcmp(pa.data(), pb.data(), n * sizeof(cl_float4)), 0) << "seed " << seed;
  EXPECT_EQ(std::memcmp(va.data(), vb.data(), n * sizeof(cl_float4)), 0) << "seed " << seed;
  EXPECT_EQ(std::memcmp(aa.data(), ab.data(), n * sizeof(cl_float4)), 0) << "seed " << seed;
  EXPECT_EQ(sim->readIds(), b.readIds());
  EXPECT_EQ(sim->syncTime(), b.syncTime());
  // And the run did move.
  EXPECT_GT(sim->diagnostics().maxSpeed, 0.0);

  // The capacity is stored with the state.
  auto snap = Snapshot::read(path);
  EXPECT_EQ(decodeSphState(snap, n).capacity, sim->capacity());
}
