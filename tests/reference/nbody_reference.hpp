// nbody_reference.hpp: double-precision CPU reference of the N-body force
// (tests only; not part of the library).
#pragma once

#include "cl.hpp"

#include <array>
#include <vector>

namespace eddy {

// Double-precision all-pairs accelerations.
std::vector<std::array<double, 3>> referenceAccelerations(const std::vector<cl_float4>& pos,
                                                          double G, double eps);
// Double-precision potentials phi_i = -sum_{j != i} m_j / sqrt(r_ij^2 + eps2)
// (without G, as nbody_potential and NBodyTree::potential).
std::vector<double> referencePotentials(const std::vector<cl_float4>& pos, double eps2);

}  // namespace eddy
