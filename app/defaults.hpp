// defaults.hpp: what the desktop app starts with. The ONE place the default
// simulation and scene are chosen: the SPH dam break where the factory knows
// "sph", else the N-body Plummer sphere.
#pragma once

#include "factory.hpp"

#include <string>
#include <vector>

namespace eddy {

SceneSpec defaultAppSpec();
// The scene the app picks when the user switches to `sim` (the app default for
// the default simulation, else the factory's default scene).
std::string defaultSceneFor(const std::string& sim);
// The particle count the app starts `sim` with when none is given: 0 (the
// factory's default) on a GPU; on a CPU device a count that still moves
// interactively (N-body: 2048 bodies, all pairs).
size_t defaultAppCount(const std::string& sim, bool gpu);
// The parameters the app starts `sim` with: the declared defaults, except
// SPH's capacity_factor = kAppSphCapacityFactor (room to drop blocks of fluid;
// eddy-cli keeps the declared 1 and pays no memory for it).
inline constexpr double kAppSphCapacityFactor = 4.0;
Params defaultAppParams(const std::string& sim);
// Arguments of the headless demo `eddy` runs without a display.
std::vector<std::string> headlessDemoArgs();

}  // namespace eddy
