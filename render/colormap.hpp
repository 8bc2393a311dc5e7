// colormap.hpp: the colour maps particles are drawn with. One table per map,
// used both for the GL texture the shaders sample and for the panel's legend,
// so the legend always shows exactly the colours on screen. GL-free.
#pragma once

#include <array>
#include <string>
#include <vector>

namespace eddy {

using Rgb = std::array<float, 3>;

// Names of the maps, in index order: "ocean", "viridis", "inferno", "coolwarm".
const std::vector<std::string>& colormapNames();
// 256 entries of map `index` (0..1 per channel), piecewise-linear between
// stops; the dark start of a map is cut off (see kColormapMinLuminance).
const std::vector<Rgb>& colormapTable(size_t index);
// Every map's low end is at least this bright (relative luminance, 0..1), so
// the lowest values stay visible on the dark background and in additive glow.
inline constexpr float kColormapMinLuminance = 0.12f;
float relativeLuminance(const Rgb& c);  // Rec. 709 weights on the channel values

// Colour of map `index` at t in [0, 1] (clamped): same lookup as the texture.
Rgb colormapAt(size_t index, float t);

// Robust range of a scalar field: the [q, 1 - q] quantiles of (a stride sample
// of) the finite values; a degenerate range is widened around its value.
// With logScale, values <= 0 are ignored and the range is of log10 values.
std::array<float, 2> robustRange(const float* v, size_t n, bool logScale, float q = 0.01f);

}  // namespace eddy
