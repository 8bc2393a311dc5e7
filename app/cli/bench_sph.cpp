// bench_sph.cpp: eddy-cli bench sph.
#include "cli_common.hpp"

#include "config.hpp"
#include "factory.hpp"
#include "io.hpp"
#include "nbody.hpp"
#include "nbody_multi.hpp"
#include "session.hpp"
#include "snapshot.hpp"
#include "sph.hpp"
#include "vtk.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <csignal>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <sstream>

namespace eddy::cli {

namespace {

struct SphBenchArgs {
  std::vector<unsigned long long> ns;
  std::vector<std::string> modes{"cells", "list"};
  std::string device;
  unsigned long long steps = 0, cap = 0;  // cap 0: from the smoothing ratio
  bool asJson = false, exactDiv = true;
};

void addSphBenchOptions(Options& o, SphBenchArgs& a) {
  o.counts("--n", a.ns, 1, 1ull << 28, "LIST",
           "comma-separated particle counts (default\n65536,262144,1048576,4194304 on a GPU, "
           "16384,65536 on a CPU)");
  o.custom("--mode", "LIST",
           "cells (direct 27-cell iteration), list (neighbour list);\ndefault cells,list",
           [&a](const std::string& v) {
             a.modes = parseChoices("--mode", v, {"cells", "list"}, "cells or list");
           });
  o.count("--cap", a.cap, 1, 1024, "N", "neighbour list capacity (default: from the smoothing ratio, 96 at its default)");
  o.flag("--approx-divsqrt", a.exactDiv, false,
         "the device's default (approximate) fp32 divide and sqrt\ninstead of correctly rounded "
         "ones");
  o.count("--steps", a.steps, 1, 100000, "N",
          "timed steps per configuration (default: about 1 s of work)");
  addDeviceOption(o, a.device, true);
  addJsonOption(o, a.asJson);
}

// bench sph: the full SPH step of a 3-D dam-break column at rest density
// (about 33 neighbours within h), per kernel, for each N and mode.
int benchSph(const SphBenchArgs& a, std::ostream& out, std::ostream& err) {
  std::vector<unsigned long long> ns = a.ns;
  const std::vector<std::string>& modes = a.modes;
  const std::string& device = a.device;
  const unsigned long long steps = a.steps, cap = a.cap;
  const bool asJson = a.asJson, exactDiv = a.exactDiv;
  Context ctx(device);
  const bool gpu = ctx.info().type & CL_DEVICE_TYPE_GPU;
  if (ns.empty()) ns = gpu ? std::vector<unsigned long long>{65536, 262144, 1048576, 4194304}
                           : std::vector<unsigned long long>{16384, 65536};
  json rows = json::array();
  if (!asJson)
    out << "device: " << ctx.info().name << " (" << ctx.info().platformName << ", driver "
        << ctx.info().driverVersion << ")\n"
        << "         N  mode   steps   step_ms   wall_ms  particle-steps/s  neighbours  "
           "overflow\n";
  for (const auto target : ns)
    for (const auto& mode : modes) {
      Params params(sphParamDecl());
      params.set("profile_every", 1);  // every step timed: this is the per-kernel benchmark
      SphKernelConfig cfg;
      cfg.neighbourList = mode == "list";
      cfg.listCapacity = unsigned(cap);
      cfg.correctlyRoundedDivSqrt = exactDiv;
      {  // the limits before the particles take host memory
        const Params bp = sphBenchParams(target, params);
        const SphSceneSize size = sphSceneSize("dam_break", bp);
        SphSim::checkFits(ctx.info(), size.count, size.tank, size.spacing, bp, cfg);
      }
      const SphSetup setup = makeSphBenchScene(target, params);
      SphSim sim(ctx, params, setup, cfg);
      sim.step();  // warm-up (compilation, clocks) and sizing
      ctx.queue().finish();
      const auto w0 = Clock::now();
      sim.step();
      ctx.queue().finish();
      const double once = std::chrono::duration<double>(Clock::now() - w0).count();
      const unsigned long long s =
          steps ? steps
                : std::clamp<unsigned long long>(
                      static_cast<unsigned long long>(1.0 / std::max(once, 1e-6)), 3, 500);
      sim.profiler().collect(true);
      sim.profiler().reset();
      const auto t0 = Clock::now();
      for (unsigned long long k = 0; k < s; ++k) sim.step();
      ctx.queue().finish();
      const double wallMs = std::chrono::duration<double>(Clock::now() - t0).count() * 1e3 / s;
      sim.profiler().collect(true);
      double stepMs = 0;
      json phases = json::object();
      std::string breakdown;
      for (const auto& st : sim.profiler().stats()) {
        // A phase no timed step ran (density at the first step only, with
        // density diffusion on: continuity instead) is not a 0 ms phase.
        if (st.count == 0) continue;
        const double ms = st.totalMs / double(s);
        stepMs += ms;
        phases[st.name] = ms;
        char item[96];
        std::snprintf(item, sizeof item, "%s %.4f  ", st.name.c_str(), ms);
        breakdown += item;
      }
      const auto d = sim.diagnostics();
      const double rate = double(sim.size()) / (stepMs * 1e-3);
      // A list too short for the neighbours skips those past it: the step
      // does less than the physics asks, and its speed is no measurement.
      const bool valid = d.counters.overflow == 0;
      if (!valid)
        err << "bench sph: N=" << sim.size() << " " << mode << ": " << d.counters.overflow
            << " neighbours did not fit the list (" << sim.kernelConfig().listCapacity
            << " entries a particle; --cap): this row's time is of a step that skipped them, not a valid "
               "measurement\n";
      if (asJson) {
        rows.push_back({{"n", sim.size()}, {"n_requested", target}, {"valid", valid}, {"mode", mode},
                        {"steps", s}, {"step_ms", stepMs},
                        {"wall_ms_per_step", wallMs}, {"particle_steps_per_s", rate},
                        {"mean_neighbours", d.meanNeighbours},
                        {"list_overflow", d.counters.overflow}, {"key_bits", sim.keyBits()},
                        {"cells", sim.numCells()}, {"phases_ms_per_step", phases}});
      } else {
        char line[200];
        std::snprintf(line, sizeof line, "%10zu  %-5s %6llu %9.4f %9.4f  %16.4e  %10.2f  %8llu\n",
                      sim.size(), mode.c_str(), s, stepMs, wallMs, rate, d.meanNeighbours,
                      static_cast<unsigned long long>(d.counters.overflow));
        out << line << "            ms/step: " << breakdown << "\n" << std::flush;
      }
    }
  if (asJson) out << json{{"device", deviceJson(ctx.info())}, {"sph", rows}}.dump(2) << '\n';
  return 0;
}

}  // namespace

Runner addBenchSph(Options& o) {
  auto a = std::make_shared<SphBenchArgs>();
  addSphBenchOptions(o, *a);
  return [a](std::ostream& out, std::ostream& err) { return benchSph(*a, out, err); };
}

}  // namespace eddy::cli
