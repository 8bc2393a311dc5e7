// mouse_input.hpp: the app's mouse handling without a window. The app reads
// GLFW's pointer, buttons and modifier keys once a frame into a PointerState
// and hands it to MouseInput::update, which turns presses and drags into
// camera moves and Controller calls: left drag orbits, right/middle or shift +
// left drag pans, ctrl + left drag pushes the fluid; a double click drops a
// block of fluid (SPH) or re-seeds (N-body), and shift + double click drops a
// body of the panel's shape, size and density at the cursor (issue 12).
// GL- and GLFW-free: tests drive it with synthetic states and their own clock.
#pragma once

#include "camera.hpp"
#include "controller.hpp"
#include "panel.hpp"
#include "view_settings.hpp"

namespace eddy {

// The mouse as one frame sees it.
struct PointerState {
  double x = 0, y = 0;        // the cursor in window coordinates, origin top-left
  int width = 1, height = 1;  // the window's size in the same units
  bool left = false, right = false, middle = false;  // buttons held down
  bool ctrl = false, shift = false;                  // modifier keys held down
  bool overPanel = false;     // the panel (ImGui) wants the mouse
};

enum class Drag { None, Orbit, Pan, Push, ImGui };

class MouseInput {
 public:
  // Two left presses this close in time (seconds) and space (window units)
  // make a double click.
  static constexpr double kDoubleClickSeconds = 0.35;
  static constexpr double kDoubleClickDistance = 5;

  // One frame. `now`: seconds on any steady clock; `frameDt`: the frame's wall
  // time (a push's cursor velocity); `sceneSize`: the scene's diagonal (the
  // push radius is view.pushRadius of it). Changes reach the simulation
  // through `ctl` (at its next frame()).
  void update(const PointerState& p, double now, float frameDt, const Panel& panel,
              const ViewSettings& view, float sceneSize, Controller& ctl, OrbitCamera& cam);
  Drag drag() const { return drag_; }

 private:
  void doubleClick(const PointerState& p, const Panel& panel, Controller& ctl, const OrbitCamera& cam);

  Drag drag_ = Drag::None;
  double mx_ = 0, my_ = 0;
  double lastClickTime_ = -1;
  double clickX_ = 0, clickY_ = 0;
};

}  // namespace eddy
