#include "cli.hpp"

#include "factory.hpp"
#include "io.hpp"
#include "nbody.hpp"
#include "sph.hpp"

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
  bench sph [options]          measure the SPH step, kernel by kernel
  params [--sim S]             list the declared parameters of a simulation
  help, --help                 this text;  --version  the version

run options:
  --sim nbody|sph              simulation (default nbody)
  --scene NAME                 nbody: plummer (default), galaxies, collapse
                               sph: dam_break (default), drop, double_dam_break
  --n N                        nbody: body count (default 16384); sph: set spacing instead
  --steps N                    steps to run (default 1000)
  --until T                    run until simulated time T (s for sph) instead of --steps
  --device gpu|cpu|P:D         device (default: first GPU, else a CPU device)
  --set key=value              set a declared parameter (repeatable; see 'params')
  --ic FILE.csv                nbody initial conditions, header x,y,z,vx,vy,vz,m
  --diag FILE.csv              diagnostics every K steps (--diag-every K, default 10)
  --out FILE.csv               final particle state
  --json                       machine-readable summary on stdout
  --quiet                      no progress on stderr

bench options:
  --n LIST                     comma-separated counts (nbody default 4096,16384,65536,262144
                               on a GPU, 1024,4096,16384 on a CPU; sph default
                               65536,262144,1048576,4194304 on a GPU, 16384,65536 on a CPU)
  --mode LIST                  sph: cells (direct 27-cell iteration), list (neighbour list);
                               default cells,list
  --cap N                      sph: neighbour list capacity (default 96)
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
  SceneSpec spec;
  std::vector<std::string> sets;
  unsigned long long steps = 1000;
  std::optional<double> until;
  std::string device, diagPath, outPath;
  unsigned long long diagEvery = 10;
  bool json = false, quiet = false;
};

RunOptions parseRun(Args& args) {
  RunOptions o;
  bool stepsGiven = false;
  while (!args.done()) {
    const std::string a = args.next();
    if (a == "--sim") o.spec.sim = args.value(a);
    else if (a == "--scene") o.spec.scene = args.value(a);
    else if (a == "--n") o.spec.n = args.count(a, 1, 1ull << 31);
    else if (a == "--steps") { o.steps = args.count(a, 0, 1ull << 40); stepsGiven = true; }
    else if (a == "--until") o.until = args.real(a, 0, 1e12);
    else if (a == "--device") o.device = args.value(a);
    else if (a == "--set") o.sets.push_back(args.value(a));
    else if (a == "--ic") o.spec.icPath = args.value(a);
    else if (a == "--diag") o.diagPath = args.value(a);
    else if (a == "--diag-every") o.diagEvery = args.count(a, 1, 1ull << 40);
    else if (a == "--out") o.outPath = args.value(a);
    else if (a == "--json") o.json = true;
    else if (a == "--quiet") o.quiet = true;
    else throw UsageError("run: unknown option '" + a + "' (see eddy-cli --help)");
  }
  if (o.until && stepsGiven) throw UsageError("run: give either --steps or --until, not both");
  const auto& sims = simulationNames();
  if (std::find(sims.begin(), sims.end(), o.spec.sim) == sims.end()) {
    std::string known;
    for (const auto& s : sims) known += (known.empty() ? "" : ", ") + s;
    throw UsageError("--sim '" + o.spec.sim + "': unknown simulation; known: " + known);
  }
  if (!o.spec.scene.empty()) {
    const auto names = sceneNames(o.spec.sim);
    if (std::find(names.begin(), names.end(), o.spec.scene) == names.end()) {
      std::string known;
      for (const auto& s : names) known += (known.empty() ? "" : ", ") + s;
      throw UsageError("--scene '" + o.spec.scene + "': unknown " + o.spec.sim +
                       " scene; known: " + known);
    }
  }
  if (!o.spec.icPath.empty() && o.spec.sim != "nbody")
    throw UsageError("--ic is only for --sim nbody");
  if (o.spec.n && o.spec.sim == "sph")
    throw UsageError("--n is not used by --sim sph: the particle count follows from the scene "
                     "(e.g. --set spacing=0.002)");
  if (!o.spec.icPath.empty() && (!o.spec.scene.empty() || o.spec.n))
    throw UsageError("--ic replaces the scene: do not combine it with --scene or --n");
  return o;
}

int cmdRun(Args& args, std::ostream& out, std::ostream& err) {
  RunOptions o = parseRun(args);
  Params params(paramDecl(o.spec.sim));
  for (const auto& s : o.sets) {
    try {
      params.setAssignment(s);
    } catch (const ParamError& e) {
      throw UsageError(std::string("--set ") + s + ": " + e.what());
    }
  }
  Context ctx(o.device);
  if (!o.quiet) err << "eddy: device " << ctx.info().name << " (" << ctx.info().platformName << ")\n";
  auto sim = makeSimulation(ctx, o.spec, params);
  const std::string scene = o.spec.icPath.empty()
                                ? (o.spec.scene.empty() ? defaultScene(o.spec.sim) : o.spec.scene)
                                : "ic:" + o.spec.icPath;

  std::unique_ptr<AtomicFile> diag;
  const auto columns = sim->diagColumns();
  if (!o.diagPath.empty()) {
    diag = std::make_unique<AtomicFile>(o.diagPath);
    diag->stream() << joinCsv(columns) << '\n';
  }
  const std::vector<double> first = sim->diagRow();
  if (diag) diag->stream() << joinCsv(first) << '\n';

  // With --until the simulated time is checked only now and then: where the
  // time step is chosen on the device (SPH), every check is a read-back. The
  // next check comes after half the steps the mean dt says are left.
  unsigned long long nextCheck = 0, lastSteps = sim->steps();
  double lastTime = sim->syncTime();
  auto finished = [&] {
    if (!o.until) return sim->steps() >= o.steps;
    if (sim->steps() < nextCheck) return false;
    const double t = sim->syncTime();
    if (t >= *o.until - 1e-12) return true;
    const double meanDt =
        sim->steps() > lastSteps ? (t - lastTime) / double(sim->steps() - lastSteps) : 0.0;
    const double left = meanDt > 0 ? (*o.until - t) / meanDt : 0.0;
    nextCheck = sim->steps() + std::clamp<unsigned long long>(
                                   static_cast<unsigned long long>(left / 2), 1, 1000);
    lastTime = t;
    lastSteps = sim->steps();
    return false;
  };
  const auto t0 = Clock::now();
  auto lastReport = t0;
  sim->profiler().reset();
  while (!finished()) {
    sim->step();
    if (diag && sim->steps() % o.diagEvery == 0) diag->stream() << joinCsv(sim->diagRow()) << '\n';
    const auto now = Clock::now();
    if (!o.quiet && now - lastReport > std::chrono::seconds(2)) {
      lastReport = now;
      const double secs = std::chrono::duration<double>(now - t0).count();
      err << "  step " << sim->steps();
      if (!o.until) err << "/" << o.steps << " (" << std::fixed << std::setprecision(0)
                        << 100.0 * double(sim->steps()) / double(o.steps) << "%)";
      err << std::defaultfloat << std::setprecision(6) << "  t = " << sim->time() << "  "
          << std::setprecision(4) << double(sim->steps()) / secs << " steps/s\n";
    }
  }
  sim->context().queue().finish();
  const double wall = std::chrono::duration<double>(Clock::now() - t0).count();
  sim->profiler().collect(true);
  const std::vector<double> last = sim->diagRow();
  if (diag && (sim->steps() % o.diagEvery != 0)) diag->stream() << joinCsv(last) << '\n';
  if (diag) diag->commit();
  if (!o.outPath.empty()) writeCsv(o.outPath, sim->stateColumns(), sim->stateRows());
  // Never silent: particles that had to be put back into the tank.
  for (size_t i = 0; i < columns.size(); ++i)
    if ((columns[i] == "escaped" || columns[i] == "overflow") && last[i] > 0)
      err << "eddy: warning: " << columns[i] << " = " << last[i]
          << (columns[i] == "escaped"
                  ? " (particle-steps found outside the tank or non-finite and put back)\n"
                  : " (neighbour-list entries beyond the capacity were dropped)\n");

  // Relative change of the total energy (N-body) where the columns have it.
  std::optional<double> dE;
  for (size_t i = 0; i < columns.size(); ++i)
    if (columns[i] == "total" && first[i] != 0) dE = (last[i] - first[i]) / std::fabs(first[i]);
  std::optional<double> virial;
  if (auto* nb = dynamic_cast<NBodySim*>(sim.get())) virial = nb->diagnostics().virialRatio;

  if (o.json) {
    json j;
    j["sim"] = o.spec.sim;
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
    out << "eddy " << o.spec.sim << " scene " << scene << ", N = " << sim->size() << ", "
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

// bench sph: the full SPH step of a 3-D dam-break column at rest density
// (about 33 neighbours within h), per kernel, for each N and mode.
int cmdBenchSph(Args& args, std::ostream& out) {
  std::vector<unsigned long long> ns;
  std::vector<std::string> modes{"cells", "list"};
  std::string device;
  unsigned long long steps = 0, cap = 96;
  bool asJson = false;
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
      const SphSetup setup = makeSphBenchScene(target, params);
      SphKernelConfig cfg;
      cfg.neighbourList = mode == "list";
      cfg.listCapacity = unsigned(cap);
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

int cmdBench(Args& args, std::ostream& out, std::ostream& err) {
  if (args.done()) throw UsageError("bench: which benchmark? 'bench nbody' or 'bench sph'");
  const std::string what = args.next();
  if (what == "sph") return cmdBenchSph(args, out);
  if (what != "nbody")
    throw UsageError("bench: unknown benchmark '" + what + "' (known: nbody, sph)");
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
