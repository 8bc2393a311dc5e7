// Launches replayed as command buffers (sim/core/launch_batch.hpp) against
// the same launches made one by one and a double-precision CPU reference.
#include "factory.hpp"
#include "launch_batch.hpp"
#include "sph.hpp"
#include "sph_run_cases.hpp"
#include "test_util.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <random>
#include <stdexcept>
#include <vector>

using namespace eddy;

namespace {

const char* kSource = R"(
__kernel void batch_lin(__global float* a, const uint n, const float m, const float c)
{ const uint i = get_global_id(0); if (i < n) a[i] = a[i] * m + c; }
__kernel void batch_mix(__global float* a, __global const float* b, const uint n, const float w)
{ const uint i = get_global_id(0); if (i < n) a[i] = a[i] - w * b[(i * 7u + 3u) % n]; }
)";

struct Programs {
  cl::Program program;
  cl::Kernel lin, mix;
  Programs() : program(test::context().context(), std::string(kSource)) {
    try {
      program.build({test::context().device()});
      lin = cl::Kernel(program, "batch_lin");
      mix = cl::Kernel(program, "batch_mix");
    } catch (const cl::Error& e) {
      ADD_FAILURE() << describe(e) << " "
                    << program.getBuildInfo<CL_PROGRAM_BUILD_LOG>(test::context().device());
      throw;
    }
  }
};

// One "step" of the test sequence: `rounds` pairs of launches (lin on x, mix
// of x with y), the roles of the two buffers swapped with the step's parity
// (as the particle buffers are), a flush after round `cut` (a poll) when cut
// is below rounds. Constants depend on the round, so a recording replayed with
// the wrong arguments or out of order gives other values.
struct Step {
  unsigned rounds, cut;
};
constexpr Step kSteps[] = {{3, 9}, {3, 1}, {2, 9}, {3, 9}, {3, 1}, {2, 9}};

float linM(unsigned r) { return 0.75f + 0.125f * float(r); }
float linC(unsigned r) { return 0.5f - 0.25f * float(r); }
float mixW(unsigned r) { return 0.0625f * float(r + 1); }

void referenceStep(std::vector<double>& x, std::vector<double>& y, unsigned k) {
  const Step s = kSteps[k % std::size(kSteps)];
  std::vector<double>& a = k % 2 ? y : x;
  const std::vector<double>& b = k % 2 ? x : y;
  const size_t n = a.size();
  for (unsigned r = 0; r < s.rounds; ++r) {
    for (auto& v : a) v = v * linM(r) + linC(r);
    for (size_t i = 0; i < n; ++i) a[i] -= double(mixW(r)) * b[(i * 7 + 3) % n];
  }
}

void launchStep(LaunchBatch& batch, Programs& p, cl::Buffer& x, cl::Buffer& y, cl_uint n, unsigned k) {
  const Step s = kSteps[k % std::size(kSteps)];
  cl::Buffer& a = k % 2 ? y : x;
  const cl::Buffer& b = k % 2 ? x : y;
  const EnqueueArgs range(test::context().queue(), cl::NDRange(roundUp(n, 64)), cl::NDRange(64));
  LaunchBatch::Scope scope(&batch);
  for (unsigned r = 0; r < s.rounds; ++r) {
    if (r == s.cut) batch.flush();
    const cl_float m = linM(r), c = linC(r), w = mixW(r);
    if (batch.deferring()) {
      batch.add(p.lin, range, a, n, m, c);
      batch.add(p.mix, range, a, b, n, w);
    } else {
      cl_uint i = 0;
      p.lin.setArg(i++, a), p.lin.setArg(i++, n), p.lin.setArg(i++, m), p.lin.setArg(i++, c);
      test::context().queue().enqueueNDRangeKernel(p.lin, cl::NullRange, range.global, range.local);
      i = 0;
      p.mix.setArg(i++, a), p.mix.setArg(i++, b), p.mix.setArg(i++, n), p.mix.setArg(i++, w);
      test::context().queue().enqueueNDRangeKernel(p.mix, cl::NullRange, range.global, range.local);
    }
  }
  scope.close();
}

// A batch switched on, or nullptr with the reason to skip: the device offers
// no command buffers, or EDDY_COMMAND_BUFFERS decides for every batch.
std::unique_ptr<LaunchBatch> enabledBatch(std::string& why) {
  auto b = std::make_unique<LaunchBatch>(test::context());
  if (!b->supported()) why = "the device offers no cl_khr_command_buffer";
  else if (b->forced()) why = "EDDY_COMMAND_BUFFERS is set";
  else b->setEnabled(true);
  return why.empty() && b->enabled() ? std::move(b) : nullptr;
}

// n floats of `value` on the device.
cl::Buffer filled(cl_uint n, float value) {
  std::vector<float> v(n, value);
  cl::Buffer x(test::context().context(), CL_MEM_READ_WRITE, n * sizeof(float));
  test::context().queue().enqueueWriteBuffer(x, CL_TRUE, 0, n * sizeof(float), v.data());
  return x;
}

}  // namespace

// Element by element against a double reference and bit for bit against the
// same launches made one by one, at awkward sizes, on fresh random inputs.
TEST(LaunchBatch, ReplaysMatchDirectLaunchesAndTheReference) {
  {
    std::string why;
    if (!enabledBatch(why)) GTEST_SKIP() << why;
  }
  Programs p;
  std::mt19937 rng(test::freshSeed());
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  for (const cl_uint n : {1u, 7u, 64u, 1021u, 4099u}) {
    std::vector<float> x0(n), y0(n);
    for (auto& v : x0) v = u(rng);
    for (auto& v : y0) v = u(rng);
    std::vector<float> got[2];
    uint64_t replayed = 0;
    for (int mode = 0; mode < 2; ++mode) {
      auto& q = test::context().queue();
      cl::Buffer x(test::context().context(), CL_MEM_READ_WRITE, n * sizeof(float));
      cl::Buffer y(test::context().context(), CL_MEM_READ_WRITE, n * sizeof(float));
      q.enqueueWriteBuffer(x, CL_TRUE, 0, n * sizeof(float), x0.data());
      q.enqueueWriteBuffer(y, CL_TRUE, 0, n * sizeof(float), y0.data());
      LaunchBatch batch(test::context());
      batch.setEnabled(mode == 1);
      ASSERT_EQ(batch.enabled(), mode == 1);
      for (unsigned k = 0; k < 24; ++k) launchStep(batch, p, x, y, n, k);
      got[mode].resize(2 * size_t(n));
      q.enqueueReadBuffer(x, CL_TRUE, 0, n * sizeof(float), got[mode].data());
      q.enqueueReadBuffer(y, CL_TRUE, 0, n * sizeof(float), got[mode].data() + n);
      if (mode == 1) {
        replayed = batch.stats().replayedLaunches;
        EXPECT_GT(batch.stats().replays, 0u) << n;
        EXPECT_GT(batch.stats().recordings, 0u) << n;
        // Every deferred launch went to the device once, one way or the other.
        unsigned total = 0;
        for (unsigned k = 0; k < 24; ++k) total += 2 * kSteps[k % std::size(kSteps)].rounds;
        EXPECT_EQ(batch.stats().replayedLaunches + batch.stats().directLaunches, total) << n;
      } else {
        EXPECT_EQ(batch.stats().replays, 0u);
        EXPECT_EQ(batch.stats().directLaunches, 0u);  // nothing deferred when off
      }
    }
    EXPECT_GT(replayed, 0u);
    EXPECT_EQ(std::memcmp(got[0].data(), got[1].data(), got[0].size() * sizeof(float)), 0) << "n " << n;
    std::vector<double> rx(x0.begin(), x0.end()), ry(y0.begin(), y0.end());
    for (unsigned k = 0; k < 24; ++k) referenceStep(rx, ry, k);
    for (cl_uint i = 0; i < n; ++i) {
      EXPECT_NEAR(got[1][i], rx[i], 1e-4 * (1.0 + std::fabs(rx[i]))) << "n " << n << " x[" << i << "]";
      EXPECT_NEAR(got[1][n + i], ry[i], 1e-4 * (1.0 + std::fabs(ry[i]))) << "n " << n << " y[" << i << "]";
    }
  }
}

// An exception inside a scope drops what it deferred: nothing of the lost
// step reaches the device later.
TEST(LaunchBatch, AnExceptionDropsTheDeferredLaunches) {
  std::string why;
  const auto owned = enabledBatch(why);
  if (!owned) GTEST_SKIP() << why;
  LaunchBatch& batch = *owned;
  Programs p;
  auto& q = test::context().queue();
  const cl_uint n = 5;
  std::vector<float> v(n);
  cl::Buffer x = filled(n, 1.0f);
  const EnqueueArgs range(q, cl::NDRange(64), cl::NDRange(64));
  try {
    LaunchBatch::Scope scope(&batch);
    batch.add(p.lin, range, x, n, 2.0f, 1.0f);
    throw std::runtime_error("lost step");
  } catch (const std::runtime_error&) {
  }
  EXPECT_FALSE(batch.deferring());
  batch.flush();
  {
    LaunchBatch::Scope scope(&batch);
    batch.add(p.lin, range, x, n, 1.0f, 0.5f);
  }  // closed by the destructor: flushed
  q.enqueueReadBuffer(x, CL_TRUE, 0, n * sizeof(float), v.data());
  for (float f : v) EXPECT_EQ(f, 1.5f);
  EXPECT_EQ(batch.stats().directLaunches, 1u);
}

// Whole SPH runs: the step's launches batched (polls and reads flush them)
// give the same particles bit for bit as launching one by one, for both
// solvers and with solids, bodies and a piston (wave_tank).
TEST(LaunchBatch, SphRunsAreBitIdenticalWithCommandBuffers) {
  {
    std::string why;
    if (!enabledBatch(why)) GTEST_SKIP() << why;
  }
  for (const auto& c : test::sphRunCases(150, 40))
    test::expectSphRunsBitIdentical(
        c,
        [](SphSim& s, int run) {
          LaunchBatch* b = s.profiler().batch();
          ASSERT_NE(b, nullptr);
          b->setEnabled(run == 1);
        },
        [](SphSim& s, int run) {
          const LaunchBatch* b = s.profiler().batch();
          if (run == 1) {
            EXPECT_GT(b->stats().replays, 0u);
            EXPECT_GT(b->stats().replayedLaunches, b->stats().directLaunches);
          }
        });
}

// A launch that waits on events is not batched: what was deferred before it
// goes to the queue first, then it, in that order.
TEST(LaunchBatch, ALaunchWithAWaitListKeepsItsPlace) {
  std::string why;
  const auto owned = enabledBatch(why);
  if (!owned) GTEST_SKIP() << why;
  LaunchBatch& batch = *owned;
  Programs p;
  auto& q = test::context().queue();
  const cl_uint n = 3;
  std::vector<float> v(n);
  cl::Buffer x = filled(n, 1.0f);
  cl::Event marker;
  q.enqueueMarkerWithWaitList(nullptr, &marker);
  {
    LaunchBatch::Scope scope(&batch);
    batch.add(p.lin, EnqueueArgs(test::context().launchQueue(), cl::NDRange(64), cl::NDRange(64)), x, n,
              2.0f, 0.0f);  // deferred: 2
    batch.add(p.lin, EnqueueArgs(test::context().launchQueue(), marker, cl::NDRange(64), cl::NDRange(64)),
              x, n, 1.0f, 3.0f);  // waits: the one before goes first, 5
    batch.add(p.lin, EnqueueArgs(test::context().launchQueue(), cl::NDRange(64), cl::NDRange(64)), x, n,
              0.5f, 0.0f);  // deferred again: 2.5
    scope.close();
  }
  q.enqueueReadBuffer(x, CL_TRUE, 0, n * sizeof(float), v.data());
  for (float f : v) EXPECT_EQ(f, 2.5f);
  EXPECT_EQ(batch.stats().directLaunches, 2u);  // the deferred two, each seen once
}
