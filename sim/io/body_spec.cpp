// body_spec.cpp: rigid-body specs from the command line and config files.
#include "body_spec.hpp"

#include "error.hpp"
#include "shape_spec_io.hpp"

#include <algorithm>
#include <charconv>
#include <functional>
#include <initializer_list>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>

namespace eddy {

namespace {

using json = nlohmann::json;

const std::vector<std::string> kExtraKeys = {"density", "mass",  "motion", "amplitude", "period",
                                             "phase",   "axis",  "speed",  "point"};

// The range of a body's density (kg/m^3) or mass (kg): see check().
constexpr double kBodyMassMin = 1e-20, kBodyMassMax = 1e20;
constexpr double kMotionPeriodMin = 1e-6, kMotionPeriodMax = 1e9;  // s
constexpr double kMotionLengthMax = 1e6;                           // m
constexpr double kMotionPhaseMax = 1e6;                            // rad
constexpr double kMotionSpeedMax = 1e6;                            // rad/s

std::string fmt(double v) {
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, r.ptr);
}
std::string fmt3(const Vec3d& v) { return fmt(v[0]) + "," + fmt(v[1]) + "," + fmt(v[2]); }

std::vector<double> numbers(std::string_view text, const std::function<void(const std::string&)>& fail) {
  std::vector<double> out;
  for (size_t at = 0;;) {
    const size_t c = text.find(',', at);
    const std::string_view item = text.substr(at, c == std::string_view::npos ? std::string_view::npos : c - at);
    double v = 0;
    const auto r = std::from_chars(item.data(), item.data() + item.size(), v);
    if (item.empty() || r.ec != std::errc() || r.ptr != item.data() + item.size() || !std::isfinite(v))
      fail("'" + std::string(item) + "' is not a finite number");
    out.push_back(v);
    if (c == std::string_view::npos) break;
    at = c + 1;
  }
  return out;
}

// Checks shared by both syntaxes; `fail(key, why)` throws.
template <class Fail>
void check(const BodySpec& b, Fail&& fail) {
  if (b.density < 0 || b.mass < 0) fail(b.density < 0 ? "density" : "mass", "must be > 0");
  if (b.density > 0 && b.mass > 0) fail("mass", "give density or mass, not both");
  // The device integrates a body in float (its mass, 1/mass, mass x size^2):
  // beyond this range that arithmetic overflows and the body's state becomes
  // NaN or infinite. No real body comes near these bounds.
  for (const auto& [key, v] : {std::pair<const char*, double>{"density", b.density}, {"mass", b.mass}})
    if (v != 0 && !(v >= kBodyMassMin && v <= kBodyMassMax))
      fail(key, fmt(v) + " is out of range: allowed [" + fmt(kBodyMassMin) + ", " +
                    fmt(kBodyMassMax) + "] (" + (key == std::string("mass") ? "kg" : "kg/m^3") +
                    "; the device computes the body in float)");
  if (b.motion == BodyMotion::Floating && !(b.density > 0) && !(b.mass > 0))
    fail("density", "a floating body needs a density (kg/m^3) or a mass (kg)");
  // A kinematic body's motion is prescribed: a density or mass would be
  // ignored (it never receives a force), so it is refused rather than dropped.
  if (b.motion != BodyMotion::Floating && (b.density > 0 || b.mass > 0))
    fail(b.density > 0 ? "density" : "mass",
         "a " + bodyMotionName(b.motion) + " body follows its prescribed motion and takes no " +
             (b.density > 0 ? "density" : "mass") + " (only a floating body does)");
  auto nonzero = [&](const Vec3d& a, const char* key) {
    if (!(std::max({std::fabs(a[0]), std::fabs(a[1]), std::fabs(a[2])}) > 0)) fail(key, "must be a non-zero vector");
  };
  // The device evaluates a motion law in float: sin(2 pi t / T + phase),
  // omega = speed x axis. Beyond these bounds it overflows or loses every
  // digit of the phase (float's spacing passes 1 rad above 1.7e7), and no
  // real wave maker or paddle comes near them.
  auto within = [&](double v, double lo, double hi, const char* key, const char* unit) {
    if (!(v >= lo && v <= hi))
      fail(key, fmt(v) + " is out of range: allowed [" + fmt(lo) + ", " + fmt(hi) + "] (" + unit +
                    "; the device evaluates the motion in float)");
  };
  if (b.motion == BodyMotion::Piston) {
    nonzero(b.piston.axis, "axis");
    if (!(b.piston.period > 0)) fail("period", "must be > 0 (s)");
    within(b.piston.period, kMotionPeriodMin, kMotionPeriodMax, "period", "s");
    within(b.piston.amplitude, -kMotionLengthMax, kMotionLengthMax, "amplitude", "m");
    within(b.piston.phase, -kMotionPhaseMax, kMotionPhaseMax, "phase", "rad");
  } else if (b.motion == BodyMotion::Rotate) {
    nonzero(b.rotate.axis, "axis");
    within(b.rotate.speed, -kMotionSpeedMax, kMotionSpeedMax, "speed", "rad/s");
  }
}

BodyMotion motionNamed(const std::string& name, const std::function<void(const std::string&)>& fail) {
  if (name == "floating") return BodyMotion::Floating;
  if (name == "piston") return BodyMotion::Piston;
  if (name == "rotate") return BodyMotion::Rotate;
  fail("unknown motion '" + name + "' (floating, piston, rotate)");
  return BodyMotion::Floating;
}

}  // namespace

std::string bodyMotionName(BodyMotion m) {
  switch (m) {
    case BodyMotion::Floating: return "floating";
    case BodyMotion::Piston: return "piston";
    case BodyMotion::Rotate: return "rotate";
  }
  return "?";
}

bool operator==(const BodySpec& a, const BodySpec& b) {
  return shapeSpecToString(a.shape) == shapeSpecToString(b.shape) && a.density == b.density &&
         a.mass == b.mass && a.motion == b.motion && a.piston == b.piston && a.rotate == b.rotate;
}

double bodyMass(const BodySpec& b, double volume) {
  if (b.mass > 0) return b.mass;
  return (b.density > 0 ? b.density : 1000.0) * volume;
}

double kinematicPeakSpeed(const BodySpec& b, const Aabb& box, double* arm) {
  if (arm) *arm = 0;
  if (b.motion == BodyMotion::Piston) return 2 * M_PI * std::fabs(b.piston.amplitude) / b.piston.period;
  if (b.motion != BodyMotion::Rotate) return 0;
  const Vec3d u = unitDirection(b.rotate.axis);
  double far = 0;
  for (int c = 0; c < 8; ++c) {
    const Vec3d p{c & 1 ? box.hi[0] : box.lo[0], c & 2 ? box.hi[1] : box.lo[1], c & 4 ? box.hi[2] : box.lo[2]};
    const Vec3d d{p[0] - b.rotate.point[0], p[1] - b.rotate.point[1], p[2] - b.rotate.point[2]};
    const double along = d[0] * u[0] + d[1] * u[1] + d[2] * u[2];
    far = std::max(far, std::sqrt(std::max(0.0, d[0] * d[0] + d[1] * d[1] + d[2] * d[2] - along * along)));
  }
  if (arm) *arm = far;
  return std::fabs(b.rotate.speed) * far;
}

BodySpec parseBodySpec(std::string_view text) {
  const std::string spec(text);
  std::map<std::string, std::string> ex;
  BodySpec b;
  try {
    b.shape = parseShapeSpec(text, kExtraKeys, ex);
  } catch (const Error& e) {
    throw Error("body spec: " + std::string(e.what()));
  }
  auto fail = [&](const std::string& why) { throw Error("body spec '" + spec + "': " + why); };
  auto num = [&](const std::string& key) {
    const auto v = numbers(ex.at(key), [&](const std::string& w) { fail("key '" + key + "': " + w); });
    if (v.size() != 1) fail("key '" + key + "' needs 1 value");
    return v[0];
  };
  auto vec = [&](const std::string& key) {
    const auto v = numbers(ex.at(key), [&](const std::string& w) { fail("key '" + key + "': " + w); });
    if (v.size() != 3) fail("key '" + key + "' needs 3 values (x, y, z)");
    return Vec3d{v[0], v[1], v[2]};
  };
  // Given, a density or mass must be > 0 (0 is how "not given" is stored).
  if (ex.count("density") && !((b.density = num("density")) > 0)) fail("key 'density': must be > 0");
  if (ex.count("mass") && !((b.mass = num("mass")) > 0)) fail("key 'mass': must be > 0");
  if (ex.count("motion")) b.motion = motionNamed(ex.at("motion"), fail);
  auto only = [&](BodyMotion m, std::initializer_list<const char*> keys) {
    for (const char* k : keys)
      if (ex.count(k) && b.motion != m)
        fail("key '" + std::string(k) + "' belongs to motion=" + bodyMotionName(m));
  };
  only(BodyMotion::Piston, {"amplitude", "period", "phase"});
  only(BodyMotion::Rotate, {"speed", "point"});
  if (ex.count("axis") && b.motion == BodyMotion::Floating)
    fail("key 'axis' belongs to motion=piston or motion=rotate");
  if (b.motion == BodyMotion::Piston) {
    if (!ex.count("amplitude") || !ex.count("period"))
      fail("motion=piston needs amplitude=A (m) and period=T (s)");
    b.piston.amplitude = num("amplitude");
    b.piston.period = num("period");
    if (ex.count("phase")) b.piston.phase = num("phase");
    if (ex.count("axis")) b.piston.axis = vec("axis");
  } else if (b.motion == BodyMotion::Rotate) {
    if (!ex.count("speed")) fail("motion=rotate needs speed=OMEGA (rad/s)");
    b.rotate.speed = num("speed");
    if (ex.count("axis")) b.rotate.axis = vec("axis");
    b.rotate.point = ex.count("point") ? vec("point") : b.shape.pose.position;
  }
  check(b, [&](const std::string& key, const std::string& why) { fail("key '" + key + "': " + why); });
  return b;
}

std::string bodySpecToString(const BodySpec& b) {
  std::string s = shapeSpecToString(b.shape);
  if (b.density > 0) s += ":density=" + fmt(b.density);
  if (b.mass > 0) s += ":mass=" + fmt(b.mass);
  if (b.motion == BodyMotion::Piston)
    s += ":motion=piston:amplitude=" + fmt(b.piston.amplitude) + ":period=" + fmt(b.piston.period) +
         ":phase=" + fmt(b.piston.phase) + ":axis=" + fmt3(b.piston.axis);
  else if (b.motion == BodyMotion::Rotate)
    s += ":motion=rotate:speed=" + fmt(b.rotate.speed) + ":axis=" + fmt3(b.rotate.axis) +
         ":point=" + fmt3(b.rotate.point);
  return s;
}

namespace {

BodySpec bodyFromJson(const json& j, const std::string& where, const std::string& baseDir,
                      bool dropKinematicMass) {
  BodySpec b;
  b.shape = shapeSpecFromJson(j, where, baseDir, {"density", "mass", "motion"});
  auto fail = [&](const std::string& key, const std::string& why) {
    throw Error(where + ": key '" + key + "': " + why);
  };
  auto number = [&](const json& v, const std::string& key) {
    if (!v.is_number()) fail(key, "expected a number");
    const double d = v.get<double>();
    if (!std::isfinite(d)) fail(key, "must be a finite number");
    return d;
  };
  auto vec = [&](const json& v, const std::string& key) {
    if (!v.is_array() || v.size() != 3) fail(key, "expected [x, y, z]");
    return Vec3d{number(v[0], key), number(v[1], key), number(v[2], key)};
  };
  if (j.contains("density") && !((b.density = number(j["density"], "density")) > 0))
    fail("density", "must be > 0");
  if (j.contains("mass") && !((b.mass = number(j["mass"], "mass")) > 0)) fail("mass", "must be > 0");
  if (j.contains("motion")) {
    const json& m = j["motion"];
    if (m.is_string()) {
      const std::string name = m.get<std::string>();
      if (name != "floating")
        fail("motion", name == "piston" || name == "rotate"
                           ? "\"" + name + "\" needs its parameters: {\"" + name + "\": {...}}"
                           : "unknown motion '" + name + "' (\"floating\", {\"piston\": {...}}, {\"rotate\": {...}})");
    } else if (m.is_object() && m.size() == 1 && (m.contains("piston") || m.contains("rotate"))) {
      const bool piston = m.contains("piston");
      const json& p = piston ? m["piston"] : m["rotate"];
      const std::string base = std::string("motion.") + (piston ? "piston" : "rotate");
      if (!p.is_object()) fail(base, "expected an object");
      const std::vector<std::string> keys =
          piston ? std::vector<std::string>{"amplitude", "period", "phase", "axis"}
                 : std::vector<std::string>{"speed", "axis", "point"};
      for (auto it = p.begin(); it != p.end(); ++it)
        if (std::find(keys.begin(), keys.end(), it.key()) == keys.end())
          fail(base + "." + it.key(), "unknown key");
      if (piston) {
        b.motion = BodyMotion::Piston;
        if (!p.contains("amplitude") || !p.contains("period"))
          fail(base, "needs \"amplitude\" (m) and \"period\" (s)");
        b.piston.amplitude = number(p["amplitude"], base + ".amplitude");
        b.piston.period = number(p["period"], base + ".period");
        if (p.contains("phase")) b.piston.phase = number(p["phase"], base + ".phase");
        if (p.contains("axis")) b.piston.axis = vec(p["axis"], base + ".axis");
      } else {
        b.motion = BodyMotion::Rotate;
        if (!p.contains("speed")) fail(base, "needs \"speed\" (rad/s)");
        b.rotate.speed = number(p["speed"], base + ".speed");
        if (p.contains("axis")) b.rotate.axis = vec(p["axis"], base + ".axis");
        b.rotate.point = p.contains("point") ? vec(p["point"], base + ".point") : b.shape.pose.position;
      }
    } else {
      fail("motion", "expected \"floating\", {\"piston\": {...}} or {\"rotate\": {...}}");
    }
  }
  if (dropKinematicMass && b.motion != BodyMotion::Floating) b.density = b.mass = 0;
  check(b, fail);
  return b;
}

}  // namespace

BodySpec bodySpecFromJson(const json& j, const std::string& where, const std::string& baseDir) {
  return bodyFromJson(j, where, baseDir, false);
}

BodySpec bodySpecFromSnapshotJson(const json& j, const std::string& where) {
  return bodyFromJson(j, where, {}, true);
}

json bodySpecToJson(const BodySpec& b) {
  json j = shapeSpecToJson(b.shape);
  if (b.density > 0) j["density"] = b.density;
  if (b.mass > 0) j["mass"] = b.mass;
  if (b.motion == BodyMotion::Floating) {
    j["motion"] = "floating";
  } else if (b.motion == BodyMotion::Piston) {
    j["motion"] = {{"piston",
                    {{"amplitude", b.piston.amplitude},
                     {"period", b.piston.period},
                     {"phase", b.piston.phase},
                     {"axis", {b.piston.axis[0], b.piston.axis[1], b.piston.axis[2]}}}}};
  } else {
    j["motion"] = {{"rotate",
                    {{"speed", b.rotate.speed},
                     {"axis", {b.rotate.axis[0], b.rotate.axis[1], b.rotate.axis[2]}},
                     {"point", {b.rotate.point[0], b.rotate.point[1], b.rotate.point[2]}}}}};
  }
  return j;
}

}  // namespace eddy
