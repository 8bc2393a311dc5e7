#include "factory.hpp"

#include "nbody.hpp"
#include "nbody_multi.hpp"
#include "sph.hpp"

namespace eddy {

const std::vector<std::string>& simulationNames() {
  static const std::vector<std::string> names = {"nbody", "sph"};
  return names;
}

static std::string knownSims() {
  std::string s;
  for (const auto& n : simulationNames()) s += (s.empty() ? "" : ", ") + n;
  return s;
}

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
    const std::vector<Body> bodies = nbodyBodies(spec, params);
    return std::make_unique<NBodySim>(ctx, params, bodies,
                                      NBodyKernelConfig::automatic(ctx.info(), bodies.size()));
  }
  if (spec.sim == "sph") {
    if (!spec.icPath.empty()) throw Error("SPH: initial-conditions files are not supported");
    if (spec.n) throw Error("SPH: the particle count follows from the scene; set spacing instead of --n");
    const auto setup =
        makeSphScene(spec.scene.empty() ? defaultScene("sph") : spec.scene, params);
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

}  // namespace eddy
