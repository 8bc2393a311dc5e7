#include "nbody.hpp"
#include "sph.hpp"
#include "test_util.hpp"

#include <gtest/gtest.h>

#include <map>

using namespace eddy;

TEST(Profiler, CollectsEveryPhaseOfEveryStepWithoutFinish) {
  Params params(nbodyParamDecl());
  NBodySim sim(test::context(), params, makeNBodyScene("plummer", 300, 1));
  sim.profiler().reset();
  for (int i = 0; i < 10; ++i) sim.step();
  sim.profiler().collect(true);
  const auto st = sim.profiler().stats();
  ASSERT_EQ(st.size(), 2u);  // gravity (first seen at start-up), drift
  for (const auto& s : st) {
    EXPECT_EQ(s.count, 10u) << s.name;
    EXPECT_GT(s.meanMs, 0.0) << s.name;
    EXPECT_LE(s.minMs, s.meanMs);
    EXPECT_GE(s.maxMs, s.meanMs);
  }
  EXPECT_EQ(sim.profiler().stepHistoryMs().size(), 10u);
  EXPECT_EQ(sim.profiler().pending(), 0u);
  const std::string table = sim.profiler().table();
  EXPECT_NE(table.find("gravity"), std::string::npos);
  EXPECT_NE(table.find("drift"), std::string::npos);
}

TEST(Profiler, WindowIsBounded) {
  Profiler p(4);
  // Markers on the profiling queue give start/end times.
  for (int i = 0; i < 10; ++i) {
    cl::Event e;
    test::context().queue().enqueueMarkerWithWaitList(nullptr, &e);
    p.record("marker", e);
    p.endStep();
  }
  p.collect(true);
  EXPECT_EQ(p.stats().at(0).count, 10u);
  EXPECT_LE(p.stepHistoryMs().size(), 4u);
}

TEST(ClErrors, NamesAndDescriptions) {
  EXPECT_EQ(clErrorName(CL_OUT_OF_RESOURCES), "CL_OUT_OF_RESOURCES");
  EXPECT_EQ(clErrorName(CL_INVALID_WORK_GROUP_SIZE), "CL_INVALID_WORK_GROUP_SIZE");
  EXPECT_EQ(clErrorName(-9999), "CL_UNKNOWN_ERROR(-9999)");
  const std::string d = describe(cl::Error(CL_OUT_OF_RESOURCES, "clEnqueueNDRangeKernel"));
  EXPECT_EQ(d, "clEnqueueNDRangeKernel failed: CL_OUT_OF_RESOURCES (-5)");
}

TEST(ClErrors, BuildFailureCarriesTheLog) {
  try {
    test::context().buildProgram("nbody.cl", "-DNBODY_WG=banana");
    FAIL() << "a broken build succeeded";
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("nbody.cl"), std::string::npos) << what;
    EXPECT_NE(what.find("build log"), std::string::npos) << what;
    EXPECT_NE(what.find("banana"), std::string::npos) << what;
  }
}

TEST(Devices, SelectionBySpec) {
  const auto all = enumerateDevices();
  ASSERT_FALSE(all.empty());
  EXPECT_NO_THROW(selectDevice("0:0"));
  EXPECT_THROW(selectDevice("7:7"), Error);
  EXPECT_THROW(selectDevice("banana"), Error);
  EXPECT_THROW(selectDevice("1:"), Error);
  const auto d = selectDevice("");
  EXPECT_FALSE(d.name.empty());
  EXPECT_NE(formatDeviceList(all).find("cl_khr_gl_sharing"), std::string::npos);
}

// profile_every = K: one step in K is timed (every phase's launches of steps
// 0, K, 2K, ... have events), the others run without events, and the
// simulation is the same bit for bit as with every step timed.
TEST(Profiler, SphSamplesOneStepInKAndComputesTheSame) {
  struct Run {
    std::vector<cl_float4> pos;
    uint64_t steps = 0, sampled = 0, history = 0;
    size_t pending = 0;
    std::map<std::string, uint64_t> launches;
    double estimate = 0;
  };
  auto run = [](int every) {
    Params p(sphParamDecl());
    p.set("spacing", 0.005);
    p.setAssignment("solver=dfsph");
    p.set("profile_every", every);
    SphSim sim(test::context(), p, makeSphScene("dam_break", p, {}));
    sim.profiler().reset();  // the set-up's launches aside
    for (int i = 0; i < 10; ++i) sim.step();
    Profiler& prof = sim.profiler();
    prof.collect(true);
    Run r;
    r.pos = sim.readPositions();
    r.steps = prof.steps();
    r.sampled = prof.sampledSteps();
    r.history = prof.stepHistoryMs().size();
    r.pending = prof.pending();
    for (const auto& s : prof.stats()) r.launches[s.name] = s.count;
    r.estimate = prof.allStepsMs(3.0);
    return r;
  };
  const Run all = run(1), sampled = run(4);
  ASSERT_EQ(all.pos.size(), sampled.pos.size());
  for (size_t i = 0; i < all.pos.size(); ++i)
    for (int c = 0; c < 3; ++c) ASSERT_EQ(all.pos[i].s[c], sampled.pos[i].s[c]) << i;
  EXPECT_EQ(all.steps, 10u);
  EXPECT_EQ(all.sampled, 10u);
  EXPECT_EQ(sampled.steps, 10u);
  EXPECT_EQ(sampled.sampled, 3u);  // steps 0, 4, 8
  EXPECT_EQ(sampled.pending, 0u);
  EXPECT_EQ(sampled.history, 3u);
  // Phases launched once per step: in every step, or in one step of four.
  for (const char* phase : {"hash", "reorder", "neighbours", "dfsph_density", "integrate"}) {
    EXPECT_EQ(all.launches.count(phase) ? all.launches.at(phase) : 0u, 10u) << phase;
    EXPECT_EQ(sampled.launches.count(phase) ? sampled.launches.at(phase) : 0u, 3u) << phase;
  }
  EXPECT_NEAR(all.estimate, 3.0, 1e-12);
  EXPECT_NEAR(sampled.estimate, 10.0, 1e-12);  // 3 ms over 3 sampled steps: 10 over 10
}
