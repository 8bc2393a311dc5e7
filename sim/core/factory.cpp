#include "factory.hpp"

#include <algorithm>

#include "io.hpp"
#include "snapshot.hpp"

#include <cmath>

namespace eddy {

// Every answer comes from the simulation-type registry: this file names no
// simulation type.
const std::vector<std::string>& simulationNames() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> v;
    for (const auto& t : simulationTypes()) v.push_back(t.name);
    return v;
  }();
  return names;
}

const std::vector<ParamDesc>& paramDecl(std::string_view sim) {
  return simulationType(sim).params();
}

std::vector<std::string> sceneNames(std::string_view sim) { return simulationType(sim).scenes(); }

std::string defaultScene(std::string_view sim) { return sceneNames(sim).front(); }

size_t defaultCount(std::string_view sim) { return simulationType(sim).defaultCount; }

bool takesIcFile(std::string_view sim) { return simulationType(sim).takesIcFile; }

bool runsOnSeveralDevices(std::string_view sim) { return bool(simulationType(sim).makeMulti); }

namespace {
std::string typeNames(bool (*pick)(const SimulationType&)) {
  std::vector<std::string> v;
  for (const auto& t : simulationTypes())
    if (pick(t)) v.push_back(t.name);
  return joinNames(v);
}
}  // namespace

std::string icTypeNames() {
  return typeNames([](const SimulationType& t) { return t.takesIcFile; });
}

std::string multiDeviceTypeNames() {
  return typeNames([](const SimulationType& t) { return bool(t.makeMulti); });
}

std::string countNotUsedNote(std::string_view sim) {
  const SimulationType& t = simulationType(sim);
  return " is not used by --sim " + t.name + ": the particle count follows from the scene" +
         (t.countExample.empty() ? std::string() : " (e.g. --set " + t.countExample + ")");
}

void checkSceneSpec(const SceneSpec& spec, const Params& params) {
  const SimulationType& type = simulationType(spec.sim);
  if (type.checkSpec) type.checkSpec(spec);
  if (type.checkParams) type.checkParams(params);
  if (type.checkScene) type.checkScene(spec, params);
}

std::vector<std::string> unusedSceneParams(const SceneSpec& spec, const std::vector<std::string>& given) {
  const SimulationType& type = simulationType(spec.sim);
  if (!type.unusedParams) return {};
  const std::vector<std::string> unused = type.unusedParams(spec.scene);
  std::vector<std::string> out;
  for (const auto& k : given)
    if (std::find(unused.begin(), unused.end(), k) != unused.end() &&
        std::find(out.begin(), out.end(), k) == out.end())
      out.push_back(k);
  return out;
}

void checkParamsTogether(std::string_view sim, const Params& params) {
  const SimulationType& type = simulationType(sim);
  if (type.checkParams) type.checkParams(params);
}

std::unique_ptr<Simulation> makeSimulation(Context& ctx, const SceneSpec& spec,
                                           const Params& params) {
  const SimulationType& type = simulationType(spec.sim);
  checkSceneSpec(spec, params);
  return type.make(ctx, spec, params);
}

std::unique_ptr<Simulation> makeSimulation(const std::vector<Context*>& devices,
                                           const SceneSpec& spec, const Params& params,
                                           const MultiNBodyOptions& opts) {
  if (devices.empty()) throw Error("no devices given");
  if (devices.size() == 1) return makeSimulation(*devices.front(), spec, params);
  const SimulationType& type = simulationType(spec.sim);
  if (!type.makeMulti)
    throw Error("simulation '" + spec.sim + "' runs on one device only (--devices is for " +
                [] {
                  std::vector<std::string> multi;
                  for (const auto& t : simulationTypes())
                    if (t.makeMulti) multi.push_back(t.name);
                  return joinNames(multi);
                }() +
                ")");
  checkSceneSpec(spec, params);
  return type.makeMulti(devices, spec, params, opts);
}

namespace {
// A snapshot's step count, at most: counted on by a run (at most 2^40 steps)
// it stays exact in a double (2^53).
constexpr uint64_t kSnapshotMaxStep = uint64_t(1) << 52;
}  // namespace

void saveSnapshot(Simulation& sim, const SceneSpec& spec, const std::string& path) {
  // Never write a snapshot that --load would refuse (non-finite particles).
  if (auto b = sim.checkFiniteNow())
    throw Error(path + ": snapshot not saved: " + b->message(sim.kind()));
  // ... nor a step count it refuses (readSnapshotHeader: at most 2^52).
  if (sim.steps() > kSnapshotMaxStep)
    throw Error(path + ": snapshot not saved: step " + std::to_string(sim.steps()) +
                " is beyond 2^52, the most a snapshot is loaded with");
  SnapshotWriter w;
  w.addString("eddy/sim", sim.kind());
  w.addString("eddy/scene", spec.scene);
  w.addString("eddy/ic", spec.icPath);
  w.addU64("eddy/n", spec.n);
  w.addU64("eddy/count", sim.size());
  w.addU64("eddy/step", sim.steps());
  w.addF64("eddy/time", sim.syncTime());
  w.addString("eddy/device", sim.context().info().name);
  for (const auto& d : sim.params().declarations())
    w.addF64("param/" + d.name, sim.params().get(d.name));
  sim.saveState(w);
  w.write(path);
}

SnapshotHeader readSnapshotHeader(const Snapshot& snap) {
  SnapshotHeader h;
  h.spec.sim = snap.string("eddy/sim");
  if (!findSimulationType(h.spec.sim))
    snap.fail("unknown simulation '" + printable(h.spec.sim) + "'; known: " + joinNames(simulationNames()));
  h.spec.scene = snap.string("eddy/scene");
  h.spec.icPath = snap.string("eddy/ic");
  // The scene names what a reset rebuilds, the built-in probes and the run's
  // reports: a name no scene has (a cut or edited file) is refused here, not
  // at the first Reset. A run from an initial-conditions file has none.
  if (!h.spec.scene.empty()) {
    const auto names = sceneNames(h.spec.sim);
    if (std::find(names.begin(), names.end(), h.spec.scene) == names.end())
      snap.fail("scene '" + printable(h.spec.scene) + "' is not a " + h.spec.sim + " scene; known: " +
                joinNames(names));
  }
  h.spec.n = snap.u64("eddy/n");
  h.count = snap.u64("eddy/count");
  h.steps = snap.u64("eddy/step");
  h.time = snap.f64("eddy/time");
  if (snap.has("eddy/device")) h.device = snap.string("eddy/device");
  if (!std::isfinite(h.time) || h.time < 0) snap.fail("simulated time is not a finite number >= 0");
  // Steps are counted in 64 bits and written as numbers that must stay exact
  // in a double (2^53): a snapshot's step plus a run's (at most 2^40) fits.
  if (h.steps > kSnapshotMaxStep)
    snap.fail("step " + std::to_string(h.steps) + " is beyond 2^52: no run takes that many steps, and "
              "counting on from it would overflow");
  if (h.count == 0 || h.count > 0x7fffffffu)
    snap.fail("particle count " + std::to_string(h.count) + " is outside [1, 2^31 - 1]");
  h.params = Params(paramDecl(h.spec.sim));
  for (const auto& name : snap.names()) {
    if (name.rfind("param/", 0) != 0) continue;
    const std::string key = name.substr(6);
    if (!h.params.find(key))
      snap.fail("parameter '" + key + "' is not a " + h.spec.sim + " parameter; known: " +
                h.params.knownKeys());
    try {
      h.params.set(key, snap.f64(name));
    } catch (const ParamError& e) {
      snap.fail(e.what());
    }
  }
  return h;
}

LoadedSimulation loadSnapshot(Context& ctx, const Snapshot& snap) {
  SnapshotHeader h = readSnapshotHeader(snap);
  LoadedSimulation out;
  out.spec = h.spec;
  const SimulationType& type = simulationType(h.spec.sim);
  if (!type.load) snap.fail("restoring a '" + h.spec.sim + "' simulation is not implemented");
  out.sim = type.load(ctx, h.params, h.count, snap);
  out.sim->restoreClock(h.steps, h.time);
  return out;
}

std::string loadIgnoresNote(const std::string& key) {
  return "--load: '" + key + "' applies only when the scene is rebuilt; ignored (the loaded "
         "particles keep their values, and so does the next snapshot)";
}

}  // namespace eddy
