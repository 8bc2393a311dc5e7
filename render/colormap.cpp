#include "colormap.hpp"

#include <algorithm>
#include <cmath>

namespace eddy {

namespace {

struct Stop {
  float t;
  Rgb c;
};

// Colour stops (approximations of the published maps, sampled by eye):
// "ocean" is a deep-blue -> cyan -> white ramp for water; viridis and inferno
// after van der Walt & Smith (matplotlib, 2015); coolwarm after Moreland (2009).
const std::vector<std::vector<Stop>>& stops() {
  static const std::vector<std::vector<Stop>> s = {
      {{0.00f, {0.03f, 0.09f, 0.32f}},
       {0.30f, {0.05f, 0.33f, 0.72f}},
       {0.60f, {0.18f, 0.66f, 0.93f}},
       {0.85f, {0.62f, 0.90f, 0.99f}},
       {1.00f, {1.00f, 1.00f, 1.00f}}},
      {{0.000f, {0.267f, 0.005f, 0.329f}},
       {0.125f, {0.283f, 0.141f, 0.458f}},
       {0.250f, {0.254f, 0.265f, 0.530f}},
       {0.375f, {0.207f, 0.372f, 0.553f}},
       {0.500f, {0.164f, 0.471f, 0.558f}},
       {0.625f, {0.128f, 0.567f, 0.551f}},
       {0.750f, {0.267f, 0.749f, 0.441f}},
       {0.875f, {0.565f, 0.843f, 0.262f}},
       {1.000f, {0.993f, 0.906f, 0.144f}}},
      {{0.000f, {0.001f, 0.000f, 0.014f}},
       {0.125f, {0.110f, 0.043f, 0.270f}},
       {0.250f, {0.316f, 0.071f, 0.485f}},
       {0.375f, {0.522f, 0.128f, 0.422f}},
       {0.500f, {0.735f, 0.216f, 0.330f}},
       {0.625f, {0.880f, 0.354f, 0.230f}},
       {0.750f, {0.978f, 0.557f, 0.035f}},
       {0.875f, {0.976f, 0.780f, 0.174f}},
       {1.000f, {0.988f, 0.998f, 0.645f}}},
      {{0.00f, {0.230f, 0.299f, 0.754f}},
       {0.25f, {0.552f, 0.690f, 0.996f}},
       {0.50f, {0.865f, 0.865f, 0.865f}},
       {0.75f, {0.957f, 0.604f, 0.482f}},
       {1.00f, {0.706f, 0.016f, 0.150f}}},
  };
  return s;
}

Rgb sample(const std::vector<Stop>& st, float x) {
  size_t k = 1;
  while (k + 1 < st.size() && st[k].t < x) ++k;
  const Stop& a = st[k - 1];
  const Stop& b = st[k];
  const float f = std::clamp((x - a.t) / std::max(b.t - a.t, 1e-6f), 0.f, 1.f);
  Rgb c;
  for (int i = 0; i < 3; ++i) c[i] = a.c[i] + f * (b.c[i] - a.c[i]);
  return c;
}

// The published maps start near black, which vanishes on the dark background
// and in additive glow. The table therefore starts where the map first
// reaches kMinLuminance: it spans [x0, 1] of the original map.
std::vector<Rgb> build(const std::vector<Stop>& st) {
  float x0 = 0.f;
  while (x0 < 0.5f && relativeLuminance(sample(st, x0)) < kColormapMinLuminance) x0 += 1.f / 1024.f;
  std::vector<Rgb> t(256);
  for (size_t i = 0; i < t.size(); ++i) t[i] = sample(st, x0 + (1.f - x0) * float(i) / float(t.size() - 1));
  return t;
}

}  // namespace

float relativeLuminance(const Rgb& c) { return 0.2126f * c[0] + 0.7152f * c[1] + 0.0722f * c[2]; }

const std::vector<std::string>& colormapNames() {
  static const std::vector<std::string> n = {"ocean", "viridis", "inferno", "coolwarm"};
  return n;
}

const std::vector<Rgb>& colormapTable(size_t index) {
  static const std::vector<std::vector<Rgb>> tables = [] {
    std::vector<std::vector<Rgb>> t;
    for (const auto& s : stops()) t.push_back(build(s));
    return t;
  }();
  return tables[std::min(index, tables.size() - 1)];
}

Rgb colormapAt(size_t index, float t) {
  const auto& tab = colormapTable(index);
  const float x = std::clamp(std::isfinite(t) ? t : 0.f, 0.f, 1.f) * float(tab.size() - 1);
  const size_t i = std::min(size_t(x), tab.size() - 2);
  const float f = x - float(i);
  Rgb c;
  for (int k = 0; k < 3; ++k) c[k] = tab[i][k] + f * (tab[i + 1][k] - tab[i][k]);
  return c;
}

std::array<float, 2> robustRange(const float* v, size_t n, bool logScale, float q) {
  std::vector<float> s;
  const size_t stride = std::max<size_t>(1, n / 65536);
  for (size_t i = 0; i < n; i += stride) {
    float x = v[i];
    if (logScale) {
      if (!(x > 0)) continue;
      x = std::log10(x);
    }
    if (std::isfinite(x)) s.push_back(x);
  }
  if (s.empty()) return {0.f, 1.f};
  const size_t lo = size_t(q * float(s.size() - 1)), hi = s.size() - 1 - lo;
  std::nth_element(s.begin(), s.begin() + lo, s.end());
  float a = s[lo];
  std::nth_element(s.begin(), s.begin() + hi, s.end());
  float b = s[hi];
  if (!(b - a > 1e-6f * std::max(std::fabs(a), std::fabs(b)))) {
    const float w = std::max(std::fabs(a) * 0.1f, 1e-6f);
    a -= w;
    b += w;
  }
  return {a, b};
}

}  // namespace eddy
