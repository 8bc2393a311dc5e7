// shape.hpp: solid shapes for obstacles and rigid bodies (issue 12).
//
// CONTRACT shared by the geometry, solids and bodies work: change it only
// together with every user. Host only (no OpenCL), SI units, double precision.
//
// Frames. A shape is defined in its LOCAL frame; a Pose places it in the
// world: x_world = position + R * x_local, with R = Rz(c) * Ry(b) * Rx(a) for
// rotationDeg = (a, b, c) degrees: rotate about the x axis first, then about
// y, then about z (axes fixed in the world, right-handed, y up).
//   box       local frame centred; size = full extents (x, y, z)
//   sphere    centred; size[0] = diameter (size[1], size[2] ignored)
//   cylinder  centred, axis along local y; size[0] = diameter, size[1] = height
//   mesh      the file's own coordinates multiplied by `scale` (per axis);
//             the local origin is the file's origin
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

namespace eddy {

using Vec3d = std::array<double, 3>;
using Mat3d = std::array<double, 9>;  // row-major

enum class ShapeKind { Box, Sphere, Cylinder, Mesh };

struct Pose {
  Vec3d position{0, 0, 0};
  Vec3d rotationDeg{0, 0, 0};  // (a, b, c): R = Rz(c) Ry(b) Rx(a)
};

struct ShapeSpec {
  ShapeKind kind = ShapeKind::Box;
  Vec3d size{1, 1, 1};   // see the table above (not used by a mesh)
  std::string file;      // mesh: STL, OBJ or PLY (read with Assimp)
  Vec3d scale{1, 1, 1};  // mesh only
  Pose pose;
};

// "box", "sphere", "cylinder", "mesh"; parseShapeKind throws eddy::Error
// naming the known kinds.
std::string shapeKindName(ShapeKind k);
ShapeKind parseShapeKind(const std::string& name);

// R of a rotation in degrees (see the frame convention above).
Mat3d rotationMatrix(const Vec3d& rotationDeg);

// R v and R^T v for R as rotationMatrix returns it (row-major).
inline Vec3d rotate(const Mat3d& R, const Vec3d& v) {
  return {R[0] * v[0] + R[1] * v[1] + R[2] * v[2], R[3] * v[0] + R[4] * v[1] + R[5] * v[2],
          R[6] * v[0] + R[7] * v[1] + R[8] * v[2]};
}
inline Vec3d rotateBack(const Mat3d& R, const Vec3d& v) {
  return {R[0] * v[0] + R[3] * v[1] + R[6] * v[2], R[1] * v[0] + R[4] * v[1] + R[7] * v[2],
          R[2] * v[0] + R[5] * v[1] + R[8] * v[2]};
}
// The unit vector along a (zero for a zero or non-finite a), scaled by its
// largest component first, so that (1e-300, 0, 0) and (1e300, 1e300, 0),
// whose squared norms underflow or overflow, are directions too.
inline Vec3d unitDirection(const Vec3d& a) {
  const double m = std::max({std::fabs(a[0]), std::fabs(a[1]), std::fabs(a[2])});
  if (!std::isfinite(m) || !(m > 0)) return {0, 0, 0};
  const Vec3d b{a[0] / m, a[1] / m, a[2] / m};
  const double n = std::sqrt(b[0] * b[0] + b[1] * b[1] + b[2] * b[2]);
  return {b[0] / n, b[1] / n, b[2] / n};
}

// A pose's maps between the frames, R = rotationMatrix(pose.rotationDeg)
// computed once by the caller: position + R local, and R^T (world - position).
inline Vec3d poseToWorld(const Pose& pose, const Mat3d& R, const Vec3d& local) {
  Vec3d w;
  for (int i = 0; i < 3; ++i)
    w[i] = pose.position[i] + R[3 * i] * local[0] + R[3 * i + 1] * local[1] + R[3 * i + 2] * local[2];
  return w;
}
inline Vec3d poseToLocal(const Pose& pose, const Mat3d& R, const Vec3d& world) {
  return rotateBack(R, {world[0] - pose.position[0], world[1] - pose.position[1], world[2] - pose.position[2]});
}

struct Aabb {
  Vec3d lo{0, 0, 0}, hi{0, 0, 0};
  bool contains(const Vec3d& p) const {
    return p[0] >= lo[0] && p[0] <= hi[0] && p[1] >= lo[1] && p[1] <= hi[1] && p[2] >= lo[2] && p[2] <= hi[2];
  }
  bool contains(const Aabb& b) const { return contains(b.lo) && contains(b.hi); }
  bool empty() const { return !(lo[0] <= hi[0] && lo[1] <= hi[1] && lo[2] <= hi[2]); }
};
// The common part of two boxes (empty() when they do not meet).
inline Aabb intersection(const Aabb& a, const Aabb& b) {
  Aabb c;
  for (int k = 0; k < 3; ++k) {
    c.lo[k] = std::max(a.lo[k], b.lo[k]);
    c.hi[k] = std::min(a.hi[k], b.hi[k]);
  }
  return c;
}

// A closed solid in its local frame.
class Shape {
 public:
  virtual ~Shape() = default;
  virtual ShapeKind kind() const = 0;
  // Signed distance in the local frame: < 0 inside, > 0 outside (exact for the
  // primitives; for a mesh the distance to the nearest triangle, its sign from
  // the angle-weighted pseudo-normal at the nearest point, exact for the
  // closed, consistently oriented meshes makeShape accepts).
  virtual double sdf(const Vec3d& p) const = 0;
  virtual double volume() const = 0;
  virtual double surfaceArea() const = 0;
  virtual Vec3d centroid() const = 0;           // centre of volume, local frame
  virtual Mat3d inertia(double density) const = 0;  // about the centroid, local axes
  virtual Aabb bounds() const = 0;              // local frame
  // The bounds of the shape turned by R (still about the local origin),
  // exact: bounds()'s eight corners turned (a box; the default), a sphere's
  // own, a cylinder's from its axis, a mesh's from its turned vertices.
  virtual Aabb turnedBounds(const Mat3d& R) const;
  // Surface samples (local frame) at about `spacing` apart, evenly covering
  // the surface (no holes wider than `spacing`, no clusters), with the outward
  // unit normal of each. Deterministic for given shape, spacing and clip.
  // clip (local frame), if given: only the surface within that box is
  // sampled (a static obstacle many times its tank's size needs samples only
  // near the tank): every sample lies in the box, the surface inside it is
  // covered as evenly as a whole one, and the cap of 2e7 samples counts that
  // part only. The time and memory go with the part sampled. A box holding
  // bounds() gives the unclipped samples. The primitives' clipped samples
  // are exactly their unclipped ones inside the box; a mesh's are thrown
  // anew within it (the same evenness, not the same points).
  void sample(double spacing, std::vector<Vec3d>& points, std::vector<Vec3d>& normals,
              const Aabb* clip = nullptr) const {
    if (clip && clip->contains(bounds())) clip = nullptr;
    sampleWithin(spacing, clip, points, normals);
  }

 protected:
  virtual void sampleWithin(double spacing, const Aabb* clip, std::vector<Vec3d>& points,
                            std::vector<Vec3d>& normals) const = 0;
};

// The sizes a shape may have (m, each extent: a box's sizes, a sphere's or
// cylinder's diameter and height, a scaled mesh's bounds), and the range in
// words for a message.
inline constexpr double kShapeSizeMin = 1e-6;
inline constexpr double kShapeSizeMax = 1000;
std::string shapeSizeRange();

// Builds the shape of a spec (the pose is NOT applied: it is the caller's).
// Throws eddy::Error with a clear message: a size <= 0, non-finite or
// outside [kShapeSizeMin, kShapeSizeMax]; a mesh
// file that cannot be read, is empty, has degenerate (zero-area) triangles
// only, or is not closed (an edge not shared by exactly two triangles) names
// the file and the problem.
std::unique_ptr<Shape> makeShape(const ShapeSpec& spec);

// The content hash of a file, as restart snapshots record each mesh file's
// (a restart must sample the same geometry): "fnv1a64:" followed by the
// 64-bit FNV-1a hash of the file's bytes in 16 lower-case hex digits. Throws
// eddy::Error naming the file when it cannot be read.
std::string fileContentHash(const std::string& path);
// Whether `text` has fileContentHash's form.
bool isFileContentHash(const std::string& text);

// A signed-distance grid of a shape in its local frame, for the device:
// values at the nodes origin + (i, j, k) * cell, i fastest, covering
// bounds() grown by `margin` on every side; trilinear interpolation between
// nodes. Far outside the grid a user treats the point as outside.
struct SdfGrid {
  Vec3d origin{0, 0, 0};
  double cell = 0;
  std::array<int, 3> dims{0, 0, 0};
  std::vector<float> values;
};
// clip (local frame), if given: only the part of that box is covered (a
// static obstacle much larger than its tank needs the grid only where fluid
// can be); the nodes stay on the unclipped grid's lattice. An empty
// intersection gives a grid of one node.
SdfGrid makeSdfGrid(const Shape& shape, double cell, double margin, const Aabb* clip = nullptr);

}  // namespace eddy
