// panel.hpp: the ImGui control panel, generated from the parameter registry
// (ParamDesc: group -> section, label, unit, range, description -> tooltip,
// logScale -> logarithmic slider). GL-free: it only emits ImGui calls and
// talks to the Controller, so a test can run it on an ImGui context without a
// window.
#pragma once

#include "controller.hpp"
#include "view_settings.hpp"

#include <imgui.h>

#include <array>
#include <deque>
#include <map>
#include <optional>
#include <string>

namespace eddy {

struct PanelStats {
  std::string device, bufferPath;
  double fps = 0, stepsPerSec = 0;
  double simulateMs = 0, transferMs = 0, drawMs = 0, frameMs = 0, waitMs = 0;
  const Profiler* frameProfiler = nullptr;  // per-frame work (colour, transfer, push)
  std::vector<PhaseStats> renderPasses;     // GPU time of each render pass (timer queries)
  bool recording = false;                   // a recording runs
  double recordSeconds = 0;                 // its wall-clock time so far
  uint64_t recordFrames = 0;                // frames captured so far
  std::string recordTarget;
  std::array<float, 2> fieldRange{0, 1};    // auto range currently used
};

// One parameter's widget: a slider (logarithmic where declared) over the
// declared range, or an integer input; tooltip from the description. Returns
// true when the user changed `value` (already clamped to the range).
bool paramWidget(const ParamDesc& d, double& value);

class Panel {
 public:
  // The panel window. Edits go to the controller (queued until the next step
  // boundary) and to the view settings.
  void draw(Controller& c, ViewSettings& v, const PanelStats& s);
  // Width in pixels the panel covers at the right of a display `w` wide.
  static float coveredWidth(float displayWidth);
  // Colour legend (bottom left) and the F1 help overlay.
  void drawLegend(const Simulation& sim, const ViewSettings& v);
  void drawHelp(ViewSettings& v);

  // Buttons the app acts on (cleared by the app).
  bool fitRequested = false, screenshotRequested = false;
  bool recordRequested = false;  // the Record / Stop button: start or stop a recording

  // Screen rectangle {x0, y0, x1, y1} of the widget of parameter `name` in the
  // last draw(): tests move the mouse there to drive the real widget. Buttons
  // are listed as "button:<label>" (e.g. "button:Save settings", "button:Retry"),
  // the stepping widgets as "check:real time", "speed" and "substeps", the
  // Solids section's obstacle rows as "solid:0", "solid:1", ...
  std::optional<std::array<float, 4>> widgetRect(const std::string& name) const;

  // The solver's state shown under the step counter in the last draw(): DFSPH's
  // iterations and errors of each solve, WCSPH's density error.
  const std::vector<std::string>& solverLines() const { return solverLines_; }
  // The parameters shown disabled in the last draw(): those the scene does
  // not read (unusedSceneParams).
  const std::vector<std::string>& disabledParams() const { return unusedParams_; }

  // The body that "Drop body" and shift + double-click drop (Solids section).
  bool bodyBall() const { return bodyKind_ == 1; }
  double bodySize() const { return double(bodySize_); }
  double bodyDensity() const { return double(bodyDensity_); }

  // The file name fields of the "Files" section.
  static constexpr const char* kDefaultSettingsFile = "eddy-settings.json";
  static constexpr const char* kDefaultSnapshotFile = "eddy.snap";
  void setSettingsPath(const std::string& p);
  void setSnapshotPath(const std::string& p);
  std::string settingsPath() const { return settingsPath_.data(); }
  std::string snapshotPath() const { return snapshotPath_.data(); }

 private:
  bool button(const char* label, const ImVec2& size = ImVec2(0, 0));
  void drawStatus(Controller& c);
  void drawFiles(Controller& c);
  void drawStepping(Controller& c);
  void drawSolids(Controller& c);
  void drawProbes(Controller& c);
  void drawSolverStatus(Simulation& sim);
  void solidDefaults(const Simulation& sim);

  std::map<std::string, std::array<float, 4>> rects_;
  std::array<char, 1024> settingsPath_ = init(kDefaultSettingsFile);
  std::array<char, 1024> snapshotPath_ = init(kDefaultSnapshotFile);
  static std::array<char, 1024> init(const char* s);
  // Solids section: the selected obstacle and its edited pose, the new
  // obstacle's fields, the body to drop (sizes 0: from the tank at first use).
  int selected_ = -1;
  std::array<float, 3> selPos_{}, selRot_{};
  int addKind_ = 0;  // box, sphere, cylinder, mesh
  std::array<float, 3> addSize_{}, addPos_{}, addRot_{};
  float addScale_ = 1.f;
  std::array<char, 1024> meshPath_ = init("");
  int bodyKind_ = 0;  // box, ball
  float bodySize_ = 0.f, bodyDensity_ = 500.f;
  std::array<float, 3> defaultsFor_{};  // the tank the defaults were made for
  int countInput_ = 0;
  // The solver's lines (Simulation::solverStatus) last shown, and when a
  // blocking read last refreshed them (WCSPH's density error: twice a second).
  std::vector<std::string> solverLines_;
  std::vector<std::string> unusedParams_;
  double solverReadAt_ = -1e9;
  int runN_ = 1000;
};

}  // namespace eddy
