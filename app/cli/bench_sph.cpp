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

// bench sph: the full SPH step of a 3-D dam-break column at rest density
// (about 33 neighbours within h), per kernel, for each N and mode.
int cmdBenchSph(Args& args, std::ostream& out) {
  std::vector<unsigned long long> ns;
  std::vector<std::string> modes{"cells", "list"};
  std::string device;
  unsigned long long steps = 0, cap = 96;
  bool asJson = false, exactDiv = true;
  while (!args.done()) {
    const std::string a = args.next();
    if (a == "--n") ns = args.list(a, 1, 1ull << 28);
    else if (a == "--mode") {
      const std::string v = args.value(a);
      modes.clear();
      std::stringstream ss(v);
      std::string m;
      while (std::getline(ss, m, ',')) {
        if (m != "cells" && m != "list")
          throw UsageError("--mode: '" + m + "' is not cells or list");
        modes.push_back(m);
      }
      if (modes.empty()) throw UsageError("--mode: empty list");
    } else if (a == "--cap") cap = args.count(a, 1, 1024);
    else if (a == "--approx-divsqrt") exactDiv = false;
    else if (a == "--steps") steps = args.count(a, 1, 100000);
    else if (a == "--device") device = args.value(a);
    else if (a == "--json") asJson = true;
    else throw UsageError("bench sph: unknown option '" + a + "'");
  }
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
        const double ms = st.totalMs / double(s);
        stepMs += ms;
        phases[st.name] = ms;
        char item[96];
        std::snprintf(item, sizeof item, "%s %.4f  ", st.name.c_str(), ms);
        breakdown += item;
      }
      const auto d = sim.diagnostics();
      const double rate = double(sim.size()) / (stepMs * 1e-3);
      if (asJson) {
        rows.push_back({{"n", sim.size()}, {"mode", mode}, {"steps", s}, {"step_ms", stepMs},
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


}  // namespace eddy::cli
