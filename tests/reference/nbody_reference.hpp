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

}  // namespace eddy
