// test_geometry.cpp: shapes (issue 12): primitives, meshes read with Assimp,
// SDF grids and shape specs. Host only: no OpenCL device needed.
#include "error.hpp"
#include "rng.hpp"
#include "shape.hpp"
#include "shape_spec_io.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <nlohmann/json.hpp>
#include <string>
#include <unordered_map>
#include <vector>

using namespace eddy;

namespace {

constexpr double kPi = 3.14159265358979323846;

Vec3d add(const Vec3d& a, const Vec3d& b) { return {a[0] + b[0], a[1] + b[1], a[2] + b[2]}; }
Vec3d sub(const Vec3d& a, const Vec3d& b) { return {a[0] - b[0], a[1] - b[1], a[2] - b[2]}; }
Vec3d mul(double s, const Vec3d& a) { return {s * a[0], s * a[1], s * a[2]}; }
double len(const Vec3d& a) { return std::sqrt(a[0] * a[0] + a[1] * a[1] + a[2] * a[2]); }
Vec3d mulMV(const Mat3d& m, const Vec3d& v) {
  return {m[0] * v[0] + m[1] * v[1] + m[2] * v[2], m[3] * v[0] + m[4] * v[1] + m[5] * v[2],
          m[6] * v[0] + m[7] * v[1] + m[8] * v[2]};
}

// Nearest-neighbour distance of every point to the others (a uniform grid of
// cells of size `cell`: exact as long as the answer is below `cell`).
std::vector<double> nearestDistances(const std::vector<Vec3d>& p, double cell) {
  // Pairs within `cell` along every axis, found through cells of that size
  // (such a pair's cells differ by at most one along each axis).
  std::vector<double> d(p.size(), 1e300);
  auto cellOf = [&](const Vec3d& x, int k) { return long(std::floor(x[k] / cell)); };
  auto key = [](long x, long y, long z) {
    return (uint64_t(x + (1L << 20)) << 42) ^ (uint64_t(y + (1L << 20)) << 21) ^ uint64_t(z + (1L << 20));
  };
  std::unordered_map<uint64_t, std::vector<size_t>> cells;
  for (size_t i = 0; i < p.size(); ++i) cells[key(cellOf(p[i], 0), cellOf(p[i], 1), cellOf(p[i], 2))].push_back(i);
  for (size_t i = 0; i < p.size(); ++i) {
    const long c[3] = {cellOf(p[i], 0), cellOf(p[i], 1), cellOf(p[i], 2)};
    for (long z = c[2] - 1; z <= c[2] + 1; ++z)
      for (long y = c[1] - 1; y <= c[1] + 1; ++y)
        for (long x = c[0] - 1; x <= c[0] + 1; ++x) {
          const auto it = cells.find(key(x, y, z));
          if (it == cells.end()) continue;
          for (size_t j : it->second) {
            if (j == i) continue;
            const Vec3d r = sub(p[i], p[j]);
            if (std::abs(r[0]) > cell || std::abs(r[1]) > cell || std::abs(r[2]) > cell) continue;
            d[i] = std::min(d[i], len(r));
          }
        }
  }
  return d;
}

// Distance from q to the nearest of the points.
double distanceToSet(const Vec3d& q, const std::vector<Vec3d>& p) {
  double best = 1e300;
  for (const auto& x : p) best = std::min(best, len(sub(q, x)));
  return best;
}

// Uniform random points on the exact surface of a primitive (by area).
std::vector<Vec3d> randomSurfacePoints(const ShapeSpec& s, int n, Rng& rng) {
  std::vector<Vec3d> out;
  const double a = s.size[0], b = s.size[1], c = s.size[2];
  for (int i = 0; i < n; ++i) {
    if (s.kind == ShapeKind::Box) {
      const double areas[3] = {b * c, a * c, a * b};  // faces normal to x, y, z
      double u = rng.uniform() * (areas[0] + areas[1] + areas[2]);
      int axis = u < areas[0] ? 0 : u < areas[0] + areas[1] ? 1 : 2;
      Vec3d p{rng.uniform(-a / 2, a / 2), rng.uniform(-b / 2, b / 2), rng.uniform(-c / 2, c / 2)};
      p[axis] = (rng.uniform() < 0.5 ? -0.5 : 0.5) * s.size[axis];
      out.push_back(p);
    } else if (s.kind == ShapeKind::Sphere) {
      Vec3d u;
      rng.unitVector(u[0], u[1], u[2]);
      out.push_back(mul(a / 2, u));
    } else {  // cylinder, axis y: side 2 pi r h, caps 2 pi r^2
      const double r = a / 2, h = b, side = 2 * kPi * r * h, caps = 2 * kPi * r * r;
      const double phi = rng.uniform(0, 2 * kPi);
      if (rng.uniform() * (side + caps) < side) {
        out.push_back({r * std::cos(phi), rng.uniform(-h / 2, h / 2), r * std::sin(phi)});
      } else {
        const double rho = r * std::sqrt(rng.uniform());
        out.push_back({rho * std::cos(phi), (rng.uniform() < 0.5 ? -0.5 : 0.5) * h, rho * std::sin(phi)});
      }
    }
  }
  return out;
}

// The exact signed distance of a primitive, written independently of the
// library (closest point by clamping, inside: nearest face).
double exactSdf(const ShapeSpec& s, const Vec3d& p) {
  if (s.kind == ShapeKind::Sphere) return len(p) - s.size[0] / 2;
  if (s.kind == ShapeKind::Box) {
    Vec3d q;
    bool inside = true;
    double inDist = 1e300;
    for (int k = 0; k < 3; ++k) {
      const double h = s.size[k] / 2;
      q[k] = std::clamp(p[k], -h, h);
      if (std::abs(p[k]) > h) inside = false;
      inDist = std::min(inDist, h - std::abs(p[k]));
    }
    return inside ? -inDist : len(sub(p, q));
  }
  const double r = s.size[0] / 2, h = s.size[1] / 2, rho = std::hypot(p[0], p[2]), y = p[1];
  if (rho <= r && std::abs(y) <= h) return -std::min(r - rho, h - std::abs(y));
  const double cr = std::min(rho, r), cy = std::clamp(y, -h, h);
  return std::hypot(rho - cr, y - cy);
}

ShapeSpec spec(const std::string& text) { return parseShapeSpec(text); }

// Monte Carlo volume, centroid and inertia from the SDF alone (an independent
// check of the closed forms): N points uniform in the bounds.
struct MassEstimate {
  double volume;
  Vec3d centroid;
  Mat3d inertia;  // about the centroid, density 1
};
MassEstimate monteCarlo(const Shape& shape, int n, uint64_t seed) {
  Rng rng(seed);
  const Aabb b = shape.bounds();
  const double boxVol = (b.hi[0] - b.lo[0]) * (b.hi[1] - b.lo[1]) * (b.hi[2] - b.lo[2]);
  double cnt = 0;
  Vec3d s1{0, 0, 0};
  double s2[3][3] = {};
  for (int i = 0; i < n; ++i) {
    const Vec3d p{rng.uniform(b.lo[0], b.hi[0]), rng.uniform(b.lo[1], b.hi[1]), rng.uniform(b.lo[2], b.hi[2])};
    if (shape.sdf(p) >= 0) continue;
    cnt += 1;
    for (int k = 0; k < 3; ++k) {
      s1[k] += p[k];
      for (int l = 0; l < 3; ++l) s2[k][l] += p[k] * p[l];
    }
  }
  MassEstimate m;
  m.volume = boxVol * cnt / n;
  m.centroid = mul(1.0 / cnt, s1);
  double c[3][3];
  for (int k = 0; k < 3; ++k)
    for (int l = 0; l < 3; ++l) c[k][l] = m.volume * (s2[k][l] / cnt - m.centroid[k] * m.centroid[l]);
  const double tr = c[0][0] + c[1][1] + c[2][2];
  for (int k = 0; k < 3; ++k)
    for (int l = 0; l < 3; ++l) m.inertia[3 * k + l] = (k == l ? tr : 0.0) - c[k][l];
  return m;
}

}  // namespace

// ---------------------------------------------------------------- rotation

TEST(GeometryRotation, QuarterTurnsFollowTheConvention) {
  // Right-handed quarter turns: Rx maps y to z, Ry maps z to x, Rz maps x to y.
  EXPECT_EQ(mulMV(rotationMatrix({90, 0, 0}), {0, 1, 0}), (Vec3d{0, 0, 1}));
  EXPECT_EQ(mulMV(rotationMatrix({0, 90, 0}), {0, 0, 1}), (Vec3d{1, 0, 0}));
  EXPECT_EQ(mulMV(rotationMatrix({0, 0, 90}), {1, 0, 0}), (Vec3d{0, 1, 0}));
  EXPECT_EQ(mulMV(rotationMatrix({-90, 0, 0}), {0, 1, 0}), (Vec3d{0, 0, -1}));
  EXPECT_EQ(mulMV(rotationMatrix({450, 0, 0}), {0, 1, 0}), (Vec3d{0, 0, 1}));
  // Order: x first, then y, then z (world axes): (90, 90, 0) takes y -> z -> x;
  // the other order would take y -> y -> z.
  EXPECT_EQ(mulMV(rotationMatrix({90, 90, 0}), {0, 1, 0}), (Vec3d{1, 0, 0}));
  // (0, 90, 90): z -> x (Ry) -> y (Rz).
  EXPECT_EQ(mulMV(rotationMatrix({0, 90, 90}), {0, 0, 1}), (Vec3d{0, 1, 0}));
}

TEST(GeometryRotation, ComposesAsRzRyRxAndIsOrthonormal) {
  Rng rng(12);
  for (int t = 0; t < 50; ++t) {
    const Vec3d ang{rng.uniform(-360, 360), rng.uniform(-360, 360), rng.uniform(-360, 360)};
    const Mat3d r = rotationMatrix(ang);
    const Vec3d v{rng.uniform(-1, 1), rng.uniform(-1, 1), rng.uniform(-1, 1)};
    const Vec3d w = mulMV(rotationMatrix({0, 0, ang[2]}),
                          mulMV(rotationMatrix({0, ang[1], 0}), mulMV(rotationMatrix({ang[0], 0, 0}), v)));
    const Vec3d rv = mulMV(r, v);
    for (int k = 0; k < 3; ++k) EXPECT_NEAR(rv[k], w[k], 1e-12);
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j) {
        double d = 0;
        for (int k = 0; k < 3; ++k) d += r[3 * k + i] * r[3 * k + j];
        EXPECT_NEAR(d, i == j ? 1.0 : 0.0, 1e-12);
      }
    // Rotation about x by a keeps x fixed and turns y towards z.
    const Mat3d rx = rotationMatrix({ang[0], 0, 0});
    const Vec3d y = mulMV(rx, {0, 1, 0});
    EXPECT_NEAR(y[1], std::cos(ang[0] * kPi / 180), 1e-12);
    EXPECT_NEAR(y[2], std::sin(ang[0] * kPi / 180), 1e-12);
  }
}

TEST(GeometryShape, KindNamesRoundTripAndUnknownIsAnError) {
  for (ShapeKind k : {ShapeKind::Box, ShapeKind::Sphere, ShapeKind::Cylinder, ShapeKind::Mesh})
    EXPECT_EQ(parseShapeKind(shapeKindName(k)), k);
  try {
    parseShapeKind("cone");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("cone"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("cylinder"), std::string::npos);
  }
}

TEST(GeometryShape, BadSizesAreErrors) {
  for (const Vec3d& size : {Vec3d{0, 1, 1}, Vec3d{1, -1, 1}, Vec3d{1, 1, NAN}, Vec3d{1, INFINITY, 1}}) {
    ShapeSpec s;
    s.size = size;
    EXPECT_THROW(makeShape(s), Error);
  }
  ShapeSpec c;
  c.kind = ShapeKind::Cylinder;
  c.size = {1, 0, 1};
  EXPECT_THROW(makeShape(c), Error);
  ShapeSpec m;
  m.kind = ShapeKind::Mesh;
  EXPECT_THROW(makeShape(m), Error);  // no file
}

TEST(GeometryShape, BadSampleSpacingIsAnError) {
  ShapeSpec cube;
  cube.kind = ShapeKind::Mesh;
  cube.file = std::string(EDDY_TEST_DATA) + "/cube.stl";
  for (const char* t : {"box:size=1", "sphere:d=1", "cylinder:d=1:h=1"}) {
    const auto shape = makeShape(parseShapeSpec(t));
    std::vector<Vec3d> p, n;
    for (double h : {0.0, -0.1, double(NAN), double(INFINITY), 1e-5}) EXPECT_THROW(shape->sample(h, p, n), Error) << t << h;
  }
  const auto mesh = makeShape(cube);
  std::vector<Vec3d> p, n;
  EXPECT_THROW(mesh->sample(0.0, p, n), Error);
  EXPECT_THROW(mesh->sample(1e-5, p, n), Error);  // 6e10 samples
}

// ------------------------------------------------------------- primitives

// Closed forms: volume, area, centroid (0), inertia about the centroid
// (box m(b^2+c^2)/12, sphere 2/5 m r^2, cylinder m r^2/2 about its axis y and
// m(3r^2+h^2)/12 across), checked to 1e-12 relative, and the same from a Monte
// Carlo integration over the SDF (400k points: 1.5% volume, 3% inertia).
TEST(GeometryPrimitives, MassPropertiesMatchClosedFormsAndMonteCarlo) {
  const double rho = 750;
  struct Case {
    ShapeSpec s;
    double v, a;
    Vec3d i;  // per unit mass
  };
  const double bx = 0.3, by = 0.5, bz = 0.7, d = 0.42, r = d / 2, h = 0.9;
  const std::vector<Case> cases = {
      {spec("box:size=0.3,0.5,0.7"), bx * by * bz, 2 * (bx * by + by * bz + bz * bx),
       {(by * by + bz * bz) / 12, (bx * bx + bz * bz) / 12, (bx * bx + by * by) / 12}},
      {spec("sphere:d=0.42"), 4.0 / 3 * kPi * r * r * r, 4 * kPi * r * r, {0.4 * r * r, 0.4 * r * r, 0.4 * r * r}},
      {spec("cylinder:d=0.42:h=0.9"), kPi * r * r * h, 2 * kPi * r * r + 2 * kPi * r * h,
       {(3 * r * r + h * h) / 12, r * r / 2, (3 * r * r + h * h) / 12}},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(shapeSpecToString(c.s));
    const auto shape = makeShape(c.s);
    EXPECT_EQ(shape->kind(), c.s.kind);
    EXPECT_NEAR(shape->volume(), c.v, 1e-12 * c.v);
    EXPECT_NEAR(shape->surfaceArea(), c.a, 1e-12 * c.a);
    for (int k = 0; k < 3; ++k) EXPECT_EQ(shape->centroid()[k], 0.0);
    const Mat3d in = shape->inertia(rho);
    const double m = rho * c.v;
    for (int k = 0; k < 3; ++k)
      for (int l = 0; l < 3; ++l) EXPECT_NEAR(in[3 * k + l], k == l ? m * c.i[k] : 0.0, 1e-12 * m * c.i[k]);
    const Aabb b = shape->bounds();
    for (int k = 0; k < 3; ++k) {
      EXPECT_NEAR(b.hi[k], 0.5 * c.s.size[k], 1e-15);
      EXPECT_NEAR(b.lo[k], -0.5 * c.s.size[k], 1e-15);
    }
    const MassEstimate mc = monteCarlo(*shape, 400000, 7);
    EXPECT_NEAR(mc.volume, c.v, 0.015 * c.v);
    for (int k = 0; k < 3; ++k) {
      EXPECT_NEAR(mc.centroid[k], 0.0, 0.01 * c.s.size[k]);
      EXPECT_NEAR(mc.inertia[4 * k] * rho, in[4 * k], 0.03 * in[4 * k]);
    }
  }
}

// Signed distance at random points inside, near and outside, against an
// independent closed form (1e-12).
TEST(GeometryPrimitives, SdfMatchesExactDistanceAtRandomPoints) {
  Rng rng(3);
  for (const char* t : {"box:size=0.3,0.5,0.7", "sphere:d=0.42", "cylinder:d=0.42:h=0.9", "cylinder:d=1:h=0.2"}) {
    SCOPED_TRACE(t);
    const ShapeSpec s = spec(t);
    const auto shape = makeShape(s);
    int inside = 0;
    for (int i = 0; i < 20000; ++i) {
      const Vec3d p{rng.uniform(-0.8, 0.8), rng.uniform(-0.8, 0.8), rng.uniform(-0.8, 0.8)};
      const double e = exactSdf(s, p);
      EXPECT_NEAR(shape->sdf(p), e, 1e-12);
      inside += e < 0;
    }
    EXPECT_GT(inside, 100);  // the test saw both signs
  }
}

// Surface samples: count * spacing^2 within 3% of the area (10% for a box
// only 2 spacings thick, whose edges are a large share); every sample on
// the surface (|sdf| < 1e-12) with a unit outward normal (sdf grows along it);
// nearest-neighbour distances within [0.5, 1.5] spacing (no clusters); every
// one of 3000 random points of the exact surface has a sample within one
// spacing (no holes); the same samples on a second call.
TEST(GeometryPrimitives, SamplesCoverTheSurfaceEvenly) {
  Rng rng(5);
  const std::vector<std::pair<const char*, double>> cases = {
      {"box:size=0.3,0.5,0.7", 0.03}, {"sphere:d=0.42", 0.03},         {"cylinder:d=0.42:h=0.9", 0.03},
      {"cylinder:d=1:h=0.2", 0.03},   {"box:size=0.05,0.5,0.3", 0.10}};
  for (const auto& [t, tol] : cases) {
    for (double h : {0.02, 0.031}) {
      SCOPED_TRACE(std::string(t) + " spacing " + std::to_string(h));
      const ShapeSpec s = spec(t);
      const auto shape = makeShape(s);
      std::vector<Vec3d> p, n, p2, n2;
      shape->sample(h, p, n);
      ASSERT_EQ(p.size(), n.size());
      EXPECT_NEAR(double(p.size()) * h * h, shape->surfaceArea(), tol * shape->surfaceArea());
      for (size_t i = 0; i < p.size(); ++i) {
        EXPECT_NEAR(shape->sdf(p[i]), 0.0, 1e-12);
        EXPECT_NEAR(len(n[i]), 1.0, 1e-12);
        EXPECT_GT(shape->sdf(add(p[i], mul(1e-3, n[i]))), 0.5e-3);
      }
      const auto nn = nearestDistances(p, 2 * h);
      const auto [lo, hi] = std::minmax_element(nn.begin(), nn.end());
      EXPECT_GE(*lo, 0.5 * h);
      EXPECT_LE(*hi, 1.5 * h);
      double worst = 0;
      for (const auto& q : randomSurfacePoints(s, 3000, rng)) worst = std::max(worst, distanceToSet(q, p));
      EXPECT_LE(worst, h);
      shape->sample(h, p2, n2);
      EXPECT_EQ(p, p2);
      EXPECT_EQ(n, n2);
    }
  }
}

// Sampling within a clip box (a static obstacle much larger than its tank):
// a primitive's clipped samples are exactly its unclipped ones inside the
// box, in the same order, with the same normals; a box holding the shape
// gives the unclipped samples; a box apart from it none. Random boxes
// across each shape, and a spacing the shapes' sizes are not multiples of.
TEST(GeometryPrimitives, ClippedSamplesAreTheUnclippedOnesInTheBox) {
  Rng rng(23);
  for (const char* t : {"box:size=0.3,0.5,0.7", "sphere:d=0.42", "cylinder:d=0.42:h=0.9", "cylinder:d=1:h=0.2"}) {
    const auto shape = makeShape(spec(t));
    const double h = 0.023;
    std::vector<Vec3d> all, allN;
    shape->sample(h, all, allN);
    const Aabb b = shape->bounds();
    for (int c = 0; c < 12; ++c) {
      SCOPED_TRACE(std::string(t) + " clip " + std::to_string(c));
      Aabb clip;
      for (int k = 0; k < 3; ++k) {
        double u = rng.uniform(b.lo[k] - 0.1, b.hi[k] + 0.1), v = rng.uniform(b.lo[k] - 0.1, b.hi[k] + 0.1);
        if (c == 0) u = b.lo[k], v = b.hi[k];  // exactly the bounds
        if (c == 1) u = b.hi[k] + 0.01, v = b.hi[k] + 0.2;  // apart
        if (c == 2 && k == 1) u = v = b.hi[k];  // a plane (a cap or face exactly on it)
        clip.lo[k] = std::min(u, v);
        clip.hi[k] = std::max(u, v);
      }
      std::vector<Vec3d> want, wantN, p, n;
      for (size_t i = 0; i < all.size(); ++i)
        if (clip.contains(all[i])) {
          want.push_back(all[i]);
          wantN.push_back(allN[i]);
        }
      shape->sample(h, p, n, &clip);
      EXPECT_EQ(p, want);
      EXPECT_EQ(n, wantN);
      if (c == 0) {
        EXPECT_EQ(p.size(), all.size());
      }
      if (c == 1) {
        EXPECT_TRUE(p.empty());
      }
    }
  }
}

// The cap of 2e7 samples counts the part within the clip box: a 100 m slab
// at 0.01 m (2e8 samples) is refused whole and sampled where a tank is.
TEST(GeometryPrimitives, TheSampleCapCountsOnlyTheClippedPart) {
  const Aabb clip{{-0.3, -0.1, -0.2}, {0.3, 0.1, 0.2}};
  for (const char* t : {"box:size=100,0.04,100", "cylinder:d=100:h=0.04", "sphere:d=100"}) {
    SCOPED_TRACE(t);
    const auto shape = makeShape(spec(t));
    std::vector<Vec3d> p, n;
    EXPECT_THROW(shape->sample(0.01, p, n), Error);
    Aabb c = clip;
    if (std::string(t).rfind("sphere", 0) == 0) c.lo[1] += 50, c.hi[1] += 49.95;  // across its top
    ASSERT_NO_THROW(shape->sample(0.01, p, n, &c));
    ASSERT_FALSE(p.empty());
    for (const auto& q : p) {
      ASSERT_TRUE(c.contains(q));
      ASSERT_NEAR(shape->sdf(q), 0.0, 1e-9);
    }
  }
}

// ------------------------------------------------------------------ SDF grid

TEST(GeometrySdfGrid, NodesHoldTheShapesSdfAndCoverTheMargin) {
  const auto shape = makeShape(spec("cylinder:d=0.4:h=0.3"));
  const double cell = 0.03, margin = 0.05;
  const SdfGrid g = makeSdfGrid(*shape, cell, margin);
  EXPECT_EQ(g.cell, cell);
  ASSERT_EQ(g.values.size(), size_t(g.dims[0]) * g.dims[1] * g.dims[2]);
  const Aabb b = shape->bounds();
  for (int a = 0; a < 3; ++a) {
    EXPECT_DOUBLE_EQ(g.origin[a], b.lo[a] - margin);
    EXPECT_GE(g.origin[a] + (g.dims[a] - 1) * cell, b.hi[a] + margin - 1e-12);
    EXPECT_LT(g.origin[a] + (g.dims[a] - 2) * cell, b.hi[a] + margin);
  }
  Rng rng(9);
  for (int t = 0; t < 500; ++t) {
    const int i = int(rng.uniform() * g.dims[0]), j = int(rng.uniform() * g.dims[1]), k = int(rng.uniform() * g.dims[2]);
    const Vec3d p{g.origin[0] + i * cell, g.origin[1] + j * cell, g.origin[2] + k * cell};
    EXPECT_FLOAT_EQ(g.values[(size_t(k) * g.dims[1] + j) * g.dims[0] + i], float(shape->sdf(p)));
  }
  EXPECT_THROW(makeSdfGrid(*shape, 0, 0.1), Error);
  EXPECT_THROW(makeSdfGrid(*shape, 0.1, -1), Error);
  EXPECT_THROW(makeSdfGrid(*shape, 1e-5, 0.1), Error);  // too many nodes
}

// ------------------------------------------------------------- shape specs

TEST(GeometrySpec, ParsesEveryKindWithDefaultsAndAliases) {
  const ShapeSpec b = parseShapeSpec("box:size=0.161,0.161,0.403:pos=0.744,0.0805,0.4965:rot=0,30,0");
  EXPECT_EQ(b.kind, ShapeKind::Box);
  EXPECT_EQ(b.size, (Vec3d{0.161, 0.161, 0.403}));
  EXPECT_EQ(b.pose.position, (Vec3d{0.744, 0.0805, 0.4965}));
  EXPECT_EQ(b.pose.rotationDeg, (Vec3d{0, 30, 0}));
  EXPECT_EQ(parseShapeSpec("box:size=2").size, (Vec3d{2, 2, 2}));
  const ShapeSpec s = parseShapeSpec("sphere:diameter=0.1");
  EXPECT_EQ(s.kind, ShapeKind::Sphere);
  EXPECT_EQ(s.size, (Vec3d{0.1, 0.1, 0.1}));
  EXPECT_EQ(s.pose.position, (Vec3d{0, 0, 0}));
  EXPECT_EQ(s.pose.rotationDeg, (Vec3d{0, 0, 0}));
  const ShapeSpec c = parseShapeSpec("cylinder:h=0.3:d=0.1:position=1,2,3:rotation=90,0,-45");
  EXPECT_EQ(c.size, (Vec3d{0.1, 0.3, 0.1}));
  EXPECT_EQ(c.pose.rotationDeg, (Vec3d{90, 0, -45}));
  const ShapeSpec m = parseShapeSpec("mesh:file=tests/data/cube.stl:scale=0.1,0.2,0.3:pos=1,0,0");
  EXPECT_EQ(m.kind, ShapeKind::Mesh);
  EXPECT_EQ(m.file, "tests/data/cube.stl");
  EXPECT_EQ(m.scale, (Vec3d{0.1, 0.2, 0.3}));
  EXPECT_EQ(parseShapeSpec("mesh:file=a.obj").scale, (Vec3d{1, 1, 1}));
  EXPECT_EQ(parseShapeSpec("mesh:file=a.obj:scale=0.5").scale, (Vec3d{0.5, 0.5, 0.5}));
  std::map<std::string, std::string> extras;
  const ShapeSpec e = parseShapeSpec("sphere:d=0.2:density=500:pos=0,1,0", {"density", "motion"}, extras);
  EXPECT_EQ(e.size[0], 0.2);
  ASSERT_EQ(extras.size(), 1u);
  EXPECT_EQ(extras["density"], "500");
}

TEST(GeometrySpec, ParseErrorsNameTheSpecAndTheProblem) {
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"cone:d=1", "unknown shape 'cone'"},
      {"box", "needs key 'size'"},
      {"box:size=1,2", "needs 3 values"},
      {"box:size=1,0,1", "must be > 0"},
      {"box:size=1,-2,1", "must be > 0"},
      {"box:size=1,x,1", "'x' is not a finite number"},
      {"box:size=1,nan,1", "'nan' is not a finite number"},
      {"box:size=1,inf,1", "'inf' is not a finite number"},
      {"box:size=1,,1", "'' is not a finite number"},
      {"box:size=1 ,1,1", "'1 ' is not a finite number"},
      {"box:size=1:size=2", "given twice"},
      {"box:size=1:d=2", "unknown key 'd' for a box"},
      {"box:size=1:colour=red", "unknown key 'colour'"},
      {"box:size=1:pos=1,2", "key 'pos' needs 3 values"},
      {"box:size=1:rot=1,2,3,4", "key 'rot' needs 3 values"},
      {"box:size=1:", "expected KEY=VALUE"},
      {"box:size=1:pos", "expected KEY=VALUE"},
      {"sphere:d=0", "must be > 0"},
      {"sphere:d=1,2", "needs 1 value"},
      {"cylinder:d=1", "needs key 'height'"},
      {"cylinder:h=1", "needs key 'diameter'"},
      {"mesh:scale=2", "needs key 'file'"},
      {"mesh:file=", "empty path"},
      {"mesh:file=a.stl:scale=1,0,1", "must be > 0"},
      {"sphere:d=1:density=3", "unknown key 'density'"},
  };
  for (const auto& [text, want] : bad) {
    SCOPED_TRACE(text);
    try {
      parseShapeSpec(text);
      ADD_FAILURE() << "no error";
    } catch (const Error& e) {
      const std::string msg = e.what();
      EXPECT_NE(msg.find("'" + text + "'"), std::string::npos) << msg;
      EXPECT_NE(msg.find(want), std::string::npos) << msg;
    }
  }
}

TEST(GeometrySpec, StringAndJsonRoundTripExactly) {
  Rng rng(21);
  auto r = [&] { return rng.uniform(0.01, 3.0) / 3.0; };
  for (int t = 0; t < 40; ++t) {
    ShapeSpec s;
    s.kind = ShapeKind(t % 4);
    s.size = {r(), r(), r()};
    if (s.kind == ShapeKind::Sphere) s.size = {s.size[0], s.size[0], s.size[0]};
    if (s.kind == ShapeKind::Cylinder) s.size[2] = s.size[0];
    if (s.kind == ShapeKind::Mesh) {
      s.size = {1, 1, 1};
      s.file = "meshes/obstacle " + std::to_string(t) + ".stl";
      s.scale = {r(), r(), r()};
    }
    s.pose.position = {rng.uniform(-5, 5), rng.uniform(-5, 5), rng.uniform(-5, 5)};
    s.pose.rotationDeg = {rng.uniform(-180, 180), rng.uniform(-180, 180), rng.uniform(-180, 180)};
    auto same = [&](const ShapeSpec& o) {
      EXPECT_EQ(o.kind, s.kind);
      EXPECT_EQ(o.size, s.size);
      EXPECT_EQ(o.file, s.file);
      EXPECT_EQ(o.scale, s.scale);
      EXPECT_EQ(o.pose.position, s.pose.position);
      EXPECT_EQ(o.pose.rotationDeg, s.pose.rotationDeg);
    };
    if (s.kind != ShapeKind::Mesh) same(parseShapeSpec(shapeSpecToString(s)));
    same(shapeSpecFromJson(shapeSpecToJson(s), "test"));
    // Through text, as a config file or snapshot stores it.
    same(shapeSpecFromJson(nlohmann::json::parse(shapeSpecToJson(s).dump()), "test"));
  }
}

TEST(GeometrySpec, JsonReadsEveryKindAndResolvesRelativeMeshPaths) {
  using nlohmann::json;
  const ShapeSpec b = shapeSpecFromJson(
      json::parse(R"({"shape":"box","size":[1,2,3],"position":[4,5,6],"rotation":[0,90,0]})"), "obstacles[0]");
  EXPECT_EQ(b.size, (Vec3d{1, 2, 3}));
  EXPECT_EQ(b.pose.position, (Vec3d{4, 5, 6}));
  EXPECT_EQ(b.pose.rotationDeg, (Vec3d{0, 90, 0}));
  const ShapeSpec c = shapeSpecFromJson(json::parse(R"({"shape":"cylinder","diameter":0.5,"height":2})"), "x");
  EXPECT_EQ(c.size, (Vec3d{0.5, 2, 0.5}));
  EXPECT_EQ(c.pose.position, (Vec3d{0, 0, 0}));
  const ShapeSpec m = shapeSpecFromJson(json::parse(R"({"shape":"mesh","file":"meshes/a.stl","scale":2})"), "x",
                                        "/cases/one");
  EXPECT_EQ(m.file, "/cases/one/meshes/a.stl");
  EXPECT_EQ(m.scale, (Vec3d{2, 2, 2}));
  EXPECT_EQ(shapeSpecFromJson(json::parse(R"({"shape":"mesh","file":"/abs/a.stl"})"), "x", "/cases").file,
            "/abs/a.stl");
  EXPECT_EQ(shapeSpecFromJson(json::parse(R"({"shape":"mesh","file":"../a.stl"})"), "x", "/cases/one").file,
            "/cases/a.stl");
  EXPECT_EQ(shapeSpecFromJson(json::parse(R"({"shape":"mesh","file":"a.stl"})"), "x").file, "a.stl");
  // The caller's own keys are left to it.
  EXPECT_EQ(shapeSpecFromJson(json::parse(R"({"shape":"sphere","diameter":1,"density":500})"), "bodies[2]", "",
                              {"density"})
                .size[0],
            1.0);
}

TEST(GeometrySpec, JsonErrorsNameWhereAndTheKey) {
  const std::vector<std::pair<std::string, std::string>> bad = {
      {R"([1,2])", "expected a JSON object"},
      {R"({"size":[1,1,1]})", "missing key 'shape'"},
      {R"({"shape":3})", "key 'shape': expected a string"},
      {R"({"shape":"cone"})", "key 'shape': unknown shape 'cone'"},
      {R"({"shape":"box"})", "needs key 'size'"},
      {R"({"shape":"box","size":[1,1]})", "key 'size': expected an array of 3 numbers, got 2"},
      {R"({"shape":"box","size":[1,"a",1]})", "key 'size': expected a number, got string"},
      {R"({"shape":"box","size":[1,0,1]})", "key 'size': must be > 0"},
      {R"({"shape":"box","size":-1})", "key 'size': must be > 0"},
      {R"({"shape":"box","size":"big"})", "key 'size': expected a number, got string"},
      {R"({"shape":"box","size":[1,1,1],"diameter":2})", "key 'diameter': unknown key for a box"},
      {R"({"shape":"box","size":[1,1,1],"density":2})", "key 'density': unknown key"},
      {R"({"shape":"box","size":[1,1,1],"pos":[0,0,0]})", "key 'pos': unknown key"},
      {R"({"shape":"box","size":[1,1,1],"position":[0,0]})", "key 'position': expected an array of 3"},
      {R"({"shape":"box","size":[1,1,1],"position":1})", "key 'position': expected an array of 3 numbers, got number"},
      {R"({"shape":"box","size":[1,1,1],"rotation":[0,null,0]})", "key 'rotation': expected a number, got null"},
      {R"({"shape":"sphere","diameter":[1]})", "key 'diameter': expected a number, got array"},
      {R"({"shape":"sphere","diameter":0})", "key 'diameter': must be > 0"},
      {R"({"shape":"cylinder","diameter":1})", "needs key 'height'"},
      {R"({"shape":"cylinder","diameter":1,"height":-0.5})", "key 'height': must be > 0"},
      {R"({"shape":"mesh"})", "needs key 'file'"},
      {R"({"shape":"mesh","file":7})", "key 'file': expected a string"},
      {R"({"shape":"mesh","file":""})", "key 'file': empty path"},
      {R"({"shape":"mesh","file":"a.stl\u0000x"})", "key 'file': the path holds a NUL character"},
      {R"({"shape":"mesh","file":"a.stl","scale":[1,1,0]})", "key 'scale': must be > 0"},
      {R"({"shape":"mesh","file":"a.stl","size":[1,1,1]})", "key 'size': unknown key for a mesh"},
  };
  for (const auto& [text, want] : bad) {
    SCOPED_TRACE(text);
    try {
      shapeSpecFromJson(nlohmann::json::parse(text), "case.json: obstacles[1]");
      ADD_FAILURE() << "no error";
    } catch (const Error& e) {
      const std::string msg = e.what();
      EXPECT_EQ(msg.rfind("case.json: obstacles[1]: ", 0), 0u) << msg;
      EXPECT_NE(msg.find(want), std::string::npos) << msg;
    }
  }
  // Non-finite numbers cannot be written in JSON but can be built in memory.
  nlohmann::json j = {{"shape", "sphere"}, {"diameter", INFINITY}};
  EXPECT_THROW(shapeSpecFromJson(j, "x"), Error);
}

// ------------------------------------------------------------------ meshes

namespace {
std::string dataFile(const std::string& name) { return std::string(EDDY_TEST_DATA) + "/" + name; }
ShapeSpec meshSpec(const std::string& file, const Vec3d& scale = {1, 1, 1}) {
  ShapeSpec s;
  s.kind = ShapeKind::Mesh;
  s.file = file;
  s.scale = scale;
  return s;
}
// Checks the samples of a mesh: count * spacing^2 within `tol` of the area,
// each on the surface (|sdf| < 1e-6 spacing) with a unit outward normal
// (0.01 spacing along it is outside, against it inside),
// nearest-neighbour distances within [0.5, 1.5] spacing, deterministic.
void checkMeshSamples(const Shape& shape, double h, double tol) {
  std::vector<Vec3d> p, n, p2, n2;
  shape.sample(h, p, n);
  ASSERT_EQ(p.size(), n.size());
  EXPECT_NEAR(double(p.size()) * h * h, shape.surfaceArea(), tol * shape.surfaceArea());
  for (size_t i = 0; i < p.size(); ++i) {
    ASSERT_NEAR(shape.sdf(p[i]), 0.0, 1e-6 * h);
    ASSERT_NEAR(len(n[i]), 1.0, 1e-12);
    ASSERT_GT(shape.sdf(add(p[i], mul(0.01 * h, n[i]))), 0.002 * h) << "normal " << i << " points inwards";
    ASSERT_LT(shape.sdf(add(p[i], mul(-0.01 * h, n[i]))), 0.0);  // a sharp corner's bisector
  }
  const auto nn = nearestDistances(p, 2 * h);
  const auto [lo, hi] = std::minmax_element(nn.begin(), nn.end());
  EXPECT_GE(*lo, 0.5 * h);
  EXPECT_LE(*hi, 1.5 * h);
  shape.sample(h, p2, n2);
  EXPECT_EQ(p, p2);
  EXPECT_EQ(n, n2);
}
}  // namespace

// The unit cube in ASCII STL, binary STL, OBJ (quads) and PLY, scaled to
// 0.1 x 0.2 x 0.3: exact volume, area, centroid, inertia and bounds (1e-12
// relative: the corners are exact in float), and the exact box SDF.
TEST(GeometryMesh, CubeInEveryFormatHasTheBoxesProperties) {
  const Vec3d scale{0.1, 0.2, 0.3};
  ShapeSpec box;
  box.size = scale;
  const auto ref = makeShape(box);
  for (const char* f : {"cube.stl", "cube_binary.stl", "cube.obj", "cube.ply", "inward_cube.stl"}) {
    SCOPED_TRACE(f);
    const auto m = makeShape(meshSpec(dataFile(f), scale));
    EXPECT_EQ(m->kind(), ShapeKind::Mesh);
    EXPECT_NEAR(m->volume(), ref->volume(), 1e-12 * ref->volume());
    EXPECT_NEAR(m->surfaceArea(), ref->surfaceArea(), 1e-12 * ref->surfaceArea());
    for (int k = 0; k < 3; ++k) {
      EXPECT_NEAR(m->centroid()[k], 0.0, 1e-15);
      EXPECT_NEAR(m->bounds().lo[k], -scale[k] / 2, 1e-15);
      EXPECT_NEAR(m->bounds().hi[k], scale[k] / 2, 1e-15);
    }
    const Mat3d a = m->inertia(1000), b = ref->inertia(1000);
    for (int k = 0; k < 9; ++k) EXPECT_NEAR(a[k], b[k], 1e-12 * b[0]);
    Rng rng(31);
    for (int i = 0; i < 5000; ++i) {
      const Vec3d p{rng.uniform(-0.2, 0.2), rng.uniform(-0.2, 0.2), rng.uniform(-0.3, 0.3)};
      ASSERT_NEAR(m->sdf(p), exactSdf(box, p), 1e-12) << p[0] << " " << p[1] << " " << p[2];
    }
  }
}

// An icosphere of radius 0.5 (1280 triangles, vertices on the sphere): its
// volume and area lie between those of the inscribed and circumscribed
// spheres (within 1.5% of the sphere's), inertia 2/5 m r^2 within 3%, the
// SDF within 0.005 of |p| - 0.5 (the facets' sagitta is below 0.004) and a
// Monte Carlo volume from the SDF's sign (100k points) within 1.5%.
TEST(GeometryMesh, IcosphereApproximatesTheSphere) {
  const auto m = makeShape(meshSpec(dataFile("icosphere.stl")));
  const double r = 0.5, v = 4.0 / 3 * kPi * r * r * r, a = 4 * kPi * r * r;
  EXPECT_LT(m->volume(), v);
  EXPECT_NEAR(m->volume(), v, 0.015 * v);
  EXPECT_LT(m->surfaceArea(), a);
  EXPECT_NEAR(m->surfaceArea(), a, 0.015 * a);
  for (int k = 0; k < 3; ++k) EXPECT_NEAR(m->centroid()[k], 0.0, 1e-6);
  const Mat3d in = m->inertia(2.0);
  const double i0 = 0.4 * 2.0 * v * r * r;
  for (int k = 0; k < 3; ++k)
    for (int l = 0; l < 3; ++l) EXPECT_NEAR(in[3 * k + l], k == l ? i0 : 0.0, 0.03 * i0);
  Rng rng(41);
  for (int i = 0; i < 20000; ++i) {
    const Vec3d p{rng.uniform(-0.8, 0.8), rng.uniform(-0.8, 0.8), rng.uniform(-0.8, 0.8)};
    ASSERT_NEAR(m->sdf(p), len(p) - r, 0.005);
  }
  const MassEstimate mc = monteCarlo(*m, 100000, 8);
  EXPECT_NEAR(mc.volume, m->volume(), 0.015 * m->volume());
  EXPECT_NEAR(mc.inertia[0], in[0] / 2.0, 0.03 * in[0] / 2.0);
}

// Mesh samples: count * spacing^2 within 5% of the area, on the surface,
// unit outward normals, nearest neighbours within [0.5, 1.5] spacing, no
// point of the exact cube surface (3000 random ones) farther than one
// spacing from a sample, deterministic.
TEST(GeometryMesh, SamplesCoverTheSurfaceEvenly) {
  Rng rng(17);
  {
    SCOPED_TRACE("cube");
    ShapeSpec box;
    box.size = {0.3, 0.4, 0.5};
    const auto m = makeShape(meshSpec(dataFile("cube.stl"), box.size));
    for (double h : {0.02, 0.033}) {
      checkMeshSamples(*m, h, 0.05);
      std::vector<Vec3d> p, n;
      m->sample(h, p, n);
      double worst = 0;
      for (const auto& q : randomSurfacePoints(box, 3000, rng)) worst = std::max(worst, distanceToSet(q, p));
      EXPECT_LE(worst, h);
    }
  }
  {
    SCOPED_TRACE("icosphere");
    const auto m = makeShape(meshSpec(dataFile("icosphere.stl"), {0.4, 0.4, 0.4}));
    checkMeshSamples(*m, 0.02, 0.05);
    std::vector<Vec3d> p, n;
    m->sample(0.02, p, n);
    double worst = 0;
    for (int i = 0; i < 3000; ++i) {
      Vec3d u;
      rng.unitVector(u[0], u[1], u[2]);
      worst = std::max(worst, distanceToSet(mul(0.2, u), p));
    }
    EXPECT_LE(worst, 0.02);
  }
}

// A mesh over 200 spacings across in every direction: the sampler's point
// grid (cells of one sampling radius) has more cells than it keeps densely
// and hashes the occupied ones (before: at most 128 cells a side, so a
// mesh many times larger put many samples in each cell). The samples are as
// even as a small mesh's.
TEST(GeometryMesh, AMeshHundredsOfSpacingsAcrossSamplesEvenly) {
  const auto m = makeShape(meshSpec(dataFile("cube.obj"), {2.1, 2.1, 2.1}));
  checkMeshSamples(*m, 0.01, 0.05);
}

// The area of a box's surface (half extents hb, centred) within a clip box,
// written independently of the library: each face's rectangle clipped.
double boxAreaWithin(const Vec3d& hb, const Aabb& c) {
  double area = 0;
  for (int a = 0; a < 3; ++a)
    for (double side : {-1.0, 1.0}) {
      if (!(c.lo[a] <= side * hb[a] && side * hb[a] <= c.hi[a])) continue;
      double rect = 1;
      for (int k : {(a + 1) % 3, (a + 2) % 3})
        rect *= std::max(0.0, std::min(c.hi[k], hb[k]) - std::max(c.lo[k], -hb[k]));
      area += rect;
    }
  return area;
}

// A mesh sampled within clip boxes cutting through it (its triangles
// clipped to the box): every sample in the box and on the surface, the count
// matching the area within the box (5 %), no two samples closer than half a
// spacing and no hole wider than a spacing anywhere on the surface in the
// box, deterministic; a box holding the mesh gives the unclipped samples,
// one apart from it none.
TEST(GeometryMesh, ClippedSamplesCoverThePartInTheBoxEvenly) {
  const Vec3d size{0.8, 0.3, 0.6}, hb{0.4, 0.15, 0.3};
  const auto m = makeShape(meshSpec(dataFile("cube.obj"), size));
  ShapeSpec box;
  box.size = size;
  const double h = 0.017;
  Rng rng(31);
  std::vector<Vec3d> all, allN;
  m->sample(h, all, allN);
  for (int c = 0; c < 6; ++c) {
    SCOPED_TRACE("clip " + std::to_string(c));
    Aabb clip;
    for (int k = 0; k < 3; ++k) {
      const double u = rng.uniform(-hb[k] - 0.1, hb[k]), v = rng.uniform(-hb[k] + 0.05, hb[k] + 0.1);
      clip.lo[k] = std::min(u, v);
      clip.hi[k] = std::max(u, v);
    }
    if (c == 0) clip = {{-1, -1, -1}, {1, 1, 1}};
    if (c == 1) clip = {{0.5, -1, -1}, {1, 1, 1}};
    std::vector<Vec3d> p, n, p2, n2;
    m->sample(h, p, n, &clip);
    ASSERT_EQ(p.size(), n.size());
    if (c == 0) {
      EXPECT_EQ(p, all);
      EXPECT_EQ(n, allN);
    }
    if (c == 1) {
      EXPECT_TRUE(p.empty());
      continue;
    }
    const double area = boxAreaWithin(hb, clip);
    EXPECT_NEAR(double(p.size()) * h * h, area, 0.05 * area + 4 * h * h);
    for (size_t i = 0; i < p.size(); ++i) {
      ASSERT_TRUE(clip.contains(p[i]));
      ASSERT_NEAR(m->sdf(p[i]), 0.0, 1e-6 * h);
      ASSERT_GT(m->sdf(add(p[i], mul(0.01 * h, n[i]))), 0.002 * h);
    }
    if (p.size() > 1) {
      const auto nn = nearestDistances(p, 2 * h);
      EXPECT_GE(*std::min_element(nn.begin(), nn.end()), 0.5 * h);
    }
    double worst = 0;
    int inside = 0;
    for (const auto& q : randomSurfacePoints(box, 20000, rng))
      if (clip.contains(q)) {
        ++inside;
        worst = std::max(worst, distanceToSet(q, p));
      }
    if (inside > 0) {
      EXPECT_LE(worst, h);
    }
    m->sample(h, p2, n2, &clip);
    EXPECT_EQ(p, p2);
    EXPECT_EQ(n, n2);
  }
}

// A mesh slab 100 m across at 0.01 m (2e8 samples: refused whole) sampled
// within a tank-sized box: only there, evenly, its two large faces'
// triangles each clipped to the box.
TEST(GeometryMesh, AHugeMeshIsSampledOnlyWithinTheClipBox) {
  const auto m = makeShape(meshSpec(dataFile("cube.obj"), {100, 0.04, 100}));
  std::vector<Vec3d> p, n;
  EXPECT_THROW(m->sample(0.01, p, n), Error);
  const Aabb clip{{-0.3, -0.1, 0.2}, {0.3, 0.1, 0.6}};
  ASSERT_NO_THROW(m->sample(0.01, p, n, &clip));
  const double area = boxAreaWithin({50, 0.02, 50}, clip);  // 2 x 0.6 x 0.4
  EXPECT_NEAR(double(p.size()) * 1e-4, area, 0.05 * area);
  for (const auto& q : p) ASSERT_TRUE(clip.contains(q));
  const auto nn = nearestDistances(p, 0.02);
  EXPECT_GE(*std::min_element(nn.begin(), nn.end()), 0.005);
  EXPECT_LE(*std::max_element(nn.begin(), nn.end()), 0.015);
}

// The obstacle shipped for the mesh_obstacle scene: closed, about unit size,
// standing on y = 0; volume from the SDF's sign (Monte Carlo, 100k points)
// within 1.5% of
// the tetrahedron sum; even samples.
TEST(GeometryMesh, ShippedObstacleIsClosedAndSamplesEvenly) {
  const auto m = makeShape(meshSpec(std::string(EDDY_SOURCE_DIR) + "/data/meshes/obstacle.stl"));
  const Aabb b = m->bounds();
  EXPECT_NEAR(b.lo[1], 0.0, 1e-6);
  EXPECT_NEAR(b.hi[0] - b.lo[0], 1.0, 1e-6);
  const MassEstimate mc = monteCarlo(*m, 100000, 9);
  EXPECT_NEAR(mc.volume, m->volume(), 0.015 * m->volume());
  for (int k = 0; k < 3; ++k) EXPECT_NEAR(mc.centroid[k], m->centroid()[k], 0.01);
  checkMeshSamples(*m, 0.025, 0.05);
}

// Bad meshes: the error names the file and the problem.
TEST(GeometryMesh, BadMeshesGiveErrorsNamingTheFileAndTheProblem) {
  const std::string junk = std::filesystem::temp_directory_path() / "eddy_geometry_junk.stl";
  {
    std::ofstream(junk) << "this is not a mesh\n";
  }
  // PLY headers whose counts the file cannot hold: refused before Assimp
  // allocates them (4e8 vertices took 4.7 GB; 2e9 faces threw bad_alloc).
  const std::string liarAscii = std::filesystem::temp_directory_path() / "eddy_geometry_liar.ply";
  const std::string liarBinary = std::filesystem::temp_directory_path() / "eddy_geometry_liar_binary.ply";
  {
    std::ofstream(liarAscii) << "ply\nformat ascii 1.0\nelement vertex 400000000\nproperty float x\n"
                                "property float y\nproperty float z\nelement face 1\n"
                                "property list uchar int vertex_indices\nend_header\n0 0 0\n1 0 0\n0 1 0\n3 0 1 2\n";
    std::ofstream(liarBinary, std::ios::binary)
        << "ply\r\nformat binary_little_endian 1.0\r\nelement vertex 3\r\nproperty float x\r\n"
           "property float y\r\nproperty float z\r\nelement face 2000000000\r\n"
           "property list uchar int vertex_indices\r\nend_header\r\n"
        << std::string(3 * 12 + 13, '\0');
  }
  const std::vector<std::pair<std::string, std::string>> bad = {
      {dataFile("no_such_file.stl"), "cannot read mesh: no such file"},
      {junk, "cannot read mesh"},
      {dataFile("empty.stl"), "empty"},
      {dataFile("degenerate.stl"), "all 4 triangles are degenerate (zero area)"},
      {dataFile("open_box.stl"), "not closed: 4 of 17 edges are not shared by exactly two triangles"},
      {dataFile("flipped_face_cube.stl"), "not consistently oriented"},
      {liarAscii, "its PLY header claims 400000000 vertex elements, at least 2400000000 bytes, but the file has 26 bytes after its header"},
      {liarBinary, "its PLY header claims 2000000000 face elements"},
  };
  for (const auto& [file, want] : bad) {
    SCOPED_TRACE(file);
    try {
      makeShape(meshSpec(file));
      ADD_FAILURE() << "no error";
    } catch (const Error& e) {
      const std::string msg = e.what();
      EXPECT_EQ(msg.rfind(file + ": ", 0), 0u) << msg;
      EXPECT_NE(msg.find(want), std::string::npos) << msg;
    }
  }
  std::filesystem::remove(junk);
  std::filesystem::remove(liarAscii);
  std::filesystem::remove(liarBinary);
  // The shipped PLY (its header honest) still reads.
  EXPECT_NO_THROW(makeShape(meshSpec(dataFile("cube.ply"))));
}

TEST(GeometrySdfGrid, MeshGridMatchesTheMeshSdf) {
  const auto m = makeShape(meshSpec(dataFile("icosphere.stl"), {0.3, 0.3, 0.3}));
  const SdfGrid g = makeSdfGrid(*m, 0.01, 0.02);
  EXPECT_EQ(g.dims[0], 35);  // (0.3 + 2 * 0.02) / 0.01 + 1 nodes, up to float rounding of the extent
  Rng rng(2);
  int inside = 0;
  for (int t = 0; t < 500; ++t) {
    const int i = int(rng.uniform() * g.dims[0]), j = int(rng.uniform() * g.dims[1]), k = int(rng.uniform() * g.dims[2]);
    const Vec3d p{g.origin[0] + i * g.cell, g.origin[1] + j * g.cell, g.origin[2] + k * g.cell};
    const float v = g.values[(size_t(k) * g.dims[1] + j) * g.dims[0] + i];
    EXPECT_FLOAT_EQ(v, float(m->sdf(p)));
    EXPECT_NEAR(v, len(p) - 0.15, 0.003);
    inside += v < 0;
  }
  EXPECT_GT(inside, 0);
}

// Shape::turnedBounds is the exact box of the turned shape for every kind:
// it holds every turned surface sample, and each face of it is touched by
// one to within the sampling's resolution. Fresh random rotations.
TEST(GeometryShapes, TurnedBoundsAreTheTurnedShapesExactBox) {
  std::mt19937 rng(std::random_device{}());
  std::uniform_real_distribution<double> deg(-180, 180);
  ShapeSpec box, sphere, cyl;
  box.kind = ShapeKind::Box;
  box.size = {0.3, 0.1, 0.05};
  sphere.kind = ShapeKind::Sphere;
  sphere.size = {0.2, 0.2, 0.2};
  cyl.kind = ShapeKind::Cylinder;
  cyl.size = {0.1, 0.4, 0.1};
  const ShapeSpec mesh = meshSpec(dataFile("icosphere.stl"), {0.4, 0.1, 0.2});
  for (const ShapeSpec& spec : {box, sphere, cyl, mesh}) {
    const auto s = makeShape(spec);
    for (int r = 0; r < 4; ++r) {
      const Vec3d angles{deg(rng), deg(rng), deg(rng)};
      SCOPED_TRACE(shapeKindName(spec.kind) + " turned " + std::to_string(angles[0]) + ", " +
                   std::to_string(angles[1]) + ", " + std::to_string(angles[2]));
      const Mat3d R = rotationMatrix(angles);
      const Aabb t = s->turnedBounds(R);
      std::vector<Vec3d> pts, nrm;
      s->sample(0.004, pts, nrm);
      Aabb seen{{1e300, 1e300, 1e300}, {-1e300, -1e300, -1e300}};
      for (const Vec3d& p : pts) {
        const Vec3d q = rotate(R, p);
        for (int a = 0; a < 3; ++a) {
          EXPECT_GE(q[a], t.lo[a] - 1e-12);
          EXPECT_LE(q[a], t.hi[a] + 1e-12);
          seen.lo[a] = std::min(seen.lo[a], q[a]);
          seen.hi[a] = std::max(seen.hi[a], q[a]);
        }
      }
      for (int a = 0; a < 3; ++a) {  // not a loose superset (samples 4 mm apart)
        EXPECT_NEAR(seen.lo[a], t.lo[a], 0.006) << a;
        EXPECT_NEAR(seen.hi[a], t.hi[a], 0.006) << a;
      }
    }
  }
}
