#include "wcsph.hpp"

namespace eddy {

WcsphSolver::WcsphSolver(Context& ctx, SphParticles& p, const SphKernelConfig& cfg)
    : program_(ctx.buildProgram({"sph_common.cl", "sph_density.cl", "sph_forces.cl"},
                                SphParticles::buildOptions(ctx, cfg))) {
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
  try {
    p.profiler().record(
        "density", density_(p.launch(), p.positions(), p.cells(), p.neighbourList(),
                            p.neighbourCounts(), rhop_, p.count(), p.dims4(), p.invCell(),
                            p.tank4(), cl_float(phys.h), cl_float(phys.mass),
                            cl_float(phys.rho0), cl_float(phys.B)));
  } catch (const cl::Error& e) {
    throw Error("SPH density kernel: " + describe(e));
  }
}

void WcsphSolver::computeAccelerations(SphParticles& p, const SphPhysics& phys) {
  try {
    p.profiler().record(
        "forces", forces_(p.launch(), p.positions(), p.velocities(), rhop_, p.cells(),
                          p.neighbourList(), p.neighbourCounts(), acc_, p.counters(), p.count(),
                          p.dims4(), p.invCell(), p.tank4(), cl_float(phys.h),
                          cl_float(phys.mass), cl_float(phys.c0), cl_float(phys.alpha),
                          cl_float(phys.gravity), cl_float(phys.gamma), cl_float(phys.rho0),
                          cl_float(phys.gradScale)));
  } catch (const cl::Error& e) {
    throw Error("SPH forces kernel: " + describe(e));
  }
}

}  // namespace eddy
