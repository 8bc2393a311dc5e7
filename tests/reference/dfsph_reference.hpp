// DFSPH's sums (kernels/sph/sph_dfsph.cl) in double precision, brute force
// over all pairs within h (the float neighbour test of the kernels) and their
// wall images: the references of tests/test_dfsph_kernels.cpp.
#pragma once

#include "dfsph.hpp"
#include "sph.hpp"

#include <array>
#include <vector>

namespace eddy {

struct DfsphReferenceInput {
  std::vector<cl_float4> pos, vel;
  std::vector<double> rho;  // the device's densities (rate, density error)
  std::array<double, 3> tank{};
  double h = 0, mass = 0, rho0 = 0, gradScale = 1;
};
// rho_i, D_i (the factor is 1 / (s D_i)) and the neighbour count (images included).
void dfsphReferenceDensity(const DfsphReferenceInput& in, std::vector<double>& rho,
                           std::vector<double>& D, std::vector<unsigned>& count);
// Drho_i/Dt (eq. 2 of sph_dfsph.cl); scale[i] = sum of |pair terms|.
void dfsphReferenceRate(const DfsphReferenceInput& in, std::vector<double>& rate,
                        std::vector<double>& scale);
// -s sum_j m (k_i + k_j) grad_i W_ij; scale[i] = sum of |pair terms|.
void dfsphReferencePressureAccel(const DfsphReferenceInput& in, const std::vector<double>& k,
                                 std::vector<std::array<double, 3>>& acc,
                                 std::vector<double>& scale);

// The float condition of particle i's kernel-gradient sums: the device
// computes q = r/h in float, so each term's (1 - q)^3 carries about
// 3q/(1 - q) float epsilons; averaged with the weight |grad W| ~ q (1 - q)^3
// over its pairs (images included). A particle whose neighbours all sit near
// the support's edge (a nearly isolated one, with a huge factor) is computed
// less exactly, by that much.
double dfsphReferenceGradCondition(const DfsphReferenceInput& in, size_t i);

// The gradient renormalisation C of sph_dfsph.cl (dfsph_gradient_measure):
// the inverse of the mean s M_i, M_i = -sum_j (m / rho0) x_ij (x) grad_i W_ij
// (images included), over the particles whose device density in.rho[i] is at
// least EDDY_DFSPH_GRAD_FULL_SUPPORT rho0 (compared in float, as the kernel)
// and whose s M_i has no eigenvalue under EDDY_DFSPH_GRAD_MIN_EIGEN;
// the identity with fewer than EDDY_DFSPH_GRAD_MIN_SAMPLES of them or an
// entry more than EDDY_DFSPH_GRAD_LIMIT off it. (xx, yy, zz, xy, xz, yz);
// *samples gets the count. The eigenvalue test is the one float can decide
// otherwise: *borderline (if given) gets the particles whose smallest
// eigenvalue is within 1e-4 of the bound, and the ones listed in *flip are
// decided the other way (a caller tries each choice).
std::array<double, 6> dfsphReferenceGradient(const DfsphReferenceInput& in, size_t* samples,
                                             std::vector<size_t>* borderline = nullptr,
                                             const std::vector<size_t>* flip = nullptr);

}  // namespace eddy
