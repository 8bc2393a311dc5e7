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
// Arguments of the headless demo `eddy` runs without a display.
std::vector<std::string> headlessDemoArgs();

}  // namespace eddy
