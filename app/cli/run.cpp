// run.cpp: eddy-cli run: options, output checks, a Session, the summary.
#include "cli_common.hpp"

#include "config.hpp"
#include "factory.hpp"
#include "io.hpp"
#include "nbody.hpp"
#include "nbody_multi.hpp"
#include "registry.hpp"
#include "session.hpp"
#include "snapshot.hpp"
#include "sph.hpp"
#include "vtk.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <csignal>
#include <sys/stat.h>
#include <unistd.h>
#include <filesystem>
#include <functional>
#include <iomanip>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <sstream>

namespace eddy::cli {

namespace {

// A wall-clock duration for the progress line: "40 s", "12 min", "5.2 h",
// "3.1 days", "2.4e+03 years".
std::string durationText(double secs) {
  std::ostringstream o;
  o << std::setprecision(2);
  if (secs < 120) o << std::fixed << std::setprecision(0) << secs << " s";
  else if (secs < 7200) o << std::fixed << std::setprecision(0) << secs / 60 << " min";
  else if (secs < 172800) o << secs / 3600 << " h";
  else if (secs < 2 * 3.15576e7) o << secs / 86400 << " days";
  else o << secs / 3.15576e7 << " years";
  return o.str();
}

// What the command line says, before the config file is merged in.
struct RunArgs {
  RunConfig cli;  // the flags that a config file can also give
  std::vector<std::string> sets;
  std::string configPath, loadPath, devices;
  std::vector<double> shares;
  bool json = false, quiet = false;
  bool overwrite = false;  // --overwrite: replace an earlier export in --export DIR
  std::optional<std::string> bodiesOut;  // --bodies-out FILE.csv
  std::vector<BodySpec> bodies;          // --body SPEC (after the config's "bodies")
};

// The command line with the config file merged in.
struct RunOptions : RunArgs {
  RunConfig cfg;  // the config file with the command line's flags on top
  std::string probeOrigin = "--probe";  // "--config FILE: key 'probes'" where they came from it
  // How many of cfg.obstacles / cfg.bodies came from the config file (first).
  size_t configObstacles = 0, configBodies = 0;
};

void addRunOptions(Options& o, RunArgs& a) {
  RunConfig& cli = a.cli;
  o.custom("--config", "FILE.json",
           "read the run from a config file; flags given with it\noverride the file's values (see "
           "docs/USAGE.md)",
           [&a](const std::string& v) { a.configPath = nonEmptyPath("--config", v); });
  addSimOption(o, cli.sim);
  addSceneOption(o, cli.scene);
  o.count("--n", cli.n, kLimitN, "N",
          "nbody: body count (default 16384); sph: set spacing instead");
  o.count("--steps", cli.steps, kLimitSteps, "N",
          "steps to run (default 1000; counted from a loaded step)");
  o.real("--until", cli.until, 0, kMaxUntil, "T",
         "run until simulated time T (s for sph) instead of --steps");
  addDeviceOption(o, cli.device);
  o.custom("--devices", "LIST",
           "nbody: split the bodies over several devices: all, gpu, cpu\n(every device of that "
           "kind) or P:D,P:D,...",
           [&a](const std::string& v) { a.devices = checkDeviceList("--devices", v); });
  o.reals("--shares", a.shares, 0, 1e12, "W,W,...",
          "with --devices: relative share of each device (default:\nmeasured speed of each "
          "device)");
  addSetOption(o, a.sets);
  o.custom("--ic", "FILE.csv", "nbody initial conditions, header x,y,z,vx,vy,vz,m",
           [&cli](const std::string& v) { cli.ic = nonEmptyPath("--ic", v); });
  addObstacleOption(o, cli.obstacles);
  o.text("--diag", cli.diag, "FILE.csv", "diagnostics every --diag-every steps");
  o.count("--diag-every", cli.diagEvery, kLimitEvery, "K", "with --diag (default 10)");
  o.text("--out", cli.out, "FILE.csv", "final particle state");
  addBodyOption(o, a.bodies);
  o.text("--bodies-out", a.bodiesOut, "FILE.csv",
         "sph: the bodies' state every --diag-every steps\n(step,time,body,x,y,z,qw,qx,qy,qz,vx,vy,vz)");
  o.text("--export", cli.exportDir, "DIR",
         "ParaView frames DIR/step_*.vtp + DIR/eddy.pvd every\n--export-every steps, first and "
         "last too;\nDIR must be empty or new unless --overwrite is given");
  o.count("--export-every", cli.exportEvery, kLimitEvery, "K", "with --export (default 100)");
  o.flag("--overwrite", a.overwrite, true,
         "with --export: first remove an earlier export's\nstep_*.vtp and eddy.pvd from DIR "
         "(nothing else)");
  o.text("--save", cli.save, "FILE.snap", "restart snapshot of the final state");
  o.custom("--load", "FILE.snap", "continue a run from a snapshot (bit-identical)",
           [&a](const std::string& v) { a.loadPath = nonEmptyPath("--load", v); });
  o.count("--check-every", cli.checkEvery, kLimitCheckEvery, "K",
          "blow-up check (NaN/inf on the device) every K steps\n(default 100, 0 = only once at "
          "the end)");
  addProbeOption(o, cli.probes);
  o.text("--probe-out", cli.probeOut, "FILE.csv",
         "probe CSV step,time,NAME,... (the scene's probes,\nthe config's, then --probe's)");
  o.count("--probe-every", cli.probeEvery, kLimitEvery, "K",
          "with --probe-out: a sample every K steps (default 10)");
  o.real("--probe-dt", cli.probeDt, kMinProbeDt, kMaxUntil, "T",
         "with --probe-out: a sample at the first step at or\nafter every multiple of T "
         "simulated seconds");
  addJsonOption(o, a.json);
  o.flag("--quiet", a.quiet, true, "no progress on stderr");
}

// The config file merged under the flags, and the checks that need both.
RunOptions resolveRun(const RunArgs& a) {
  RunOptions o;
  static_cast<RunArgs&>(o) = a;
  const RunConfig& cli = a.cli;
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
    if (cli.sim && c.sim.value_or(defaultSimulationName()) != *cli.sim && !c.params.empty())
      throw UsageError("--sim " + *cli.sim + " overrides the config's simulation '" +
                       c.sim.value_or(defaultSimulationName()) + "', whose \"params\" do not apply");
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
  over(c.probeOut, cli.probeOut);
  if (cli.probeEvery || cli.probeDt) {  // the command line's cadence replaces the file's
    c.probeEvery = cli.probeEvery;
    c.probeDt = cli.probeDt;
  }
  // Probes: the config's, then the command line's (the scene's come first, at the run).
  c.probes.insert(c.probes.end(), cli.probes.begin(), cli.probes.end());
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
  o.configObstacles = c.obstacles.size();
  o.configBodies = c.bodies.size();
  // Obstacles: the config's, then each --obstacle.
  c.obstacles.insert(c.obstacles.end(), cli.obstacles.begin(), cli.obstacles.end());
  // The config file's bodies, then --body's.
  c.bodies.insert(c.bodies.end(), o.bodies.begin(), o.bodies.end());
  o.cfg = c;
  // Where the probes came from, for messages about them.
  const bool fileProbes = c.probes.size() > cli.probes.size();
  o.probeOrigin = !fileProbes ? "--probe"
                  : cli.probes.empty() ? "--config " + o.configPath + ": key 'probes'"
                                       : "--probe (or --config " + o.configPath + ": key 'probes')";

  // A value's origin in messages: the flag, or the config file and its key.
  auto origin = [&](bool fromFlag, const std::string& flag, const std::string& key) {
    return fromFlag ? flag : "--config " + o.configPath + ": key '" + key + "'";
  };
  const std::string sim = c.sim.value_or(defaultSimulationName());
  const auto& sims = simulationNames();
  if (std::find(sims.begin(), sims.end(), sim) == sims.end())
    throw UsageError("--sim '" + sim + "': unknown simulation; known: " + joinNames(sims));
  // --load first: the simulation is then the snapshot's, not the default one
  // (whose scenes and obstacles would be the wrong ones to name).
  if (!cli.obstacles.empty() && !o.loadPath.empty())
    throw UsageError("--obstacle: a loaded snapshot keeps its own obstacles; do not combine "
                     "--obstacle with --load");
  if (!o.loadPath.empty() && (c.sim || c.scene || c.n || c.ic))
    throw UsageError("--load restores the simulation and its scene: do not combine it with "
                     "--sim, --scene, --n or --ic (nor a config that sets them)");
  if (!cli.obstacles.empty()) {
    const SimulationType* type = findSimulationType(sim);
    if (!type || !type->takesObstacles) throw UsageError("--obstacle: " + sim + " has no obstacles");
  }
  if (c.scene) {
    const auto names = sceneNames(sim);
    if (std::find(names.begin(), names.end(), *c.scene) == names.end())
      throw UsageError((cli.scene ? "--scene '" + *c.scene + "'"
                                  : origin(false, "", "scene") + " = '" + *c.scene + "'") +
                       ": unknown " + sim + " scene; known: " + joinNames(names));
  }
  if (c.ic && !takesIcFile(sim))
    throw UsageError(origin(bool(cli.ic), "--ic", "ic") + " is only for --sim " + icTypeNames());
  if (c.n && defaultCount(sim) == 0)
    throw UsageError(origin(bool(cli.n), "--n", "n") + countNotUsedNote(sim));
  if (c.device && !o.devices.empty())
    throw UsageError("run: give either --device or --devices, not both");
  if (!o.shares.empty() && o.devices.empty()) throw UsageError("--shares needs --devices");
  checkShares(o.shares);
  if (!o.devices.empty() && !runsOnSeveralDevices(sim))
    throw UsageError("--devices: only --sim " + multiDeviceTypeNames() + " runs on several devices");
  if (!o.devices.empty() && !o.loadPath.empty())
    throw UsageError("--load restores onto one device: do not combine it with --devices");
  if (c.exportEvery && !c.exportDir) throw UsageError("--export-every needs --export DIR");
  if (!o.loadPath.empty() && !c.bodies.empty())
    throw UsageError("--load restores the simulation with its bodies: do not combine it with "
                     "--body (nor a config with \"bodies\")");
  if (c.diagEvery && !c.diag && !o.bodiesOut) throw UsageError("--diag-every needs --diag FILE");
  if (o.overwrite && !c.exportDir) throw UsageError("--overwrite needs --export DIR");
  if (cli.probeEvery && cli.probeDt) throw UsageError("run: give either --probe-every or --probe-dt, not both");
  if ((c.probeEvery || c.probeDt) && !c.probeOut)
    throw UsageError((c.probeDt ? origin(bool(cli.probeDt), "--probe-dt", "probe_dt")
                                : origin(bool(cli.probeEvery), "--probe-every", "probe_every")) +
                     " needs --probe-out FILE.csv (or the config's \"probe_out\")");
  if (!c.probes.empty() && !c.probeOut)
    throw UsageError((cli.probes.empty() ? origin(false, "", "probes") + ": "
                                         : std::string("--probe ")) +
                     probeSpecText(c.probes.front()) +
                     ": probes need --probe-out FILE.csv (where their samples go)");
  try {
    checkProbeNames(c.probes);
  } catch (const Error& e) {
    throw UsageError(o.probeOrigin + ": " + e.what());
  }
  return o;
}

// An output of a run (a file, or the --export folder) and an input file.
struct RunOutput {
  std::string flag, path;
  bool folder;
};
struct RunInput {
  std::string flag, path;
};

std::vector<RunOutput> runOutputs(const RunOptions& o) {
  const RunConfig& c = o.cfg;
  std::vector<RunOutput> outs;
  if (c.diag) outs.push_back({"--diag", *c.diag, false});
  if (o.bodiesOut) outs.push_back({"--bodies-out", *o.bodiesOut, false});
  if (c.out) outs.push_back({"--out", *c.out, false});
  if (c.save) outs.push_back({"--save", *c.save, false});
  if (c.probeOut) outs.push_back({"--probe-out", *c.probeOut, false});
  if (c.exportDir) outs.push_back({"--export", *c.exportDir, true});
  return outs;
}

// Canonical paths (also of files that do not exist yet) so that a/../b.csv,
// ./b.csv and a symbolic link to b.csv are all the same file.
std::filesystem::path canonicalPath(const std::string& path) {
  namespace fs = std::filesystem;
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
}

// One of the files an export into the folder `dir` writes (canonical paths).
bool exportWrites(const std::filesystem::path& dir, const std::filesystem::path& file) {
  return file.parent_path() == dir &&
         (file.filename() == "eddy.pvd" || isExportFrameName(file.filename().string()));
}

// No output may name a file the run reads. Device nodes and FIFOs
// (/dev/null) may be shared: nothing is replaced there.
void checkInputsKept(const std::vector<RunInput>& ins, const std::vector<RunOutput>& outs) {
  for (const auto& in : ins)
    for (const auto& out : outs) {
      const auto a = canonicalPath(in.path), b = canonicalPath(out.path);
      const bool clash = out.folder ? exportWrites(b, a) : a == b && !isSpecialFile(in.path);
      if (clash)
        throw UsageError(out.flag + " '" + out.path + "' would overwrite the input " + in.flag + " '" +
                         in.path + "': write the output to another file");
    }
}

// Every output path of a run, checked before anything is computed: each one
// must be writable (the reason named with strerror), no two may name the same
// file, none may name a file the run reads (--config, --ic, --load, a mesh),
// none is the standard output under --json, and an export folder must be
// empty or new unless --overwrite is given. All of these are usage errors
// (exit 2). A --load snapshot's own mesh files are checked when it is read
// (cmdRun, checkInputsKept).
void checkOutputs(const RunOptions& o) {
  namespace fs = std::filesystem;
  const RunConfig& c = o.cfg;
  const std::vector<RunOutput> outs = runOutputs(o);
  for (const auto& out : outs)
    if (out.path.empty()) throw UsageError(out.flag + " '': cannot write: the path is empty");
  // The files the run reads: an output naming one of them would replace it
  // (before session 27 `--ic a.csv --out a.csv` overwrote the initial conditions).
  std::vector<RunInput> ins;
  if (!o.configPath.empty()) ins.push_back({"--config", o.configPath});
  if (!o.loadPath.empty()) ins.push_back({"--load", o.loadPath});
  if (c.ic && !c.ic->empty()) ins.push_back({"--ic", *c.ic});
  // The mesh files of obstacles and bodies (command line and config file).
  for (const auto& sh : c.obstacles)
    if (sh.kind == ShapeKind::Mesh && !sh.file.empty()) ins.push_back({"--obstacle mesh", sh.file});
  for (const auto& b : c.bodies)
    if (b.shape.kind == ShapeKind::Mesh && !b.shape.file.empty()) ins.push_back({"--body mesh", b.shape.file});
  for (size_t i = 0; i < outs.size(); ++i)
    for (size_t j = i + 1; j < outs.size(); ++j) {
      const fs::path a = canonicalPath(outs[i].path), b = canonicalPath(outs[j].path);
      // A file inside the export folder clashes only with eddy's own files there.
      const auto& file = outs[j].folder ? outs[i] : outs[j];
      const fs::path fileCanon = outs[j].folder ? a : b, dirCanon = outs[j].folder ? b : a;
      const bool clash = a == b ? !isSpecialFile(outs[i].path)
                                : (outs[i].folder || outs[j].folder) && exportWrites(dirCanon, fileCanon);
      if (clash)
        throw UsageError(outs[i].flag + " '" + outs[i].path + "' and " + outs[j].flag + " '" +
                         outs[j].path + "' name the same file" +
                         (a == b ? "" : " (" + file.flag + " is written into the export folder)") +
                         ": one would overwrite the other");
    }
  checkInputsKept(ins, outs);
  // With --json, an output that is the standard output itself (/dev/stdout,
  // or the file or pipe stdout goes to) would mix its rows into the object
  // scripts parse (the hostile sweep of session 34: invalid JSON, exit 0).
  // Without --json that is a way to print the rows (docs/USAGE.md); on a
  // terminal nobody parses it. But the file stdout is redirected to
  // by name (`--diag d.csv > d.csv`) is replaced at the end by the finished
  // output, so the summary printed into it would be lost: refused with or
  // without --json (/dev/stdout is written through the descriptor: kept).
  struct stat so {};
  if (::fstat(STDOUT_FILENO, &so) == 0 && !S_ISCHR(so.st_mode) && (o.json || S_ISREG(so.st_mode)))
    for (const auto& out : outs) {
      struct stat st {};
      if (out.folder || ::stat(out.path.c_str(), &st) != 0 || st.st_dev != so.st_dev || st.st_ino != so.st_ino)
        continue;
      if (o.json)
        throw UsageError(out.flag + " '" + out.path +
                         "' is the standard output, where --json writes its object: write it to another file");
      if (resolveOutput(out.path).fd >= 0) continue;  // /dev/stdout: written through, beside the summary
      throw UsageError(out.flag + " '" + out.path +
                       "' is the file the standard output is redirected to: the finished output replaces "
                       "it at the end, and the run's summary printed there would be lost; write it to "
                       "another file");
    }
  for (const auto& out : outs) {
    // A file in an export folder that does not exist yet: the folder's check covers it.
    if (!out.folder && c.exportDir && canonicalPath(out.path).parent_path() == canonicalPath(*c.exportDir) &&
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
// Set while the run is being set up (files read, the scene and its solids
// sampled, the device buffers built): no step boundary comes to stop at and
// nothing of the run's output exists yet, so a signal ends the process at
// once (a large obstacle can take a while to sample).
volatile std::sig_atomic_t gInSetup = 0;

void onStopSignal(int sig) {
  gStopSignal = sig;
  if (gInSetup) {
    static const char kInt[] = "eddy: SIGINT received while setting up: stopped before the first step, nothing written\n";
    static const char kTerm[] = "eddy: SIGTERM received while setting up: stopped before the first step, nothing written\n";
    const bool isInt = sig == SIGINT;
    const ssize_t ignored = write(2, isInt ? kInt : kTerm, (isInt ? sizeof kInt : sizeof kTerm) - 1);
    (void)ignored;
    _exit(128 + sig);
  }
}

// Installs the handlers for the lifetime of a run and restores the previous ones.
class StopSignals {
 public:
  StopSignals() {
    gStopSignal = 0;
    gInSetup = 1;
    struct sigaction sa{};
    sa.sa_handler = onStopSignal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    sigaction(SIGINT, &sa, &oldInt_);
    sigaction(SIGTERM, &sa, &oldTerm_);
  }
  ~StopSignals() {
    gInSetup = 0;
    sigaction(SIGINT, &oldInt_, nullptr);
    sigaction(SIGTERM, &oldTerm_, nullptr);
  }
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;
  int received() const { return int(gStopSignal); }
  // Setup is over: from now on a signal only stops the run at a step boundary
  // (called before the first output file is opened).
  void setupDone() const { gInSetup = 0; }

 private:
  struct sigaction oldInt_{}, oldTerm_{};
};

const char* signalName(int sig) { return sig == SIGINT ? "SIGINT" : sig == SIGTERM ? "SIGTERM" : "a signal"; }


}  // namespace

namespace {

// What the end of a run reports, on stdout: --json or the text summary.
struct RunSummary {
  Simulation& sim;
  const SceneSpec& spec;
  const std::string& scene;  // "ic:FILE" for initial conditions
  const std::vector<std::unique_ptr<Context>>& devices;
  const std::vector<DeviceShare>* shares;  // several devices, else nullptr
  uint64_t startStep;
  double wall;
  const std::vector<std::string>& columns;
  const std::vector<double>& first;
  const std::vector<double>& last;
  std::optional<double> dE, virial;
  const std::vector<std::string>& warnings;
  const std::vector<ProbeSpec>& probes;  // --probe-out: the probes, else empty
  const ProbeRow& lastProbe;             // their last sample
};

void printJsonSummary(const RunSummary& r, std::ostream& out) {
  json j;
  j["sim"] = r.spec.sim;
  j["scene"] = r.scene;
  j["n"] = r.sim.size();
  j["steps"] = r.sim.steps() - r.startStep;  // this run's steps; "step" is the absolute one
  j["step"] = r.sim.steps();
  j["time"] = r.sim.syncTime();
  j["device"] = deviceJson(r.sim.context().info());
  if (r.shares) {
    json ds = json::array();
    for (size_t i = 0; i < r.shares->size(); ++i) {
      const auto& sh = (*r.shares)[i];
      json d = deviceJson(r.devices[i]->info());
      d["bodies"] = sh.count;
      d["first"] = sh.first;
      d["share"] = sh.weight;
      d["calibrated_pairs_per_s"] = sh.rate;
      ds.push_back(d);
    }
    j["devices"] = ds;
  }
  for (const auto& [k, v] : r.sim.summaryValues()) j[k] = jsonNumber(v, true);
  j["wall_s"] = r.wall;
  j["steps_per_s"] = r.wall > 0 ? double(r.sim.steps() - r.startStep) / r.wall : 0.0;
  json a = json::object(), b = json::object();
  for (size_t i = 0; i < r.columns.size(); ++i) {
    a[r.columns[i]] = jsonNumber(r.first[i], integerColumn(r.columns[i]));
    b[r.columns[i]] = jsonNumber(r.last[i], integerColumn(r.columns[i]));
  }
  j["initial"] = a;
  j["final"] = b;
  if (r.dE) j["energy_rel_change"] = *r.dE;
  if (r.virial) j["virial_ratio"] = *r.virial;
  if (const auto cols = r.sim.objectColumns(); !cols.empty()) {
    json bodies = json::array();
    for (const auto& row : r.sim.objectRows()) {
      json b = json::object();
      for (size_t i = 0; i < cols.size() && i < row.size(); ++i)
        b[cols[i]] = jsonNumber(row[i], cols[i] == "body");
      bodies.push_back(b);
    }
    j["bodies"] = bodies;
  }
  j["warnings"] = r.warnings;
  // The last sample of each probe (Pa, m); none yet when a run restored
  // from a snapshot ended before its probes' next row (they go on where the
  // saved run left off, and take no sample of the restored state).
  if (!r.probes.empty() && !r.lastProbe.values.empty()) {
    json p = json::object();
    p["step"] = r.lastProbe.step;
    p["time"] = r.lastProbe.time;
    for (size_t i = 0; i < r.probes.size() && i < r.lastProbe.values.size(); ++i)
      p[r.probes[i].name] = r.lastProbe.values[i];
    j["probes"] = p;
  }
  j["profile"] = profileJson(r.sim.profiler());
  j["profiled_steps"] = r.sim.profiler().sampledSteps();  // the steps the totals cover
  j["command_buffers"] = commandBuffersJson(r.sim.profiler());
  j["params"] = json::object();
  for (const auto& d : r.sim.params().declarations()) {
    const double v = r.sim.params().get(d.name);
    if (d.isEnum()) j["params"][d.name] = d.valueText(v);
    else if (d.isBool()) j["params"][d.name] = v != 0;
    else j["params"][d.name] = jsonNumber(v, d.integer);
  }
  out << j.dump(2) << '\n';
}

void printTextSummary(const RunSummary& r, std::ostream& out) {
  const uint64_t ran = r.sim.steps() - r.startStep;
  out << "eddy " << r.spec.sim << " scene " << r.scene << ", N = " << r.sim.size() << ", " << ran
      << " steps";
  if (r.startStep) out << " (steps " << r.startStep << " to " << r.sim.steps() << ")";
  out << " to t = " << r.sim.syncTime() << " in " << std::setprecision(4) << r.wall << " s ("
      << double(ran) / std::max(r.wall, 1e-9) << " steps/s)\n";
  const DeviceInfo& info = r.sim.context().info();
  out << "device: " << info.name << " (" << info.platformName << ", driver " << info.driverVersion
      << ")\n";
  if (r.shares)
    for (size_t i = 0; i < r.shares->size(); ++i) {
      const auto& sh = (*r.shares)[i];
      out << "  " << sh.tag << "  " << sh.name << " (driver " << r.devices[i]->info().driverVersion
          << "): bodies " << sh.count << " [" << sh.first << ", " << sh.first + sh.count << ")\n";
    }
  out << "\nper-kernel device time (window of the last " << 128 << " launches; "
      << r.sim.profiler().sampledSteps() << " of " << r.sim.profiler().steps()
      << " steps timed):\n"
      << r.sim.profiler().table() << '\n';
  out << std::setprecision(10);
  out << "diagnostics        initial              final\n";
  for (size_t i = 0; i < r.columns.size(); ++i)
    out << "  " << std::left << std::setw(14) << r.columns[i] << std::right << std::setw(20)
        << r.first[i] << ' ' << std::setw(20) << r.last[i] << '\n';
  if (r.dE) out << "  relative energy change " << std::setprecision(4) << *r.dE << '\n';
  if (r.virial) out << "  virial ratio 2K/|W|    " << std::setprecision(4) << *r.virial << '\n';
}

// Positions are floats: bodies far from the origin against their own spread
// move in steps of float's resolution there (a binary of size 1 at 1e4 from
// the origin lost a quarter of its energy in one orbit; a smaller dt makes
// that worse). "" unless the centre lies over 100 spreads out.
std::string farFromOriginNote(const ParticleState& s) {
  const size_t n = s.size();
  if (n < 2) return "";
  double mean[3] = {0, 0, 0};
  for (size_t i = 0; i < n; ++i)
    for (int a = 0; a < 3; ++a) mean[a] += s.positions[3 * i + a] / double(n);
  double spread2 = 0;
  for (size_t i = 0; i < n; ++i)
    for (int a = 0; a < 3; ++a) spread2 += std::pow(s.positions[3 * i + a] - mean[a], 2) / double(n);
  const double offset = std::sqrt(mean[0] * mean[0] + mean[1] * mean[1] + mean[2] * mean[2]);
  const double spread = std::sqrt(spread2);
  if (!(offset > 100 * spread)) return "";
  return "; or re-centre the coordinates: the bodies lie " + formatSignificant(offset, 3) +
         " from the origin, " + formatSignificant(offset / spread, 3) + " times their spread (" +
         formatSignificant(spread, 3) + "), where single-precision positions move in steps of about " +
         formatSignificant(offset * std::ldexp(1.0, -23), 2);
}

// A run of --steps whose steps advanced no simulated time: the time step
// collapsed to 0 (e.g. an adaptive dt against velocities of 1e30 m/s), so
// the output is the start again. --until ends such a run with an error
// (Session::finished); a fixed step count finishes, so it is said here.
std::optional<std::string> stalledTimeWarning(const std::vector<std::string>& columns,
                                              const std::vector<double>& first,
                                              const std::vector<double>& last, uint64_t steps) {
  const size_t t = size_t(std::find(columns.begin(), columns.end(), "time") - columns.begin());
  if (steps == 0 || t >= first.size() || t >= last.size()) return std::nullopt;
  if (last[t] > first[t] || !std::isfinite(last[t])) return std::nullopt;
  std::ostringstream w;
  w << "the " << steps << " steps advanced no simulated time (t stayed at " << formatSignificant(last[t], 6)
    << " s): the time step collapsed to 0, so nothing moved; the state is unstable (e.g. velocities "
    << "far beyond the flow's: check the initial conditions or the snapshot)";
  return w.str();
}

// The energy warning (|dE/E| over the run above the energy_warning parameter),
// where the simulation has a conserved total and declares that parameter.
std::optional<std::string> energyWarning(Simulation& sim, const std::optional<double>& dE) {
  if (!dE || !sim.params().find("energy_warning")) return std::nullopt;
  const double limit = sim.params().get("energy_warning");
  if (!(limit > 0 && std::fabs(*dE) > limit)) return std::nullopt;
  std::ostringstream w;
  w << "the total energy changed by " << std::setprecision(4) << 100 * *dE
    << " % over the run (|dE/E| = " << std::fabs(*dE) << " > energy_warning = "
    << formatNumber(limit) << "): the result is not trustworthy; try a smaller dt or a "
    << "larger softening" << farFromOriginNote(sim.particleState());
  return w.str();
}

int cmdRun(const RunArgs& args, std::ostream& out, std::ostream& err) {
  RunOptions o = resolveRun(args);
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
    // The files the restore reads (a mesh of its obstacles or bodies): an
    // output naming one would replace it, and the snapshot could not be
    // loaded again ("the mesh file changed since the snapshot was saved").
    if (const auto& inputs = simulationType(spec.sim).snapshotInputs) {
      std::vector<RunInput> ins;
      for (const std::string& f : inputs(*snapshot))
        ins.push_back({"mesh (of --load " + o.loadPath + ")", f});
      checkInputsKept(ins, runOutputs(o));
    }
  } else {
    spec.sim = c.sim.value_or(defaultSimulationName());
    spec.scene = c.scene.value_or("");
    spec.n = c.n.value_or(0);
    spec.icPath = c.ic.value_or("");
    spec.obstacles = c.obstacles;
    spec.bodies = c.bodies;
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

  // The host-only checks of the simulation type, before the device is opened:
  // parameters taken together, and (a new scene) its solids read, checked and
  // placed. Usage errors, naming the flag or the config file's key.
  if (snapshot) {
    try {
      checkParamsTogether(spec.sim, params);  // (the rebuild-only keys take no part)
    } catch (const Error& e) {
      throw UsageError(e.what());
    }
  } else {
    checkSceneSpecAsUsage(spec, params, o.configPath, o.configObstacles, o.configBodies);
  }
  // Parameters given (config "params", --set) that this scene does not read:
  // never dropped silently (as --load notes the rebuild-only ones).
  if (!snapshot) {
    std::vector<std::string> given;
    for (const auto& [k, v] : changes) given.push_back(k);
    if (const auto unused = unusedSceneParams(spec, given); !unused.empty())
      err << "eddy: note: scene " << (spec.scene.empty() ? defaultScene(spec.sim) : spec.scene)
          << " does not use " << joinNames(unused) << "; " << (unused.size() == 1 ? "it is" : "they are")
          << " ignored\n";
  }

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
  signals.setupDone();
  const std::vector<DeviceShare>* shares = sim->deviceShares();  // several devices
  if (shares && !o.quiet)
    for (const auto& sh : *shares) {
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
  if (c.until && Session::reached(sim->time(), *c.until))  // a restart already at the end: say why nothing runs
    err << "eddy: note: the simulation is at t = " << formatNumber(sim->time()) << ", already at or past --until "
        << formatNumber(*c.until) << ": no step is run\n";

  std::unique_ptr<AtomicFile> diag;
  const auto columns = sim->diagColumns();
  if (c.diag) {
    diag = std::make_unique<AtomicFile>(*c.diag);
    session.setDiag(&diag->stream());
  }
  std::unique_ptr<AtomicFile> bodiesOut;
  if (o.bodiesOut) {
    if (sim->objectColumns().empty())
      throw UsageError("--bodies-out: the simulation has no rigid bodies (add --body or a scene "
                       "with bodies)");
    bodiesOut = std::make_unique<AtomicFile>(*o.bodiesOut);
    session.setObjects(&bodiesOut->stream());
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
  // Probes: the scene's built-ins, then the config's and the command line's.
  std::unique_ptr<AtomicFile> probeFile;
  std::unique_ptr<ProbeCsv> probeCsv;
  std::vector<ProbeSpec> probes;
  ProbeRow lastProbe;
  if (c.probeOut) {
    if (!sim->supportsProbes())
      throw UsageError("--probe-out: --sim " + spec.sim + " has no probes (they sample a fluid: --sim sph)");
    try {
      probes = probesToSample(*sim, c.probes);
    } catch (const Error& e) {
      // Without --probe (or the config's), every probe is the snapshot's or
      // the scene's own: name that, not a flag nobody gave.
      const std::string from = !c.probes.empty()      ? o.probeOrigin
                               : !o.loadPath.empty() ? "--load " + o.loadPath + ": the snapshot's probes"
                                                     : "scene " + scene + ": its built-in probes";
      throw UsageError(from + ": " + e.what());
    }
    if (probes.empty())
      throw UsageError("--probe-out " + *c.probeOut + ": there are no probes: give --probe "
                       "pressure:NAME:x,y,z or level:NAME:x,z (scene " + scene + " has none built in)");
    probeFile = std::make_unique<AtomicFile>(*c.probeOut);
    probeCsv = std::make_unique<ProbeCsv>(probeFile->stream(), probes);
    const ProbeCadence cadence = probeCadenceFor(*sim, c.probeEvery, c.probeDt);
    sim->startProbes(probes, cadence, [&probeCsv, &lastProbe](const ProbeRow& row) {
      probeCsv->write(row);
      lastProbe = row;
    });
  }
  // Progress on stderr every 2 s of wall clock; with --until, the wall time
  // left at the pace so far (a run set up to take days says so at once).
  auto lastReport = Session::Clock::now();
  const double startTime = sim->time();
  auto progress = [&](uint64_t s) {
    const auto now = Session::Clock::now();
    if (o.quiet || now - lastReport <= std::chrono::seconds(2)) return;
    lastReport = now;
    const double secs = std::chrono::duration<double>(now - session.started()).count();
    const uint64_t done = s - startStep;
    err << "  step " << s;
    if (!c.until) err << " (" << std::fixed << std::setprecision(0)
                      << 100.0 * double(done) / double(std::max<uint64_t>(run.steps, 1)) << "%)";
    const double t = sim->time();
    err << std::defaultfloat << std::setprecision(6) << "  t = " << t << "  "
        << std::setprecision(4) << double(done) / secs << " steps/s";
    if (c.until && t > startTime && t < *c.until)
      err << "  (about " << durationText(secs * (*c.until - t) / (t - startTime)) << " left to t = "
          << formatNumber(*c.until) << ")";
    err << "\n";
  };
  // The first rows and frame; the state before the first step is checked
  // (a blow-up there leaves no diagnostics file behind).
  session.begin();
  lastReport = session.started();
  SessionEnd ended;
  // An output stream that failed (a full disk, a reader that closed the
  // pipe) stops the run at once: the rows it should have held are lost.
  auto failedOutput = [&]() -> std::string {
    if (diag && !diag->stream()) return "--diag " + *c.diag;
    if (probeFile && !probeFile->stream()) return "--probe-out " + *c.probeOut;
    if (bodiesOut && !bodiesOut->stream()) return "--bodies-out " + *o.bodiesOut;
    return {};
  };
  try {
    ended = session.run([&] { return signals.received() != 0 || !failedOutput().empty(); }, progress);
    if (const std::string f = failedOutput(); !f.empty() && !signals.received())
      throw Error(f + ": write failed at step " + std::to_string(sim->steps()) +
                  ", where the run stopped (a full disk, or a reader that closed the pipe?)");
  } catch (...) {
    // Any failure while stepping (a blow-up, a collapsed time step, a device
    // error): keep what was recorded up to it, and write no final state
    // (--out, --save) over good files. A file that cannot be finished does not
    // hide the failure that stopped the run (that one is rethrown).
    auto keep = [&](const char* flag, const std::string& path, const std::function<void()>& f) {
      try {
        f();
        err << "eddy: wrote " << path << " (" << flag << ", the rows up to the failure)\n";
      } catch (const std::exception& e) {
        err << "eddy: " << flag << " " << path << ": not kept: " << e.what() << '\n';
      }
    };
    if (diag) keep("--diag", *c.diag, [&] { diag->commit(); });
    if (probeFile)
      keep("--probe-out", *c.probeOut, [&] {
        try {
          sim->flushProbes();  // the samples the device holds; may fail on a broken device
        } catch (const std::exception&) {
        }
        probeFile->commit();
      });
    if (bodiesOut) keep("--bodies-out", *o.bodiesOut, [&] { bodiesOut->commit(); });
    if (c.out) err << "eddy: not written: --out " << *c.out << " (the run failed)\n";
    if (c.save) err << "eddy: not written: --save " << *c.save << " (the run failed)\n";
    throw;
  }
  const double wall = ended.wallSeconds;
  const std::vector<double>& first = session.firstRow();
  if (const int sig = signals.received()) {
    // Stopped at a step boundary: the diagnostics rows so far are complete and
    // committed, every exported frame and eddy.pvd is already in place; the
    // final state (--out, --save) of a run that did not finish is not written.
    if (diag) diag->commit();
    if (probeFile) {
      sim->flushProbes();
      probeFile->commit();
    }
    if (bodiesOut) bodiesOut->commit();
    err << "eddy: " << signalName(sig) << " received: stopped at step " << sim->steps() << " (t = "
        << sim->syncTime() << ") after " << sim->steps() - startStep << " of this run's steps\n";
    if (diag) err << "eddy: wrote " << *c.diag << " (diagnostics up to step " << sim->steps() << ")\n";
    if (probeFile) err << "eddy: wrote " << *c.probeOut << " (probes up to step " << sim->steps() << ")\n";
    if (series) err << "eddy: wrote " << series->pvdPath() << " (" << series->frames() << " frames)\n";
    if (c.out) err << "eddy: not written: --out " << *c.out << " (the run did not finish)\n";
    if (c.save) err << "eddy: not written: --save " << *c.save << " (the run did not finish)\n";
    return 128 + sig;
  }
  sim->profiler().collect(true);
  const std::vector<double> last = session.end();
  if (diag) diag->commit();
  if (probeFile) {
    sim->flushProbes();
    probeFile->commit();
  }
  if (bodiesOut) bodiesOut->commit();
  if (c.out) writeCsv(*c.out, sim->stateColumns(), sim->stateRows());
  if (c.save) saveSnapshot(*sim, spec, *c.save);
  // Never silent: e.g. SPH particles that had to be put back into the tank.
  std::vector<std::string> warnings = sim->runWarnings(last);  // stderr and --json "warnings"

  // Relative change of the conserved total (N-body: energy) where there is
  // one: the first and the last diagnostics row, i.e. the start and the end
  // of this run (no read-backs beyond those two).
  const std::optional<double> dE = sim->conservedDrift(first, last);
  if (auto w = energyWarning(*sim, dE)) warnings.push_back(*w);
  if (auto w = stalledTimeWarning(columns, first, last, sim->steps() - startStep)) warnings.push_back(*w);
  for (const auto& w : warnings) err << "eddy: warning: " << terminalSafe(w) << '\n';
  const std::optional<double> virial = sim->virialRatio();

  const RunSummary summary{*sim, spec, scene, devices, shares, startStep, wall, columns,
                           first, last, dE, virial, warnings, probes, lastProbe};
  if (o.json) printJsonSummary(summary, out);
  else printTextSummary(summary, out);
  return 0;
}

}  // namespace

Runner addRun(Options& o) {
  auto a = std::make_shared<RunArgs>();
  addRunOptions(o, *a);
  return [a](std::ostream& out, std::ostream& err) { return cmdRun(*a, out, err); };
}

}  // namespace eddy::cli
