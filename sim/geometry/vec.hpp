// vec.hpp: small double-precision vector helpers for sim/geometry (internal:
// only the geometry sources include it).
#pragma once

#include "shape.hpp"

#include <algorithm>
#include <cmath>
#include <memory>
#include <string>

namespace eddy::geom {

inline Vec3d operator+(const Vec3d& a, const Vec3d& b) { return {a[0] + b[0], a[1] + b[1], a[2] + b[2]}; }
inline Vec3d operator-(const Vec3d& a, const Vec3d& b) { return {a[0] - b[0], a[1] - b[1], a[2] - b[2]}; }
inline Vec3d operator*(double s, const Vec3d& a) { return {s * a[0], s * a[1], s * a[2]}; }
inline double dot(const Vec3d& a, const Vec3d& b) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }
inline Vec3d cross(const Vec3d& a, const Vec3d& b) {
  return {a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]};
}
inline double norm(const Vec3d& a) { return std::sqrt(dot(a, a)); }
inline Vec3d normalized(const Vec3d& a) {
  const double n = norm(a);
  return n > 0 ? (1.0 / n) * a : Vec3d{0, 0, 0};
}
inline Mat3d diag(double a, double b, double c) { return {a, 0, 0, 0, b, 0, 0, 0, c}; }

// The primitives (sizes already checked: finite and > 0).
std::unique_ptr<Shape> makeBox(const Vec3d& size);
std::unique_ptr<Shape> makeSphere(double diameter);
std::unique_ptr<Shape> makeCylinder(double diameter, double height);
// A closed triangle mesh read with Assimp, times `scale` (checked > 0).
std::unique_ptr<Shape> makeMesh(const std::string& file, const Vec3d& scale);

}  // namespace eddy::geom
