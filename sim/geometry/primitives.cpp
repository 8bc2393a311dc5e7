// primitives.cpp: box, sphere and cylinder (exact SDF, mass properties and
// evenly spaced, deterministic surface samples).
#include "error.hpp"
#include "vec.hpp"

#include <algorithm>
#include <cmath>
#include <utility>

namespace eddy::geom {
namespace {

constexpr double kPi = 3.14159265358979323846;

// Intervals of length about `spacing` on a segment of length `len` (>= 1).
long intervals(double len, double spacing) { return std::max(1L, std::lround(len / spacing)); }

// The indices [first, last] of a lattice, value(i) = a + b i for i in
// [0, n], that may lie in [lo, hi] (one more on each side against rounding:
// the caller tests each value); all of [0, n] when b is 0.
std::pair<long, long> latticeRange(double a, double b, long n, double lo, double hi) {
  if (b == 0) return {0, n};
  double i0 = (lo - a) / b, i1 = (hi - a) / b;
  if (i0 > i1) std::swap(i0, i1);
  const double first = std::max(0.0, std::floor(i0) - 1), last = std::min(double(n), std::ceil(i1) + 1);
  return {long(first), long(last)};
}


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
  // an edge or corner gets the normalised sum of its faces' normals. Clipped:
  // the loops run only over the lattice rows within the box.
  void sampleWithin(double spacing, const Aabb* clip, std::vector<Vec3d>& points,
                    std::vector<Vec3d>& normals) const override {
    const Aabb b = clip ? intersection(bounds(), *clip) : bounds();
    double area = 0;  // of the faces within b
    if (!b.empty())
      for (int a = 0; a < 3; ++a) {
        const int u = (a + 1) % 3, v = (a + 2) % 3;
        const double faces = (b.lo[a] <= -h_[a] ? 1 : 0) + (b.hi[a] >= h_[a] ? 1 : 0);
        area += faces * (b.hi[u] - b.lo[u]) * (b.hi[v] - b.lo[v]);
      }
    checkSampleSpacing(spacing, area);
    points.clear();
    normals.clear();
    if (b.empty()) return;
    const long n[3] = {intervals(2 * h_[0], spacing), intervals(2 * h_[1], spacing), intervals(2 * h_[2], spacing)};
    if (!clip) {
      const size_t count = size_t(2 * ((n[0] + 1) * (n[1] + 1) + (n[1] + 1) * (n[2] + 1) + (n[2] + 1) * (n[0] + 1)));
      points.reserve(count);  // an upper bound: no reallocation of millions of samples
      normals.reserve(count);
    }
    auto coord = [&](int a, long i) { return i == n[a] ? h_[a] : -h_[a] + 2 * h_[a] * double(i) / double(n[a]); };
    auto side = [&](int a, long i) { return i == 0 ? -1.0 : i == n[a] ? 1.0 : 0.0; };
    std::pair<long, long> r[3];
    for (int a = 0; a < 3; ++a)
      r[a] = clip ? latticeRange(-h_[a], 2 * h_[a] / double(n[a]), n[a], b.lo[a], b.hi[a]) : std::pair{0L, n[a]};
    auto put = [&](long i, long j, long k) {
      const Vec3d p{coord(0, i), coord(1, j), coord(2, k)};
      if (clip && !clip->contains(p)) return;
      points.push_back(p);
      normals.push_back(normalized({side(0, i), side(1, j), side(2, k)}));
    };
    for (long k = r[2].first; k <= r[2].second; ++k)
      for (long j = r[1].first; j <= r[1].second; ++j) {
        if (k == 0 || k == n[2] || j == 0 || j == n[1]) {
          for (long i = r[0].first; i <= r[0].second; ++i) put(i, j, k);
        } else {  // inside a face of x: its two nodes
          if (r[0].first == 0) put(0, j, k);
          if (r[0].second == n[0]) put(n[0], j, k);
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
  Aabb turnedBounds(const Mat3d&) const override { return bounds(); }
  // A Fibonacci (golden-angle spiral) point set with round(area / spacing^2)
  // points: every point covers the same area, no poles or seams
  // (Gonzalez 2010, "Measurement of areas on a sphere using Fibonacci and
  // latitude-longitude lattices", Math. Geosci. 42:49-64). Clipped: only the
  // points of the zone of y within the box are visited (y falls with i).
  void sampleWithin(double spacing, const Aabb* clip, std::vector<Vec3d>& points,
                    std::vector<Vec3d>& normals) const override {
    const Aabb b = clip ? intersection(bounds(), *clip) : bounds();
    checkSampleSpacing(spacing, b.empty() ? 0 : 2 * kPi * r_ * (b.hi[1] - b.lo[1]));  // the zone's area
    points.clear();
    normals.clear();
    if (b.empty()) return;
    const long n = std::max(1L, std::lround(surfaceArea() / (spacing * spacing)));
    // y(i) = r (1 - (2 i + 1) / n) = (r - r / n) - (2 r / n) i
    const auto [first, last] = clip ? latticeRange(r_ - r_ / double(n), -2 * r_ / double(n), n - 1, b.lo[1], b.hi[1])
                                    : std::pair{0L, n - 1};
    if (!clip) {
      points.reserve(size_t(n));
      normals.reserve(size_t(n));
    }
    const double golden = kPi * (3.0 - std::sqrt(5.0));
    for (long i = first; i <= last; ++i) {
      const double y = 1.0 - (2.0 * double(i) + 1.0) / double(n);
      const double rho = std::sqrt(std::max(0.0, 1.0 - y * y)), phi = golden * double(i);
      const Vec3d u{rho * std::cos(phi), y, rho * std::sin(phi)};
      const Vec3d p = r_ * u;
      if (clip && !clip->contains(p)) continue;
      normals.push_back(u);
      points.push_back(p);
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
  Aabb turnedBounds(const Mat3d& R) const override {  // the axis R e_y: its caps' discs and ends
    Aabb w;
    for (int a = 0; a < 3; ++a) {
      const double ax = R[3 * a + 1];
      const double e = std::fabs(ax) * hh_ + r_ * std::sqrt(std::max(0.0, 1 - ax * ax));
      w.lo[a] = -e;
      w.hi[a] = e;
    }
    return w;
  }
  // Rings about `spacing` apart along the side (the two rims included, each
  // once, alternate rings turned by half a step) and concentric rings on each
  // cap, about `spacing` apart, with a point at the cap's centre. Clipped:
  // only the side's rings within the box's y range and the cap rings within
  // its range of distance from the axis are visited.
  void sampleWithin(double spacing, const Aabb* clip, std::vector<Vec3d>& points,
                    std::vector<Vec3d>& normals) const override {
    const Aabb b = clip ? intersection(bounds(), *clip) : bounds();
    // The distances from the axis (in x, z) the box spans, within [0, r].
    double dLo = 0, dHi = r_, far2 = r_ * r_;
    if (clip && !b.empty()) {
      double near2 = 0;
      far2 = 0;
      for (int a : {0, 2}) {
        const double c = std::clamp(0.0, b.lo[a], b.hi[a]);
        near2 += c * c;
        far2 += std::max(b.lo[a] * b.lo[a], b.hi[a] * b.hi[a]);
      }
      dLo = std::sqrt(near2);
      dHi = std::min(r_, std::sqrt(far2));
    }
    const int capsIn = b.empty() ? 0 : (b.lo[1] <= -hh_ ? 1 : 0) + (b.hi[1] >= hh_ ? 1 : 0);
    const bool sideIn = !b.empty() && (!clip || far2 >= r_ * r_ * (1 - 1e-9));  // a side point within reach
    checkSampleSpacing(spacing, (sideIn ? 2 * kPi * r_ * (b.hi[1] - b.lo[1]) : 0) +
                                    capsIn * kPi * std::max(0.0, dHi * dHi - dLo * dLo));
    points.clear();
    normals.clear();
    if (b.empty()) return;
    const long rings = intervals(2 * hh_, spacing);
    const long around = std::max(3L, std::lround(2 * kPi * r_ / spacing));
    const long capRings = intervals(r_, spacing);
    if (!clip) {
      const size_t count = size_t((rings + 1) * around + 2 * (1 + capRings * (std::lround(2 * kPi * r_ / spacing) + 3)));
      points.reserve(count);  // an upper bound
      normals.reserve(count);
    }
    auto put = [&](const Vec3d& p, const Vec3d& nrm) {
      if (clip && !clip->contains(p)) return;
      points.push_back(p);
      normals.push_back(nrm);
    };
    const double rim = 1.0 / std::sqrt(2.0);
    const auto [jFirst, jLast] = !clip ? std::pair{0L, rings}
                                 : sideIn ? latticeRange(-hh_, 2 * hh_ / double(rings), rings, b.lo[1], b.hi[1])
                                          : std::pair{1L, 0L};
    for (long j = jFirst; j <= jLast; ++j) {
      const double y = j == rings ? hh_ : -hh_ + 2 * hh_ * double(j) / double(rings);
      const double ny = j == 0 ? -rim : j == rings ? rim : 0.0, nr = ny == 0 ? 1.0 : rim;
      for (long i = 0; i < around; ++i) {
        const double phi = 2 * kPi * (double(i) + 0.5 * double(j % 2)) / double(around);
        put({r_ * std::cos(phi), y, r_ * std::sin(phi)}, {nr * std::cos(phi), ny, nr * std::sin(phi)});
      }
    }
    const long caps = capRings;  // ring k at radius k r / caps; k = caps is the rim
    const auto [kFirst, kLast] =
        clip ? latticeRange(0, r_ / double(caps), caps, dLo, dHi) : std::pair{0L, caps};
    for (double s : {-1.0, 1.0}) {
      if (clip && !(s < 0 ? b.lo[1] <= -hh_ : b.hi[1] >= hh_)) continue;
      if (kFirst == 0) put({0, s * hh_, 0}, {0, s, 0});
      for (long k = std::max(1L, kFirst); k <= std::min(caps - 1, kLast); ++k) {
        const double rho = r_ * double(k) / double(caps);
        const long m = std::max(3L, std::lround(2 * kPi * rho / spacing));
        for (long i = 0; i < m; ++i) {
          const double phi = 2 * kPi * (double(i) + 0.5 * double(k % 2)) / double(m);
          put({rho * std::cos(phi), s * hh_, rho * std::sin(phi)}, {0, s, 0});
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
