#include "camera.hpp"

#include <glm/gtc/matrix_transform.hpp>

#include <algorithm>
#include <cmath>
#include <vector>

namespace eddy {

glm::vec3 OrbitCamera::eye() const {
  const float cp = std::cos(pitch);
  return target + distance * glm::vec3(cp * std::sin(yaw), std::sin(pitch), cp * std::cos(yaw));
}

glm::mat4 OrbitCamera::view() const { return glm::lookAt(eye(), target, glm::vec3(0, 1, 0)); }

glm::mat4 OrbitCamera::proj(float aspect) const {
  glm::mat4 p = glm::perspective(fovy, std::max(aspect, 1e-3f), distance * 0.01f, distance * 100.f);
  if (shiftX != 0.f) p = glm::translate(glm::mat4(1.f), glm::vec3(shiftX, 0.f, 0.f)) * p;
  return p;
}

void OrbitCamera::orbit(float dxPx, float dyPx) {
  yaw -= dxPx * 0.008f;
  pitch = std::clamp(pitch + dyPx * 0.008f, -1.55f, 1.55f);
}

void OrbitCamera::pan(float dxPx, float dyPx, float h) { target -= worldDelta(dxPx, dyPx, h); }

void OrbitCamera::zoom(float wheelSteps) {
  distance = std::clamp(distance * std::pow(0.88f, wheelSteps), 1e-4f, 1e6f);
}

void OrbitCamera::fit(const Box& b, float aspect) {
  const glm::vec3 lo(b.lo[0], b.lo[1], b.lo[2]), hi(b.hi[0], b.hi[1], b.hi[2]);
  target = 0.5f * (lo + hi);
  const float radius = std::max(0.5f * glm::length(hi - lo), 1e-4f);
  // The narrower of the two fields of view must hold the bounding sphere.
  const float half = std::min(0.5f * fovy, std::atan(std::tan(0.5f * fovy) * std::max(aspect, 1e-3f)));
  distance = radius / std::sin(half) * 1.02f;
}

Ray OrbitCamera::ray(float x, float y, float w, float h) const {
  const float ndcX = 2.f * x / std::max(w, 1.f) - 1.f;
  const float ndcY = 1.f - 2.f * y / std::max(h, 1.f);
  const glm::mat4 inv = glm::inverse(proj(w / std::max(h, 1.f)) * view());
  glm::vec4 a = inv * glm::vec4(ndcX, ndcY, -1.f, 1.f);
  glm::vec4 b = inv * glm::vec4(ndcX, ndcY, 1.f, 1.f);
  const glm::vec3 p0 = glm::vec3(a) / a.w, p1 = glm::vec3(b) / b.w;
  const glm::vec3 d = glm::normalize(p1 - p0);
  return Ray{{p0.x, p0.y, p0.z}, {d.x, d.y, d.z}};
}

glm::vec3 OrbitCamera::worldDelta(float dxPx, float dyPx, float h) const {
  const glm::mat4 v = view();
  const glm::vec3 right(v[0][0], v[1][0], v[2][0]);
  const glm::vec3 up(v[0][1], v[1][1], v[2][1]);
  const float perPx = 2.f * distance * std::tan(0.5f * fovy) / std::max(h, 1.f);
  return perPx * (dxPx * right - dyPx * up);
}

Box robustBounds(const float* p, size_t n, float q) {
  Box b{{-1, -1, -1}, {1, 1, 1}};
  if (n == 0) return b;
  const size_t stride = std::max<size_t>(1, n / 65536);
  std::vector<float> v;
  for (int axis = 0; axis < 3; ++axis) {
    v.clear();
    for (size_t i = 0; i < n; i += stride)
      if (std::isfinite(p[4 * i + axis])) v.push_back(p[4 * i + axis]);
    if (v.empty()) continue;
    const size_t lo = size_t(q * float(v.size() - 1)), hi = v.size() - 1 - lo;
    std::nth_element(v.begin(), v.begin() + lo, v.end());
    b.lo[axis] = v[lo];
    std::nth_element(v.begin(), v.begin() + hi, v.end());
    b.hi[axis] = v[hi];
  }
  return b;
}

}  // namespace eddy
