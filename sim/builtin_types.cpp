// builtin_types.cpp: THE list of the simulation types built into eddy_core.
// A new simulation type adds its registration call here (and nowhere else
// outside its own folder). See sim/core/registry.hpp for why this is an
// explicit list rather than static self-registration.
#include "registry.hpp"

#include "nbody_type.hpp"
#include "sph_type.hpp"

namespace eddy {

void registerBuiltinSimulationTypes() {
  registerNBodyType();  // first: the default simulation (--sim, config "sim")
  registerSphType();
}

}  // namespace eddy
