// wcsph_continuity.hpp: WCSPH's carried density (continuity equation with
// delta-SPH density diffusion), kernels/sph/sph_continuity.cl.
//
// With density_diffusion delta > 0, WcsphSolver does not sum the density
// every step: the density rho_i is state, carried between steps in slot
// order (it follows the sort through reorder(), and snapshots store it), and
// each step
//
//     continuity_reorder  rho follows the sort
//     continuity          rho += dt_last D rho / Dt (velocity divergence, fluid
//                         and boundary particles, + delta-SPH diffusion, fluid
//                         only, Fourtakas et al. 2019) of the
//                         positions and velocities the last step produced;
//                         rhop = (rho, Tait p(rho))
//     forces, dt, integrate (unchanged)
//
// The advance is pending from a step's integrate to the next continuity
// phase (advancePending(); in snapshots too), which applies it once: a
// density refresh between steps (diagnostics) applies it, the step after it
// does not, with the same bits.
//
// Particles without a carried density (the start, a dropped block, a switch
// from delta = 0) start from the summation density (sph_density, boundary
// particles included) raised to rho0 and, where solids are, capped at
// SphPhysics::startDensityCap (the Tait density of the scene's deepest
// water): the hydrostatic Tait state the scenes set up for wcsph, without the
// spurious compression the summation shows next to a solid (sph_continuity.cl,
// sph_continuity_reorder).
#pragma once

#include "kernel_args.hpp"
#include "particles.hpp"

#include <functional>
#include <vector>

namespace eddy {

// Arguments of sph_continuity (kernels/sph/sph_continuity.cl), in its order.
struct SphContinuityArgs {
  const cl::Buffer &pos, &vel, &rho, &cells, &nlist, &nbcount, &counters, &rhop, &drho, &rhoOut,
      &clock;
  const cl::Buffer &bpos, &bvel, &bcells;  // boundary particles (SphBoundaryView)
  cl_uint nbound;
  cl_uint n;
  cl_int4 dims;
  cl_float invCell;
  cl_float4 tank;
  cl_float h, mass, rho0, B, c0, delta, gravity;
  cl_uint advance, listCap, countOverflow, buildList, laneBits;
  auto args() const {
    return std::tie(pos, vel, rho, cells, nlist, nbcount, counters, rhop, drho, rhoOut, clock, bpos,
                    bvel, bcells, nbound, n, dims, invCell, tank, h, mass, rho0, B, c0, delta,
                    gravity, advance, listCap, countOverflow, buildList, laneBits);
  }
};

struct SphContinuityReorderArgs {
  const cl::Buffer &order, &rhoIn, &rhop, &rhoOut;
  cl_uint n, firstNew;
  cl_float rho0, rhoMax;
  auto args() const { return std::tie(order, rhoIn, rhop, rhoOut, n, firstNew, rho0, rhoMax); }
};

class WcsphContinuity {
 public:
  // `program` holds sph_continuity.cl (WcsphSolver's program); buffers for
  // `capacity` particles.
  WcsphContinuity(Context& ctx, const cl::Program& program, size_t capacity);

  // Particles whose density is carried (slots [0, carried()) before the next
  // reorder); 0: none, the next prepare() starts every particle afresh.
  size_t carried() const { return carried_; }
  void reset() { carried_ = 0; }
  // A step has moved the particles: the next continuity phase advances rho.
  void stepped() { pending_ = carried_ > 0; }
  bool advancePending() const { return pending_; }

  // After the pipeline's sort (SphSolver::reordered): the carried densities
  // follow the new order. Particles appended since (addBlock) start from the
  // summation density, which `summation` puts into rhop (this slot order).
  void reorder(SphParticles& p, const cl::Buffer& rhop, const SphPhysics& phys,
               const std::function<void()>& summation);
  // Before continuity(): every particle carried, else all start afresh from
  // `summation` (as reorder).
  void prepare(SphParticles& p, const cl::Buffer& rhop, const SphPhysics& phys,
               const std::function<void()>& summation);
  // Phase "continuity": the pending advance, rhop and the rate (and nbcount
  // in cells mode).
  void continuity(SphParticles& p, const SphPhysics& phys, const cl::Buffer& rhop);

  // Snapshot: the carried densities of n particles (slot order); restore
  // makes them carried (an empty or wrongly sized vector: none carried).
  std::vector<cl_float> read(size_t n);
  void write(const std::vector<cl_float>& rho, size_t n, bool pending);
  // The last continuity phase's rates D rho / Dt of n particles (tests).
  std::vector<cl_float> readRate(size_t n);

 private:
  void carry(SphParticles& p, const cl::Buffer& rhop, size_t firstNew, const SphPhysics& phys);

  Context& ctx_;
  size_t cap_;
  size_t carried_ = 0;
  bool pending_ = false;
  cl::Buffer rho_[2], drho_;
  int cur_ = 0;
  KernelFunctorOf<SphContinuityArgs> continuity_;
  KernelFunctorOf<SphContinuityReorderArgs> reorder_;
};

}  // namespace eddy
