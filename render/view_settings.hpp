// view_settings.hpp: how the scene is drawn; edited by the panel and keys,
// read by the renderer. GL-free.
#pragma once

namespace eddy {

enum class DrawStyle { Spheres = 0, Glow = 1, Surface = 2 };
// --style names, in DrawStyle order.
inline const char* const kDrawStyleNames[] = {"spheres", "glow", "surface"};

// What the surface style shows: the finished water or one pass on its own.
enum class SurfaceView { Final = 0, Depth = 1, Thickness = 2, Normals = 3 };
// --surface-view names, in SurfaceView order.
inline const char* const kSurfaceViewNames[] = {"final", "depth", "thickness", "normals"};

// The surface style's look (panel "Surface" controls).
struct SurfaceSettings {
  SurfaceView view = SurfaceView::Final;
  float waterColor[3] = {0.16f, 0.52f, 0.78f};  // colour that survives deep water
  float absorption = 5.f;    // Beer-Lambert coefficient per the tank's smallest side
  float smoothing = 4.f;     // filter radius in particle radii (screen space)
  int iterations = 2;        // smoothing passes (x then y each)
  float refraction = 0.03f;  // screen offset of the refracted background
  bool foam = false;         // white sprites where the speed is high (uses the speed field)
  float foamThreshold = 0.85f;  // fraction of the speed's colour range above which there is foam
};

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
  SurfaceSettings surface;             // the surface style's look
  bool showBox = true;
  bool showPanel = true, showHelp = false, showLegend = true;
  bool vsync = true;
  float pushStrength = 1.f;  // velocity change per unit of cursor speed
  float pushRadius = 0.08f;  // fraction of the scene size
};

}  // namespace eddy
