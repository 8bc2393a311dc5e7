// params.hpp: the declared parameter registry.
//
// Every tunable of a simulation is declared once, as a ParamDesc (name, label,
// group, unit, range, default, description). The CLI's --set, config files and
// the GUI panel are all generated from these declarations (after SPlisHSPlasH's
// GenParam), so a parameter is never described twice.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "error.hpp"

namespace eddy {

struct ParamDesc {
  std::string name;         // key for --set, config files; stable interface
  std::string label;        // human label (GUI)
  std::string group;        // GUI section
  std::string unit;         // SI unit or "" (dimensionless / model units)
  double min, max, def;     // closed range, default
  std::string description;  // tooltip / --help text
  bool integer = false;     // only whole numbers
  bool rebuild = false;     // changing it rebuilds the scene (not live)
  bool logScale = false;    // GUI hint: logarithmic slider
  // Typed kinds. The value is still held as a number: an enum's value is the
  // index of its choice (min 0, max choices - 1, integer), a bool's 0 or 1.
  // Built with enumParam() / boolParam(). Text (--set, config files) gives an
  // enum by its choice's name and a bool as true/false.
  std::vector<std::string> choices{};  // non-empty: an enum
  bool boolean = false;                // a bool (checkbox)

  bool isEnum() const { return !choices.empty(); }
  bool isBool() const { return boolean; }
  // The text of a value: the choice's name, true/false, or the number.
  std::string valueText(double value) const;
  // The kind's name in listings (eddy-cli params --json, Python's
  // eddy.parameters()): "choice", "bool", "int" or "float".
  const char* typeName() const { return isEnum() ? "choice" : isBool() ? "bool" : integer ? "int" : "float"; }
};

// An enum parameter with the given choices (default: choices[def]).
ParamDesc enumParam(std::string name, std::string label, std::string group,
                    std::vector<std::string> choices, size_t def, std::string description,
                    bool rebuild);
// A bool parameter.
ParamDesc boolParam(std::string name, std::string label, std::string group, bool def,
                    std::string description, bool rebuild);

class ParamError : public Error {
 public:
  using Error::Error;
};

// Values for one declared list. Copyable; setting checks name, type and range.
class Params {
 public:
  Params() = default;
  explicit Params(const std::vector<ParamDesc>& decl);

  const std::vector<ParamDesc>& declarations() const { return *decl_; }
  const ParamDesc* find(std::string_view name) const;

  double get(std::string_view name) const;
  long long getInt(std::string_view name) const;
  // An enum's current choice (throws ParamError if `name` is not an enum).
  const std::string& getChoice(std::string_view name) const;
  bool getBool(std::string_view name) const { return get(name) != 0; }
  // Throws ParamError naming the key and its allowed range (or the known keys).
  void set(std::string_view name, double value);
  // "key=value" as given to --set.
  void setAssignment(std::string_view assignment);
  // Parses a value as the declaration wants it: integer or real (finite), an
  // enum's choice by name, a bool as true/false (or 1/0).
  static double parseValue(const ParamDesc& d, std::string_view text);

  // Monotonic counter bumped on every successful set (GUI/sim hand-off).
  unsigned long long version() const { return version_; }
  std::string rangeText(const ParamDesc& d) const;
  std::string knownKeys() const;

 private:
  const std::vector<ParamDesc>* decl_ = nullptr;
  std::vector<double> values_;
  unsigned long long version_ = 0;
};

// Strict number parsing shared by the CLI, the CSV readers and config files.
// Returns false for anything but a complete, finite number; blanks around it
// and a leading '+' are allowed (the shape and probe specs, compact tokens,
// read their numbers more strictly: no blanks, no '+').
bool parseDouble(std::string_view text, double& out);
bool parseUnsigned(std::string_view text, unsigned long long& out);
// "a, b, c" (names in messages: known scenes, parameters, fields).
std::string joinNames(const std::vector<std::string>& names);

}  // namespace eddy
