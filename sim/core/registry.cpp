#include "registry.hpp"

#include "error.hpp"
#include "io.hpp"

namespace eddy {

namespace {
// The storage, without the built-in types (registerSimulationType adds to it
// while registry() is being initialised).
std::vector<SimulationType>& storage() {
  static std::vector<SimulationType> types;
  return types;
}

// The storage with the built-in types registered (once, thread-safe).
const std::vector<SimulationType>& registry() {
  static const bool init = [] {
    registerBuiltinSimulationTypes();
    return true;
  }();
  (void)init;
  return storage();
}

std::vector<std::string> names(const std::vector<SimulationType>& types) {
  std::vector<std::string> out;
  for (const auto& t : types) out.push_back(t.name);
  return out;
}
}  // namespace

void registerSimulationType(SimulationType type) {
  auto& types = storage();
  if (type.name.empty()) throw Error("a simulation type needs a name");
  for (const auto& t : types)
    if (t.name == type.name) throw Error("simulation type '" + type.name + "' is registered twice");
  types.push_back(std::move(type));
}

const std::vector<SimulationType>& simulationTypes() { return registry(); }

const SimulationType* findSimulationType(std::string_view name) {
  for (const auto& t : simulationTypes())
    if (t.name == name) return &t;
  return nullptr;
}

const SimulationType& simulationType(std::string_view name) {
  if (const auto* t = findSimulationType(name)) return *t;
  throw Error("unknown simulation '" + printable(name) + "'; known: " +
              joinNames(names(simulationTypes())));
}

const std::string& defaultSimulationName() {
  const auto& types = simulationTypes();
  if (types.empty()) throw Error("no simulation type is registered");
  return types.front().name;
}

}  // namespace eddy
