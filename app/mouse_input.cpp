#include "mouse_input.hpp"

#include <algorithm>
#include <cmath>

namespace eddy {

void MouseInput::doubleClick(const PointerState& p, const Panel& panel, Controller& ctl,
                             const OrbitCamera& cam) {
  // A block (SPH) or a re-seed (N-body); with shift: a body (panel: shape,
  // size, density) where the cursor points.
  const auto dom = ctl.sim().domain();
  if (p.shift && ctl.sim().supportsSolidEdit() && dom) {
    const float half = 0.5f * float(panel.bodySize());
    const auto at = dropPoint(cam.ray(float(p.x), float(p.y), float(p.width), float(p.height)), *dom,
                              half, 2 * ctl.sim().particleRadius());
    if (at) ctl.dropBody(droppedBody(panel.bodyBall(), panel.bodySize(), panel.bodyDensity(), *at));
  } else if (ctl.sim().supportsAddBlock()) {
    ctl.dropBlock();
  } else {
    ctl.reseed();
  }
}

void MouseInput::update(const PointerState& p, double now, float frameDt, const Panel& panel,
                        const ViewSettings& view, float sceneSize, Controller& ctl, OrbitCamera& cam) {
  const float dx = float(p.x - mx_), dy = float(p.y - my_);
  const float w = float(p.width), h = float(p.height);
  if (!p.left && !p.right && !p.middle) {
    drag_ = Drag::None;
  } else if (drag_ == Drag::None) {
    if (p.overPanel) drag_ = Drag::ImGui;
    else if (p.left && p.ctrl) drag_ = Drag::Push;
    else if (p.right || p.middle || (p.left && p.shift)) drag_ = Drag::Pan;
    else drag_ = Drag::Orbit;
    if (p.left && !p.overPanel && ctl.hasSim()) {
      if (now - lastClickTime_ < kDoubleClickSeconds &&
          std::hypot(p.x - clickX_, p.y - clickY_) < kDoubleClickDistance) {
        doubleClick(p, panel, ctl, cam);
        lastClickTime_ = -1;
      } else {
        lastClickTime_ = now;
        clickX_ = p.x;
        clickY_ = p.y;
      }
    }
  } else if (drag_ == Drag::Orbit) {
    cam.orbit(dx, dy);
  } else if (drag_ == Drag::Pan) {
    cam.pan(dx, dy, h);
  } else if (drag_ == Drag::Push && (dx != 0 || dy != 0) && ctl.hasSim() && ctl.sim().supportsPush()) {
    const glm::vec3 d = cam.worldDelta(dx, dy, h);
    // The cursor's velocity in simulated time: in real-time mode a frame of
    // frameDt wall seconds is speed x frameDt simulated ones, so the fluid
    // follows the cursor on screen at any speed.
    const float simDt = std::max(frameDt, 1.f / 240.f) * float(ctl.realtime() ? ctl.speed() : 1.0);
    const glm::vec3 dv = d * (0.2f * view.pushStrength / simDt);
    ctl.push(cam.ray(float(p.x), float(p.y), w, h), view.pushRadius * sceneSize, {dv.x, dv.y, dv.z});
  }
  mx_ = p.x;
  my_ = p.y;
}

}  // namespace eddy
