#include "factory.hpp"

#include <algorithm>

#include "nbody.hpp"
#include "nbody_multi.hpp"
#include "sph.hpp"
#include "snapshot.hpp"

#include <cmath>

namespace eddy {

const std::vector<std::string>& simulationNames() {
  static const std::vector<std::string> names = {"nbody", "sph"};
  return names;
}

static std::string knownSims() { return joinNames(simulationNames()); }

const std::vector<ParamDesc>& paramDecl(std::string_view sim) {
  if (sim == "nbody") return nbodyParamDecl();
  if (sim == "sph") return sphParamDecl();
  throw Error("unknown simulation '" + std::string(sim) + "'; known: " + knownSims());
}

std::vector<std::string> sceneNames(std::string_view sim) {
  if (sim == "nbody") return nbodySceneNames();
  if (sim == "sph") return sphSceneNames();
  throw Error("unknown simulation '" + std::string(sim) + "'; known: " + knownSims());
}

std::string defaultScene(std::string_view sim) { return sceneNames(sim).front(); }

size_t defaultCount(std::string_view sim) {
  if (sim == "nbody") return 16384;
  return 0;
}

static std::vector<Body> nbodyBodies(const SceneSpec& spec, const Params& params) {
  const size_t n = spec.n ? spec.n : defaultCount("nbody");
  return spec.icPath.empty()
             ? makeNBodyScene(spec.scene.empty() ? defaultScene("nbody") : spec.scene, n,
                              uint64_t(params.getInt("seed")))
             : readBodiesCsv(spec.icPath);
}

std::unique_ptr<Simulation> makeSimulation(Context& ctx, const SceneSpec& spec,
                                           const Params& params) {
  if (spec.sim == "nbody") {
    if (spec.icPath.empty())  // before building the scene
      NBodySim::checkFits(ctx.info(), spec.n ? spec.n : defaultCount("nbody"));
    const std::vector<Body> bodies = nbodyBodies(spec, params);
    return std::make_unique<NBodySim>(ctx, params, bodies,
                                      NBodyKernelConfig::automatic(ctx.info(), bodies.size()));
  }
  if (spec.sim == "sph") {
    if (!spec.icPath.empty()) throw Error("SPH: initial-conditions files are not supported");
    if (spec.n) throw Error("SPH: the particle count follows from the scene; set spacing instead of --n");
    const std::string scene = spec.scene.empty() ? defaultScene("sph") : spec.scene;
    // Count first: a scene too large for the limits is refused before its
    // particles take host memory (spacing=0.0001 would be 52 million).
    const SphSceneSize size = sphSceneSize(scene, params);
    SphSim::checkFits(ctx.info(), size.count, size.tank, size.spacing, params);
    const auto setup = makeSphScene(scene, params);
    return std::make_unique<SphSim>(ctx, params, setup);
  }
  throw Error("unknown simulation '" + spec.sim + "'; known: " + knownSims());
}

std::unique_ptr<Simulation> makeSimulation(const std::vector<Context*>& devices,
                                           const SceneSpec& spec, const Params& params,
                                           const MultiNBodyOptions& opts) {
  if (devices.empty()) throw Error("no devices given");
  if (devices.size() == 1) return makeSimulation(*devices.front(), spec, params);
  if (spec.sim != "nbody")
    throw Error("simulation '" + spec.sim + "' runs on one device only (--devices is for nbody)");
  if (spec.icPath.empty()) checkMultiNBodyMemory(devices, spec.n ? spec.n : defaultCount("nbody"));
  return std::make_unique<MultiNBodySim>(devices, params, nbodyBodies(spec, params), opts);
}

void saveSnapshot(Simulation& sim, const SceneSpec& spec, const std::string& path) {
  // Never write a snapshot that --load would refuse (non-finite particles).
  if (auto b = sim.checkFiniteNow())
    throw Error(path + ": snapshot not saved: " + b->message(sim.kind()));
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
  const auto& sims = simulationNames();
  if (std::find(sims.begin(), sims.end(), h.spec.sim) == sims.end())
    snap.fail("unknown simulation '" + h.spec.sim + "'; known: " + knownSims());
  h.spec.scene = snap.string("eddy/scene");
  h.spec.icPath = snap.string("eddy/ic");
  h.spec.n = snap.u64("eddy/n");
  h.count = snap.u64("eddy/count");
  h.steps = snap.u64("eddy/step");
  h.time = snap.f64("eddy/time");
  if (snap.has("eddy/device")) h.device = snap.string("eddy/device");
  if (!std::isfinite(h.time) || h.time < 0) snap.fail("simulated time is not a finite number >= 0");
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
  if (h.spec.sim == "nbody") {
    NBodySim::checkFits(ctx.info(), h.count);
    out.sim = std::make_unique<NBodySim>(ctx, h.params, decodeNBodyState(snap, h.count));
  } else if (h.spec.sim == "sph") {
    SphState st = decodeSphState(snap, h.count);
    SphKernelConfig cfg;
    cfg.capacity = st.capacity;  // the saved headroom (0: from capacity_factor)
    auto sph = std::make_unique<SphSim>(ctx, h.params, st.setup, cfg);
    sph->restoreState(st);
    out.sim = std::move(sph);
  } else {
    // A simulation added to simulationNames() must get its branch here.
    snap.fail("restoring a '" + h.spec.sim + "' simulation is not implemented");
  }
  out.sim->restoreClock(h.steps, h.time);
  return out;
}

std::string loadIgnoresNote(const std::string& key) {
  return "--load: '" + key + "' applies only when the scene is rebuilt; ignored (the loaded "
         "particles keep their values, and so does the next snapshot)";
}

}  // namespace eddy
