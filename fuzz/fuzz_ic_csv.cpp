// libFuzzer target: the --ic initial-conditions CSV reader. Any input either
// gives bodies with finite values and positive masses or eddy::Error.
#include "nbody.hpp"

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <sstream>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::istringstream in(std::string(reinterpret_cast<const char*>(data), size));
  try {
    const auto bodies = eddy::parseBodiesCsv(in, "fuzz.csv");
    if (bodies.empty()) std::abort();
    for (const auto& b : bodies)
      if (!std::isfinite(b.x) || !std::isfinite(b.y) || !std::isfinite(b.z) ||
          !std::isfinite(b.vx) || !std::isfinite(b.vy) || !std::isfinite(b.vz) || !(b.m > 0))
        std::abort();
  } catch (const eddy::Error&) {
  }
  return 0;
}
