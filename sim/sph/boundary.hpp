// boundary.hpp: boundary particles of solids for both SPH solvers (issue 12).
//
// Akinci, Ihmsen, Akinci, Solenthaler & Teschner 2012, "Versatile rigid-fluid
// coupling for incompressible SPH", ACM TOG 31(4):62. Each solid's surface is
// sampled with particles (at boundary_spacing x dx, boundary_inset x dx below
// the geometric surface: sampleSolid); their
// volumes psi_b = rho0 / sum_k W_bk (eq. 4) enter the fluid's density and
// pressure sums (kernels/sph/sph_common.cl, SPH_BOUNDARY_BEGIN) and the fluid's
// force on each of them is gathered into bforce (sph_boundary_force). The tank
// keeps its mirror walls; obstacles and bodies are boundary particles.
//
// Device buffers (declaration order: contiguous per solid, static obstacles
// first, then body 0, body 1, ...; range(solid) = [first, count)):
//   bpos    float4  world position, w = psi
//   bvel    float4  world velocity (0 for a static solid)
//   blocal  float4  position in the solid's local frame
//   bforce  float4  force of the fluid on the particle (N), every step
// and, for the fluid kernels, copies sorted by the fluid's grid cells (bspos
// with psi, bsvel) with their own cell table (same cells as the fluid), built
// by sph_hash, the radix sort, boundary_reorder, sph_cells_clear/sph_cells and
// boundary_psi, only when something moved (moved(); a static scene builds it
// once). Per solid, a record of EDDY_SOLID_STRIDE float4 (pose, velocities,
// SDF grid header, eddy_shared.h) and its SDF grid values (local frame) for
// the penetration guard (sph_boundary_guard). A body helper that rewrites
// bpos/bvel and the solid records on the device calls moved().
#pragma once

#include "cl.hpp"
#include "kernel_args.hpp"
#include "profiler.hpp"
#include "radix_sort.hpp"
#include "shape.hpp"

#include "eddy_shared.h"

#include <array>
#include <string>
#include <utility>
#include <vector>

namespace eddy {

// A solid as a scene or config declares it.
struct SphSolid {
  ShapeSpec spec;  // shape, size, pose (position + rotation)
  int body = -1;   // -1: a static obstacle; >= 0: rigid body index (bodies)
};

// What the device gets of one solid: its boundary particles in the local
// frame, its pose and its signed-distance grid (local frame, of the
// geometric shape), and the inset its particles were sampled at.
struct SphSolidSamples {
  std::vector<Vec3d> local;
  Pose pose;
  SdfGrid sdf;
  int body = -1;
  double inset = 0;  // m: the boundary_inset asked for (thin parts: less, boundaryInsetOf)
  // The geometric shape for the guard's exact SDF (sph_solid_exact_sdf): a
  // box, sphere or cylinder with its ShapeSpec size; Mesh: only the grid `sdf`.
  ShapeKind kind = ShapeKind::Mesh;
  Vec3d size{0, 0, 0};
};

// The boundary particles lie below the geometric surface (boundary_inset x
// dx): the fluid's first layer rests about 1.1 dx off them, so its volume
// ends about 0.7 dx off them; sampled ON the surface, that skin added to the
// solid's volume (a box 10 x 8 x 10 dx felt 5.9 N instead of rho g V =
// 3.92 N and a 500 kg/m^3 box floated 31.5 % submerged). A part thinner than
// the inset keeps its two sides apart: the inset where the solid's half
// thickness is t is at most this fraction of t.
constexpr double kBoundaryInsetThicknessFraction = 0.5;
// The inset used where the half thickness is `halfThickness`:
// max(0, min(inset, kBoundaryInsetThicknessFraction x halfThickness)).
double boundaryInsetOf(double inset, double halfThickness);
// How many ShapeSpec::size entries a primitive's inset shrinks, each by
// boundaryInsetOf(inset, half of it) on both sides: a box's 3, a cylinder's
// diameter and height, a sphere's diameter; a mesh none (its samples move
// along their normals instead). sampleSolid shrinks them, dropInsideSolids
// widens its clearance by what they lack.
int boundaryInsetExtents(ShapeKind kind);

// Samples a solid at `spacing`, its boundary particles `inset` (m) below the
// geometric surface: a box, sphere or cylinder is sampled as the same
// primitive made smaller by boundaryInsetOf(inset, half extent) on each
// side (Shape::sample); a mesh's samples move along their inward normals to
// signed distance -boundaryInsetOf(inset, local half thickness). The SDF
// grid (cell `sdfCell`, margin two cells) is the geometric shape's: the
// guard keeps the fluid outside the geometric surface. makeShape errors name
// the problem; a negative or non-finite inset is refused.
//
// With `walls` (a static obstacle in a tank): where the solid rests on a
// tank wall, its boundary sheet continues through the wall
// (continueIntoWalls), so that the fluid next to the solid's foot sees the
// same solid as higher up.
struct SphTankWalls {
  std::array<double, 3> tank{};  // the tank's size; walls at 0 and tank[a]
  double reach = 0;              // m: the fluid kernel's support h
};
SphSolidSamples sampleSolid(const SphSolid& solid, double spacing, double sdfCell, double inset,
                            const SphTankWalls* walls = nullptr);

// A solid resting on a tank wall (its lowest samples at most the inset and
// half a spacing inside the wall, at most half a spacing beyond it): the tank is a mirror wall for the
// fluid, so the solid's image continues it through the wall, but boundary
// particles are not mirrored, and the sheet ends at its lowest row, `inset`
// above the wall. The fluid next to the solid's foot then saw a third less
// boundary (Wendland C2, h = 2.2 dx, a box on the floor: sum psi_b W_ib
// 0.15 against 0.23 of rho0 half a spacing above the floor, 0.3 dx off the
// face) and was held less; at Delta p = 0.01 m the SPHERIC dam break pushed
// 5 particles through the box's upstream face right at the floor (H200,
// 2026-12-03, docs/PERFORMANCE.md, session 17). Here the lowest row's
// samples whose normals do not face the wall (side faces, edges) are
// repeated through the wall at `spacing` until `reach` beyond it (the sheet
// continued: the same sum as the face's middle), and the samples of that row
// that face the wall (a bottom face on the floor, with no fluid beneath)
// are dropped (they crowd the continued sheet's psi). Returns the samples
// added minus those dropped. `normals` are the samples' (local frame).
long continueIntoWalls(SphSolidSamples& s, const std::vector<Vec3d>& normals, double spacing,
                       const SphTankWalls& walls);

// x_world = pose.position + R x_local (shape.hpp's convention).
Vec3d poseApply(const Pose& pose, const Vec3d& local);

// The boundary buffers the fluid kernels read (sorted copies and their cells).
struct SphBoundaryView {
  const cl::Buffer* pos = nullptr;    // float4 (x, psi), cell order
  const cl::Buffer* vel = nullptr;    // float4 (v, 0), cell order
  const cl::Buffer* cells = nullptr;  // uint2 per cell (start, end)
  cl_uint count = 0;
};

// Arguments of sph_boundary_force (kernel_args.hpp).
struct SphBoundaryForceArgs {
  const cl::Buffer &bpos, &bvel, &bforce, &pos, &vel, &rhop, &kb, &ctl, &clock, &cells;
  cl_uint mode, nbound;
  cl_int4 dims;
  cl_float invCell, h, mass, c0, alphaB, gradScale;
  cl_uint kstride;
  auto args() const {
    return std::tie(bpos, bvel, bforce, pos, vel, rhop, kb, ctl, clock, cells, mode, nbound, dims,
                    invCell, h, mass, c0, alphaB, gradScale, kstride);
  }
};

// The fluid state sph_boundary_force reads (current sorted order).
struct SphBoundaryFluid {
  const cl::Buffer *pos = nullptr, *vel = nullptr, *rhop = nullptr, *cells = nullptr,
                   *clock = nullptr;
  // DFSPH only: its per-particle rows (EDDY_DFSPH_K_*, rows of kstride
  // floats); WCSPH passes none (rhop stands in, unread).
  const cl::Buffer* kb = nullptr;
  // DFSPH only: its control words, whose EDDY_DFSPH_CTL_GRAD the pressure
  // term applies (the gradient renormalisation, sph_dfsph.cl).
  const cl::Buffer* ctl = nullptr;
  cl_uint kstride = 0;
  cl_uint mode = EDDY_BOUNDARY_FORCE_WCSPH;
  double h = 0, mass = 0, c0 = 0, alphaB = 0, gradScale = 1;
};

class SphBoundary {
 public:
  // The grid is the fluid's (dims, cell size, key bits); `sorter` the
  // pipeline's radix sort (its rows sort_* also count the boundary's sorts).
  SphBoundary(Context& ctx, Profiler& profiler, RadixSort& sorter,
              const std::vector<SphSolidSamples>& solids, const std::array<int, 3>& dims,
              double cell, unsigned keyBits, double h, const std::string& buildOptions);

  size_t size() const { return n_; }              // boundary particles
  size_t solidCount() const { return solids_.size(); }
  // [first, count) of solid s in declaration order.
  std::pair<size_t, size_t> range(size_t s) const;
  // Positions/velocities (bpos/bvel) or a solid's record changed on the
  // device: the grid and psi are rebuilt at the next update().
  void moved() { dirty_ = cullDirty_ = true; }
  // hash .. psi when something moved (nothing otherwise).
  void update(double rho0);
  // The force of the fluid on every boundary particle into bforce.
  void runForce(const SphBoundaryFluid& f);
  // Fluid particles closer than `clearance` to a solid's geometric surface
  // put back at that distance (kept within `wallClearance` of the tank's
  // walls); those found inside it (SDF < 0; a primitive's exact SDF) counted
  // in counters[EDDY_SPH_CNT_PENETRATIONS]. `clock` holds this step's dt
  // (EDDY_SPH_CLOCK_DT): a particle that would cross a surface within dt is
  // put back (within the clearance) or slowed to arrive at the clearance
  // (farther out; sph_guard_rule in sph_boundary.cl).
  void runGuard(const cl::Buffer& pos, const cl::Buffer& vel, const cl::Buffer& counters,
                const cl::Buffer& clock, size_t n, double clearance,
                const std::array<double, 3>& tank, double wallClearance);

  // Before the move (after the step's last velocity change; `clock` holds
  // this step's dt): a fluid particle that would cross a solid's surface
  // within dt is slowed along the surface normal so that it arrives at
  // `clearance` (or, within it, moves no further in): sph_contact_rule in
  // sph_boundary.cl. acc null: changes vel (the move is x += dt v); else
  // the change goes into acc (the move is v += dt acc; x += dt v).
  void runContact(const cl::Buffer& pos, const cl::Buffer& vel, const cl::Buffer* acc,
                  const cl::Buffer& clock, size_t n, double clearance);

  // The guard and the contact pass over, per work-group, the solids too
  // far from its particles to act on them (sph_solid_may_act in
  // sph_boundary.cl) when there are at least kCullSolidsFrom solids; off,
  // every particle visits every solid. Bit for bit the same either way;
  // tests compare the two. With one solid (a tank's piston) the culling's
  // reduction cost more than it saved (H200, wave_tank, 1M particles: 0.038
  // against 0.028 ms a kernel); with 100 bodies it saves most of the
  // kernels' time (guard + contact 2.15 -> 0.18 ms a step,
  // docs/PERFORMANCE.md, session 23).
  static constexpr size_t kCullSolidsFrom = 3;
  void setCulling(bool on) { culling_ = on; }

  SphBoundaryView view() const { return {&bspos_, &bsvel_, &bcells_, cl_uint(n_)}; }
  const cl::Buffer& positions() const { return bpos_; }
  const cl::Buffer& velocities() const { return bvel_; }
  const cl::Buffer& localPositions() const { return blocal_; }
  const cl::Buffer& forces() const { return bforce_; }
  const cl::Buffer& solidRecords() const { return solidBuf_; }  // EDDY_SOLID_STRIDE float4 each
  const cl::Buffer& sdfValues() const { return sdf_; }
  const std::vector<SphSolidSamples>& solids() const { return solids_; }

  // Read-backs (blocking; tests, app, output).
  std::vector<cl_float4> readPositions();       // declaration order, w = psi
  std::vector<cl_float4> readForces();          // declaration order
  std::vector<cl_float4> readSortedPositions();  // cell order, w = psi
  std::vector<cl_uint> readCells();
  // Overwrites bpos (xyz; psi is recomputed) and bvel, declaration order (tests).
  void writeState(const std::vector<cl_float4>& pos, const std::vector<cl_float4>& vel);

 private:
  Context& ctx_;
  Profiler& prof_;
  RadixSort& sorter_;
  std::vector<SphSolidSamples> solids_;
  std::vector<size_t> first_;
  size_t n_ = 0;
  cl_int4 dims_{};
  double cell_ = 0, h_ = 0;
  size_t numCells_ = 1;
  unsigned keyBits_ = 1;
  bool dirty_ = true;
  bool culling_ = true;
  bool cullDirty_ = true;  // cull_ is not the records' (boundary_cull before the next use)
  bool cullSolids() const { return culling_ && solids_.size() >= kCullSolidsFrom; }
  // The culling's compact copy of the records (sph_boundary_cull), when
  // culling and stale: before the guard's or the contact's launch.
  void refreshCull();
  cl::Program program_;
  cl::Buffer bpos_, bvel_, blocal_, bforce_, bspos_, bsposTmp_, bsvel_;
  cl::Buffer keys_, vals_, tmpKeys_, tmpVals_, bcells_, counters_, solidBuf_, sdf_;
  cl::Buffer cull_;  // 2 float4 a solid: sphere (centre, R), then (|v|, |omega|)

  KernelFunctor<cl::Buffer, cl::Buffer, cl::Buffer, cl::Buffer, cl_uint, cl_int4, cl_float>
      hash_{program_, "sph_hash"};
  KernelFunctor<cl::Buffer, cl_uint> cellsClear_{program_, "sph_cells_clear"};
  KernelFunctor<cl::Buffer, cl::Buffer, cl_uint> cells_{program_, "sph_cells"};
  KernelFunctor<cl::Buffer, cl::Buffer, cl::Buffer, cl::Buffer, cl::Buffer, cl_uint>
      reorder_{program_, "sph_boundary_reorder"};
  KernelFunctor<cl::Buffer, cl::Buffer, cl::Buffer, cl::Buffer, cl::Buffer, cl_uint, cl_int4,
                    cl_float, cl_float, cl_float>
      psi_{program_, "sph_boundary_psi"};
  KernelFunctorOf<SphBoundaryForceArgs> force_{program_, "sph_boundary_force"};
  KernelFunctor<cl::Buffer, cl::Buffer, cl::Buffer, cl::Buffer, cl::Buffer, cl::Buffer, cl::Buffer,
                    cl_uint, cl_uint, cl_float, cl_float4, cl_uint>
      guard_{program_, "sph_boundary_guard"};
  KernelFunctor<cl::Buffer, cl::Buffer, cl::Buffer, cl::Buffer, cl::Buffer, cl::Buffer, cl::Buffer,
                    cl_uint, cl_uint, cl_float, cl_uint, cl_uint>
      contact_{program_, "sph_boundary_contact"};
  KernelFunctor<cl::Buffer, cl::Buffer, cl_uint> cullKernel_{program_, "sph_boundary_cull"};
};

}  // namespace eddy
