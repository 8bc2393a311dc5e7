// factory.hpp: building a simulation from names (CLI, GUI, config files).
#pragma once

#include "simulation.hpp"

#include <memory>
#include <string>
#include <vector>

namespace eddy {

struct MultiNBodyOptions;

struct SceneSpec {
  std::string sim = "nbody";  // "nbody" | "sph"
  std::string scene;          // "" = the simulation's default scene
  size_t n = 0;               // body count (N-body); 0 = default
  std::string icPath;         // N-body: initial conditions CSV instead of a scene
};

const std::vector<std::string>& simulationNames();
// Throws eddy::Error for an unknown simulation name.
const std::vector<ParamDesc>& paramDecl(std::string_view sim);
std::vector<std::string> sceneNames(std::string_view sim);
std::string defaultScene(std::string_view sim);
size_t defaultCount(std::string_view sim);

// Builds the scene and the simulation with the given parameter values.
std::unique_ptr<Simulation> makeSimulation(Context& ctx, const SceneSpec& spec,
                                           const Params& params);
// The same split over several devices (N-body only, MultiNBodySim). Checks
// that every device can hold the bodies before the scene is built. With one
// device it is the single-device simulation.
std::unique_ptr<Simulation> makeSimulation(const std::vector<Context*>& devices,
                                           const SceneSpec& spec, const Params& params,
                                           const MultiNBodyOptions& opts);

}  // namespace eddy
