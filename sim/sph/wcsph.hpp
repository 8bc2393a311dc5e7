// wcsph.hpp: weakly compressible SPH (WCSPH), the first SPH solver.
//
// Summation density with the Tait equation of state (phase "density"), then
// pressure, Monaghan's artificial viscosity, optional Akinci cohesion and
// gravity (phase "forces"); kernels/sph/sph_density.cl and sph_forces.cl.
// The physics and its references are in docs/ARCHITECTURE.md ("SPH").
#pragma once

#include "solver.hpp"

namespace eddy {

class WcsphSolver : public SphSolver {
 public:
  WcsphSolver(Context& ctx, SphParticles& particles, const SphKernelConfig& cfg);

  std::string name() const override { return "wcsph"; }
  void computeDensity(SphParticles& p, const SphPhysics& phys) override;
  void computeAccelerations(SphParticles& p, const SphPhysics& phys) override;
  const cl::Buffer& densityPressure() const override { return rhop_; }
  const cl::Buffer& accelerations() const override { return acc_; }

 private:
  cl::Program program_;
  cl::Buffer rhop_, acc_;
  cl::KernelFunctor<cl::Buffer, cl::Buffer, cl::Buffer, cl::Buffer, cl::Buffer, cl_uint, cl_int4,
                    cl_float, cl_float4, cl_float, cl_float, cl_float, cl_float>
      density_{program_, "sph_density"};
  cl::KernelFunctor<cl::Buffer, cl::Buffer, cl::Buffer, cl::Buffer, cl::Buffer, cl::Buffer,
                    cl::Buffer, cl::Buffer, cl_uint, cl_int4, cl_float, cl_float4, cl_float,
                    cl_float, cl_float, cl_float, cl_float, cl_float, cl_float, cl_float>
      forces_{program_, "sph_forces"};
};

}  // namespace eddy
