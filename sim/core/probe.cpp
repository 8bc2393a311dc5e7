#include "probe.hpp"

#include "error.hpp"
#include "io.hpp"

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <set>
#include <sstream>

namespace eddy {

std::string_view probeKindName(ProbeSpec::Kind k) {
  return k == ProbeSpec::Kind::Pressure ? "pressure" : "level";
}

std::string probeNameProblem(std::string_view name) {
  if (name.empty()) return "the name is empty";
  if (name.size() > 64) return "the name is longer than 64 characters";
  for (char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '_' || c == '-' || c == '.';
    if (!ok) {
      const auto u = static_cast<unsigned char>(c);
      std::string shown = c == '\n' ? "a newline" : c == ',' ? "a comma" : c == ' ' ? "a space" : "'" + std::string(1, c) + "'";
      if (u < 32 && c != '\n') shown = "a control character";
      if (u == 127) shown = "a control character";
      // Never one byte of a multi-byte UTF-8 character on its own (the
      // message would print a broken character): the name is shown whole.
      if (u >= 128) shown = "a non-ASCII character";
      return "the name contains " + shown +
             " (names may hold only letters, digits, '_', '-' and '.': they are CSV column names)";
    }
  }
  if (name == "step" || name == "time") return "'" + std::string(name) + "' is a column of the probe CSV already";
  return "";
}

namespace {

// As strict as the shape specs' numbers: a plain decimal number and nothing
// else (no blanks, no '+', no hexadecimal, no inf/nan).
double parseCoordinate(const std::string& s, const std::string& what) {
  double v = 0;
  const auto r = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || r.ec != std::errc() || r.ptr != s.data() + s.size() || !std::isfinite(v))
    throw Error("the coordinate " + what + " = '" + s + "' is not a finite number");
  return v;
}

}  // namespace

ProbeSpec parseProbeSpec(std::string_view text) {
  const std::string t(text);
  const std::string usage = " (expected pressure:NAME:x,y,z or level:NAME:x,z)";
  const size_t a = t.find(':');
  if (a == std::string::npos)
    throw Error("'" + t + "' " +
                (t == "pressure" || t == "level" ? "has no name and no coordinates"
                                                 : "is not KIND:NAME:COORDINATES") + usage);
  const size_t b = t.find(':', a + 1);
  if (b == std::string::npos) throw Error("'" + t + "' has no coordinates" + usage);
  ProbeSpec p;
  const std::string kind = t.substr(0, a);
  if (kind == "pressure") p.kind = ProbeSpec::Kind::Pressure;
  else if (kind == "level") p.kind = ProbeSpec::Kind::Level;
  else throw Error("unknown probe kind '" + kind + "'" + usage);
  p.name = t.substr(a + 1, b - a - 1);
  if (const std::string why = probeNameProblem(p.name); !why.empty())
    throw Error("probe '" + p.name + "': " + why);
  std::vector<std::string> parts;
  std::string rest = t.substr(b + 1), cur;
  for (char c : rest) {
    if (c == ',') {
      parts.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  parts.push_back(cur);
  const size_t want = p.kind == ProbeSpec::Kind::Pressure ? 3 : 2;
  if (parts.size() != want)
    throw Error("probe " + p.name + ": " + kind + " takes " + std::to_string(want) +
                " coordinates, got " + std::to_string(parts.size()) + " ('" + rest + "')" + usage);
  if (want == 3) {
    p.x = parseCoordinate(parts[0], "x");
    p.y = parseCoordinate(parts[1], "y");
    p.z = parseCoordinate(parts[2], "z");
  } else {
    p.x = parseCoordinate(parts[0], "x");
    p.z = parseCoordinate(parts[1], "z");
  }
  return p;
}

std::string probeSpecText(const ProbeSpec& p) {
  std::string s = std::string(probeKindName(p.kind)) + ":" + p.name + ":" + formatNumber(p.x) + ",";
  if (p.kind == ProbeSpec::Kind::Pressure) s += formatNumber(p.y) + ",";
  return s + formatNumber(p.z);
}

bool sameProbeCadence(const ProbeCadence& a, const ProbeCadence& b) {
  if (a.dt > 0 || b.dt > 0) return a.dt == b.dt;
  return a.every == b.every;
}

bool sameProbe(const ProbeSpec& a, const ProbeSpec& b) {
  return a.kind == b.kind && a.name == b.name && a.x == b.x && a.y == b.y && a.z == b.z;
}

void checkProbeNames(const std::vector<ProbeSpec>& probes) {
  std::set<std::string> seen;
  for (const auto& p : probes)
    if (!seen.insert(p.name).second)
      throw Error("probe name '" + p.name + "' is given twice (names are CSV columns: each once)");
}

void checkProbesInside(const std::vector<ProbeSpec>& probes, const double tank[3]) {
  for (const auto& p : probes) {
    const double c[3] = {p.x, p.y, p.z};
    static const char* axis[3] = {"x", "y", "z"};
    for (int a = 0; a < 3; ++a) {
      if (a == 1 && p.kind == ProbeSpec::Kind::Level) continue;
      // On a face is inside (float rounding of the tank's size allowed for).
      if (!(c[a] >= 0 && c[a] <= tank[a] * (1 + 1e-6))) {
        std::ostringstream o;
        o << "probe " << p.name << " (" << probeSpecText(p) << ") lies outside the tank: " << axis[a]
          << " = " << c[a] << " m is not in [0, " << tank[a] << "]";
        throw Error(o.str());
      }
    }
  }
}

ProbeCsv::ProbeCsv(std::ostream& out, const std::vector<ProbeSpec>& probes) : out_(out) {
  std::vector<std::string> h = {"step", "time"};
  for (const auto& p : probes) h.push_back(p.name);
  out_ << joinCsv(h) << '\n';
}

void ProbeCsv::write(const ProbeRow& row) {
  out_ << row.step << ',' << formatNumber(row.time);
  for (double v : row.values) out_ << ',' << formatNumber(v);
  out_ << '\n';
  ++rows_;
}

}  // namespace eddy
