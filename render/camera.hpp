// camera.hpp: orbit / pan / zoom camera around a target (y up). GL-free.
#pragma once

#include "simulation.hpp"  // Box, Ray

#include <glm/glm.hpp>

namespace eddy {

class OrbitCamera {
 public:
  glm::vec3 target{0.f};
  float yaw = 0.35f;    // radians about +y; 0 looks along -z from +z
  float pitch = 0.30f;  // radians above the horizon
  float distance = 4.f;
  float fovy = 0.7854f;  // 45 degrees
  // Horizontal shift of the image in NDC (-1..1): centres the scene in the
  // part of the window a side panel leaves free.
  float shiftX = 0.f;

  glm::vec3 eye() const;
  glm::mat4 view() const;
  glm::mat4 proj(float aspect) const;

  // Mouse motion in window pixels (viewport height `h`).
  void orbit(float dxPx, float dyPx);
  void pan(float dxPx, float dyPx, float h);
  void zoom(float wheelSteps);
  // Places the whole box in view (from the current direction).
  void fit(const Box& box, float aspect);

  // The ray through window pixel (x, y) (origin top-left) of a w x h viewport.
  Ray ray(float x, float y, float w, float h) const;
  // The world-space motion of a point at the target's depth when the cursor
  // moves by (dx, dy) pixels.
  glm::vec3 worldDelta(float dxPx, float dyPx, float h) const;
};

// Robust bounds of float4 points: the [q, 1 - q] quantiles per axis of (a
// stride sample of) the points, so a few far escapers do not shrink the view.
Box robustBounds(const float* xyzw, size_t n, float q = 0.01f);

}  // namespace eddy
