// solver.hpp: the interface between the SPH particle pipeline and a solver.
//
// A solver turns the pipeline's sorted state and neighbour data
// (SphParticles: positions, velocities, cell ranges, neighbour list) into
// density, pressure and accelerations. It owns only its own kernels and
// buffers; the pipeline then runs the shared time step and integration.
// One step of SphSim:
//
//     particles.update()                  hash, sort, reorder, cells, neighbours
//                                         (neighbours left out where the solver
//                                         builds the list: buildsNeighbourList)
//     solver.computeDensity(particles)    e.g. density + equation of state
//     solver.computeAccelerations(...)    e.g. forces; maxima |a|^2, |v|^2 -> counters
//     particles.runDt(), runIntegrate(solver.accelerations())
//
// A solver with its own time integration (DFSPH: pressure solves around the
// non-pressure forces, its own dt and integration) overrides step(); one that
// carries per-particle state between steps (warm starts) keeps it in slot order
// through reordered(), and stores it in snapshots through saveState().
//
// Adding a solver: its .hpp/.cpp (a class derived from SphSolver), its .cl
// kernels (kernels/sph/, listed in kernels/CMakeLists.txt), one line in
// sphSolvers() (sim/sph/solvers.cpp), and a test. The `solver` parameter's
// choices are the names listed there.
#pragma once

#include "params.hpp"
#include "particles.hpp"

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace eddy {

class SnapshotWriter;
struct SphState;

// Iterations and final average errors (percent) of an iterative pressure
// solve's last step (diagnostics columns density_iterations ..).
struct SphSolveStats {
  unsigned densityIterations = 0, divergenceIterations = 0;
  double densityError = 0, divergenceError = 0;
  // What the density solve stopped on (DFSPH with density_relaxation < 1:
  // beta (rho - rho0) + dt Drho/Dt; otherwise densityError).
  double densityResidual = 0;
  // Means over the steps whose state the host has read so far (bench), and
  // how many of those steps' solves ran out of their batch of rounds before
  // converging (their error above tolerance; DfsphKernels::batch).
  double meanDensityIterations = 0, meanDivergenceIterations = 0;
  unsigned long long cutSolves = 0;
  // DFSPH: the last step's solves took the stored pair gradients
  // (DfsphKernels::setPairGradients).
  bool pairGradients = false;
  // DFSPH: the last solve went one round ahead (DfsphKernels::setPollAhead).
  bool pollAhead = false;
};

class SphSolver {
 public:
  virtual ~SphSolver() = default;
  virtual std::string name() const = 0;
  // Density and pressure of the current positions into densityPressure()
  // (also run before diagnostics, output and colour fields).
  virtual void computeDensity(SphParticles& particles, const SphPhysics& phys) = 0;
  // Accelerations of the current state into accelerations(); the maxima of
  // |a|^2 and |v|^2 (WCSPH: (|v| + c_i - c0)^2, c_i the Tait sound speed) the
  // dt phase reads go into particles.counters() (EDDY_SPH_CNT_MAX_A2/V2, float
  // bits; leaving them 0 makes dt = max_dt).
  virtual void computeAccelerations(SphParticles& particles, const SphPhysics& phys) = 0;
  // float2 (rho, p) and float4 (a) per particle, allocated for the capacity.
  virtual const cl::Buffer& densityPressure() const = 0;
  virtual const cl::Buffer& accelerations() const = 0;

  // One time step after particles.update() (hash .. neighbours). Default: the
  // explicit scheme, computeDensity, computeAccelerations, the pipeline's dt
  // and integrate.
  virtual void step(SphParticles& p, const SphPhysics& phys) {
    computeDensity(p, phys);
    computeAccelerations(p, phys);
    p.runDt(phys);
    p.runIntegrate(accelerations(), phys);
  }
  // Called right after every particles.update(): state carried between steps
  // follows the new slot order particles.order(). stepStart: the update
  // begins a step (false: a refresh for output between steps, which must
  // leave the run as it is). Default: none carried.
  virtual void reordered(SphParticles&, bool /*stepStart*/) {}
  // true: the solver's first density kernel of a step (and of every
  // computeDensity) builds the neighbour list itself (SphParticles::
  // fuseList), so the pipeline leaves out its "neighbours" phase. Every
  // kernel that walks the list then runs after that kernel.
  virtual bool buildsNeighbourList(const SphParticles&) const { return false; }
  // How far the integrator keeps particles off the tank's wall planes (m).
  virtual double wallClearance(double /*spacing*/) const { return 0.0; }
  // The settings changed (SphSim::syncParams): build what they need before
  // the next step, so that no step (nor a benchmark's timed window) pays for
  // it (DFSPH: the relaxed rate kernel for density_relaxation < 1).
  virtual void settingsChanged(const SphPhysics&) {}
  // The last step's pressure solves; false: none (an explicit solver).
  virtual bool solveStats(SphSolveStats&) { return false; }
  // The same from the newest state that has arrived, without waiting (a live
  // display); false: none (an explicit solver).
  virtual bool polledSolveStats(SphSolveStats&) { return false; }
  // What to change when a run ends squeezed far beyond what the solver aims
  // at (SphSim::runWarnings, kSphCompressionWarningPercent): the end of the
  // warning's sentence, e.g. which parameter to raise. Default: nothing.
  virtual std::string compressionAdvice(const SphPhysics&, const Params&) const { return ""; }
  // Snapshot of the carried state (n particles, slot order) and its restore.
  virtual void saveState(SnapshotWriter&, size_t) {}
  virtual void restoreState(const SphState&) {}
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
