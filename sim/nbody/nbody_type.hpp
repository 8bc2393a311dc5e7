// nbody_type.hpp: registers the N-body simulation type (sim/core/registry.hpp).
#pragma once

namespace eddy {
void registerNBodyType();
}  // namespace eddy
