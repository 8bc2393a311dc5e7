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
