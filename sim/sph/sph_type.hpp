// sph_type.hpp: registers the SPH simulation type (sim/core/registry.hpp).
#pragma once

namespace eddy {
void registerSphType();
}  // namespace eddy
