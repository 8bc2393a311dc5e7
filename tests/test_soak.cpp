// Soak: many steps of every simulation with the host heap and the device
// allocations flat. The normal suite runs EDDY_SOAK_STEPS = 2000 (default);
// `scripts/test.sh --full` (CI) runs 100000 steps in the AddressSanitizer
// build, whose LeakSanitizer also fails the run on any leak at exit.
#include "factory.hpp"
#include "test_util.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <malloc.h>
#include <unistd.h>

extern "C" size_t __sanitizer_get_current_allocated_bytes() __attribute__((weak));

using namespace eddy;

namespace {

// Bytes the program has allocated and not freed (ASan's count under ASan,
// glibc's otherwise).
size_t heapInUse() {
  if (&__sanitizer_get_current_allocated_bytes != nullptr)
    return __sanitizer_get_current_allocated_bytes();
  return mallinfo2().uordblks;
}

uint64_t soakSteps() {
  const char* s = std::getenv("EDDY_SOAK_STEPS");
  return s && *s ? std::strtoull(s, nullptr, 10) : 2000;
}

// A small scene of each simulation for the soak. HOOK for new simulations
// (SPH): add its small, stable scene here; the test runs every name in
// simulationNames() and fails for one without an entry.
SceneSpec soakScene(const std::string& sim) {
  SceneSpec spec;
  spec.sim = sim;
  if (sim == "nbody") {
    spec.scene = "plummer";
    spec.n = 64;
  } else if (sim == "sph") {
    spec.scene = "dam_break";  // with soakParams(): a coarse column of ~100 particles
  } else {
    ADD_FAILURE() << "no soak scene for simulation '" << sim << "': add one in soakScene()";
  }
  return spec;
}

// PoCL releases the buffers of finished commands from its worker thread, a
// little after the last handle is gone: wait (bounded) for the count to settle.
DeviceMemoryInUse waitForRelease(const DeviceMemoryInUse& target) {
  test::context().queue().finish();
  for (int k = 0; k < 1000 && deviceMemoryInUse().buffers != target.buffers; ++k) usleep(10000);
  return deviceMemoryInUse();
}

class Soak : public ::testing::TestWithParam<std::string> {};

}  // namespace

TEST_P(Soak, HostHeapAndDeviceAllocationsStayFlat) {
  const SceneSpec spec = soakScene(GetParam());
  if (::testing::Test::HasFailure()) return;
  Params params(paramDecl(spec.sim));
  if (spec.sim == "sph") {
    params.set("spacing", 0.02);
    params.set("depth", 0.08);
  }
  const auto devStart = deviceMemoryInUse();
  {
    auto sim = makeSimulation(test::context(), spec, params);
    const uint64_t total = soakSteps(), warm = std::max<uint64_t>(total / 10, 200);
    // What a long headless run does: steps, the blow-up check every 100
    // steps, diagnostics and export read-backs now and then.
    auto run = [&](uint64_t steps) {
      for (uint64_t k = 0; k < steps; ++k) {
        sim->step();
        if (sim->steps() % 100 == 0) {
          ASSERT_FALSE(sim->pollFinite()) << "step " << sim->steps();
        }
        if (sim->steps() % 1000 == 0) sim->diagRow();
        if (sim->steps() % 5000 == 0) sim->particleState();
      }
      sim->context().queue().finish();
      sim->profiler().collect(true);
    };
    run(warm);
    const size_t heap0 = heapInUse();
    const auto dev0 = deviceMemoryInUse();
    run(total > warm ? total - warm : 0);
    const size_t heap1 = heapInUse();
    const auto dev1 = deviceMemoryInUse();
    std::printf("soak %s: %llu steps, heap %zu -> %zu bytes, device %lld -> %lld bytes in %lld "
                "buffers\n",
                spec.sim.c_str(), static_cast<unsigned long long>(sim->steps()), heap0, heap1,
                dev0.bytes, dev1.bytes, dev1.buffers);
    EXPECT_EQ(dev1.bytes, dev0.bytes);
    EXPECT_EQ(dev1.buffers, dev0.buffers);
    EXPECT_LT(double(heap1), double(heap0) + 256 * 1024) << "host heap grew";
    EXPECT_FALSE(sim->checkFiniteNow());
    EXPECT_GE(sim->steps(), std::max(total, warm));
  }
  const auto devEnd = waitForRelease(devStart);
  EXPECT_EQ(devEnd.bytes, devStart.bytes) << "device buffers outlived the simulation";
  EXPECT_EQ(devEnd.buffers, devStart.buffers);
}

INSTANTIATE_TEST_SUITE_P(AllSimulations, Soak, ::testing::ValuesIn(simulationNames()),
                         [](const auto& info) { return info.param; });
