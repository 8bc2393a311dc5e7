// The VTK writer's own checks and the generic export of any simulation's
// state (Simulation::particleState()'s default). Values are read back by VTK itself in
// tests/check_vtk.py (CTest: vtk_export_readback).
#include "simulation.hpp"
#include "snapshot.hpp"
#include "test_util.hpp"
#include "vtk.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>

using namespace eddy;

namespace {

// A stand-in simulation with SPH-like state columns: exercises the default
// particleState() that a new simulation gets without writing any export code.
class FakeSim : public Simulation {
 public:
  explicit FakeSim(Context& ctx)
      : Simulation(ctx, decl()),
        pos_(ctx.createBuffer(CL_MEM_READ_WRITE, 2 * sizeof(cl_float4), "fake")) {}
  static const std::vector<ParamDesc>& decl() {
    static const std::vector<ParamDesc> d;
    return d;
  }
  std::string kind() const override { return "fake"; }
  size_t size() const override { return 2; }
  void step() override { ++steps_; }
  std::vector<std::string> diagColumns() const override { return {}; }
  std::vector<double> diagRow() override { return {}; }
  std::vector<std::string> stateColumns() const override {
    return {"vx", "x", "y", "z", "vy", "vz", "rho", "p", "m", "temperature"};
  }
  std::vector<std::vector<double>> stateRows() override {
    return {{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, {-1, -2, -3, -4, -5, -6, -7, -8, -9, -10}};
  }
  const cl::Buffer& positionBuffer() const override { return pos_; }

 private:
  cl::Buffer pos_;
};

}  // namespace

TEST(Export, DefaultFrameMapsStateColumnsToPointData) {
  FakeSim sim(test::context());
  const ParticleState f = sim.particleState();
  ASSERT_EQ(f.size(), 2u);
  EXPECT_EQ(f.positions, (std::vector<float>{2, 3, 4, -2, -3, -4}));
  ASSERT_EQ(f.arrays.size(), 5u);
  EXPECT_EQ(f.arrays[0].name, "velocity");
  EXPECT_EQ(f.arrays[0].components, 3u);
  EXPECT_EQ(f.arrays[0].values, (std::vector<float>{1, 5, 6, -1, -5, -6}));
  EXPECT_EQ(f.arrays[1].name, "density");
  EXPECT_EQ(f.arrays[2].name, "pressure");
  EXPECT_EQ(f.arrays[3].name, "mass");
  EXPECT_EQ(f.arrays[4].name, "temperature");
  EXPECT_EQ(f.arrays[4].values, (std::vector<float>{10, -10}));
  // Its blow-up check covers the position buffer by default.
  EXPECT_EQ(sim.finiteCheckBuffers().size(), 1u);
  SnapshotWriter w;
  EXPECT_THROW(sim.saveState(w), Error);  // no snapshot support unless implemented
}

TEST(Export, WriterRejectsInconsistentFramesAndEscapesNames) {
  const std::string dir = test::tempDir() + "/vtk-unit";
  std::filesystem::create_directories(dir);
  ParticleState f;
  f.positions = {0, 1, 2, 3, 4, 5, 6};  // not triples
  EXPECT_THROW(writeVtp(dir + "/a.vtp", f), Error);
  f.positions = {0, 1, 2, 3, 4, 5};
  f.arrays.push_back({"a<b&\"c\"", 1, {1.0f}});  // one value for two points
  EXPECT_THROW(writeVtp(dir + "/a.vtp", f), Error);
  EXPECT_FALSE(std::filesystem::exists(dir + "/a.vtp"));
  f.arrays[0].values = {1.0f, 2.0f};
  writeVtp(dir + "/a.vtp", f);
  const std::string text = test::slurp(dir + "/a.vtp");
  EXPECT_NE(text.find("Name=\"a&lt;b&amp;&quot;c&quot;\""), std::string::npos);
  // The appended block of the array: UInt64 byte count, then the raw floats.
  const size_t at = text.find("\n   _") + 5;
  uint64_t bytes = 0;
  std::memcpy(&bytes, text.data() + at, 8);
  EXPECT_EQ(bytes, 8u);
  float v[2];
  std::memcpy(v, text.data() + at + 8, 8);
  EXPECT_EQ(v[1], 2.0f);
}

TEST(Export, SeriesKeepsOneEntryPerStepAndAValidCollection) {
  const std::string dir = test::tempDir() + "/vtk-series/deeper";
  VtkSeries s(dir);
  ParticleState f;
  f.positions = {0, 0, 0};
  f.step = 0;
  s.add(f);
  f.step = 10;
  f.time = 0.5;
  s.add(f);
  f.time = 0.25;  // the same step again replaces its entry
  s.add(f);
  EXPECT_EQ(s.frames(), 2u);
  const std::string pvd = test::slurp(dir + "/eddy.pvd");
  EXPECT_NE(pvd.find("timestep=\"0.25\" group=\"\" part=\"0\" file=\"step_000000010.vtp\""),
            std::string::npos)
      << pvd;
  EXPECT_EQ(pvd.find("timestep=\"0.5\""), std::string::npos);
  EXPECT_NE(pvd.find("</VTKFile>"), std::string::npos);
  EXPECT_THROW(VtkSeries("/proc/no/such/place"), Error);
}
