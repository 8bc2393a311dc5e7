// cli_common.cpp: helpers shared by the eddy-cli commands (cli_common.hpp).
#include "cli_common.hpp"

#include "config.hpp"
#include "factory.hpp"
#include "io.hpp"
#include "nbody.hpp"
#include "nbody_multi.hpp"
#include "session.hpp"
#include "shape_spec_io.hpp"
#include "snapshot.hpp"
#include "sph.hpp"
#include "vtk.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <csignal>
#include <iomanip>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <sstream>

namespace eddy::cli {

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

json commandBuffersJson(const Profiler& p) {
  const LaunchBatch* b = p.batch();
  if (!b) return json{{"supported", false}, {"enabled", false}};
  const auto& s = b->stats();
  return json{{"supported", b->supported()},         {"enabled", b->enabled()},
              {"replays", s.replays},                {"replayed_launches", s.replayedLaunches},
              {"recordings", s.recordings},          {"direct_launches", s.directLaunches},
              {"kept_recordings", b->recordings()}};
}

std::string terminalSafe(std::string_view message) {
  // printable() (io.hpp) for every stretch between the newlines and tabs the
  // message means, uncut.
  std::string out;
  size_t start = 0;
  for (size_t i = 0; i <= message.size(); ++i)
    if (i == message.size() || message[i] == '\n' || message[i] == '\t') {
      out += printable(message.substr(start, i - start), std::string_view::npos);
      if (i < message.size()) out += message[i];
      start = i + 1;
    }
  return out;
}

std::string nonEmptyPath(const std::string& flag, const std::string& v) {
  if (v.empty()) throw UsageError(flag + " '': the path is empty; give a file (or leave " + flag + " out)");
  return v;
}

// Syntax of a --device value (whether the device exists is found out later).
std::string deviceSpec(const std::string& flag, const std::string& v) {
  // "" would silently pick the default device: leave the flag out for that.
  if (v.empty())
    throw UsageError(flag + " '': the device is empty; expected gpu, cpu or P:D (leave " + flag +
                     " out for the default device)");
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

namespace {

std::string simHelp() {
  return "simulation: " + joinNames(simulationNames()) + " (default " + defaultSimulationName() + ")";
}

// "nbody: plummer (default), galaxies, collapse" for every simulation type.
std::string sceneHelp() {
  std::string text = "scene of the simulation (default first):";
  for (const auto& sim : simulationNames()) text += "\n" + sim + ": " + joinNames(sceneNames(sim));
  return text;
}

const char* const kSetHelp = "set a declared parameter (repeatable; see 'eddy-cli params')";
const char* const kDeviceHelp = "device (default: first GPU, else a CPU device)";

}  // namespace

CLI::Option* addSimOption(Options& o, std::string& to) {
  return o.text("--sim", to, "NAME", simHelp());
}
CLI::Option* addSimOption(Options& o, std::optional<std::string>& to) {
  return o.text("--sim", to, "NAME", simHelp());
}
CLI::Option* addSceneOption(Options& o, std::string& to) {
  return o.text("--scene", to, "NAME", sceneHelp());
}
CLI::Option* addSceneOption(Options& o, std::optional<std::string>& to) {
  return o.text("--scene", to, "NAME", sceneHelp());
}
CLI::Option* addSetOption(Options& o, std::vector<std::string>& to) {
  return o.texts("--set", to, "key=value", kSetHelp);
}
CLI::Option* addDeviceOption(Options& o, std::string& to, bool checked) {
  if (!checked) return o.text("--device", to, "gpu|cpu|P:D", kDeviceHelp);
  return o.custom("--device", "gpu|cpu|P:D", kDeviceHelp,
                  [&to](const std::string& v) { to = deviceSpec("--device", v); });
}
CLI::Option* addDeviceOption(Options& o, std::optional<std::string>& to) {
  return o.custom("--device", "gpu|cpu|P:D", kDeviceHelp,
                  [&to](const std::string& v) { to = deviceSpec("--device", v); });
}
CLI::Option* addJsonOption(Options& o, bool& to) {
  return o.flag("--json", to, true, "machine-readable output (JSON) on stdout");
}

namespace {

// A repeatable option whose every value is parsed at once and appended to
// `to`; a value the parser refuses is a usage error "FLAG: why" ("FLAG
// 'VALUE': why" where `quoteValue`).
template <class Spec, class Parse>
CLI::Option* specOption(Options& o, const std::string& flag, const std::string& type, const std::string& help,
                        std::vector<Spec>& to, Parse parse, bool quoteValue) {
  return o.custom(flag, type, help, [&to, parse, flag, quoteValue](const std::string& v) {
    try {
      to.push_back(parse(v));
    } catch (const Error& e) {
      throw UsageError(flag + (quoteValue ? " '" + v + "'" : "") + ": " + e.what());
    }
  });
}

}  // namespace

CLI::Option* addObstacleOption(Options& o, std::vector<ShapeSpec>& to) {
  const char* help = "sph: a static obstacle (repeatable), e.g.\nbox:size=0.16,0.16,0.4:pos=0.74,0.08,0.5, "
                     "sphere:d=D, cylinder:d=D:h=H,\nmesh:file=F.stl:scale=S; :rot=A,B,C degrees (docs/USAGE.md)";
  return specOption(o, "--obstacle", "SPEC", help, to, [](const std::string& v) { return withAbsoluteMeshPath(parseShapeSpec(v)); }, false);
}

CLI::Option* addBodyOption(Options& o, std::vector<BodySpec>& to) {
  const char* help = "sph: add a rigid body (repeatable), e.g. box:size=0.1,0.05,0.1:\npos=0.5,0.2,0.15:"
                     "density=500 or ...:motion=piston:amplitude=A:period=T\n(docs/USAGE.md, \"Rigid bodies\")";
  return specOption(o, "--body", "SPEC", help, to, [](const std::string& v) {
    BodySpec b = parseBodySpec(v);
    b.shape = withAbsoluteMeshPath(b.shape);
    return b;
  }, false);
}

CLI::Option* addProbeOption(Options& o, std::vector<ProbeSpec>& to) {
  const char* help = "a probe (repeatable): pressure:NAME:x,y,z (Pa) or\nlevel:NAME:x,z (free-surface "
                     "height, m); sph only";
  return specOption(o, "--probe", "KIND:NAME:X,..", help, to, [](const std::string& v) { return parseProbeSpec(v); },
                    true);
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

// JSON number: a whole value of an integer quantity is written as an integer
// (100, not 100.0).
json jsonNumber(double v, bool integer) {
  if (integer && std::isfinite(v) && v == std::floor(v) && std::fabs(v) < 9.0e15)
    return static_cast<long long>(v);
  return v;
}

// Diagnostics columns that count (steps, particles, list entries).
bool integerColumn(const std::string& name) {
  return name == "step" || name == "escaped" || name == "overflow" || name == "penetrations";
}

void checkSceneSpecAsUsage(const SceneSpec& spec, const Params& params,
                           const std::string& configPath, size_t configObstacles,
                           size_t configBodies) {
  try {
    checkSceneSpec(spec, params);
  } catch (const SolidSpecError& e) {
    const bool fromConfig = e.index < (e.body ? configBodies : configObstacles);
    throw UsageError((fromConfig ? "--config " + configPath + ": key '" +
                                       (e.body ? "bodies[" : "obstacles[") + std::to_string(e.index) + "]'"
                                 : std::string(e.body ? "--body" : "--obstacle")) +
                     ": " + e.what());
  } catch (const Error& e) {
    throw UsageError(e.what());
  }
}

}  // namespace eddy::cli
