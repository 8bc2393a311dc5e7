// The desktop app end to end under Xvfb (Mesa llvmpipe): start `eddy` with
// each simulation, render a few frames, write a screenshot, and check that the
// image is not blank and the particles are where the scene puts them.
#include "factory.hpp"
#include "gl.hpp"
#include "particle_buffers.hpp"
#include "snapshot.hpp"
#include "sph.hpp"
#include "test_util.hpp"
#include "xvfb.hpp"

#include <GLFW/glfw3.h>
#include <gtest/gtest.h>
#include <stb_image.h>

#include <algorithm>
#include <filesystem>
#include <cmath>
#include <memory>

using namespace eddy;

namespace {

struct Image {
  int w = 0, h = 0;
  std::vector<unsigned char> rgb;
  const unsigned char* at(int x, int y) const { return &rgb[(size_t(y) * size_t(w) + size_t(x)) * 3]; }
};

Image load(const std::string& path) {
  Image im;
  int n = 0;
  unsigned char* p = stbi_load(path.c_str(), &im.w, &im.h, &n, 3);
  if (!p) return im;
  im.rgb.assign(p, p + size_t(im.w) * size_t(im.h) * 3);
  stbi_image_free(p);
  return im;
}

// Pixels clearly brighter than the background gradient (whose brightest
// channel stays below ~60): the particles.
struct Lit {
  size_t count = 0;
  double cx = 0, cy = 0;  // centroid, as a fraction of width / height
};

Lit litPixels(const Image& im, int threshold = 100) {
  Lit l;
  for (int y = 0; y < im.h; ++y)
    for (int x = 0; x < im.w; ++x) {
      const unsigned char* p = im.at(x, y);
      if (std::max({p[0], p[1], p[2]}) > threshold) {
        ++l.count;
        l.cx += x;
        l.cy += y;
      }
    }
  if (l.count) {
    l.cx /= double(l.count) * im.w;
    l.cy /= double(l.count) * im.h;
  }
  return l;
}

class GuiTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    server_ = std::make_unique<test::Xvfb>();
    if (!server_->display().empty()) {
      setenv("DISPLAY", server_->display().c_str(), 1);
      unsetenv("WAYLAND_DISPLAY");
    }
  }
  static void TearDownTestSuite() { server_.reset(); }
  void SetUp() override {
    ASSERT_FALSE(server_->display().empty()) << server_->error();
  }
  // Runs eddy with `args` and returns the screenshot.
  Image shoot(const std::string& name, const std::string& args, test::Result* result = nullptr) {
    const std::string png = test::tempDir() + "/" + name + ".png";
    std::remove(png.c_str());
    const test::Result r =
        test::run(EDDY_APP, args + " --size 640x400 --hide-panel --screenshot " + png);
    if (result) *result = r;
    EXPECT_EQ(r.code, 0) << r.err;
    return load(png);
  }
  static std::unique_ptr<test::Xvfb> server_;
};
std::unique_ptr<test::Xvfb> GuiTest::server_;

TEST_F(GuiTest, NBodyPlummerIsDrawnAtTheCentre) {
  test::Result r;
  const Image im = shoot("nbody", "--sim nbody --scene plummer --n 2048 --frames 3 --color none", &r);
  ASSERT_EQ(im.w, 640) << "no screenshot written: " << r.err;
  ASSERT_EQ(im.h, 400);
  const Lit l = litPixels(im);
  EXPECT_GT(l.count, size_t(0.005 * im.w * im.h)) << "the image is blank";
  EXPECT_LT(l.count, size_t(0.6 * im.w * im.h)) << "the image is saturated";
  // The Plummer sphere sits at the origin and the view is fitted to it.
  EXPECT_NEAR(l.cx, 0.5, 0.06);
  EXPECT_NEAR(l.cy, 0.5, 0.06);
  // The host-copy path ran (PoCL offers no cl_khr_gl_sharing) and says why.
  EXPECT_NE(r.err.find("host copy"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("cl_khr_gl_sharing"), std::string::npos) << r.err;
}

TEST_F(GuiTest, BothHostCopyVariantsDrawTheSameImage) {
  // Paused: the initial scene, so both runs draw identical positions.
  test::Result a, b;
  const std::string args = "--sim nbody --scene galaxies --n 3000 --frames 4 --paused";
  const Image pm = shoot("persistent", args + " --no-gl-sharing", &a);
  const Image sd = shoot("subdata", args + " --no-gl-sharing --no-persistent-map", &b);
  EXPECT_NE(a.err.find("persistent mapped"), std::string::npos) << a.err;
  EXPECT_NE(a.err.find("--no-gl-sharing"), std::string::npos) << a.err;
  EXPECT_NE(b.err.find("glBufferSubData"), std::string::npos) << b.err;
  ASSERT_EQ(pm.rgb.size(), sd.rgb.size());
  ASSERT_FALSE(pm.rgb.empty());
  const Lit l = litPixels(pm);
  EXPECT_GT(l.count, size_t(0.002 * pm.w * pm.h)) << "the image is blank";
  size_t differ = 0;
  for (size_t i = 0; i < pm.rgb.size(); ++i) differ += std::abs(int(pm.rgb[i]) - int(sd.rgb[i])) > 2;
  EXPECT_EQ(differ, 0u) << "the two transfer paths must give the same picture";
}

TEST_F(GuiTest, SimulationMovesBetweenFrames) {
  // A running simulation changes the picture; a paused one does not.
  const std::string args = "--sim nbody --scene collapse --n 1024 --color none --set dt=0.02";
  const Image a = shoot("run2", args + " --frames 2");
  const Image b = shoot("run30", args + " --frames 30 --substeps 2");
  const Image c = shoot("paused3", args + " --frames 3 --paused");
  const Image d = shoot("paused20", args + " --frames 20 --paused");
  ASSERT_FALSE(a.rgb.empty());
  ASSERT_EQ(a.rgb.size(), b.rgb.size());
  ASSERT_EQ(c.rgb.size(), d.rgb.size());
  size_t ab = 0, cd = 0;
  for (size_t i = 0; i < a.rgb.size(); ++i) ab += a.rgb[i] != b.rgb[i];
  for (size_t i = 0; i < c.rgb.size(); ++i) cd += c.rgb[i] != d.rgb[i];
  EXPECT_GT(ab, 1000u) << "the collapsing sphere should look different after 60 steps";
  EXPECT_EQ(cd, 0u) << "paused, frames 3 and 20 show the same state";
  EXPECT_GT(litPixels(b).count, 0u);
}

TEST_F(GuiTest, DamBreakColumnIsOnTheLeft) {
  const auto& sims = simulationNames();
  if (std::find(sims.begin(), sims.end(), "sph") == sims.end())
    GTEST_SKIP() << "the SPH simulation ('sph') is not built in yet: the dam-break screenshot "
                    "test runs once the factory lists it";
  test::Result r;
  // Spheres: the surface style (the fluid default) also draws the tank's tiles,
  // which would count as lit pixels here.
  const Image im = shoot("dam_break", "--sim sph --scene dam_break --frames 1 --color none --style spheres", &r);
  ASSERT_FALSE(im.rgb.empty()) << r.err;
  const Lit l = litPixels(im);
  EXPECT_GT(l.count, size_t(0.01 * im.w * im.h)) << "the image is blank";
  // At frame 1 the water column stands at the left wall of the tank.
  EXPECT_LT(l.cx, 0.45) << "the dam-break column should be in the left part of the frame";
}

// Issue 12: obstacles, bodies and probes are drawn. The SPHERIC dam break
// (coarse) with its obstacle and probes, a floating box and a pressure probe
// of the command line: grey boundary particles and orange probe markers show,
// and the same scene without the added body shows fewer grey pixels.
TEST_F(GuiTest, ObstaclesBodiesAndProbesAreDrawn) {
  const auto& sims = simulationNames();
  if (std::find(sims.begin(), sims.end(), "sph") == sims.end()) GTEST_SKIP() << "no sph";
  const std::string base = "--sim sph --scene spheric_dam_break --set spacing=0.05 --frames 3 "
                           "--paused --style spheres --color none --camera 0,20";
  test::Result r;
  const Image with = shoot("solids", base + " --body box:size=0.3,0.3,0.3:pos=2.0,0.7,0.5:density=500 "
                                            "--probe pressure:X1:1.5,0.1,0.5", &r);
  ASSERT_FALSE(with.rgb.empty()) << r.err;
  const Image without = shoot("solids_nobody", base);
  ASSERT_EQ(with.rgb.size(), without.rgb.size());
  // Grey: the solids (all channels alike and bright); orange: the markers.
  auto count = [](const Image& im, bool grey) {
    size_t n = 0;
    for (int y = 0; y < im.h; ++y)
      for (int x = 0; x < im.w; ++x) {
        const unsigned char* p = im.at(x, y);
        const int lo = std::min({p[0], p[1], p[2]}), hi = std::max({p[0], p[1], p[2]});
        if (grey) n += hi > 90 && hi - lo < 14;
        else n += p[0] > 200 && p[1] > 120 && p[1] < 230 && p[2] < 110;
      }
    return n;
  };
  const size_t greyWith = count(with, true), greyWithout = count(without, true);
  EXPECT_GT(greyWithout, 50u) << "the scene's obstacle is not drawn";
  EXPECT_GT(greyWith, greyWithout + 50) << "the floating box is not drawn";
  EXPECT_GT(count(with, false), 30u) << "no probe markers (P1..P8, H1..H4, X1)";
  // A probe outside the tank is a usage error, as in eddy-cli.
  r = test::run(EDDY_APP, "--sim sph --scene spheric_dam_break --set spacing=0.05 --probe "
                              "level:far:9,0.5 --frames 1");
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_NE(r.err.find("--probe level:far:9,0.5: probe far (level:far:9,0.5) lies outside the tank"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(r.err.find("left out"), std::string::npos) << r.err;  // it was not: the app exits
}

// In the surface style a solid under water shows through it, refracted and
// tinted as the floor is (it is drawn into the scene the water refracts): a
// box body resting in the SPHERIC water column (its top 0.1 m below the
// surface) changes the picture against the same scene without it. (While the
// solids were drawn after the water and depth-tested against it, the body
// was hidden: no pixel differed by more than 40, only the water it displaces
// showed, faintly.)
TEST_F(GuiTest, SubmergedSolidShowsThroughTheWater) {
  const auto& sims = simulationNames();
  if (std::find(sims.begin(), sims.end(), "sph") == sims.end()) GTEST_SKIP() << "no sph";
  const std::string base = "--sim sph --scene spheric_dam_break --set spacing=0.05 --frames 2 --paused "
                           "--style surface";
  test::Result r;
  const Image with = shoot("submerged", base + " --body box:size=0.4,0.4,0.4:pos=2.6,0.25,0.5:density=500", &r);
  ASSERT_FALSE(with.rgb.empty()) << r.err;
  const Image without = shoot("submerged_nobody", base);
  ASSERT_EQ(with.rgb.size(), without.rgb.size());
  size_t differ = 0;
  for (size_t i = 0; i < with.rgb.size(); i += 3) {
    int d = 0;
    for (size_t c = 0; c < 3; ++c) d = std::max(d, std::abs(int(with.rgb[i + c]) - int(without.rgb[i + c])));
    differ += d > 40;
  }
  EXPECT_GT(differ, 150u) << "the submerged body is not seen through the water";
}

// The boundary particles that continue a solid through the tank's wall it
// rests on (there for the physics) are not drawn outside the tank: seen from
// the side, the SPHERIC box obstacle ends at the tank's floor, no grey
// spheres below the box's bottom edge (they showed as legs).
TEST_F(GuiTest, SolidsAreNotDrawnBelowTheTanksFloor) {
  const auto& sims = simulationNames();
  if (std::find(sims.begin(), sims.end(), "sph") == sims.end()) GTEST_SKIP() << "no sph";
  test::Result r;
  const Image im = shoot("solids_side", "--sim sph --scene spheric_dam_break --set spacing=0.05 --frames 2 "
                                        "--paused --style spheres --color none --camera 0,0", &r);
  ASSERT_FALSE(im.rgb.empty()) << r.err;
  // The lowest row of the box's edges (light blue-grey lines across most of
  // the tank's width): the front bottom edge, the floor seen from above it.
  int bottom = -1;
  for (int y = 0; y < im.h; ++y) {
    int line = 0;
    for (int x = 0; x < im.w; ++x) {
      const unsigned char* p = im.at(x, y);
      const int lo = std::min({p[0], p[1], p[2]}), hi = std::max({p[0], p[1], p[2]});
      line += p[2] > 80 && p[2] < 220 && p[2] - p[0] >= 8 && p[2] - p[0] <= 45 && hi - lo < 50;
    }
    if (line > im.w / 4) bottom = y;
  }
  ASSERT_GT(bottom, im.h / 2) << "the tank's bottom edge was not found";
  size_t below = 0;  // grey (solid) pixels more than a pixel below that edge
  for (int y = bottom + 2; y < im.h; ++y)
    for (int x = 0; x < im.w; ++x) {
      const unsigned char* p = im.at(x, y);
      const int lo = std::min({p[0], p[1], p[2]}), hi = std::max({p[0], p[1], p[2]});
      below += hi > 90 && hi - lo < 14;
    }
  EXPECT_LE(below, 3u) << "solid drawn below the tank's floor (bottom edge at row " << bottom << ")";
}

TEST_F(GuiTest, BadArgumentsAndNoDisplay) {
  test::Result r = test::run(EDDY_APP, "--frames 0");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("--frames"), std::string::npos);
  r = test::run(EDDY_APP, "--sim nbody --frames 1 --screenshot /nonexistent-dir/x.png");
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("/nonexistent-dir/x.png"), std::string::npos) << r.err;
  // No display: with arguments an error, without the headless demo.
  r = test::run("env -u DISPLAY -u WAYLAND_DISPLAY " + std::string(EDDY_APP), "--frames 1");
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("no display"), std::string::npos) << r.err;
  // (The whole demo runs a simulated second; EDDY_DEMO_UNTIL shortens it here.)
  r = test::run("env -u DISPLAY -u WAYLAND_DISPLAY EDDY_DEMO_UNTIL=0.05 " + std::string(EDDY_APP), "");
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.err.find("headless demo"), std::string::npos) << r.err;
  EXPECT_NE(r.out.find("steps"), std::string::npos) << r.out;
  // What happened, how fast, and how to see it.
  if (std::find(simulationNames().begin(), simulationNames().end(), "sph") != simulationNames().end()) {
    EXPECT_NE(r.err.find("(dfsph)"), std::string::npos) << r.err;
    EXPECT_NE(r.out.find("surge front ran from x = "), std::string::npos) << r.out;
  }
  EXPECT_NE(r.out.find("x real time"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("ParaView"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("--export"), std::string::npos) << r.out;
  r = test::run("env -u DISPLAY -u WAYLAND_DISPLAY EDDY_DEMO_UNTIL=-1 " + std::string(EDDY_APP), "");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("EDDY_DEMO_UNTIL"), std::string::npos) << r.err;
}

// Issue 11: a batch capture (--frames with --screenshot or --record) steps
// fixed, one step per frame, so it does not depend on the machine's speed;
// --realtime paces it to the wall clock instead; the app says which.
TEST_F(GuiTest, BatchCapturesStepFixedUnlessRealtimeIsAskedFor) {
  const std::string png = test::tempDir() + "/stepping.png";
  const std::string args = "--sim nbody --n 200 --frames 12 --stats --size 320x200 --screenshot " + png;
  test::Result r = test::run(EDDY_APP, args);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.err.find("stepping: fixed, 1 step per frame"), std::string::npos) << r.err;
  // --stats counts the steps of the 9 measured frames (the first 3 are warm-up).
  EXPECT_NE(r.out.find(", 9 frames, 9 steps (1 per frame)"), std::string::npos) << r.out;
  r = test::run(EDDY_APP, args + " --substeps 3");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find(", 9 frames, 27 steps (3 per frame)"), std::string::npos) << r.out;
  r = test::run(EDDY_APP, args + " --realtime --speed 2");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.err.find("stepping: real time at 2x"), std::string::npos) << r.err;
  EXPECT_NE(r.out.find("steps (real time)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("real time: speed 2x, reached "), std::string::npos) << r.out;
}

// issue 5 in the app: --config and --load end to end, bad files refused
// before any window, a broken kernel build that keeps the window up.
TEST_F(GuiTest, ConfigAndLoadStartTheSameSceneAsTheFlags) {
  const std::string dir = test::tempDir();
  const std::string cfg = dir + "/e2e.json";
  test::writeFile(cfg, R"({"sim": "nbody", "scene": "galaxies", "n": 3000,
                            "params": {"dt": 0.002, "seed": 11}})");
  const std::string common = " --frames 3 --paused --no-gl-sharing";
  test::Result rf, rc, rl;
  const Image flags =
      shoot("e2e-flags", "--sim nbody --scene galaxies --n 3000 --set dt=0.002 --set seed=11" + common, &rf);
  const Image viaConfig = shoot("e2e-config", "--config " + cfg + common, &rc);
  ASSERT_FALSE(flags.rgb.empty()) << rf.err;
  ASSERT_EQ(flags.rgb.size(), viaConfig.rgb.size()) << rc.err;
  EXPECT_GT(litPixels(flags).count, size_t(0.002 * flags.w * flags.h)) << "the image is blank";
  EXPECT_TRUE(flags.rgb == viaConfig.rgb) << "--config must start the scene the flags describe";

  // A snapshot of that scene at step 0 (eddy-cli through `eddy run`), loaded by the app.
  const std::string snap = dir + "/e2e.snap";
  std::remove(snap.c_str());
  const test::Result save = test::run(EDDY_APP, "run --config " + cfg + " --steps 0 --save " + snap + " --quiet");
  ASSERT_EQ(save.code, 0) << save.err;
  const Image viaLoad = shoot("e2e-load", "--load " + snap + common, &rl);
  ASSERT_EQ(flags.rgb.size(), viaLoad.rgb.size()) << rl.err;
  EXPECT_TRUE(flags.rgb == viaLoad.rgb) << "--load must draw the saved state";
  EXPECT_NE(rl.err.find("loaded " + snap), std::string::npos) << rl.err;
}

TEST_F(GuiTest, BadConfigOrSnapshotIsRefusedBeforeAnyWindow) {
  const std::string dir = test::tempDir();
  const std::string bad = dir + "/e2e-bad.json";
  test::writeFile(bad, R"({"sim": "nbody", "params": {"softening": -1}})");
  // Without a display: a window would fail with "no display"; the file is refused first.
  const std::string noDisplay = "env -u DISPLAY -u WAYLAND_DISPLAY " + std::string(EDDY_APP);
  test::Result r = test::run(noDisplay, "--config " + bad + " --frames 1");
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_NE(r.err.find(bad), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("params.softening"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("no display"), std::string::npos) << r.err;
  const std::string snap = dir + "/e2e-bad.snap";
  test::writeFile(snap, "not a snapshot at all, but long enough to have a header");
  r = test::run(noDisplay, "--load " + snap + " --frames 1");
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_NE(r.err.find("not a valid eddy snapshot"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("no display"), std::string::npos) << r.err;
}

TEST_F(GuiTest, BrokenKernelKeepsTheWindowUpWithTheError) {
  const std::string kdir = test::tempDir() + "/e2e-broken-kernels";
  std::filesystem::create_directories(kdir);
  test::writeFile(kdir + "/nbody.cl", "__kernel void nbody_gravity(__global float4* p) { nonsense; }\n");
  const std::string png = test::tempDir() + "/e2e-broken.png";
  std::remove(png.c_str());
  const test::Result r = test::run("EDDY_KERNEL_DIR=" + kdir + " " + std::string(EDDY_APP),
                                   "--sim nbody --n 500 --frames 3 --size 640x400 --screenshot " + png);
  // The window opened and drew its frames (the panel with the error), and the
  // run reports that it never had a simulation.
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_NE(r.err.find("CL_BUILD_PROGRAM_FAILURE"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("build log"), std::string::npos) << r.err;
  const Image im = load(png);
  ASSERT_EQ(im.w, 640) << "the window must stay up and draw: " << r.err;
  EXPECT_GT(litPixels(im).count, 0u) << "the panel (error text) is drawn";
}

// ---- Issue 9, part B: the app's faults ----

// Usage errors exit 2 with the hint; a --load from the command line that
// cannot be restored exits 1 instead of running another scene.
TEST_F(GuiTest, UsageErrorsExit2AndAFailedLoadExits1) {
  test::Result r = test::run(EDDY_APP, "--sim nbody --n 200 --color bogus --frames 1");
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_NE(r.err.find("--color 'bogus': nbody offers"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("(see 'eddy --help')"), std::string::npos) << r.err;
  r = test::run(EDDY_APP, "--sim nbody --n 200 --device xyz --frames 1");
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_NE(r.err.find("--device 'xyz': expected gpu, cpu or P:D"), std::string::npos) << r.err;

  // A snapshot whose header is fine (the app's early check passes) but whose
  // state cannot be restored: a tank of 1e30 m, CRC valid.
  const std::string dir = test::tempDir();
  const std::string snap = dir + "/app-load.snap", crafted = dir + "/app-load-crafted.snap";
  ASSERT_EQ(test::run(EDDY_APP, "run --device cpu --sim sph --set spacing=0.01 --steps 1 --quiet --save " + snap).code, 0);
  const Snapshot s = Snapshot::read(snap);
  SnapshotWriter w;
  for (const auto& n : s.names()) {
    if (n == "sph/tank_y") w.addF64(n, 1e30);
    else w.add(n, s.blob(n).data(), s.blob(n).size());
  }
  w.write(crafted);
  r = test::run(EDDY_APP, "--load " + crafted + " --frames 2 --size 320x200");
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_NE(r.err.find("eddy: error: --load: cannot restore " + crafted), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("the grid would have"), std::string::npos) << r.err;
  // The good snapshot still loads.
  r = test::run(EDDY_APP, "--load " + snap + " --frames 2 --size 320x200");
  EXPECT_EQ(r.code, 0) << r.err;
}

// --stats says which frames it measured: the warm-up frames are left out.
TEST_F(GuiTest, StatsSayWhichFramesWereMeasured) {
  const test::Result r = test::run(EDDY_APP, "--sim nbody --n 300 --frames 30 --stats --size 320x200");
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find(", 25 frames, "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("measured: frames 6 to 30 of 30 (the first 5 are warm-up"), std::string::npos)
      << r.out;
}

// Right after the colour field changes, the frame drawn holds the new field's
// values (the legend's range is computed from them): upload(..., fresh).
TEST_F(GuiTest, ANewColourFieldIsDrawnAndRangedFromItsOwnValues) {
  ASSERT_TRUE(glfwInit());
  glfwWindowHint(GLFW_VISIBLE, GLFW_FALSE);
  glfwWindowHint(GLFW_CONTEXT_VERSION_MAJOR, 3);
  glfwWindowHint(GLFW_CONTEXT_VERSION_MINOR, 3);
  glfwWindowHint(GLFW_OPENGL_PROFILE, GLFW_OPENGL_CORE_PROFILE);
  GLFWwindow* win = glfwCreateWindow(64, 64, "t", nullptr, nullptr);
  ASSERT_NE(win, nullptr);
  glfwMakeContextCurrent(win);
  ASSERT_NE(gladLoadGL(glfwGetProcAddress), 0);
  {
    Context ctx("cpu");
    Params p(sphParamDecl());
    p.set("spacing", 0.01);
    SphSim sim(ctx, p, makeSphScene("dam_break", p));
    const size_t n = sim.size();
    auto field = [&](size_t f) {
      cl::Buffer b(ctx.context(), CL_MEM_READ_WRITE, n * sizeof(float));
      sim.writeColorField(f, b);
      std::vector<float> v(n);
      ctx.queue().enqueueReadBuffer(b, CL_TRUE, 0, n * sizeof(float), v.data());
      return v;
    };
    const auto speed = field(0), density = field(1);
    ASSERT_NE(speed, density);
    for (BufferPath path : {BufferPath::HostCopySubData, BufferPath::HostCopyPersistent}) {
      if (path == BufferPath::HostCopyPersistent && !glHasBufferStorage()) continue;
      ParticleBuffers bufs(ctx, path, false);
      bufs.reset(sim.capacity());
      Profiler prof;
      for (int f = 0; f < 3; ++f) {  // speed, double-buffered
        bufs.upload(sim, 0, prof);
        bufs.drawSlot();
        bufs.afterDraw();
      }
      // Without `fresh` the frame after a switch draws last frame's slot: speed.
      bufs.upload(sim, 1, prof);
      ParticleDraw d = bufs.drawSlot();
      ASSERT_NE(bufs.hostColors(), nullptr);
      EXPECT_EQ(std::vector<float>(bufs.hostColors(), bufs.hostColors() + n), speed)
          << "the stale frame this fix removes";
      bufs.afterDraw();
      // The app's switch: this frame's upload is drawn, with the new field.
      bufs.upload(sim, 2, prof, true);
      d = bufs.drawSlot();
      EXPECT_NE(d.colorVbo, 0u);
      EXPECT_EQ(d.count, n);
      ASSERT_NE(bufs.hostColors(), nullptr);
      EXPECT_EQ(std::vector<float>(bufs.hostColors(), bufs.hostColors() + n), field(2))
          << bufferPathName(path);
      bufs.afterDraw();
      // And the double buffering goes on from there.
      bufs.upload(sim, 2, prof);
      bufs.drawSlot();
      EXPECT_EQ(std::vector<float>(bufs.hostColors(), bufs.hostColors() + n), field(2));
      bufs.afterDraw();
      ctx.queue().finish();
      glFinish();
    }
  }
  glfwDestroyWindow(win);
  glfwTerminate();
}

// --record DIR into a folder an earlier recording used: refused before any
// window (exit 2, nothing touched); --overwrite removes the earlier frames
// (and only them), so the folder holds this run's frames alone. Before, the
// second run wrote frame_000000.png beside the first run's frames 1 and 2.
TEST_F(GuiTest, RecordIntoAUsedFolderIsRefusedUnlessOverwrite) {
  namespace fs = std::filesystem;
  const std::string dir = test::tempDir() + "/rec-reuse";
  fs::remove_all(dir);
  const std::string args = "--sim nbody --n 64 --size 160x100 --hide-panel --record " + dir;
  test::Result r = test::run(EDDY_APP, args + " --frames 3 --style spheres");
  ASSERT_EQ(r.code, 0) << r.err;
  ASSERT_TRUE(fs::exists(dir + "/frame_000002.png"));
  test::writeFile(dir + "/notes.txt", "mine");
  const auto before = fs::last_write_time(dir + "/frame_000000.png");
  r = test::run(EDDY_APP, args + " --frames 1");
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_NE(r.err.find("--record '" + dir + "': the folder is not empty"), std::string::npos) << r.err;
  EXPECT_TRUE(fs::exists(dir + "/frame_000002.png")) << "a refused run must not touch the folder";
  EXPECT_TRUE(fs::last_write_time(dir + "/frame_000000.png") == before);
  r = test::run(EDDY_APP, args + " --frames 1 --overwrite");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.err.find("--overwrite: removed 3 frames of an earlier recording"), std::string::npos) << r.err;
  EXPECT_TRUE(fs::exists(dir + "/frame_000000.png"));
  EXPECT_FALSE(fs::exists(dir + "/frame_000001.png")) << "a stale frame of the first run";
  EXPECT_FALSE(fs::exists(dir + "/frame_000002.png")) << "a stale frame of the first run";
  EXPECT_EQ(test::slurp(dir + "/notes.txt"), "mine") << "--overwrite removes frames only";
  // A file is not a folder, and out.png is not made one.
  r = test::run(EDDY_APP, "--sim nbody --n 64 --frames 1 --record " + dir + "/notes.txt");
  EXPECT_EQ(r.code, 2) << r.err;
  const std::string png = test::tempDir() + "/rec-out.png";
  fs::remove_all(png);
  r = test::run(EDDY_APP, "--sim nbody --n 64 --frames 1 --record " + png);
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_FALSE(fs::exists(png));
}

// A batch capture shows the state after its own frame's steps (the
// interactive pipelining draws the frame before's). Before, --frames 2
// --screenshot drew the state after frame 1's steps (the same picture as
// --frames 1), and a recording's frames 0 and 1 were the same picture.
TEST_F(GuiTest, BatchCaptureShowsTheStateAfterItsFramesSteps) {
  namespace fs = std::filesystem;
  const std::string dir = test::tempDir();
  // A known state: eddy-cli steps a small DFSPH dam break (66 particles) from
  // one snapshot; the app steps the same snapshot through 2 frames of 20
  // steps. Its screenshot must be the 40-step state (the snapshot eddy-cli
  // saved, drawn paused), not the 20-step one. The fit of the view is the
  // tank's, the same in every run.
  const std::string s0 = dir + "/cap-s0.snap", s20 = dir + "/cap-s20.snap", s40 = dir + "/cap-s40.snap";
  ASSERT_EQ(test::run(EDDY_APP, "run --device cpu --sim sph --set spacing=0.01 --set solver=dfsph --steps 0 "
                                "--quiet --save " + s0).code, 0);
  ASSERT_EQ(test::run(EDDY_APP, "run --device cpu --load " + s0 + " --steps 20 --quiet --save " + s20).code, 0);
  ASSERT_EQ(test::run(EDDY_APP, "run --device cpu --load " + s0 + " --steps 40 --quiet --save " + s40).code, 0);
  const std::string look = " --style spheres --color none";
  const Image app = shoot("cap-app", "--load " + s0 + " --frames 2 --substeps 20" + look);
  const Image at20 = shoot("cap-20", "--load " + s20 + " --frames 1 --paused" + look);
  const Image at40 = shoot("cap-40", "--load " + s40 + " --frames 1 --paused" + look);
  ASSERT_FALSE(app.rgb.empty());
  ASSERT_EQ(app.rgb.size(), at40.rgb.size());
  ASSERT_GT(litPixels(at40).count, 100u) << "the fluid is drawn";
  ASSERT_FALSE(at20.rgb == at40.rgb) << "20 and 40 steps must look different for this test to mean anything";
  EXPECT_TRUE(app.rgb == at40.rgb) << "--frames 2 --substeps 20 must show the state after 40 steps";
  EXPECT_FALSE(app.rgb == at20.rgb) << "the state one frame behind";

  // N-body: --frames 1 and --frames 2 differ, also with --substeps 3.
  const std::string nb = "--sim nbody --scene collapse --n 256 --color none --set dt=0.02";
  for (const std::string sub : {"", " --substeps 3"}) {
    const Image one = shoot("cap-nb1", nb + sub + " --frames 1");
    const Image two = shoot("cap-nb2", nb + sub + " --frames 2");
    ASSERT_FALSE(one.rgb.empty());
    EXPECT_FALSE(one.rgb == two.rgb) << "--frames 1 and --frames 2 drew the same state" << sub;
  }
  // A recording: every frame a step forward, none repeated.
  const std::string rec = dir + "/cap-rec";
  fs::remove_all(rec);
  const test::Result r = test::run(EDDY_APP, nb + " --frames 3 --size 320x200 --hide-panel --record " + rec);
  ASSERT_EQ(r.code, 0) << r.err;
  const Image f0 = load(rec + "/frame_000000.png"), f1 = load(rec + "/frame_000001.png"),
              f2 = load(rec + "/frame_000002.png");
  ASSERT_FALSE(f0.rgb.empty());
  ASSERT_FALSE(f2.rgb.empty());
  EXPECT_FALSE(f0.rgb == f1.rgb) << "the recording's first frame is repeated";
  EXPECT_FALSE(f1.rgb == f2.rgb);
}

}  // namespace
