#include "boundary.hpp"

#include "io.hpp"
#include "particles.hpp"
#include "shape_spec_io.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <optional>

namespace eddy {

namespace {

template <class T>
std::vector<T> readBuf(cl::CommandQueue& q, const cl::Buffer& b, size_t n) {
  std::vector<T> out(n);
  if (n) q.enqueueReadBuffer(b, CL_TRUE, 0, n * sizeof(T), out.data());
  return out;
}

cl_float4 uintBits4(uint32_t x, uint32_t y, uint32_t z, uint32_t w) {
  const uint32_t u[4] = {x, y, z, w};
  cl_float4 f;
  std::memcpy(&f, u, sizeof f);
  return f;
}

// The EDDY_SOLID_SHAPE word of a solid (eddy_shared.h): sizes and kind.
cl_float4 solidShapeRecord(const SphSolidSamples& so) {
  cl_float4 f = makeFloat4(0, 0, 0, 0);
  uint32_t kind = EDDY_SOLID_KIND_GRID;
  switch (so.kind) {
    case ShapeKind::Box:
      kind = EDDY_SOLID_KIND_BOX;
      f = makeFloat4(0.5 * so.size[0], 0.5 * so.size[1], 0.5 * so.size[2]);
      break;
    case ShapeKind::Sphere:
      kind = EDDY_SOLID_KIND_SPHERE;
      f = makeFloat4(0.5 * so.size[0], 0, 0);
      break;
    case ShapeKind::Cylinder:
      kind = EDDY_SOLID_KIND_CYLINDER;
      f = makeFloat4(0.5 * so.size[0], 0.5 * so.size[1], 0);
      break;
    case ShapeKind::Mesh:
      break;
  }
  std::memcpy(&f.s[3], &kind, sizeof kind);
  return f;
}

// A static solid only matters within the fluid's reach of the tank: its
// samples farther than `margin` outside the tank are dropped (with their
// normals), and its SDF grid need only cover the tank grown by `margin`
// (tankInFrame). A solid many times the tank's size, partly inside it,
// would otherwise hold millions of boundary particles no fluid ever sees
// and a grid of minutes' work.
void keepWithinReach(const Pose& pose, const SphTankWalls& walls, double margin, std::vector<Vec3d>& local,
                     std::vector<Vec3d>& normals) {
  const Mat3d R = rotationMatrix(pose.rotationDeg);
  auto inReach = [&](const Vec3d& l) {
    const Vec3d w = poseToWorld(pose, R, l);
    for (int a = 0; a < 3; ++a)
      if (!(w[a] >= -margin && w[a] <= walls.tank[a] + margin)) return false;
    return true;
  };
  size_t kept = 0;
  for (size_t k = 0; k < local.size(); ++k)
    if (inReach(local[k])) {
      local[kept] = local[k];
      if (k < normals.size()) normals[kept] = normals[k];
      ++kept;
    }
  local.resize(kept);
  local.shrink_to_fit();
  if (normals.size() > kept) normals.resize(kept);
}

// The tank grown by `margin`, as a box in the frame of `pose`.
Aabb tankInFrame(const Pose& pose, const SphTankWalls& walls, double margin) {
  const Mat3d R = rotationMatrix(pose.rotationDeg);
  Aabb box{{1e300, 1e300, 1e300}, {-1e300, -1e300, -1e300}};
  for (int k = 0; k < 8; ++k) {
    const Vec3d l = poseToLocal(pose, R,
                                {(k & 1) ? walls.tank[0] + margin : -margin, (k & 2) ? walls.tank[1] + margin : -margin,
                                 (k & 4) ? walls.tank[2] + margin : -margin});
    for (int a = 0; a < 3; ++a) {
      box.lo[a] = std::min(box.lo[a], l[a]);
      box.hi[a] = std::max(box.hi[a], l[a]);
    }
  }
  return box;
}

}  // namespace

Vec3d poseApply(const Pose& pose, const Vec3d& l) {
  return poseToWorld(pose, rotationMatrix(pose.rotationDeg), l);
}

double boundaryInsetOf(double inset, double halfThickness) {
  return std::max(0.0, std::min(inset, kBoundaryInsetThicknessFraction * halfThickness));
}

int boundaryInsetExtents(ShapeKind kind) {
  return kind == ShapeKind::Box ? 3 : kind == ShapeKind::Cylinder ? 2 : kind == ShapeKind::Sphere ? 1 : 0;
}

SphSolidSamples sampleSolid(const SphSolid& solid, double spacing, double sdfCell, double inset,
                            const SphTankWalls* walls) {
  if (!std::isfinite(inset) || inset < 0)
    throw Error("obstacle " + shapeKindName(solid.spec.kind) + ": the boundary inset must be finite and >= 0 (got " +
                formatNumber(inset) + " m)");
  const auto shape = makeShape(solid.spec);
  SphSolidSamples s;
  std::vector<Vec3d> normals;
  // A static solid only matters within the fluid's reach of the tank
  // (keepWithinReach): it is sampled only within the box around that
  // region in its frame (a mesh's samples also within the inset's reach of
  // it, as they move inward below). Bodies move: they keep all of theirs.
  const bool clipped = walls && solid.body < 0;
  const double margin = clipped ? walls->reach + 2 * spacing + 2 * sdfCell : 0;
  const double reach = 2 * std::sqrt(3.0) * inset;  // a mesh sample's inward move, at most
  const bool isMesh = solid.spec.kind == ShapeKind::Mesh;
  std::optional<Aabb> tankBox, meshBox;  // the region in the solid's frame (the SDF grid's too)
  if (clipped) {
    tankBox = tankInFrame(solid.spec.pose, *walls, margin);
    if (isMesh) meshBox = tankInFrame(solid.spec.pose, *walls, margin + reach);
  }
  const Aabb* within = meshBox ? &*meshBox : tankBox ? &*tankBox : nullptr;
  if (isMesh || inset == 0) {
    shape->sample(spacing, s.local, normals, within);
  } else {
    // A primitive inset by d is the same primitive d smaller on every side
    // (box, sphere, cylinder): sampled directly at `spacing`, so the inset
    // surface is as evenly covered as the geometric one. Each extent is
    // inset by boundaryInsetOf(inset, its half), which leaves at least half
    // of it, and never less than a shape may be (kShapeSizeMin: a solid of
    // 1.5e-6 m passed the check, then failed here naming half its size).
    ShapeSpec in = solid.spec;
    for (int a = 0; a < boundaryInsetExtents(solid.spec.kind); ++a)
      in.size[a] = std::max(kShapeSizeMin, in.size[a] - 2 * boundaryInsetOf(inset, 0.5 * in.size[a]));
    makeShape(in)->sample(spacing, s.local, normals, within);
  }
  if (s.local.empty() && !clipped)
    throw Error("obstacle " + shapeKindName(solid.spec.kind) + ": no boundary particles at spacing " +
                formatNumber(spacing) + " m");
  if (isMesh && inset > 0) {
    // A mesh: each sample moves along its inward normal to signed distance
    // -d, d = boundaryInsetOf(inset, half the thickness there), the half
    // thickness being minus the lowest SDF along the inward ray (sampled
    // over 2 sqrt(3) inset: a sharp edge's or corner's target lies within
    // sqrt(3) inset). Bisection between the surface and that lowest point.
    // A sample moves by at most that reach: one more than it beyond the
    // margin would be dropped below anyway, so is dropped before (the same
    // samples remain; a large mesh is not projected in vain).
    constexpr int kRay = 24;
    if (clipped) keepWithinReach(solid.spec.pose, *walls, margin + reach, s.local, normals);
    for (size_t k = 0; k < s.local.size(); ++k) {
      const Vec3d p = s.local[k], n = normals[k];
      const auto at = [&](double t) { return Vec3d{p[0] - t * n[0], p[1] - t * n[1], p[2] - t * n[2]}; };
      double tMin = 0, dMin = shape->sdf(p);
      for (int j = 1; j <= kRay; ++j) {
        const double t = reach * j / kRay, d = shape->sdf(at(t));
        if (d < dMin) dMin = d, tMin = t;
      }
      const double target = -boundaryInsetOf(inset, -dMin);
      if (!(target < 0)) continue;
      double lo = 0, hi = tMin;
      for (int it = 0; it < 30; ++it) {
        const double mid = 0.5 * (lo + hi);
        (shape->sdf(at(mid)) > target ? lo : hi) = mid;
      }
      s.local[k] = at(0.5 * (lo + hi));
    }
  }
  if (clipped) {
    keepWithinReach(solid.spec.pose, *walls, margin, s.local, normals);
    if (s.local.empty())
      throw Error("obstacle " + shapeSpecToString(solid.spec) + ": no part of its surface lies within " +
                  formatNumber(margin) + " m of the tank (" + formatNumber(walls->tank[0]) + " x " +
                  formatNumber(walls->tank[1]) + " x " + formatNumber(walls->tank[2]) +
                  " m): it would hold no boundary particle the fluid can reach");
  }
  s.inset = inset;
  s.pose = solid.spec.pose;
  s.sdf = makeSdfGrid(*shape, sdfCell, 2 * sdfCell, tankBox ? &*tankBox : nullptr);
  s.body = solid.body;
  s.kind = solid.spec.kind;
  s.size = solid.spec.size;
  if (walls && solid.body < 0) continueIntoWalls(s, normals, spacing, *walls);
  return s;
}

long continueIntoWalls(SphSolidSamples& s, const std::vector<Vec3d>& normals, double spacing,
                       const SphTankWalls& walls) {
  if (s.local.empty() || normals.size() != s.local.size() || !(spacing > 0) || !(walls.reach > 0))
    return 0;
  // Thresholds on n . e (e: the wall's inward normal): below kFacing the
  // sample faces the wall (a bottom face: cos 25 deg); up to kAlong it is a
  // side face or an edge (a box's edge normal has -cos 45 deg).
  constexpr double kFacing = -0.9, kAlong = 0.3;
  const Mat3d R = rotationMatrix(s.pose.rotationDeg);
  std::vector<Vec3d> world(s.local.size()), wn(s.local.size());
  for (size_t k = 0; k < s.local.size(); ++k) {
    world[k] = poseToWorld(s.pose, R, s.local[k]);
    wn[k] = rotate(R, normals[k]);
  }
  std::vector<bool> drop(s.local.size(), false);
  std::vector<Vec3d> added;
  for (int a = 0; a < 3; ++a)
    for (int side = 0; side < 2; ++side) {
      // Distance inside the tank from this wall, and the inward normal's sign.
      const double sign = side == 0 ? 1.0 : -1.0;
      auto dist = [&](const Vec3d& w) { return side == 0 ? w[a] : walls.tank[a] - w[a]; };
      double dmin = dist(world[0]);
      for (const auto& w : world) dmin = std::min(dmin, dist(w));
      // Resting on the wall: the lowest samples within the inset and half a
      // spacing of it (a mesh's thin parts are inset less, boundaryInsetOf),
      // and not more than half a spacing through it (a solid made to cross
      // the wall already continues beyond it).
      if (!(dmin >= -0.5 * spacing && dmin <= s.inset + 0.5 * spacing)) continue;
      for (size_t k = 0; k < world.size(); ++k) {
        const double d = dist(world[k]);
        if (!(d < dmin + 0.5 * spacing)) continue;  // not the lowest row
        const double ne = sign * wn[k][a];
        if (ne < kFacing) {
          drop[k] = true;
        } else if (ne <= kAlong) {
          for (int j = 1; d - j * spacing > -walls.reach; ++j) {
            Vec3d c = world[k];
            c[a] -= sign * j * spacing;
            added.push_back(poseToLocal(s.pose, R, c));
          }
        }
      }
    }
  long change = long(added.size());
  std::vector<Vec3d> kept;
  kept.reserve(s.local.size() + added.size());
  for (size_t k = 0; k < s.local.size(); ++k)
    if (!drop[k]) kept.push_back(s.local[k]);
    else --change;
  kept.insert(kept.end(), added.begin(), added.end());
  s.local = std::move(kept);
  return change;
}

SphBoundary::SphBoundary(Context& ctx, Profiler& profiler, RadixSort& sorter,
                         const std::vector<SphSolidSamples>& solids,
                         const std::array<int, 3>& dims, double cell, unsigned keyBits, double h,
                         const std::string& buildOptions)
    : ctx_(ctx),
      prof_(profiler),
      sorter_(sorter),
      solids_(solids),
      cell_(cell),
      h_(h),
      keyBits_(keyBits),
      program_(ctx.buildProgram(sphProgramFiles({"sph_hash.cl", "sph_cells.cl", "sph_boundary.cl"}), buildOptions)) {
  for (const auto& s : solids_) {
    first_.push_back(n_);
    n_ += s.local.size();
  }
  if (n_ > 0x7fffffffu) throw Error("SPH: too many boundary particles (" + std::to_string(n_) + ")");
  dims_.s[0] = dims[0];
  dims_.s[1] = dims[1];
  dims_.s[2] = dims[2];
  dims_.s[3] = 0;
  numCells_ = n_ ? size_t(dims[0]) * size_t(dims[1]) * size_t(dims[2]) : 1;
  const size_t m = std::max<size_t>(n_, 1);
  const size_t v4 = m * sizeof(cl_float4), u = m * sizeof(cl_uint);

  // Host copies: world and local positions, solid records, SDF values.
  std::vector<cl_float4> pos(m, makeFloat4(0, 0, 0)), local(m, makeFloat4(0, 0, 0)),
      zeros(m, makeFloat4(0, 0, 0));
  std::vector<cl_float4> rec(std::max<size_t>(solids_.size(), 1) * EDDY_SOLID_STRIDE,
                             makeFloat4(0, 0, 0));
  std::vector<cl_float> sdf;
  for (size_t s = 0; s < solids_.size(); ++s) {
    const auto& so = solids_[s];
    const Mat3d R = rotationMatrix(so.pose.rotationDeg);
    for (size_t k = 0; k < so.local.size(); ++k) {
      const Vec3d& l = so.local[k];
      const Vec3d w = poseApply(so.pose, l);
      pos[first_[s] + k] = makeFloat4(w[0], w[1], w[2]);
      local[first_[s] + k] = makeFloat4(l[0], l[1], l[2]);
    }
    const size_t values = size_t(so.sdf.dims[0]) * size_t(so.sdf.dims[1]) * size_t(so.sdf.dims[2]);
    if (so.sdf.values.size() != values || so.sdf.dims[0] < 2 || so.sdf.dims[1] < 2 ||
        so.sdf.dims[2] < 2 || !(so.sdf.cell > 0))
      throw Error("SPH boundary: solid " + std::to_string(s) + " has an invalid SDF grid");
    cl_float4* r = &rec[s * EDDY_SOLID_STRIDE];
    r[EDDY_SOLID_POS] = makeFloat4(so.pose.position[0], so.pose.position[1], so.pose.position[2]);
    for (int row = 0; row < 3; ++row)
      r[EDDY_SOLID_ROT + row] = makeFloat4(R[3 * row], R[3 * row + 1], R[3 * row + 2]);
    r[EDDY_SOLID_SDF] = makeFloat4(so.sdf.origin[0], so.sdf.origin[1], so.sdf.origin[2], so.sdf.cell);
    r[EDDY_SOLID_GRID] = uintBits4(uint32_t(so.sdf.dims[0]), uint32_t(so.sdf.dims[1]),
                                   uint32_t(so.sdf.dims[2]), uint32_t(sdf.size()));
    sdf.insert(sdf.end(), so.sdf.values.begin(), so.sdf.values.end());
    r[EDDY_SOLID_SHAPE] = solidShapeRecord(so);
  }
  if (sdf.empty()) sdf.push_back(0.0f);
  try {
    bpos_ = ctx.createBuffer(CL_MEM_READ_WRITE, v4, "SPH boundary pos");
    bvel_ = ctx.createBuffer(CL_MEM_READ_WRITE, v4, "SPH boundary vel");
    blocal_ = ctx.createBuffer(CL_MEM_READ_WRITE, v4, "SPH boundary local");
    bforce_ = ctx.createBuffer(CL_MEM_READ_WRITE, v4, "SPH boundary force");
    bspos_ = ctx.createBuffer(CL_MEM_READ_WRITE, v4, "SPH boundary sorted pos");
    bsposTmp_ = ctx.createBuffer(CL_MEM_READ_WRITE, v4, "SPH boundary sorted pos (tmp)");
    bsvel_ = ctx.createBuffer(CL_MEM_READ_WRITE, v4, "SPH boundary sorted vel");
    keys_ = ctx.createBuffer(CL_MEM_READ_WRITE, u, "SPH boundary keys");
    vals_ = ctx.createBuffer(CL_MEM_READ_WRITE, u, "SPH boundary vals");
    tmpKeys_ = ctx.createBuffer(CL_MEM_READ_WRITE, u, "SPH boundary tmpKeys");
    tmpVals_ = ctx.createBuffer(CL_MEM_READ_WRITE, u, "SPH boundary tmpVals");
    bcells_ = ctx.createBuffer(CL_MEM_READ_WRITE, numCells_ * 2 * sizeof(cl_uint), "SPH boundary cells");
    counters_ = ctx.createBuffer(CL_MEM_READ_WRITE, EDDY_SPH_NUM_COUNTERS * sizeof(cl_uint),
                                 "SPH boundary counters");
    solidBuf_ = ctx.createBuffer(CL_MEM_READ_WRITE, rec.size() * sizeof(cl_float4), "SPH solids");
    sdf_ = ctx.createBuffer(CL_MEM_READ_WRITE, sdf.size() * sizeof(cl_float), "SPH solid SDF");
    cull_ = ctx.createBuffer(CL_MEM_READ_WRITE, std::max<size_t>(2 * solids_.size(), 1) * sizeof(cl_float4),
                             "SPH solids' culling data");
    auto& q = ctx.queue();
    q.enqueueWriteBuffer(bpos_, CL_TRUE, 0, v4, pos.data());
    q.enqueueWriteBuffer(bvel_, CL_TRUE, 0, v4, zeros.data());
    q.enqueueWriteBuffer(blocal_, CL_TRUE, 0, v4, local.data());
    q.enqueueWriteBuffer(bforce_, CL_TRUE, 0, v4, zeros.data());
    q.enqueueWriteBuffer(bspos_, CL_TRUE, 0, v4, zeros.data());
    q.enqueueWriteBuffer(bsvel_, CL_TRUE, 0, v4, zeros.data());
    const std::vector<cl_uint> c(EDDY_SPH_NUM_COUNTERS, 0);
    q.enqueueWriteBuffer(counters_, CL_TRUE, 0, c.size() * sizeof(cl_uint), c.data());
    const cl_uint empty[2] = {EDDY_SPH_EMPTY_CELL, 0};
    q.enqueueWriteBuffer(bcells_, CL_TRUE, 0, sizeof empty, empty);
    q.enqueueWriteBuffer(solidBuf_, CL_TRUE, 0, rec.size() * sizeof(cl_float4), rec.data());
    q.enqueueWriteBuffer(sdf_, CL_TRUE, 0, sdf.size() * sizeof(cl_float), sdf.data());
  } catch (const cl::Error& e) {
    throw Error("SPH boundary setup: " + describe(e));
  }
}

std::pair<size_t, size_t> SphBoundary::range(size_t s) const {
  if (s >= solids_.size())
    throw Error("SPH boundary: solid " + std::to_string(s) + " of " +
                std::to_string(solids_.size()));
  return {first_[s], solids_[s].local.size()};
}

void SphBoundary::update(double rho0) {
  if (!dirty_ || n_ == 0) return;
  dirty_ = false;
  auto& q = ctx_.queue();
  const EnqueueArgs items(q, cl::NDRange(roundUp(n_, EDDY_SPH_WG)), cl::NDRange(EDDY_SPH_WG));
  const cl_uint n = cl_uint(n_);
  const cl_float invCell = cl_float(1.0 / cell_);
  try {
    prof_.run("boundary_hash", hash_, items, bpos_, keys_, vals_, counters_, n, dims_, invCell);
    sorter_.sort(keys_, vals_, tmpKeys_, tmpVals_, n_, keyBits_, prof_);
    prof_.run("boundary_reorder", reorder_, items, vals_, bpos_, bvel_, bsposTmp_, bsvel_, n);
    prof_.run(
        "boundary_cells_clear", cellsClear_,
        EnqueueArgs(q, cl::NDRange(roundUp(numCells_, EDDY_SPH_WG)), cl::NDRange(EDDY_SPH_WG)),
        bcells_, cl_uint(numCells_));
    prof_.run("boundary_cells", cells_, items, keys_, bcells_, n);
    prof_.run("boundary_psi", psi_, items, bsposTmp_, bcells_, vals_, bspos_, bpos_, n, dims_,
              invCell, cl_float(h_), cl_float(rho0));
  } catch (const cl::Error& e) {
    throw Error("SPH boundary grid kernels: " + describe(e));
  }
}

void SphBoundary::runForce(const SphBoundaryFluid& f) {
  if (n_ == 0) return;
  const SphBoundaryForceArgs a{.bpos = bpos_,
                               .bvel = bvel_,
                               .bforce = bforce_,
                               .pos = *f.pos,
                               .vel = *f.vel,
                               .rhop = *f.rhop,
                               .kb = f.kb ? *f.kb : *f.rhop,
                               .ctl = f.ctl ? *f.ctl : *f.rhop,
                               .clock = *f.clock,
                               .cells = *f.cells,
                               .mode = f.mode,
                               .nbound = cl_uint(n_),
                               .dims = dims_,
                               .invCell = cl_float(1.0 / cell_),
                               .h = cl_float(f.h),
                               .mass = cl_float(f.mass),
                               .c0 = cl_float(f.c0),
                               .alphaB = cl_float(f.alphaB),
                               .gradScale = cl_float(f.gradScale),
                               .kstride = f.kstride};
  try {
    prof_.launch(
        "boundary_force", force_,
        EnqueueArgs(ctx_.launchQueue(), cl::NDRange(roundUp(n_, EDDY_SPH_WG)), cl::NDRange(EDDY_SPH_WG)),
        a);
  } catch (const cl::Error& e) {
    throw Error("SPH boundary force kernel: " + describe(e));
  }
}

void SphBoundary::refreshCull() {
  if (!cullSolids() || !cullDirty_) return;
  cullDirty_ = false;
  try {
    prof_.run("boundary_cull", cullKernel_,
              EnqueueArgs(ctx_.launchQueue(), cl::NDRange(roundUp(solids_.size(), EDDY_SPH_WG)),
                          cl::NDRange(EDDY_SPH_WG)),
              solidBuf_, cull_, cl_uint(solids_.size()));
  } catch (const cl::Error& e) {
    throw Error("SPH boundary cull kernel: " + describe(e));
  }
}

void SphBoundary::runGuard(const cl::Buffer& pos, const cl::Buffer& vel,
                           const cl::Buffer& counters, const cl::Buffer& clock, size_t n,
                           double clearance, const std::array<double, 3>& tank,
                           double wallClearance) {
  if (solids_.empty() || n == 0) return;
  refreshCull();
  try {
    prof_.run(
        "boundary_guard", guard_,
        EnqueueArgs(ctx_.launchQueue(), cl::NDRange(roundUp(n, EDDY_SPH_WG)), cl::NDRange(EDDY_SPH_WG)),
        pos, vel, counters, solidBuf_, sdf_, clock, cull_, cl_uint(solids_.size()), cl_uint(n),
        cl_float(clearance), makeFloat4(tank[0], tank[1], tank[2], wallClearance),
        cl_uint(cullSolids() ? 1 : 0));
  } catch (const cl::Error& e) {
    throw Error("SPH boundary guard kernel: " + describe(e));
  }
}

void SphBoundary::runContact(const cl::Buffer& pos, const cl::Buffer& vel, const cl::Buffer* acc,
                             const cl::Buffer& clock, size_t n, double clearance) {
  if (solids_.empty() || n == 0) return;
  refreshCull();
  try {
    prof_.run("boundary_contact", contact_,
              EnqueueArgs(ctx_.launchQueue(), cl::NDRange(roundUp(n, EDDY_SPH_WG)),
                          cl::NDRange(EDDY_SPH_WG)),
              pos, vel, acc ? *acc : vel, solidBuf_, sdf_, clock, cull_, cl_uint(solids_.size()),
              cl_uint(n), cl_float(clearance), cl_uint(acc ? 1 : 0), cl_uint(cullSolids() ? 1 : 0));
  } catch (const cl::Error& e) {
    throw Error("SPH boundary contact kernel: " + describe(e));
  }
}

std::vector<cl_float4> SphBoundary::readPositions() { return readBuf<cl_float4>(ctx_.queue(), bpos_, n_); }
std::vector<cl_float4> SphBoundary::readForces() { return readBuf<cl_float4>(ctx_.queue(), bforce_, n_); }
std::vector<cl_float4> SphBoundary::readSortedPositions() { return readBuf<cl_float4>(ctx_.queue(), bspos_, n_); }
std::vector<cl_uint> SphBoundary::readCells() { return readBuf<cl_uint>(ctx_.queue(), bcells_, 2 * numCells_); }

void SphBoundary::writeState(const std::vector<cl_float4>& pos, const std::vector<cl_float4>& vel) {
  if (pos.size() != n_ || vel.size() != n_) throw Error("SPH boundary writeState: wrong count");
  if (n_ == 0) return;
  auto& q = ctx_.queue();
  q.enqueueWriteBuffer(bpos_, CL_TRUE, 0, n_ * sizeof(cl_float4), pos.data());
  q.enqueueWriteBuffer(bvel_, CL_TRUE, 0, n_ * sizeof(cl_float4), vel.data());
  moved();
}

}  // namespace eddy
