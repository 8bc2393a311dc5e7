// bench realtime: eddy's headline SPH benchmark (issue 11).
#include "cli_common.hpp"
#include "session.hpp"
#include "sph.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <sstream>

namespace eddy::cli {

namespace {

struct RealtimeArgs {
  std::vector<unsigned long long> ns;
  std::vector<std::string> solvers{"wcsph", "dfsph"};
  std::vector<std::string> sets;
  std::string device;
  double until = 0.3;
  bool asJson = false;
};

void addRealtimeOptions(Options& o, RealtimeArgs& a) {
  o.counts("--n", a.ns, 1, 1ull << 28, "LIST",
           "comma-separated particle counts (default\n6612,51984,207936,1044240 on a GPU, 6612 on "
           "a CPU)");
  o.custom("--solver", "LIST", "SPH solvers to compare (default wcsph,dfsph)",
           [&a](const std::string& v) {
             const auto known = sphSolverNames();
             a.solvers = parseChoices("--solver", v, known, "one of " + joinNames(known));
           });
  o.real("--until", a.until, 1e-6, 100.0, "S", "simulated seconds per run (default 0.3)");
  addSetOption(o, a.sets);
  addDeviceOption(o, a.device);
  addJsonOption(o, a.asJson);
}

// bench realtime: eddy's headline SPH benchmark. The Koshizuka & Oka (1996)
// dam break made 3-D: column L x 2L x L (L = 0.146 m) in a tank 4L long,
// 0.4 m high and L deep, spacing chosen for N (2 (L/dx)^3 = N), run for
// --until simulated seconds per solver; real-time factor = simulated seconds
// per wall second (the queue drained at both ends).
int benchRealtime(const RealtimeArgs& a, std::ostream& out) {
  std::vector<unsigned long long> ns = a.ns;
  const std::vector<std::string>& solvers = a.solvers;
  const std::string& device = a.device;
  const double until = a.until;
  const bool asJson = a.asJson;
  // --set: any SPH parameter but the case's own (its solver comes from --solver),
  // checked here, before any device work; every run starts from these.
  static const std::vector<std::string> kCase = {"solver",       "spacing",     "column_width",
                                                 "column_height", "depth",       "tank_length",
                                                 "tank_height"};
  Params base(sphParamDecl());
  for (const auto& s : a.sets) {
    const std::string key = s.substr(0, s.find('='));
    if (std::find(kCase.begin(), kCase.end(), key) != kCase.end())
      throw UsageError("--set " + s + ": '" + key + "' is fixed by bench realtime's case" +
                       (key == "solver" ? " (use --solver)" : ""));
    try {
      base.setAssignment(s);
    } catch (const ParamError& e) {
      throw UsageError(std::string("--set ") + s + ": " + e.what());
    }
  }
  try {
    sphCheckParams(base);  // taken together (min_dt <= max_dt, ...), as eddy-cli run
  } catch (const Error& e) {
    throw UsageError(e.what());
  }
  Context ctx(device);
  const bool gpu = ctx.info().type & CL_DEVICE_TYPE_GPU;
  if (ns.empty()) ns = gpu ? std::vector<unsigned long long>{6612, 51984, 207936, 1044240}
                           : std::vector<unsigned long long>{6612};
  const double L = 0.146;
  auto caseParams = [&](const std::string& solver, unsigned long long target) {
    Params p = base;
    p.setAssignment("solver=" + solver);
    const double dx = L / std::max(1.0, std::round(std::cbrt(double(target) / 2.0)));
    p.set("spacing", dx);
    p.set("column_width", L);
    p.set("column_height", 2 * L);
    p.set("depth", L);
    p.set("tank_length", 4 * L);
    p.set("tank_height", 0.4);
    return p;
  };
  // Every case against the limits (particle count, the device's memory)
  // before the first run: a list that cannot finish fails before any time is
  // spent, not after the runs before it (whose rows would be lost).
  for (const auto& solver : solvers)
    for (const auto target : ns) {
      const Params p = caseParams(solver, target);
      try {
        const SphSceneSize size = sphSceneSize("dam_break", p);
        SphSim::checkFits(ctx.info(), size.count, size.tank, size.spacing, p);
      } catch (const Error& e) {
        throw Error("bench realtime: --n " + std::to_string(target) + " (--solver " + solver +
                    "): " + e.what());
      }
    }
  json rows = json::array();
  if (!asJson)
    out << "device: " << ctx.info().name << " (" << ctx.info().platformName << ")\n"
        << "solver          N  realtime  steps/s   mean_dt   density_it  divergence_it  "
           "density_err%\n";
  for (const auto& solver : solvers)
    for (const auto target : ns) {
      const Params p = caseParams(solver, target);
      const SphSetup setup = makeSphScene("dam_break", p);
      SphSim sim(ctx, p, setup);
      // The run loop of `eddy-cli run --until`: the device's time read back
      // only now and then (after half the steps the mean dt says are left),
      // so the run stops at the first step that reaches --until, the blow-up
      // check every 100 steps and at the end, and a collapsed time step
      // (an unstable case) ends the run with an error instead of a hang.
      SessionSettings settings;
      settings.until = until;
      Session session(sim, settings);
      double t = 0, wall = 0;
      try {
        session.begin();
        ctx.queue().finish();
        const auto t0 = Clock::now();
        session.run();
        t = sim.syncTime();  // drains the queue
        wall = std::chrono::duration<double>(Clock::now() - t0).count();
      } catch (const Error& e) {
        throw Error("bench realtime: --solver " + solver + " at N = " + std::to_string(sim.size()) +
                    ": " + e.what());
      }
      sim.profiler().collect(true);
      double total = 0;
      for (const auto& st : sim.profiler().stats()) total += st.totalMs;
      json shares = json::object();
      std::string breakdown;
      for (const auto& st : sim.profiler().stats()) {
        if (st.count == 0) continue;  // a phase no timed step ran: not a 0 % phase
        const double share = total > 0 ? st.totalMs / total : 0.0;
        shares[st.name] = share;
        char item[96];
        std::snprintf(item, sizeof item, "%s %.1f%%  ", st.name.c_str(), 100 * share);
        breakdown += item;
      }
      const auto d = sim.diagnostics();
      SphSolveStats ss;
      sim.solver().solveStats(ss);
      const double steps = double(sim.steps());
      const double factor = wall > 0 ? t / wall : 0.0, rate = wall > 0 ? steps / wall : 0.0;
      const double meanDt = steps > 0 ? t / steps : 0.0;
      if (asJson) {
        rows.push_back({{"solver", solver}, {"n", sim.size()}, {"n_requested", target},
                        {"realtime_factor", factor},
                        {"steps_per_s", rate}, {"mean_dt", meanDt}, {"steps", sim.steps()},
                        {"simulated_s", t}, {"wall_s", wall},
                        {"mean_density_iterations", ss.meanDensityIterations},
                        {"mean_divergence_iterations", ss.meanDivergenceIterations},
                        {"cut_solves", ss.cutSolves},
                        {"pair_gradients", ss.pairGradients},
                        {"poll_ahead", ss.pollAhead},
                        {"chebyshev_rho", p.get("chebyshev_rho")},
                        {"density_relaxation", p.get("density_relaxation")},
                        {"density_error", d.solve.densityError},
                        {"density_residual", d.solve.densityResidual},
                        {"escaped", d.counters.escaped}, {"phase_share", shares},
                        {"command_buffers", commandBuffersJson(sim.profiler())}});
      } else {
        char line[200];
        std::snprintf(line, sizeof line, "%-6s %10zu  %8.4f  %7.1f  %9.3e  %10.2f  %13.2f  %12.4f\n",
                      solver.c_str(), sim.size(), factor, rate, meanDt, ss.meanDensityIterations,
                      ss.meanDivergenceIterations, d.solve.densityError);
        out << line << "       phases: " << breakdown << "\n" << std::flush;
      }
    }
  if (asJson) out << json{{"device", deviceJson(ctx.info())}, {"realtime", rows}}.dump(2) << '\n';
  return 0;
}

}  // namespace

Runner addBenchRealtime(Options& o) {
  auto a = std::make_shared<RealtimeArgs>();
  addRealtimeOptions(o, *a);
  return [a](std::ostream& out, std::ostream&) { return benchRealtime(*a, out); };
}

}  // namespace eddy::cli
