#include "config.hpp"

#include "factory.hpp"
#include "io.hpp"
#include "registry.hpp"
#include "shape_spec_io.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <sys/stat.h>

namespace eddy {

namespace {

using json = nlohmann::json;

const char* kKeys[] = {"eddy_config", "sim",  "scene", "n",           "ic",          "device",
                       "steps",       "until", "params", "check_every", "diag",       "diag_every",
                       "out",         "export", "export_every", "save", "probes", "probe_out",
                       "probe_every", "probe_dt", "obstacles", "bodies"};

std::string knownKeys() {
  std::string s;
  for (const char* k : kKeys) s += (s.empty() ? "" : ", ") + std::string(k);
  return s;
}

std::string typeName(const json& v) {
  if (v.is_number_integer()) return "an integer";
  if (v.is_number()) return "a number";
  if (v.is_string()) return "a string";
  if (v.is_boolean()) return "a boolean";
  if (v.is_null()) return "null";
  if (v.is_array()) return "an array";
  return "an object";
}

class Reader {
 public:
  // Messages "SOURCE: key 'KEY': WHY".
  explicit Reader(const std::string& source)
      : message_([&source](const std::string& key, const std::string& why) {
          return source + ": key '" + key + "': " + why;
        }) {}
  explicit Reader(KeyMessage message) : message_(std::move(message)) {}

  [[noreturn]] void fail(const std::string& key, const std::string& why) const {
    throw Error(message_(key, why));
  }

  std::string string(const json& v, const std::string& key) const {
    if (!v.is_string()) fail(key, "expected a string, got " + typeName(v));
    std::string s = v.get<std::string>();
    if (s.empty()) fail(key, "must not be empty");
    if (s.size() > 4096) fail(key, "longer than 4096 characters");
    return s;
  }

  double number(const json& v, const std::string& key) const {
    if (!v.is_number()) fail(key, "expected a number, got " + typeName(v));
    const double d = v.get<double>();
    if (!std::isfinite(d)) fail(key, "must be a finite number");
    return d;
  }

  unsigned long long count(const json& v, const std::string& key, CountLimit lim) const {
    const std::string range =
        "[" + std::to_string(lim.min) + ", " + std::to_string(lim.max) + "]";
    if (!v.is_number()) fail(key, "expected a whole number in " + range + ", got " + typeName(v));
    if (v.is_number_unsigned()) {
      const auto u = v.get<unsigned long long>();
      if (u < lim.min || u > lim.max)
        fail(key, std::to_string(u) + " is out of range " + range);
      return u;
    }
    if (v.is_number_integer()) {
      const auto i = v.get<long long>();
      if (i < 0 || static_cast<unsigned long long>(i) < lim.min ||
          static_cast<unsigned long long>(i) > lim.max)
        fail(key, std::to_string(i) + " is out of range " + range);
      return static_cast<unsigned long long>(i);
    }
    const double d = number(v, key);
    if (d != std::floor(d)) fail(key, "expected a whole number in " + range);
    if (d < double(lim.min) || d > double(lim.max)) {
      std::ostringstream o;
      o << formatNumber(d) << " is out of range " << range;
      fail(key, o.str());
    }
    return static_cast<unsigned long long>(d);
  }

 private:
  KeyMessage message_;
};

// Deepest nesting of [ and { outside strings (a config is at most 2 deep;
// refusing deep input up front keeps the JSON parser's recursion bounded).
size_t nestingDepth(std::string_view text) {
  size_t depth = 0, deepest = 0;
  bool inString = false, escaped = false;
  for (const char ch : text) {
    if (inString) {
      if (escaped) escaped = false;
      else if (ch == '\\') escaped = true;
      else if (ch == '"') inString = false;
    } else if (ch == '"') {
      inString = true;
    } else if (ch == '[' || ch == '{') {
      deepest = std::max(deepest, ++depth);
    } else if ((ch == ']' || ch == '}') && depth > 0) {
      --depth;
    }
  }
  return deepest;
}
}  // namespace

ProbeSpec probeSpecFromJson(const nlohmann::json& v, const KeyMessage& message) {
  const Reader r(message);
  if (v.is_string()) {
    try {
      return parseProbeSpec(v.get<std::string>());
    } catch (const Error& e) {
      r.fail("", e.what());
    }
  }
  if (!v.is_object()) r.fail("", "expected a string or an object, got " + typeName(v));
  for (auto it = v.begin(); it != v.end(); ++it)
    if (it.key() != "type" && it.key() != "name" && it.key() != "x" && it.key() != "y" && it.key() != "z")
      r.fail(it.key(), "unknown key; a probe object has type, name, x, y, z");
  for (const char* need : {"type", "name", "x", "z"})
    if (!v.contains(need)) r.fail("", std::string("the probe has no \"") + need + "\"");
  const std::string type = r.string(v["type"], "type");
  if (type != "pressure" && type != "level") r.fail("type", "unknown probe type '" + type + "' (pressure or level)");
  if (type == "pressure" && !v.contains("y")) r.fail("", "a pressure probe needs \"y\"");
  if (type == "level" && v.contains("y"))
    r.fail("y", "a level probe has no \"y\" (it measures the height above x, z)");
  ProbeSpec p;
  p.kind = type == "level" ? ProbeSpec::Kind::Level : ProbeSpec::Kind::Pressure;
  p.name = r.string(v["name"], "name");
  if (const std::string why = probeNameProblem(p.name); !why.empty()) r.fail("name", why);
  p.x = r.number(v["x"], "x");
  if (p.kind == ProbeSpec::Kind::Pressure) p.y = r.number(v["y"], "y");
  p.z = r.number(v["z"], "z");
  return p;
}

namespace {

// The folder a relative mesh path in the config file `source` is taken from:
// the file's folder, made absolute, so that the run (and its snapshots, which
// store the path) finds the mesh from any working directory later.
std::string configFolder(const std::string& source) {
  std::error_code ec;
  const auto abs = std::filesystem::absolute(std::filesystem::path(source), ec);
  return (ec ? std::filesystem::path(source) : abs).parent_path().lexically_normal().string();
}

}  // namespace

RunConfig parseConfig(std::string_view text, const std::string& source) {
  if (nestingDepth(text) > 16)
    throw Error(source + ": nested deeper than 16 levels; a config is a flat object with \"params\"");
  json j;
  // JSON allows a key twice in one object and nlohmann keeps the last one:
  // refuse it instead (which of two "dt" did the user mean?).
  // Each open object or array with its path in messages ("probes[0]",
  // "params"); an array counts its elements.
  struct Level {
    std::string path;
    bool array = false;
    size_t index = 0;
    std::set<std::string> keys;
  };
  std::vector<Level> levels;
  std::string lastKey;
  auto childPath = [&]() -> std::string {
    if (levels.empty()) return "";
    const Level& p = levels.back();
    if (p.array) return p.path + "[" + std::to_string(p.index) + "]";
    return p.path.empty() ? lastKey : p.path + "." + lastKey;
  };
  auto elementDone = [&]() {
    if (!levels.empty() && levels.back().array) ++levels.back().index;
  };
  const json::parser_callback_t noDuplicates = [&](int, json::parse_event_t event, json& parsed) {
    if (event == json::parse_event_t::object_start || event == json::parse_event_t::array_start) {
      levels.push_back({childPath(), event == json::parse_event_t::array_start, 0, {}});
    } else if (event == json::parse_event_t::object_end || event == json::parse_event_t::array_end) {
      if (!levels.empty()) levels.pop_back();
      elementDone();
    } else if (event == json::parse_event_t::value) {
      // A NUL (\u0000) in any string: a path cut there names another file
      // ("notes.txt\u0000.snap" wrote over notes.txt), a name another name.
      if (parsed.is_string() && parsed.get_ref<const std::string&>().find('\0') != std::string::npos) {
        const std::string at = childPath();
        throw Error(source + (at.empty() ? "" : ": key '" + at + "'") + ": the string " +
                    printable(parsed.get_ref<const std::string&>()) + " holds a NUL character (\\u0000)");
      }
      elementDone();
    } else if (event == json::parse_event_t::key && !levels.empty()) {
      lastKey = parsed.is_string() ? parsed.get<std::string>() : std::string();
      if (!levels.back().keys.insert(lastKey).second)
        throw Error(source + ": key '" + (levels.back().path.empty() ? "" : levels.back().path + ".") + lastKey +
                    "' is given twice; give each key once");
    }
    return true;
  };
  try {
    j = json::parse(text.begin(), text.end(), noDuplicates);
  } catch (const json::exception& e) {
    // e.what() reads "[json.exception.parse_error.101] parse error at line 3, column 5: ..."
    std::string what = e.what();
    const auto at = what.find("] ");
    throw Error(source + ": not valid JSON: " + (at == std::string::npos ? what : what.substr(at + 2)));
  }
  if (!j.is_object()) throw Error(source + ": expected a JSON object at the top level, got " + typeName(j));
  Reader r(source);
  RunConfig c;
  for (auto it = j.begin(); it != j.end(); ++it) {
    bool known = false;
    for (const char* k : kKeys) known = known || it.key() == k;
    if (!known)
      throw Error(source + ": unknown key '" + it.key() + "'; known keys: " + knownKeys() +
                  " (parameters go inside \"params\")");
  }
  if (j.contains("eddy_config")) {
    const auto v = r.count(j["eddy_config"], "eddy_config", {1, 1});
    (void)v;
  }
  if (j.contains("sim")) {
    c.sim = r.string(j["sim"], "sim");
    const auto& sims = simulationNames();
    if (std::find(sims.begin(), sims.end(), *c.sim) == sims.end()) {
      r.fail("sim", "unknown simulation '" + printable(*c.sim) + "'; known: " + joinNames(sims));
    }
  }
  const std::string sim = c.sim.value_or(defaultSimulationName());
  if (j.contains("scene")) {
    c.scene = r.string(j["scene"], "scene");
    const auto names = sceneNames(sim);
    if (std::find(names.begin(), names.end(), *c.scene) == names.end()) {
      r.fail("scene", "unknown " + sim + " scene '" + *c.scene + "'; known: " + joinNames(names));
    }
  }
  if (j.contains("n")) c.n = r.count(j["n"], "n", kLimitN);
  if (j.contains("ic")) {
    // An input, as a mesh is: a relative path is taken from the config
    // file's folder (outputs, "diag" and the like, from the working folder).
    c.ic = r.string(j["ic"], "ic");
    if (!c.ic->empty() && std::filesystem::path(*c.ic).is_relative())
      c.ic = (std::filesystem::path(configFolder(source)) / *c.ic).lexically_normal().string();
  }
  if (j.contains("device")) {
    c.device = r.string(j["device"], "device");
    if (!isDeviceSpec(*c.device)) r.fail("device", deviceSpecError(*c.device));
  }
  if (j.contains("steps")) c.steps = r.count(j["steps"], "steps", kLimitSteps);
  if (j.contains("until")) {
    const double u = r.number(j["until"], "until");
    if (u < 0 || u > kMaxUntil) {
      std::ostringstream o;
      o << formatNumber(u) << " is out of range [0, " << formatNumber(kMaxUntil) << "]";
      r.fail("until", o.str());
    }
    c.until = u;
  }
  if (c.steps && c.until) r.fail("until", "give either \"steps\" or \"until\", not both");
  if (c.ic && (c.scene || c.n)) r.fail("ic", "\"ic\" replaces the scene: do not combine it with \"scene\" or \"n\"");
  if (j.contains("check_every")) c.checkEvery = r.count(j["check_every"], "check_every", kLimitCheckEvery);
  if (j.contains("diag")) c.diag = r.string(j["diag"], "diag");
  if (j.contains("bodies")) {
    if (!j["bodies"].is_array()) r.fail("bodies", "expected an array of body objects, got " + typeName(j["bodies"]));
    const std::string dir = configFolder(source);
    for (size_t i = 0; i < j["bodies"].size(); ++i)
      c.bodies.push_back(bodySpecFromJson(j["bodies"][i], source + ": bodies[" + std::to_string(i) + "]", dir));
  }
  if (j.contains("diag_every")) c.diagEvery = r.count(j["diag_every"], "diag_every", kLimitEvery);
  if (j.contains("out")) c.out = r.string(j["out"], "out");
  if (j.contains("export")) c.exportDir = r.string(j["export"], "export");
  if (j.contains("export_every"))
    c.exportEvery = r.count(j["export_every"], "export_every", kLimitEvery);
  if (j.contains("save")) c.save = r.string(j["save"], "save");
  if (j.contains("probes")) {
    const json& list = j["probes"];
    if (!list.is_array())
      r.fail("probes", "expected an array of probes (\"pressure:NAME:x,y,z\", \"level:NAME:x,z\" "
                       "or objects), got " + typeName(list));
    for (size_t i = 0; i < list.size(); ++i) {
      const std::string key = "probes[" + std::to_string(i) + "]";
      c.probes.push_back(probeSpecFromJson(list[i], [&](const std::string& sub, const std::string& why) {
        return source + ": key '" + key + (sub.empty() ? "" : "." + sub) + "': " + why;
      }));
    }
    try {
      checkProbeNames(c.probes);
    } catch (const Error& e) {
      r.fail("probes", e.what());
    }
  }
  if (j.contains("probe_out")) c.probeOut = r.string(j["probe_out"], "probe_out");
  if (j.contains("probe_every")) c.probeEvery = r.count(j["probe_every"], "probe_every", kLimitEvery);
  if (j.contains("probe_dt")) {
    const double d = r.number(j["probe_dt"], "probe_dt");
    if (!(d >= kMinProbeDt) || d > kMaxUntil)
      r.fail("probe_dt", formatNumber(d) + " is out of range: must be from " + formatNumber(kMinProbeDt) +
                             " to " + formatNumber(kMaxUntil) + " (simulated seconds)");
    c.probeDt = d;
  }
  if (c.probeEvery && c.probeDt) r.fail("probe_dt", "give either \"probe_every\" or \"probe_dt\", not both");
  if (j.contains("obstacles")) {
    const json& o = j["obstacles"];
    const SimulationType* type = findSimulationType(sim);
    if (!type || !type->takesObstacles) r.fail("obstacles", sim + " has no obstacles");
    if (!o.is_array()) r.fail("obstacles", "expected an array of shape objects, got " + typeName(o));
    const std::string dir = configFolder(source);
    for (size_t i = 0; i < o.size(); ++i)
      c.obstacles.push_back(
          shapeSpecFromJson(o[i], source + ": obstacles[" + std::to_string(i) + "]", dir));
  }
  if (j.contains("params")) {
    const json& p = j["params"];
    if (!p.is_object()) r.fail("params", "expected an object of parameter: value, got " + typeName(p));
    Params check(paramDecl(sim));
    for (auto it = p.begin(); it != p.end(); ++it) {
      const std::string key = "params." + it.key();
      if (!check.find(it.key()))
        r.fail(key, "unknown " + sim + " parameter; known parameters: " + check.knownKeys());
      const ParamDesc& d = *check.find(it.key());
      double v = 0;
      if (d.isEnum() || d.isBool()) {
        // Typed parameters: an enum by its choice's name, a bool as true/false.
        if (d.isEnum() && it.value().is_string()) {
          try {
            v = Params::parseValue(d, it.value().get<std::string>());
          } catch (const ParamError& e) {
            r.fail(key, e.what());
          }
        } else if (d.isBool() && it.value().is_boolean()) {
          v = it.value().get<bool>() ? 1 : 0;
        } else {
          r.fail(key, (d.isEnum() ? "expected a string, one of: " + joinNames(d.choices)
                                  : std::string("expected true or false")) +
                          ", got " + typeName(it.value()));
        }
      } else {
        v = r.number(it.value(), key);
      }
      try {
        check.set(it.key(), v);
      } catch (const ParamError& e) {
        r.fail(key, e.what());
      }
      c.params.emplace_back(it.key(), v);
    }
  }
  return c;
}

RunConfig loadConfig(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) throw Error(path + ": cannot open config file");
  if (!S_ISREG(st.st_mode)) throw Error(path + ": not a regular file");
  if (st.st_size > 16 * 1024 * 1024) throw Error(path + ": config file larger than 16 MiB");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(path + ": cannot open config file");
  std::ostringstream s;
  s << in.rdbuf();
  if (in.bad()) throw Error(path + ": read error");
  return parseConfig(s.str(), path);
}

std::string configToJson(const RunConfig& c) {
  json j = json::object();
  j["eddy_config"] = 1;
  auto put = [&](const char* key, const auto& opt) {
    if (opt) j[key] = *opt;
  };
  put("sim", c.sim);
  put("scene", c.scene);
  put("n", c.n);
  put("ic", c.ic);
  put("device", c.device);
  put("steps", c.steps);
  put("until", c.until);
  put("check_every", c.checkEvery);
  put("diag", c.diag);
  put("diag_every", c.diagEvery);
  put("out", c.out);
  put("export", c.exportDir);
  put("export_every", c.exportEvery);
  put("save", c.save);
  if (!c.probes.empty()) {
    json list = json::array();
    for (const auto& p : c.probes) list.push_back(probeSpecText(p));
    j["probes"] = list;
  }
  put("probe_out", c.probeOut);
  put("probe_every", c.probeEvery);
  put("probe_dt", c.probeDt);
  if (!c.obstacles.empty()) {
    json o = json::array();
    for (const auto& s : c.obstacles) o.push_back(shapeSpecToJson(s));
    j["obstacles"] = o;
  }
  if (!c.bodies.empty()) {
    json b = json::array();
    for (const auto& body : c.bodies) b.push_back(bodySpecToJson(body));
    j["bodies"] = b;
  }
  if (!c.params.empty()) {
    json p = json::object();
    const SimulationType* type = findSimulationType(c.sim.value_or(defaultSimulationName()));
    for (const auto& [k, v] : c.params) {
      const ParamDesc* d = nullptr;
      if (type)
        for (const auto& decl : type->params())
          if (decl.name == k) d = &decl;
      if (d && d->isEnum()) p[k] = d->valueText(v);
      else if (d && d->isBool()) p[k] = v != 0;
      else p[k] = v;
    }
    j["params"] = p;
  }
  return j.dump(2) + "\n";
}

void saveConfig(const std::string& path, const RunConfig& c) {
  AtomicFile f(path);
  f.stream() << configToJson(c);
  f.commit();
}

}  // namespace eddy
