// config.hpp: run descriptions in JSON files (eddy-cli --config, the app's
// "save settings"). Keys of "params" come from the simulation's declared
// parameter registry, so a config file accepts exactly what --set accepts.
//
//   {
//     "eddy_config": 1,              optional format version
//     "sim": "nbody",                simulation (default nbody)
//     "scene": "plummer",            scene name, or "ic": "file.csv" (nbody)
//     "n": 4096,                     particle count
//     "params": {"dt": 0.001, "softening": 0.02},
//     "steps": 1000,                 or "until": 2.5 (simulated time)
//     "device": "cpu",
//     "check_every": 100,            blow-up check interval in steps (0 = off)
//     "diag": "diag.csv", "diag_every": 10, "out": "final.csv",
//     "export": "frames", "export_every": 50, "save": "end.snap",
//     "probes": ["pressure:P1:0.8245,0.021,0.471", "level:H1:0.496,0.5",
//                {"type": "pressure", "name": "P2", "x": 0.8, "y": 0.06, "z": 0.47},
//                {"type": "level", "name": "H2", "x": 0.99, "z": 0.5}],
//     "probe_out": "probes.csv", "probe_every": 10   (or "probe_dt": 0.001)
//     "obstacles": [{"shape": "box", "size": [..], "position": [..]}]   sph: static
//                                    obstacles (shape_spec_io.hpp; a relative mesh
//                                    path is relative to the config file)
//     "bodies": [ {"shape": "box", "size": [0.1, 0.05, 0.1], "density": 500} ]   (sph)
//   }
//
// Every problem is an eddy::Error that names the file, the key and the allowed
// range or type: invalid JSON, unknown keys, wrong types, non-finite numbers,
// values out of range.
#pragma once

#include "body_spec.hpp"
#include "params.hpp"
#include "probe.hpp"
#include "shape.hpp"

#include <nlohmann/json_fwd.hpp>

#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace eddy {

// Limits shared by the command line and config files.
struct CountLimit {
  unsigned long long min, max;
};
inline constexpr CountLimit kLimitN{1, (1ull << 31) - 1};
inline constexpr CountLimit kLimitSteps{0, 1ull << 40};
inline constexpr CountLimit kLimitEvery{1, 1ull << 40};
inline constexpr CountLimit kLimitCheckEvery{0, 1ull << 40};
inline constexpr double kMaxUntil = 1e12;
// The shortest probe sampling interval (--probe-dt, "probe_dt"), simulated seconds.
inline constexpr double kMinProbeDt = 1e-12;

struct RunConfig {
  std::optional<std::string> sim, scene, ic, device, diag, out, exportDir, save;
  std::optional<unsigned long long> n, steps, diagEvery, exportEvery, checkEvery;
  std::optional<double> until;
  // Probes (probe.hpp), in declaration order; names checked, places not.
  std::vector<ProbeSpec> probes;
  std::optional<std::string> probeOut;
  std::optional<unsigned long long> probeEvery;
  std::optional<double> probeDt;
  // Declared parameters by name (already range-checked for `sim`).
  std::vector<std::pair<std::string, double>> params;
  std::vector<ShapeSpec> obstacles;  // "obstacles" (sph)
  // SPH rigid bodies ("bodies": [ {...} ], body_spec.hpp); --body adds more.
  std::vector<BodySpec> bodies;
};

// How a spec reader words a problem: `key` is the spec's key at fault ("" for
// the spec itself), `why` the problem; the result is the message thrown.
using KeyMessage = std::function<std::string(const std::string& key, const std::string& why)>;

// One probe of a config's "probes" (and of the Python module's probes=[...]):
// a string in the --probe syntax (parseProbeSpec) or an object
// {"type": "pressure"|"level", "name": NAME, "x": X, "y": Y, "z": Z} (no "y"
// for a level probe). Throws eddy::Error(message(key, why)) for an unknown or
// missing key, a wrong type, a non-finite number or a bad name. Names are
// not checked against each other here (checkProbeNames).
ProbeSpec probeSpecFromJson(const nlohmann::json& v, const KeyMessage& message);

// Parses config text; `source` (the path) names it in every message.
RunConfig parseConfig(std::string_view text, const std::string& source);
// Reads a config file (at most 16 MiB).
RunConfig loadConfig(const std::string& path);
// The JSON text of a config (round-trips through parseConfig).
std::string configToJson(const RunConfig& c);
// Writes a config file atomically (the app's "save settings").
void saveConfig(const std::string& path, const RunConfig& c);

}  // namespace eddy
