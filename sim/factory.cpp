#include "factory.hpp"

#include "nbody.hpp"

namespace eddy {

const std::vector<std::string>& simulationNames() {
  static const std::vector<std::string> names = {"nbody"};
  return names;
}

static std::string knownSims() {
  std::string s;
  for (const auto& n : simulationNames()) s += (s.empty() ? "" : ", ") + n;
  return s;
}

const std::vector<ParamDesc>& paramDecl(std::string_view sim) {
  if (sim == "nbody") return nbodyParamDecl();
  throw Error("unknown simulation '" + std::string(sim) + "'; known: " + knownSims());
}

std::vector<std::string> sceneNames(std::string_view sim) {
  if (sim == "nbody") return nbodySceneNames();
  throw Error("unknown simulation '" + std::string(sim) + "'; known: " + knownSims());
}

std::string defaultScene(std::string_view sim) { return sceneNames(sim).front(); }

size_t defaultCount(std::string_view sim) {
  if (sim == "nbody") return 16384;
  return 0;
}

std::unique_ptr<Simulation> makeSimulation(Context& ctx, const SceneSpec& spec,
                                           const Params& params) {
  if (spec.sim == "nbody") {
    const size_t n = spec.n ? spec.n : defaultCount("nbody");
    std::vector<Body> bodies =
        spec.icPath.empty()
            ? makeNBodyScene(spec.scene.empty() ? defaultScene("nbody") : spec.scene, n,
                             uint64_t(params.getInt("seed")))
            : readBodiesCsv(spec.icPath);
    return std::make_unique<NBodySim>(ctx, params, bodies,
                                      NBodyKernelConfig::automatic(ctx.info(), bodies.size()));
  }
  throw Error("unknown simulation '" + spec.sim + "'; known: " + knownSims());
}

}  // namespace eddy
