// shape.cpp: shape kinds, the rotation convention, makeShape and SDF grids
// (the contract is in shape.hpp; primitives.cpp and mesh.cpp hold the shapes).
#include "shape.hpp"

#include "error.hpp"
#include "number_text.hpp"
#include "vec.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <exception>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>
#include <thread>

namespace eddy {

std::string shapeKindName(ShapeKind k) {
  switch (k) {
    case ShapeKind::Box: return "box";
    case ShapeKind::Sphere: return "sphere";
    case ShapeKind::Cylinder: return "cylinder";
    case ShapeKind::Mesh: return "mesh";
  }
  return "?";
}

ShapeKind parseShapeKind(const std::string& name) {
  for (ShapeKind k : {ShapeKind::Box, ShapeKind::Sphere, ShapeKind::Cylinder, ShapeKind::Mesh})
    if (name == shapeKindName(k)) return k;
  throw Error("unknown shape '" + name + "'; known shapes: box, sphere, cylinder, mesh");
}

namespace {
// sin and cos of an angle in degrees, exact (0, +-1) at multiples of 90
// degrees so that quarter turns map axes onto axes without rounding.
void sinCosDeg(double deg, double& s, double& c) {
  double r = std::fmod(deg, 360.0);
  if (r < 0) r += 360.0;
  if (r == 0) { s = 0; c = 1; return; }
  if (r == 90) { s = 1; c = 0; return; }
  if (r == 180) { s = 0; c = -1; return; }
  if (r == 270) { s = -1; c = 0; return; }
  const double a = r * (3.14159265358979323846 / 180.0);
  s = std::sin(a);
  c = std::cos(a);
}
}  // namespace

Mat3d rotationMatrix(const Vec3d& rotationDeg) {
  double sa, ca, sb, cb, sc, cc;
  sinCosDeg(rotationDeg[0], sa, ca);
  sinCosDeg(rotationDeg[1], sb, cb);
  sinCosDeg(rotationDeg[2], sc, cc);
  // Rz(c) * Ry(b) * Rx(a), row-major.
  return {cc * cb, cc * sb * sa - sc * ca, cc * sb * ca + sc * sa,
          sc * cb, sc * sb * sa + cc * ca, sc * sb * ca - cc * sa,
          -sb,     cb * sa,                cb * ca};
}

namespace {
// 17 digits (what was given, exactly), or 6 for a limit (1e-06, not
// 9.9999999999999995e-07).
std::string num(double v, int digits = 17) {
  std::ostringstream o;
  o.precision(digits);
  o << v;
  return o.str();
}
void checkPositive(double v, const std::string& what) {
  if (!std::isfinite(v) || v <= 0) throw Error(what + " must be a finite number > 0, got " + num(v));
}
}  // namespace

std::string shapeSizeRange() {
  return "a solid is " + num(kShapeSizeMin, 6) + " to " + num(kShapeSizeMax, 6) +
         " m across: beyond that its boundary sampling and SDF grid, in float on the device, lose it";
}

namespace {
void checkSize(double v, const std::string& what) {
  checkPositive(v, what);
  if (v < kShapeSizeMin || v > kShapeSizeMax) {
    const double limit = v < kShapeSizeMin ? kShapeSizeMin : kShapeSizeMax;
    throw Error(what + " is " + formatApart(v, limit) + " m, out of range (" + shapeSizeRange() + ")");
  }
}
}  // namespace

Aabb Shape::turnedBounds(const Mat3d& R) const {
  const Aabb l = bounds();
  Aabb w;
  w.lo = {1e300, 1e300, 1e300};
  w.hi = {-1e300, -1e300, -1e300};
  for (int k = 0; k < 8; ++k) {
    const Vec3d c{(k & 1) ? l.hi[0] : l.lo[0], (k & 2) ? l.hi[1] : l.lo[1], (k & 4) ? l.hi[2] : l.lo[2]};
    for (int a = 0; a < 3; ++a) {
      const double v = R[3 * a] * c[0] + R[3 * a + 1] * c[1] + R[3 * a + 2] * c[2];
      w.lo[a] = std::min(w.lo[a], v);
      w.hi[a] = std::max(w.hi[a], v);
    }
  }
  return w;
}

std::unique_ptr<Shape> makeShape(const ShapeSpec& spec) {
  const std::string kind = shapeKindName(spec.kind);
  switch (spec.kind) {
    case ShapeKind::Box:
      for (int a = 0; a < 3; ++a) checkSize(spec.size[a], "box size[" + std::to_string(a) + "]");
      return geom::makeBox(spec.size);
    case ShapeKind::Sphere:
      checkSize(spec.size[0], "sphere diameter");
      return geom::makeSphere(spec.size[0]);
    case ShapeKind::Cylinder:
      checkSize(spec.size[0], "cylinder diameter");
      checkSize(spec.size[1], "cylinder height");
      return geom::makeCylinder(spec.size[0], spec.size[1]);
    case ShapeKind::Mesh:
      if (spec.file.empty()) throw Error("mesh: no file given");
      for (int a = 0; a < 3; ++a)
        checkPositive(spec.scale[a], spec.file + ": mesh scale[" + std::to_string(a) + "]");
      return geom::makeMesh(spec.file, spec.scale);  // its scaled extent checked there
  }
  throw Error("unknown shape kind");
}

static constexpr const char* kHashPrefix = "fnv1a64:";

std::string fileContentHash(const std::string& path) {
  // Only a regular file (opening a FIFO would wait for a writer).
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec))
    throw Error(path + ": cannot hash the file: not a regular file");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(path + ": cannot open the file to hash it");
  uint64_t h = 0xcbf29ce484222325ull;  // FNV-1a, 64 bits
  char buf[1 << 16];
  while (in) {
    in.read(buf, sizeof buf);
    const std::streamsize got = in.gcount();
    for (std::streamsize i = 0; i < got; ++i) {
      h ^= uint64_t(uint8_t(buf[i]));
      h *= 0x100000001b3ull;
    }
  }
  if (in.bad() || !in.eof()) throw Error(path + ": read error while hashing the file");
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(h));
  return std::string(kHashPrefix) + hex;
}

bool isFileContentHash(const std::string& text) {
  const size_t prefix = std::strlen(kHashPrefix);
  return text.size() == prefix + 16 && text.compare(0, prefix, kHashPrefix) == 0 &&
         text.find_first_not_of("0123456789abcdef", prefix) == std::string::npos;
}

namespace geom {
void checkSampleSpacing(double spacing, double area) {
  if (!std::isfinite(spacing) || spacing <= 0)
    throw Error("shape sampling: spacing must be a finite number > 0, got " + num(spacing));
  const double n = area / (spacing * spacing);
  if (!(n <= 2e7))
    throw Error("shape sampling: spacing " + num(spacing) + " gives about " + num(std::round(n)) +
                " samples on a surface of area " + num(area) + " m^2 (at most 2e7); use a larger spacing");
}
}  // namespace geom

SdfGrid makeSdfGrid(const Shape& shape, double cell, double margin, const Aabb* clip) {
  if (!std::isfinite(cell) || cell <= 0) throw Error("SDF grid: cell must be a finite number > 0, got " + num(cell));
  if (!std::isfinite(margin) || margin < 0)
    throw Error("SDF grid: margin must be a finite number >= 0, got " + num(margin));
  const Aabb b = shape.bounds();
  SdfGrid g;
  g.cell = cell;
  double nodes = 1;
  for (int a = 0; a < 3; ++a) {
    g.origin[a] = b.lo[a] - margin;
    double n = std::ceil((b.hi[a] - b.lo[a] + 2 * margin) / cell) + 1;
    if (clip) {  // the nodes of the same lattice within the clip box (one at least)
      const double first = std::max(0.0, std::floor((clip->lo[a] - g.origin[a]) / cell));
      const double last = std::min(n - 1, std::ceil((clip->hi[a] - g.origin[a]) / cell));
      const double kept = last >= first ? last - first + 1 : 1;
      g.origin[a] += std::min(first, n - 1) * cell;
      n = kept;
    }
    nodes *= n;
    if (!(n <= 1 << 16) || !(nodes <= double(1 << 27)))
      throw Error("SDF grid: cell " + num(cell) + " gives more than 2^27 nodes for a shape of extent " +
                  num(b.hi[a] - b.lo[a]) + "; use a larger cell");
    g.dims[a] = int(n);
  }
  g.values.resize(size_t(g.dims[0]) * g.dims[1] * g.dims[2]);
  // Slices of z on up to 16 threads (Shape::sdf is const and thread-safe);
  // every node is computed the same way whatever the thread count.
  // A mesh is asked with a hint: the previous node's nearest triangle.
  const auto* hinted = dynamic_cast<const geom::HintedSdf*>(&shape);
  auto slab = [&](int z0, int z1) {
    size_t i = size_t(z0) * g.dims[1] * g.dims[0];
    for (int z = z0; z < z1; ++z)
      for (int y = 0; y < g.dims[1]; ++y) {
        int hint = -1;  // each row starts afresh: the values do not depend on the thread count
        for (int x = 0; x < g.dims[0]; ++x) {
          const Vec3d p{g.origin[0] + x * cell, g.origin[1] + y * cell, g.origin[2] + z * cell};
          g.values[i++] = float(hinted ? hinted->sdfNear(p, hint) : shape.sdf(p));
        }
      }
  };
  const int threads = std::clamp(int(std::thread::hardware_concurrency()), 1, std::min(16, g.dims[2]));
  if (threads == 1 || g.values.size() < 4096) {
    slab(0, g.dims[2]);
    return g;
  }
  std::vector<std::thread> pool;
  std::exception_ptr error;
  std::mutex m;
  for (int t = 0; t < threads; ++t)
    pool.emplace_back([&, t] {
      try {
        slab(g.dims[2] * t / threads, g.dims[2] * (t + 1) / threads);
      } catch (...) {
        std::lock_guard<std::mutex> lock(m);
        error = std::current_exception();
      }
    });
  for (auto& th : pool) th.join();
  if (error) std::rethrow_exception(error);
  return g;
}

}  // namespace eddy
