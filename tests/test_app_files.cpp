// The desktop app's files and robustness, headless (no window): settings
// saved and loaded back, restart snapshots saved and loaded bit for bit, bad
// files reported while the scene keeps running, a broken kernel build that
// leaves the app up with the build log and a way to retry, and a blow-up that
// pauses the run. Driven through the Controller and, where a button does it,
// the real panel on an ImGui context without a backend.
#include "config.hpp"
#include "controller.hpp"
#include "gui_options.hpp"
#include "nbody.hpp"
#include "panel.hpp"
#include "snapshot.hpp"
#include "headless_imgui.hpp"
#include "test_util.hpp"

#include <gtest/gtest.h>
#include <imgui.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>

using namespace eddy;

namespace {

using test::HeadlessImGui;

bool contains(const std::string& s, const std::string& what) {
  return s.find(what) != std::string::npos;
}

std::unique_ptr<Controller> nbody(size_t n, const std::string& scene = "plummer") {
  SceneSpec spec;
  spec.sim = "nbody";
  spec.scene = scene;
  spec.n = n;
  Params p(nbodyParamDecl());
  p.set("seed", double(test::freshSeed() % 100000));
  auto c = std::make_unique<Controller>(test::context(), spec, p);
  c->paused = true;
  return c;
}

// Runs exactly `steps` steps through the controller (one per frame).
void run(Controller& c, Profiler& fp, uint64_t steps) {
  c.substeps = 1;
  c.runSteps(steps);
  for (uint64_t i = 0; i < steps + 2 && c.stepsQueued(); ++i) c.frame(fp);
  ASSERT_EQ(c.stepsQueued(), 0u);
}

std::string readAll(const cl::Buffer& b, size_t bytes) {
  std::string s(bytes, '\0');
  test::context().queue().enqueueReadBuffer(b, CL_TRUE, 0, bytes, s.data());
  return s;
}

// The complete N-body state, as bytes: positions (with mass), velocities.
std::string state(Controller& c) {
  const auto bufs = c.sim().finiteCheckBuffers();  // positions, velocities
  std::string s;
  for (const cl::Buffer* b : bufs) s += readAll(*b, c.sim().size() * sizeof(cl_float4));
  return s;
}

// Sets EDDY_KERNEL_DIR for the lifetime of the object.
class KernelDir {
 public:
  explicit KernelDir(const std::string& dir) { setenv("EDDY_KERNEL_DIR", dir.c_str(), 1); }
  ~KernelDir() { unsetenv("EDDY_KERNEL_DIR"); }
};

std::string brokenKernelDir() {
  const std::string dir = test::tempDir() + "/app-broken-kernels";
  std::filesystem::create_directories(dir);
  test::writeFile(dir + "/nbody.cl", "__kernel void nbody_gravity(__global float4* p) {\n"
                                     "  this is not OpenCL C;\n}\n");
  return dir;
}

// ---- 1. settings ----

TEST(AppSettings, SaveThenLoadBackGivesTheSameSceneAndEveryParameter) {
  HeadlessImGui ui(2400);
  Panel panel;
  Profiler fp;
  auto a = nbody(97, "galaxies");
  a->setParam("dt", 0.00237);
  a->setParam("softening", 0.031);
  a->setCount(131);
  a->frame(fp);
  const std::string path = test::tempDir() + "/app-settings.json";
  std::remove(path.c_str());
  panel.setSettingsPath(path);
  ui.click(panel, *a, "Save settings");
  ASSERT_TRUE(a->error().empty()) << a->error();
  EXPECT_TRUE(contains(a->notice(), path)) << a->notice();

  // The file is a run description eddy-cli reads, with every declared parameter.
  const RunConfig c = loadConfig(path);
  EXPECT_EQ(c.sim.value_or(""), "nbody");
  EXPECT_EQ(c.scene.value_or(""), "galaxies");
  EXPECT_EQ(c.n.value_or(0), 131u);
  EXPECT_EQ(c.params.size(), a->editParams().declarations().size());
  for (const auto& [k, v] : c.params) EXPECT_EQ(v, a->editParams().get(k)) << k;

  // Loaded into another controller: the same simulation, scene, count, values.
  auto b = nbody(64, "plummer");
  ASSERT_TRUE(b->loadSettings(path)) << b->error();
  EXPECT_TRUE(b->frame(fp).rebuilt);
  EXPECT_EQ(b->spec().sim, "nbody");
  EXPECT_EQ(b->spec().scene, "galaxies");
  EXPECT_EQ(b->sim().size(), 131u);
  for (const auto& d : a->editParams().declarations()) {
    EXPECT_EQ(b->editParams().get(d.name), a->editParams().get(d.name)) << d.name;
    EXPECT_EQ(b->sim().params().get(d.name), a->editParams().get(d.name)) << d.name;
  }
  // Same settings, same seed: the same bodies.
  EXPECT_EQ(state(*a), state(*b));
}

TEST(AppSettings, BadSettingsFileChangesNothingAndNamesTheProblem) {
  Profiler fp;
  auto c = nbody(50);
  const uint64_t gen = c->generation();
  const std::string bad = test::tempDir() + "/app-bad-settings.json";
  test::writeFile(bad, R"({"sim": "nbody", "params": {"dt": 5}})");
  EXPECT_FALSE(c->loadSettings(bad));
  EXPECT_TRUE(contains(c->error(), bad)) << c->error();
  EXPECT_TRUE(contains(c->error(), "dt")) << c->error();
  EXPECT_TRUE(contains(c->error(), "range")) << c->error();
  EXPECT_FALSE(c->rebuildPending());
  test::writeFile(bad, R"({"sim": "nbody", "gizmos": 3})");
  EXPECT_FALSE(c->loadSettings(bad));
  EXPECT_TRUE(contains(c->error(), "unknown key 'gizmos'")) << c->error();
  EXPECT_FALSE(c->loadSettings(test::tempDir() + "/no-such-settings.json"));
  c->frame(fp);
  EXPECT_EQ(c->generation(), gen);
  EXPECT_EQ(c->sim().size(), 50u);
  // Unwritable target: reported, nothing thrown.
  EXPECT_FALSE(c->saveSettings("/nonexistent-dir/settings.json"));
  EXPECT_TRUE(contains(c->error(), "/nonexistent-dir/settings.json")) << c->error();
}

TEST(AppOptions, ConfigFileGivesSceneAndParametersAndFlagsWin) {
  const std::string path = test::tempDir() + "/app-options.json";
  test::writeFile(path, R"({"sim": "nbody", "scene": "galaxies", "n": 300, "steps": 10,
                            "params": {"dt": 0.004, "G": 2}})");
  GuiOptions o = parseGuiOptions({"--config", path});
  EXPECT_EQ(o.spec.sim, "nbody");
  EXPECT_EQ(o.spec.scene, "galaxies");
  EXPECT_EQ(o.spec.n, 300u);
  Params p = guiParams(o);
  EXPECT_EQ(p.get("dt"), 0.004);
  EXPECT_EQ(p.get("G"), 2);
  ASSERT_EQ(o.ignoredConfigKeys.size(), 1u);
  EXPECT_EQ(o.ignoredConfigKeys[0], "steps");
  o = parseGuiOptions({"--set", "dt=0.001", "--config", path, "--n", "77"});
  EXPECT_EQ(o.spec.n, 77u);
  p = guiParams(o);
  EXPECT_EQ(p.get("dt"), 0.001) << "--set overrides the file";
  EXPECT_EQ(p.get("G"), 2);

  // A bad file is a usage error naming the file, the key and the range.
  test::writeFile(path, R"({"sim": "nbody", "params": {"dt": 5}})");
  try {
    parseGuiOptions({"--config", path});
    FAIL() << "a bad config must be refused";
  } catch (const GuiUsageError& e) {
    EXPECT_TRUE(contains(e.what(), path)) << e.what();
    EXPECT_TRUE(contains(e.what(), "params.dt")) << e.what();
    EXPECT_TRUE(contains(e.what(), "allowed [")) << e.what();
  }
  EXPECT_THROW(parseGuiOptions({"--config", test::tempDir() + "/missing.json"}), GuiUsageError);
  EXPECT_THROW(parseGuiOptions({"--config"}), GuiUsageError);
  EXPECT_THROW(parseGuiOptions({"--load", "x.snap", "--sim", "nbody"}), GuiUsageError);
  EXPECT_THROW(parseGuiOptions({"--load", "x.snap", "--n", "5"}), GuiUsageError);
}

// ---- 2. snapshots ----

TEST(AppSnapshot, SaveThenLoadContinuesBitForBit) {
  HeadlessImGui ui(2400);
  Panel panel;
  Profiler fp;
  auto c = nbody(97, "galaxies");
  c->setParam("dt", 0.003);
  run(*c, fp, 5);
  const std::string path = test::tempDir() + "/app-restart.snap";
  std::remove(path.c_str());
  panel.setSnapshotPath(path);
  ui.click(panel, *c, "Save snapshot");
  ASSERT_TRUE(c->error().empty()) << c->error();
  EXPECT_TRUE(contains(c->notice(), "step 5")) << c->notice();
  run(*c, fp, 7);
  const std::string straight = state(*c);
  const double tStraight = c->sim().time();

  const uint64_t gen = c->generation();
  ui.click(panel, *c, "Load snapshot");  // queued: lands at the next boundary
  EXPECT_EQ(c->generation(), gen);
  const FrameReport r = c->frame(fp);
  EXPECT_TRUE(r.rebuilt);
  ASSERT_TRUE(c->error().empty()) << c->error();
  EXPECT_EQ(c->sim().steps(), 5u);
  EXPECT_EQ(c->editParams().get("dt"), 0.003);
  EXPECT_EQ(c->spec().scene, "galaxies");
  run(*c, fp, 7);
  EXPECT_EQ(c->sim().time(), tStraight);
  const std::string resumed = state(*c);
  ASSERT_EQ(resumed.size(), straight.size());
  EXPECT_EQ(std::memcmp(resumed.data(), straight.data(), straight.size()), 0)
      << "5 steps + save + load + 7 steps must equal 12 steps bit for bit";
}

TEST(AppSnapshot, BadSnapshotIsReportedAndTheSceneKeepsRunning) {
  Profiler fp;
  auto c = nbody(61);
  run(*c, fp, 3);
  const std::string good = test::tempDir() + "/app-good.snap";
  ASSERT_TRUE(c->saveSnapshot(good)) << c->error();
  const std::string bytes = test::slurp(good);

  const std::string bad = test::tempDir() + "/app-bad.snap";
  struct Case {
    std::string content, expect;
  };
  std::string flipped = bytes;
  flipped[bytes.size() / 2] = char(flipped[bytes.size() / 2] ^ 0x10);
  const Case cases[] = {
      {bytes.substr(0, bytes.size() / 2), "not a valid eddy snapshot"},
      {"NOTASNAP" + bytes.substr(8), "wrong magic"},
      {flipped, "checksum mismatch"},
      {"", "not a valid eddy snapshot"},
  };
  for (const auto& k : cases) {
    { std::ofstream(bad, std::ios::binary) << k.content; }
    const uint64_t gen = c->generation(), steps = c->sim().steps();
    const std::string before = state(*c);
    c->loadSnapshot(bad);
    const FrameReport r = c->frame(fp);
    EXPECT_FALSE(r.rebuilt);
    EXPECT_EQ(c->generation(), gen);
    ASSERT_TRUE(c->hasSim());
    EXPECT_TRUE(contains(c->error(), bad)) << c->error();
    EXPECT_TRUE(contains(c->error(), k.expect)) << c->error();
    EXPECT_TRUE(contains(c->error(), "unchanged")) << c->error();
    EXPECT_EQ(c->sim().steps(), steps);
    EXPECT_EQ(state(*c), before) << "the running state is untouched";
    run(*c, fp, 2);  // and it keeps running
    EXPECT_EQ(c->sim().steps(), steps + 2);
  }
  c->loadSnapshot(test::tempDir() + "/no-such.snap");
  c->frame(fp);
  EXPECT_TRUE(contains(c->error(), "no-such.snap")) << c->error();
  EXPECT_TRUE(c->hasSim());
}

TEST(AppOptions, ResolveLoadChecksTheSnapshotBeforeAnyWindow) {
  Profiler fp;
  auto c = nbody(40, "collapse");
  const std::string good = test::tempDir() + "/app-resolve.snap";
  ASSERT_TRUE(c->saveSnapshot(good)) << c->error();
  GuiOptions o = parseGuiOptions({"--load", good, "--set", "dt=0.002"});
  resolveLoad(o);
  EXPECT_EQ(o.spec.sim, "nbody");
  EXPECT_EQ(o.spec.scene, "collapse");
  o = parseGuiOptions({"--load", good, "--set", "spacing=0.01"});
  EXPECT_THROW(resolveLoad(o), GuiUsageError) << "not an nbody parameter";
  const std::string bad = test::tempDir() + "/app-resolve-bad.snap";
  test::writeFile(bad, "EDDYSNAP but not really");
  o = parseGuiOptions({"--load", bad});
  try {
    resolveLoad(o);
    FAIL() << "a bad snapshot must be refused";
  } catch (const GuiUsageError&) {
    FAIL() << "a bad snapshot file is a runtime error, not a usage error";
  } catch (const Error& e) {
    EXPECT_TRUE(contains(e.what(), bad)) << e.what();
  }
  // The controller started with --load restores it.
  SceneSpec spec;
  spec.sim = "nbody";
  auto d = std::make_unique<Controller>(test::context(), spec, Params(nbodyParamDecl()), good);
  ASSERT_TRUE(d->hasSim());
  EXPECT_TRUE(d->error().empty()) << d->error();
  EXPECT_EQ(d->spec().scene, "collapse");
  EXPECT_EQ(d->sim().size(), 40u);
  EXPECT_EQ(state(*d), state(*c));
}

// --probe asks for a fluid: on an N-body snapshot (--load) it is the same
// usage error as with --sim nbody, found before any window (it ran, exit 0).
TEST(AppOptions, ProbesOnAnNBodySnapshotAreAUsageError) {
  auto c = nbody(40, "collapse");
  const std::string snap = test::tempDir() + "/app-probe-nbody.snap";
  ASSERT_TRUE(c->saveSnapshot(snap)) << c->error();
  const std::string probe = "pressure:P:0.1,0.01,0.004";
  GuiOptions o = parseGuiOptions({"--load", snap, "--probe", probe, "--frames", "1"});
  try {
    resolveLoad(o);
    FAIL() << "a probe on an N-body snapshot must be refused";
  } catch (const GuiUsageError& e) {
    EXPECT_EQ(std::string(e.what()), "--probe: nbody has no probes (they sample a fluid: --sim sph) (the snapshot " +
                                         snap + " is of --sim nbody)");
  }
  try {
    parseGuiOptions({"--sim", "nbody", "--probe", probe});
    FAIL() << "--sim nbody --probe must be refused";
  } catch (const GuiUsageError& e) {
    EXPECT_EQ(std::string(e.what()), "--probe: nbody has no probes (they sample a fluid: --sim sph)");
  }
  // End to end: exit 2 before any window (no display needed to find it).
  const test::Result r = test::run("env -u DISPLAY -u WAYLAND_DISPLAY " + std::string(EDDY_APP),
                                   "--load " + snap + " --probe " + probe + " --frames 1");
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_TRUE(contains(r.err, "--probe: nbody has no probes")) << r.err;
  EXPECT_FALSE(contains(r.err, "no display")) << r.err;
}

// The surface style and its --surface-view and --foam draw water: with
// N-body (--sim, a config or a --load snapshot) they are usage errors, as
// --obstacle, --body and --probe are (they were silently accepted).
TEST(AppOptions, SurfaceStyleFlagsOnNBodyAreUsageErrors) {
  const std::vector<std::vector<std::string>> flags = {
      {"--style", "surface"}, {"--surface-view", "depth"}, {"--foam"}};
  const std::string tail = ": the surface style (water) and its --surface-view and --foam are for fluids "
                           "(--sim sph); nbody is drawn as points (--style glow or spheres)";
  auto with = [](std::vector<std::string> a, const std::vector<std::string>& f) {
    a.insert(a.end(), f.begin(), f.end());
    return a;
  };
  const std::string cfg = test::tempDir() + "/app-surface-nbody.json";
  test::writeFile(cfg, R"({"sim": "nbody", "n": 64})");
  auto c = nbody(40, "collapse");
  const std::string snap = test::tempDir() + "/app-surface-nbody.snap";
  ASSERT_TRUE(c->saveSnapshot(snap)) << c->error();
  for (const auto& f : flags) {
    const std::string name = f[0] == "--style" ? "--style surface" : f[0];
    for (const auto& start : std::vector<std::vector<std::string>>{{"--sim", "nbody"}, {"--config", cfg}}) {
      try {
        parseGuiOptions(with(start, f));
        ADD_FAILURE() << name << " with " << start[1] << " was accepted";
      } catch (const GuiUsageError& e) {
        EXPECT_EQ(std::string(e.what()), name + tail);
      }
    }
    GuiOptions o = parseGuiOptions(with({"--load", snap}, f));
    try {
      resolveLoad(o);
      ADD_FAILURE() << name << " on an N-body snapshot was accepted";
    } catch (const GuiUsageError& e) {
      EXPECT_EQ(std::string(e.what()), name + tail + " (the snapshot " + snap + " is of --sim nbody)");
    }
    // For a fluid they stay what they were.
    const auto& sims = simulationNames();
    if (std::find(sims.begin(), sims.end(), "sph") != sims.end()) {
      EXPECT_NO_THROW(parseGuiOptions(with({"--sim", "sph"}, f)));
    }
  }
  EXPECT_NO_THROW(parseGuiOptions({"--sim", "nbody", "--style", "spheres"}));
  EXPECT_NO_THROW(parseGuiOptions({"--sim", "nbody", "--style", "glow"}));
}

// ---- 3. kernel build failures ----

TEST(AppKernelBuild, FailureAtStartKeepsTheAppUpWithTheLogAndRetry) {
  HeadlessImGui ui(2400);
  Panel panel;
  Profiler fp;
  const int live = Simulation::liveCount();
  std::unique_ptr<Controller> c;
  {
    KernelDir broken(brokenKernelDir());
    SceneSpec spec;
    spec.sim = "nbody";
    spec.scene = "plummer";
    spec.n = 33;
    ASSERT_NO_THROW(c = std::make_unique<Controller>(test::context(), spec, Params(nbodyParamDecl())));
    EXPECT_FALSE(c->hasSim());
    EXPECT_EQ(Simulation::liveCount(), live);
    EXPECT_TRUE(contains(c->error(), "CL_BUILD_PROGRAM_FAILURE")) << c->error();
    EXPECT_TRUE(contains(c->error(), "build log")) << c->error();
    EXPECT_TRUE(contains(c->error(), "Retry")) << c->error();
    // Frames go on without a simulation; the panel shows the error and Retry.
    c->paused = false;
    EXPECT_EQ(c->frame(fp).steps, 0u);
    ui.frame(panel, *c, -1, -1, false);
    EXPECT_TRUE(panel.widgetRect("button:Retry").has_value());
    // Retrying while the kernel is still broken fails the same way.
    ui.click(panel, *c, "Retry");
    c->frame(fp);
    EXPECT_FALSE(c->hasSim());
    EXPECT_TRUE(contains(c->error(), "CL_BUILD_PROGRAM_FAILURE")) << c->error();
  }
  // Fixed: Retry builds it.
  ui.click(panel, *c, "Retry");
  const FrameReport r = c->frame(fp);
  EXPECT_TRUE(r.rebuilt);
  ASSERT_TRUE(c->hasSim());
  EXPECT_TRUE(c->error().empty()) << c->error();
  EXPECT_EQ(c->sim().size(), 33u);
  EXPECT_GT(c->frame(fp).steps, 0u);
}

TEST(AppKernelBuild, FailedRebuildKeepsThePreviousSceneRunning) {
  Profiler fp;
  auto c = nbody(45);
  run(*c, fp, 4);
  const std::string before = state(*c);
  const uint64_t gen = c->generation();
  {
    KernelDir broken(brokenKernelDir());
    c->setCount(80);
    const FrameReport r = c->frame(fp);
    EXPECT_FALSE(r.rebuilt);
  }
  ASSERT_TRUE(c->hasSim());
  EXPECT_EQ(c->generation(), gen);
  EXPECT_EQ(c->sim().size(), 45u);
  EXPECT_EQ(c->sim().steps(), 4u);
  EXPECT_EQ(state(*c), before) << "the previous scene is kept as it was";
  EXPECT_TRUE(contains(c->error(), "the running scene is unchanged")) << c->error();
  EXPECT_TRUE(contains(c->error(), "build log")) << c->error();
  run(*c, fp, 3);
  EXPECT_EQ(c->sim().steps(), 7u);
}

// ---- 4. blow-up ----

void injectNaN(Controller& c, size_t particle) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const cl_float4 v{{nan, 0.f, 0.f, 0.f}};
  const cl::Buffer& vel = *c.sim().finiteCheckBuffers().at(1);
  test::context().queue().enqueueWriteBuffer(vel, CL_TRUE, particle * sizeof(cl_float4),
                                             sizeof(cl_float4), &v);
}

TEST(AppBlowUp, RunningSimulationPausesAndSaysSoThenResetClearsIt) {
  HeadlessImGui ui(2400);
  Panel panel;
  Profiler fp;
  auto c = nbody(53);
  c->checkEvery = 3;
  c->paused = false;
  for (int i = 0; i < 6; ++i) c->frame(fp);
  EXPECT_FALSE(c->blowUp());
  EXPECT_FALSE(c->paused);
  injectNaN(*c, 17);
  int frames = 0;
  while (!c->paused && frames < 20) {
    c->frame(fp);
    ++frames;
  }
  ASSERT_TRUE(c->paused) << "a blow-up must pause the run within a few checks";
  ASSERT_TRUE(c->blowUp().has_value()) << c->error();
  const BlowUp b = *c->blowUp();
  EXPECT_EQ(b.n, 53u);
  EXPECT_GE(b.particles, 1u);
  EXPECT_LE(b.particles, 53u);
  EXPECT_GT(b.step, 6u);
  EXPECT_LE(b.step, c->sim().steps());
  EXPECT_TRUE(contains(c->error(), "Blow-up at step " + std::to_string(b.step))) << c->error();
  EXPECT_TRUE(contains(c->error(), "of 53 particles")) << c->error();
  EXPECT_TRUE(contains(c->error(), "Paused")) << c->error();
  const uint64_t steps = c->sim().steps();
  EXPECT_EQ(c->frame(fp).steps, 0u) << "paused";
  EXPECT_EQ(c->sim().steps(), steps);
  ui.frame(panel, *c, -1, -1, false);
  EXPECT_TRUE(panel.widgetRect("button:Reset (R)").has_value());

  // Reset rebuilds the scene and clears the state.
  ui.click(panel, *c, "Reset (R)");
  EXPECT_TRUE(c->frame(fp).rebuilt);
  EXPECT_FALSE(c->blowUp());
  EXPECT_TRUE(c->error().empty()) << c->error();
  EXPECT_EQ(c->sim().steps(), 0u);
  EXPECT_FALSE(c->sim().checkFiniteNow().has_value());
  c->paused = false;
  for (int i = 0; i < 10; ++i) c->frame(fp);
  EXPECT_FALSE(c->blowUp());
  EXPECT_FALSE(c->paused);
}

TEST(AppBlowUp, SingleStepWhilePausedIsCheckedAtTheNextFrame) {
  Profiler fp;
  auto c = nbody(29);
  c->checkEvery = 1000;  // only the paused path can see it
  run(*c, fp, 2);
  c->frame(fp);
  EXPECT_FALSE(c->blowUp());
  injectNaN(*c, 0);
  c->stepOnce();
  EXPECT_EQ(c->frame(fp).steps, 1u);
  const FrameReport r = c->frame(fp);  // paused: the unchecked step is checked now
  EXPECT_TRUE(r.blewUp);
  ASSERT_TRUE(c->blowUp().has_value());
  EXPECT_EQ(c->blowUp()->step, 3u);
  EXPECT_EQ(c->blowUp()->n, 29u);
}

// Issue 9: the app found a blow-up only at the next check (8 frames later),
// ran those steps, and then reported a second blow-up while paused. Now the
// answered check is read at the next frame's boundary: no steps after it, and
// one report (the first) until Reset.
TEST(AppBlowUp, SteppingStopsAtTheFirstBlowUpWhichIsReportedOnce) {
  Profiler fp;
  auto c = nbody(41);
  c->checkEvery = 8;
  c->substeps = 2;
  c->paused = false;
  for (int i = 0; i < 3; ++i) c->frame(fp);
  injectNaN(*c, 5);
  for (int i = 0; i < 30 && !c->blowUp(); ++i) {
    c->frame(fp);
    test::context().queue().finish();  // the device keeps up (as a frame's draw waits for it)
  }
  ASSERT_TRUE(c->blowUp().has_value()) << c->error();
  const BlowUp first = *c->blowUp();
  EXPECT_TRUE(c->paused);
  EXPECT_EQ(c->sim().steps(), first.step) << "no step may run after the checked one";
  const std::string message = c->error();
  for (int i = 0; i < 5; ++i) EXPECT_EQ(c->frame(fp).steps, 0u);
  EXPECT_EQ(c->blowUp()->step, first.step);
  EXPECT_EQ(c->error(), message) << "no second report";
  // Stepping on by hand does not replace the first report either.
  c->stepOnce();
  c->frame(fp);
  c->frame(fp);
  EXPECT_EQ(c->blowUp()->step, first.step);
  EXPECT_EQ(c->error().find("Blow-up at step " + std::to_string(first.step)), 0u) << c->error();
}

}  // namespace
