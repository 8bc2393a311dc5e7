// solvers.cpp: THE list of SPH solvers (the choices of the `solver` parameter).
#include "solver.hpp"
#include "dfsph.hpp"
#include "wcsph.hpp"

namespace eddy {

const std::vector<SphSolverEntry>& sphSolvers() {
  static const std::vector<SphSolverEntry> solvers = {
      {"wcsph", [](Context& ctx, SphParticles& p, const SphKernelConfig& cfg)
                    -> std::unique_ptr<SphSolver> { return std::make_unique<WcsphSolver>(ctx, p, cfg); }},
      {"dfsph", [](Context& ctx, SphParticles& p, const SphKernelConfig& cfg)
                    -> std::unique_ptr<SphSolver> { return std::make_unique<DfsphSolver>(ctx, p, cfg); }},
  };
  return solvers;
}

std::vector<std::string> sphSolverNames() {
  std::vector<std::string> names;
  for (const auto& s : sphSolvers()) names.push_back(s.name);
  return names;
}

const SphSolverFactory& sphSolverFactory(std::string_view name) {
  for (const auto& s : sphSolvers())
    if (s.name == name) return s.make;
  throw Error("unknown SPH solver '" + std::string(name) + "'; known: " +
              joinNames(sphSolverNames()));
}

}  // namespace eddy
