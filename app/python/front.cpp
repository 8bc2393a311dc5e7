// front.cpp: the Python module's front end without Python (front.hpp).
#include "front.hpp"

#include "io.hpp"
#include "shape_spec_io.hpp"
#include "snapshot.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <sstream>

namespace eddy::python {

namespace {

// A value's type in messages, in the words config files use ("expected a
// string, one of: ..., got a number").
std::string typeName(const ParamValue& v) {
  switch (v.kind) {
    case ParamValue::Kind::Number: return "a number";
    case ParamValue::Kind::Bool: return "a bool";
    case ParamValue::Kind::Text: return "a string";
    case ParamValue::Kind::Other: break;
  }
  return "an object of type " + v.text;
}

bool contains(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

// eddy-cli run's checks of --sim, --scene, --n, --ic and --device, with the
// keyword arguments named instead of the flags.
void checkArgs(const std::string& sim, const std::string& scene, std::optional<long long> n,
               const std::string& ic, const std::string& device) {
  const auto& sims = simulationNames();
  if (!contains(sims, sim))
    throw ArgumentError("sim='" + sim + "': unknown simulation; known: " + joinNames(sims));
  if (!scene.empty() && !contains(sceneNames(sim), scene))
    throw ArgumentError("scene='" + scene + "': unknown " + sim + " scene; known: " +
                        joinNames(sceneNames(sim)));
  if (n && (*n < 0 || static_cast<unsigned long long>(*n) < kLimitN.min ||
            static_cast<unsigned long long>(*n) > kLimitN.max))
    throw ArgumentError("n: " + std::to_string(*n) + " is out of range [" +
                        std::to_string(kLimitN.min) + ", " + std::to_string(kLimitN.max) + "]");
  if (!ic.empty() && !takesIcFile(sim))
    throw ArgumentError("ic is only for sim=" + icTypeNames());
  if (!ic.empty() && (!scene.empty() || n))
    throw ArgumentError("ic replaces the scene: do not combine it with scene or n");
  if (n && defaultCount(sim) == 0) {
    // The registry's note, in keyword form: "(e.g. params={'spacing': 0.002})".
    const SimulationType& t = simulationType(sim);
    std::string example;
    if (const auto eq = t.countExample.find('='); eq != std::string::npos)
      example = " (e.g. params={'" + t.countExample.substr(0, eq) + "': " +
                t.countExample.substr(eq + 1) + "})";
    throw ArgumentError("n is not used by sim='" + sim +
                        "': the particle count follows from the scene" + example);
  }
  if (!isDeviceSpec(device)) throw ArgumentError("device " + deviceSpecError(device));
}

// Obstacles and bodies only for types that take solids; the probe cadence
// given once; no probes asked of a type without them (before the device opens).
void checkCadence(const std::vector<ProbeSpec>& probes, std::optional<unsigned long long> every,
                  std::optional<double> dt) {
  if (every && dt) throw ArgumentError("give either probe_every or probe_dt, not both");
  if (every && (*every < kLimitEvery.min || *every > kLimitEvery.max))
    throw ArgumentError("probe_every: " + std::to_string(*every) + " is out of range [" +
                        std::to_string(kLimitEvery.min) + ", " + std::to_string(kLimitEvery.max) + "]");
  if (dt && !(*dt > 0 && *dt <= kMaxUntil))
    throw ArgumentError("probe_dt: " + formatNumber(*dt) + " is out of range: must be > 0 and at most " +
                        formatNumber(kMaxUntil) + " (simulated seconds)");
  try {
    checkProbeNames(probes);
  } catch (const Error& e) {
    throw ArgumentError(std::string("probes: ") + e.what());
  }
}

void checkSolidsAndProbes(const std::string& sim, const SceneSpec& spec,
                          const std::vector<ProbeSpec>& probes,
                          std::optional<unsigned long long> every, std::optional<double> dt) {
  const SimulationType& t = simulationType(sim);
  if (!t.takesObstacles && !spec.obstacles.empty())
    throw ArgumentError("obstacles: sim='" + sim + "' has no obstacles");
  if (!t.takesObstacles && !spec.bodies.empty())
    throw ArgumentError("bodies: sim='" + sim + "' has no rigid bodies");
  checkCadence(probes, every, dt);
}

// Mesh files as absolute paths (eddy-cli's --obstacle and --body do the same):
// a snapshot records the path, and load() from another working folder must
// still find the file. A relative path is relative to the current folder (a
// config file's paths are already relative to the file's folder).
std::vector<ShapeSpec> absoluteMeshPaths(std::vector<ShapeSpec> v) {
  for (ShapeSpec& s : v) s = withAbsoluteMeshPath(std::move(s));
  return v;
}

std::vector<BodySpec> absoluteMeshPaths(std::vector<BodySpec> v) {
  for (BodySpec& b : v) b.shape = withAbsoluteMeshPath(std::move(b.shape));
  return v;
}

// The type's host-only checks of the scene (checkSceneSpec: parameters that
// contradict each other, solids outside the tank, a floating body thinner
// than a spacing, a mesh file that cannot be read), before the device is
// opened; ValueErrors as eddy-cli's usage errors, a solid's named by its
// keyword and item ("bodies[0]: ..."; `keyPrefix` "config: key " for from_config).
void checkScene(const SceneSpec& spec, const Params& params, const std::string& keyPrefix) {
  try {
    checkSceneSpec(spec, params);
  } catch (const SolidSpecError& e) {
    const std::string key = std::string(e.body ? "bodies[" : "obstacles[") + std::to_string(e.index) + "]";
    throw ArgumentError(keyPrefix.empty() ? key + ": " + e.what() : keyPrefix + "'" + key + "': " + e.what());
  } catch (const Error& e) {
    throw ArgumentError(e.what());
  }
}

}  // namespace

double paramValue(const Params& params, const std::string& key, const ParamValue& v) {
  Params probe = params;  // the checks of Params::set / setAssignment, nothing changed
  if (key.empty()) throw ParamError("params: a parameter name is empty ('')");
  const ParamDesc* d = probe.find(key);
  if (!d || v.kind == ParamValue::Kind::Text) {
    // Text is read as --set key=TEXT reads it; an unknown key gets --set's message.
    probe.setAssignment(key + "=" + (v.kind == ParamValue::Kind::Text ? v.text : "0"));
    return probe.get(key);
  }
  if (d->isEnum())
    throw ParamError("parameter '" + key + "': expected a string, one of: " +
                     joinNames(d->choices) + ", got " + typeName(v));
  if (v.kind == ParamValue::Kind::Bool) {
    if (!d->isBool())
      throw ParamError("parameter '" + key + "': expected a number, got a bool");
    return v.boolean ? 1 : 0;
  }
  if (v.kind == ParamValue::Kind::Other)
    throw ParamError("parameter '" + key + "': expected " +
                     (d->isBool() ? std::string("true or false") : std::string("a number")) +
                     ", got " + typeName(v));
  probe.set(key, v.number);
  return v.number;
}

DeviceFields deviceFields(const DeviceInfo& d) {
  DeviceFields f;
  f.text = {{"platform", d.platformName},
            {"name", d.name},
            {"type", d.typeName()},
            {"driver", d.driverVersion},
            {"index", deviceTag(d)}};
  f.computeUnits = d.computeUnits;
  f.globalMemBytes = d.globalMem;
  f.glSharing = d.glSharing;
  return f;
}

Front::~Front() = default;

std::unique_ptr<Front> Front::build(const BuildArgs& args) {
  const std::string sim = args.sim.empty() ? defaultSimulationName() : args.sim;
  checkArgs(sim, args.scene, args.n, args.ic, args.device);
  // The declared defaults, then the caller's values (all checked before the
  // device is opened), as eddy-cli run applies --set.
  Params params(paramDecl(sim));
  for (const auto& [key, value] : args.params) params.set(key, paramValue(params, key, value));
  std::unique_ptr<Front> f(new Front);
  f->spec_.sim = sim;
  f->spec_.scene = args.scene;
  f->spec_.n = args.n ? size_t(*args.n) : 0;
  f->spec_.icPath = args.ic;
  f->spec_.obstacles = absoluteMeshPaths(args.obstacles);
  f->spec_.bodies = absoluteMeshPaths(args.bodies);
  checkSolidsAndProbes(sim, f->spec_, args.probes, args.probeEvery, args.probeDt);
  checkScene(f->spec_, params, "");
  f->ctx_ = std::make_unique<Context>(args.device);
  f->sim_ = makeSimulation(*f->ctx_, f->spec_, params);
  f->startProbes(args.probes, true, args.probeEvery, args.probeDt);
  return f;
}

std::unique_ptr<Front> Front::fromConfig(const RunConfig& c, const std::string& device) {
  const std::string sim = c.sim.value_or(defaultSimulationName());
  const std::string dev = device.empty() ? c.device.value_or("") : device;
  std::optional<long long> n;
  if (c.n) n = static_cast<long long>(*c.n);
  checkArgs(sim, c.scene.value_or(""), n, c.ic.value_or(""), dev);
  Params params(paramDecl(sim));
  for (const auto& [key, value] : c.params) params.set(key, value);  // checked by parseConfig
  std::unique_ptr<Front> f(new Front);
  f->spec_.sim = sim;
  f->spec_.scene = c.scene.value_or("");
  f->spec_.n = c.n.value_or(0);
  f->spec_.icPath = c.ic.value_or("");
  f->spec_.obstacles = absoluteMeshPaths(c.obstacles);
  f->spec_.bodies = absoluteMeshPaths(c.bodies);
  checkSolidsAndProbes(sim, f->spec_, c.probes, c.probeEvery, c.probeDt);
  checkScene(f->spec_, params, "config: key ");
  f->config_ = c;
  f->ctx_ = std::make_unique<Context>(dev);
  f->sim_ = makeSimulation(*f->ctx_, f->spec_, params);
  f->startProbes(c.probes, true, c.probeEvery, c.probeDt);
  return f;
}

std::unique_ptr<Front> Front::load(const std::string& path, const std::string& device,
                                   const std::vector<ProbeSpec>& probes,
                                   std::optional<unsigned long long> probeEvery,
                                   std::optional<double> probeDt) {
  if (!isDeviceSpec(device)) throw ArgumentError("device " + deviceSpecError(device));
  checkCadence(probes, probeEvery, probeDt);
  // The file is read and checked before the device is opened.
  const Snapshot snap = Snapshot::read(path);
  readSnapshotHeader(snap);
  std::unique_ptr<Front> f(new Front);
  f->ctx_ = std::make_unique<Context>(device);
  LoadedSimulation loaded = loadSnapshot(*f->ctx_, snap);
  f->sim_ = std::move(loaded.sim);
  f->spec_ = loaded.spec;
  // The probes the snapshot kept (its run's), then the caller's; at the
  // run's cadence they go on where it left off (as eddy-cli run --load).
  f->startProbes(probes, true, probeEvery, probeDt);
  return f;
}

std::string Front::sceneName() const {
  if (!spec_.icPath.empty()) return "ic:" + spec_.icPath;
  return spec_.scene.empty() ? defaultScene(spec_.sim) : spec_.scene;
}

bool Front::advance(uint64_t steps, std::optional<double> until, uint64_t checkEvery,
                    const std::function<bool()>& stop) {
  SessionSettings s;
  s.steps = steps;
  s.until = until;
  s.checkEvery = checkEvery;
  // No begin(): a script steps in pieces, and begin()'s diagnostics row and
  // profiler reset belong to a whole run with outputs. run() still ends
  // with Simulation::finish() and the final NaN/inf check. begin()'s check
  // of the state before the first step is made here, once: it is also the
  // baseline of the escape count, without which the first call's checks
  // saw no escapes (a scene blowing every particle out of the tank ran on).
  if (!checked_) {
    if (auto b = sim_->checkFiniteNow()) throw BlowUpError(*b, sim_->kind());
    checked_ = true;
  }
  Session session(*sim_, s);
  return session.run(stop).stopped;
}

void Front::startProbes(const std::vector<ProbeSpec>& extra, bool builtins,
                        std::optional<unsigned long long> every, std::optional<double> dt) {
  try {
    probes_ = probesToSample(*sim_, extra, builtins);
  } catch (const Error& e) {
    throw ArgumentError(std::string("probes: ") + e.what());
  }
  if (probes_.empty()) {
    if (every || dt)
      throw ArgumentError(std::string(dt ? "probe_dt" : "probe_every") +
                          ": there are no probes to sample (give probes=[...]; scene " +
                          sceneName() + " has none built in)");
    return;
  }
  const ProbeCadence cadence = probeCadenceFor(*sim_, every, dt);
  sim_->startProbes(probes_, cadence, [this](const ProbeRow& row) { probeRows_.push_back(row); });
}

const std::vector<ProbeRow>& Front::probeRows() {
  if (!probes_.empty()) sim_->flushProbes();
  return probeRows_;
}

void Front::setParam(const std::string& key, double value) {
  Params& p = sim_->params();
  if (const ParamDesc* d = p.find(key); d && d->rebuild) {
    if (p.get(key) == value) return;
    throw ArgumentError("parameter '" + key +
                        "' applies only when the scene is built; a running simulation keeps its "
                        "particles: give it as eddy.Simulation(..., params={'" + key + "': ...})");
  }
  p.set(key, value);
}

std::vector<std::pair<std::string, double>> Front::diagnostics() {
  const auto columns = sim_->diagColumns();
  const auto row = sim_->diagRow();
  std::vector<std::pair<std::string, double>> out;
  for (size_t i = 0; i < columns.size() && i < row.size(); ++i) out.emplace_back(columns[i], row[i]);
  return out;
}

void Front::save(const std::string& path) {
  if (path.empty()) throw ArgumentError("save '': cannot write: the path is empty");
  if (const std::string why = outputFileProblem(path); !why.empty())
    throw ArgumentError("save '" + path + "': cannot write this file: " + why);
  saveSnapshot(*sim_, spec_, path);
}

std::string Front::exportVtk(const std::string& dir, bool overwrite) {
  namespace fs = std::filesystem;
  if (dir.empty()) throw ArgumentError("export_vtk '': cannot write: the path is empty");
  std::error_code ec;
  fs::path key = fs::weakly_canonical(fs::absolute(dir), ec);
  if (ec) key = fs::absolute(dir).lexically_normal();
  auto it = series_.find(key.string());
  if (it == series_.end() || overwrite) {
    if (const std::string why = outputFolderProblem(dir); !why.empty())
      throw ArgumentError("export_vtk '" + dir + "': cannot write to this folder: " + why);
    if (overwrite) {
      removeOldExport(dir);
    } else if (fs::is_directory(dir, ec) && !fs::is_empty(dir, ec)) {
      throw ArgumentError("export_vtk '" + dir + "': the folder is not empty; frames of an "
                          "earlier export there would be mixed with this run's. Choose an empty "
                          "or new folder, or give overwrite=True to remove the earlier step_*.vtp "
                          "and eddy.pvd first");
    }
    it = series_.insert_or_assign(key.string(), std::make_unique<VtkSeries>(dir)).first;
  }
  it->second->add(sim_->particleState());
  return it->second->pvdPath();
}

}  // namespace eddy::python
