#include "factory.hpp"
#include "params.hpp"

#include <gtest/gtest.h>

using namespace eddy;

TEST(Params, DefaultsComeFromTheDeclarations) {
  for (const auto& sim : simulationNames()) {
    Params p(paramDecl(sim));
    for (const auto& d : p.declarations()) {
      EXPECT_EQ(p.get(d.name), d.def) << sim << "." << d.name;
      EXPECT_LE(d.min, d.def) << d.name;
      EXPECT_GE(d.max, d.def) << d.name;
      EXPECT_FALSE(d.label.empty()) << d.name;
      EXPECT_FALSE(d.description.empty()) << d.name;
    }
  }
}

TEST(Params, SetChecksNameRangeAndType) {
  Params p(paramDecl("nbody"));
  p.setAssignment("dt=0.002");
  EXPECT_DOUBLE_EQ(p.get("dt"), 0.002);
  try {
    p.setAssignment("dt=5");
    FAIL() << "out of range accepted";
  } catch (const ParamError& e) {
    EXPECT_NE(std::string(e.what()).find("'dt'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("[1e-06, 1]"), std::string::npos) << e.what();
  }
  EXPECT_THROW(p.setAssignment("nosuch=1"), ParamError);
  EXPECT_THROW(p.setAssignment("dt=abc"), ParamError);
  EXPECT_THROW(p.setAssignment("dt=nan"), ParamError);
  EXPECT_THROW(p.setAssignment("dt=inf"), ParamError);
  EXPECT_THROW(p.setAssignment("dt="), ParamError);
  EXPECT_THROW(p.setAssignment("=1"), ParamError);
  EXPECT_THROW(p.setAssignment("dt"), ParamError);
  EXPECT_THROW(p.setAssignment("seed=1.5"), ParamError);  // integer parameter
  EXPECT_DOUBLE_EQ(p.get("dt"), 0.002);                   // failures change nothing
}

TEST(Params, VersionCountsSuccessfulChanges) {
  Params p(paramDecl("nbody"));
  const auto v0 = p.version();
  p.set("G", 2.0);
  EXPECT_EQ(p.version(), v0 + 1);
  EXPECT_THROW(p.set("G", -1.0), ParamError);
  EXPECT_EQ(p.version(), v0 + 1);
}

TEST(Params, StrictNumberParsing) {
  double v = 0;
  EXPECT_TRUE(parseDouble("1e-3", v));
  EXPECT_DOUBLE_EQ(v, 1e-3);
  EXPECT_TRUE(parseDouble(" -2.5 ", v));
  EXPECT_DOUBLE_EQ(v, -2.5);
  EXPECT_FALSE(parseDouble("1.0x", v));
  EXPECT_FALSE(parseDouble("", v));
  EXPECT_FALSE(parseDouble("nan", v));
  EXPECT_FALSE(parseDouble("1e999", v));
  unsigned long long n = 0;
  EXPECT_TRUE(parseUnsigned("42", n));
  EXPECT_EQ(n, 42u);
  EXPECT_FALSE(parseUnsigned("-1", n));
  EXPECT_FALSE(parseUnsigned("99999999999999999999999", n));
}
