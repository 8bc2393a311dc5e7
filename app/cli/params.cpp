// params.cpp: eddy-cli params [--sim S].
#include "cli_common.hpp"

#include "config.hpp"
#include "factory.hpp"
#include "io.hpp"
#include "nbody.hpp"
#include "nbody_multi.hpp"
#include "session.hpp"
#include "snapshot.hpp"
#include "sph.hpp"
#include "vtk.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <csignal>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <sstream>

namespace eddy::cli {

namespace {

// One object per parameter: what the text list says, as values, with the
// keys and type names of the Python module's eddy.parameters().
json paramJson(const ParamDesc& d) {
  auto value = [&](double v) -> json {
    if (d.isEnum()) return d.valueText(v);
    if (d.isBool()) return v != 0;
    if (d.integer) return std::llround(v);
    return v;
  };
  json j = {{"name", d.name},   {"label", d.label},       {"group", d.group},
            {"unit", d.unit},   {"default", value(d.def)}, {"rebuild", d.rebuild},
            {"description", d.description},
            {"type", d.typeName()}};
  if (d.isEnum()) {
    j["choices"] = d.choices;
  } else if (!d.isBool()) {
    j["min"] = value(d.min);
    j["max"] = value(d.max);
  }
  return j;
}

int listParams(const std::string& sim, bool asJson, std::ostream& out) {
  const auto& sims = simulationNames();
  if (std::find(sims.begin(), sims.end(), sim) == sims.end())
    throw UsageError("--sim '" + sim + "': unknown simulation; known: " + joinNames(sims));
  if (asJson) {
    json a = json::array();
    for (const auto& d : paramDecl(sim)) a.push_back(paramJson(d));
    out << json{{"sim", sim}, {"params", a}}.dump(2) << '\n';
    return 0;
  }
  for (const auto& d : paramDecl(sim)) {
    if (d.isEnum() || d.isBool()) {
      out << std::left << std::setw(22) << d.name << " default " << d.valueText(d.def) << ", "
          << (d.isEnum() ? "one of: " + joinNames(d.choices) : std::string("true or false"))
          << "\n    " << d.label << ": " << d.description << '\n';
      continue;
    }
    out << std::left << std::setw(22) << d.name << " default " << formatNumber(d.def) << ", range ["
        << formatNumber(d.min) << ", " << formatNumber(d.max) << "]" << (d.unit.empty() ? "" : " " + d.unit)
        << (d.integer ? " (integer)" : "") << "\n    " << d.label << ": " << d.description
        << '\n';
  }
  return 0;
}

}  // namespace

Runner addParams(Options& o) {
  auto sim = std::make_shared<std::string>(defaultSimulationName());
  auto asJson = std::make_shared<bool>(false);
  addSimOption(o, *sim);
  addJsonOption(o, *asJson);
  return [sim, asJson](std::ostream& out, std::ostream&) { return listParams(*sim, *asJson, out); };
}

}  // namespace eddy::cli
