#include "defaults.hpp"

#include <algorithm>

namespace eddy {

namespace {
bool contains(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}
}  // namespace

// The first type that asks to be the app's default (SPH's dam break), else
// the registry's default type and its default scene.
SceneSpec defaultAppSpec() {
  SceneSpec s;
  s.sim = defaultSimulationName();
  for (const auto& t : simulationTypes())
    if (t.appDefault) {
      s.sim = t.name;
      break;
    }
  const std::string& wanted = simulationType(s.sim).appScene;
  s.scene = !wanted.empty() && contains(sceneNames(s.sim), wanted) ? wanted : defaultScene(s.sim);
  return s;
}

std::string defaultSceneFor(const std::string& sim) {
  const SceneSpec d = defaultAppSpec();
  return sim == d.sim ? d.scene : defaultScene(sim);
}

size_t defaultAppCount(const std::string& sim, bool gpu) {
  if (gpu) return 0;
  const SimulationType* t = findSimulationType(sim);
  return t ? t->appCpuCount : 0;
}

Params defaultAppParams(const std::string& sim) {
  Params p(paramDecl(sim));
  // The app's "Drop block" fills a box of 2% of the tank: on the default dam
  // break (6612 particles) one block is about 2000 particles, so 4x leaves
  // room for about nine blocks; memory is ~0.5 KB per particle of capacity.
  if (p.find("capacity_factor")) p.set("capacity_factor", kAppSphCapacityFactor);
  return p;
}

std::vector<std::string> headlessDemoArgs() {
  const SceneSpec d = defaultAppSpec();
  std::vector<std::string> a = {"run", "--sim", d.sim, "--scene", d.scene, "--steps", "200"};
  if (const size_t n = simulationType(d.sim).demoCount) {
    a.push_back("--n");
    a.push_back(std::to_string(n));
  }
  return a;
}

}  // namespace eddy
