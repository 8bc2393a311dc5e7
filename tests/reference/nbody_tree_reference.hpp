// CPU references for the N-body tree tests (tests/test_nbody_tree.cpp):
// Morton keys with the device's float quantisation, node moments as direct
// double sums, and statistics of relative force errors.
#pragma once

#include "cl.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <vector>

namespace eddy::test {

inline uint64_t spread21(uint64_t x) {
  uint64_t r = 0;
  for (int b = 0; b < 21; ++b) r |= ((x >> b) & 1u) << (3 * b);
  return r;
}

// The cell of one coordinate, in the same float arithmetic as tree_cell().
inline uint64_t cell21(float x, float lo, float scale) {
  const float c = (x - lo) * scale;
  if (!(c >= 0.0f)) return 0;
  return uint64_t(uint32_t(std::min(c, float((1u << 21) - 1u))));
}

inline uint64_t mortonKey(const cl_float4& p, const cl_float4& boxMin, float scale) {
  return (spread21(cell21(p.s[0], boxMin.s[0], scale)) << 2) |
         (spread21(cell21(p.s[1], boxMin.s[1], scale)) << 1) |
         spread21(cell21(p.s[2], boxMin.s[2], scale));
}

// Mass, centre of mass and traceless quadrupole of bodies [first, last] of
// pts, in double: Q = sum m (3 d d^T - |d|^2 I), d = x - com.
struct Moments {
  double m = 0;
  std::array<double, 3> c{};
  std::array<double, 6> q{};  // xx, yy, zz, xy, xz, yz
};
inline Moments moments(const std::vector<cl_float4>& pts, size_t first, size_t last) {
  Moments r;
  for (size_t k = first; k <= last; ++k) {
    r.m += pts[k].s[3];
    for (int a = 0; a < 3; ++a) r.c[a] += double(pts[k].s[3]) * pts[k].s[a];
  }
  for (int a = 0; a < 3; ++a) r.c[a] = r.m > 0 ? r.c[a] / r.m : 0;
  for (size_t k = first; k <= last; ++k) {
    const double m = pts[k].s[3];
    const double d[3] = {pts[k].s[0] - r.c[0], pts[k].s[1] - r.c[1], pts[k].s[2] - r.c[2]};
    const double d2 = d[0] * d[0] + d[1] * d[1] + d[2] * d[2];
    r.q[0] += m * (3 * d[0] * d[0] - d2);
    r.q[1] += m * (3 * d[1] * d[1] - d2);
    r.q[2] += m * (3 * d[2] * d[2] - d2);
    r.q[3] += m * 3 * d[0] * d[1];
    r.q[4] += m * 3 * d[0] * d[2];
    r.q[5] += m * 3 * d[1] * d[2];
  }
  return r;
}

// Relative force errors |a - ref| / |ref| (bodies with ref = 0 compare
// absolutely; with byMean, every error is relative to the mean |ref|) and
// their median, 99th percentile and maximum.
struct ErrorStats {
  double median = 0, p99 = 0, max = 0;
};
inline ErrorStats forceErrors(const std::vector<cl_float4>& acc,
                              const std::vector<std::array<double, 3>>& ref, bool byMean = false) {
  std::vector<double> e(acc.size());
  double mean = 0;
  for (const auto& r : ref) mean += std::sqrt(r[0] * r[0] + r[1] * r[1] + r[2] * r[2]) / double(ref.size());
  for (size_t i = 0; i < acc.size(); ++i) {
    double d2 = 0, r2 = 0;
    for (int k = 0; k < 3; ++k) {
      const double d = acc[i].s[k] - ref[i][k];
      d2 += d * d;
      r2 += ref[i][k] * ref[i][k];
    }
    const double scale = byMean ? mean * mean : r2;
    e[i] = scale > 0 ? std::sqrt(d2 / scale) : std::sqrt(d2);
  }
  std::sort(e.begin(), e.end());
  ErrorStats s;
  if (e.empty()) return s;
  s.median = e[e.size() / 2];
  s.p99 = e[std::min(e.size() - 1, size_t(std::ceil(0.99 * double(e.size()))) - 1)];
  s.max = e.back();
  return s;
}

}  // namespace eddy::test
