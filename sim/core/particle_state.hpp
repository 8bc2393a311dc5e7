// particle_state.hpp: one particle state as plain host arrays, for export (VTK) and
// anything else that wants named per-particle fields without knowing the
// simulation. (Called ParticleFrame before issue 10: "frame" is now only the
// desktop app's displayed picture, Controller::frame().)
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace eddy {

// A named per-particle array: `components` floats per particle (1 = scalar,
// 3 = vector), particle-major.
struct PointArray {
  std::string name;
  unsigned components = 1;
  std::vector<float> values;
};

struct ParticleState {
  std::vector<float> positions;    // x, y, z per particle
  std::vector<PointArray> arrays;  // "velocity" (3) first, then the simulation's fields
  double time = 0;
  unsigned long long step = 0;
  size_t size() const { return positions.size() / 3; }
};

}  // namespace eddy
