#include "cli.hpp"

#include "factory.hpp"
#include "io.hpp"
#include "nbody.hpp"

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
  bench frame [options]        the desktop app's per-frame device work without a window:
                               steps + colour field + host copy of the positions
  params [--sim S]             list the declared parameters of a simulation
  help, --help                 this text;  --version  the version

run options:
  --sim nbody                  simulation (default nbody)
  --scene NAME                 nbody: plummer (default), galaxies, collapse
  --n N                        body count (default 16384)
  --steps N                    steps to run (default 1000)
  --until T                    run until simulated time T instead of --steps
  --device gpu|cpu|P:D         device (default: first GPU, else a CPU device)
  --set key=value              set a declared parameter (repeatable; see 'params')
  --ic FILE.csv                nbody initial conditions, header x,y,z,vx,vy,vz,m
  --diag FILE.csv              diagnostics every K steps (--diag-every K, default 10)
  --out FILE.csv               final particle state
  --json                       machine-readable summary on stdout
  --quiet                      no progress on stderr

bench frame options:
  --sim, --scene, --n, --set, --device   as for run
  --frames N (default 50)  --substeps K (default 1)  --color FIELD|none  --json

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

  auto finished = [&] {
    if (o.until) return sim->time() >= *o.until - 1e-12;
    return sim->steps() >= o.steps;
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

// The desktop app's per-frame device work, headless (a GPU server has no
// display): `substeps` steps, the colour field kernel, and the non-blocking
// reads of the field and the positions into host memory, double-buffered like
// the app's host-copy path (frame f's copy is waited for in frame f+1).
int cmdBenchFrame(Args& args, std::ostream& out, std::ostream& err) {
  SceneSpec spec;
  std::vector<std::string> sets;
  std::string device, color;
  unsigned long long frames = 50, substeps = 1;
  bool asJson = false;
  while (!args.done()) {
    const std::string a = args.next();
    if (a == "--sim") spec.sim = args.value(a);
    else if (a == "--scene") spec.scene = args.value(a);
    else if (a == "--n") spec.n = args.count(a, 1, 1ull << 31);
    else if (a == "--set") sets.push_back(args.value(a));
    else if (a == "--device") device = args.value(a);
    else if (a == "--frames") frames = args.count(a, 1, 1000000);
    else if (a == "--substeps") substeps = args.count(a, 1, 10000);
    else if (a == "--color") color = args.value(a);
    else if (a == "--json") asJson = true;
    else throw UsageError("bench frame: unknown option '" + a + "'");
  }
  const auto& sims = simulationNames();
  if (std::find(sims.begin(), sims.end(), spec.sim) == sims.end())
    throw UsageError("--sim '" + spec.sim + "': unknown simulation");
  Params params(paramDecl(spec.sim));
  for (const auto& s : sets) {
    try {
      params.setAssignment(s);
    } catch (const ParamError& e) {
      throw UsageError(std::string("--set ") + s + ": " + e.what());
    }
  }
  Context ctx(device);
  auto sim = makeSimulation(ctx, spec, params);
  const auto fields = sim->colorFields();
  int field = fields.empty() ? -1 : 0;
  if (color == "none") field = -1;
  else if (!color.empty()) {
    const auto it = std::find(fields.begin(), fields.end(), color);
    if (it == fields.end()) throw UsageError("--color '" + color + "': not a colour field of " + spec.sim);
    field = int(it - fields.begin());
  }
  const size_t n = sim->size();
  std::vector<float> pos[2] = {std::vector<float>(n * 4), std::vector<float>(n * 4)};
  std::vector<float> col[2] = {std::vector<float>(n), std::vector<float>(n)};
  cl::Buffer colDev(ctx.context(), CL_MEM_READ_WRITE, n * sizeof(float));
  Profiler frameProf;
  cl::Event pending[2][2];
  auto& q = ctx.queue();
  auto oneFrame = [&](unsigned long long f) {
    const int w = int(f % 2);
    for (unsigned long long s = 0; s < substeps; ++s) sim->step();
    if (field >= 0) {
      frameProf.record("color", sim->writeColorField(size_t(field), colDev));
      q.enqueueReadBuffer(colDev, CL_FALSE, 0, n * sizeof(float), col[w].data(), nullptr, &pending[w][1]);
      frameProf.record("transfer field", pending[w][1]);
    }
    q.enqueueReadBuffer(sim->positionBuffer(), CL_FALSE, 0, n * 4 * sizeof(float), pos[w].data(),
                        nullptr, &pending[w][0]);
    frameProf.record("transfer pos", pending[w][0]);
    q.flush();
    for (auto& e : pending[1 - w])  // the slot "drawn" this frame: last frame's copy
      if (e()) e.wait();
    frameProf.collect(false);
  };
  for (unsigned long long f = 0; f < 3; ++f) oneFrame(f);  // warm-up
  q.finish();
  sim->profiler().reset();
  frameProf.reset();
  const auto t0 = Clock::now();
  for (unsigned long long f = 0; f < frames; ++f) oneFrame(f + 3);
  q.finish();
  const double wall = std::chrono::duration<double>(Clock::now() - t0).count();
  sim->profiler().collect(true);
  frameProf.collect(true);
  double simMs = 0, transferMs = 0, colorMs = 0;
  for (const auto& st : sim->profiler().stats()) simMs += st.totalMs;
  for (const auto& st : frameProf.stats())
    (st.name == "color" ? colorMs : transferMs) += st.totalMs;
  const double fr = double(frames);
  if (asJson) {
    out << json{{"device", deviceJson(ctx.info())}, {"sim", spec.sim}, {"n", n},
                {"frames", frames}, {"substeps", substeps},
                {"color_field", field >= 0 ? fields[size_t(field)] : "none"},
                {"simulate_ms_per_frame", simMs / fr}, {"color_ms_per_frame", colorMs / fr},
                {"transfer_ms_per_frame", transferMs / fr},
                {"wall_ms_per_frame", wall * 1e3 / fr}, {"profile", profileJson(sim->profiler())},
                {"frame_profile", profileJson(frameProf)}}
               .dump(2)
        << '\n';
  } else {
    out << "device: " << ctx.info().name << " (" << ctx.info().platformName << ")\n"
        << spec.sim << ", N = " << n << ", " << frames << " frames x " << substeps
        << " steps, colour field " << (field >= 0 ? fields[size_t(field)] : "none") << "\n"
        << std::fixed << std::setprecision(3) << "per frame (ms): simulate " << simMs / fr
        << " (device)  colour " << colorMs / fr << "  transfer " << transferMs / fr
        << " (device)  wall " << wall * 1e3 / fr << "\n\n"
        << sim->profiler().table() << frameProf.table();
  }
  (void)err;
  return 0;
}

int cmdBench(Args& args, std::ostream& out, std::ostream& err) {
  if (args.done()) throw UsageError("bench: which benchmark? 'bench nbody' or 'bench frame'");
  const std::string what = args.next();
  if (what == "frame") return cmdBenchFrame(args, out, err);
  if (what != "nbody") throw UsageError("bench: unknown benchmark '" + what + "' (known: nbody, frame)");
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
