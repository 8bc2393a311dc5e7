// Colour maps that stay visible (issue 14): the low end of every map is bright
// enough for the dark background and for additive glow.
#include "colormap.hpp"

#include <gtest/gtest.h>

#include <vector>

using namespace eddy;

TEST(Colormap, LowEndOfEveryMapStaysVisible) {
  for (size_t m = 0; m < colormapNames().size(); ++m) {
    const auto& tab = colormapTable(m);
    ASSERT_EQ(tab.size(), 256u);
    EXPECT_GE(relativeLuminance(tab.front()), kColormapMinLuminance - 0.005f) << colormapNames()[m];
    // No entry darker than the low end's floor either.
    for (size_t i = 0; i < tab.size(); ++i)
      EXPECT_GE(relativeLuminance(tab[i]), kColormapMinLuminance - 0.005f) << colormapNames()[m] << " entry " << i;
    // The map still spans a range: its high end is clearly brighter or another hue.
    const Rgb a = tab.front(), b = tab.back();
    const float d = std::abs(a[0] - b[0]) + std::abs(a[1] - b[1]) + std::abs(a[2] - b[2]);
    EXPECT_GT(d, 0.5f) << colormapNames()[m];
    // colormapAt agrees with the table at both ends.
    for (int c = 0; c < 3; ++c) {
      EXPECT_FLOAT_EQ(colormapAt(m, 0.f)[c], a[c]);
      EXPECT_FLOAT_EQ(colormapAt(m, 1.f)[c], b[c]);
    }
  }
}

TEST(Colormap, RobustRangeIgnoresTheOutlyingPercent) {
  // 1000 values clustered at 1, 5 far outliers: the 1st..99th percentiles hold the cluster.
  std::vector<float> v(1000, 1.f);
  for (size_t i = 0; i < v.size(); ++i) v[i] = 1.f + 0.001f * float(i % 10);
  for (int i = 0; i < 5; ++i) v[size_t(i) * 200] = 1e6f;
  const auto r = robustRange(v.data(), v.size(), false);
  EXPECT_LT(r[1], 2.f);
  EXPECT_GE(r[0], 0.9f);
}
