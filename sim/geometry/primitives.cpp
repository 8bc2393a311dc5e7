// primitives.cpp: box, sphere and cylinder (exact SDF, mass properties and
// evenly spaced, deterministic surface samples).
#include "error.hpp"
#include "vec.hpp"

#include <cmath>

namespace eddy::geom {
namespace {

constexpr double kPi = 3.14159265358979323846;

// Intervals of length about `spacing` on a segment of length `len` (>= 1).
long intervals(double len, double spacing) { return std::max(1L, std::lround(len / spacing)); }


class Box final : public Shape {
 public:
  explicit Box(const Vec3d& size) : h_{0.5 * size[0], 0.5 * size[1], 0.5 * size[2]} {}
  ShapeKind kind() const override { return ShapeKind::Box; }
  double sdf(const Vec3d& p) const override {
    const Vec3d q{std::abs(p[0]) - h_[0], std::abs(p[1]) - h_[1], std::abs(p[2]) - h_[2]};
    const Vec3d o{std::max(q[0], 0.0), std::max(q[1], 0.0), std::max(q[2], 0.0)};
    return norm(o) + std::min(std::max(q[0], std::max(q[1], q[2])), 0.0);
  }
  double volume() const override { return 8 * h_[0] * h_[1] * h_[2]; }
  double surfaceArea() const override { return 8 * (h_[0] * h_[1] + h_[1] * h_[2] + h_[2] * h_[0]); }
  Vec3d centroid() const override { return {0, 0, 0}; }
  Mat3d inertia(double density) const override {
    const double m = density * volume(), a = 4 * h_[0] * h_[0], b = 4 * h_[1] * h_[1], c = 4 * h_[2] * h_[2];
    return diag(m * (b + c) / 12, m * (a + c) / 12, m * (a + b) / 12);
  }
  Aabb bounds() const override { return {{-h_[0], -h_[1], -h_[2]}, h_}; }
  // The surface nodes of a lattice with about `spacing` between nodes along
  // each axis: every face is a grid, edges and corners appear once. A node on
  // an edge or corner gets the normalised sum of its faces' normals.
  void sample(double spacing, std::vector<Vec3d>& points, std::vector<Vec3d>& normals) const override {
    checkSampleSpacing(spacing, surfaceArea());
    points.clear();
    normals.clear();
    const long n[3] = {intervals(2 * h_[0], spacing), intervals(2 * h_[1], spacing), intervals(2 * h_[2], spacing)};
    const size_t count = size_t(2 * ((n[0] + 1) * (n[1] + 1) + (n[1] + 1) * (n[2] + 1) + (n[2] + 1) * (n[0] + 1)));
    points.reserve(count);  // an upper bound: no reallocation of millions of samples
    normals.reserve(count);
    auto coord = [&](int a, long i) { return i == n[a] ? h_[a] : -h_[a] + 2 * h_[a] * double(i) / double(n[a]); };
    auto side = [&](int a, long i) { return i == 0 ? -1.0 : i == n[a] ? 1.0 : 0.0; };
    for (long k = 0; k <= n[2]; ++k)
      for (long j = 0; j <= n[1]; ++j) {
        const bool edgeKJ = k == 0 || k == n[2] || j == 0 || j == n[1];
        const long step = edgeKJ ? 1 : n[0];
        for (long i = 0; i <= n[0]; i += step) {
          points.push_back({coord(0, i), coord(1, j), coord(2, k)});
          normals.push_back(normalized({side(0, i), side(1, j), side(2, k)}));
        }
      }
  }

 private:
  Vec3d h_;  // half extents
};

class Sphere final : public Shape {
 public:
  explicit Sphere(double d) : r_(0.5 * d) {}
  ShapeKind kind() const override { return ShapeKind::Sphere; }
  double sdf(const Vec3d& p) const override { return norm(p) - r_; }
  double volume() const override { return 4.0 / 3.0 * kPi * r_ * r_ * r_; }
  double surfaceArea() const override { return 4 * kPi * r_ * r_; }
  Vec3d centroid() const override { return {0, 0, 0}; }
  Mat3d inertia(double density) const override {
    const double i = 0.4 * density * volume() * r_ * r_;
    return diag(i, i, i);
  }
  Aabb bounds() const override { return {{-r_, -r_, -r_}, {r_, r_, r_}}; }
  // A Fibonacci (golden-angle spiral) point set with round(area / spacing^2)
  // points: every point covers the same area, no poles or seams
  // (Gonzalez 2010, "Measurement of areas on a sphere using Fibonacci and
  // latitude-longitude lattices", Math. Geosci. 42:49-64).
  void sample(double spacing, std::vector<Vec3d>& points, std::vector<Vec3d>& normals) const override {
    checkSampleSpacing(spacing, surfaceArea());
    points.clear();
    normals.clear();
    const long n = std::max(1L, std::lround(surfaceArea() / (spacing * spacing)));
    points.reserve(size_t(n));
    normals.reserve(size_t(n));
    const double golden = kPi * (3.0 - std::sqrt(5.0));
    for (long i = 0; i < n; ++i) {
      const double y = 1.0 - (2.0 * double(i) + 1.0) / double(n);
      const double rho = std::sqrt(std::max(0.0, 1.0 - y * y)), phi = golden * double(i);
      const Vec3d u{rho * std::cos(phi), y, rho * std::sin(phi)};
      normals.push_back(u);
      points.push_back(r_ * u);
    }
  }

 private:
  double r_;
};

class Cylinder final : public Shape {
 public:
  Cylinder(double d, double h) : r_(0.5 * d), hh_(0.5 * h) {}
  ShapeKind kind() const override { return ShapeKind::Cylinder; }
  double sdf(const Vec3d& p) const override {
    const double dr = std::hypot(p[0], p[2]) - r_, dy = std::abs(p[1]) - hh_;
    return std::min(std::max(dr, dy), 0.0) + std::hypot(std::max(dr, 0.0), std::max(dy, 0.0));
  }
  double volume() const override { return kPi * r_ * r_ * 2 * hh_; }
  double surfaceArea() const override { return 2 * kPi * r_ * r_ + 2 * kPi * r_ * 2 * hh_; }
  Vec3d centroid() const override { return {0, 0, 0}; }
  Mat3d inertia(double density) const override {
    const double m = density * volume(), h = 2 * hh_;
    const double side = m * (3 * r_ * r_ + h * h) / 12;
    return diag(side, 0.5 * m * r_ * r_, side);
  }
  Aabb bounds() const override { return {{-r_, -hh_, -r_}, {r_, hh_, r_}}; }
  // Rings about `spacing` apart along the side (the two rims included, each
  // once, alternate rings turned by half a step) and concentric rings on each
  // cap, about `spacing` apart, with a point at the cap's centre.
  void sample(double spacing, std::vector<Vec3d>& points, std::vector<Vec3d>& normals) const override {
    checkSampleSpacing(spacing, surfaceArea());
    points.clear();
    normals.clear();
    const long rings = intervals(2 * hh_, spacing);
    const long around = std::max(3L, std::lround(2 * kPi * r_ / spacing));
    const long capRings = intervals(r_, spacing);
    const size_t count = size_t((rings + 1) * around + 2 * (1 + capRings * (std::lround(2 * kPi * r_ / spacing) + 3)));
    points.reserve(count);  // an upper bound
    normals.reserve(count);
    const double rim = 1.0 / std::sqrt(2.0);
    for (long j = 0; j <= rings; ++j) {
      const double y = j == rings ? hh_ : -hh_ + 2 * hh_ * double(j) / double(rings);
      const double ny = j == 0 ? -rim : j == rings ? rim : 0.0, nr = ny == 0 ? 1.0 : rim;
      for (long i = 0; i < around; ++i) {
        const double phi = 2 * kPi * (double(i) + 0.5 * double(j % 2)) / double(around);
        points.push_back({r_ * std::cos(phi), y, r_ * std::sin(phi)});
        normals.push_back({nr * std::cos(phi), ny, nr * std::sin(phi)});
      }
    }
    const long caps = intervals(r_, spacing);  // ring k at radius k r / caps; k = caps is the rim
    for (double s : {-1.0, 1.0}) {
      points.push_back({0, s * hh_, 0});
      normals.push_back({0, s, 0});
      for (long k = 1; k < caps; ++k) {
        const double rho = r_ * double(k) / double(caps);
        const long m = std::max(3L, std::lround(2 * kPi * rho / spacing));
        for (long i = 0; i < m; ++i) {
          const double phi = 2 * kPi * (double(i) + 0.5 * double(k % 2)) / double(m);
          points.push_back({rho * std::cos(phi), s * hh_, rho * std::sin(phi)});
          normals.push_back({0, s, 0});
        }
      }
    }
  }

 private:
  double r_, hh_;  // radius, half height
};

}  // namespace

std::unique_ptr<Shape> makeBox(const Vec3d& size) { return std::make_unique<Box>(size); }
std::unique_ptr<Shape> makeSphere(double diameter) { return std::make_unique<Sphere>(diameter); }
std::unique_ptr<Shape> makeCylinder(double diameter, double height) {
  return std::make_unique<Cylinder>(diameter, height);
}

}  // namespace eddy::geom
