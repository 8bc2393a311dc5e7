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

int listParams(const std::string& sim, std::ostream& out) {
  const auto& sims = simulationNames();
  if (std::find(sims.begin(), sims.end(), sim) == sims.end())
    throw UsageError("--sim '" + sim + "': unknown simulation; known: " + joinNames(sims));
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
  addSimOption(o, *sim);
  return [sim](std::ostream& out, std::ostream&) { return listParams(*sim, out); };
}

}  // namespace eddy::cli
