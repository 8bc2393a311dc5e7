// interact.hpp: kernels for interactive front ends (kernels/interact.cl),
// usable by any simulation with float4 positions and velocities.
#pragma once

#include "simulation.hpp"

namespace eddy {

class InteractKernels {
 public:
  explicit InteractKernels(Context& ctx);

  // Phase "push": v += dv * (1 - d^2/R^2)^2 for particles within R of the ray.
  cl::Event push(const cl::Buffer& pos, const cl::Buffer& vel, size_t n, const Ray& ray,
                 float radius, const Vec3f& dv);
  // Phase "color": out_i = |vel_i.xyz|.
  cl::Event speed(const cl::Buffer& vel, const cl::Buffer& out, size_t n);
  // Phase "color": out_i = v_i.w (mass in an N-body position buffer).
  cl::Event componentW(const cl::Buffer& v, const cl::Buffer& out, size_t n);
  // Phase "color": out_i = component c (0 or 1) of a float2 buffer.
  cl::Event component2(const cl::Buffer& v, const cl::Buffer& out, size_t n, unsigned c);

 private:
  Context& ctx_;
  cl::Program program_;
  KernelFunctor<cl::Buffer, cl::Buffer, cl_uint, cl_float4, cl_float4, cl_float, cl_float4>
      push_{program_, "eddy_push"};
  KernelFunctor<cl::Buffer, cl::Buffer, cl_uint> speed_{program_, "eddy_speed"};
  KernelFunctor<cl::Buffer, cl::Buffer, cl_uint> componentW_{program_, "eddy_component_w"};
  KernelFunctor<cl::Buffer, cl::Buffer, cl_uint, cl_uint> component2_{program_,
                                                                         "eddy_component2"};
};

}  // namespace eddy
