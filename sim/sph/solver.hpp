// solver.hpp: the interface between the SPH particle pipeline and a solver.
//
// A solver turns the pipeline's sorted state and neighbour data
// (SphParticles: positions, velocities, cell ranges, neighbour list) into
// density, pressure and accelerations. It owns only its own kernels and
// buffers; the pipeline then runs the shared time step and integration.
// One step of SphSim:
//
//     particles.update()                  hash, sort, reorder, cells, neighbours
//     solver.computeDensity(particles)    e.g. density + equation of state
//     solver.computeAccelerations(...)    e.g. forces; maxima |a|^2, |v|^2 -> counters
//     particles.runDt(), runIntegrate(solver.accelerations())
//
// Adding a solver: its .hpp/.cpp (a class derived from SphSolver), its .cl
// kernels (kernels/sph/, listed in kernels/CMakeLists.txt), one line in
// sphSolvers() (sim/sph/solvers.cpp), and a test. The `solver` parameter's
// choices are the names listed there.
#pragma once

#include "particles.hpp"

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace eddy {

class SphSolver {
 public:
  virtual ~SphSolver() = default;
  virtual std::string name() const = 0;
  // Density and pressure of the current positions into densityPressure()
  // (also run before diagnostics, output and colour fields).
  virtual void computeDensity(SphParticles& particles, const SphPhysics& phys) = 0;
  // Accelerations of the current state into accelerations(); the maxima of
  // |a|^2 and |v|^2 the dt phase reads go into particles.counters()
  // (EDDY_SPH_CNT_MAX_A2/V2, float bits; leaving them 0 makes dt = max_dt).
  virtual void computeAccelerations(SphParticles& particles, const SphPhysics& phys) = 0;
  // float2 (rho, p) and float4 (a) per particle, allocated for the capacity.
  virtual const cl::Buffer& densityPressure() const = 0;
  virtual const cl::Buffer& accelerations() const = 0;
};

// Builds a solver for the particles (called once the pipeline exists).
using SphSolverFactory =
    std::function<std::unique_ptr<SphSolver>(Context&, SphParticles&, const SphKernelConfig&)>;

struct SphSolverEntry {
  std::string name;  // a choice of the `solver` parameter
  SphSolverFactory make;
};
// Every built-in solver, the default first (sim/sph/solvers.cpp).
const std::vector<SphSolverEntry>& sphSolvers();
std::vector<std::string> sphSolverNames();
// Throws eddy::Error naming the known solvers.
const SphSolverFactory& sphSolverFactory(std::string_view name);

}  // namespace eddy
