#include "nbody_reference.hpp"

#include <cmath>

namespace eddy {

std::vector<std::array<double, 3>> referenceAccelerations(const std::vector<cl_float4>& pos,
                                                          double G, double eps) {
  const size_t n = pos.size();
  std::vector<std::array<double, 3>> a(n, {0, 0, 0});
  const double eps2 = eps * eps;
  for (size_t i = 0; i < n; ++i)
    for (size_t j = 0; j < n; ++j) {
      if (i == j) continue;
      const double dx = double(pos[j].s[0]) - pos[i].s[0];
      const double dy = double(pos[j].s[1]) - pos[i].s[1];
      const double dz = double(pos[j].s[2]) - pos[i].s[2];
      const double r2 = dx * dx + dy * dy + dz * dz + eps2;
      const double s = G * double(pos[j].s[3]) / (r2 * std::sqrt(r2));
      a[i][0] += dx * s;
      a[i][1] += dy * s;
      a[i][2] += dz * s;
    }
  return a;
}

std::vector<double> referencePotentials(const std::vector<cl_float4>& pos, double eps2) {
  const size_t n = pos.size();
  std::vector<double> phi(n, 0.0);
  for (size_t i = 0; i < n; ++i)
    for (size_t j = 0; j < n; ++j) {
      if (i == j) continue;
      const double dx = double(pos[j].s[0]) - pos[i].s[0];
      const double dy = double(pos[j].s[1]) - pos[i].s[1];
      const double dz = double(pos[j].s[2]) - pos[i].s[2];
      phi[i] -= double(pos[j].s[3]) / std::sqrt(dx * dx + dy * dy + dz * dz + eps2);
    }
  return phi;
}

}  // namespace eddy
