// defaults.hpp: what the desktop app starts with. The ONE place the default
// simulation and scene are chosen: the SPH dam break where the factory knows
// "sph", else the N-body Plummer sphere.
#pragma once

#include "factory.hpp"

#include <optional>
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
// eddy-cli keeps the declared 1 and pays no memory for it) and the solver
// kAppSphSolver (the incompressible DFSPH: large time steps, so the app keeps
// real time; eddy-cli keeps the declared default).
inline constexpr double kAppSphCapacityFactor = 4.0;
inline constexpr const char* kAppSphSolver = "dfsph";
Params defaultAppParams(const std::string& sim);
// "solver=dfsph" where `sim` declares that choice of a `solver` parameter, else none.
std::optional<std::string> appSolverAssignment(const std::string& sim);

// The headless demo `eddy` runs without a display (app/demo.hpp): the app's
// default scene with the app's solver, for the type's demoUntil simulated
// seconds (else 200 steps), with the type's demoCount and, on a CPU device,
// its demoCpuSets.
struct DemoRun {
  SceneSpec spec;
  std::vector<std::string> sets;  // --set key=value
  double until = 0;               // > 0: simulated end time, else `steps`
  uint64_t steps = 200;
};
DemoRun headlessDemoRun(bool gpu);
// The same run as `eddy-cli run` arguments (to repeat it with --export).
std::vector<std::string> headlessDemoArgs(bool gpu = true);

}  // namespace eddy
