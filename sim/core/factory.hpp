// factory.hpp: building a simulation from names (CLI, GUI, config files).
#pragma once

#include "registry.hpp"
#include "simulation.hpp"

#include <memory>
#include <string>
#include <vector>

namespace eddy {

struct MultiNBodyOptions;

// Front doors to the simulation-type registry (sim/core/registry.hpp).
const std::vector<std::string>& simulationNames();
// Throws eddy::Error for an unknown simulation name.
const std::vector<ParamDesc>& paramDecl(std::string_view sim);
std::vector<std::string> sceneNames(std::string_view sim);
std::string defaultScene(std::string_view sim);
size_t defaultCount(std::string_view sim);
// Front-end checks and their messages, from the type records (no names compared).
bool takesIcFile(std::string_view sim);
std::string icTypeNames();           // the types that read initial-conditions files ("nbody")
bool runsOnSeveralDevices(std::string_view sim);
std::string multiDeviceTypeNames();  // the types that split over devices ("nbody")
// " is not used by --sim sph: the particle count follows from the scene
// (e.g. --set spacing=0.002)", for a type whose count follows from its scene.
std::string countNotUsedNote(std::string_view sim);

// The type's host-only checks (SimulationType::checkSpec, checkParams,
// checkScene), before any device is opened; makeSimulation runs them too.
// Throws SolidSpecError or eddy::Error naming the problem.
void checkSceneSpec(const SceneSpec& spec, const Params& params);
// Only the parameters' checks (SimulationType::checkParams): for a snapshot
// that continues with changed parameters.
void checkParamsTogether(std::string_view sim, const Params& params);

// Of `given` (parameter names, in order), those building the scene of `spec`
// does not read (SimulationType::unusedParams), each once.
std::vector<std::string> unusedSceneParams(const SceneSpec& spec, const std::vector<std::string>& given);

// Builds the scene and the simulation with the given parameter values. The
// device memory needed is checked before the scene is built.
std::unique_ptr<Simulation> makeSimulation(Context& ctx, const SceneSpec& spec,
                                           const Params& params);
// The same split over several devices (N-body only, MultiNBodySim). Checks
// that every device can hold the bodies before the scene is built. With one
// device it is the single-device simulation.
std::unique_ptr<Simulation> makeSimulation(const std::vector<Context*>& devices,
                                           const SceneSpec& spec, const Params& params,
                                           const MultiNBodyOptions& opts);

// ---- Restart snapshots (format: sim/snapshot.hpp) ----
// Generic blobs: eddy/sim, eddy/scene, eddy/ic, eddy/n, eddy/count, eddy/step,
// eddy/time, eddy/device and param/<name> (f64) for every declared parameter;
// the simulation adds its own through Simulation::saveState().
void saveSnapshot(Simulation& sim, const SceneSpec& spec, const std::string& path);

struct SnapshotHeader {
  SceneSpec spec;
  Params params;
  uint64_t count = 0, steps = 0;
  double time = 0;
  std::string device;
};
// Decodes and checks the generic part (host only): known simulation, every
// parameter known and in range, sane count, step and time.
SnapshotHeader readSnapshotHeader(const class Snapshot& snap);

struct LoadedSimulation {
  std::unique_ptr<Simulation> sim;
  SceneSpec spec;
};
// Rebuilds the simulation exactly as saved; running it on gives the same bits
// as running straight through on the same device.
LoadedSimulation loadSnapshot(Context& ctx, const class Snapshot& snap);

// Parameter changes given with a snapshot (--set, a config's "params") apply
// on top of its values, except those marked `rebuild` (spacing, seed, ...):
// they only matter when a scene is built, so eddy-cli run --load and the app's
// --load skip them with this note ("--load: 'spacing' applies only ...").
std::string loadIgnoresNote(const std::string& key);

}  // namespace eddy
