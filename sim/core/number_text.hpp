// number_text.hpp: numbers as text, for files and messages; header-only so
// that every library (geometry included) can print one. The three ways:
//   formatNumber       the shortest text that reads back as the same double
//                      (files, CSV cells, a value the user gave);
//   formatSignificant  `digits` significant digits (a measured value);
//   formatApart        a value beside a limit it must not print as.
#pragma once

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace eddy {

// Shortest text that reads back as the same double.
inline std::string formatNumber(double v) {
  char buf[64];
  const auto [ptr, ec] = std::to_chars(buf, buf + sizeof buf, v);
  return ec == std::errc() ? std::string(buf, ptr) : std::string("nan");
}

// v with `digits` significant digits (printf's %g): 0.21 for 0.20999999999999999.
inline std::string formatSignificant(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*g", std::clamp(digits, 1, 17), v);
  return buf;
}

// v with the fewest significant digits (at least 6: no 0.009999999999999995
// for a computed 0.01) that still put it on its own side of `limit`: a value
// just beyond a limit never prints as the limit itself (1000.0001 m against
// 1000 m showed "1000 m, out of range").
inline std::string formatApart(double v, double limit) {
  char buf[40];
  for (int digits = 6; digits <= 17; ++digits) {
    std::snprintf(buf, sizeof buf, "%.*g", digits, v);
    const double back = std::strtod(buf, nullptr);
    if (v == limit ? back == limit : (back > limit) == (v > limit) && back != limit) break;
  }
  return buf;
}

}  // namespace eddy
