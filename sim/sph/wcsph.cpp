#include "wcsph.hpp"

#include "snapshot.hpp"
#include "sph.hpp"

#include <sstream>

namespace eddy {

WcsphSolver::WcsphSolver(Context& ctx, SphParticles& p, const SphKernelConfig& cfg)
    : program_(ctx.buildProgram(
          sphProgramFiles({"sph_density.cl", "sph_forces.cl", "sph_continuity.cl"}),
          SphParticles::buildOptions(ctx, cfg))),
      continuity_(ctx, program_, p.capacity()) {
  const size_t cap = p.capacity();
  try {
    rhop_ = ctx.createBuffer(CL_MEM_READ_WRITE, cap * sizeof(cl_float2), "SPH rhop");
    acc_ = ctx.createBuffer(CL_MEM_READ_WRITE, cap * sizeof(cl_float4), "SPH acc");
    const std::vector<cl_float4> a(cap, makeFloat4(0, 0, 0, 0));
    ctx.queue().enqueueWriteBuffer(acc_, CL_TRUE, 0, cap * sizeof(cl_float4), a.data());
  } catch (const cl::Error& e) {
    throw Error("SPH setup: " + describe(e));
  }
}

void WcsphSolver::computeDensity(SphParticles& p, const SphPhysics& phys) {
  phys_ = phys;
  if (!(phys.densityDiffusion > 0)) {
    continuity_.reset();  // summation; a later switch to delta > 0 starts afresh
    sumDensity(p, phys);
    return;
  }
  continuity_.prepare(p, rhop_, phys, [&] { sumDensity(p, phys, true); });
  continuity_.continuity(p, phys, rhop_);
}

void WcsphSolver::reordered(SphParticles& p, bool /*stepStart*/) {
  continuity_.reorder(p, rhop_, phys_, [&] { sumDensity(p, phys_, true); });
}

void WcsphSolver::saveState(SnapshotWriter& out, size_t n) {
  const auto rho = continuity_.read(n);
  if (rho.empty()) return;
  out.addArray("sph/wcsph_rho", rho);
  out.addU64("sph/wcsph_rho_pending", continuity_.advancePending() ? 1 : 0);
}

void WcsphSolver::restoreState(const SphState& st) {
  continuity_.write(st.rho, st.pos.size(), st.rhoPending);
}

void WcsphSolver::sumDensity(SphParticles& p, const SphPhysics& phys, bool start) {
  const SphBoundaryView bv = p.boundary().view();
  const SphDensityArgs a{.pos = p.positions(),
                         .cells = p.cells(),
                         .nlist = p.neighbourList(),
                         .nbcount = p.neighbourCounts(),
                         .counters = p.counters(),
                         .rhop = rhop_,
                         .bpos = *bv.pos,
                         .bcells = *bv.cells,
                         .nbound = bv.count,
                         .n = p.count(),
                         .dims = p.dims4(),
                         .invCell = p.invCell(),
                         .tank = p.tank4(),
                         .h = cl_float(phys.h),
                         .mass = cl_float(phys.mass),
                         .rho0 = cl_float(phys.rho0),
                         .B = cl_float(phys.B),
                         .listCap = p.listCapacity(),
                         .countOverflow = cl_uint(start ? 0 : 1),
                         .buildList = cl_uint(p.fuseList() ? 1 : 0),
                         .laneBits = p.laneBits()};
  try {
    p.profiler().launch("density", density_, p.laneLaunch(), a);
  } catch (const cl::Error& e) {
    throw Error("SPH density kernel: " + describe(e));
  }
}

SphForcesArgs SphForcesArgs::of(const SphParticles& p, const cl::Buffer& rhop,
                                const cl::Buffer& acc, const SphPhysics& phys, bool soundInDt) {
  const SphBoundaryView bv = p.boundary().view();
  return SphForcesArgs{.pos = p.positions(),
                       .vel = p.velocities(),
                       .rhop = rhop,
                       .cells = p.cells(),
                       .nlist = p.neighbourList(),
                       .nbcount = p.neighbourCounts(),
                       .acc = acc,
                       .counters = p.counters(),
                       .bpos = *bv.pos,
                       .bvel = *bv.vel,
                       .bcells = *bv.cells,
                       .nbound = bv.count,
                       .alphaB = cl_float(phys.boundaryViscosity),
                       .n = p.count(),
                       .dims = p.dims4(),
                       .invCell = p.invCell(),
                       .tank = p.tank4(),
                       .h = cl_float(phys.h),
                       .mass = cl_float(phys.mass),
                       .c0 = cl_float(phys.c0),
                       .alpha = cl_float(phys.alpha),
                       .gravity = cl_float(phys.gravity),
                       .gamma = cl_float(phys.gamma),
                       .rho0 = cl_float(phys.rho0),
                       .gradScale = cl_float(phys.gradScale),
                       .cSound = soundInDt ? cl_float(phys.c0) : 0.0f,
                       .laneBits = p.laneBits()};
}

void WcsphSolver::computeAccelerations(SphParticles& p, const SphPhysics& phys) {
  try {
    p.profiler().launch("forces", forces_, p.laneLaunch(),
                        SphForcesArgs::of(p, rhop_, acc_, phys, /*soundInDt=*/true));
  } catch (const cl::Error& e) {
    throw Error("SPH forces kernel: " + describe(e));
  }
}

void WcsphSolver::step(SphParticles& p, const SphPhysics& phys) {
  computeDensity(p, phys);
  computeAccelerations(p, phys);
  // The fluid's force on the boundary particles, from this step's pressures.
  SphBoundaryFluid f;
  f.pos = &p.positions();
  f.vel = &p.velocities();
  f.rhop = &rhop_;
  f.cells = &p.cells();
  f.clock = &p.clock();
  f.mode = EDDY_BOUNDARY_FORCE_WCSPH;
  f.h = phys.h;
  f.mass = phys.mass;
  f.c0 = phys.c0;
  f.alphaB = phys.boundaryViscosity;
  f.gradScale = phys.gradScale;
  p.boundary().runForce(f);
  p.runDt(phys);
  // v + dt a may not carry a particle through a solid (the change into acc_).
  p.boundary().runContact(p.positions(), p.velocities(), &acc_, p.clock(), p.size(),
                          EDDY_SOLID_CLEARANCE * phys.spacing);
  p.runIntegrate(acc_, phys);
  continuity_.stepped();  // delta > 0: the next continuity phase advances rho by this dt
}

std::string WcsphSolver::compressionAdvice(const SphPhysics& phys, const Params& params) const {
  std::ostringstream o;
  o.precision(3);
  o << "wcsph keeps its density within about 1 % with a speed of sound of 10x the fastest flow, and it is "
    << double(phys.c0) << " m/s here" << (params.get("speed_of_sound") > 0 ? " (speed_of_sound)" : " (automatic)")
    << ": set speed_of_sound to 10x the flow's speed, or use solver=dfsph";
  return o.str();
}

}  // namespace eddy
