// An ImGui context without any platform or renderer backend, driving the real
// panel code with a synthetic mouse (tests of the panel -> controller path).
#pragma once

#include "controller.hpp"
#include "panel.hpp"

#include <gtest/gtest.h>
#include <imgui.h>

#include <string>

namespace eddy::test {

class HeadlessImGui {
 public:
  explicit HeadlessImGui(float height = 1600) {
    ctx_ = ImGui::CreateContext();
    ImGuiIO& io = ImGui::GetIO();
    io.IniFilename = nullptr;
    io.DisplaySize = ImVec2(1280, height);
    io.DeltaTime = 1.f / 60.f;
    unsigned char* px = nullptr;
    int w = 0, h = 0;
    io.Fonts->GetTexDataAsRGBA32(&px, &w, &h);  // builds the font atlas
  }
  ~HeadlessImGui() { ImGui::DestroyContext(ctx_); }
  HeadlessImGui(const HeadlessImGui&) = delete;
  HeadlessImGui& operator=(const HeadlessImGui&) = delete;

  // One frame of the panel with the mouse at (x, y), left button down or up.
  void frame(Panel& panel, Controller& c, ViewSettings& v, float x, float y, bool down) {
    ImGuiIO& io = ImGui::GetIO();
    io.MousePos = ImVec2(x, y);
    io.MouseDown[0] = down;
    ImGui::NewFrame();
    panel.draw(c, v, PanelStats{});
    ImGui::Render();
  }
  void frame(Panel& panel, Controller& c, float x, float y, bool down) {
    frame(panel, c, view_, x, y, down);
  }
  // Clicks the panel's button `label` ("Save settings", "Retry", ...).
  void click(Panel& panel, Controller& c, const std::string& label) {
    frame(panel, c, -1, -1, false);
    const auto r = panel.widgetRect("button:" + label);
    ASSERT_TRUE(r.has_value()) << "the panel shows no button '" << label << "'";
    const float x = 0.5f * ((*r)[0] + (*r)[2]), y = 0.5f * ((*r)[1] + (*r)[3]);
    frame(panel, c, x, y, false);
    frame(panel, c, x, y, true);
    frame(panel, c, x, y, false);
  }

 private:
  ImGuiContext* ctx_;
  ViewSettings view_;
};

}  // namespace eddy::test
