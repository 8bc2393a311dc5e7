// sph_reference.hpp: double-precision CPU references of the SPH kernels
// (tests only; not part of the library). They use the library's host
// Wendland kernel (sphKernelW / sphKernelDW, sim/sph/sph.hpp).
#pragma once

#include "sph.hpp"

#include <algorithm>
#include <array>
#include <vector>

namespace eddy {

// Tait pressure, clamped at 0.
double sphReferencePressure(double rho, double rho0, double B);

struct SphReferenceInput {
  std::vector<cl_float4> pos, vel;
  std::vector<cl_float2> rhop;  // forces only: the device's density and pressure
  // Boundary particles (w = psi) and their velocities: continuity only (the
  // other references leave the boundary to the test).
  std::vector<cl_float4> bpos, bvel;
  std::array<double, 3> tank{};
  SphPhysics phys;
};
// Brute force over all pairs (and their wall images), as the kernels define
// them. Density returns rho per particle; count = real neighbours (r^2 < h^2
// in float, as the kernel evaluates it), self included.
void sphReferenceDensity(const SphReferenceInput& in, std::vector<double>& rho,
                         std::vector<unsigned>& count);
// Accelerations; scale[i] = sum of |pair terms| x their float condition number + g
// (the size of the float rounding to expect; see the .cpp).
void sphReferenceForces(const SphReferenceInput& in, std::vector<std::array<double, 3>>& acc,
                        std::vector<double>& scale);
// The continuity rate with delta-SPH diffusion (sph_continuity.cl) of the
// carried densities rho: drho per particle, and scale[i] = the sum of the
// pair terms' magnitudes (the size of the float rounding to expect). The
// boundary particles in.bpos add psi_b (v_i - v_b).grad W_ib (no diffusion).
void sphReferenceContinuity(const SphReferenceInput& in, const std::vector<double>& rho,
                            std::vector<double>& drho, std::vector<double>& scale);
// The float neighbour test of the kernels: (dx*dx + dy*dy) + dz*dz < h*h in float.
bool sphIsNeighbour(const cl_float4& a, const cl_float4& b, float h);

// The tank's wall images as the kernels take them (sph_common.cl: sph_walls,
// sph_mirror), decided in float as the kernels do: bit a of the mask for the
// nearer wall of axis a (the one at 0 at the middle), at w0[a]; bit a + 3 for
// the other wall, at w1[a], only across a tank thinner than h. A neighbour's
// images are the nonempty subsets s of the mask holding at most one wall of
// each axis (sphIsImage). The walls are the kernels' float ones.
struct SphWalls {
  unsigned mask = 0;
  double w0[3] = {0, 0, 0}, w1[3] = {0, 0, 0};
};
SphWalls sphWalls(const cl_float4& p, const std::array<double, 3>& tank, double h);
inline bool sphIsImage(unsigned s) { return s != 0 && (s & (s >> 3)) == 0; }
// Coordinate a of image s of a point at x, and whether the image flips
// velocity component a.
inline double sphMirror(double x, unsigned s, int a, const SphWalls& W) {
  return (s >> a) & 1u ? 2 * W.w0[a] - x : ((s >> (a + 3)) & 1u ? 2 * W.w1[a] - x : x);
}
inline bool sphMirrorFlips(unsigned s, int a) { return ((s | (s >> 3)) >> a) & 1u; }
// Velocity component a as the particle moved (sph_moved_v): 0 on an axis a
// wall turned it back on in its last step (bit a of v.w).
inline double sphMovedV(const cl_float4& v, int a) {
  const unsigned t = unsigned(std::clamp(v.s[3], 0.0f, 7.0f));
  return (t >> a) & 1u ? 0.0 : double(v.s[a]);
}
// The terms a neighbour of p adds at most (itself and its images): the
// product over the axes of 1 + the walls of the axis within h (a margin of
// 1e-6 h for the float decision), for the float summation's error bound.
int sphTermsPerNeighbour(const cl_float4& p, const std::array<double, 3>& tank, double h);

}  // namespace eddy
