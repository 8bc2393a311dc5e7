// Scenes and the --ic CSV reader.
#include "nbody.hpp"
#include "test_util.hpp"

#include <gtest/gtest.h>

#include <cstdio>

using namespace eddy;

namespace {

std::string errorOf(const std::string& text) {
  static int k = 0;
  const std::string path = test::tempDir() + "/ic" + std::to_string(k++) + ".csv";
  test::writeFile(path, text);
  try {
    readBodiesCsv(path);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(InitialConditions, ReadsAWellFormedFile) {
  const std::string path = test::tempDir() + "/good.csv";
  test::writeFile(path, "# comment\nx,y,z,vx,vy,vz,m\n1,2,3,4,5,6,0.5\r\n-1e-3, 0,0,0,0,0,2\n");
  const auto b = readBodiesCsv(path);
  ASSERT_EQ(b.size(), 2u);
  EXPECT_EQ(b[0].z, 3.0);
  EXPECT_EQ(b[0].m, 0.5);
  EXPECT_EQ(b[1].x, -1e-3);
}

TEST(InitialConditions, MalformedFilesNameFileLineAndProblem) {
  EXPECT_NE(errorOf("").find("empty file"), std::string::npos);
  EXPECT_NE(errorOf("x,y,z\n1,2,3\n").find(":1: expected the header"), std::string::npos);
  EXPECT_NE(errorOf("x,y,z,vx,vy,vz,m\n").find("no bodies"), std::string::npos);
  EXPECT_NE(errorOf("x,y,z,vx,vy,vz,m\n1,2,3\n").find(":2: expected 7 values"), std::string::npos);
  EXPECT_NE(errorOf("x,y,z,vx,vy,vz,m\n1,2,3,4,5,6,7,8\n").find("got 8"), std::string::npos);
  EXPECT_NE(errorOf("x,y,z,vx,vy,vz,m\n1,2,abc,4,5,6,7\n").find("column 'z'"), std::string::npos);
  EXPECT_NE(errorOf("x,y,z,vx,vy,vz,m\n1,2,3,4,5,6,nan\n").find("not a finite"), std::string::npos);
  EXPECT_NE(errorOf("x,y,z,vx,vy,vz,m\n1,2,3,4,5,6,-1\n").find("mass must be positive"),
            std::string::npos);
  EXPECT_NE(errorOf("x,y,z,vx,vy,vz,m\n1,2,3,4,5,6,\n").find("column 'm'"), std::string::npos);
  // A mass that is 0 in float (the device's precision) ran massless, and a
  // subnormal one (1.5e-45) kept too few digits for its force (100 % off);
  // the smallest normal float is still a mass.
  EXPECT_NE(errorOf("x,y,z,vx,vy,vz,m\n1,2,3,4,5,6,1\n0,0,0,0,0,0,1e-50\n")
                .find(":3: mass 1e-50 is below single precision's normal range"),
            std::string::npos);
  EXPECT_NE(errorOf("x,y,z,vx,vy,vz,m\n1,2,3,4,5,6,1.5e-45\n").find("normal range"), std::string::npos);
  EXPECT_EQ(errorOf("x,y,z,vx,vy,vz,m\n1,2,3,4,5,6,1.2e-38\n"), "");
  // Each coordinate within the float range, their distance not: at step 0
  // the force was NaN ("blew up ... check the initial conditions").
  EXPECT_NE(errorOf("x,y,z,vx,vy,vz,m\n0,3e38,0,0,0,0,1\n0,-3e38,0,0,0,0,1\n")
                .find("the bodies span 6e+38 in y (from -3e+38 to 3e+38): the distances between them are beyond "
                      "the float range"),
            std::string::npos);
  EXPECT_EQ(errorOf("x,y,z,vx,vy,vz,m\n0,1.5e38,0,0,0,0,1\n0,-1.5e38,0,0,0,0,1\n"), "");
  try {
    readBodiesCsv(test::tempDir() + "/does-not-exist.csv");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("cannot open initial-conditions file: No such file or directory"),
              std::string::npos) << e.what();
  }
}

TEST(Scenes, EveryNamedSceneBuildsAnyCountReproducibly) {
  for (const auto& name : nbodySceneNames())
    for (size_t n : {1u, 2u, 7u, 1001u}) {
      const auto a = makeNBodyScene(name, n, 42), b = makeNBodyScene(name, n, 42);
      ASSERT_EQ(a.size(), n) << name;
      double M = 0;
      for (size_t i = 0; i < n; ++i) {
        EXPECT_EQ(a[i].x, b[i].x);
        EXPECT_TRUE(std::isfinite(a[i].x) && std::isfinite(a[i].vx)) << name;
        EXPECT_GT(a[i].m, 0) << name;
        M += a[i].m;
      }
      EXPECT_NEAR(M, 1.0, 1e-9) << name << " n=" << n;
    }
  EXPECT_THROW(makeNBodyScene("nope", 10, 1), Error);
  EXPECT_THROW(makeNBodyScene("plummer", 0, 1), Error);
}

TEST(Scenes, CollapseIsColdAndUniform) {
  const auto b = makeNBodyScene("collapse", 5000, 1);
  size_t inner = 0;
  for (const auto& p : b) {
    EXPECT_EQ(p.vx, 0.0);
    const double r = std::sqrt(p.x * p.x + p.y * p.y + p.z * p.z);
    EXPECT_LE(r, 1.0);
    inner += r < 0.5;
  }
  EXPECT_NEAR(double(inner) / 5000, 0.125, 0.02);  // uniform: (1/2)^3 of the mass inside r = 1/2
}

TEST(Scenes, GalaxiesAreTwoRotatingDisks) {
  const auto b = makeNBodyScene("galaxies", 4000, 1);
  // Galaxy 1 (first half) spins about +z: its angular momentum about its own centre.
  double cx = 0, cy = 0, cvx = 0, cvy = 0, m = 0;
  for (size_t i = 0; i < 2000; ++i) {
    cx += b[i].m * b[i].x; cy += b[i].m * b[i].y; cvx += b[i].m * b[i].vx; cvy += b[i].m * b[i].vy;
    m += b[i].m;
  }
  cx /= m; cy /= m; cvx /= m; cvy /= m;
  double lz = 0;
  for (size_t i = 0; i < 2000; ++i)
    lz += b[i].m * ((b[i].x - cx) * (b[i].vy - cvy) - (b[i].y - cy) * (b[i].vx - cvx));
  EXPECT_GT(lz, 0.01);
  EXPECT_LT(cx, -1.0);  // the two galaxies start apart along x
}

// The disks are in rotational balance with the galaxy's own pull: v_t^2 / R
// against the radial acceleration (direct sum in double, softening 0.01, the
// first galaxy alone) in annuli out to 1.2 (4.8 disk scale lengths). The
// spherical M(<R) / R it used before gave 0.81-0.84 from R = 0.4 on. (The
// bulge's bodies, the first quarter, do not rotate: only the disk's count.)
TEST(Scenes, GalaxyDisksStartInRotationalBalance) {
  const size_t n = 6000, n1 = n / 2;
  const auto all = makeNBodyScene("galaxies", n, 3);
  std::vector<Body> g(all.begin(), all.begin() + long(n1));
  double M = 0, c[6] = {0, 0, 0, 0, 0, 0};
  for (const auto& b : g) {
    M += b.m;
    c[0] += b.m * b.x; c[1] += b.m * b.y; c[2] += b.m * b.z;
    c[3] += b.m * b.vx; c[4] += b.m * b.vy; c[5] += b.m * b.vz;
  }
  for (auto& b : g) {
    b.x -= c[0] / M; b.y -= c[1] / M; b.z -= c[2] / M;
    b.vx -= c[3] / M; b.vy -= c[4] / M; b.vz -= c[5] / M;
  }
  const double eps2 = 0.01 * 0.01;
  const double edges[] = {0.1, 0.3, 0.6, 0.9, 1.2};
  double vt2[4] = {0, 0, 0, 0}, pull[4] = {0, 0, 0, 0};
  const size_t bulge = size_t(std::llround(0.25 * double(n1)));  // diskGalaxy's first bodies
  for (size_t i = bulge; i < g.size(); ++i) {
    const Body& b = g[i];
    const double R = std::hypot(b.x, b.y);
    if (R < edges[0] || R >= edges[4]) continue;
    int k = 0;
    while (R >= edges[k + 1]) ++k;
    double ax = 0, ay = 0;
    for (const auto& o : g) {
      const double dx = o.x - b.x, dy = o.y - b.y, dz = o.z - b.z;
      const double r2 = dx * dx + dy * dy + dz * dz + eps2;
      const double f = o.m / (r2 * std::sqrt(r2));
      ax += f * dx;
      ay += f * dy;
    }
    const double vt = (b.x * b.vy - b.y * b.vx) / R;
    vt2[k] += vt * vt / R;
    pull[k] += -(ax * b.x + ay * b.y) / R;
  }
  for (int k = 0; k < 4; ++k) {
    ASSERT_GT(pull[k], 0.0) << k;
    std::printf("annulus %.1f-%.1f: v_t^2/R over the pull %.3f\n", edges[k], edges[k + 1], vt2[k] / pull[k]);
    EXPECT_NEAR(vt2[k] / pull[k], 1.0, 0.06) << "annulus " << edges[k] << "-" << edges[k + 1];
  }
}

// Scenes are built in balance for the G given: speeds scale with sqrt(G),
// positions and masses do not (Plummer at G = 4 had 2K/|W| = 0.25 and collapsed).
TEST(Scenes, VelocitiesScaleWithTheSquareRootOfG) {
  for (const char* name : {"plummer", "galaxies"}) {
    const auto a = makeNBodyScene(name, 301, 5), b = makeNBodyScene(name, 301, 5, 4.0);
    const auto z = makeNBodyScene(name, 301, 5, 0.0);
    ASSERT_EQ(a.size(), b.size());
    for (size_t i = 0; i < a.size(); ++i) {
      EXPECT_EQ(a[i].x, b[i].x);
      EXPECT_EQ(a[i].m, b[i].m);
      EXPECT_EQ(2 * a[i].vx, b[i].vx);
      EXPECT_EQ(2 * a[i].vz, b[i].vz);
      EXPECT_EQ(z[i].vy, 0.0) << "no gravity: at rest";
    }
  }
  EXPECT_THROW(makeNBodyScene("plummer", 10, 1, -1.0), Error);
}

