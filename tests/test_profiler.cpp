#include "nbody.hpp"
#include "test_util.hpp"

#include <gtest/gtest.h>

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
