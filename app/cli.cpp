#include "cli.hpp"

#include "config.hpp"
#include "snapshot.hpp"
#include "vtk.hpp"
#include "session.hpp"

#include "factory.hpp"
#include "io.hpp"
#include "nbody.hpp"
#include "nbody_multi.hpp"
#include "sph.hpp"

#include <nlohmann/json.hpp>

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
  bench frame [options]        the desktop app's per-frame device work without a window:
                               steps + colour field + host copy of the positions
  params [--sim S]             list the declared parameters of a simulation
  help, --help                 this text;  --version  the version

run options:
  --config FILE.json           read the run from a config file; flags given with it
                               override the file's values (see docs/USAGE.md)
  --sim nbody|sph              simulation (default nbody)
  --scene NAME                 nbody: plummer (default), galaxies, collapse
                               sph: dam_break (default), drop, double_dam_break
  --n N                        nbody: body count (default 16384); sph: set spacing instead
  --steps N                    steps to run (default 1000; counted from a loaded step)
  --until T                    run until simulated time T (s for sph) instead of --steps
  --device gpu|cpu|P:D         device (default: first GPU, else a CPU device)
  --devices LIST               nbody: split the bodies over several devices: all, gpu, cpu
                               (every device of that kind) or P:D,P:D,...
  --shares W,W,...             with --devices: relative share of each device (default:
                               measured speed of each device)
  --set key=value              set a declared parameter (repeatable; see 'params')
  --ic FILE.csv                nbody initial conditions, header x,y,z,vx,vy,vz,m
  --diag FILE.csv              diagnostics every K steps (--diag-every K, default 10)
  --out FILE.csv               final particle state
  --export DIR                 ParaView frames DIR/step_*.vtp + DIR/eddy.pvd every
                               --export-every K steps (default 100), first and last too;
                               DIR must be empty or new unless --overwrite is given
  --overwrite                  with --export: first remove an earlier export's
                               step_*.vtp and eddy.pvd from DIR (nothing else)
  --save FILE.snap             restart snapshot of the final state
  --load FILE.snap             continue a run from a snapshot (bit-identical)
  --check-every K              blow-up check (NaN/inf on the device) every K steps
                               (default 100, 0 = only once at the end)
  --json                       machine-readable summary on stdout
  --quiet                      no progress on stderr

bench frame options:
  --sim, --scene, --n, --set, --device   as for run
  --frames N (default 50)  --substeps K (default 1)  --color FIELD|none  --json

bench options:
  --n LIST                     comma-separated counts (nbody default 4096,16384,65536,262144
                               on a GPU, 1024,4096,16384 on a CPU; sph default
                               65536,262144,1048576,4194304 on a GPU, 16384,65536 on a CPU)
  --mode LIST                  sph: cells (direct 27-cell iteration), list (neighbour list);
                               default cells,list
  --cap N                      sph: neighbour list capacity (default 96)
  --approx-divsqrt             sph: the device's default (approximate) fp32 divide and sqrt
                               instead of correctly rounded ones
  --wg LIST, --bpi LIST        nbody: work-group sizes / bodies per work-item to try (default:
                               the layout a run picks for each N)
  --unroll LIST                unroll factors of the tile loop (0 = full; default 8)
  --cl-options STR             kernel compiler options to try (repeatable)
  --steps N                    timed steps per configuration (default: about 1 s of work)
  --device, --json             as for run
  --devices LIST               time whole steps split over these devices (repeatable: each
                               list is one configuration, the first is the baseline of the
                               speedup column); reports pair interactions/s per device and
                               in total and the fraction of the step spent exchanging
  --shares W,W,...             as for run (applies to every list of that length)
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
      o << flag << ": " << v << " is out of range [" << formatNumber(min) << ", "
        << formatNumber(max) << "]";
      throw UsageError(o.str());
    }
    return d;
  }
  std::vector<double> reals(const std::string& flag, double min, double max) {
    const std::string v = value(flag);
    std::vector<double> out;
    std::stringstream ss(v);
    std::string item;
    while (std::getline(ss, item, ',')) {
      double d = 0;
      if (!parseDouble(item, d) || d < min || d > max) {
        std::ostringstream o;
        o << flag << ": '" << item << "' is not a number in [" << formatNumber(min) << ", "
          << formatNumber(max) << "]";
        throw UsageError(o.str());
      }
      out.push_back(d);
    }
    if (out.empty() || v.back() == ',') throw UsageError(flag + ": empty list item in '" + v + "'");
    return out;
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

// Syntax of a --device value (whether the device exists is found out later).
std::string deviceSpec(const std::string& flag, const std::string& v) {
  if (!isDeviceSpec(v)) throw UsageError(flag + " " + deviceSpecError(v));
  return v;
}

// Syntax of a --devices value (the devices themselves are resolved later):
// all | gpu | cpu | P:D[,P:D...], no device listed twice.
std::string checkDeviceList(const std::string& flag, const std::string& v) {
  if (v == "all" || v == "gpu" || v == "cpu") return v;
  std::vector<std::string> seen;
  std::stringstream ss(v);
  std::string item;
  while (std::getline(ss, item, ',')) {
    const auto colon = item.find(':');
    unsigned long long p = 0, d = 0;
    if (colon == std::string::npos || !parseUnsigned(item.substr(0, colon), p) ||
        !parseUnsigned(item.substr(colon + 1), d))
      throw UsageError(flag + ": '" + item + "' is not P:D (platform:device, see 'eddy-cli " +
                       "devices'); expected all, gpu, cpu or a list like 0:0,0:1");
    const std::string norm = std::to_string(p) + ":" + std::to_string(d);
    if (std::find(seen.begin(), seen.end(), norm) != seen.end())
      throw UsageError(flag + ": device " + norm + " is listed twice");
    seen.push_back(norm);
  }
  if (seen.empty() || v.back() == ',') throw UsageError(flag + ": empty item in '" + v + "'");
  return v;
}

void checkShares(const std::vector<double>& shares) {
  double sum = 0;
  for (double w : shares) sum += w;
  if (!shares.empty() && sum <= 0) throw UsageError("--shares: at least one share must be > 0");
}

// Opens every device of a --devices list; a failure names the device.
std::vector<std::unique_ptr<Context>> openDevices(const std::string& list) {
  std::vector<std::unique_ptr<Context>> out;
  for (const auto& info : selectDevices(list)) {
    try {
      out.push_back(std::make_unique<Context>(info));
    } catch (const Error& e) {
      throw Error("device " + deviceTag(info) + ": " + e.what());
    }
  }
  return out;
}

std::vector<Context*> pointers(const std::vector<std::unique_ptr<Context>>& v) {
  std::vector<Context*> out;
  for (const auto& c : v) out.push_back(c.get());
  return out;
}

int cmdDevices(Args& args, std::ostream& out) {
  if (!args.done()) throw UsageError("devices: unknown option '" + args.next() + "'");
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
  const auto& sims = simulationNames();
  if (std::find(sims.begin(), sims.end(), sim) == sims.end())
    throw UsageError("--sim '" + sim + "': unknown simulation; known: " + joinNames(sims));
  for (const auto& d : paramDecl(sim)) {
    if (d.isEnum() || d.isBool()) {
      out << std::left << std::setw(22) << d.name << " default " << d.valueText(d.def) << ", "
          << (d.isEnum() ? "one of: " + joinNames(d.choices) : std::string("true or false"))
          << "\n    " << d.label << ": " << d.description << '\n';
      continue;
    }
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
  std::string devices;          // --devices LIST (nbody across several devices)
  std::vector<double> shares;   // --shares
  bool json = false, quiet = false;
  bool overwrite = false;       // --overwrite: replace an earlier export in --export DIR
};

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
    else if (a == "--device") cli.device = deviceSpec(a, args.value(a));
    else if (a == "--devices") o.devices = checkDeviceList(a, args.value(a));
    else if (a == "--shares") o.shares = args.reals(a, 0, 1e12);
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
    else if (a == "--overwrite") o.overwrite = true;
    else throw UsageError("run: unknown option '" + a + "'");
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

  // A value's origin in messages: the flag, or the config file and its key.
  auto origin = [&](bool fromFlag, const std::string& flag, const std::string& key) {
    return fromFlag ? flag : "--config " + o.configPath + ": key '" + key + "'";
  };
  const std::string sim = c.sim.value_or("nbody");
  const auto& sims = simulationNames();
  if (std::find(sims.begin(), sims.end(), sim) == sims.end())
    throw UsageError("--sim '" + sim + "': unknown simulation; known: " + joinNames(sims));
  if (c.scene) {
    const auto names = sceneNames(sim);
    if (std::find(names.begin(), names.end(), *c.scene) == names.end())
      throw UsageError((cli.scene ? "--scene '" + *c.scene + "'"
                                  : origin(false, "", "scene") + " = '" + *c.scene + "'") +
                       ": unknown " + sim + " scene; known: " + joinNames(names));
  }
  if (c.ic && sim != "nbody")
    throw UsageError(origin(bool(cli.ic), "--ic", "ic") + " is only for --sim nbody");
  if (c.n && sim == "sph")
    throw UsageError(origin(bool(cli.n), "--n", "n") +
                     " is not used by --sim sph: the particle count follows from the scene "
                     "(e.g. --set spacing=0.002)");
  if (c.device && !o.devices.empty())
    throw UsageError("run: give either --device or --devices, not both");
  if (!o.shares.empty() && o.devices.empty()) throw UsageError("--shares needs --devices");
  checkShares(o.shares);
  if (!o.devices.empty() && sim != "nbody")
    throw UsageError("--devices: only --sim nbody runs on several devices");
  if (!o.devices.empty() && !o.loadPath.empty())
    throw UsageError("--load restores onto one device: do not combine it with --devices");
  if (!o.loadPath.empty() && (c.sim || c.scene || c.n || c.ic))
    throw UsageError("--load restores the simulation and its scene: do not combine it with "
                     "--sim, --scene, --n or --ic (nor a config that sets them)");
  if (c.exportEvery && !c.exportDir) throw UsageError("--export-every needs --export DIR");
  if (c.diagEvery && !c.diag) throw UsageError("--diag-every needs --diag FILE");
  if (o.overwrite && !c.exportDir) throw UsageError("--overwrite needs --export DIR");
  return o;
}

// Every output path of a run, checked before anything is computed: each one
// must be writable (the reason named with strerror), no two may name the same
// file, and an export folder must be empty or new unless --overwrite is given.
// All of these are usage errors (exit 2).
void checkOutputs(const RunOptions& o) {
  namespace fs = std::filesystem;
  const RunConfig& c = o.cfg;
  struct Output {
    std::string flag, path;
    bool folder;
  };
  std::vector<Output> outs;
  if (c.diag) outs.push_back({"--diag", *c.diag, false});
  if (c.out) outs.push_back({"--out", *c.out, false});
  if (c.save) outs.push_back({"--save", *c.save, false});
  if (c.exportDir) outs.push_back({"--export", *c.exportDir, true});
  for (const auto& out : outs)
    if (out.path.empty()) throw UsageError(out.flag + " '': cannot write: the path is empty");
  // Canonical paths (also of files that do not exist yet) so that a/../b.csv,
  // ./b.csv and a symbolic link to b.csv are all the same file. Device nodes
  // and FIFOs (/dev/null) may be shared: nothing is replaced there.
  auto canonical = [](const std::string& path) {
    std::error_code ec;
    fs::path p = fs::absolute(path);
    // A symbolic link to a file that does not exist yet: weakly_canonical
    // leaves it unresolved, so follow it by hand (a bounded number of times).
    for (int hops = 0; hops < 40 && fs::is_symlink(p, ec); ++hops) {
      const fs::path target = fs::read_symlink(p, ec);
      if (ec) break;
      p = target.is_absolute() ? target : p.parent_path() / target;
    }
    fs::path r = fs::weakly_canonical(p, ec);
    return ec ? p.lexically_normal() : r;
  };
  for (size_t i = 0; i < outs.size(); ++i)
    for (size_t j = i + 1; j < outs.size(); ++j) {
      const fs::path a = canonical(outs[i].path), b = canonical(outs[j].path);
      // A file inside the export folder clashes only with eddy's own files there.
      const auto& file = outs[j].folder ? outs[i] : outs[j];
      const fs::path fileCanon = outs[j].folder ? a : b, dirCanon = outs[j].folder ? b : a;
      const bool clash =
          a == b ? !isSpecialFile(outs[i].path)
                 : (outs[i].folder || outs[j].folder) && fileCanon.parent_path() == dirCanon &&
                       (fileCanon.filename() == "eddy.pvd" ||
                        isExportFrameName(fileCanon.filename().string()));
      if (clash)
        throw UsageError(outs[i].flag + " '" + outs[i].path + "' and " + outs[j].flag + " '" +
                         outs[j].path + "' name the same file" +
                         (a == b ? "" : " (" + file.flag + " is written into the export folder)") +
                         ": one would overwrite the other");
    }
  for (const auto& out : outs) {
    // A file in an export folder that does not exist yet: the folder's check covers it.
    if (!out.folder && c.exportDir && canonical(out.path).parent_path() == canonical(*c.exportDir) &&
        !fs::exists(*c.exportDir))
      continue;
    const std::string why = out.folder ? outputFolderProblem(out.path) : outputFileProblem(out.path);
    if (!why.empty())
      throw UsageError(out.flag + " '" + out.path + "': cannot write " +
                       (out.folder ? "to this folder: " : "this file: ") + why);
  }
  if (c.exportDir && !o.overwrite) {
    std::error_code ec;
    if (fs::is_directory(*c.exportDir, ec) && !fs::is_empty(*c.exportDir, ec))
      throw UsageError("--export '" + *c.exportDir + "': the folder is not empty; frames of an "
                       "earlier export there would be mixed with this run's. Choose an empty or "
                       "new folder, or give --overwrite to remove the earlier step_*.vtp and "
                       "eddy.pvd first");
  }
}

// SIGINT / SIGTERM during a run: the handler only records the signal; the
// step loop stops at the next step boundary and the run finishes its files.
// (A signal handler can only reach a variable of static storage.)
volatile std::sig_atomic_t gStopSignal = 0;

void onStopSignal(int sig) { gStopSignal = sig; }

// Installs the handlers for the lifetime of a run and restores the previous ones.
class StopSignals {
 public:
  StopSignals() {
    gStopSignal = 0;
    struct sigaction sa{};
    sa.sa_handler = onStopSignal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    sigaction(SIGINT, &sa, &oldInt_);
    sigaction(SIGTERM, &sa, &oldTerm_);
  }
  ~StopSignals() {
    sigaction(SIGINT, &oldInt_, nullptr);
    sigaction(SIGTERM, &oldTerm_, nullptr);
  }
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;
  int received() const { return int(gStopSignal); }

 private:
  struct sigaction oldInt_{}, oldTerm_{};
};

const char* signalName(int sig) { return sig == SIGINT ? "SIGINT" : sig == SIGTERM ? "SIGTERM" : "a signal"; }

// JSON number: a whole value of an integer quantity is written as an integer
// (100, not 100.0).
json jsonNumber(double v, bool integer) {
  if (integer && std::isfinite(v) && v == std::floor(v) && std::fabs(v) < 9.0e15)
    return static_cast<long long>(v);
  return v;
}

// Diagnostics columns that count (steps, particles, list entries).
bool integerColumn(const std::string& name) {
  return name == "step" || name == "escaped" || name == "overflow";
}

int cmdRun(Args& args, std::ostream& out, std::ostream& err) {
  RunOptions o = parseRun(args);
  const RunConfig& c = o.cfg;
  checkOutputs(o);
  const StopSignals signals;

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

  std::vector<std::unique_ptr<Context>> devices;
  if (o.devices.empty()) devices.push_back(std::make_unique<Context>(c.device.value_or("")));
  else devices = openDevices(o.devices);
  if (!o.shares.empty() && o.shares.size() != devices.size())
    throw UsageError("--shares: " + std::to_string(o.shares.size()) + " values for " +
                     std::to_string(devices.size()) + " devices (--devices " + o.devices + ")");
  if (!o.quiet)
    for (const auto& d : devices)
      err << "eddy: device " << deviceTag(d->info()) << " " << d->info().name << " ("
          << d->info().platformName << ")\n";
  std::unique_ptr<Simulation> sim;
  if (snapshot) {
    auto loaded = loadSnapshot(*devices.front(), *snapshot);
    sim = std::move(loaded.sim);
    // As the app does: a parameter that only building a scene uses (spacing,
    // seed, ...) cannot change the loaded particles; it is ignored with a note,
    // and the next snapshot records the values the particles really have.
    for (const auto& [k, v] : changes) {
      const ParamDesc* d = sim->params().find(k);
      if (d && d->rebuild) err << "eddy: " << loadIgnoresNote(k) << '\n';
      else sim->params().set(k, v);
    }
    snapshot.reset();  // the host copy of the state is no longer needed
    if (!o.quiet)
      err << "eddy: resumed " << o.loadPath << " at step " << sim->steps() << ", t = "
          << sim->time() << '\n';
  } else {
    MultiNBodyOptions multi;
    multi.shares = o.shares;
    sim = makeSimulation(pointers(devices), spec, params, multi);
  }
  Context& ctx = sim->context();
  auto* msim = dynamic_cast<MultiNBodySim*>(sim.get());
  if (msim && !o.quiet)
    for (const auto& sh : msim->shares()) {
      char rate[64] = "";
      if (sh.rate > 0) std::snprintf(rate, sizeof rate, ", calibrated %.3g pairs/s", sh.rate);
      char line[256];
      std::snprintf(line, sizeof line, "eddy: device %s integrates %zu bodies [%zu, %zu) (share %.1f%%%s)\n",
                    sh.tag.c_str(), sh.count, sh.first, sh.first + sh.count, 100 * sh.weight, rate);
      err << line;
    }
  const std::string scene = spec.icPath.empty()
                                ? (spec.scene.empty() ? defaultScene(spec.sim) : spec.scene)
                                : "ic:" + spec.icPath;
  SessionSettings run;
  run.steps = c.steps.value_or(1000);
  run.until = c.until;
  run.diagEvery = c.diagEvery.value_or(10);
  run.exportEvery = c.exportEvery.value_or(100);
  run.checkEvery = c.checkEvery.value_or(100);
  Session session(*sim, run);
  const uint64_t startStep = sim->steps();

  std::unique_ptr<AtomicFile> diag;
  const auto columns = sim->diagColumns();
  if (c.diag) {
    diag = std::make_unique<AtomicFile>(*c.diag);
    session.setDiag(&diag->stream());
  }
  std::unique_ptr<VtkSeries> series;
  if (c.exportDir) {
    if (o.overwrite) {
      const size_t removed = removeOldExport(*c.exportDir);
      if (removed && !o.quiet)
        err << "eddy: --overwrite: removed " << removed << " files of an earlier export from "
            << *c.exportDir << '\n';
    }
    series = std::make_unique<VtkSeries>(*c.exportDir);
    session.setSeries(series.get());
  }
  // Progress on stderr every 2 s of wall clock.
  auto lastReport = Session::Clock::now();
  auto progress = [&](uint64_t s) {
    const auto now = Session::Clock::now();
    if (o.quiet || now - lastReport <= std::chrono::seconds(2)) return;
    lastReport = now;
    const double secs = std::chrono::duration<double>(now - session.started()).count();
    const uint64_t done = s - startStep;
    err << "  step " << s;
    if (!c.until) err << " (" << std::fixed << std::setprecision(0)
                      << 100.0 * double(done) / double(std::max<uint64_t>(run.steps, 1)) << "%)";
    err << std::defaultfloat << std::setprecision(6) << "  t = " << sim->time() << "  "
        << std::setprecision(4) << double(done) / secs << " steps/s\n";
  };
  // The first rows and frame; the state before the first step is checked
  // (a blow-up there leaves no diagnostics file behind).
  session.begin();
  lastReport = session.started();
  SessionEnd ended;
  try {
    ended = session.run([&] { return signals.received() != 0; }, progress);
  } catch (const BlowUpError&) {
    // Keep what was recorded up to the blow-up; write no final state over good files.
    if (diag) diag->commit();
    throw;
  }
  const double wall = ended.wallSeconds;
  const std::vector<double>& first = session.firstRow();
  if (const int sig = signals.received()) {
    // Stopped at a step boundary: the diagnostics rows so far are complete and
    // committed, every exported frame and eddy.pvd is already in place; the
    // final state (--out, --save) of a run that did not finish is not written.
    if (diag) diag->commit();
    err << "eddy: " << signalName(sig) << " received: stopped at step " << sim->steps() << " (t = "
        << sim->syncTime() << ") after " << sim->steps() - startStep << " of this run's steps\n";
    if (diag) err << "eddy: wrote " << *c.diag << " (diagnostics up to step " << sim->steps() << ")\n";
    if (series) err << "eddy: wrote " << series->pvdPath() << " (" << series->frames() << " frames)\n";
    if (c.out) err << "eddy: not written: --out " << *c.out << " (the run did not finish)\n";
    if (c.save) err << "eddy: not written: --save " << *c.save << " (the run did not finish)\n";
    return 128 + sig;
  }
  sim->profiler().collect(true);
  const std::vector<double> last = session.end();
  if (diag) diag->commit();
  if (c.out) writeCsv(*c.out, sim->stateColumns(), sim->stateRows());
  if (c.save) saveSnapshot(*sim, spec, *c.save);
  // Never silent: e.g. SPH particles that had to be put back into the tank.
  std::vector<std::string> warnings = sim->runWarnings(last);  // stderr and --json "warnings"

  // Relative change of the conserved total (N-body: energy) where there is
  // one: the first and the last diagnostics row, i.e. the start and the end
  // of this run (no read-backs beyond those two).
  const std::optional<double> dE = sim->conservedDrift(first, last);
  if (const ParamDesc* d = sim->params().find("energy_warning"); d && dE) {
    const double limit = sim->params().get("energy_warning");
    if (limit > 0 && std::fabs(*dE) > limit) {
      std::ostringstream w;
      w << "the total energy changed by " << std::setprecision(4) << 100 * *dE
        << " % over the run (|dE/E| = " << std::fabs(*dE) << " > energy_warning = "
        << formatNumber(limit) << "): the result is not trustworthy; try a smaller dt or a "
        << "larger softening";
      warnings.push_back(w.str());
    }
  }
  for (const auto& w : warnings) err << "eddy: warning: " << w << '\n';
  const std::optional<double> virial = sim->virialRatio();

  if (o.json) {
    json j;
    j["sim"] = spec.sim;
    j["scene"] = scene;
    j["n"] = sim->size();
    j["steps"] = sim->steps() - startStep;  // this run's steps; "step" is the absolute one
    j["step"] = sim->steps();
    j["time"] = sim->syncTime();
    j["device"] = deviceJson(ctx.info());
    if (msim) {
      json ds = json::array();
      for (size_t i = 0; i < msim->shares().size(); ++i) {
        const auto& sh = msim->shares()[i];
        json d = deviceJson(devices[i]->info());
        d["bodies"] = sh.count;
        d["first"] = sh.first;
        d["share"] = sh.weight;
        d["calibrated_pairs_per_s"] = sh.rate;
        ds.push_back(d);
      }
      j["devices"] = ds;
    }
    j["wall_s"] = wall;
    j["steps_per_s"] = wall > 0 ? double(sim->steps() - startStep) / wall : 0.0;
    json a = json::object(), b = json::object();
    for (size_t i = 0; i < columns.size(); ++i) {
      a[columns[i]] = jsonNumber(first[i], integerColumn(columns[i]));
      b[columns[i]] = jsonNumber(last[i], integerColumn(columns[i]));
    }
    j["initial"] = a;
    j["final"] = b;
    if (dE) j["energy_rel_change"] = *dE;
    if (virial) j["virial_ratio"] = *virial;
    j["warnings"] = warnings;
    j["profile"] = profileJson(sim->profiler());
    j["params"] = json::object();
    for (const auto& d : sim->params().declarations()) {
      const double v = sim->params().get(d.name);
      if (d.isEnum()) j["params"][d.name] = d.valueText(v);
      else if (d.isBool()) j["params"][d.name] = v != 0;
      else j["params"][d.name] = jsonNumber(v, d.integer);
    }
    out << j.dump(2) << '\n';
  } else {
    const uint64_t ran = sim->steps() - startStep;
    out << "eddy " << spec.sim << " scene " << scene << ", N = " << sim->size() << ", " << ran
        << " steps";
    if (startStep) out << " (steps " << startStep << " to " << sim->steps() << ")";
    out << " to t = " << sim->syncTime() << " in " << std::setprecision(4) << wall << " s ("
        << double(ran) / std::max(wall, 1e-9) << " steps/s)\n";
    out << "device: " << ctx.info().name << " (" << ctx.info().platformName << ", driver "
        << ctx.info().driverVersion << ")\n";
    if (msim)
      for (size_t i = 0; i < msim->shares().size(); ++i) {
        const auto& sh = msim->shares()[i];
        out << "  " << sh.tag << "  " << sh.name << " (driver " << devices[i]->info().driverVersion
            << "): bodies " << sh.count << " [" << sh.first << ", " << sh.first + sh.count << ")\n";
      }
    out << "\nper-kernel device time (window of the last " << 128 << " launches):\n"
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
    if (v.size() > 1 && !shares.empty() && shares.size() != v.size())
      throw UsageError("--shares: " + std::to_string(shares.size()) + " values for " +
                       std::to_string(v.size()) + " devices (--devices " + set + ")");
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
    const auto bodies = makeNBodyScene("plummer", n, 1);
    double baseline = 0;
    if (!asJson)
      out << "\n         N  devices           steps     step_ms       pairs/s  speedup  exchange\n";
    for (const auto& devs : setDevices) {
      Params params(nbodyParamDecl());
      params.set("dt", 1e-4);
      std::unique_ptr<Simulation> sim;
      MultiNBodySim* multi = nullptr;
      if (devs.size() == 1) {
        sim = std::make_unique<NBodySim>(
            *devs[0], params, bodies,
            cfg ? *cfg : NBodyKernelConfig::automatic(devs[0]->info(), bodies.size()));
      } else {
        checkMultiNBodyMemory(devs, n);
        MultiNBodyOptions o;
        o.shares = shares;
        if (cfg) o.kernels = {*cfg};
        auto m = std::make_unique<MultiNBodySim>(devs, params, bodies, o);
        multi = m.get();
        sim = std::move(m);
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
    else if (a == "--device") device = deviceSpec(a, args.value(a));
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
  // The run loop without outputs or checks: substeps steps per frame.
  SessionSettings plain;
  plain.checkEvery = 0;
  Session session(*sim, plain);
  auto& q = ctx.queue();
  auto oneFrame = [&](unsigned long long f) {
    const int w = int(f % 2);
    for (unsigned long long s = 0; s < substeps; ++s) session.step();
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
  if (args.done())
    throw UsageError("bench: which benchmark? 'bench nbody', 'bench sph' or 'bench frame'");
  const std::string what = args.next();
  if (what == "sph") return cmdBenchSph(args, out);
  if (what == "frame") return cmdBenchFrame(args, out, err);
  if (what != "nbody")
    throw UsageError("bench: unknown benchmark '" + what + "' (known: nbody, sph, frame)");
  std::vector<unsigned long long> ns, wgs, bpis, unrolls{8};
  std::vector<std::string> clOptions, deviceSets;
  std::vector<double> shares;
  std::string device;
  unsigned long long steps = 0;
  bool asJson = false;
  while (!args.done()) {
    const std::string a = args.next();
    if (a == "--n") ns = args.list(a, 1, 1ull << 31);
    else if (a == "--devices") deviceSets.push_back(checkDeviceList(a, args.value(a)));
    else if (a == "--shares") shares = args.reals(a, 0, 1e12);
    else if (a == "--wg") wgs = args.list(a, 1, 4096);
    else if (a == "--bpi") bpis = args.list(a, 1, 16);
    else if (a == "--unroll") unrolls = args.list(a, 0, 1024);
    else if (a == "--cl-options") clOptions.push_back(args.value(a));
    else if (a == "--steps") steps = args.count(a, 1, 100000);
    else if (a == "--device") device = deviceSpec(a, args.value(a));
    else if (a == "--json") asJson = true;
    else throw UsageError("bench: unknown option '" + a + "'");
  }
  if (!shares.empty() && deviceSets.empty()) throw UsageError("--shares needs --devices");
  checkShares(shares);
  if (!deviceSets.empty()) {
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
    out << "         N    wg bpi unroll  steps  gravity_ms   step_ms      pairs/s  cl-options\n";
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
        auto bodies = makeNBodyScene("plummer", n, 1);
        NBodyKernelConfig cfg;
        cfg.wg = unsigned(wg);
        cfg.bpi = unsigned(bpi);
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
  }
  if (measured == 0)
    throw UsageError("bench nbody: every configuration was skipped (see above): nothing to "
                     "measure; check --wg, --bpi, --unroll and --cl-options");
  if (asJson) out << json{{"device", deviceJson(ctx.info())}, {"nbody", rows}}.dump(2) << '\n';
  return 0;
}

// `eddy-cli COMMAND --help` (or -h right after the command): that command's
// help. "--help" is never a flag's value (Args::value refuses "--..." values).
bool wantsHelp(const std::vector<std::string>& argv) {
  if (argv.size() >= 2 && argv[1] == "-h") return true;
  return std::find(argv.begin() + 1, argv.end(), "--help") != argv.end();
}

// The part of kUsage about one command: its line(s) under "commands:" and
// its "... options:" sections.
std::string commandHelp(const std::string& cmd) {
  const std::string usage = kUsage;
  std::string text = "usage: eddy-cli " + cmd + " [options]\n";
  std::vector<std::string> sections;
  if (cmd == "run") sections = {"run options:"};
  else if (cmd == "bench") sections = {"bench options:", "bench frame options:"};
  std::istringstream lines(usage);
  std::string line;
  while (std::getline(lines, line))
    if (line.rfind("  " + cmd + " ", 0) == 0 || line == "  " + cmd) text += line + "\n";
  for (const auto& head : sections) {
    const auto at = usage.find("\n" + head + "\n");
    if (at == std::string::npos) continue;
    const auto end = usage.find("\n\n", at + 1);
    text += usage.substr(at, end == std::string::npos ? std::string::npos : end - at) + "\n";
  }
  return text;
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
    const bool known = cmd == "devices" || cmd == "run" || cmd == "bench" || cmd == "params";
    if (known && wantsHelp(argv)) {
      out << commandHelp(cmd);
      return 0;
    }
    if (cmd == "devices") return cmdDevices(args, out);
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
