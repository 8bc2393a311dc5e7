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


}  // namespace eddy
