// shape_spec_io.cpp: shape specs from the command line and config files.
#include "shape_spec_io.hpp"

#include "error.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>

namespace eddy {
namespace {

// Canonical long key names; the command line also has short aliases.
const char* canonicalKey(std::string_view k) {
  if (k == "size") return "size";
  if (k == "d" || k == "diameter") return "diameter";
  if (k == "h" || k == "height") return "height";
  if (k == "file") return "file";
  if (k == "scale") return "scale";
  if (k == "pos" || k == "position") return "position";
  if (k == "rot" || k == "rotation") return "rotation";
  return nullptr;
}

// The keys of each kind, besides position and rotation.
std::vector<std::string> kindKeys(ShapeKind k) {
  switch (k) {
    case ShapeKind::Box: return {"size"};
    case ShapeKind::Sphere: return {"diameter"};
    case ShapeKind::Cylinder: return {"diameter", "height"};
    case ShapeKind::Mesh: return {"file", "scale"};
  }
  return {};
}
bool required(ShapeKind k, const std::string& key) { return !(k == ShapeKind::Mesh && key == "scale"); }

std::string join(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : ", ") + x;
  return s;
}

std::string fmt(double v) {
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, r.ptr);
}

// Applies one value list (already numbers) to the spec; `why` throws.
template <class Fail>
void apply(ShapeSpec& s, const std::string& key, const std::vector<double>& v, Fail&& fail) {
  auto count = [&](size_t n, const char* what) {
    if (v.size() != n) fail(std::string("needs ") + what + ", got " + std::to_string(v.size()) + " value" + (v.size() == 1 ? "" : "s"));
  };
  auto positive = [&] {
    for (double x : v)
      if (!(x > 0)) fail("must be > 0, got " + fmt(x));
  };
  if (key == "size") {
    if (v.size() == 1) {
      positive();
      s.size = {v[0], v[0], v[0]};
      return;
    }
    count(3, "3 values (x, y, z) or 1 (a cube)");
    positive();
    s.size = {v[0], v[1], v[2]};
  } else if (key == "diameter") {
    count(1, "1 value");
    positive();
    s.size[0] = v[0];
    s.size[2] = v[0];
    if (s.kind == ShapeKind::Sphere) s.size[1] = v[0];
  } else if (key == "height") {
    count(1, "1 value");
    positive();
    s.size[1] = v[0];
  } else if (key == "scale") {
    if (v.size() == 1) {
      positive();
      s.scale = {v[0], v[0], v[0]};
      return;
    }
    count(3, "3 values (x, y, z) or 1");
    positive();
    s.scale = {v[0], v[1], v[2]};
  } else if (key == "position") {
    count(3, "3 values (x, y, z)");
    s.pose.position = {v[0], v[1], v[2]};
  } else if (key == "rotation") {
    count(3, "3 values (degrees about x, y, z)");
    s.pose.rotationDeg = {v[0], v[1], v[2]};
  }
}

// The keys of a kind for a message: the command line's short names or the
// config file's long ones.
std::string keysOf(ShapeKind k, const std::vector<std::string>& extra, bool cli = false) {
  auto keys = kindKeys(k);
  keys.push_back("position");
  keys.push_back("rotation");
  if (cli)
    for (auto& key : keys)
      key = key == "diameter" ? "d" : key == "height" ? "h" : key == "position" ? "pos" : key == "rotation" ? "rot" : key;
  keys.insert(keys.end(), extra.begin(), extra.end());
  return join(keys);
}

}  // namespace

ShapeSpec withAbsoluteMeshPath(ShapeSpec s) {
  if (s.kind == ShapeKind::Mesh && !s.file.empty() && std::filesystem::path(s.file).is_relative()) {
    std::error_code ec;
    const auto abs = std::filesystem::absolute(s.file, ec);
    if (!ec) s.file = abs.lexically_normal().string();
  }
  return s;
}

ShapeSpec parseShapeSpec(std::string_view text) {
  std::map<std::string, std::string> extras;
  return parseShapeSpec(text, {}, extras);
}

ShapeSpec parseShapeSpec(std::string_view text, const std::vector<std::string>& extraKeys,
                         std::map<std::string, std::string>& extras) {
  const std::string spec(text);
  auto fail = [&](const std::string& why) -> void { throw Error("shape spec '" + spec + "': " + why); };
  std::vector<std::string_view> parts;
  for (size_t at = 0;;) {
    const size_t c = text.find(':', at);
    parts.push_back(text.substr(at, c == std::string_view::npos ? std::string_view::npos : c - at));
    if (c == std::string_view::npos) break;
    at = c + 1;
  }
  ShapeSpec s;
  try {
    s.kind = parseShapeKind(std::string(parts[0]));
  } catch (const Error& e) {
    fail(e.what());
  }
  const auto allowed = kindKeys(s.kind);
  std::vector<std::string> seen;
  for (size_t i = 1; i < parts.size(); ++i) {
    const std::string_view part = parts[i];
    const size_t eq = part.find('=');
    if (eq == std::string_view::npos || eq == 0)
      fail("expected KEY=VALUE after ':', got '" + std::string(part) + "' (" + shapeKindName(s.kind) +
           " keys: " + keysOf(s.kind, extraKeys, true) + ")");
    const std::string name(part.substr(0, eq));
    const std::string_view value = part.substr(eq + 1);
    if (std::find(extraKeys.begin(), extraKeys.end(), name) != extraKeys.end()) {
      if (extras.count(name)) fail("key '" + name + "' given twice");
      extras[name] = std::string(value);
      continue;
    }
    const char* key = canonicalKey(name);
    if (!key || (std::find(allowed.begin(), allowed.end(), key) == allowed.end() &&
                 std::string_view(key) != "position" && std::string_view(key) != "rotation"))
      fail("unknown key '" + name + "' for a " + shapeKindName(s.kind) + " (keys: " +
           keysOf(s.kind, extraKeys, true) + ")");
    if (std::find(seen.begin(), seen.end(), key) != seen.end()) fail("key '" + name + "' given twice");
    seen.push_back(key);
    if (std::string_view(key) == "file") {
      if (value.empty()) fail("key 'file': empty path");
      s.file = std::string(value);
      continue;
    }
    std::vector<double> v;
    for (size_t at = 0;;) {
      const size_t c = value.find(',', at);
      const std::string_view t = value.substr(at, c == std::string_view::npos ? std::string_view::npos : c - at);
      double x = 0;
      const auto r = std::from_chars(t.data(), t.data() + t.size(), x);
      if (t.empty() || r.ec != std::errc() || r.ptr != t.data() + t.size() || !std::isfinite(x))
        fail("key '" + name + "': '" + std::string(t) + "' is not a finite number");
      v.push_back(x);
      if (c == std::string_view::npos) break;
      at = c + 1;
    }
    apply(s, key, v, [&](const std::string& why) { fail("key '" + name + "' " + why); });
  }
  for (const auto& k : allowed)
    if (required(s.kind, k) && std::find(seen.begin(), seen.end(), k) == seen.end())
      fail("a " + shapeKindName(s.kind) + " needs key '" + k + "'");
  return s;
}

std::string shapeSpecToString(const ShapeSpec& s) {
  auto list = [](const Vec3d& v) { return fmt(v[0]) + "," + fmt(v[1]) + "," + fmt(v[2]); };
  std::string t = shapeKindName(s.kind);
  switch (s.kind) {
    case ShapeKind::Box: t += ":size=" + list(s.size); break;
    case ShapeKind::Sphere: t += ":d=" + fmt(s.size[0]); break;
    case ShapeKind::Cylinder: t += ":d=" + fmt(s.size[0]) + ":h=" + fmt(s.size[1]); break;
    case ShapeKind::Mesh: t += ":file=" + s.file + ":scale=" + list(s.scale); break;
  }
  return t + ":pos=" + list(s.pose.position) + ":rot=" + list(s.pose.rotationDeg);
}

ShapeSpec shapeSpecFromJson(const nlohmann::json& j, const std::string& where, const std::string& baseDir,
                            const std::vector<std::string>& extraKeys) {
  auto failKey = [&](const std::string& key, const std::string& why) -> void {
    throw Error(where + ": key '" + key + "': " + why);
  };
  if (!j.is_object()) throw Error(where + ": expected a JSON object with a key 'shape', got " + std::string(j.type_name()));
  const auto sh = j.find("shape");
  if (sh == j.end()) throw Error(where + ": missing key 'shape' (box, sphere, cylinder or mesh)");
  if (!sh->is_string()) failKey("shape", std::string("expected a string, got ") + sh->type_name());
  ShapeSpec s;
  try {
    s.kind = parseShapeKind(sh->get<std::string>());
  } catch (const Error& e) {
    failKey("shape", e.what());
  }
  const auto allowed = kindKeys(s.kind);
  for (auto it = j.begin(); it != j.end(); ++it) {
    const std::string& key = it.key();
    if (key == "shape" || std::find(extraKeys.begin(), extraKeys.end(), key) != extraKeys.end()) continue;
    const bool known = canonicalKey(key) && canonicalKey(key) == std::string_view(key);
    if (!known || (std::find(allowed.begin(), allowed.end(), key) == allowed.end() && key != "position" &&
                   key != "rotation"))
      failKey(key, "unknown key for a " + shapeKindName(s.kind) + " (keys: shape, " + keysOf(s.kind, extraKeys) +
                       ")");
    const nlohmann::json& v = it.value();
    if (key == "file") {
      if (!v.is_string()) failKey(key, std::string("expected a string (a path), got ") + v.type_name());
      std::string f = v.get<std::string>();
      if (f.empty()) failKey(key, "empty path");
      if (f.find('\0') != std::string::npos)  // (a config refuses it earlier; a crafted snapshot here)
        failKey(key, "the path holds a NUL character: cut there it would name another file");
      const std::filesystem::path p(f);
      if (!baseDir.empty() && p.is_relative()) f = (std::filesystem::path(baseDir) / p).lexically_normal().string();
      s.file = f;
      continue;
    }
    std::vector<double> nums;
    auto number = [&](const nlohmann::json& x) {
      if (!x.is_number()) failKey(key, std::string("expected a number, got ") + x.type_name());
      const double d = x.get<double>();
      if (!std::isfinite(d)) failKey(key, "not a finite number");
      nums.push_back(d);
    };
    const bool one = key == "diameter" || key == "height";
    const bool oneOrThree = key == "scale" || key == "size";
    if (v.is_array() && !one) {
      if (v.size() != 3) failKey(key, "expected an array of 3 numbers, got " + std::to_string(v.size()) + " elements");
      for (const auto& x : v) number(x);
    } else if (one || oneOrThree) {
      number(v);
    } else {
      failKey(key, std::string("expected an array of 3 numbers, got ") + v.type_name());
    }
    apply(s, key, nums, [&](const std::string& why) { failKey(key, why); });
  }
  for (const auto& k : allowed)
    if (required(s.kind, k) && !j.contains(k))
      throw Error(where + ": a " + shapeKindName(s.kind) + " needs key '" + k + "'");
  return s;
}

nlohmann::json shapeSpecToJson(const ShapeSpec& s) {
  auto arr = [](const Vec3d& v) { return nlohmann::json::array({v[0], v[1], v[2]}); };
  nlohmann::json j;
  j["shape"] = shapeKindName(s.kind);
  switch (s.kind) {
    case ShapeKind::Box: j["size"] = arr(s.size); break;
    case ShapeKind::Sphere: j["diameter"] = s.size[0]; break;
    case ShapeKind::Cylinder:
      j["diameter"] = s.size[0];
      j["height"] = s.size[1];
      break;
    case ShapeKind::Mesh:
      j["file"] = s.file;
      j["scale"] = arr(s.scale);
      break;
  }
  j["position"] = arr(s.pose.position);
  j["rotation"] = arr(s.pose.rotationDeg);
  return j;
}

}  // namespace eddy
