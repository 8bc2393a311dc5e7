// mesh.cpp: closed triangle meshes read with Assimp (STL, OBJ, PLY, ...):
// welding, validation (empty, degenerate, open, inconsistently oriented),
// mass properties from signed tetrahedra, a BVH for the signed distance
// (sign from angle-weighted pseudo-normals) and even surface sampling.
#include "error.hpp"
#include "rng.hpp"
#include "vec.hpp"

#include <assimp/Importer.hpp>
#include <assimp/postprocess.h>
#include <assimp/scene.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <sstream>
#include <unordered_map>

namespace eddy::geom {
namespace {

using Tri = std::array<int, 3>;

// A PLY file's header against its size: Assimp allocates what the header's
// element counts claim before it reads them (a 200-byte file claiming 4e8
// vertices took 4.7 GB and then failed "File corrupted"; 2e9 faces: bad_alloc).
// Each element needs at least its scalar properties' bytes and each list's
// count (binary), or two characters per property (ASCII: a digit and a
// separator). Only the header is read; the body is left to Assimp.
void checkPlyHeader(const std::string& file, uintmax_t fileSize) {
  std::ifstream in(file, std::ios::binary);
  std::string line;
  if (!std::getline(in, line) || (line != "ply" && line != "ply\r")) return;  // not PLY
  bool binary = false;
  struct Element {
    std::string name;
    double count = 0;
    double bytes = 0;  // at least, per element
  };
  std::vector<Element> elements;
  auto typeSize = [](const std::string& t) -> double {
    if (t == "char" || t == "uchar" || t == "int8" || t == "uint8") return 1;
    if (t == "short" || t == "ushort" || t == "int16" || t == "uint16") return 2;
    if (t == "double" || t == "float64") return 8;
    return 4;  // int, uint, float and their sized names
  };
  for (int lines = 0; std::getline(in, line) && lines < 10000; ++lines) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    std::istringstream w(line);
    std::string key;
    w >> key;
    if (key == "end_header") {
      const auto pos = in.tellg();
      if (pos < 0) return;
      const double body = double(fileSize) - double(pos);
      for (const Element& e : elements)
        if (e.count * e.bytes > body) {
          std::ostringstream o;
          o << std::fixed << std::setprecision(0) << file << ": cannot read mesh: its PLY header claims " << e.count << " " << e.name
            << " elements, at least " << e.count * e.bytes << " bytes, but the file has " << body
            << " bytes after its header (truncated or corrupt)";
          throw Error(o.str());
        }
      return;
    }
    if (key == "format") {
      std::string f;
      w >> f;
      binary = f.rfind("binary", 0) == 0;
    } else if (key == "element") {
      Element e;
      w >> e.name >> e.count;
      if (!w || !(e.count >= 0)) return;  // Assimp says what is wrong
      elements.push_back(e);
    } else if (key == "property" && !elements.empty()) {
      std::string type;
      w >> type;
      if (type == "list") w >> type;  // the count's type; a list may hold no items
      elements.back().bytes += binary ? typeSize(type) : 2;
    }
  }
}

// A triangle soup from the file: every triangle of every mesh, with the node
// transforms applied, times `scale`.
std::vector<Vec3d> readTriangles(const std::string& file, const Vec3d& scale) {
  std::error_code ec;
  if (!std::filesystem::exists(file, ec)) throw Error(file + ": cannot read mesh: no such file");
  // A folder, device or FIFO is no mesh (Assimp would wait forever on a FIFO).
  if (!std::filesystem::is_regular_file(file, ec)) throw Error(file + ": cannot read mesh: not a regular file");
  const uintmax_t size = std::filesystem::file_size(file, ec);
  if (size == 0) throw Error(file + ": mesh is empty (an empty file, no triangles)");
  checkPlyHeader(file, size);
  Assimp::Importer importer;
  const aiScene* scene = importer.ReadFile(file, aiProcess_Triangulate | aiProcess_JoinIdenticalVertices);
  if (!scene) throw Error(file + ": cannot read mesh: " + importer.GetErrorString());
  std::vector<Vec3d> soup;
  struct Item {
    const aiNode* node;
    aiMatrix4x4 m;
  };
  std::vector<Item> stack;
  if (scene->mRootNode) stack.push_back({scene->mRootNode, scene->mRootNode->mTransformation});
  while (!stack.empty()) {
    const Item it = stack.back();
    stack.pop_back();
    for (unsigned c = 0; c < it.node->mNumChildren; ++c)
      stack.push_back({it.node->mChildren[c], it.m * it.node->mChildren[c]->mTransformation});
    for (unsigned k = 0; k < it.node->mNumMeshes; ++k) {
      const aiMesh* mesh = scene->mMeshes[it.node->mMeshes[k]];
      for (unsigned f = 0; f < mesh->mNumFaces; ++f) {
        const aiFace& face = mesh->mFaces[f];
        if (face.mNumIndices != 3) continue;  // points and lines
        for (int v = 0; v < 3; ++v) {
          const aiVector3D p = it.m * mesh->mVertices[face.mIndices[v]];
          soup.push_back({scale[0] * double(p.x), scale[1] * double(p.y), scale[2] * double(p.z)});
        }
      }
    }
  }
  return soup;
}

// Ericson, "Real-Time Collision Detection" (2005), 5.1.5: the point of
// triangle abc closest to p, and the feature it lies on: 0 the face, 1..3 the
// vertex a, b, c, 4..6 the edge ab, bc, ca.
Vec3d closestOnTriangle(const Vec3d& p, const Vec3d& a, const Vec3d& b, const Vec3d& c, int& feature) {
  const Vec3d ab = b - a, ac = c - a, ap = p - a;
  const double d1 = dot(ab, ap), d2 = dot(ac, ap);
  if (d1 <= 0 && d2 <= 0) { feature = 1; return a; }
  const Vec3d bp = p - b;
  const double d3 = dot(ab, bp), d4 = dot(ac, bp);
  if (d3 >= 0 && d4 <= d3) { feature = 2; return b; }
  const double vc = d1 * d4 - d3 * d2;
  if (vc <= 0 && d1 >= 0 && d3 <= 0) {
    feature = 4;
    return a + (d1 / (d1 - d3)) * ab;
  }
  const Vec3d cp = p - c;
  const double d5 = dot(ab, cp), d6 = dot(ac, cp);
  if (d6 >= 0 && d5 <= d6) { feature = 3; return c; }
  const double vb = d5 * d2 - d1 * d6;
  if (vb <= 0 && d2 >= 0 && d6 <= 0) {
    feature = 6;
    return a + (d2 / (d2 - d6)) * ac;
  }
  const double va = d3 * d6 - d5 * d4;
  if (va <= 0 && (d4 - d3) >= 0 && (d5 - d6) >= 0) {
    feature = 5;
    return b + ((d4 - d3) / ((d4 - d3) + (d5 - d6))) * (c - b);
  }
  feature = 0;
  const double denom = 1.0 / (va + vb + vc);
  return a + (vb * denom) * ab + (vc * denom) * ac;
}

double boxDistance2(const Aabb& b, const Vec3d& p) {
  double d2 = 0;
  for (int k = 0; k < 3; ++k) {
    const double d = std::max({b.lo[k] - p[k], 0.0, p[k] - b.hi[k]});
    d2 += d * d;
  }
  return d2;
}

// Points in cells of one radius over a box, for "is any point closer than
// the radius": a query looks at the 27 cells around it, each holding a
// point or two of an even sampling. The cells' list heads are a dense
// array while the box has at most kDenseCells cells, else a hash map of
// the cells that hold points (a mesh many times the spacing's size: a
// dense grid of coarser cells would put thousands of points in each cell
// and make the sampling quadratic).
class PointGrid {
 public:
  static constexpr size_t kDenseCells = size_t(1) << 23;  // 32 MB of list heads
  PointGrid(const Aabb& box, double radius) : lo_(box.lo) {
    const double ext = std::max({box.hi[0] - box.lo[0], box.hi[1] - box.lo[1], box.hi[2] - box.lo[2]});
    cell_ = std::max(radius, ext / double(kMaxCells - 1));  // cell coordinates fit 21 bits
    size_t cells = 1;
    for (int k = 0; k < 3; ++k) {
      dims_[k] = int((box.hi[k] - box.lo[k]) / cell_) + 1;
      cells *= size_t(dims_[k]);
    }
    dense_ = cells <= kDenseCells;
    if (dense_) head_.assign(cells, -1);
  }
  void add(const Vec3d& p) {
    int c[3];
    cellOf(p, c);
    int& h = dense_ ? head_[denseIndex(c[0], c[1], c[2])] : map_.try_emplace(hashKey(c[0], c[1], c[2]), -1).first->second;
    next_.push_back(h);
    h = int(pts_.size());
    pts_.push_back(p);
  }
  // No point closer than `radius` (<= the cell size).
  bool free(const Vec3d& p, double radius) const {
    int c[3];
    cellOf(p, c);
    for (int z = std::max(0, c[2] - 1); z <= std::min(dims_[2] - 1, c[2] + 1); ++z)
      for (int y = std::max(0, c[1] - 1); y <= std::min(dims_[1] - 1, c[1] + 1); ++y)
        for (int x = std::max(0, c[0] - 1); x <= std::min(dims_[0] - 1, c[0] + 1); ++x)
          for (int i = headOf(x, y, z); i >= 0; i = next_[size_t(i)]) {
            const Vec3d d = p - pts_[size_t(i)];
            if (dot(d, d) < radius * radius) return false;
          }
    return true;
  }

 private:
  static constexpr int kMaxCells = 1 << 21;
  void cellOf(const Vec3d& p, int* c) const {
    for (int k = 0; k < 3; ++k) c[k] = std::clamp(int((p[k] - lo_[k]) / cell_), 0, dims_[k] - 1);
  }
  size_t denseIndex(int x, int y, int z) const {
    return (size_t(z) * size_t(dims_[1]) + size_t(y)) * size_t(dims_[0]) + size_t(x);
  }
  static uint64_t hashKey(int x, int y, int z) {  // 21 bits per coordinate
    return (uint64_t(z) << 42) | (uint64_t(y) << 21) | uint64_t(x);
  }
  int headOf(int x, int y, int z) const {
    if (dense_) return head_[denseIndex(x, y, z)];
    const auto it = map_.find(hashKey(x, y, z));
    return it == map_.end() ? -1 : it->second;
  }
  Vec3d lo_;
  double cell_ = 0;
  int dims_[3] = {1, 1, 1};
  bool dense_ = true;
  std::vector<int> head_, next_;
  std::unordered_map<uint64_t, int> map_;
  std::vector<Vec3d> pts_;
};

class Mesh final : public Shape, public HintedSdf {
 public:
  Mesh(const std::string& file, const Vec3d& scale) : file_(file) {
    std::vector<Vec3d> soup = readTriangles(file, scale);
    // Its scaled extent first: vertex merging and the closedness check take
    // their tolerance from it, so a mesh scaled past the range would be
    // blamed for defects it does not have.
    for (int a = 0; a < 3; ++a) {
      double lo = 1e300, hi = -1e300;
      for (const Vec3d& p : soup) lo = std::min(lo, p[a]), hi = std::max(hi, p[a]);
      if (!soup.empty() && hi - lo > kShapeSizeMax) {
        std::ostringstream o;
        o << file << ": scaled by " << scale[a] << ", the mesh is " << (hi - lo) << " m across in "
          << "xyz"[a] << ", out of range (" << shapeSizeRange() << ")";
        throw Error(o.str());
      }
    }
    build(std::move(soup));
  }
  ShapeKind kind() const override { return ShapeKind::Mesh; }
  double sdf(const Vec3d& p) const override {
    int hint = -1;
    return sdfNear(p, hint);
  }
  double sdfNear(const Vec3d& p, int& hint) const override;
  double volume() const override { return volume_; }
  double surfaceArea() const override { return area_; }
  Vec3d centroid() const override { return centroid_; }
  Mat3d inertia(double density) const override {
    Mat3d m = inertia_;
    for (double& x : m) x *= density;
    return m;
  }
  Aabb bounds() const override { return bounds_; }
  Aabb turnedBounds(const Mat3d& R) const override {
    Aabb w;
    w.lo = {1e300, 1e300, 1e300};
    w.hi = {-1e300, -1e300, -1e300};
    for (const Vec3d& v : v_) {
      const Vec3d p = rotate(R, v);
      for (int a = 0; a < 3; ++a) w.lo[a] = std::min(w.lo[a], p[a]), w.hi[a] = std::max(w.hi[a], p[a]);
    }
    return w;
  }

 protected:
  void sampleWithin(double spacing, const Aabb* clip, std::vector<Vec3d>& points,
                    std::vector<Vec3d>& normals) const override;

 private:
  struct Node {
    Aabb box;
    int left = -1, right = -1;  // children, or -1 for a leaf
    int first = 0, count = 0;   // leaf: order_[first, first + count)
  };
  [[noreturn]] void fail(const std::string& why) const { throw Error(file_ + ": " + why); }
  void build(const std::vector<Vec3d>& soup);
  int buildNode(int first, int count, const std::vector<Vec3d>& centres);
  Vec3d faceNormal(int t) const { return faceNormal_[size_t(t)]; }

  std::string file_;
  std::vector<Vec3d> v_;
  std::vector<Tri> t_;
  std::vector<Vec3d> faceNormal_;            // unit
  std::vector<std::array<int, 3>> triEdge_;  // edge ids of ab, bc, ca
  std::vector<std::array<int, 2>> edgeVerts_;
  std::vector<std::array<int, 2>> edgeTris_;
  std::vector<Vec3d> edgeNormal_;    // sum of the two face normals (pseudo-normal)
  std::vector<Vec3d> vertexNormal_;  // angle-weighted sum of face normals
  std::vector<Node> nodes_;
  std::vector<int> order_;
  double volume_ = 0, area_ = 0;
  Vec3d centroid_{0, 0, 0};
  Mat3d inertia_{};  // density 1, about the centroid
  Aabb bounds_;
};

void Mesh::build(const std::vector<Vec3d>& soup) {
  const size_t nIn = soup.size() / 3;
  if (nIn == 0) fail("mesh is empty (no triangles)");
  for (size_t i = 0; i < soup.size(); ++i)
    if (!std::isfinite(soup[i][0]) || !std::isfinite(soup[i][1]) || !std::isfinite(soup[i][2]))
      fail("triangle " + std::to_string(i / 3 + 1) + " of " + std::to_string(nIn) +
           " has a non-finite vertex coordinate (NaN or infinite)");
  // Weld vertices closer than 1e-7 of the bounding box diagonal (STL stores
  // every triangle's own corners).
  for (int k = 0; k < 3; ++k) {
    bounds_.lo[k] = bounds_.hi[k] = soup[0][k];
    for (const auto& p : soup) {
      bounds_.lo[k] = std::min(bounds_.lo[k], p[k]);
      bounds_.hi[k] = std::max(bounds_.hi[k], p[k]);
    }
  }
  const double diag = norm(bounds_.hi - bounds_.lo);
  if (!(diag > 0) || !std::isfinite(diag)) fail("all " + std::to_string(nIn) + " triangles are degenerate (zero area)");
  const double tol = 1e-7 * diag;
  std::unordered_map<uint64_t, std::vector<int>> cells;
  auto cellKey = [&](int64_t x, int64_t y, int64_t z) {
    return (uint64_t(x) * 73856093u) ^ (uint64_t(y) * 19349663u) ^ (uint64_t(z) * 83492791u);
  };
  std::vector<int> index(soup.size());
  for (size_t i = 0; i < soup.size(); ++i) {
    const Vec3d& p = soup[i];
    int64_t c[3];
    for (int k = 0; k < 3; ++k) c[k] = int64_t(std::floor((p[k] - bounds_.lo[k]) / tol));
    int found = -1;
    for (int dz = -1; dz <= 1 && found < 0; ++dz)
      for (int dy = -1; dy <= 1 && found < 0; ++dy)
        for (int dx = -1; dx <= 1 && found < 0; ++dx) {
          const auto it = cells.find(cellKey(c[0] + dx, c[1] + dy, c[2] + dz));
          if (it == cells.end()) continue;
          for (int v : it->second)
            if (norm(v_[size_t(v)] - p) <= tol) {
              found = v;
              break;
            }
        }
    if (found < 0) {
      found = int(v_.size());
      v_.push_back(p);
      cells[cellKey(c[0], c[1], c[2])].push_back(found);
    }
    index[i] = found;
  }
  // Drop degenerate triangles (two corners welded, or zero area).
  const double minArea = 1e-12 * diag * diag;
  size_t dropped = 0;
  for (size_t i = 0; i < nIn; ++i) {
    const Tri t{index[3 * i], index[3 * i + 1], index[3 * i + 2]};
    const double a = 0.5 * norm(cross(v_[size_t(t[1])] - v_[size_t(t[0])], v_[size_t(t[2])] - v_[size_t(t[0])]));
    if (t[0] == t[1] || t[1] == t[2] || t[2] == t[0] || !(a > minArea)) {
      ++dropped;
      continue;
    }
    t_.push_back(t);
  }
  if (t_.empty()) fail("all " + std::to_string(nIn) + " triangles are degenerate (zero area)");
  const std::string afterDrop =
      dropped ? " (after dropping " + std::to_string(dropped) + " degenerate triangles)" : std::string();
  // Edges: each must be shared by exactly two triangles, in opposite directions.
  std::unordered_map<uint64_t, int> edgeId;
  std::vector<int> edgeUses, edgeForward;
  triEdge_.resize(t_.size());
  for (size_t i = 0; i < t_.size(); ++i)
    for (int e = 0; e < 3; ++e) {
      const int a = t_[i][size_t(e)], b = t_[i][size_t((e + 1) % 3)];
      const uint64_t key = (uint64_t(std::min(a, b)) << 32) | uint64_t(std::max(a, b));
      auto [it, fresh] = edgeId.try_emplace(key, int(edgeVerts_.size()));
      if (fresh) {
        edgeVerts_.push_back({std::min(a, b), std::max(a, b)});
        edgeTris_.push_back({int(i), -1});
        edgeUses.push_back(0);
        edgeForward.push_back(0);
      } else if (edgeTris_[size_t(it->second)][1] < 0) {
        edgeTris_[size_t(it->second)][1] = int(i);
      }
      edgeUses[size_t(it->second)] += 1;
      edgeForward[size_t(it->second)] += a < b;
      triEdge_[i][size_t(e)] = it->second;
    }
  size_t open = 0, flipped = 0;
  for (size_t e = 0; e < edgeUses.size(); ++e) {
    if (edgeUses[e] != 2) ++open;
    else if (edgeForward[e] != 1) ++flipped;
  }
  if (open)
    fail("mesh is not closed: " + std::to_string(open) + " of " + std::to_string(edgeUses.size()) +
         " edges are not shared by exactly two triangles (an open boundary or a non-manifold edge)" + afterDrop);
  if (flipped)
    fail("mesh is not consistently oriented: " + std::to_string(flipped) +
         " edges are traversed in the same direction by both of their triangles" + afterDrop);
  // Mass properties from the signed tetrahedra (origin, a, b, c): volume
  // det/6, first moment V (a+b+c)/4, second moment
  // V/20 (a a^T + b b^T + c c^T + s s^T) with s = a+b+c (Tonon 2004,
  // "Explicit exact formulas for the 3-D tetrahedron inertia tensor").
  auto massProps = [&] {
    double vol = 0, area = 0;
    Vec3d m1{0, 0, 0};
    double m2[3][3] = {};
    for (const Tri& t : t_) {
      const Vec3d &a = v_[size_t(t[0])], &b = v_[size_t(t[1])], &c = v_[size_t(t[2])];
      const double v = dot(a, cross(b, c)) / 6;
      area += 0.5 * norm(cross(b - a, c - a));
      vol += v;
      const Vec3d s = a + b + c;
      m1 = m1 + (v / 4) * s;
      for (int k = 0; k < 3; ++k)
        for (int l = 0; l < 3; ++l) m2[k][l] += v / 20 * (a[k] * a[l] + b[k] * b[l] + c[k] * c[l] + s[k] * s[l]);
    }
    volume_ = vol;
    area_ = area;
    centroid_ = (1.0 / vol) * m1;
    double cov[3][3];
    for (int k = 0; k < 3; ++k)
      for (int l = 0; l < 3; ++l) cov[k][l] = m2[k][l] - vol * centroid_[k] * centroid_[l];
    const double tr = cov[0][0] + cov[1][1] + cov[2][2];
    for (int k = 0; k < 3; ++k)
      for (int l = 0; l < 3; ++l) inertia_[size_t(3 * k + l)] = (k == l ? tr : 0.0) - cov[k][l];
  };
  massProps();
  if (!(std::abs(volume_) > 1e-12 * diag * diag * diag)) fail("mesh encloses no volume");
  if (volume_ < 0) {  // wound inwards: turn every triangle over
    for (Tri& t : t_) std::swap(t[1], t[2]);
    for (auto& te : triEdge_) te = {te[2], te[1], te[0]};
    massProps();
  }
  // Pseudo-normals (Baerentzen & Aanaes 2005, "Signed distance computation
  // using the angle weighted pseudonormal", IEEE TVCG 11(3):243-253): the
  // sign of (p - q) . n at the closest point q decides inside / outside.
  faceNormal_.resize(t_.size());
  vertexNormal_.assign(v_.size(), {0, 0, 0});
  for (size_t i = 0; i < t_.size(); ++i) {
    const Tri& t = t_[i];
    faceNormal_[i] = normalized(cross(v_[size_t(t[1])] - v_[size_t(t[0])], v_[size_t(t[2])] - v_[size_t(t[0])]));
    for (int k = 0; k < 3; ++k) {
      const Vec3d& p = v_[size_t(t[size_t(k)])];
      const Vec3d e1 = normalized(v_[size_t(t[size_t((k + 1) % 3)])] - p);
      const Vec3d e2 = normalized(v_[size_t(t[size_t((k + 2) % 3)])] - p);
      const double angle = std::acos(std::clamp(dot(e1, e2), -1.0, 1.0));
      vertexNormal_[size_t(t[size_t(k)])] = vertexNormal_[size_t(t[size_t(k)])] + angle * faceNormal_[i];
    }
  }
  edgeNormal_.resize(edgeVerts_.size());
  for (size_t e = 0; e < edgeVerts_.size(); ++e)
    edgeNormal_[e] = faceNormal_[size_t(edgeTris_[e][0])] + faceNormal_[size_t(edgeTris_[e][1])];
  // Bounding volume hierarchy, median split along the longest axis.
  std::vector<Vec3d> centres(t_.size());
  for (size_t i = 0; i < t_.size(); ++i)
    centres[i] = (1.0 / 3) * (v_[size_t(t_[i][0])] + v_[size_t(t_[i][1])] + v_[size_t(t_[i][2])]);
  order_.resize(t_.size());
  for (size_t i = 0; i < t_.size(); ++i) order_[i] = int(i);
  nodes_.reserve(2 * t_.size());
  buildNode(0, int(t_.size()), centres);
}

int Mesh::buildNode(int first, int count, const std::vector<Vec3d>& centres) {
  const int id = int(nodes_.size());
  nodes_.push_back({});
  Aabb box{v_[size_t(t_[size_t(order_[size_t(first)])][0])], v_[size_t(t_[size_t(order_[size_t(first)])][0])]};
  Aabb cbox{centres[size_t(order_[size_t(first)])], centres[size_t(order_[size_t(first)])]};
  for (int i = first; i < first + count; ++i) {
    const int t = order_[size_t(i)];
    for (int k = 0; k < 3; ++k) {
      for (int c = 0; c < 3; ++c) {
        box.lo[k] = std::min(box.lo[k], v_[size_t(t_[size_t(t)][size_t(c)])][k]);
        box.hi[k] = std::max(box.hi[k], v_[size_t(t_[size_t(t)][size_t(c)])][k]);
      }
      cbox.lo[k] = std::min(cbox.lo[k], centres[size_t(t)][k]);
      cbox.hi[k] = std::max(cbox.hi[k], centres[size_t(t)][k]);
    }
  }
  nodes_[size_t(id)].box = box;
  if (count <= 4) {
    nodes_[size_t(id)].first = first;
    nodes_[size_t(id)].count = count;
    return id;
  }
  int axis = 0;
  for (int k = 1; k < 3; ++k)
    if (cbox.hi[k] - cbox.lo[k] > cbox.hi[axis] - cbox.lo[axis]) axis = k;
  const int half = count / 2;
  std::nth_element(order_.begin() + first, order_.begin() + first + half, order_.begin() + first + count,
                   [&](int a, int b) {
                     return centres[size_t(a)][axis] < centres[size_t(b)][axis] ||
                            (centres[size_t(a)][axis] == centres[size_t(b)][axis] && a < b);
                   });
  const int left = buildNode(first, half, centres);
  const int right = buildNode(first + half, count - half, centres);
  nodes_[size_t(id)].left = left;
  nodes_[size_t(id)].right = right;
  return id;
}

double Mesh::sdfNear(const Vec3d& p, int& hint) const {
  double best = INFINITY;
  int bestT = -1;
  Vec3d bestQ{0, 0, 0}, bestN{0, 0, 0};
  auto visit = [&](int t) {
    const Tri& tri = t_[size_t(t)];
    int feature = 0;
    const Vec3d q = closestOnTriangle(p, v_[size_t(tri[0])], v_[size_t(tri[1])], v_[size_t(tri[2])], feature);
    const Vec3d d = p - q;
    const double d2 = dot(d, d);
    if (d2 < best) {
      best = d2;
      bestT = t;
      bestQ = q;
      bestN = feature == 0   ? faceNormal_[size_t(t)]
              : feature <= 3 ? vertexNormal_[size_t(tri[size_t(feature - 1)])]
                             : edgeNormal_[size_t(triEdge_[size_t(t)][size_t(feature - 4)])];
    }
  };
  // The hint's distance bounds the search: boxes farther away are skipped.
  if (hint >= 0 && size_t(hint) < t_.size()) visit(hint);
  int stack[128];
  int top = 0;
  stack[top++] = 0;
  while (top > 0) {
    const Node& n = nodes_[size_t(stack[--top])];
    if (boxDistance2(n.box, p) >= best) continue;
    if (n.left < 0) {
      for (int i = n.first; i < n.first + n.count; ++i) visit(order_[size_t(i)]);
      continue;
    }
    const int a = n.left, b = n.right;
    const double da = boxDistance2(nodes_[size_t(a)].box, p), db = boxDistance2(nodes_[size_t(b)].box, p);
    // The nearer child is searched first (pushed last).
    if (da < db) {
      stack[top++] = b;
      stack[top++] = a;
    } else {
      stack[top++] = a;
      stack[top++] = b;
    }
  }
  hint = bestT;
  const double dist = std::sqrt(best);
  return dot(p - bestQ, bestN) < 0 ? -dist : dist;
}

// The part of triangle (a, b, c) within `box`, a convex polygon of at most
// 9 vertices written to `out` (Sutherland-Hodgman against the box's six
// planes); returns the vertex count, below 3 when they do not meet.
int clipTriangle(const Vec3d& a, const Vec3d& b, const Vec3d& c, const Aabb& box, Vec3d* out) {
  Vec3d buf[2][12];
  buf[0][0] = a;
  buf[0][1] = b;
  buf[0][2] = c;
  int m = 3, cur = 0;
  for (int k = 0; k < 3 && m >= 3; ++k)
    for (int upper = 0; upper < 2 && m >= 3; ++upper) {
      const double plane = upper ? box.hi[k] : box.lo[k];
      auto inside = [&](const Vec3d& p) { return upper ? p[k] <= plane : p[k] >= plane; };
      const Vec3d* in = buf[cur];
      Vec3d* res = buf[1 - cur];
      int r = 0;
      for (int i = 0; i < m; ++i) {
        const Vec3d &s = in[(i + m - 1) % m], &e = in[i];
        const bool sIn = inside(s), eIn = inside(e);
        if (sIn != eIn) {  // the edge crosses the plane
          Vec3d x = s + ((plane - s[k]) / (e[k] - s[k])) * (e - s);
          x[k] = plane;
          res[r++] = x;
        }
        if (eIn) res[r++] = e;
      }
      m = r;
      cur = 1 - cur;
    }
  for (int i = 0; i < m; ++i) out[i] = buf[cur][i];
  return m;
}

// Even samples: points on sharp edges (dihedral angle over 30 degrees) and
// corners first, evenly spaced along each edge; then a dense random set of
// candidates (12 per spacing^2 of area, by area) thinned in random order
// so that no two samples are closer than r (Poisson-disk sampling by dart
// throwing over a fixed candidate set). r starts at 0.835 spacing (the
// random sequential adsorption limit, 0.547 disk coverage, gives one sample
// per spacing^2) and is corrected twice so that the count matches
// area / spacing^2. Seeded: the same samples on every call. Clipped: the
// candidates are thrown on each triangle's part within the box only (a
// triangle that crosses it is clipped to a polygon, sampled as a fan), the
// fixed points and the area (the count's target) are those within it.
constexpr double kCandidates = 12;  // candidates per spacing^2 of area (worst hole 0.92 spacing)
void Mesh::sampleWithin(double spacing, const Aabb* clip, std::vector<Vec3d>& points,
                        std::vector<Vec3d>& normals) const {
  // fn(a, b, c) for each piece of triangle i to sample: the triangle itself,
  // or the fan of its part within the clip box.
  auto pieces = [&](size_t i, auto&& fn) {
    const Vec3d &a = v_[size_t(t_[i][0])], &b = v_[size_t(t_[i][1])], &c = v_[size_t(t_[i][2])];
    if (clip) {
      Aabb tb;
      for (int k = 0; k < 3; ++k) {
        tb.lo[k] = std::min({a[k], b[k], c[k]});
        tb.hi[k] = std::max({a[k], b[k], c[k]});
      }
      if (intersection(tb, *clip).empty()) return;
      if (!clip->contains(tb)) {
        Vec3d poly[12];
        const int m = clipTriangle(a, b, c, *clip, poly);
        for (int k = 1; k + 1 < m; ++k) fn(poly[0], poly[k], poly[k + 1]);
        return;
      }
    }
    fn(a, b, c);
  };
  double area = area_;
  if (clip) {
    area = 0;
    for (size_t i = 0; i < t_.size(); ++i)
      pieces(i, [&](const Vec3d& a, const Vec3d& b, const Vec3d& c) { area += 0.5 * norm(cross(b - a, c - a)); });
  }
  checkSampleSpacing(spacing, area);
  points.clear();
  normals.clear();
  const Aabb box = clip ? intersection(bounds_, *clip) : bounds_;
  if (box.empty() || !(area > 0)) return;
  auto within = [&](const Vec3d& p) { return !clip || clip->contains(p); };
  const double cosSharp = std::cos(30.0 * 3.14159265358979323846 / 180.0);
  std::vector<Vec3d> edgeP, edgeN;
  std::vector<char> corner(v_.size(), 0);
  for (size_t e = 0; e < edgeVerts_.size(); ++e) {
    const Vec3d n1 = faceNormal_[size_t(edgeTris_[e][0])], n2 = faceNormal_[size_t(edgeTris_[e][1])];
    if (dot(n1, n2) >= cosSharp) continue;
    const Vec3d a = v_[size_t(edgeVerts_[e][0])], b = v_[size_t(edgeVerts_[e][1])];
    const long k = std::max(1L, std::lround(norm(b - a) / spacing));
    for (long j = 1; j < k; ++j) {
      const Vec3d p = a + (double(j) / double(k)) * (b - a);
      if (!within(p)) continue;
      edgeP.push_back(p);
      edgeN.push_back(normalized(n1 + n2));
    }
    corner[size_t(edgeVerts_[e][0])] = corner[size_t(edgeVerts_[e][1])] = 1;
  }
  // Corners, then edge points, none closer than 0.7 spacing to another (two
  // edges meeting at an acute angle would otherwise crowd their points).
  std::vector<Vec3d> fixedP, fixedN;
  {
    const double rf = 0.7 * spacing;
    PointGrid grid(box, rf);
    auto take = [&](const Vec3d& p, const Vec3d& n) {
      if (!grid.free(p, rf)) return;
      grid.add(p);
      fixedP.push_back(p);
      fixedN.push_back(n);
    };
    for (size_t v = 0; v < v_.size(); ++v)
      if (corner[v] && within(v_[v])) take(v_[v], normalized(vertexNormal_[v]));
    for (size_t i = 0; i < edgeP.size(); ++i) take(edgeP[i], edgeN[i]);
  }
  // Candidates, shuffled.
  Rng rng(0x9e3779b97f4a7c15ull);
  const double perArea = kCandidates / (spacing * spacing);
  std::vector<Vec3d> cand;
  std::vector<int> candTri;
  for (size_t i = 0; i < t_.size(); ++i)
    pieces(i, [&](const Vec3d& a, const Vec3d& b, const Vec3d& c) {
      const double expect = 0.5 * norm(cross(b - a, c - a)) * perArea;
      long n = long(expect);
      if (rng.uniform() < expect - double(n)) ++n;
      for (long j = 0; j < n; ++j) {
        double u = rng.uniform(), v = rng.uniform();
        if (u + v > 1) {
          u = 1 - u;
          v = 1 - v;
        }
        cand.push_back(a + u * (b - a) + v * (c - a));
        candTri.push_back(int(i));
      }
    });
  std::vector<int> perm(cand.size());
  for (size_t i = 0; i < perm.size(); ++i) perm[i] = int(i);
  for (size_t i = perm.size(); i > 1; --i) std::swap(perm[i - 1], perm[size_t(rng.uniform() * double(i))]);
  // Dart throwing with radius r.
  const double target = area / (spacing * spacing);
  double r = 0.835 * spacing;
  std::vector<int> accepted;
  for (int pass = 0; pass < 3; ++pass) {
    PointGrid grid(box, r);
    for (const Vec3d& p : fixedP) grid.add(p);
    accepted.clear();
    for (int i : perm)
      if (grid.free(cand[size_t(i)], r)) {
        grid.add(cand[size_t(i)]);
        accepted.push_back(i);
      }
    if (pass < 2 && double(accepted.size()) > 0) {
      // count ~ fixed + C / r^2 for the surface part.
      const double want = std::max(1.0, target - double(fixedP.size()));
      r *= std::sqrt(double(accepted.size()) / want);
      r = std::clamp(r, 0.6 * spacing, spacing);
    }
  }
  points = fixedP;
  normals = fixedN;
  for (int i : accepted) {
    points.push_back(cand[size_t(i)]);
    normals.push_back(faceNormal_[size_t(candTri[size_t(i)])]);
  }
}

}  // namespace

std::unique_ptr<Shape> makeMesh(const std::string& file, const Vec3d& scale) {
  return std::make_unique<Mesh>(file, scale);
}

}  // namespace eddy::geom
