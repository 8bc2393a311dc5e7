// rng.hpp: a seeded generator whose draws are the same on every platform
// (std:: distributions are implementation-defined, so we do our own).
#pragma once

#include "error.hpp"

#include <cmath>
#include <cstdint>
#include <random>
#include <sstream>
#include <string>

namespace eddy {

class Rng {
 public:
  explicit Rng(uint64_t seed) : engine_(seed) {}
  // Uniform in [0, 1) with 53 random bits.
  double uniform() { return double(engine_() >> 11) * 0x1.0p-53; }
  // Uniform in (0, 1]: safe under log().
  double uniformOpen() { return 1.0 - uniform(); }
  double uniform(double a, double b) { return a + (b - a) * uniform(); }
  // Standard normal (Box-Muller, one value per call).
  double normal() {
    const double r = std::sqrt(-2.0 * std::log(uniformOpen()));
    return r * std::cos(6.283185307179586 * uniform());
  }
  // Isotropic unit vector.
  void unitVector(double& x, double& y, double& z) {
    const double c = uniform(-1.0, 1.0), phi = 6.283185307179586 * uniform();
    const double s = std::sqrt(1.0 - c * c);
    x = s * std::cos(phi);
    y = s * std::sin(phi);
    z = c;
  }
  std::mt19937_64& engine() { return engine_; }
  // The full generator state as text, for restart snapshots (a simulation
  // that draws random numbers while it runs saves this in saveState()).
  std::string state() const {
    std::ostringstream o;
    o << engine_;
    return o.str();
  }
  void setState(const std::string& s) {
    std::istringstream i(s);
    std::mt19937_64 e;
    i >> e;
    if (!i) throw Error("random generator state in the snapshot is malformed");
    engine_ = e;
  }

 private:
  std::mt19937_64 engine_;
};

}  // namespace eddy
