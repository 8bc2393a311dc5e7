// bench_nbody.cpp: eddy-cli bench nbody.
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

// bench nbody --devices: whole steps (wall clock, pipelined) of the N-body
// split over each device list; per device the kernel rate, the exchange time
// and the time its compute queue had nothing to do.
int benchDevices(const std::vector<std::string>& sets, std::vector<unsigned long long> ns,
                 const std::vector<double>& shares, const std::optional<NBodyKernelConfig>& cfg,
                 unsigned long long steps, bool asJson, std::ostream& out) {
  std::map<std::string, std::unique_ptr<Context>> opened;  // one context per device, shared
  std::vector<std::vector<Context*>> setDevices;
  bool gpu = false;
  for (const auto& set : sets) {
    std::vector<Context*> v;
    for (const auto& info : selectDevices(set)) {
      auto& c = opened[deviceTag(info)];
      if (!c) {
        try {
          c = std::make_unique<Context>(info);
        } catch (const Error& e) {
          throw Error("device " + deviceTag(info) + ": " + e.what());
        }
      }
      gpu |= (info.type & CL_DEVICE_TYPE_GPU) != 0;
      v.push_back(c.get());
    }
    if (!shares.empty() && shares.size() != v.size())  // (one device: no share to give, refused, not ignored)
      throw UsageError("--shares: " + std::to_string(shares.size()) + " values for " +
                       std::to_string(v.size()) + (v.size() == 1 ? " device" : " devices") + " (--devices " +
                       set + ")");
    setDevices.push_back(std::move(v));
  }
  if (ns.empty()) ns = gpu ? std::vector<unsigned long long>{262144, 1048576}
                           : std::vector<unsigned long long>{1024, 4096, 16384};
  auto tagsOf = [](const std::vector<Context*>& v) {
    std::string t;
    for (const auto* c : v) t += (t.empty() ? "" : ",") + deviceTag(c->info());
    return t;
  };
  if (!asJson) {
    for (const auto& [tag, c] : opened)
      out << "device " << tag << ": " << c->info().name << " (" << c->info().platformName
          << ", driver " << c->info().driverVersion << ")\n";
    out << "plummer, dt 1e-4, kernel ";
    if (cfg)
      out << "wg " << cfg->wg << ", bpi " << cfg->bpi << ", unroll " << cfg->unroll
          << ", cl-options '" << cfg->extraOptions << "'";
    else
      out << "layout per device and share (automatic)";
    out << "; pairs/s = N^2 / wall-clock step time\n";
  }
  json rows = json::array();
  for (const auto n : ns) {
    // The memory each device set needs, before the host builds the scene.
    for (const auto& devs : setDevices) {
      if (devs.size() == 1) NBodySim::checkFits(devs[0]->info(), n);
      else checkMultiNBodyMemory(devs, n);
    }
    const auto bodies = makeNBodyScene("plummer", n, 1);
    double baseline = 0;
    if (!asJson)
      out << "\n         N  devices           steps     step_ms       pairs/s  speedup  exchange\n";
    for (const auto& devs : setDevices) {
      Params params(nbodyParamDecl());
      params.set("dt", 1e-4);
      std::unique_ptr<Simulation> sim;
      MultiNBodySim* multi = nullptr;
      try {
        if (devs.size() == 1) {
          sim = std::make_unique<NBodySim>(
              *devs[0], params, bodies,
              cfg ? *cfg : NBodyKernelConfig::automatic(devs[0]->info(), bodies.size()));
        } else {
          MultiNBodyOptions o;
          o.shares = shares;
          if (cfg) o.kernels = {*cfg};
          auto m = std::make_unique<MultiNBodySim>(devs, params, bodies, o);
          multi = m.get();
          sim = std::move(m);
        }
      } catch (const Error& e) {
        // The one configuration --devices measures does not build (a --wg
        // that is no power of two, bad --cl-options): as bench nbody
        // without --devices when it skips every configuration, exit 2.
        throw UsageError("bench nbody --devices " + tagsOf(devs) + ": the configuration does not build: " +
                         std::string(e.what()).substr(0, std::string(e.what()).find('\n')));
      }
      sim->step();  // warm-up: first launches, clocks
      sim->finish();
      const auto w0 = Clock::now();
      sim->step();
      sim->finish();
      const double once = std::chrono::duration<double>(Clock::now() - w0).count();
      const unsigned long long s =
          steps ? steps
                : std::clamp<unsigned long long>(
                      static_cast<unsigned long long>(2.0 / std::max(once, 1e-6)), 3, 2000);
      sim->profiler().reset();
      const auto t0 = Clock::now();
      for (unsigned long long k = 0; k < s; ++k) sim->step();
      sim->finish();
      const double wall = std::chrono::duration<double>(Clock::now() - t0).count();
      sim->profiler().collect(true);
      const double stepMs = 1e3 * wall / double(s);
      const double total = double(n) * double(n) / (wall / double(s));
      if (baseline == 0) baseline = total;
      std::map<std::string, double> perStep;  // phase -> ms per step
      for (const auto& st : sim->profiler().stats()) perStep[st.name] = st.totalMs / double(s);
      json per = json::array();
      double worstExchange = 0;
      std::string detail;
      for (size_t i = 0; i < devs.size(); ++i) {
        const std::string tag = deviceTag(devs[i]->info());
        const size_t bodiesHere = multi ? multi->shares()[i].count : size_t(n);
        const double share = multi ? multi->shares()[i].weight : 1.0;
        auto ph = [&](const char* what) {
          return perStep[multi ? MultiNBodySim::phase(what, tag) : std::string(what)];
        };
        const double gravityMs = ph("gravity"), driftMs = ph("drift");
        const double exchangeMs = multi ? ph("send") + ph("recv") : 0.0;
        const double rate = gravityMs > 0 ? double(bodiesHere) * double(n) / (gravityMs * 1e-3) : 0;
        const double exFrac = exchangeMs / stepMs;
        const double waitFrac = bodiesHere ? std::max(0.0, 1.0 - (gravityMs + driftMs) / stepMs) : 1.0;
        worstExchange = std::max(worstExchange, exFrac);
        per.push_back({{"device", tag}, {"name", devs[i]->info().name},
                       {"driver", devs[i]->info().driverVersion}, {"bodies", bodiesHere},
                       {"share", share}, {"calibrated_pairs_per_s", multi ? multi->shares()[i].rate : 0.0},
                       {"gravity_ms", gravityMs}, {"drift_ms", driftMs},
                       {"exchange_ms", exchangeMs}, {"pair_interactions_per_s", rate},
                       {"exchange_fraction", exFrac}, {"wait_fraction", waitFrac}});
        char line[320];
        std::snprintf(line, sizeof line,
                      "      %-6s bodies %10zu (%5.1f%%)  gravity %10.3f ms  %10.4e pairs/s  "
                      "exchange %8.3f ms (%5.2f%%)  idle %5.1f%%\n",
                      tag.c_str(), bodiesHere, 100 * share, gravityMs, rate, exchangeMs,
                      100 * exFrac, 100 * waitFrac);
        detail += line;
      }
      const std::string tags = tagsOf(devs);
      rows.push_back({{"n", n}, {"devices", tags}, {"steps", s}, {"step_ms", stepMs},
                      {"pair_interactions_per_s", total}, {"speedup", total / baseline},
                      {"exchange_fraction", worstExchange}, {"per_device", per}});
      if (!asJson) {
        char line[256];
        std::snprintf(line, sizeof line, "%10llu  %-16s %6llu %11.3f %13.4e %8.3f %8.2f%%\n", n,
                      tags.c_str(), s, stepMs, total, total / baseline, 100 * worstExchange);
        out << line << detail << std::flush;
      }
    }
  }
  if (asJson) {
    json devs = json::array();
    for (const auto& [tag, c] : opened) devs.push_back(deviceJson(c->info()));
    out << json{{"devices", devs}, {"nbody_devices", rows}}.dump(2) << '\n';
  }
  return 0;
}


struct NbodyArgs {
  std::vector<unsigned long long> ns, wgs, bpis, unrolls{8};
  std::vector<std::string> clOptions, deviceSets;
  std::vector<double> shares;
  std::string device;
  unsigned long long steps = 0;
  bool asJson = false;
  NBodyMethod method = NBodyMethod::Direct;
  std::optional<double> theta;
  unsigned treeStack = 0;
};

void addNbodyOptions(Options& o, NbodyArgs& a) {
  o.counts("--n", a.ns, kLimitN.min, kLimitN.max, "LIST",
           "comma-separated body counts (default 4096,16384,65536,262144\non a GPU, "
           "1024,4096,16384 on a CPU)");
  o.custom("--method", "direct|tree|auto",
           "how gravity is computed (default direct); with tree,\nthe per-phase profiler table "
           "is printed after each N",
           [&a](const std::string& m) {
             if (m == "direct") a.method = NBodyMethod::Direct;
             else if (m == "tree") a.method = NBodyMethod::Tree;
             else if (m == "auto") a.method = NBodyMethod::Auto;
             else throw UsageError("bench: --method must be direct, tree or auto, not '" + m + "'");
           });
  o.real("--theta", a.theta, 0.2, 1.0, "X", "the tree's opening angle in [0.2, 1] (default: the parameter's)");
  o.count("--tree-stack", a.treeStack, 1, 1 << 20, "N",
          "entries of the tree walk's stack in local memory");
  o.custom("--devices", "LIST",
           "time whole steps split over these devices: all, gpu, cpu or\nP:D,P:D,... "
           "(repeatable: each list is one configuration, the\nfirst is the baseline of the "
           "speedup column); reports pair\ninteractions/s per device and in total and the "
           "fraction of\nthe step spent exchanging",
           [&a](const std::string& v) { a.deviceSets.push_back(checkDeviceList("--devices", v)); });
  o.reals("--shares", a.shares, 0, 1e12, "W,W,...",
          "with --devices: relative share of each device (applies to\nevery list of that length; "
          "default: measured speed)");
  o.counts("--wg", a.wgs, 1, 4096, "LIST",
           "work-group sizes to try (default: the layout a run picks\nfor each N)");
  o.counts("--bpi", a.bpis, 1, 16, "LIST", "bodies per work-item to try (default: as for --wg)");
  o.counts("--unroll", a.unrolls, 0, 1024, "LIST",
           "unroll factors of the tile loop (0 = full; default 8)");
  o.texts("--cl-options", a.clOptions, "STR", "kernel compiler options to try (repeatable)");
  o.count("--steps", a.steps, 1, 100000, "N",
          "timed steps per configuration (default: about 1 s of work)");
  addDeviceOption(o, a.device);
  addJsonOption(o, a.asJson);
}

int benchNbody(const NbodyArgs& a, std::ostream& out, std::ostream& err) {
  std::vector<unsigned long long> ns = a.ns, wgs = a.wgs, bpis = a.bpis, unrolls = a.unrolls;
  std::vector<std::string> clOptions = a.clOptions, deviceSets = a.deviceSets;
  const std::vector<double>& shares = a.shares;
  const std::string& device = a.device;
  const unsigned long long steps = a.steps;
  const bool asJson = a.asJson;
  const NBodyMethod method = a.method;
  const std::optional<double>& theta = a.theta;
  const unsigned treeStack = a.treeStack;
  if (!shares.empty() && deviceSets.empty()) throw UsageError("--shares needs --devices");
  // eddy's own macros come from --wg, --bpi, --unroll, --tree-stack and the
  // device: redefined here, the kernel's work layout would no longer match
  // the launch (out-of-bounds writes) while the table printed the flags'.
  for (const std::string& opt : clOptions) {
    std::istringstream words(opt);
    std::string w;
    while (words >> w) {
      if (w.rfind("-D", 0) != 0 && w.rfind("-U", 0) != 0) continue;
      w = w.size() > 2 ? w.substr(2) : "";
      if (w.empty() && !(words >> w)) break;  // "-D NAME" as two words
      const std::string name = w.substr(0, w.find('='));
      for (const char* own : {"NBODY_", "EDDY_", "TREE_", "SPH_"})
        if (name.rfind(own, 0) == 0)
          throw UsageError("--cl-options '" + opt + "': " + name + " is eddy's own (" + own +
                           "...: set by --wg, --bpi, --unroll, --tree-stack or the device); give those flags instead");
    }
  }
  if (method == NBodyMethod::Direct && (theta || treeStack))
    err << "bench nbody: note: " << (theta ? "--theta" : "--tree-stack")
        << " is for --method tree or auto; the direct sum ignores it\n";
  checkShares(shares);
  if (!deviceSets.empty()) {
    if (method != NBodyMethod::Direct)
      throw UsageError("bench: --devices (multi-device N-body) supports only --method direct");
    if (!device.empty()) throw UsageError("bench: give either --device or --devices, not both");
    if (wgs.size() > 1 || bpis.size() > 1 || unrolls.size() > 1 || clOptions.size() > 1)
      throw UsageError("bench: with --devices give one --wg, --bpi, --unroll and --cl-options");
    // Default: the layout each device picks for its share (NBodyKernelConfig::automatic).
    std::optional<NBodyKernelConfig> cfg;
    if (!wgs.empty() || !bpis.empty() || unrolls[0] != 8 || !clOptions.empty()) {
      cfg.emplace();
      if (!wgs.empty()) cfg->wg = unsigned(wgs[0]);
      if (!bpis.empty()) cfg->bpi = unsigned(bpis[0]);
      cfg->unroll = unsigned(unrolls[0]);
      if (!clOptions.empty()) cfg->extraOptions = clOptions[0];
    }
    return benchDevices(deviceSets, ns, shares, cfg, steps, asJson, out);
  }
  Context ctx(device);
  const bool gpu = ctx.info().type & CL_DEVICE_TYPE_GPU;
  if (clOptions.empty()) clOptions.push_back("");
  if (ns.empty()) ns = gpu ? std::vector<unsigned long long>{4096, 16384, 65536, 262144}
                           : std::vector<unsigned long long>{1024, 4096, 16384};
  json rows = json::array();
  if (!asJson) {
    out << "device: " << ctx.info().name << " (" << ctx.info().platformName << ", driver "
        << ctx.info().driverVersion << ")\n";
    out << "         N    wg bpi split unroll  steps  gravity_ms   step_ms      pairs/s  cl-options\n";
  }
  size_t measured = 0;  // configurations that ran (a bad --wg skips them all)
  for (const auto n : ns) {
    // Without --wg/--bpi: the layout the simulation picks for this N.
    const auto autoCfg = NBodyKernelConfig::automatic(ctx.info(), n);
    const std::vector<unsigned long long> wgList = wgs.empty() ? std::vector{(unsigned long long)autoCfg.wg} : wgs;
    const std::vector<unsigned long long> bpiList = bpis.empty() ? std::vector{(unsigned long long)autoCfg.bpi} : bpis;
    for (const auto wg : wgList)
      for (const auto bpi : bpiList)
      for (const auto unroll : unrolls)
      for (const auto& clopt : clOptions) {
        Params params(nbodyParamDecl());
        params.set("dt", 1e-4);
        if (theta) params.set("theta", *theta);
        // The memory it needs (the tree's too), before the host builds the scene.
        NBodySim::checkFits(ctx.info(), n, method == NBodyMethod::Tree);
        auto bodies = makeNBodyScene("plummer", n, 1);
        NBodyKernelConfig cfg;
        cfg.method = method;
        cfg.treeStack = treeStack;
        cfg.wg = unsigned(wg);
        cfg.bpi = unsigned(bpi);
        // The automatic layout's source split (none for a chosen layout).
        cfg.split = wgs.empty() && bpis.empty() ? autoCfg.split : 1;
        cfg.unroll = unsigned(unroll);
        cfg.extraOptions = clopt;
        std::unique_ptr<NBodySim> simPtr;
        try {
          simPtr = std::make_unique<NBodySim>(ctx, params, bodies, cfg);
        } catch (const Error& e) {
          // One configuration failing to build must not end a sweep.
          std::string what = e.what();
          err << "bench: N=" << n << " wg=" << wg << " bpi=" << bpi << " options '" << clopt
              << "' skipped: " << what.substr(0, what.find('\n')) << '\n';
          continue;
        }
        ++measured;
        NBodySim& sim = *simPtr;
        // Warm-up (kernel compilation caches, clocks), also sizes the run.
        const auto w0 = Clock::now();
        sim.step();
        ctx.queue().finish();
        const double once = std::chrono::duration<double>(Clock::now() - w0).count();
        unsigned long long s = steps ? steps
                                     : std::clamp<unsigned long long>(
                                           static_cast<unsigned long long>(1.0 / std::max(once, 1e-6)),
                                           3, 2000);
        sim.profiler().reset();
        for (unsigned long long k = 0; k < s; ++k) sim.step();
        ctx.queue().finish();
        sim.profiler().collect(true);
        // The force phase: the gravity kernel and, with a split, its reduction.
        double gravityMs = 0, stepMs = 0;
        for (const auto& st : sim.profiler().stats()) {
          if (st.name == "gravity" || st.name == "gravity_reduce") gravityMs += st.totalMs / double(s);
          stepMs += st.totalMs / double(s);
        }
        // The tree: gravity = the whole step but the drift; pairs/s is then
        // the direct-equivalent rate N^2 / t.
        if (sim.method() == NBodyMethod::Tree) {
          gravityMs = stepMs;
          for (const auto& st : sim.profiler().stats())
            if (st.name == "drift") gravityMs -= st.totalMs / double(s);
          if (!asJson)
            err << "N=" << n << " tree, theta " << params.get("theta") << ", walk stack "
                << sim.tree()->stackCap() << " entries, groups " << sim.tree()->groupCount()
                << ", nodes summed body by body (stack full): " << sim.tree()->fallbacks() << "\n"
                << sim.profiler().table();
        }
        const double pairs = double(n) * double(n) / (gravityMs * 1e-3);
        if (asJson) {
          json row{{"n", n}, {"method", methodName(sim.method())}, {"wg", wg},
                   {"bpi", bpi}, {"split", cfg.split}, {"unroll", unroll},
                   {"cl_options", clopt}, {"steps", s},
                   {"gravity_ms", gravityMs}, {"step_ms", stepMs},
                   {"pair_interactions_per_s", pairs}};
          if (sim.method() == NBodyMethod::Tree)  // what the text's tree line says
            row.update({{"theta", params.get("theta")}, {"tree_stack", sim.tree()->stackCap()},
                        {"tree_groups", sim.tree()->groupCount()}, {"tree_fallbacks", sim.tree()->fallbacks()},
                        {"phases_ms_per_step", profileJson(sim.profiler())}});
          rows.push_back(std::move(row));
        } else {
          char line[160];
          std::snprintf(line, sizeof line, "%10llu %5llu %3llu %5u %6llu %6llu %11.4f %9.4f %12.4e  %s\n",
                        n, wg, bpi, cfg.split, unroll, s, gravityMs, stepMs, pairs, clopt.c_str());
          out << line << std::flush;
        }
      }
  }
  if (measured == 0)
    throw UsageError("bench nbody: every configuration was skipped (see above): nothing to "
                     "measure; check --wg, --bpi, --unroll and --cl-options");
  if (asJson) out << json{{"device", deviceJson(ctx.info())}, {"nbody", rows}}.dump(2) << '\n';
  return 0;
}

}  // namespace

Runner addBenchNbody(Options& o) {
  auto a = std::make_shared<NbodyArgs>();
  addNbodyOptions(o, *a);
  return [a](std::ostream& out, std::ostream& err) { return benchNbody(*a, out, err); };
}

}  // namespace eddy::cli
