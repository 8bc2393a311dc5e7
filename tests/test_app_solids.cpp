// The app's solids and probes (issue 12) without a window: the options
// (--obstacle, --body, --probe shared with eddy-cli), the probe history, the
// drop point of shift + double-click, and the controller and panel editing
// the solids of a running SPH simulation on PoCL (the fluid keeps running),
// and the mouse path of the app (MouseInput, fed what gui_app.cpp reads from
// GLFW) from a shift + double-click to the dropped body.
#include "camera.hpp"
#include "controller.hpp"
#include "gui_options.hpp"
#include "headless_imgui.hpp"
#include "mouse_input.hpp"
#include "panel.hpp"
#include "probe_history.hpp"
#include "sph.hpp"
#include "test_util.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

using namespace eddy;

TEST(AppSolids, OptionsTakeObstaclesBodiesAndProbesAsEddyCliDoes) {
  const std::string cfg = test::tempDir() + "/solids.json";
  test::writeFile(cfg, R"({"sim": "sph", "scene": "dam_break",
    "obstacles": [{"shape": "sphere", "diameter": 0.05, "position": [0.2, 0.05, 0.004]}],
    "bodies": [{"shape": "box", "size": [0.03, 0.03, 0.008], "position": [0.3, 0.15, 0.004], "density": 500}],
    "probes": ["pressure:C1:0.01,0.01,0.004"], "probe_out": "p.csv"})");
  const GuiOptions o = parseGuiOptions(
      {"--config", cfg, "--obstacle", "box:size=0.02,0.02,0.008:pos=0.1,0.01,0.004", "--body",
       "sphere:d=0.006:pos=0.25,0.15,0.004:density=2000", "--probe", "level:L1:0.1,0.004"});
  ASSERT_EQ(o.spec.obstacles.size(), 2u);  // the config's first
  EXPECT_EQ(o.spec.obstacles[0].kind, ShapeKind::Sphere);
  EXPECT_EQ(o.spec.obstacles[1].kind, ShapeKind::Box);
  ASSERT_EQ(o.spec.bodies.size(), 2u);
  EXPECT_EQ(o.spec.bodies[0].density, 500);
  EXPECT_EQ(o.spec.bodies[1].density, 2000);
  ASSERT_EQ(o.probes.size(), 2u);
  EXPECT_EQ(o.probes[0].name, "C1");
  EXPECT_EQ(o.probes[1].kind, ProbeSpec::Kind::Level);
  EXPECT_NE(std::find(o.ignoredConfigKeys.begin(), o.ignoredConfigKeys.end(), "probe_out"),
            o.ignoredConfigKeys.end());
  // The same messages as eddy-cli's, as usage errors.
  auto error = [](const std::vector<std::string>& a) {
    try {
      parseGuiOptions(a);
    } catch (const GuiUsageError& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  EXPECT_NE(error({"--obstacle", "cube:size=1"}).find("--obstacle"), std::string::npos);
  EXPECT_NE(error({"--body", "box:size=0.1,0.1,0.1:pos=1,1,1:motion=jump"}).find("--body"),
            std::string::npos);
  EXPECT_NE(error({"--probe", "pressure:P1:1,2"}).find("--probe"), std::string::npos);
  EXPECT_NE(error({"--probe", "level:A:0.1,0.1", "--probe", "level:A:0.2,0.1"}).find("'A'"),
            std::string::npos);
  EXPECT_NE(error({"--sim", "nbody", "--obstacle", "sphere:d=1:pos=0,0,0"}).find("no obstacles"),
            std::string::npos);
  EXPECT_NE(error({"--load", "x.snap", "--body", "sphere:d=0.02:pos=0.25,0.15,0.004:density=2000"})
                .find("--load"),
            std::string::npos);
}

TEST(AppSolids, ProbeHistoryKeepsTheLastWindowAndRestartsWithTheClock) {
  ProbeHistory h(1.0);
  ProbeSpec a, b;
  a.name = "A";
  b.name = "B";
  b.kind = ProbeSpec::Kind::Level;
  h.reset({a, b});
  EXPECT_STREQ(ProbeHistory::unit(a), "Pa");
  EXPECT_STREQ(ProbeHistory::unit(b), "m");
  EXPECT_FALSE(h.hasValue());
  std::mt19937 rng(test::freshSeed());
  std::uniform_real_distribution<double> u(0.001, 0.05);
  std::vector<ProbeRow> rows;
  double t = 0;
  for (int i = 0; i < 157; ++i) {  // irregular steps over about 4 s
    t += u(rng);
    rows.push_back({uint64_t(i), t, {1000.0 * t, -t}});
    h.add(rows.back());
  }
  h.add({999, t, {1.0}});  // the wrong width: ignored
  // Expected: the rows within 1 s of the newest (the newest included).
  std::vector<double> want;
  for (const auto& r : rows)
    if (r.time >= t - 1.0) want.push_back(r.values[0]);
  ASSERT_EQ(h.samples(), want.size());
  const auto s0 = h.series(0), s1 = h.series(1);
  ASSERT_EQ(s0.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) EXPECT_EQ(s0[i], float(want[i]));
  EXPECT_EQ(h.latest(0), 1000.0 * t);
  EXPECT_EQ(s1.back(), float(-t));
  EXPECT_LE(h.latestTime() - h.oldestTime(), 1.0);
  EXPECT_TRUE(h.series(7).empty());
  // A rebuilt simulation starts again at t = 0: the old history goes.
  h.add({0, 0.0, {5.0, 0.25}});
  EXPECT_EQ(h.samples(), 1u);
  EXPECT_EQ(h.latest(1), 0.25);
}

TEST(AppSolids, DropPointIsOnTheCursorRayInsideTheTank) {
  const Box tank{{0, 0, 0}, {3.22f, 1.f, 1.f}};
  std::mt19937 rng(test::freshSeed());
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  for (int i = 0; i < 200; ++i) {
    // A camera in front of the tank (+z side), looking at a point in it.
    const Vec3f eye{1.6f + 2 * u(rng), 0.5f + u(rng), 4.f + u(rng)};
    const Vec3f target{1.61f + 1.5f * u(rng), 0.5f + 0.45f * u(rng), 0.5f};
    Vec3f d{target[0] - eye[0], target[1] - eye[1], target[2] - eye[2]};
    const float l = std::sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]);
    for (auto& c : d) c /= l;
    const float half = 0.05f, margin = 0.01f;
    const auto p = dropPoint({eye, d}, tank, half, margin);
    ASSERT_TRUE(p.has_value());
    for (int k = 0; k < 3; ++k) {
      EXPECT_GE((*p)[k], tank.lo[k] + half + margin - 1e-5f);
      EXPECT_LE((*p)[k], tank.hi[k] - half - margin + 1e-5f);
    }
    // Not clamped: the point lies on the ray, on the tank's middle plane
    // (here z = 0.5, the ray's horizontal direction being mostly along -z).
    const float t = ((*p)[2] - eye[2]) / d[2];
    if (std::fabs((*p)[0] - (eye[0] + t * d[0])) < 1e-4f && (*p)[1] > half + margin + 1e-3f &&
        (*p)[1] < 1.f - half - margin - 1e-3f) {
      EXPECT_NEAR((*p)[1], eye[1] + t * d[1], 1e-4f);
    }
  }
  // Straight down: the plane at 3/4 of the height.
  const auto down = dropPoint({{1.f, 5.f, 0.5f}, {0.f, -1.f, 0.f}}, tank, 0.05f, 0.01f);
  ASSERT_TRUE(down.has_value());
  EXPECT_NEAR((*down)[1], 0.75f, 1e-5f);
  EXPECT_NEAR((*down)[0], 1.f, 1e-5f);
  // Looking away from the tank: nothing.
  EXPECT_FALSE(dropPoint({{1.6f, 0.5f, 4.f}, {0.f, 0.f, 1.f}}, tank, 0.05f, 0.01f).has_value());
  const BodySpec b = droppedBody(true, 0.1, 700, {1.f, 2.f, 3.f});
  EXPECT_EQ(b.shape.kind, ShapeKind::Sphere);
  EXPECT_EQ(b.shape.size[0], 0.1);
  EXPECT_EQ(b.density, 700);
  EXPECT_EQ(b.shape.pose.position[2], 3.0);
  EXPECT_EQ(b.motion, BodyMotion::Floating);
}

namespace {

// The app's dam break, coarse (dx = 1 cm, 4 particles deep), with room.
std::unique_ptr<Controller> sphController() {
  SceneSpec spec;
  spec.sim = "sph";
  spec.scene = "dam_break";
  Params p(sphParamDecl());
  p.set("spacing", 0.01);
  p.set("depth", 0.04);
  p.set("capacity_factor", 2);
  return std::make_unique<Controller>(test::context(), spec, p);
}

}  // namespace

TEST(AppSolids, ControllerEditsTheSolidsOfTheRunningFluid) {
  auto c = sphController();
  ASSERT_TRUE(c->hasSim()) << c->error();
  Profiler fp;
  c->paused = true;
  auto run = [&](uint64_t k) {
    c->runSteps(k);
    while (c->stepsQueued()) c->frame(fp);
  };
  run(5);
  const uint64_t steps = c->sim().steps();
  ASSERT_EQ(steps, 5u);
  const size_t n = c->sim().size();
  EXPECT_EQ(c->sim().obstacles().size(), 0u);
  EXPECT_EQ(c->sim().solidPointCount(), 0u);
  // An obstacle in the water column: the run continues (same step), fewer particles.
  ShapeSpec box;
  box.size = {0.03, 0.03, 0.04};
  box.pose.position = {0.025, 0.02, 0.02};
  c->setObstacles({box});
  EXPECT_EQ(c->obstacles().size(), 1u);  // pending, already listed
  FrameReport r = c->frame(fp);
  ASSERT_TRUE(c->error().empty()) << c->error();
  EXPECT_TRUE(r.rebuilt);
  EXPECT_TRUE(r.solidsEdited);
  EXPECT_EQ(c->sim().steps(), steps);
  EXPECT_LT(c->sim().size(), n);
  EXPECT_EQ(c->sim().obstacles().size(), 1u);
  EXPECT_GT(c->sim().solidPointCount(), 0u);
  EXPECT_EQ(c->spec().obstacles.size(), 1u);  // added: a reset keeps it
  // Move it, then drop a ball: one body, still the same run.
  box.pose.position[0] = 0.2;
  c->setObstacles({box});
  c->dropBody(droppedBody(true, 0.02, 500, {0.3f, 0.15f, 0.02f}));
  r = c->frame(fp);
  ASSERT_TRUE(c->error().empty()) << c->error();
  EXPECT_TRUE(r.solidsEdited);
  EXPECT_EQ(c->sim().bodyCount(), 1u);
  ASSERT_EQ(c->sim().obstacles().size(), 1u);
  EXPECT_EQ(c->sim().obstacles()[0].pose.position[0], 0.2);
  EXPECT_TRUE(c->sim().solidsMove());
  EXPECT_EQ(c->spec().bodies.size(), 1u);
  run(5);
  EXPECT_EQ(c->sim().steps(), steps + 5);
  // Delete the obstacle; a bad mesh is refused and changes nothing.
  c->setObstacles({});
  c->frame(fp);
  EXPECT_EQ(c->sim().obstacles().size(), 0u);
  ShapeSpec mesh;
  mesh.kind = ShapeKind::Mesh;
  mesh.file = test::tempDir() + "/missing.stl";
  const size_t before = c->sim().size();
  const uint64_t gen = c->generation();
  c->setObstacles({mesh});
  r = c->frame(fp);
  EXPECT_FALSE(r.rebuilt);
  EXPECT_EQ(c->generation(), gen);
  EXPECT_NE(c->error().find("missing.stl"), std::string::npos) << c->error();
  EXPECT_EQ(c->sim().size(), before);
  EXPECT_EQ(c->sim().obstacles().size(), 0u);
  // Reset: the scene again with the added (none now) and the dropped body.
  c->reset();
  c->frame(fp);
  EXPECT_EQ(c->sim().steps(), 0u);
  EXPECT_EQ(c->sim().bodyCount(), 1u);
}

// A body dropped from the panel (or an obstacle moved there) is checked as a
// declared one is when the scene is built (sphCheckSolids), when it arrives:
// before, a floating ball thinner than a spacing or a box wider than the
// tank joined the running fluid and only a Reset refused it.
TEST(AppSolids, DroppedBodiesAndMovedObstaclesAreCheckedWhenTheyArrive) {
  auto c = sphController();
  ASSERT_TRUE(c->hasSim()) << c->error();
  Profiler fp;
  c->paused = true;
  c->runSteps(3);
  while (c->stepsQueued()) c->frame(fp);
  const uint64_t steps = c->sim().steps(), gen = c->generation();
  const size_t n = c->sim().size();
  auto refused = [&](const char* what, const std::string& needle) {
    SCOPED_TRACE(what);
    const FrameReport r = c->frame(fp);
    EXPECT_FALSE(r.rebuilt);
    EXPECT_EQ(c->generation(), gen);
    EXPECT_NE(c->error().find(needle), std::string::npos) << c->error();
    EXPECT_EQ(c->sim().steps(), steps);
    EXPECT_EQ(c->sim().size(), n);
    EXPECT_EQ(c->sim().bodyCount(), 0u);
    EXPECT_EQ(c->sim().obstacles().size(), 0u);
    EXPECT_TRUE(c->spec().bodies.empty());
  };
  // A floating ball of half a spacing (dx = 1 cm).
  c->dropBody(droppedBody(true, 0.005, 500, {0.3f, 0.15f, 0.02f}));
  refused("thin ball", "particle spacing across");
  // A box 8 cm deep in a tank 4 cm deep.
  BodySpec wide = droppedBody(false, 0.02, 800, {0.3f, 0.15f, 0.02f});
  wide.shape.size[2] = 0.08;
  c->dropBody(wide);
  refused("wide box", "does not fit in the tank");
  // An obstacle moved wholly beyond the tank's walls.
  ShapeSpec far;
  far.size = {0.03, 0.03, 0.03};
  far.pose.position = {5, 5, 5};
  c->setObstacles({far});
  refused("far obstacle", "outside the tank");
  // A good drop still joins the run.
  c->dropBody(droppedBody(true, 0.02, 500, {0.3f, 0.15f, 0.02f}));
  c->frame(fp);
  EXPECT_TRUE(c->error().empty()) << c->error();
  EXPECT_EQ(c->sim().bodyCount(), 1u);
  EXPECT_EQ(c->sim().steps(), steps);
}

TEST(AppSolids, ProbesFillTheHistoryAndSurviveAnEdit) {
  auto c = sphController();
  ASSERT_TRUE(c->hasSim()) << c->error();
  ProbeSpec p = parseProbeSpec("pressure:B:0.02,0.01,0.02");
  ProbeSpec out = parseProbeSpec("level:far:9,0.02");
  c->setProbes({p, out});
  EXPECT_NE(c->probeError().find("far"), std::string::npos) << c->probeError();
  ASSERT_EQ(c->probeHistory().probes().size(), 1u);
  Profiler fp;
  c->paused = true;
  c->runSteps(200);
  while (c->stepsQueued()) c->frame(fp);
  c->sim().flushProbes();
  const size_t samples = c->probeHistory().samples();
  EXPECT_GE(samples, 2u);
  // Near the floor of a 0.11 m column: a positive pressure, below rho g H.
  EXPECT_GT(c->probeHistory().latest(0), 0.0);
  EXPECT_LT(c->probeHistory().latest(0), 1000 * 9.81 * 0.2);
  // An edit continues the run: the history goes on.
  c->dropBody(droppedBody(false, 0.02, 800, {0.3f, 0.15f, 0.02f}));
  c->frame(fp);
  ASSERT_TRUE(c->error().empty()) << c->error();
  EXPECT_GE(c->probeHistory().samples(), samples);
}

// An obstacle added over one of the scene's own probes (SPHERIC P1 on the
// obstacle's face x = 0.8245, at y 0.021, z 0.471) leaves that probe out,
// saying so, and the others go on; the edit itself goes through. Before, the
// scene's probe was refused by a throw out of the frame that ended the app.
TEST(AppSolids, AnObstacleOverAScenesProbeLeavesItOut) {
  SceneSpec spec;
  spec.sim = "sph";
  spec.scene = "spheric_dam_break";
  Params params(sphParamDecl());
  params.set("spacing", 0.05);
  auto c = std::make_unique<Controller>(test::context(), spec, params);
  ASSERT_TRUE(c->hasSim()) << c->error();
  const size_t probes = c->probeHistory().probes().size();
  ASSERT_EQ(probes, 12u);  // P1-P8, H1-H4
  EXPECT_TRUE(c->probeError().empty()) << c->probeError();
  std::vector<ShapeSpec> obstacles = c->obstacles();
  ShapeSpec cover;
  cover.size = {0.06, 0.03, 0.06};  // y 0.005 .. 0.035: P1, not P2 (y 0.061)
  cover.pose.position = {0.83, 0.02, 0.471};
  obstacles.push_back(cover);
  c->setObstacles(obstacles);
  Profiler fp;
  c->paused = true;
  FrameReport r;
  ASSERT_NO_THROW(r = c->frame(fp));
  EXPECT_TRUE(r.solidsEdited) << c->error();
  EXPECT_EQ(c->sim().obstacles().size(), 2u);
  EXPECT_NE(c->probeError().find("the scene's probe pressure:P1:"), std::string::npos) << c->probeError();
  EXPECT_NE(c->probeError().find("inside the obstacle"), std::string::npos) << c->probeError();
  EXPECT_TRUE(c->appProbeError().empty()) << c->appProbeError();
  ASSERT_EQ(c->probeHistory().probes().size(), probes - 1);
  EXPECT_EQ(c->probeHistory().probes()[0].name, "P2");
  c->runSteps(3);
  while (c->stepsQueued()) c->frame(fp);
  EXPECT_EQ(c->sim().steps(), 3u);
  // Taken away again: P1 is back.
  obstacles.pop_back();
  c->setObstacles(obstacles);
  c->frame(fp);
  EXPECT_TRUE(c->probeError().empty()) << c->probeError();
  EXPECT_EQ(c->probeHistory().probes().size(), probes);
}

TEST(AppSolids, PanelAddsMovesDeletesAndDrops) {
  test::HeadlessImGui ui;
  auto c = sphController();
  ASSERT_TRUE(c->hasSim()) << c->error();
  Panel panel;
  Profiler fp;
  c->paused = true;
  ui.click(panel, *c, "Add obstacle");
  c->frame(fp);
  ASSERT_TRUE(c->error().empty()) << c->error();
  EXPECT_EQ(c->sim().obstacles().size(), 1u);
  ui.click(panel, *c, "Drop body");
  c->frame(fp);
  ASSERT_TRUE(c->error().empty()) << c->error();
  EXPECT_EQ(c->sim().bodyCount(), 1u);
  EXPECT_GT(panel.bodySize(), 0.0);
  EXPECT_EQ(panel.bodyDensity(), 500.0);
  // Select the obstacle (its row) and delete it.
  ui.frame(panel, *c, -1, -1, false);
  EXPECT_FALSE(panel.widgetRect("button:Delete").has_value());  // nothing selected yet
  ASSERT_TRUE(panel.widgetRect("solid:0").has_value());
  const auto r = *panel.widgetRect("solid:0");
  const float x = 0.5f * (r[0] + r[2]), y = 0.5f * (r[1] + r[3]);
  ui.frame(panel, *c, x, y, false);
  ui.frame(panel, *c, x, y, true);
  ui.frame(panel, *c, x, y, false);
  ui.click(panel, *c, "Delete");
  c->frame(fp);
  ASSERT_TRUE(c->error().empty()) << c->error();
  EXPECT_EQ(c->sim().obstacles().size(), 0u);
  EXPECT_EQ(c->sim().bodyCount(), 1u);
}

// Issue 12: "shift + double-click drops a box or a ball of a chosen density;
// a plain double-click keeps dropping fluid", through the app's mouse
// handling (MouseInput::update, what App::handleMouse calls every frame with
// the cursor, buttons and modifier keys read from GLFW), the panel's body
// settings and the controller, on a fitted camera and a made-up clock.
TEST(AppSolids, ShiftDoubleClickDropsABodyAtTheCursorAPlainOneDropsFluid) {
  test::HeadlessImGui ui;
  auto c = sphController();
  ASSERT_TRUE(c->hasSim()) << c->error();
  Panel panel;
  ui.frame(panel, *c, -1, -1, false);  // the panel's body settings from the tank
  ASSERT_GT(panel.bodySize(), 0.0);
  const Box tank = *c->sim().domain();
  const int w = 800, h = 500;
  OrbitCamera cam;
  cam.fit(tank, float(w) / float(h));
  const OrbitCamera camAtStart = cam;
  ViewSettings view;
  MouseInput mouse;
  Profiler fp;
  c->paused = true;
  double clock = 100.0;
  // One frame of the mouse at (x, y): the buttons and keys as given.
  auto frame = [&](double x, double y, bool left, bool shift, bool overPanel = false, double dt = 0.05) {
    clock += dt;
    PointerState p;
    p.x = x;
    p.y = y;
    p.width = w;
    p.height = h;
    p.left = left;
    p.shift = shift;
    p.overPanel = overPanel;
    mouse.update(p, clock, float(dt), panel, view, 1.f, *c, cam);
  };
  // Press, release, press: a double click when the second press comes within
  // 0.35 s and 5 pixels of the first.
  // (A second of no clicks first: no earlier press can pair with these.)
  auto doubleClick = [&](double x, double y, bool shift, double gap = 0.05, bool overPanel = false) {
    frame(x, y, false, false, false, 1.0);
    frame(x, y, true, shift, overPanel);
    frame(x, y, false, shift, overPanel, gap);
    frame(x + 2, y - 1, true, shift, overPanel, gap);
    frame(x + 2, y - 1, false, shift, overPanel);
  };
  std::mt19937 rng(test::freshSeed());
  std::uniform_real_distribution<double> ux(0.35 * w, 0.65 * w), uy(0.3 * h, 0.7 * h);

  // A plain double click: a block of fluid, no body.
  const size_t n0 = c->sim().size();
  doubleClick(ux(rng), uy(rng), false);
  c->frame(fp);
  ASSERT_TRUE(c->error().empty()) << c->error();
  EXPECT_GT(c->sim().size(), n0) << "a plain double click drops fluid";
  EXPECT_EQ(c->sim().bodyCount(), 0u);
  EXPECT_TRUE(c->spec().bodies.empty());

  // Not double clicks: too slow, too far apart, or on the panel. Nothing.
  const size_t n1 = c->sim().size();
  const uint64_t gen = c->generation();
  doubleClick(ux(rng), uy(rng), true, 0.2);  // 0.4 s between the presses
  const double x0 = ux(rng), y0 = uy(rng);
  frame(x0, y0, false, false, false, 1.0);
  frame(x0, y0, true, true);
  frame(x0, y0, false, true);
  frame(x0 + 8, y0, true, true);  // 8 pixels away
  frame(x0 + 8, y0, false, true);
  doubleClick(ux(rng), uy(rng), true, 0.05, true);
  c->frame(fp);
  EXPECT_EQ(c->generation(), gen);
  EXPECT_EQ(c->sim().size(), n1);
  EXPECT_EQ(c->sim().bodyCount(), 0u);

  // Shift + double click: one body of the panel's shape, size and density at
  // the point the cursor picks (its ray on the tank's middle plane).
  const double x = ux(rng), y = uy(rng);
  const float half = 0.5f * float(panel.bodySize());
  const auto at = dropPoint(cam.ray(float(x + 2), float(y - 1), float(w), float(h)), tank, half,
                            2 * c->sim().particleRadius());
  ASSERT_TRUE(at.has_value());
  doubleClick(x, y, true);
  c->frame(fp);
  ASSERT_TRUE(c->error().empty()) << c->error();
  EXPECT_EQ(c->sim().bodyCount(), 1u);
  EXPECT_LE(c->sim().size(), n1) << "a body drops no fluid";
  ASSERT_EQ(c->spec().bodies.size(), 1u);
  const BodySpec& b = c->spec().bodies[0];
  EXPECT_EQ(b.shape.kind, panel.bodyBall() ? ShapeKind::Sphere : ShapeKind::Box);
  EXPECT_EQ(b.shape.size[0], panel.bodySize());
  EXPECT_EQ(b.density, panel.bodyDensity());
  for (int k = 0; k < 3; ++k) EXPECT_EQ(b.shape.pose.position[size_t(k)], double((*at)[size_t(k)])) << k;
  // The body's boundary particles (the only solid here) are centred there.
  const size_t m = c->sim().solidPointCount();
  ASSERT_GT(m, 0u);
  std::vector<cl_float4> pts(m);
  test::context().queue().enqueueReadBuffer(*c->sim().solidPoints(), CL_TRUE, 0, m * sizeof(cl_float4),
                                            pts.data());
  for (int k = 0; k < 3; ++k) {
    double mean = 0;
    for (const auto& q : pts) mean += q.s[k];
    EXPECT_NEAR(mean / double(m), (*at)[size_t(k)], 0.1 * panel.bodySize()) << k;
  }
  // Clicks do not move the camera (a shift drag pans, but nothing moved).
  EXPECT_EQ(cam.target, camAtStart.target);
  EXPECT_EQ(cam.distance, camAtStart.distance);
}
