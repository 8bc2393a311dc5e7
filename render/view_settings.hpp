// view_settings.hpp: how the scene is drawn; edited by the panel and keys,
// read by the renderer. GL-free.
#pragma once

namespace eddy {

enum class DrawStyle { Spheres = 0, Glow = 1 };

struct ViewSettings {
  DrawStyle style = DrawStyle::Spheres;
  int colorField = 0;      // index into Simulation::colorFields(); -1 = one colour
  int colormap = 0;        // index into colormapNames()
  bool autoRange = true;   // follow the field's 1..99 % quantiles
  bool logScale = false;   // map log10 of the field
  float rangeLo = 0.f, rangeHi = 1.f;  // field values mapped to the ends of the map
  float radiusScale = 1.f;             // times the particle radius
  bool sizeByMass = false;             // sprite radius ~ mass^(1/3)
  float glow = 1.f;                    // glow intensity
  bool showBox = true;
  bool showPanel = true, showHelp = false, showLegend = true;
  bool vsync = true;
  float pushStrength = 1.f;  // velocity change per unit of cursor speed
  float pushRadius = 0.08f;  // fraction of the scene size
};

}  // namespace eddy
