// The panel's parts of issue 14, headless (ImGui without a backend): the
// render-pass table beside the kernels and the Record / Stop button (red dot
// and elapsed time while recording).
#include "controller.hpp"
#include "nbody.hpp"
#include "panel.hpp"
#include "test_util.hpp"

#include <gtest/gtest.h>
#include <imgui.h>
#include <imgui_internal.h>

#include <memory>

using namespace eddy;

namespace {

class PanelRender : public ::testing::Test {
 protected:
  void SetUp() override {
    ctx_ = ImGui::CreateContext();
    ImGuiIO& io = ImGui::GetIO();
    io.IniFilename = nullptr;
    io.DisplaySize = ImVec2(1280, 3000);  // tall: every section fits without scrolling
    io.DeltaTime = 1.f / 60.f;
    unsigned char* px = nullptr;
    int w = 0, h = 0;
    io.Fonts->GetTexDataAsRGBA32(&px, &w, &h);
    SceneSpec spec;
    spec.sim = "nbody";
    spec.scene = "plummer";
    spec.n = 64;
    c_ = std::make_unique<Controller>(test::context(), spec, Params(nbodyParamDecl()));
  }
  void TearDown() override {
    c_.reset();
    ImGui::DestroyContext(ctx_);
  }
  // One frame of the panel with the mouse at (mx, my).
  void frame(const PanelStats& s, float mx = -1, float my = -1, bool down = false) {
    ImGuiIO& io = ImGui::GetIO();
    io.MousePos = ImVec2(mx, my);
    io.MouseDown[0] = down;
    ImGui::NewFrame();
    panel_.draw(*c_, view_, s);
    ImGui::Render();
  }
  void openView() {
    ImGuiWindow* w = ImGui::FindWindowByName("eddy");
    ASSERT_NE(w, nullptr);
    w->StateStorage.SetInt(w->GetID("View"), 1);
  }
  void click(const PanelStats& s, const std::string& label) {
    frame(s);
    const auto r = panel_.widgetRect("button:" + label);
    ASSERT_TRUE(r.has_value()) << "no button '" << label << "'";
    const float x = 0.5f * ((*r)[0] + (*r)[2]), y = 0.5f * ((*r)[1] + (*r)[3]);
    frame(s, x, y, false);
    frame(s, x, y, true);
    frame(s, x, y, false);
  }
  ImGuiContext* ctx_ = nullptr;
  std::unique_ptr<Controller> c_;
  Panel panel_;
  ViewSettings view_;
};

TEST_F(PanelRender, RecordButtonStartsAndStops) {
  PanelStats s;
  frame(s);
  openView();
  click(s, "Record");
  EXPECT_TRUE(panel_.recordRequested) << "the button asks the app to start";
  panel_.recordRequested = false;
  s.recording = true;
  s.recordSeconds = 75.4;
  s.recordFrames = 4521;
  s.recordTarget = "frames";
  frame(s);
  EXPECT_TRUE(panel_.widgetRect("button:Stop recording").has_value()) << "while recording the button stops";
  click(s, "Stop recording");
  EXPECT_TRUE(panel_.recordRequested) << "the same button asks the app to stop";
}

TEST_F(PanelRender, RenderPassTableBesideTheKernels) {
  PanelStats s;
  for (const char* name : {"background", "depth", "smooth", "shade"}) {
    PhaseStats p;
    p.name = name;
    p.lastMs = p.meanMs = p.maxMs = 0.5;
    p.totalMs = 5;
    p.count = 10;
    s.renderPasses.push_back(p);
  }
  view_.style = DrawStyle::Surface;
  frame(s);
  openView();
  frame(s);
  // The tables are ImGui tables with the panel window as their parent.
  auto tables = [] {
    int n = 0;
    ImGuiContext& g = *GImGui;
    for (int i = 0; i < g.Tables.GetMapSize(); ++i)
      if (ImGuiTable* t = g.Tables.TryGetMapData(i); t && t->OuterWindow && std::string(t->OuterWindow->Name) == "eddy" &&
                                                      t->LastFrameActive == g.FrameCount)
        ++n;
    return n;
  };
  const int with = tables();
  ImGuiWindow* w = ImGui::FindWindowByName("eddy");
  ASSERT_NE(w, nullptr);
  ImGuiTable* render = ImGui::TableFindByID(w->GetID("render"));
  ASSERT_NE(render, nullptr) << "the render-pass table";
  EXPECT_EQ(render->ColumnsCount, 5) << "pass, last, mean, max, share";
  EXPECT_EQ(render->LastFrameActive, GImGui->FrameCount);
  EXPECT_NE(ImGui::TableFindByID(w->GetID("kernels")), nullptr) << "beside the kernel table";
  frame(PanelStats{});
  EXPECT_EQ(tables(), with - 1) << "no render passes measured yet: no table";
}

}  // namespace
