// The panel without a window: an ImGui context with no backend renders the
// real panel code, the mouse is moved onto a parameter's slider and clicked,
// and the simulation must receive the value at its next step (not before).
#include "controller.hpp"
#include "defaults.hpp"
#include "nbody.hpp"
#include "panel.hpp"
#include "headless_imgui.hpp"
#include "test_util.hpp"

#include <gtest/gtest.h>
#include <imgui.h>
#include <imgui_internal.h>

#include <algorithm>
#include <cmath>

using namespace eddy;

namespace {

using test::HeadlessImGui;

std::unique_ptr<Controller> nbodyController(size_t n = 64) {
  SceneSpec spec;
  spec.sim = "nbody";
  spec.scene = "plummer";
  spec.n = n;
  return std::make_unique<Controller>(test::context(), spec, Params(nbodyParamDecl()));
}

// Clicks the middle of parameter `name`'s slider: the value jumps there.
void clickSlider(HeadlessImGui& ui, Panel& panel, Controller& c, ViewSettings& v,
                 const std::string& name, float fraction) {
  ui.frame(panel, c, v, -1, -1, false);  // lays the panel out
  const auto r = panel.widgetRect(name);
  ASSERT_TRUE(r.has_value()) << "the panel shows no widget for '" << name << "'";
  const float x = (*r)[0] + fraction * ((*r)[2] - (*r)[0]);
  const float y = 0.5f * ((*r)[1] + (*r)[3]);
  ui.frame(panel, c, v, x, y, false);  // hover
  ui.frame(panel, c, v, x, y, true);   // press: the slider takes the value under the cursor
  ui.frame(panel, c, v, x, y, false);  // release
}

TEST(Panel, SliderChangeReachesSimulationAtNextStep) {
  HeadlessImGui ui;
  auto c = nbodyController();
  c->paused = true;
  Panel panel;
  ViewSettings v;
  Profiler fp;
  c->stepOnce();
  c->frame(fp);  // one step with the default dt
  const double dt0 = c->sim().params().get("dt");
  const double t0 = c->sim().time();
  ASSERT_DOUBLE_EQ(t0, dt0);

  clickSlider(ui, panel, *c, v, "dt", 0.5f);
  const double edited = c->editParams().get("dt");
  // dt has a logarithmic slider over [1e-6, 1]: its middle is about 1e-3 ..
  // anything but the old value, inside the range.
  EXPECT_NE(edited, dt0);
  EXPECT_GE(edited, 1e-6);
  EXPECT_LE(edited, 1.0);
  const ParamDesc& d = *c->editParams().find("dt");
  ASSERT_TRUE(d.logScale);
  EXPECT_NEAR(std::log10(edited), 0.5 * (std::log10(d.min) + std::log10(d.max)), 0.5)
      << "a click in the middle of a log slider lands near the geometric middle";

  // Not yet in the simulation: it arrives at the next step boundary.
  EXPECT_EQ(c->sim().params().get("dt"), dt0);
  c->stepOnce();
  const FrameReport r = c->frame(fp);
  EXPECT_EQ(r.steps, 1u);
  EXPECT_FALSE(r.rebuilt);
  EXPECT_EQ(c->sim().params().get("dt"), edited);
  // The step itself used the new dt (the simulated clock advances by it).
  EXPECT_NEAR(c->sim().time() - t0, edited, 1e-15);
}

TEST(Panel, LinearSliderSetsValueUnderCursor) {
  HeadlessImGui ui;
  auto c = nbodyController();
  c->paused = true;
  Panel panel;
  ViewSettings v;
  Profiler fp;
  clickSlider(ui, panel, *c, v, "G", 0.25f);
  const ParamDesc& d = *c->editParams().find("G");
  ASSERT_FALSE(d.logScale);
  const double g = c->editParams().get("G");
  EXPECT_NEAR(g, d.min + 0.25 * (d.max - d.min), 0.05 * (d.max - d.min));
  EXPECT_NE(c->sim().params().get("G"), g);
  c->frame(fp);  // paused: no step, but this is a step boundary
  EXPECT_EQ(c->sim().params().get("G"), g);
}

TEST(Panel, EveryDeclaredParameterHasAWidget) {
  HeadlessImGui ui;
  auto c = nbodyController();
  Panel panel;
  ViewSettings v;
  ui.frame(panel, *c, v, -1, -1, false);
  for (const auto& d : c->editParams().declarations())
    EXPECT_TRUE(panel.widgetRect(d.name).has_value()) << d.name;
}

// A scene's geometry parameters that it does not read are shown disabled: on
// lobovsky_dam_break (its own tank and column) tank_length and column_width
// change nothing, while spacing still applies; on dam_break they are live.
// A click on a disabled slider changes nothing.
TEST(Panel, ParametersTheSceneDoesNotReadAreDisabled) {
  const auto& sims = simulationNames();
  if (std::find(sims.begin(), sims.end(), "sph") == sims.end()) GTEST_SKIP() << "no SPH";
  HeadlessImGui ui(3000);
  for (const char* scene : {"lobovsky_dam_break", "dam_break"}) {
    SCOPED_TRACE(scene);
    SceneSpec spec;
    spec.sim = "sph";
    spec.scene = scene;
    Params p = defaultAppParams("sph");
    p.set("spacing", 0.006);
    Controller c(test::context(), spec, p);
    ASSERT_TRUE(c.hasSim()) << c.error();
    c.paused = true;
    Panel panel;
    ViewSettings v;
    ui.frame(panel, c, v, -1, -1, false);
    const auto& off = panel.disabledParams();
    auto has = [&](const char* k) { return std::find(off.begin(), off.end(), k) != off.end(); };
    EXPECT_FALSE(has("spacing"));
    EXPECT_TRUE(has("drop_radius")) << "no scene of these has a drop";
    EXPECT_EQ(has("tank_length"), std::string(scene) == "lobovsky_dam_break");
    EXPECT_EQ(has("column_width"), std::string(scene) == "lobovsky_dam_break");
    const double before = c.editParams().get("tank_length");
    const auto r = panel.widgetRect("tank_length");
    ASSERT_TRUE(r.has_value());
    const float x = (*r)[0] + 0.9f * ((*r)[2] - (*r)[0]), y = 0.5f * ((*r)[1] + (*r)[3]);
    ui.frame(panel, c, v, x, y, false);
    ui.frame(panel, c, v, x, y, true);
    ui.frame(panel, c, v, x, y, false);
    EXPECT_EQ(c.editParams().get("tank_length") == before, std::string(scene) == "lobovsky_dam_break");
  }
}

TEST(Controller, RebuildParameterRebuildsAndFreesTheOldSimulation) {
  const int before = Simulation::liveCount();
  {
    auto c = nbodyController(100);
    Profiler fp;
    EXPECT_EQ(Simulation::liveCount(), before + 1);
    const auto p0 = static_cast<NBodySim&>(c->sim()).readPositions();
    c->setParam("seed", 42);  // a rebuild parameter
    EXPECT_TRUE(c->rebuildPending());
    EXPECT_TRUE(c->frame(fp).rebuilt);
    EXPECT_EQ(c->sim().params().getInt("seed"), 42);
    const auto p1 = static_cast<NBodySim&>(c->sim()).readPositions();
    EXPECT_NE(p0[0].s[0], p1[0].s[0]) << "a new seed gives new bodies";
    for (int i = 0; i < 5; ++i) {
      c->setCount(size_t(50 + 37 * i));
      c->frame(fp);
      EXPECT_EQ(c->sim().size(), size_t(50 + 37 * i));
      EXPECT_EQ(Simulation::liveCount(), before + 1) << "old simulations are freed";
    }
    c->selectScene("collapse");
    c->frame(fp);
    EXPECT_EQ(c->spec().scene, "collapse");
    EXPECT_EQ(c->generation(), 7u);
    EXPECT_THROW(c->selectScene("no_such_scene"), Error);
    EXPECT_THROW(c->selectSimulation("no_such_sim"), Error);
    EXPECT_THROW(c->setParam("dt", -1), ParamError);
    EXPECT_THROW(c->setParam("nope", 1), ParamError);
  }
  EXPECT_EQ(Simulation::liveCount(), before);
}

TEST(Controller, RunControl) {
  auto c = nbodyController();
  Profiler fp;
  c->substeps = 3;
  EXPECT_EQ(c->frame(fp).steps, 3u);
  c->paused = true;
  EXPECT_EQ(c->frame(fp).steps, 0u);
  c->runSteps(7);
  EXPECT_EQ(c->frame(fp).steps, 3u);
  EXPECT_EQ(c->frame(fp).steps, 3u);
  EXPECT_EQ(c->frame(fp).steps, 1u);
  EXPECT_TRUE(c->paused);
  EXPECT_EQ(c->frame(fp).steps, 0u);
  EXPECT_EQ(c->sim().steps(), 10u);
  c->stepOnce();
  EXPECT_EQ(c->frame(fp).steps, 1u);
  // Pushes are applied at the boundary and recorded as their own phase.
  Ray r;
  r.origin = {0, 0, 10};
  r.dir = {0, 0, -1};
  c->push(r, 100.f, {1, 0, 0});
  c->frame(fp);
  fp.collect(true);
  bool sawPush = false;
  for (const auto& s : fp.stats()) sawPush = sawPush || (s.name == "push" && s.count == 1);
  EXPECT_TRUE(sawPush);
}

// "Drop block" on the app's SPH: the app's parameters leave room (capacity
// factor 4), the block lands at the next step boundary; a second block while
// the first still fills its space is refused (fluid stacked on fluid blew up
// at hundreds of m/s), and a block that does not fit is reported, not thrown.
TEST(Controller, DropBlockGrowsTheFluidOnlyWhereThereIsRoom) {
  Params p = defaultAppParams("sph");
  EXPECT_EQ(p.get("capacity_factor"), kAppSphCapacityFactor);
  p.set("spacing", 0.004);
  p.set("depth", 0.016);
  SceneSpec spec;
  spec.sim = "sph";
  Controller c(test::context(), spec, p);
  ASSERT_TRUE(c.sim().supportsAddBlock());
  const size_t n0 = c.sim().size(), cap = c.sim().capacity();
  EXPECT_EQ(cap, size_t(std::ceil(kAppSphCapacityFactor * double(n0))));
  Profiler fp;
  c.paused = true;
  c.dropBlock();
  EXPECT_EQ(c.sim().size(), n0);  // queued for the step boundary
  c.frame(fp);
  EXPECT_TRUE(c.error().empty()) << c.error();
  const size_t block = c.sim().size() - n0;
  EXPECT_GT(block, 0u);
  // Again, before the block has fallen: refused, nothing added.
  c.dropBlock();
  c.frame(fp);
  EXPECT_NE(c.error().find("Drop block refused: " + std::to_string(block) + " particles"),
            std::string::npos)
      << c.error();
  EXPECT_EQ(c.sim().size(), n0 + block);
  // A block where there is room (upper right, clear of the first) lands.
  c.clearError();
  const Box dom = *c.sim().domain();
  Box right;
  for (int k = 0; k < 3; ++k) {
    right.lo[k] = dom.lo[k] + 0.5f * (dom.hi[k] - dom.lo[k]);
    right.hi[k] = dom.hi[k];
  }
  right.lo[0] = dom.lo[0] + 0.8f * (dom.hi[0] - dom.lo[0]);
  right.lo[2] = dom.lo[2];
  c.addBlock(right);
  c.frame(fp);
  EXPECT_TRUE(c.error().empty()) << c.error();
  EXPECT_GT(c.sim().size(), n0 + block);

  // No room in the buffers: reported with the capacity, not thrown.
  Params full = p;
  full.set("capacity_factor", 1.0);
  Controller d(test::context(), spec, full);
  d.paused = true;
  d.dropBlock();
  d.frame(fp);
  EXPECT_NE(d.error().find("capacity"), std::string::npos) << d.error();
  EXPECT_EQ(d.sim().size(), d.sim().capacity());
}

TEST(Panel, LegendAndHelpOverlays) {
  HeadlessImGui ui;
  auto c = nbodyController();
  Panel panel;
  ViewSettings v;
  v.colorField = 1;  // mass
  v.showHelp = true;
  ImGui::NewFrame();
  panel.drawLegend(c->sim(), v);
  panel.drawHelp(v);
  ImGui::Render();
  const ImGuiWindow* legend = ImGui::FindWindowByName("legend");
  ASSERT_NE(legend, nullptr);
  EXPECT_TRUE(legend->Active);
  ASSERT_NE(ImGui::FindWindowByName("Help (F1)"), nullptr);
  EXPECT_TRUE(ImGui::FindWindowByName("Help (F1)")->Active);
  // No field: no legend this frame.
  v.colorField = -1;
  v.showHelp = false;
  ImGui::NewFrame();
  panel.drawLegend(c->sim(), v);
  panel.drawHelp(v);
  ImGui::Render();
  EXPECT_FALSE(ImGui::FindWindowByName("legend")->Active);
  EXPECT_FALSE(ImGui::FindWindowByName("Help (F1)")->Active);
}

TEST(ParamWidget, UnchangedWithoutInput) {
  HeadlessImGui ui;
  ParamDesc d{"k", "K", "G", "", 0, 10, 3, "an integer", true, false, false};
  ImGui::NewFrame();
  double v = 3;
  EXPECT_FALSE(paramWidget(d, v)) << "no input, no change";
  EXPECT_EQ(v, 3);
  ImGui::Render();
}

}  // namespace

// N-body is drawn as points: the panel never leaves it in the surface
// (water) style, which the style list does not offer for it.
TEST(Panel, PointsAreNeverDrawnAsWater) {
  HeadlessImGui ui;
  auto c = nbodyController();
  Panel panel;
  ViewSettings v;
  v.style = DrawStyle::Surface;
  ui.frame(panel, *c, v, -1, -1, false);
  EXPECT_EQ(v.style, DrawStyle::Glow);
  v.style = DrawStyle::Spheres;
  ui.frame(panel, *c, v, -1, -1, false);
  EXPECT_EQ(v.style, DrawStyle::Spheres);
}
