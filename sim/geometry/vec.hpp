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

// A shape whose SDF query is faster with a hint (meshes): `hint` is a
// triangle near p (or -1), updated to p's nearest triangle; makeSdfGrid
// passes each node's to the next. The value is sdf(p) whatever the hint.
class HintedSdf {
 public:
  virtual ~HintedSdf() = default;
  virtual double sdfNear(const Vec3d& p, int& hint) const = 0;
};

// Throws eddy::Error unless spacing is finite, > 0 and gives at most 2e7
// samples on a surface of the given area.
void checkSampleSpacing(double spacing, double area);

// The primitives (sizes already checked: finite and > 0).
std::unique_ptr<Shape> makeBox(const Vec3d& size);
std::unique_ptr<Shape> makeSphere(double diameter);
std::unique_ptr<Shape> makeCylinder(double diameter, double height);
// A closed triangle mesh read with Assimp, times `scale` (checked > 0).
std::unique_ptr<Shape> makeMesh(const std::string& file, const Vec3d& scale);

}  // namespace eddy::geom
