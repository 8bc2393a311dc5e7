// The gravity kernel against a double-precision CPU all-pairs reference.
#include "nbody.hpp"
#include "reference/nbody_reference.hpp"
#include "rng.hpp"
#include "test_util.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <tuple>

using namespace eddy;

namespace {

struct Case {
  size_t n;
  unsigned wg, bpi;
  bool native;
  unsigned split = 1;  // source slices (nbody_gravity_split + nbody_gravity_reduce)
};

std::vector<Body> randomBodies(size_t n, unsigned seed) {
  Rng rng(seed);
  std::vector<Body> b(n);
  for (auto& p : b) {
    p.x = rng.uniform(-1, 1);
    p.y = rng.uniform(-1, 1);
    p.z = rng.uniform(-1, 1);
    p.vx = rng.uniform(-1, 1);
    p.m = rng.uniform(0.5, 1.5) / double(n);
  }
  return b;
}

class GravityKernel : public ::testing::TestWithParam<Case> {};

TEST_P(GravityKernel, MatchesDoubleReference) {
  const Case c = GetParam();
  const unsigned seed = test::freshSeed() + unsigned(c.n);
  Params params(nbodyParamDecl());
  params.set("G", 1.3);
  params.set("softening", 0.01);
  NBodyKernelConfig cfg;
  cfg.wg = c.wg;
  cfg.bpi = c.bpi;
  cfg.nativeRsqrt = c.native;
  cfg.split = c.split;
  NBodySim sim(test::context(), params, randomBodies(c.n, seed), cfg);
  const auto pos = sim.readPositions();
  const auto acc = sim.readAccelerations();
  const auto vel = sim.readVelocities();
  const auto ref = referenceAccelerations(pos, 1.3, double(float(0.01)));
  double worstScaled = 0, worstRel = 0;
  for (size_t i = 0; i < c.n; ++i) {
    // Error relative to the sum of the magnitudes of the pulls on body i: the
    // condition number of the sum (plain |a| can be ~0 by cancellation).
    double scale = 0;
    for (size_t j = 0; j < c.n; ++j) {
      if (j == i) continue;
      const double dx = double(pos[j].s[0]) - pos[i].s[0], dy = double(pos[j].s[1]) - pos[i].s[1],
                   dz = double(pos[j].s[2]) - pos[i].s[2];
      const double r2 = dx * dx + dy * dy + dz * dz + double(float(0.01)) * double(float(0.01));
      scale += 1.3 * pos[j].s[3] * std::sqrt(dx * dx + dy * dy + dz * dz) / (r2 * std::sqrt(r2));
    }
    double err2 = 0, ref2 = 0;
    for (int k = 0; k < 3; ++k) {
      const double d = double(acc[i].s[k]) - ref[i][k];
      err2 += d * d;
      ref2 += ref[i][k] * ref[i][k];
    }
    const double err = std::sqrt(err2);
    if (scale > 0) worstScaled = std::max(worstScaled, err / scale);
    if (ref2 > 0) worstRel = std::max(worstRel, err / std::sqrt(ref2));
    if (c.n == 1) { EXPECT_EQ(err, 0.0); }
    // start-up computes a(x) without kicking: velocities untouched
    EXPECT_EQ(vel[i].s[1], 0.0f);
  }
  RecordProperty("max_scaled_error", std::to_string(worstScaled));
  std::printf("N=%zu wg=%u bpi=%u split=%u native=%d: max |da|/sum|a_j| = %.3g, max |da|/|a| = %.3g (seed %u)\n",
              c.n, c.wg, c.bpi, c.split, int(c.native), worstScaled, worstRel, seed);
  EXPECT_LT(worstScaled, 1e-5) << "seed " << seed;
}

std::vector<Case> cases() {
  std::vector<Case> out;
  for (size_t n : {1u, 2u, 3u, 31u, 64u, 97u, 256u, 257u, 1000u, 1031u})
    for (unsigned wg : {64u, 256u})
      for (unsigned bpi : {1u, 2u, 4u}) out.push_back({n, wg, bpi, true});
  for (size_t n : {1u, 257u, 1031u}) out.push_back({n, 128, 1, false});
  // The source split: slices of whole tiles, the last one partial; more
  // slices asked for than there are tiles.
  for (size_t n : {1u, 2u, 65u, 97u, 257u, 1000u, 1031u})
    for (unsigned split : {2u, 3u, 7u}) {
      out.push_back({n, 64, 1, true, split});
      out.push_back({n, 64, 2, true, split});
    }
  return out;
}

INSTANTIATE_TEST_SUITE_P(Sizes, GravityKernel, ::testing::ValuesIn(cases()),
                         [](const auto& info) {
                           const Case& c = info.param;
                           return "n" + std::to_string(c.n) + "_wg" + std::to_string(c.wg) +
                                  "_bpi" + std::to_string(c.bpi) + (c.native ? "_native" : "_ieee") +
                                  (c.split > 1 ? "_split" + std::to_string(c.split) : "");
                         });

TEST(GravityKernel, AutomaticLayoutFillsTheDevice) {
  DeviceInfo gpu;
  gpu.type = CL_DEVICE_TYPE_GPU;
  gpu.computeUnits = 132;
  gpu.maxWorkGroup = 1024;
  // Large N: the layout measured fastest, no split.
  for (size_t n : {size_t(262144), size_t(1) << 20}) {
    const auto big = NBodyKernelConfig::automatic(gpu, n);
    EXPECT_EQ(big.wg * big.bpi, 1024u) << n;
    EXPECT_EQ(big.split, 1u) << n;
  }
  // Small N: the sources are split so that the groups fill the device
  // (about 1024 resident work-items per compute unit), and the split is
  // what the launch uses.
  for (size_t n : {size_t(4096), size_t(8192), size_t(16384), size_t(65536)}) {
    const auto c = NBodyKernelConfig::automatic(gpu, n);
    const size_t blocks = (n + c.wg * c.bpi - 1) / (c.wg * c.bpi);
    EXPECT_GT(c.split, 1u) << n;
    EXPECT_EQ(NBodyKernelConfig::slices(n, c.wg, c.split), c.split) << n;
    EXPECT_GE(blocks * c.split * c.wg, size_t(0.9 * 132 * 1024)) << n;
  }
  // The layouts measured on the H200 (docs/PERFORMANCE.md, "source split").
  for (const auto& [n, wg, bpi, split] :
       {std::tuple{size_t(8192), 256u, 2u, 32u}, std::tuple{size_t(16384), 512u, 2u, 16u},
        std::tuple{size_t(32768), 512u, 2u, 8u}, std::tuple{size_t(65536), 512u, 2u, 4u},
        std::tuple{size_t(131072), 512u, 2u, 2u}, std::tuple{size_t(1) << 20, 512u, 2u, 1u}}) {
    const auto c = NBodyKernelConfig::automatic(gpu, n);
    EXPECT_EQ(c.wg, wg) << n;
    EXPECT_EQ(c.bpi, bpi) << n;
    EXPECT_EQ(c.split, split) << n;
  }
  auto tiny = NBodyKernelConfig::automatic(gpu, 10);  // every body its own item, one group
  EXPECT_EQ(tiny.bpi, 1u);
  EXPECT_EQ(tiny.split, 1u);
  gpu.maxWorkGroup = 256;
  EXPECT_LE(NBodyKernelConfig::automatic(gpu, 1 << 24).wg, 256u);
  // CPUs keep the plain kernel.
  DeviceInfo cpu;
  cpu.type = CL_DEVICE_TYPE_CPU;
  cpu.computeUnits = 2;
  cpu.maxWorkGroup = 4096;
  EXPECT_EQ(NBodyKernelConfig::automatic(cpu, 8192).split, 1u);
  // Slices are whole tiles, never empty, never more than the tiles.
  EXPECT_EQ(NBodyKernelConfig::slices(1000, 64, 100), 16u);
  EXPECT_EQ(NBodyKernelConfig::slices(1000, 64, 7), 6u);  // 16 tiles: 6 slices of 3
  EXPECT_EQ(NBodyKernelConfig::slices(1, 64, 7), 1u);
  EXPECT_EQ(NBodyKernelConfig::slices(4096, 256, 1), 1u);
}

TEST(GravityKernel, DriftKicksAndMovesExactlyOnce) {
  // One body, no forces: x(t) = x0 + v t exactly through KDK (a = 0).
  Params params(nbodyParamDecl());
  params.set("dt", 0.25);
  NBodySim sim(test::context(), params, {Body{1, 2, 3, 0.5, -1, 2, 1}});
  for (int i = 0; i < 4; ++i) sim.step();
  const auto p = sim.readPositions();
  EXPECT_FLOAT_EQ(p[0].s[0], 1.5f);
  EXPECT_FLOAT_EQ(p[0].s[1], 1.0f);
  EXPECT_FLOAT_EQ(p[0].s[2], 5.0f);
  EXPECT_FLOAT_EQ(p[0].s[3], 1.0f);  // mass carried through the double buffer
  EXPECT_DOUBLE_EQ(sim.time(), 1.0);
  EXPECT_EQ(sim.steps(), 4u);
}

TEST(GravityKernel, PotentialMatchesReference) {
  const unsigned seed = test::freshSeed();
  auto bodies = randomBodies(37, seed);
  Params params(nbodyParamDecl());
  params.set("softening", 0.05);
  NBodySim sim(test::context(), params, bodies);
  const auto pos = sim.readPositions();
  double W = 0;
  const double eps2 = double(float(0.05 * 0.05));
  for (size_t i = 0; i < pos.size(); ++i)
    for (size_t j = i + 1; j < pos.size(); ++j) {
      const double dx = double(pos[j].s[0]) - pos[i].s[0], dy = double(pos[j].s[1]) - pos[i].s[1],
                   dz = double(pos[j].s[2]) - pos[i].s[2];
      W -= double(pos[i].s[3]) * pos[j].s[3] / std::sqrt(dx * dx + dy * dy + dz * dz + eps2);
    }
  const auto d = sim.diagnostics();
  EXPECT_NEAR(d.potential, W, 1e-12 * std::fabs(W)) << "seed " << seed;
}

}  // namespace
