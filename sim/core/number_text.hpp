// number_text.hpp: a number beside a limit in a message, header-only so that
// every library (geometry included) can print one.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <string>

namespace eddy {

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
