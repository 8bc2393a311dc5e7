#include "interact.hpp"

#include "eddy_shared.h"

#include <cmath>

namespace eddy {

namespace {
cl_float4 f4(const Vec3f& v, float w = 0) {
  cl_float4 r;
  r.s[0] = v[0];
  r.s[1] = v[1];
  r.s[2] = v[2];
  r.s[3] = w;
  return r;
}
EnqueueArgs linear(Context& ctx, size_t n) {
  return EnqueueArgs(ctx.queue(), cl::NDRange(roundUp(n, EDDY_LINEAR_WG)),
                         cl::NDRange(EDDY_LINEAR_WG));
}
}  // namespace

InteractKernels::InteractKernels(Context& ctx) : ctx_(ctx), program_(ctx.buildProgram("interact.cl")) {}

cl::Event InteractKernels::push(const cl::Buffer& pos, const cl::Buffer& vel, size_t n,
                                const Ray& ray, float radius, const Vec3f& dv) {
  if (!(radius > 0) || !std::isfinite(radius))
    throw Error("push: radius must be a positive finite number");
  const float len = std::sqrt(ray.dir[0] * ray.dir[0] + ray.dir[1] * ray.dir[1] +
                              ray.dir[2] * ray.dir[2]);
  if (!(len > 0) || !std::isfinite(len)) throw Error("push: the ray has no direction");
  const Vec3f dir{ray.dir[0] / len, ray.dir[1] / len, ray.dir[2] / len};
  try {
    return push_(linear(ctx_, n), pos, vel, cl_uint(n), f4(ray.origin), f4(dir), radius, f4(dv));
  } catch (const cl::Error& e) {
    throw Error("push kernel: " + describe(e));
  }
}

cl::Event InteractKernels::speed(const cl::Buffer& vel, const cl::Buffer& out, size_t n) {
  try {
    return speed_(linear(ctx_, n), vel, out, cl_uint(n));
  } catch (const cl::Error& e) {
    throw Error("speed kernel: " + describe(e));
  }
}

cl::Event InteractKernels::componentW(const cl::Buffer& v, const cl::Buffer& out, size_t n) {
  try {
    return componentW_(linear(ctx_, n), v, out, cl_uint(n));
  } catch (const cl::Error& e) {
    throw Error("component kernel: " + describe(e));
  }
}

cl::Event InteractKernels::component2(const cl::Buffer& v, const cl::Buffer& out, size_t n,
                                      unsigned c) {
  if (c > 1) throw Error("component2: component must be 0 or 1");
  try {
    return component2_(linear(ctx_, n), v, out, cl_uint(n), cl_uint(c));
  } catch (const cl::Error& e) {
    throw Error("component kernel: " + describe(e));
  }
}

}  // namespace eddy
