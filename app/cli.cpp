#include "cli.hpp"

#include "config.hpp"
#include "factory.hpp"
#include "io.hpp"
#include "nbody.hpp"
#include "snapshot.hpp"
#include "vtk.hpp"

#include <nlohmann/json.hpp>

#include <chrono>
#include <cmath>
#include <iomanip>
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>

namespace eddy {

namespace {

using Clock = std::chrono::steady_clock;
using json = nlohmann::json;

class UsageError : public Error {
 public:
  using Error::Error;
};

const char* kUsage = R"(usage: eddy-cli <command> [options]

commands:
  devices                      list OpenCL platforms and devices
  run [options]                run a simulation headless
  bench nbody [options]        measure the N-body force kernel
  params [--sim S]             list the declared parameters of a simulation
  help, --help                 this text;  --version  the version

run options:
  --config FILE.json           read the run from a config file; flags given with it
                               override the file's values (see docs/USAGE.md)
  --sim nbody                  simulation (default nbody)
  --scene NAME                 nbody: plummer (default), galaxies, collapse
  --n N                        body count (default 16384)
  --steps N                    steps to run (default 1000; counted from a loaded step)
  --until T                    run until simulated time T instead of --steps
  --device gpu|cpu|P:D         device (default: first GPU, else a CPU device)
  --set key=value              set a declared parameter (repeatable; see 'params')
  --ic FILE.csv                nbody initial conditions, header x,y,z,vx,vy,vz,m
  --diag FILE.csv              diagnostics every K steps (--diag-every K, default 10)
  --out FILE.csv               final particle state
  --export DIR                 ParaView frames DIR/step_*.vtp + DIR/eddy.pvd every
                               --export-every K steps (default 100), first and last too
  --save FILE.snap             restart snapshot of the final state
  --load FILE.snap             continue a run from a snapshot (bit-identical)
  --check-every K              blow-up check (NaN/inf on the device) every K steps
                               (default 100, 0 = off)
  --json                       machine-readable summary on stdout
  --quiet                      no progress on stderr

bench options:
  --n LIST                     comma-separated counts (default 4096,16384,65536,262144 on a
                               GPU; 1024,4096,16384 on a CPU)
  --wg LIST, --bpi LIST        work-group sizes / bodies per work-item to try (default 256 / 1)
  --unroll LIST                unroll factors of the tile loop (0 = full; default 8)
  --cl-options STR             kernel compiler options to try (repeatable)
  --steps N                    timed steps per configuration (default: about 1 s of work)
  --device, --json             as for run
)";

// Cursor over the arguments with typed accessors that name the flag on error.
class Args {
 public:
  explicit Args(const std::vector<std::string>& a) : a_(a) {}
  bool done() const { return i_ >= a_.size(); }
  std::string next() { return a_[i_++]; }
  std::string value(const std::string& flag) {
    if (done() || (a_[i_].rfind("--", 0) == 0 && a_[i_].size() > 2))
      throw UsageError(flag + " needs a value");
    return next();
  }
  unsigned long long count(const std::string& flag, unsigned long long min,
                           unsigned long long max) {
    const std::string v = value(flag);
    unsigned long long n = 0;
    if (!parseUnsigned(v, n))
      throw UsageError(flag + ": '" + v + "' is not a whole number");
    if (n < min || n > max)
      throw UsageError(flag + ": " + v + " is out of range [" + std::to_string(min) + ", " +
                       std::to_string(max) + "]");
    return n;
  }
  double real(const std::string& flag, double min, double max) {
    const std::string v = value(flag);
    double d = 0;
    if (!parseDouble(v, d)) throw UsageError(flag + ": '" + v + "' is not a finite number");
    if (d < min || d > max) {
      std::ostringstream o;
      o << flag << ": " << v << " is out of range [" << min << ", " << max << "]";
      throw UsageError(o.str());
    }
    return d;
  }
  std::vector<unsigned long long> list(const std::string& flag, unsigned long long min,
                                       unsigned long long max) {
    const std::string v = value(flag);
    std::vector<unsigned long long> out;
    std::stringstream ss(v);
    std::string item;
    while (std::getline(ss, item, ',')) {
      unsigned long long n = 0;
      if (!parseUnsigned(item, n) || n < min || n > max)
        throw UsageError(flag + ": '" + item + "' is not a whole number in [" +
                         std::to_string(min) + ", " + std::to_string(max) + "]");
      out.push_back(n);
    }
    if (out.empty() || v.back() == ',') throw UsageError(flag + ": empty list item in '" + v + "'");
    return out;
  }

 private:
  const std::vector<std::string>& a_;
  size_t i_ = 0;
};

json deviceJson(const DeviceInfo& d) {
  return {{"platform", d.platformName}, {"name", d.name},          {"type", d.typeName()},
          {"driver", d.driverVersion},   {"compute_units", d.computeUnits},
          {"global_mem_bytes", d.globalMem}, {"gl_sharing", d.glSharing},
          {"index", std::to_string(d.platformIndex) + ":" + std::to_string(d.deviceIndex)}};
}

json profileJson(const Profiler& p) {
  json a = json::array();
  for (const auto& s : p.stats())
    a.push_back({{"phase", s.name}, {"last_ms", s.lastMs}, {"mean_ms", s.meanMs},
                 {"min_ms", s.minMs}, {"max_ms", s.maxMs}, {"total_ms", s.totalMs},
                 {"launches", s.count}});
  return a;
}

int cmdDevices(std::ostream& out) {
  out << formatDeviceList(enumerateDevices());
  return 0;
}

int cmdParams(Args& args, std::ostream& out) {
  std::string sim = "nbody";
  while (!args.done()) {
    const std::string a = args.next();
    if (a == "--sim") sim = args.value(a);
    else throw UsageError("params: unknown option '" + a + "'");
  }
  for (const auto& d : paramDecl(sim)) {
    out << std::left << std::setw(22) << d.name << " default " << d.def << ", range [" << d.min
        << ", " << d.max << "]" << (d.unit.empty() ? "" : " " + d.unit)
        << (d.integer ? " (integer)" : "") << "\n    " << d.label << ": " << d.description
        << '\n';
  }
  return 0;
}

struct RunOptions {
  RunConfig cfg;  // the config file with the command line's flags on top
  std::vector<std::string> sets;
  std::string configPath, loadPath;
  bool json = false, quiet = false;
};

std::string joinNames(const std::vector<std::string>& names) {
  std::string s;
  for (const auto& n : names) s += (s.empty() ? "" : ", ") + n;
  return s;
}

RunOptions parseRun(Args& args) {
  RunOptions o;
  RunConfig cli;
  auto count = [&](const std::string& flag, CountLimit lim) {
    return args.count(flag, lim.min, lim.max);
  };
  while (!args.done()) {
    const std::string a = args.next();
    if (a == "--sim") cli.sim = args.value(a);
    else if (a == "--scene") cli.scene = args.value(a);
    else if (a == "--n") cli.n = count(a, kLimitN);
    else if (a == "--steps") cli.steps = count(a, kLimitSteps);
    else if (a == "--until") cli.until = args.real(a, 0, kMaxUntil);
    else if (a == "--device") cli.device = args.value(a);
    else if (a == "--set") o.sets.push_back(args.value(a));
    else if (a == "--ic") cli.ic = args.value(a);
    else if (a == "--diag") cli.diag = args.value(a);
    else if (a == "--diag-every") cli.diagEvery = count(a, kLimitEvery);
    else if (a == "--out") cli.out = args.value(a);
    else if (a == "--export") cli.exportDir = args.value(a);
    else if (a == "--export-every") cli.exportEvery = count(a, kLimitEvery);
    else if (a == "--check-every") cli.checkEvery = count(a, kLimitCheckEvery);
    else if (a == "--save") cli.save = args.value(a);
    else if (a == "--load") o.loadPath = args.value(a);
    else if (a == "--config") o.configPath = args.value(a);
    else if (a == "--json") o.json = true;
    else if (a == "--quiet") o.quiet = true;
    else throw UsageError("run: unknown option '" + a + "' (see eddy-cli --help)");
  }
  if (cli.until && cli.steps) throw UsageError("run: give either --steps or --until, not both");
  if (cli.ic && (cli.scene || cli.n))
    throw UsageError("--ic replaces the scene: do not combine it with --scene or --n");

  // The config file first, then every flag given on the command line on top.
  RunConfig c;
  if (!o.configPath.empty()) {
    try {
      c = loadConfig(o.configPath);
    } catch (const Error& e) {
      throw UsageError(std::string("--config: ") + e.what());
    }
    if (cli.sim && c.sim.value_or("nbody") != *cli.sim && !c.params.empty())
      throw UsageError("--sim " + *cli.sim + " overrides the config's simulation '" +
                       c.sim.value_or("nbody") + "', whose \"params\" do not apply");
  }
  auto over = [](auto& base, const auto& top) {
    if (top) base = top;
  };
  over(c.sim, cli.sim);
  over(c.device, cli.device);
  over(c.diag, cli.diag);
  over(c.diagEvery, cli.diagEvery);
  over(c.out, cli.out);
  over(c.exportDir, cli.exportDir);
  over(c.exportEvery, cli.exportEvery);
  over(c.checkEvery, cli.checkEvery);
  over(c.save, cli.save);
  if (cli.steps || cli.until) {
    c.steps = cli.steps;
    c.until = cli.until;
  }
  if (cli.ic) {
    c.ic = cli.ic;
    c.scene.reset();
    c.n.reset();
  }
  if (cli.scene || cli.n) {
    over(c.scene, cli.scene);
    over(c.n, cli.n);
    c.ic.reset();
  }
  o.cfg = c;

  const std::string sim = c.sim.value_or("nbody");
  const auto& sims = simulationNames();
  if (std::find(sims.begin(), sims.end(), sim) == sims.end())
    throw UsageError("--sim '" + sim + "': unknown simulation; known: " + joinNames(sims));
  if (c.scene) {
    const auto names = sceneNames(sim);
    if (std::find(names.begin(), names.end(), *c.scene) == names.end())
      throw UsageError("--scene '" + *c.scene + "': unknown " + sim + " scene; known: " +
                       joinNames(names));
  }
  if (c.ic && sim != "nbody") throw UsageError("--ic is only for --sim nbody");
  if (!o.loadPath.empty() && (c.sim || c.scene || c.n || c.ic))
    throw UsageError("--load restores the simulation and its scene: do not combine it with "
                     "--sim, --scene, --n or --ic (nor a config that sets them)");
  if (c.exportEvery && !c.exportDir) throw UsageError("--export-every needs --export DIR");
  if (c.diagEvery && !c.diag) throw UsageError("--diag-every needs --diag FILE");
  return o;
}

int cmdRun(Args& args, std::ostream& out, std::ostream& err) {
  RunOptions o = parseRun(args);
  const RunConfig& c = o.cfg;

  // Everything read from files is checked before the device is opened.
  std::optional<Snapshot> snapshot;
  SceneSpec spec;
  Params params;
  if (!o.loadPath.empty()) {
    snapshot = Snapshot::read(o.loadPath);
    SnapshotHeader h = readSnapshotHeader(*snapshot);
    spec = h.spec;
    params = h.params;
  } else {
    spec.sim = c.sim.value_or("nbody");
    spec.scene = c.scene.value_or("");
    spec.n = c.n.value_or(0);
    spec.icPath = c.ic.value_or("");
    params = Params(paramDecl(spec.sim));
  }
  // Changes on top of the scene's (or the snapshot's) values: config, then --set.
  std::vector<std::pair<std::string, double>> changes = c.params;
  for (const auto& s : o.sets) {
    Params probe = params;
    try {
      probe.setAssignment(s);
    } catch (const ParamError& e) {
      throw UsageError(std::string("--set ") + s + ": " + e.what());
    }
    const std::string key = s.substr(0, s.find('='));
    changes.emplace_back(key, probe.get(key));
  }
  for (const auto& [k, v] : changes) params.set(k, v);

  Context ctx(c.device.value_or(""));
  if (!o.quiet) err << "eddy: device " << ctx.info().name << " (" << ctx.info().platformName << ")\n";
  std::unique_ptr<Simulation> sim;
  if (snapshot) {
    auto loaded = loadSnapshot(ctx, *snapshot);
    sim = std::move(loaded.sim);
    for (const auto& [k, v] : changes) sim->params().set(k, v);
    snapshot.reset();  // the host copy of the state is no longer needed
    if (!o.quiet)
      err << "eddy: resumed " << o.loadPath << " at step " << sim->steps() << ", t = "
          << sim->time() << '\n';
  } else {
    sim = makeSimulation(ctx, spec, params);
  }
  const std::string scene = spec.icPath.empty()
                                ? (spec.scene.empty() ? defaultScene(spec.sim) : spec.scene)
                                : "ic:" + spec.icPath;
  const uint64_t steps = c.steps.value_or(1000);
  const uint64_t diagEvery = c.diagEvery.value_or(10);
  const uint64_t exportEvery = c.exportEvery.value_or(100);
  const uint64_t checkEvery = c.checkEvery.value_or(100);
  const uint64_t startStep = sim->steps();

  std::unique_ptr<AtomicFile> diag;
  const auto columns = sim->diagColumns();
  if (c.diag) {
    diag = std::make_unique<AtomicFile>(*c.diag);
    diag->stream() << joinCsv(columns) << '\n';
  }
  std::unique_ptr<VtkSeries> series;
  if (c.exportDir) {
    series = std::make_unique<VtkSeries>(*c.exportDir);
    series->add(sim->frame());
  }
  const std::vector<double> first = sim->diagRow();
  if (diag) diag->stream() << joinCsv(first) << '\n';

  auto finished = [&] {
    if (c.until) return sim->time() >= *c.until - 1e-12;
    return sim->steps() - startStep >= steps;
  };
  const auto t0 = Clock::now();
  auto lastReport = t0;
  sim->profiler().reset();
  try {
    while (!finished()) {
      sim->step();
      const uint64_t s = sim->steps();
      if (checkEvery && s % checkEvery == 0)
        if (auto b = sim->pollFinite()) throw BlowUpError(*b, sim->kind());
      if (diag && s % diagEvery == 0) diag->stream() << joinCsv(sim->diagRow()) << '\n';
      if (series && s % exportEvery == 0) series->add(sim->frame());
      const auto now = Clock::now();
      if (!o.quiet && now - lastReport > std::chrono::seconds(2)) {
        lastReport = now;
        const double secs = std::chrono::duration<double>(now - t0).count();
        const uint64_t done = s - startStep;
        err << "  step " << s;
        if (!c.until) err << " (" << std::fixed << std::setprecision(0)
                          << 100.0 * double(done) / double(std::max<uint64_t>(steps, 1)) << "%)";
        err << std::defaultfloat << std::setprecision(6) << "  t = " << sim->time() << "  "
            << std::setprecision(4) << double(done) / secs << " steps/s\n";
      }
    }
    sim->context().queue().finish();
    if (checkEvery)
      if (auto b = sim->checkFiniteNow()) throw BlowUpError(*b, sim->kind());
  } catch (const BlowUpError&) {
    // Keep what was recorded up to the blow-up; write no final state over good files.
    if (diag) diag->commit();
    throw;
  }
  const double wall = std::chrono::duration<double>(Clock::now() - t0).count();
  sim->profiler().collect(true);
  const std::vector<double> last = sim->diagRow();
  const bool moved = sim->steps() != startStep;
  if (diag && moved && sim->steps() % diagEvery != 0) diag->stream() << joinCsv(last) << '\n';
  if (diag) diag->commit();
  if (series && moved && sim->steps() % exportEvery != 0) series->add(sim->frame());
  if (c.out) writeCsv(*c.out, sim->stateColumns(), sim->stateRows());
  if (c.save) saveSnapshot(*sim, spec, *c.save);

  // Relative change of the total energy (N-body) where the columns have it.
  std::optional<double> dE;
  for (size_t i = 0; i < columns.size(); ++i)
    if (columns[i] == "total" && first[i] != 0) dE = (last[i] - first[i]) / std::fabs(first[i]);
  std::optional<double> virial;
  if (auto* nb = dynamic_cast<NBodySim*>(sim.get())) virial = nb->diagnostics().virialRatio;

  if (o.json) {
    json j;
    j["sim"] = spec.sim;
    j["scene"] = scene;
    j["n"] = sim->size();
    j["steps"] = sim->steps();
    j["time"] = sim->time();
    j["device"] = deviceJson(ctx.info());
    j["wall_s"] = wall;
    j["steps_per_s"] = wall > 0 ? double(sim->steps()) / wall : 0.0;
    json a = json::object(), b = json::object();
    for (size_t i = 0; i < columns.size(); ++i) {
      a[columns[i]] = first[i];
      b[columns[i]] = last[i];
    }
    j["initial"] = a;
    j["final"] = b;
    if (dE) j["energy_rel_change"] = *dE;
    if (virial) j["virial_ratio"] = *virial;
    j["profile"] = profileJson(sim->profiler());
    j["params"] = json::object();
    for (const auto& d : sim->params().declarations()) j["params"][d.name] = sim->params().get(d.name);
    out << j.dump(2) << '\n';
  } else {
    out << "eddy " << spec.sim << " scene " << scene << ", N = " << sim->size() << ", "
        << sim->steps() << " steps to t = " << sim->time() << " in " << std::setprecision(4)
        << wall << " s (" << double(sim->steps()) / std::max(wall, 1e-9) << " steps/s)\n";
    out << "device: " << ctx.info().name << " (" << ctx.info().platformName << ", driver "
        << ctx.info().driverVersion << ")\n\n";
    out << "per-kernel device time (window of the last " << 128 << " launches):\n"
        << sim->profiler().table() << '\n';
    out << std::setprecision(10);
    out << "diagnostics        initial              final\n";
    for (size_t i = 0; i < columns.size(); ++i)
      out << "  " << std::left << std::setw(14) << columns[i] << std::right << std::setw(20)
          << first[i] << ' ' << std::setw(20) << last[i] << '\n';
    if (dE) out << "  relative energy change " << std::setprecision(4) << *dE << '\n';
    if (virial) out << "  virial ratio 2K/|W|    " << std::setprecision(4) << *virial << '\n';
  }
  return 0;
}

int cmdBench(Args& args, std::ostream& out, std::ostream& err) {
  if (args.done()) throw UsageError("bench: which benchmark? 'bench nbody'");
  const std::string what = args.next();
  if (what != "nbody") throw UsageError("bench: unknown benchmark '" + what + "' (known: nbody)");
  std::vector<unsigned long long> ns, wgs{256}, bpis{1}, unrolls{8};
  std::vector<std::string> clOptions;
  std::string device;
  unsigned long long steps = 0;
  bool asJson = false;
  while (!args.done()) {
    const std::string a = args.next();
    if (a == "--n") ns = args.list(a, 1, 1ull << 31);
    else if (a == "--wg") wgs = args.list(a, 1, 4096);
    else if (a == "--bpi") bpis = args.list(a, 1, 16);
    else if (a == "--unroll") unrolls = args.list(a, 0, 1024);
    else if (a == "--cl-options") clOptions.push_back(args.value(a));
    else if (a == "--steps") steps = args.count(a, 1, 100000);
    else if (a == "--device") device = args.value(a);
    else if (a == "--json") asJson = true;
    else throw UsageError("bench: unknown option '" + a + "'");
  }
  Context ctx(device);
  const bool gpu = ctx.info().type & CL_DEVICE_TYPE_GPU;
  if (clOptions.empty()) clOptions.push_back(kDefaultNBodyClOptions);
  if (ns.empty()) ns = gpu ? std::vector<unsigned long long>{4096, 16384, 65536, 262144}
                           : std::vector<unsigned long long>{1024, 4096, 16384};
  json rows = json::array();
  if (!asJson) {
    out << "device: " << ctx.info().name << " (" << ctx.info().platformName << ", driver "
        << ctx.info().driverVersion << ")\n";
    out << "         N    wg bpi unroll  steps  gravity_ms   step_ms      pairs/s  cl-options\n";
  }
  for (const auto n : ns)
    for (const auto wg : wgs)
      for (const auto bpi : bpis)
      for (const auto unroll : unrolls)
      for (const auto& clopt : clOptions) {
        Params params(nbodyParamDecl());
        params.set("dt", 1e-4);
        auto bodies = makeNBodyScene("plummer", n, 1);
        NBodyKernelConfig cfg;
        cfg.wg = unsigned(wg);
        cfg.bpi = unsigned(bpi);
        cfg.unroll = unsigned(unroll);
        cfg.extraOptions = clopt;
        NBodySim sim(ctx, params, bodies, cfg);
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
        double gravityMs = 0, stepMs = 0;
        for (const auto& st : sim.profiler().stats()) {
          if (st.name == "gravity") gravityMs = st.totalMs / double(st.count);
          stepMs += st.totalMs / double(s);
        }
        const double pairs = double(n) * double(n) / (gravityMs * 1e-3);
        if (asJson) {
          rows.push_back({{"n", n}, {"wg", wg}, {"bpi", bpi}, {"unroll", unroll},
                          {"cl_options", clopt}, {"steps", s},
                          {"gravity_ms", gravityMs}, {"step_ms", stepMs},
                          {"pair_interactions_per_s", pairs}});
        } else {
          char line[160];
          std::snprintf(line, sizeof line, "%10llu %5llu %3llu %6llu %6llu %11.4f %9.4f %12.4e  %s\n",
                        n, wg, bpi, unroll, s, gravityMs, stepMs, pairs, clopt.c_str());
          out << line << std::flush;
        }
      }
  if (asJson) out << json{{"device", deviceJson(ctx.info())}, {"nbody", rows}}.dump(2) << '\n';
  (void)err;
  return 0;
}

}  // namespace

int cliMain(const std::vector<std::string>& argv, std::ostream& out, std::ostream& err) {
  Args args(argv);
  try {
    if (args.done()) {
      err << kUsage;
      return 2;
    }
    const std::string cmd = args.next();
    if (cmd == "help" || cmd == "--help" || cmd == "-h") {
      out << kUsage;
      return 0;
    }
    if (cmd == "--version") {
      out << "eddy " << EDDY_VERSION << '\n';
      return 0;
    }
    if (cmd == "devices") return cmdDevices(out);
    if (cmd == "params") return cmdParams(args, out);
    if (cmd == "run") return cmdRun(args, out, err);
    if (cmd == "bench") return cmdBench(args, out, err);
    throw UsageError("unknown command '" + cmd + "' (commands: devices, run, bench, params)");
  } catch (const UsageError& e) {
    err << "eddy-cli: error: " << e.what() << "\n(see 'eddy-cli --help')\n";
    return 2;
  } catch (const Error& e) {
    err << "eddy-cli: error: " << e.what() << '\n';
    return 1;
  } catch (const cl::Error& e) {
    err << "eddy-cli: OpenCL error: " << describe(e) << '\n';
    return 1;
  } catch (const std::bad_alloc&) {
    err << "eddy-cli: error: out of host memory\n";
    return 1;
  } catch (const std::exception& e) {
    err << "eddy-cli: error: " << e.what() << '\n';
    return 1;
  }
}

}  // namespace eddy
