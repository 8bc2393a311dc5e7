// wcsph.hpp: weakly compressible SPH (WCSPH), the first SPH solver.
//
// Summation density with the Tait equation of state (phase "density"), or
// with density_diffusion delta > 0 (the default) the density carried by the
// continuity equation with delta-SPH diffusion (phases "continuity_reorder",
// "continuity"; wcsph_continuity.hpp), then
// pressure, Monaghan's artificial viscosity, optional Akinci cohesion and
// gravity (phase "forces"); kernels/sph/sph_density.cl and sph_forces.cl.
// The physics and its references are in docs/ARCHITECTURE.md ("SPH").
#pragma once

#include "kernel_args.hpp"
#include "solver.hpp"
#include "wcsph_continuity.hpp"

namespace eddy {

// Arguments of kernels/sph/sph_density.cl, in its order (kernel_args.hpp).
struct SphDensityArgs {
  const cl::Buffer &pos, &cells, &nlist, &nbcount, &counters, &rhop, &bpos, &bcells;
  cl_uint nbound, n;
  cl_int4 dims;
  cl_float invCell;
  cl_float4 tank;
  cl_float h, mass, rho0, B;
  cl_uint listCap, countOverflow, buildList, laneBits;
  auto args() const {
    return std::tie(pos, cells, nlist, nbcount, counters, rhop, bpos, bcells, nbound, n, dims,
                    invCell, tank, h, mass, rho0, B, listCap, countOverflow, buildList, laneBits);
  }
};

// Arguments of kernels/sph/sph_forces.cl, in its order (kernel_args.hpp).
struct SphForcesArgs {
  const cl::Buffer &pos, &vel, &rhop, &cells, &nlist, &nbcount, &acc, &counters, &bpos, &bvel,
      &bcells;
  cl_uint nbound;
  cl_float alphaB;
  cl_uint n;
  cl_int4 dims;
  cl_float invCell;
  cl_float4 tank;
  cl_float h, mass, c0, alpha, gravity, gamma, rho0, gradScale;
  cl_float cSound;  // c0 (WCSPH): the local sound speed enters the time-step maximum; 0: |v| only
  cl_uint laneBits;
  auto args() const {
    return std::tie(pos, vel, rhop, cells, nlist, nbcount, acc, counters, bpos, bvel, bcells,
                    nbound, alphaB, n, dims, invCell, tank, h, mass, c0, alpha, gravity, gamma,
                    rho0, gradScale, cSound, laneBits);
  }
  // The arguments of the particles' current state (sph_forces without the
  // pressure term when rhop's pressures are 0, as DFSPH's non-pressure forces);
  // soundInDt: the Tait sound speed of each particle's density enters the
  // time step's maximum (WCSPH), else only its speed (DFSPH).
  static SphForcesArgs of(const SphParticles& p, const cl::Buffer& rhop, const cl::Buffer& acc,
                          const SphPhysics& phys, bool soundInDt);
};

class WcsphSolver : public SphSolver {
 public:
  WcsphSolver(Context& ctx, SphParticles& particles, const SphKernelConfig& cfg);

  std::string name() const override { return "wcsph"; }
  // A speed of sound too low for the flow.
  std::string compressionAdvice(const SphPhysics& phys, const Params& params) const override;
  void computeDensity(SphParticles& p, const SphPhysics& phys) override;
  void computeAccelerations(SphParticles& p, const SphPhysics& phys) override;
  const cl::Buffer& densityPressure() const override { return rhop_; }
  const cl::Buffer& accelerations() const override { return acc_; }
  // The explicit step, plus the fluid's force on the boundary particles;
  // delta > 0: then the density's advance is pending; the
  // carried density follows the sort and goes into snapshots (sph/wcsph_rho,
  // sph/wcsph_rho_pending).
  void step(SphParticles& p, const SphPhysics& phys) override;
  void reordered(SphParticles& p, bool stepStart) override;
  void saveState(SnapshotWriter& out, size_t n) override;
  void restoreState(const SphState& st) override;
  // sph_density / sph_continuity build the list where the particles say it
  // pays (SphParticles::fuseList).
  bool buildsNeighbourList(const SphParticles& p) const override { return p.fuseList(); }
  // The continuity phase's D rho / Dt of the first n slots (tests).
  std::vector<cl_float> readDensityRate(size_t n) { return continuity_.readRate(n); }

 private:
  // Phase "density": the summation density and Tait pressure into rhop_.
  // start: the carried density's start, before a continuity phase that
  // builds the list again (fused list: no overflow counted here).
  void sumDensity(SphParticles& p, const SphPhysics& phys, bool start = false);

  cl::Program program_;
  cl::Buffer rhop_, acc_;
  KernelFunctorOf<SphDensityArgs> density_{program_, "sph_density"};
  KernelFunctorOf<SphForcesArgs> forces_{program_, "sph_forces"};
  WcsphContinuity continuity_;
  SphPhysics phys_;  // of the last computeDensity (reordered() starts new particles with it)
};

}  // namespace eddy
