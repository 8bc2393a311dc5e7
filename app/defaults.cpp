#include "defaults.hpp"

#include <algorithm>
#include <sstream>

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
  if (const auto solver = appSolverAssignment(sim)) p.setAssignment(*solver);
  return p;
}

std::optional<std::string> appSolverAssignment(const std::string& sim) {
  // Where the solver is a choice that offers it (a build without DFSPH keeps its default).
  const Params p(paramDecl(sim));
  const ParamDesc* d = p.find("solver");
  if (d && d->isEnum() && contains(d->choices, kAppSphSolver)) return std::string("solver=") + kAppSphSolver;
  return std::nullopt;
}

DemoRun headlessDemoRun(bool gpu) {
  DemoRun r;
  r.spec = defaultAppSpec();
  const SimulationType& t = simulationType(r.spec.sim);
  r.spec.n = t.demoCount;
  if (const auto solver = appSolverAssignment(r.spec.sim)) r.sets.push_back(*solver);
  if (!gpu) r.sets.insert(r.sets.end(), t.demoCpuSets.begin(), t.demoCpuSets.end());
  r.until = t.demoUntil;
  return r;
}

std::vector<std::string> headlessDemoArgs(bool gpu) {
  const DemoRun r = headlessDemoRun(gpu);
  std::vector<std::string> a = {"run", "--sim", r.spec.sim, "--scene", r.spec.scene};
  if (r.until > 0) {
    std::ostringstream u;
    u << r.until;
    a.insert(a.end(), {"--until", u.str()});
  } else {
    a.insert(a.end(), {"--steps", std::to_string(r.steps)});
  }
  if (r.spec.n) a.insert(a.end(), {"--n", std::to_string(r.spec.n)});
  for (const auto& s : r.sets) a.insert(a.end(), {"--set", s});
  return a;
}

}  // namespace eddy
