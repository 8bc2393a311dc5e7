#include "params.hpp"

#include "io.hpp"

#include <charconv>
#include <cmath>
#include <sstream>

namespace eddy {

namespace {
// Blanks around a value are not part of it ('--until " 0.01"', a CSV cell
// "0.5 ", a count from `wc -l`'s padded output): the same for every kind of
// number, so that --n ' 5' and --until ' 5' are read alike (they were not).
std::string_view trimBlanks(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t' || text.back() == '\r'))
    text.remove_suffix(1);
  return text;
}

// The whole of `text` (blanks around it and a leading '+' allowed) as a
// finite double: std::errc() and v; result_out_of_range for a number beyond
// a double's range (1e-400, 1e400); invalid_argument for anything else.
std::errc readDouble(std::string_view text, double& v) {
  text = trimBlanks(text);
  if (!text.empty() && text.front() == '+') text.remove_prefix(1);
  if (text.empty()) return std::errc::invalid_argument;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ptr != text.data() + text.size()) return std::errc::invalid_argument;
  if (ec == std::errc::result_out_of_range) return ec;
  return ec == std::errc() && std::isfinite(v) ? std::errc() : std::errc::invalid_argument;
}
}  // namespace

bool parseDouble(std::string_view text, double& out) {
  double v = 0;
  if (readDouble(text, v) != std::errc()) return false;
  out = v;
  return true;
}

bool parseUnsigned(std::string_view text, unsigned long long& out) {
  text = trimBlanks(text);
  if (!text.empty() && text.front() == '+') text.remove_prefix(1);  // as parseDouble
  if (text.empty()) return false;
  unsigned long long v = 0;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || ptr != text.data() + text.size()) return false;
  out = v;
  return true;
}

std::string joinNames(const std::vector<std::string>& names) {
  std::string s;
  for (const auto& n : names) s += (s.empty() ? "" : ", ") + n;
  return s;
}

std::string ParamDesc::valueText(double value) const {
  if (isEnum()) {
    const auto i = std::llround(value);
    return i >= 0 && size_t(i) < choices.size() ? choices[size_t(i)] : std::to_string(i);
  }
  if (isBool()) return value != 0 ? "true" : "false";
  std::ostringstream o;
  o << value;
  return o.str();
}

ParamDesc enumParam(std::string name, std::string label, std::string group,
                    std::vector<std::string> choices, size_t def, std::string description,
                    bool rebuild) {
  ParamDesc d{std::move(name), std::move(label), std::move(group), "", 0,
              double(choices.empty() ? 0 : choices.size() - 1), double(def),
              std::move(description), true, rebuild, false};
  d.choices = std::move(choices);
  return d;
}

ParamDesc boolParam(std::string name, std::string label, std::string group, bool def,
                    std::string description, bool rebuild) {
  ParamDesc d{std::move(name), std::move(label), std::move(group), "", 0, 1, def ? 1.0 : 0.0,
              std::move(description), true, rebuild, false};
  d.boolean = true;
  return d;
}

Params::Params(const std::vector<ParamDesc>& decl) : decl_(&decl) {
  values_.reserve(decl.size());
  for (const auto& d : decl) values_.push_back(d.def);
}

const ParamDesc* Params::find(std::string_view name) const {
  if (!decl_) return nullptr;
  for (const auto& d : *decl_)
    if (d.name == name) return &d;
  return nullptr;
}

std::string Params::knownKeys() const {
  std::string keys;
  if (decl_)
    for (const auto& d : *decl_) keys += (keys.empty() ? "" : ", ") + d.name;
  return keys;
}

double Params::get(std::string_view name) const {
  for (size_t i = 0; decl_ && i < decl_->size(); ++i)
    if ((*decl_)[i].name == name) return values_[i];
  throw ParamError("unknown parameter '" + std::string(name) + "'");
}

long long Params::getInt(std::string_view name) const { return std::llround(get(name)); }

const std::string& Params::getChoice(std::string_view name) const {
  const ParamDesc* d = find(name);
  if (!d || !d->isEnum()) throw ParamError("parameter '" + std::string(name) + "' is not a choice");
  return d->choices[size_t(getInt(name))];
}

std::string Params::rangeText(const ParamDesc& d) const {
  if (d.isEnum()) return "one of: " + joinNames(d.choices);
  if (d.isBool()) return "true or false";
  // Shortest round-trip text (formatNumber): a value just beyond a limit
  // never prints equal to it, as %g's six digits would.
  std::ostringstream o;
  o << "[" << formatNumber(d.min) << ", " << formatNumber(d.max) << "]";
  if (!d.unit.empty()) o << " " << d.unit;
  if (d.integer) o << " (integer)";
  return o.str();
}

void Params::set(std::string_view name, double value) {
  for (size_t i = 0; decl_ && i < decl_->size(); ++i) {
    const ParamDesc& d = (*decl_)[i];
    if (d.name != name) continue;
    if (!std::isfinite(value))
      throw ParamError("parameter '" + d.name + "': value must be a finite number");
    if ((d.isEnum() || d.isBool()) &&
        (value != std::floor(value) || value < d.min || value > d.max))
      throw ParamError("parameter '" + d.name + "' must be " + rangeText(d));
    if (d.integer && value != std::floor(value))
      throw ParamError("parameter '" + d.name + "' must be a whole number in " + rangeText(d));
    if (value < d.min || value > d.max) {
      std::ostringstream o;
      o << "parameter '" << d.name << "' = " << formatNumber(value) << " is out of range: allowed "
        << rangeText(d);
      throw ParamError(o.str());
    }
    values_[i] = value;
    ++version_;
    return;
  }
  throw ParamError("unknown parameter '" + std::string(name) + "'; known parameters: " +
                   knownKeys());
}

double Params::parseValue(const ParamDesc& d, std::string_view text) {
  if (d.isEnum()) {
    for (size_t i = 0; i < d.choices.size(); ++i)
      if (d.choices[i] == text) return double(i);
    throw ParamError("parameter '" + d.name + "': '" + std::string(text) +
                     "' is not a choice; choices: " + joinNames(d.choices));
  }
  if (d.isBool()) {
    if (text == "true" || text == "1") return 1;
    if (text == "false" || text == "0") return 0;
    throw ParamError("parameter '" + d.name + "': '" + std::string(text) +
                     "' is not a bool; use true or false");
  }
  double v = 0;
  const std::errc e = readDouble(text, v);
  // A number too large or too small in magnitude for a double is not "not a number": say which.
  if (e == std::errc::result_out_of_range)
    throw ParamError("parameter '" + d.name + "': '" + std::string(text) +
                     "' is not a finite number a double can hold (its magnitude must be about 1e-308 .. 1e308, "
                     "or 0)");
  if (e != std::errc())
    throw ParamError("parameter '" + d.name + "': '" + std::string(text) + "' is not a finite number");
  return v;
}

void Params::setAssignment(std::string_view a) {
  const auto eq = a.find('=');
  if (eq == std::string_view::npos || eq == 0)
    throw ParamError("--set expects key=value, got '" + std::string(a) + "'");
  const std::string_view key = a.substr(0, eq), text = a.substr(eq + 1);
  const ParamDesc* d = find(key);
  if (!d)
    throw ParamError("unknown parameter '" + std::string(key) + "'; known parameters: " +
                     knownKeys());
  set(key, parseValue(*d, text));
}

}  // namespace eddy
