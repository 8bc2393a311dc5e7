#include "defaults.hpp"

#include <algorithm>

namespace eddy {

namespace {
bool contains(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}
}  // namespace

SceneSpec defaultAppSpec() {
  SceneSpec s;
  if (contains(simulationNames(), "sph")) {
    s.sim = "sph";
    s.scene = contains(sceneNames("sph"), "dam_break") ? "dam_break" : defaultScene("sph");
  } else {
    s.sim = "nbody";
    s.scene = "plummer";
  }
  return s;
}

std::string defaultSceneFor(const std::string& sim) {
  const SceneSpec d = defaultAppSpec();
  return sim == d.sim ? d.scene : defaultScene(sim);
}

size_t defaultAppCount(const std::string& sim, bool gpu) {
  if (gpu) return 0;
  return sim == "nbody" ? 2048 : 0;
}

Params defaultAppParams(const std::string& sim) {
  Params p(paramDecl(sim));
  // The app's "Drop block" fills a box of 2% of the tank: on the default dam
  // break (6612 particles) one block is about 2000 particles, so 4x leaves
  // room for about nine blocks; memory is ~0.5 KB per particle of capacity.
  if (sim == "sph" && p.find("capacity_factor")) p.set("capacity_factor", kAppSphCapacityFactor);
  return p;
}

std::vector<std::string> headlessDemoArgs() {
  const SceneSpec d = defaultAppSpec();
  std::vector<std::string> a = {"run", "--sim", d.sim, "--scene", d.scene, "--steps", "200"};
  if (d.sim == "nbody") {
    a.push_back("--n");
    a.push_back("4096");
  }
  return a;
}

}  // namespace eddy
