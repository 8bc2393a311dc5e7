// view_defaults.hpp: how a simulation is drawn at first.
#pragma once

#include "view_settings.hpp"

#include <string>

namespace eddy {

// N-body as additive glow (colour by speed, inferno), fluids as shaded spheres
// (colour by speed, ocean) in their outlined domain.
ViewSettings defaultViewFor(const std::string& kind);

}  // namespace eddy
