// Faults and limits: the device-side blow-up check, device memory limits and
// accounting, kernel build failures, a missing OpenCL platform.
#include "factory.hpp"
#include "nbody.hpp"
#include "test_util.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <limits>
#include <random>
#include <unistd.h>

using namespace eddy;

namespace {

const std::string kCli = EDDY_CLI;

bool contains(const std::string& hay, const std::string& needle) {
  return hay.find(needle) != std::string::npos;
}

cl::Buffer upload(const std::vector<cl_float4>& v) {
  auto& ctx = test::context();
  cl::Buffer b = ctx.createBuffer(CL_MEM_READ_WRITE, v.size() * sizeof(cl_float4), "test");
  ctx.queue().enqueueWriteBuffer(b, CL_TRUE, 0, v.size() * sizeof(cl_float4), v.data());
  return b;
}

}  // namespace

// The check_finite kernel against a CPU count, on random data with NaN and
// +-inf planted at random places, for awkward counts.
TEST(FiniteCheck, KernelCountsMatchTheCpu) {
  const unsigned seed = test::freshSeed();
  std::mt19937 rng(seed);
  const float bad[] = {std::numeric_limits<float>::quiet_NaN(),
                       std::numeric_limits<float>::infinity(),
                       -std::numeric_limits<float>::infinity()};
  for (size_t n : {1u, 2u, 63u, 64u, 65u, 127u, 1031u, 4099u}) {
    std::vector<cl_float4> a(n), b(n);
    std::uniform_real_distribution<float> u(-1e30f, 1e30f);
    for (size_t i = 0; i < n; ++i)
      for (int k = 0; k < 4; ++k) {
        a[i].s[k] = u(rng);
        b[i].s[k] = u(rng);
      }
    const size_t plant = rng() % (n / 4 + 2);
    for (size_t p = 0; p < plant; ++p) {
      auto& v = (rng() % 2 ? a : b)[rng() % n];
      v.s[rng() % 4] = bad[rng() % 3];  // .w is not checked: a bad w must not count
    }
    size_t expect = 0;
    for (size_t i = 0; i < n; ++i) {
      bool ok = true;
      for (int k = 0; k < 3; ++k) ok = ok && std::isfinite(a[i].s[k]) && std::isfinite(b[i].s[k]);
      expect += !ok;
    }
    EXPECT_EQ(countNonFinite(test::context(), upload(a), upload(b), n), expect)
        << "n=" << n << " seed " << seed;
    // The same buffer twice counts each particle once.
    size_t expectA = 0;
    for (size_t i = 0; i < n; ++i)
      expectA += !(std::isfinite(a[i].s[0]) && std::isfinite(a[i].s[1]) && std::isfinite(a[i].s[2]));
    const cl::Buffer ba = upload(a);
    EXPECT_EQ(countNonFinite(test::context(), ba, ba, n), expectA) << "n=" << n;
  }
}

TEST(FiniteCheck, SimulationReportsStepAndCountOfABlowUp) {
  // A body at 3e38 (float max 3.4e38) per time unit with dt = 0.5 is at
  // 1.5e38 after step 1, 3e38 after step 2 and infinity after step 3; the
  // others' forces then turn NaN in the same step.
  std::vector<Body> b = {Body{0, 0, 0, 3e38, 0, 0, 1}, Body{5, 0, 0, 0, 0, 0, 1},
                         Body{-5, 0, 0, 0, 0, 0, 1}};
  Params params(nbodyParamDecl());
  params.set("dt", 0.5);
  NBodySim sim(test::context(), params, b);
  EXPECT_FALSE(sim.checkFiniteNow());  // the start is finite
  EXPECT_FALSE(sim.pollFinite());      // nothing pending yet
  for (int k = 0; k < 3; ++k) sim.step();
  // pollFinite returns the previous check's result (step 0, healthy) and
  // enqueues one at step 3; the next poll returns that.
  EXPECT_FALSE(sim.pollFinite());
  sim.step();
  const auto blow = sim.pollFinite();
  ASSERT_TRUE(blow);
  EXPECT_EQ(blow->step, 3u);
  EXPECT_EQ(blow->n, 3u);
  EXPECT_EQ(blow->particles, 3u);  // all three are pulled to inf
  EXPECT_TRUE(contains(blow->message("nbody"), "3 of 3 particles"));
  EXPECT_TRUE(contains(blow->message("nbody"), "at step 3"));
  const auto now = sim.checkFiniteNow();
  ASSERT_TRUE(now);
  EXPECT_EQ(now->step, 4u);
}

TEST(FiniteCheck, HeadlessRunExitsNamingStepAndCount) {
  const std::string dir = test::tempDir();
  test::writeFile(dir + "/boom.csv",
                  "x,y,z,vx,vy,vz,m\n0,0,0,3e38,0,0,1\n5,0,0,0,0,0,1\n-5,0,0,0,0,0,1\n");
  const auto r = test::run(kCli, "run --device cpu --ic " + dir + "/boom.csv --set dt=0.5 --steps 50 "
                                 "--check-every 10 --diag " + dir + "/boom-diag.csv --save " + dir +
                                 "/boom.snap --quiet");
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_TRUE(contains(r.err, "blew up: 3 of 3 particles")) << r.err;
  EXPECT_TRUE(contains(r.err, "at step 10")) << r.err;
  // The diagnostics up to the blow-up are kept; no snapshot of garbage is written.
  EXPECT_TRUE(std::filesystem::exists(dir + "/boom-diag.csv"));
  EXPECT_FALSE(std::filesystem::exists(dir + "/boom.snap"));
  // With the periodic check off, the run goes on, and the check at the end
  // still fails it (issue 9; tests/test_robustness_outputs.cpp checks the files).
  const auto off = test::run(kCli, "run --device cpu --ic " + dir + "/boom.csv --set dt=0.5 --steps 5 "
                                   "--check-every 0 --quiet");
  EXPECT_EQ(off.code, 1) << off.err;
}

TEST(DeviceMemory, CheckNamesTheLimitBeforeAllocating) {
  DeviceInfo info;
  info.name = "Test Device";
  info.globalMem = 1ull << 30;
  info.maxAlloc = 256ull << 20;
  EXPECT_NO_THROW(checkDeviceMemory(info, 512ull << 20, 128ull << 20, "x"));
  try {
    checkDeviceMemory(info, 512ull << 20, 300ull << 20, "1000 bodies");
    FAIL();
  } catch (const Error& e) {
    EXPECT_TRUE(contains(e.what(), "CL_DEVICE_MAX_MEM_ALLOC_SIZE = 256 MiB")) << e.what();
    EXPECT_TRUE(contains(e.what(), "1000 bodies needs a buffer of 300 MiB")) << e.what();
  }
  try {
    checkDeviceMemory(info, 2ull << 30, 1ull << 20, "many bodies");
    FAIL();
  } catch (const Error& e) {
    EXPECT_TRUE(contains(e.what(), "needs 2048 MiB of device memory; the device has 1024 MiB"))
        << e.what();
  }
  // N-body sizes: 16 bytes x 4 buffers + the potential per body.
  EXPECT_THROW(NBodySim::checkFits(info, 20'000'000), Error);
  EXPECT_NO_THROW(NBodySim::checkFits(info, 1'000'000));
}

TEST(DeviceMemory, TooManyBodiesForTheDeviceIsAClearErrorNotACrash) {
  // 2^31 - 1 bodies need 160 GiB: more than PoCL's device (the host's RAM
  // share) offers; refused before the scene or any buffer is made.
  const auto r = test::run(kCli, "run --device cpu --n 2147483647 --steps 1 --quiet");
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_TRUE(contains(r.err, "2147483647 bodies needs")) << r.err;
  EXPECT_TRUE(contains(r.err, "CL_DEVICE_")) << r.err;
}

TEST(DeviceMemory, LiveBuffersAreCountedAndReleased) {
  const auto before = deviceMemoryInUse();
  {
    Params params(nbodyParamDecl());
    NBodySim sim(test::context(), params, makeNBodyScene("plummer", 100, 1));
    const auto during = deviceMemoryInUse();
    const long long phi = test::context().info().fp64 ? 8 : 4;
    EXPECT_EQ(during.bytes - before.bytes, 100 * (4 * 16 + phi));
    EXPECT_EQ(during.buffers - before.buffers, 5);
    sim.checkFiniteNow();  // the check's counter
    EXPECT_EQ(deviceMemoryInUse().buffers - before.buffers, 6);
  }
  // PoCL releases buffers of finished commands from its worker thread, a
  // little after the last handle is gone: wait (bounded) for that.
  test::context().queue().finish();
  for (int k = 0; k < 1000 && deviceMemoryInUse().buffers != before.buffers; ++k) usleep(10000);
  const auto after = deviceMemoryInUse();
  EXPECT_EQ(after.bytes, before.bytes);
  EXPECT_EQ(after.buffers, before.buffers);
}

TEST(KernelBuild, BrokenKernelOverrideShowsTheBuildLog) {
  const std::string dir = test::tempDir() + "/broken-kernels";
  std::filesystem::create_directories(dir);
  test::writeFile(dir + "/nbody.cl", "__kernel void nbody_gravity(__global float4* p) {\n"
                                     "  this is not OpenCL C;\n}\n");
  const auto r = test::run("EDDY_KERNEL_DIR=" + dir + " " + kCli,
                           "run --device cpu --n 16 --steps 1 --quiet");
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_TRUE(contains(r.err, "building kernel program 'nbody.cl'")) << r.err;
  EXPECT_TRUE(contains(r.err, "CL_BUILD_PROGRAM_FAILURE")) << r.err;
  EXPECT_TRUE(contains(r.err, "build log")) << r.err;
  EXPECT_TRUE(contains(r.err, "error")) << r.err;  // the compiler's own diagnostics
}

TEST(Platform, NoOpenCLPlatformIsAClearError) {
  const std::string empty = test::tempDir() + "/no-icds";
  std::filesystem::create_directories(empty);
  for (const char* cmd : {"devices", "run --n 8 --steps 1 --quiet"}) {
    const auto r = test::run("OCL_ICD_VENDORS=" + empty + " " + kCli, cmd);
    EXPECT_EQ(r.code, 1) << cmd << "\n" << r.err;
    EXPECT_TRUE(contains(r.err, "no OpenCL platform found")) << r.err;
    EXPECT_TRUE(contains(r.err, "pocl-opencl-icd")) << r.err;
  }
}
