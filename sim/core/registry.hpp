// registry.hpp: one record per simulation type.
//
// Each simulation type (sim/nbody, sim/sph, ...) describes itself in a
// SimulationType: its name, declared parameters, scenes, the rules a scene
// spec must follow, a factory and a snapshot loader. The factory
// (makeSimulation, loadSnapshot), config files and the front ends ask this
// registry; nothing outside a type's own folder compares its name.
//
// The core never includes a simulation's headers: the types are listed in
// one place, registerBuiltinSimulationTypes() (sim/builtin_types.cpp), called
// once on first use of the registry. An explicit list rather than static
// self-registering objects, because eddy_core is a static library: an object
// file that nothing references is dropped by the linker, and with it any
// static registrar it holds (and the order of static initialisation across
// files is unspecified).
#pragma once

#include "body_spec.hpp"
#include "params.hpp"
#include "shape.hpp"

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace eddy {

class Context;
class Simulation;
class Snapshot;
struct MultiNBodyOptions;

struct SceneSpec {
  std::string sim = "nbody";  // a registered simulation type (defaultSimulationName())
  std::string scene;          // "" = the simulation's default scene
  size_t n = 0;               // body count (N-body); 0 = default
  std::string icPath;         // N-body: initial conditions CSV instead of a scene
  std::vector<ShapeSpec> obstacles;  // static obstacles added to the scene (--obstacle)
  std::vector<BodySpec> bodies;  // SPH: rigid bodies added to the scene (--body, config "bodies")
};

// A problem of one obstacle (body = false) or body of a SceneSpec, at `index`
// of SceneSpec::obstacles / bodies, so that a front end can say where that
// solid came from (a flag, a config file's key).
class SolidSpecError : public Error {
 public:
  SolidSpecError(const std::string& what, bool isBody, size_t at)
      : Error(what), body(isBody), index(at) {}
  bool body;
  size_t index;
};

struct SimulationType {
  std::string name;                                  // "nbody", "sph": --sim, config "sim", snapshots
  std::function<const std::vector<ParamDesc>&()> params;  // the declared parameters
  std::function<std::vector<std::string>()> scenes;  // scene names, the default first
  size_t defaultCount = 0;                           // particles when n is 0 (0: from the scene)
  // What the front ends need to know, so that they never compare names:
  bool takesIcFile = false;       // initial conditions from a CSV file (--ic, config "ic")
  bool takesObstacles = false;    // static obstacles (--obstacle, config "obstacles")
  std::string countParam;         // defaultCount 0: the parameter that sets the count ("spacing")
  std::string countExample;       // ... and an example assignment ("spacing=0.002")
  bool appDefault = false;        // the desktop app opens this type when none is asked for
  std::string appScene;           // ... with this scene ("" = the type's default scene)
  size_t appCpuCount = 0;         // the app's count on a CPU device (0 = as on a GPU)
  size_t demoCount = 0;           // --n of the app's headless demo run (0: no --n)
  double demoUntil = 0;           // the headless demo's simulated end time (0: 200 steps)
  std::vector<std::string> demoCpuSets;  // its --set on a CPU device (fewer particles)
  bool appGlow = false;           // the app draws the particles as glowing points (stars)
  // Spec rules: throws eddy::Error when the spec asks for something the type
  // cannot do (an initial-conditions file, a count). Called before building.
  std::function<void(const SceneSpec&)> checkSpec;
  // Host-only checks of parameter values taken together (e.g. a lower bound
  // above its upper bound): throws eddy::Error naming both. Called before a
  // scene is built or a snapshot continues (eddy-cli run, before the device
  // is opened) and by makeSimulation; never per single change, so that a
  // panel may set two related parameters one after the other. Empty: none.
  std::function<void(const Params&)> checkParams;
  // Host-only checks of a spec with its parameter values before anything is
  // built: solids read (a mesh file opened and checked) and placed against
  // the scene's domain. Throws SolidSpecError for a problem of one declared
  // obstacle or body, eddy::Error otherwise. Empty: none.
  std::function<void(const SceneSpec&, const Params&)> checkScene;
  // The declared parameters that building this scene does not read (a front
  // end notes them when given); empty function: every parameter applies.
  std::function<std::vector<std::string>(const std::string& scene)> unusedParams;
  // Builds the scene and the simulation on one device.
  std::function<std::unique_ptr<Simulation>(Context&, const SceneSpec&, const Params&)> make;
  // Several devices; empty: one device only.
  std::function<std::unique_ptr<Simulation>(const std::vector<Context*>&, const SceneSpec&,
                                            const Params&, const MultiNBodyOptions&)>
      makeMulti;
  // Rebuilds a saved simulation of `count` particles from the type's own
  // snapshot blobs (the generic part is already checked). Empty: not restorable.
  std::function<std::unique_ptr<Simulation>(Context&, const Params&, uint64_t count,
                                            const Snapshot&)>
      load;
  // The files such a restore reads besides the snapshot (SPH: the mesh files
  // of its obstacles and bodies), without a device, so that a run's outputs
  // never overwrite one (eddy-cli run). Empty: none.
  std::function<std::vector<std::string>(const Snapshot&)> snapshotInputs;
};

// Adds a type (registerBuiltinSimulationTypes calls it once per type).
// Throws eddy::Error for a duplicate or empty name.
void registerSimulationType(SimulationType type);
// Every registered type, in registration order.
const std::vector<SimulationType>& simulationTypes();
// nullptr when unknown.
const SimulationType* findSimulationType(std::string_view name);
// Throws eddy::Error "unknown simulation 'x'; known: a, b".
const SimulationType& simulationType(std::string_view name);
// The first registered type: the default of --sim and of config files.
const std::string& defaultSimulationName();

// Defined in sim/builtin_types.cpp: the one list of the built-in types.
void registerBuiltinSimulationTypes();

}  // namespace eddy
