#include "panel.hpp"

#include "colormap.hpp"
#include "defaults.hpp"
#include "registry.hpp"

#include <imgui.h>

#include <algorithm>
#include <cmath>
#include <cfloat>
#include <cstdio>
#include <string_view>
#include <vector>

namespace eddy {

namespace {

std::string escapePercent(const std::string& s) {
  std::string o;
  for (char ch : s) {
    o += ch;
    if (ch == '%') o += '%';
  }
  return o;
}

std::string fmtRange(const ParamDesc& d) {
  if (d.isEnum()) return "one of: " + joinNames(d.choices);
  if (d.isBool()) return "true or false";
  char b[160];
  std::snprintf(b, sizeof b, "range [%g, %g]%s%s", d.min, d.max, d.unit.empty() ? "" : " ",
                d.unit.c_str());
  return b;
}

void tooltip(const ParamDesc& d) {
  if (!ImGui::IsItemHovered()) return;
  ImGui::BeginTooltip();
  ImGui::PushTextWrapPos(ImGui::GetFontSize() * 28.f);
  ImGui::TextUnformatted(d.description.c_str());
  ImGui::Separator();
  if (d.isEnum() || d.isBool())
    ImGui::Text("%s, default %s", fmtRange(d).c_str(), d.valueText(d.def).c_str());
  else
    ImGui::Text("%s, default %g", fmtRange(d).c_str(), d.def);
  ImGui::Text("key: %s   (eddy --set %s=...)", d.name.c_str(), d.name.c_str());
  if (d.rebuild) ImGui::TextUnformatted("changing it rebuilds the scene");
  ImGui::PopTextWrapPos();
  ImGui::EndTooltip();
}

// "box 0.161 x 0.161 x 0.403 at (0.744, 0.0805, 0.497)" (and "rot a, b, c" where rotated).
std::string solidLabel(const ShapeSpec& o) {
  auto fmt = [](const char* f, auto... v) {
    char b[128];
    std::snprintf(b, sizeof b, f, v...);
    return std::string(b);
  };
  std::string s;
  switch (o.kind) {
    case ShapeKind::Box: s = fmt("box %.4g x %.4g x %.4g", o.size[0], o.size[1], o.size[2]); break;
    case ShapeKind::Sphere: s = fmt("sphere d %.4g", o.size[0]); break;
    case ShapeKind::Cylinder: s = fmt("cylinder d %.4g h %.4g", o.size[0], o.size[1]); break;
    case ShapeKind::Mesh: {
      const auto slash = o.file.find_last_of('/');
      s = "mesh " + (slash == std::string::npos ? o.file : o.file.substr(slash + 1));
      break;
    }
  }
  const auto& p = o.pose.position;
  const auto& r = o.pose.rotationDeg;
  s += fmt(" at (%.4g, %.4g, %.4g)", p[0], p[1], p[2]);
  if (r[0] != 0 || r[1] != 0 || r[2] != 0) s += fmt(" rot %.4g, %.4g, %.4g", r[0], r[1], r[2]);
  return s;
}

bool combo(const char* label, int& index, const std::vector<std::string>& items) {
  bool changed = false;
  const char* preview = index >= 0 && index < int(items.size()) ? items[size_t(index)].c_str() : "";
  if (ImGui::BeginCombo(label, preview)) {
    for (int i = 0; i < int(items.size()); ++i) {
      const bool sel = i == index;
      if (ImGui::Selectable(items[size_t(i)].c_str(), sel)) {
        changed = i != index;
        index = i;
      }
      if (sel) ImGui::SetItemDefaultFocus();
    }
    ImGui::EndCombo();
  }
  return changed;
}

int indexOf(const std::vector<std::string>& v, const std::string& s) {
  const auto it = std::find(v.begin(), v.end(), s);
  return it == v.end() ? -1 : int(it - v.begin());
}

void helpMarker(const char* text) {
  ImGui::SameLine();
  ImGui::TextDisabled("(?)");
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", text);
}

// One profiler table: name, last, mean, max (ms) and, with allMs > 0, the
// share of all device time.
void profileTable(const char* id, const char* firstHeader, const std::vector<PhaseStats>& stats,
                  double allMs) {
  const int cols = allMs > 0 ? 5 : 4;
  if (!ImGui::BeginTable(id, cols, ImGuiTableFlags_RowBg | ImGuiTableFlags_BordersInnerH |
                                       ImGuiTableFlags_SizingStretchProp))
    return;
  for (const char* h : {firstHeader, "last ms", "mean ms", "max ms", "share"})
    if (cols == 5 || std::string_view(h) != "share") ImGui::TableSetupColumn(h);
  ImGui::TableHeadersRow();
  for (const auto& st : stats) {
    ImGui::TableNextRow();
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(st.name.c_str());
    for (double v : {st.lastMs, st.meanMs, st.maxMs}) {
      ImGui::TableNextColumn();
      ImGui::Text("%.3f", v);
    }
    if (cols == 5) {
      ImGui::TableNextColumn();
      ImGui::Text("%.0f%%", 100.0 * st.totalMs / allMs);
    }
  }
  ImGui::EndTable();
}

}  // namespace

bool paramWidget(const ParamDesc& d, double& value) {
  ImGui::PushID(d.name.c_str());
  double v = value;
  bool changed = false;
  const std::string unit = d.unit.empty() ? "" : " " + escapePercent(d.unit);
  ImGui::SetNextItemWidth(-FLT_MIN);
  if (d.isEnum()) {
    const size_t current = size_t(std::llround(v));
    if (ImGui::BeginCombo("##v", d.valueText(v).c_str())) {
      for (size_t i = 0; i < d.choices.size(); ++i)
        if (ImGui::Selectable(d.choices[i].c_str(), i == current)) {
          v = double(i);
          changed = true;
        }
      ImGui::EndCombo();
    }
  } else if (d.isBool()) {
    bool b = v != 0;
    if (ImGui::Checkbox("##v", &b)) {
      v = b ? 1 : 0;
      changed = true;
    }
  } else if (d.integer && d.max - d.min > 1000) {
    const double step = 1, fast = 100;
    const std::string fmt = "%.0f";
    if (ImGui::InputScalar("##v", ImGuiDataType_Double, &v, &step, &fast, fmt.c_str(),
                           ImGuiInputTextFlags_EnterReturnsTrue))
      changed = true;
  } else {
    // ImGui's log slider treats |v| below 10^-precision (of the format) as
    // zero: give the format enough digits to reach the declared minimum.
    int digits = 4;
    if (d.logScale && d.min > 0) digits = std::clamp(int(std::ceil(-std::log10(d.min))), 4, 12);
    const std::string fmt =
        (d.integer ? std::string("%.0f") : "%." + std::to_string(digits) + "g") + unit;
    ImGuiSliderFlags flags = ImGuiSliderFlags_AlwaysClamp;
    if (d.logScale) flags |= ImGuiSliderFlags_Logarithmic;
    if (ImGui::SliderScalar("##v", ImGuiDataType_Double, &v, &d.min, &d.max, fmt.c_str(), flags))
      changed = true;
  }
  tooltip(d);
  ImGui::PopID();
  if (!changed || !std::isfinite(v)) return false;
  v = std::clamp(v, d.min, d.max);
  if (d.integer) v = std::round(v);
  if (v == value) return false;
  value = v;
  return true;
}

std::optional<std::array<float, 4>> Panel::widgetRect(const std::string& name) const {
  const auto it = rects_.find(name);
  if (it == rects_.end()) return std::nullopt;
  return it->second;
}

std::array<char, 1024> Panel::init(const char* s) {
  std::array<char, 1024> a{};
  std::snprintf(a.data(), a.size(), "%s", s);
  return a;
}

void Panel::setSettingsPath(const std::string& p) {
  std::snprintf(settingsPath_.data(), settingsPath_.size(), "%s", p.c_str());
}

void Panel::setSnapshotPath(const std::string& p) {
  std::snprintf(snapshotPath_.data(), snapshotPath_.size(), "%s", p.c_str());
}

bool Panel::button(const char* label, const ImVec2& size) {
  const bool pressed = ImGui::Button(label, size);
  const ImVec2 a = ImGui::GetItemRectMin(), b = ImGui::GetItemRectMax();
  std::string key = std::string("button:") + label;
  key = key.substr(0, key.find("##"));
  rects_[key] = {a.x, a.y, b.x, b.y};
  return pressed;
}

// Errors (first line: what happened; the rest, e.g. a kernel build log, in a
// scrollable box), the blow-up state and the last file action's result.
void Panel::drawStatus(Controller& c) {
  if (!c.error().empty()) {
    const std::string& e = c.error();
    const size_t nl = e.find('\n');
    ImGui::PushStyleColor(ImGuiCol_Text, ImVec4(1.f, 0.45f, 0.4f, 1.f));
    ImGui::TextWrapped("%s", e.substr(0, nl).c_str());
    ImGui::PopStyleColor();
    if (nl != std::string::npos) {
      const std::string rest = e.substr(nl + 1);
      // Wrapped to the box (a horizontal scrollbar covered the last line of
      // a one-line message); the height fits the wrapped text, up to 220 px.
      const ImGuiStyle& st = ImGui::GetStyle();
      const float wrap = std::max(ImGui::GetContentRegionAvail().x - 2 * st.WindowPadding.x -
                                      st.ScrollbarSize, 50.f);
      const ImVec2 size = ImGui::CalcTextSize(rest.c_str(), nullptr, false, wrap);
      const float h = std::min(220.f, size.y + 2 * st.WindowPadding.y + 4.f);
      ImGui::BeginChild("##errorlog", ImVec2(0, h), true);
      ImGui::PushTextWrapPos(0.f);
      ImGui::TextUnformatted(rest.c_str());
      ImGui::PopTextWrapPos();
      ImGui::EndChild();
    }
    if (!c.hasSim()) {
      if (button("Retry")) c.retry();
      ImGui::SameLine();
    } else if (c.blowUp()) {
      if (button("Reset (R)##blowup")) c.reset();
      ImGui::SameLine();
    }
    if (ImGui::SmallButton("dismiss")) c.clearError();
    ImGui::Separator();
  } else if (!c.hasSim()) {
    ImGui::TextUnformatted("No simulation is running.");
    if (button("Retry")) c.retry();
    ImGui::Separator();
  }
  if (!c.notice().empty()) {
    ImGui::PushStyleColor(ImGuiCol_Text, ImVec4(0.5f, 0.9f, 0.5f, 1.f));
    ImGui::TextWrapped("%s", c.notice().c_str());
    ImGui::PopStyleColor();
  }
}

// Save / load of settings (config JSON) and restart snapshots.
void Panel::drawFiles(Controller& c) {
  if (!ImGui::CollapsingHeader("Files", ImGuiTreeNodeFlags_DefaultOpen)) return;
  ImGui::SetNextItemWidth(-FLT_MIN);
  ImGui::InputText("##settingsfile", settingsPath_.data(), settingsPath_.size());
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip("Settings file (JSON, the format of 'eddy --config' and 'eddy-cli run --config')");
  if (button("Save settings")) c.saveSettings(settingsPath());
  ImGui::SameLine();
  if (button("Load settings")) c.loadSettings(settingsPath());
  ImGui::SetNextItemWidth(-FLT_MIN);
  ImGui::InputText("##snapshotfile", snapshotPath_.data(), snapshotPath_.size());
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip("Restart snapshot (the format of 'eddy --load' and 'eddy-cli run --save/--load')");
  if (button("Save snapshot")) c.saveSnapshot(snapshotPath());
  ImGui::SameLine();
  if (button("Load snapshot")) c.loadSnapshot(snapshotPath());
}

// Real time (speed slider, the factor reached) or fixed steps per frame.
void Panel::drawStepping(Controller& c) {
  auto remember = [&](const std::string& name) {
    const ImVec2 a = ImGui::GetItemRectMin(), b = ImGui::GetItemRectMax();
    rects_[name] = {a.x, a.y, b.x, b.y};
  };
  bool rt = c.realtime();
  if (ImGui::Checkbox("real time", &rt)) c.setRealtime(rt);
  remember("check:real time");
  helpMarker("Real time: each frame advances simulated time by its wall time x speed (N-body: model "
             "time units per wall second), running as many steps as fit a compute budget per "
             "frame; when they do not, the factor reached is shown. Off: a fixed number of steps "
             "per frame (--substeps K).");
  if (!rt) {
    ImGui::SameLine();
    int sub = int(c.substeps);
    ImGui::SetNextItemWidth(std::max(ImGui::GetContentRegionAvail().x - 110.f, 60.f));
    if (ImGui::SliderInt("steps / frame", &sub, 1, 64, "%d", ImGuiSliderFlags_AlwaysClamp))
      c.substeps = unsigned(sub);
    remember("substeps");
    return;
  }
  ImGui::SameLine();
  float speed = float(c.speed());
  ImGui::SetNextItemWidth(std::max(ImGui::GetContentRegionAvail().x - 50.f, 60.f));
  if (ImGui::SliderFloat("speed", &speed, float(Controller::kMinSpeed), float(Controller::kMaxSpeed),
                         "%.2f x", ImGuiSliderFlags_Logarithmic | ImGuiSliderFlags_AlwaysClamp))
    c.setSpeed(speed);
  remember("speed");
  const RealtimePacer& p = c.pacer();
  if (c.paused) {
    ImGui::TextDisabled("real time: paused");
  } else if (p.keepingUp()) {
    ImGui::TextColored(ImVec4(0.5f, 0.9f, 0.5f, 1.f), "%.3gx real time", p.realtimeFactor());
  } else {
    ImGui::TextColored(ImVec4(1.f, 0.65f, 0.2f, 1.f), "behind: %.3gx real time (asked %.3gx)",
                       p.realtimeFactor(), p.speed());
    helpMarker("The device cannot run the steps that real time needs within the compute budget "
               "per frame; the simulation runs slower than asked, at the factor shown. Fewer "
               "particles, a larger time step or a faster device help.");
  }
}

void Panel::drawSolverStatus(Simulation& sim) {
  // DFSPH: every frame from the newest step state that has arrived (never
  // waits); an explicit solver's density error needs a read of the
  // densities: twice a second.
  try {
    auto lines = sim.solverStatus(false);
    const double now = ImGui::GetTime();
    if (!lines.empty()) {
      solverLines_ = std::move(lines);
    } else if (now - solverReadAt_ >= 0.5) {
      solverLines_ = sim.solverStatus(true);
      solverReadAt_ = now;
    }
  } catch (const cl::Error&) {
    solverLines_.clear();  // a failing device is reported by the step that meets it
  } catch (const Error&) {
    solverLines_.clear();
  }
  for (const auto& l : solverLines_) {
    ImGui::TextWrapped("%s", l.c_str());
    if (ImGui::IsItemHovered())
      ImGui::SetTooltip("%s", "The pressure solve of the last step whose state has arrived: DFSPH's iterations "
               "and average errors of its density and divergence solves (stopping at "
               "density_tolerance / divergence_tolerance, Solver section); WCSPH has no "
               "iterations: its measured average compression. The same figures as the "
               "diagnostics CSV columns density_iterations, divergence_iterations, "
               "density_error, divergence_error.");
  }
}

float Panel::coveredWidth(float displayWidth) {
  return std::min(400.f, displayWidth * 0.5f) + 16.f;
}

void Panel::draw(Controller& c, ViewSettings& v, const PanelStats& s) {
  const ImGuiIO& io = ImGui::GetIO();
  const float width = coveredWidth(io.DisplaySize.x) - 16.f;
  ImGui::SetNextWindowPos(ImVec2(io.DisplaySize.x - 8.f, 8.f), ImGuiCond_Always, ImVec2(1.f, 0.f));
  ImGui::SetNextWindowSize(ImVec2(width, io.DisplaySize.y - 16.f), ImGuiCond_Always);
  ImGui::SetNextWindowBgAlpha(0.86f);
  ImGui::Begin("eddy", nullptr,
               ImGuiWindowFlags_NoMove | ImGuiWindowFlags_NoResize | ImGuiWindowFlags_NoCollapse);
  rects_.clear();
  drawStatus(c);
  if (!c.hasSim()) {  // start-up failure: the error, Retry and the files only
    drawFiles(c);
    ImGui::End();
    return;
  }
  Simulation& sim = c.sim();
  // A type drawn as points (stars) has no water surface: the view offers
  // spheres and glow only (as --style surface is refused for it).
  const SimulationType* type = findSimulationType(sim.kind());
  const bool points = type && type->appGlow;
  if (points && v.style == DrawStyle::Surface) v.style = DrawStyle::Glow;

  // ---- simulation and scene ----
  if (ImGui::CollapsingHeader("Simulation", ImGuiTreeNodeFlags_DefaultOpen)) {
    const auto& sims = simulationNames();
    int si = indexOf(sims, c.spec().sim);
    if (combo("simulation", si, sims)) c.selectSimulation(sims[size_t(si)]);
    const auto scenes = sceneNames(c.spec().sim);
    int sc = indexOf(scenes, c.spec().scene);
    if (combo("scene", sc, scenes)) c.selectScene(scenes[size_t(sc)]);
    if (!ImGui::IsAnyItemActive() || countInput_ <= 0) countInput_ = int(sim.size());
    if (ImGui::InputInt("particles", &countInput_, 1024, 16384, ImGuiInputTextFlags_EnterReturnsTrue))
      c.setCount(size_t(std::clamp(countInput_, 1, 1 << 30)));
    helpMarker("Particle / body count; Enter rebuilds the scene.");

    if (ImGui::Button(c.paused ? "Run  (space)" : "Pause (space)", ImVec2(110, 0)))
      c.paused = !c.paused;
    ImGui::SameLine();
    if (ImGui::Button("Step (S)")) c.stepOnce();
    ImGui::SameLine();
    if (button("Reset (R)")) c.reset();
    ImGui::SameLine();
    if (sim.supportsAddBlock()) {
      if (ImGui::Button("Drop block (B)")) c.dropBlock();
    } else if (c.editParams().find("seed")) {
      if (ImGui::Button("Re-seed")) c.reseed();
    }
    ImGui::SetNextItemWidth(110);
    ImGui::InputInt("##runn", &runN_, 100, 1000);
    runN_ = std::max(runN_, 1);
    ImGui::SameLine();
    if (ImGui::Button("Run N steps")) c.runSteps(uint64_t(runN_));
    if (c.stepsQueued()) {
      ImGui::SameLine();
      ImGui::Text("%llu left", static_cast<unsigned long long>(c.stepsQueued()));
    }
    drawStepping(c);
    ImGui::Text("N = %zu   step %llu   t = %.5g", sim.size(),
                static_cast<unsigned long long>(sim.steps()), sim.time());
    drawSolverStatus(sim);
  }

  drawSolids(c);
  drawProbes(c);
  drawFiles(c);

  // ---- parameters, one section per declared group ----
  Params shown = c.editParams();
  std::vector<std::string> groups, names;
  for (const auto& d : shown.declarations()) {
    names.push_back(d.name);
    if (std::find(groups.begin(), groups.end(), d.group) == groups.end()) groups.push_back(d.group);
  }
  // The scene's geometry parameters it does not read (lobovsky_dam_break has
  // its own tank: tank_length does nothing there) are shown disabled.
  unusedParams_ = unusedSceneParams(c.spec(), names);
  for (const auto& g : groups) {
    if (!ImGui::CollapsingHeader(g.c_str(), ImGuiTreeNodeFlags_DefaultOpen)) continue;
    if (!ImGui::BeginTable(("##p" + g).c_str(), 2, ImGuiTableFlags_SizingStretchProp)) continue;
    ImGui::TableSetupColumn("label", ImGuiTableColumnFlags_WidthStretch, 0.42f);
    ImGui::TableSetupColumn("value", ImGuiTableColumnFlags_WidthStretch, 0.58f);
    for (const auto& d : shown.declarations()) {
      if (d.group != g) continue;
      const bool unused =
          std::find(unusedParams_.begin(), unusedParams_.end(), d.name) != unusedParams_.end();
      ImGui::TableNextRow();
      ImGui::TableSetColumnIndex(0);
      ImGui::AlignTextToFramePadding();
      if (unused) {
        ImGui::TextDisabled("%s", d.label.c_str());
        if (ImGui::IsItemHovered())
          ImGui::SetTooltip("Not used by the scene %s (it sets its own geometry).",
                            c.spec().scene.c_str());
      } else {
        ImGui::TextUnformatted(d.label.c_str());
        tooltip(d);
      }
      ImGui::TableSetColumnIndex(1);
      double value = shown.get(d.name);
      if (unused) ImGui::BeginDisabled();
      const bool changed = paramWidget(d, value);
      if (unused) ImGui::EndDisabled();
      const ImVec2 a = ImGui::GetItemRectMin(), b = ImGui::GetItemRectMax();
      rects_[d.name] = {a.x, a.y, b.x, b.y};
      if (changed) {
        try {
          c.setParam(d.name, value);
        } catch (const Error&) {
          // paramWidget clamps to the declared range; nothing else can fail
        }
      }
    }
    ImGui::EndTable();
  }

  // ---- view ----
  if (ImGui::CollapsingHeader("View")) {
    std::vector<std::string> fields = sim.colorFields();
    fields.push_back("one colour");
    int fi = v.colorField < 0 || v.colorField >= int(fields.size()) - 1 ? int(fields.size()) - 1
                                                                         : v.colorField;
    if (combo("colour by (C)", fi, fields)) v.colorField = fi == int(fields.size()) - 1 ? -1 : fi;
    int cm = v.colormap;
    if (combo("colour map", cm, colormapNames())) v.colormap = cm;
    ImGui::Checkbox("auto range", &v.autoRange);
    ImGui::SameLine();
    ImGui::Checkbox("log10", &v.logScale);
    if (!v.autoRange) ImGui::DragFloatRange2("range", &v.rangeLo, &v.rangeHi, 0.01f, -1e9f, 1e9f, "%.4g");
    std::vector<std::string> styles(std::begin(kDrawStyleNames), std::end(kDrawStyleNames));
    static_assert(int(DrawStyle::Surface) == 2, "the surface style is the last name");
    if (points) styles.pop_back();
    int style = int(v.style);
    if (combo("style", style, styles)) v.style = DrawStyle(style);
    if (v.style == DrawStyle::Surface) {
      SurfaceSettings& su = v.surface;
      int sv = int(su.view);
      if (combo("surface view", sv, {kSurfaceViewNames[0], kSurfaceViewNames[1], kSurfaceViewNames[2],
                                     kSurfaceViewNames[3]}))
        su.view = SurfaceView(sv);
      ImGui::ColorEdit3("water colour", su.waterColor);
      ImGui::SliderFloat("absorption", &su.absorption, 0.f, 100.f, "%.2f / side",
                         ImGuiSliderFlags_Logarithmic);
      helpMarker("Beer-Lambert absorption per length of the tank's smallest side (a slab's depth): more makes deep water darker.");
      ImGui::SliderFloat("smoothing", &su.smoothing, 0.5f, 8.f, "%.1f radii");
      ImGui::SliderInt("smoothing passes", &su.iterations, 0, 4);
      ImGui::SliderFloat("refraction", &su.refraction, 0.f, 0.1f, "%.3f");
      ImGui::Checkbox("foam", &su.foam);
      helpMarker("White sprites where the speed is above the threshold (a fraction of the speed's "
                 "colour range); switches the colour field to speed.");
      if (su.foam) ImGui::SliderFloat("foam above", &su.foamThreshold, 0.f, 1.f, "%.2f of range");
    }
    ImGui::SliderFloat("size", &v.radiusScale, 0.1f, 10.f, "%.2f x", ImGuiSliderFlags_Logarithmic);
    if (v.style == DrawStyle::Glow)
      ImGui::SliderFloat("glow", &v.glow, 0.01f, 20.f, "%.2f", ImGuiSliderFlags_Logarithmic);
    ImGui::Checkbox("size by mass", &v.sizeByMass);
    ImGui::SameLine();
    ImGui::Checkbox("box", &v.showBox);
    ImGui::SameLine();
    ImGui::Checkbox("vsync", &v.vsync);
    ImGui::SliderFloat("push strength", &v.pushStrength, 0.f, 10.f, "%.2f");
    helpMarker("Ctrl + drag pushes the particles near the cursor ray.");
    ImGui::SliderFloat("push radius", &v.pushRadius, 0.01f, 0.5f, "%.2f of scene",
                       ImGuiSliderFlags_Logarithmic);
    if (ImGui::Button("Fit view (F)")) fitRequested = true;
    ImGui::SameLine();
    if (ImGui::Button("Screenshot (P)")) screenshotRequested = true;
    ImGui::SameLine();
    if (ImGui::Button("Help (F1)")) v.showHelp = !v.showHelp;
    // Record: a red dot and the elapsed time while recording.
    if (button(s.recording ? "Stop recording##rec" : "Record##rec")) recordRequested = true;
    ImGui::SameLine();
    if (s.recording) {
      const ImVec2 p = ImGui::GetCursorScreenPos();
      const float r = ImGui::GetTextLineHeight() * 0.35f;
      ImGui::GetWindowDrawList()->AddCircleFilled(
          ImVec2(p.x + r + 2.f, p.y + ImGui::GetFrameHeight() * 0.5f), r, IM_COL32(230, 40, 40, 255));
      ImGui::Dummy(ImVec2(2.f * r + 6.f, ImGui::GetFrameHeight()));
      ImGui::SameLine();
      const int secs = int(s.recordSeconds);
      ImGui::AlignTextToFramePadding();
      ImGui::Text("%02d:%02d  %llu frames", secs / 60, secs % 60,
                  static_cast<unsigned long long>(s.recordFrames));
      if (ImGui::IsItemHovered()) ImGui::SetTooltip("recording to %s", s.recordTarget.c_str());
    } else {
      ImGui::AlignTextToFramePadding();
      ImGui::TextDisabled("PNG frames to ./eddy-record-<time>/");
    }
  }

  // ---- performance ----
  if (ImGui::CollapsingHeader("Performance", ImGuiTreeNodeFlags_DefaultOpen)) {
    ImGui::TextWrapped("device: %s", s.device.c_str());
    ImGui::TextWrapped("buffers: %s", s.bufferPath.c_str());
    ImGui::Text("%.1f FPS   %.1f steps/s", s.fps, s.stepsPerSec);
    ImGui::Text("frame %.2f ms (host waits %.2f ms)", s.frameMs, s.waitMs);
    ImGui::Text("simulate %.2f  transfer %.3f  draw %.2f ms", s.simulateMs, s.transferMs, s.drawMs);
    helpMarker(
        "simulate: device time of this frame's steps (OpenCL events); transfer: device time of "
        "the copies to the vertex buffers (+ colour field); draw: GPU time of the particle "
        "draw (GL timer query). All read from completed queries, never waited for.");
    const auto stats = sim.profiler().stats();
    double all = 0;
    for (const auto& st : stats) all += st.totalMs;
    profileTable("kernels", "kernel", stats, all);
    const auto& hist = sim.profiler().stepHistoryMs();
    std::vector<float> h(hist.begin(), hist.end());
    char overlay[64];
    std::snprintf(overlay, sizeof overlay, "step %.3f ms (mean)", sim.profiler().meanStepMs());
    ImGui::PlotLines("##steps", h.data(), int(h.size()), 0, overlay, 0.f, FLT_MAX,
                     ImVec2(ImGui::GetContentRegionAvail().x, 60));
    if (s.frameProfiler) {
      const auto fst = s.frameProfiler->stats();
      if (!fst.empty()) profileTable("frame", "per frame", fst, 0.0);
    }
    if (!s.renderPasses.empty()) {
      double passes = 0;
      for (const auto& st : s.renderPasses) passes += st.totalMs;
      profileTable("render", "render pass (GPU)", s.renderPasses, passes);
    }
  }
  ImGui::End();
}

void Panel::drawLegend(const Simulation& sim, const ViewSettings& v) {
  const auto fields = sim.colorFields();
  if (!v.showLegend || v.colorField < 0 || v.colorField >= int(fields.size())) return;
  const ImGuiIO& io = ImGui::GetIO();
  ImGui::SetNextWindowPos(ImVec2(12.f, io.DisplaySize.y - 12.f), ImGuiCond_Always, ImVec2(0.f, 1.f));
  ImGui::SetNextWindowBgAlpha(0.55f);
  ImGui::Begin("legend", nullptr,
               ImGuiWindowFlags_NoDecoration | ImGuiWindowFlags_AlwaysAutoResize |
                   ImGuiWindowFlags_NoMove | ImGuiWindowFlags_NoSavedSettings |
                   ImGuiWindowFlags_NoFocusOnAppearing | ImGuiWindowFlags_NoNav);
  ImGui::Text("%s%s", v.logScale ? "log10 " : "", fields[size_t(v.colorField)].c_str());
  const float w = 240.f, h = 14.f;
  const ImVec2 p = ImGui::GetCursorScreenPos();
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const int segs = 48;
  for (int i = 0; i < segs; ++i) {
    const Rgb a = colormapAt(size_t(v.colormap), float(i) / segs);
    const Rgb b = colormapAt(size_t(v.colormap), float(i + 1) / segs);
    const ImU32 ca = ImGui::ColorConvertFloat4ToU32(ImVec4(a[0], a[1], a[2], 1));
    const ImU32 cb = ImGui::ColorConvertFloat4ToU32(ImVec4(b[0], b[1], b[2], 1));
    dl->AddRectFilledMultiColor(ImVec2(p.x + w * i / segs, p.y), ImVec2(p.x + w * (i + 1) / segs, p.y + h),
                                ca, cb, cb, ca);
  }
  ImGui::Dummy(ImVec2(w, h));
  ImGui::Text("%.3g", double(v.rangeLo));
  char hi[32];
  std::snprintf(hi, sizeof hi, "%.3g", double(v.rangeHi));
  ImGui::SameLine(w - ImGui::CalcTextSize(hi).x + ImGui::GetStyle().WindowPadding.x);
  ImGui::TextUnformatted(hi);
  ImGui::End();
}

// Sizes and places that fit the tank: a tenth of its smallest side, at its
// centre on the floor (made again when the tank changes).
void Panel::solidDefaults(const Simulation& sim) {
  const auto d = sim.domain();
  if (!d) return;
  const std::array<float, 3> ext{d->hi[0] - d->lo[0], d->hi[1] - d->lo[1], d->hi[2] - d->lo[2]};
  if (ext == defaultsFor_) return;
  defaultsFor_ = ext;
  // A tenth and a half of the tank's length or height, rounded to two
  // significant digits; in a thin slab the obstacle spans the depth and the
  // body fits in it.
  auto round2 = [](float x) {
    const float e = std::pow(10.f, std::floor(std::log10(x)) - 1.f);
    return std::max(std::round(x / e) * e, 1e-4f);
  };
  const float size = round2(0.15f * std::min(ext[0], ext[1]));
  const bool slab = ext[2] < 2 * size;
  bodySize_ = slab ? round2(0.7f * ext[2]) : size;
  addSize_ = {size, size, slab ? ext[2] : size};
  addPos_ = {d->lo[0] + 0.6f * ext[0], d->lo[1] + 0.5f * size, d->lo[2] + 0.5f * ext[2]};
  addRot_ = {0, 0, 0};
}

void Panel::drawSolids(Controller& c) {
  Simulation& sim = c.sim();
  if (!sim.supportsSolidEdit()) return;
  solidDefaults(sim);
  if (!ImGui::CollapsingHeader("Solids", ImGuiTreeNodeFlags_DefaultOpen)) return;
  std::vector<ShapeSpec> obs = c.obstacles();
  ImGui::Text("%zu obstacles, %zu bodies, %zu boundary particles", obs.size(), sim.bodyCount(),
              sim.solidPointCount());
  helpMarker("Obstacles and rigid bodies are sampled with boundary particles (grey points). An "
             "edit continues the run with the new solids (the fluid they enclose is removed); "
             "Reset (R) builds the scene again with its own and the added obstacles and the "
             "dropped bodies.");
  if (selected_ >= int(obs.size())) selected_ = -1;
  for (int i = 0; i < int(obs.size()); ++i) {
    ImGui::PushID(i);
    const std::string label = std::to_string(i + 1) + "  " + solidLabel(obs[size_t(i)]);
    const bool clicked = ImGui::Selectable(label.c_str(), selected_ == i);
    // A long spec (a mesh's path, three sizes and a position) runs past the
    // panel's edge: the whole of it on hover.
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", label.c_str());
    const ImVec2 a = ImGui::GetItemRectMin(), b = ImGui::GetItemRectMax();
    rects_["solid:" + std::to_string(i)] = {a.x, a.y, b.x, b.y};
    if (clicked) {
      selected_ = i;
      for (int k = 0; k < 3; ++k) {
        selPos_[size_t(k)] = float(obs[size_t(i)].pose.position[size_t(k)]);
        selRot_[size_t(k)] = float(obs[size_t(i)].pose.rotationDeg[size_t(k)]);
      }
    }
    ImGui::PopID();
  }
  if (selected_ >= 0) {
    ImGui::InputFloat3("position (m)##sel", selPos_.data(), "%.4g");
    ImGui::InputFloat3("rotation (deg)##sel", selRot_.data(), "%.4g");
    if (button("Move")) {
      ShapeSpec& o = obs[size_t(selected_)];
      for (int k = 0; k < 3; ++k) {
        o.pose.position[size_t(k)] = double(selPos_[size_t(k)]);
        o.pose.rotationDeg[size_t(k)] = double(selRot_[size_t(k)]);
      }
      c.setObstacles(obs);
    }
    ImGui::SameLine();
    if (button("Delete")) {
      obs.erase(obs.begin() + selected_);
      c.setObstacles(obs);
      selected_ = -1;
    }
    ImGui::SameLine();
    if (ImGui::Button("Deselect")) selected_ = -1;
  }
  ImGui::Separator();
  combo("shape", addKind_, {"box", "sphere", "cylinder", "mesh"});
  if (addKind_ == 3) {
    ImGui::InputText("mesh file", meshPath_.data(), meshPath_.size());
    ImGui::InputFloat("scale", &addScale_, 0, 0, "%.4g");
    helpMarker("An STL, OBJ or PLY file (read with Assimp), closed; its own coordinates times "
               "the scale, placed at the position.");
  } else {
    ImGui::InputFloat3("size (m)", addSize_.data(), "%.4g");
    helpMarker("box: the extents x, y, z; sphere: the diameter (first value); cylinder: the "
               "diameter and the height along its axis (local y).");
  }
  ImGui::InputFloat3("position (m)", addPos_.data(), "%.4g");
  ImGui::InputFloat3("rotation (deg)", addRot_.data(), "%.4g");
  if (button("Add obstacle")) {
    ShapeSpec o;
    o.kind = ShapeKind(addKind_);
    for (int k = 0; k < 3; ++k) {
      o.size[size_t(k)] = double(addSize_[size_t(k)]);
      o.pose.position[size_t(k)] = double(addPos_[size_t(k)]);
      o.pose.rotationDeg[size_t(k)] = double(addRot_[size_t(k)]);
    }
    if (o.kind == ShapeKind::Mesh) {
      o.file = meshPath_.data();
      o.scale = {double(addScale_), double(addScale_), double(addScale_)};
    }
    obs.push_back(o);
    c.setObstacles(obs);
  }
  ImGui::Separator();
  combo("body", bodyKind_, {"box", "ball"});
  ImGui::InputFloat("body size (m)", &bodySize_, 0, 0, "%.4g");
  helpMarker("The box's edge or the ball's diameter.");
  ImGui::InputFloat("density (kg/m^3)", &bodyDensity_, 0, 0, "%.5g");
  bodySize_ = std::max(bodySize_, 1e-4f);
  bodyDensity_ = std::clamp(bodyDensity_, 1.f, 1e5f);
  if (button("Drop body")) c.dropBodyAbove(bodyBall(), bodySize(), bodyDensity());
  ImGui::SameLine();
  ImGui::TextDisabled("or shift + double-click");
  helpMarker("Drops a floating box or ball at rest: above the middle of the tank (button) or "
             "where the cursor points on the tank's middle plane (shift + double-click). "
             "Lighter than water (1000 kg/m^3) it floats, heavier it sinks.");
}

void Panel::drawProbes(Controller& c) {
  const ProbeHistory& h = c.probeHistory();
  if (h.probes().empty() && c.probeError().empty()) return;
  if (!ImGui::CollapsingHeader("Probes", ImGuiTreeNodeFlags_DefaultOpen)) return;
  if (!c.probeError().empty())
    ImGui::TextColored(ImVec4(1.f, 0.45f, 0.35f, 1.f), "%s", c.probeError().c_str());
  if (h.probes().empty()) return;
  ImGui::Text("last %.2g s, %zu samples (every %g s)",
              std::min(h.window(), h.latestTime() - h.oldestTime()), h.samples(),
              Controller::kProbeDt);
  const float w = ImGui::GetContentRegionAvail().x;
  for (size_t i = 0; i < h.probes().size(); ++i) {
    const ProbeSpec& p = h.probes()[i];
    const std::vector<float> v = h.series(i);
    char value[160];
    if (h.hasValue() && !v.empty()) {
      // The plot's own scale (each probe's range differs): its min and max.
      const auto [lo, hi] = std::minmax_element(v.begin(), v.end());
      std::snprintf(value, sizeof value, "%s  %.4g %s   (%.3g .. %.3g)", p.name.c_str(), h.latest(i),
                    ProbeHistory::unit(p), double(*lo), double(*hi));
    } else if (h.hasValue())
      std::snprintf(value, sizeof value, "%s  %.4g %s", p.name.c_str(), h.latest(i), ProbeHistory::unit(p));
    else
      std::snprintf(value, sizeof value, "%s  (no sample yet)", p.name.c_str());
    ImGui::PushID(int(i));
    ImGui::PlotLines("##probe", v.data(), int(v.size()), 0, value, FLT_MAX, FLT_MAX, ImVec2(w, 34));
    if (ImGui::IsItemHovered())
      ImGui::SetTooltip("%s: %s probe at %s", p.name.c_str(), std::string(probeKindName(p.kind)).c_str(),
                        probeSpecText(p).c_str());
    ImGui::PopID();
  }
}

void Panel::drawHelp(ViewSettings& v) {
  if (!v.showHelp) return;
  const ImGuiIO& io = ImGui::GetIO();
  ImGui::SetNextWindowPos(ImVec2(io.DisplaySize.x * 0.5f, io.DisplaySize.y * 0.5f), ImGuiCond_Always,
                          ImVec2(0.5f, 0.5f));
  ImGui::SetNextWindowBgAlpha(0.92f);
  ImGui::Begin("Help (F1)", &v.showHelp, ImGuiWindowFlags_AlwaysAutoResize | ImGuiWindowFlags_NoSavedSettings);
  static const char* rows[][2] = {
      {"space", "pause / run"},
      {"S", "one step (pauses)"},
      {"R", "reset the scene"},
      {"C", "next colour field"},
      {"H", "hide / show the panel"},
      {"F", "fit the view to the scene"},
      {"P", "screenshot (eddy-<time>.png)"},
      {"B", "drop a block of fluid (SPH)"},
      {"F1", "this help"},
      {"Esc", "quit"},
      {"left drag", "orbit"},
      {"right drag / shift + left", "pan"},
      {"wheel", "zoom"},
      {"ctrl + left drag", "push the particles at the cursor"},
      {"double click", "drop a block of fluid (SPH); N-body: re-seed"},
      {"shift + double click", "drop a body at the cursor (SPH; Solids section)"},
  };
  if (ImGui::BeginTable("keys", 2, ImGuiTableFlags_SizingFixedFit)) {
    for (const auto& r : rows) {
      ImGui::TableNextRow();
      ImGui::TableNextColumn();
      ImGui::TextColored(ImVec4(1.f, 0.8f, 0.4f, 1.f), "%s", r[0]);
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(r[1]);
    }
    ImGui::EndTable();
  }
  ImGui::End();
}

}  // namespace eddy
