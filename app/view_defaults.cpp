#include "view_defaults.hpp"

#include "colormap.hpp"
#include "registry.hpp"

#include <algorithm>

namespace eddy {

ViewSettings defaultViewFor(const std::string& kind) {
  ViewSettings v;
  const auto& maps = colormapNames();
  auto mapIndex = [&](const char* name) {
    return int(std::find(maps.begin(), maps.end(), name) - maps.begin());
  };
  const SimulationType* type = findSimulationType(kind);
  if (type && type->appGlow) {
    v.style = DrawStyle::Glow;
    v.colormap = mapIndex("inferno");
    v.showBox = false;
    v.glow = 0.5f;
    v.radiusScale = 0.6f;
  } else {
    v.style = DrawStyle::Surface;  // fluids look like water (issue 14)
    v.colormap = mapIndex("ocean");
  }
  v.colorField = 0;
  return v;
}

}  // namespace eddy
