// cli_common.hpp: what the eddy-cli commands share (app/cli/): the commands'
// add* functions, options used by several commands, JSON and device helpers;
// options.hpp has the typed options and UsageError. One file per command,
// each registering its own options:
// run.cpp, bench_nbody.cpp, bench_sph.cpp, bench_realtime.cpp,
// bench_frame.cpp, devices.cpp, params.cpp; main.cpp builds the CLI11 command
// tree, the help and cliMain.
#pragma once

#include "body_spec.hpp"
#include "cl.hpp"
#include "options.hpp"
#include "io.hpp"
#include "params.hpp"
#include "probe.hpp"
#include "profiler.hpp"
#include "registry.hpp"
#include "shape.hpp"

#include <nlohmann/json.hpp>

#include <chrono>
#include <functional>
#include <iosfwd>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

namespace eddy::cli {

using Clock = std::chrono::steady_clock;
using json = nlohmann::json;

json deviceJson(const DeviceInfo& d);
json profileJson(const Profiler& p);
// The launch batch's counts (sim/core/launch_batch.hpp): how many deferred
// launches went to the device in replayed command buffers, how many one by one.
json commandBuffersJson(const Profiler& p);
// A message for the terminal: printable() of it (io.hpp: control characters,
// invisible and reordering ones as \xNN / \uXXXX) but for the newlines and
// tabs it means, uncut, so that an input an error quotes (an escape sequence
// in a file name, a probe name, a file's text) never drives the terminal.
std::string terminalSafe(std::string_view message);
// An input file's path as given; "" is refused (it would silently mean
// "none"): "FLAG '': the path is empty; give a file (or leave FLAG out)".
std::string nonEmptyPath(const std::string& flag, const std::string& v);
// Syntax of a --device value (whether the device exists is found out later).
std::string deviceSpec(const std::string& flag, const std::string& v);
// Syntax of a --devices value: all | gpu | cpu | P:D[,P:D...], no device listed twice.
std::string checkDeviceList(const std::string& flag, const std::string& v);
void checkShares(const std::vector<double>& shares);
// Opens every device of a --devices list; a failure names the device.
std::vector<std::unique_ptr<Context>> openDevices(const std::string& list);
std::vector<Context*> pointers(const std::vector<std::unique_ptr<Context>>& v);
// JSON number: a whole value of an integer quantity is written as an integer.
json jsonNumber(double v, bool integer);
// Diagnostics columns that count (steps, particles, list entries).
bool integerColumn(const std::string& name);

// Runs a command after its options were parsed; returns the exit code or
// throws UsageError / Error.
using Runner = std::function<int(std::ostream& out, std::ostream& err)>;

// The commands. Each registers its options on `o` (the command's CLI11
// subcommand) and returns what runs it with the parsed values.
Runner addDevices(Options& o);
Runner addParams(Options& o);
Runner addRun(Options& o);
Runner addBenchNbody(Options& o);
Runner addBenchSph(Options& o);
Runner addBenchRealtime(Options& o);
Runner addBenchFrame(Options& o);
Runner addBenchLaunch(Options& o);

// Options several commands share, with one description each.
CLI::Option* addSimOption(Options& o, std::string& to);
CLI::Option* addSimOption(Options& o, std::optional<std::string>& to);
CLI::Option* addSceneOption(Options& o, std::string& to);
CLI::Option* addSceneOption(Options& o, std::optional<std::string>& to);
CLI::Option* addSetOption(Options& o, std::vector<std::string>& to);
// --device: the syntax is checked (deviceSpec) where `checked`.
CLI::Option* addDeviceOption(Options& o, std::string& to, bool checked = true);
CLI::Option* addDeviceOption(Options& o, std::optional<std::string>& to);
CLI::Option* addJsonOption(Options& o, bool& to);
// The solids and probes of an SPH run (issue 12), shared by eddy-cli run and
// the desktop app: --obstacle SPEC, --body SPEC, --probe KIND:NAME:X,...,
// each parsed at once (a bad one is a UsageError naming the flag); the
// callers put a config's solids and probes before them.
CLI::Option* addObstacleOption(Options& o, std::vector<ShapeSpec>& to);
CLI::Option* addBodyOption(Options& o, std::vector<BodySpec>& to);
CLI::Option* addProbeOption(Options& o, std::vector<ProbeSpec>& to);

// checkSceneSpec (factory.hpp) of `spec` before any device is opened, its
// failures as usage errors: a problem of one solid names where it came from,
// the config file's key (its first `configObstacles` obstacles and
// `configBodies` bodies) or --obstacle / --body. Shared by eddy-cli run and
// the app's options.
void checkSceneSpecAsUsage(const SceneSpec& spec, const Params& params,
                           const std::string& configPath, size_t configObstacles,
                           size_t configBodies);

}  // namespace eddy::cli
