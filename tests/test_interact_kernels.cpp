// The front-end kernels (kernels/interact.cl) element by element against a
// double-precision CPU reference, on fresh random inputs and awkward sizes,
// and the N-body hooks built on them.
#include "interact.hpp"
#include "nbody.hpp"
#include "sph.hpp"
#include "rng.hpp"
#include "test_util.hpp"

#include <gtest/gtest.h>

#include <cmath>

using namespace eddy;

namespace {

std::vector<cl_float4> randomFloat4(size_t n, Rng& rng, double lo, double hi) {
  std::vector<cl_float4> v(n);
  for (auto& x : v)
    for (int k = 0; k < 4; ++k) x.s[k] = float(rng.uniform(lo, hi));
  return v;
}

cl::Buffer upload(const std::vector<cl_float4>& v) {
  auto& ctx = test::context();
  cl::Buffer b(ctx.context(), CL_MEM_READ_WRITE, std::max<size_t>(v.size(), 1) * sizeof(cl_float4));
  ctx.queue().enqueueWriteBuffer(b, CL_TRUE, 0, v.size() * sizeof(cl_float4), v.data());
  return b;
}

template <class T>
std::vector<T> download(const cl::Buffer& b, size_t n) {
  std::vector<T> v(n);
  test::context().queue().enqueueReadBuffer(b, CL_TRUE, 0, n * sizeof(T), v.data());
  return v;
}

class InteractSizes : public ::testing::TestWithParam<size_t> {};

TEST_P(InteractSizes, PushMatchesReference) {
  const size_t n = GetParam();
  Rng rng(test::freshSeed() + unsigned(n));
  const auto pos = randomFloat4(n, rng, -1, 1);
  const auto vel = randomFloat4(n, rng, -1, 1);
  Ray ray;
  // From a random point outside the cube towards a random point inside it
  // (not normalised: the kernel wrapper normalises).
  ray.origin = {float(rng.uniform(-2, 2)), float(rng.uniform(-2, 2)), 3.f};
  ray.dir = {float(rng.uniform(-0.8, 0.8)) - ray.origin[0],
             float(rng.uniform(-0.8, 0.8)) - ray.origin[1], float(rng.uniform(-0.8, 0.8)) - 3.f};
  const float radius = float(rng.uniform(0.3, 1.5));
  const Vec3f dv{float(rng.uniform(-2, 2)), float(rng.uniform(-2, 2)), float(rng.uniform(-2, 2))};
  InteractKernels k(test::context());
  cl::Buffer p = upload(pos), v = upload(vel);
  k.push(p, v, n, ray, radius, dv).wait();
  const auto got = download<cl_float4>(v, n);
  const auto posAfter = download<cl_float4>(p, n);

  // Reference in double.
  const double len = std::sqrt(double(ray.dir[0]) * ray.dir[0] + double(ray.dir[1]) * ray.dir[1] +
                               double(ray.dir[2]) * ray.dir[2]);
  const double d[3] = {ray.dir[0] / len, ray.dir[1] / len, ray.dir[2] / len};
  size_t pushed = 0;
  for (size_t i = 0; i < n; ++i) {
    double r[3], t = 0;
    for (int c = 0; c < 3; ++c) {
      r[c] = double(pos[i].s[c]) - ray.origin[c];
      t += r[c] * d[c];
    }
    t = std::max(t, 0.0);
    double q = 0;
    for (int c = 0; c < 3; ++c) q += (r[c] - t * d[c]) * (r[c] - t * d[c]);
    q /= double(radius) * radius;
    const double w = q < 1 ? (1 - q) * (1 - q) : 0;
    pushed += q < 1;
    for (int c = 0; c < 3; ++c) {
      const double want = double(vel[i].s[c]) + w * dv[c];
      EXPECT_NEAR(got[i].s[c], want, 1e-5 * (1 + std::fabs(want))) << "i=" << i << " c=" << c;
    }
    EXPECT_EQ(got[i].s[3], vel[i].s[3]) << "w of the velocity is kept";
    for (int c = 0; c < 4; ++c) EXPECT_EQ(posAfter[i].s[c], pos[i].s[c]) << "positions untouched";
  }
  if (n >= 1000) {
    EXPECT_GT(pushed, 0u) << "the ray should reach some particles";
  }
}

TEST_P(InteractSizes, ColourFieldsMatchReference) {
  const size_t n = GetParam();
  Rng rng(test::freshSeed() + 7 * unsigned(n));
  const auto v4 = randomFloat4(n, rng, -3, 3);
  InteractKernels k(test::context());
  cl::Buffer in = upload(v4);
  cl::Buffer out(test::context().context(), CL_MEM_READ_WRITE, n * sizeof(float));
  k.speed(in, out, n).wait();
  const auto speed = download<float>(out, n);
  k.componentW(in, out, n).wait();
  const auto w = download<float>(out, n);
  for (size_t i = 0; i < n; ++i) {
    const double s = std::sqrt(double(v4[i].s[0]) * v4[i].s[0] + double(v4[i].s[1]) * v4[i].s[1] +
                               double(v4[i].s[2]) * v4[i].s[2]);
    EXPECT_NEAR(speed[i], s, 1e-6 * (1 + s)) << "i=" << i;
    EXPECT_EQ(w[i], v4[i].s[3]) << "i=" << i;
  }
  // float2 components (SPH density, pressure): reuse the float4 data as 2n float2.
  std::vector<float> c0, c1;
  for (unsigned c = 0; c < 2; ++c) {
    k.component2(in, out, n, c).wait();
    (c ? c1 : c0) = download<float>(out, n);
  }
  for (size_t i = 0; i < n; ++i) {
    const size_t f = 2 * i;  // float index of float2 number i in the float4 array
    EXPECT_EQ(c0[i], v4[f / 4].s[f % 4]) << "i=" << i;
    EXPECT_EQ(c1[i], v4[(f + 1) / 4].s[(f + 1) % 4]) << "i=" << i;
  }
  EXPECT_THROW(k.component2(in, out, n, 2), Error);
}

INSTANTIATE_TEST_SUITE_P(Sizes, InteractSizes, ::testing::Values(1, 63, 97, 1000, 4099));

TEST(InteractKernels, RejectsBadRayAndRadius) {
  InteractKernels k(test::context());
  cl::Buffer b = upload(std::vector<cl_float4>(4));
  Ray zero;
  zero.dir = {0, 0, 0};
  EXPECT_THROW(k.push(b, b, 4, zero, 1.f, {1, 0, 0}), Error);
  EXPECT_THROW(k.push(b, b, 4, Ray{}, 0.f, {1, 0, 0}), Error);
  EXPECT_THROW(k.push(b, b, 4, Ray{}, NAN, {1, 0, 0}), Error);
}

TEST(NBodyHooks, ColourFieldsAndPush) {
  Params params(nbodyParamDecl());
  auto bodies = makeNBodyScene("plummer", 257, test::freshSeed());
  NBodySim sim(test::context(), params, bodies);
  ASSERT_EQ(sim.colorFields(), (std::vector<std::string>{"speed", "mass"}));
  sim.step();
  cl::Buffer out(test::context().context(), CL_MEM_READ_WRITE, sim.size() * sizeof(float));
  sim.writeColorField(0, out).wait();
  const auto speed = download<float>(out, sim.size());
  sim.writeColorField(1, out).wait();
  const auto mass = download<float>(out, sim.size());
  const auto v = sim.readVelocities();
  const auto p = sim.readPositions();
  for (size_t i = 0; i < sim.size(); ++i) {
    const double s = std::sqrt(double(v[i].s[0]) * v[i].s[0] + double(v[i].s[1]) * v[i].s[1] +
                               double(v[i].s[2]) * v[i].s[2]);
    EXPECT_NEAR(speed[i], s, 1e-6 * (1 + s));
    EXPECT_EQ(mass[i], p[i].s[3]);
  }
  EXPECT_THROW(sim.writeColorField(2, out), Error);

  // A push along a ray through the centre with a radius covering everything
  // adds dv * w to every body: the total momentum changes accordingly.
  ASSERT_TRUE(sim.supportsPush());
  Ray ray;
  ray.origin = {0, 0, 100};
  ray.dir = {0, 0, -1};
  sim.push(ray, 1e4f, {0.5f, 0, 0}).wait();
  const auto v2 = sim.readVelocities();
  for (size_t i = 0; i < sim.size(); ++i) {
    const double dx = p[i].s[0], dy = p[i].s[1];
    const double q = (dx * dx + dy * dy) / 1e8;
    EXPECT_NEAR(v2[i].s[0] - v[i].s[0], 0.5 * (1 - q) * (1 - q), 1e-5);
    EXPECT_EQ(v2[i].s[1], v[i].s[1]);
  }
  EXPECT_FALSE(sim.supportsAddBlock());
  EXPECT_THROW(sim.addBlock(Box{}), Error);
  EXPECT_FALSE(sim.domain().has_value());
}

}  // namespace

TEST(SphHooks, ColourFieldsPushAndDomain) {
  Params params(sphParamDecl());
  params.set("spacing", 0.02);
  params.set("depth", 0.08);
  SphSim sim(test::context(), params, makeSphScene("dam_break", params));
  ASSERT_EQ(sim.colorFields(), (std::vector<std::string>{"speed", "density", "pressure"}));
  for (int i = 0; i < 3; ++i) sim.step();
  const size_t n = sim.size();
  cl::Buffer out(test::context().context(), CL_MEM_READ_WRITE, n * sizeof(float));
  std::vector<float> f[3];
  for (size_t k = 0; k < 3; ++k) {
    sim.writeColorField(k, out).wait();
    f[k] = download<float>(out, n);
  }
  EXPECT_THROW(sim.writeColorField(3, out), Error);
  const auto v = sim.readVelocities();
  const auto rp = sim.readDensityPressure();
  for (size_t i = 0; i < n; ++i) {
    const double s = std::sqrt(double(v[i].s[0]) * v[i].s[0] + double(v[i].s[1]) * v[i].s[1] +
                               double(v[i].s[2]) * v[i].s[2]);
    EXPECT_NEAR(f[0][i], s, 1e-6 * (1 + s));
    EXPECT_EQ(f[1][i], rp[i].s[0]);
    EXPECT_EQ(f[2][i], rp[i].s[1]);
  }
  const auto box = sim.domain();
  ASSERT_TRUE(box.has_value());
  for (int a = 0; a < 3; ++a) EXPECT_FLOAT_EQ(box->hi[a], float(sim.tank()[a]));
  EXPECT_FLOAT_EQ(sim.particleRadius(), 0.01f);
  // Push along +x through the whole tank: every particle near the ray speeds up in x.
  ASSERT_TRUE(sim.supportsPush());
  const auto before = sim.readVelocities();
  const auto pos = sim.readPositions();
  Ray ray;
  ray.origin = {0, pos[0].s[1], pos[0].s[2]};
  ray.dir = {1, 0, 0};
  sim.push(ray, 0.05f, {0.5f, 0, 0}).wait();
  const auto after = sim.readVelocities();
  EXPECT_GT(after[0].s[0] - before[0].s[0], 0.0f);
  EXPECT_NEAR(after[0].s[0] - before[0].s[0], 0.5f, 1e-5f);  // on the ray: full dv
}

TEST(SphHooks, TimeFollowsTheDeviceClockWithoutBlocking) {
  Params params(sphParamDecl());
  params.set("spacing", 0.02);
  params.set("depth", 0.08);
  SphSim sim(test::context(), params, makeSphScene("dam_break", params));
  for (int i = 0; i < 40; ++i) sim.step();
  // The host may run far ahead of the device: the read in flight can be old,
  // and when it completed during those steps decides when the next one was
  // issued. Once the device keeps up, each step takes a completed read and a
  // fresh one is issued at most 8 steps after the last, so within 9 steps the
  // time seen is at most 9 steps old, and it never runs ahead of the device.
  for (int k = 0; k < 9; ++k) {
    sim.finish();
    sim.step();
  }
  const ClockSample c = sim.clockSample();
  const double seen = sim.time();
  EXPECT_GT(seen, 0.0);
  EXPECT_EQ(seen, c.time);
  EXPECT_GE(c.step + 9, sim.steps()) << "clock of step " << c.step << " after step " << sim.steps();
  const double exact = sim.syncTime();
  EXPECT_LE(seen, exact);
  EXPECT_GT(seen, 0.75 * exact);  // the clock after step >= 40 of 49
}
