// Editing the solids of a running SPH simulation (issue 12, the app's
// "Solids" panel and body drops): editSphSolids on the host, and
// SphSim::withSolids on the device (PoCL): an edit that changes nothing
// continues bit-identically, a new obstacle removes exactly the fluid inside
// it, a dropped body joins the running ones, which keep their state.
#include "eddy_shared.h"
#include "solid_edit.hpp"
#include "sph.hpp"
#include "test_util.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

using namespace eddy;

namespace {

using test::boxSdf;
using test::boxSpec;

// A decoded state of n random particles in a 1 m cube with per-particle
// solver arrays that name their particle (value = 1000 + id).
SphState randomState(size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(0.f, 1.f);
  SphState st;
  st.setup.tank = {1, 1, 1};
  st.setup.spacing = 0.02;
  std::vector<cl_uint> ids(n);
  for (size_t i = 0; i < n; ++i) ids[i] = cl_uint(i);
  std::shuffle(ids.begin(), ids.end(), rng);
  for (size_t i = 0; i < n; ++i) {
    const cl_float4 p{{u(rng), u(rng), u(rng), 0.f}};
    st.pos.push_back(p);
    st.vel.push_back({{float(ids[i]), 0.f, 0.f, 0.f}});
    st.ids.push_back(ids[i]);
    st.kdiv.push_back(1000.f + float(ids[i]));
    st.kden.push_back(2000.f + float(ids[i]));
    st.setup.particles.push_back({p.s[0], p.s[1], p.s[2], double(ids[i]), 0, 0});
  }
  return st;
}

BodySpec floatingBox(double x, double y, double z, double side, double density) {
  BodySpec b;
  b.shape = boxSpec(x, y, z, side, side, side);
  b.density = density;
  return b;
}

}  // namespace

TEST(SphSolidEdit, HostRemovesExactlyTheFluidInNewSolidsAndRenumbers) {
  const unsigned seed = test::freshSeed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const size_t n = 3001;  // prime-ish, not a multiple of anything
  SphState st = randomState(n, seed);
  const ShapeSpec oldBox = boxSpec(0.2, 0.2, 0.2, 0.2, 0.2, 0.2);
  st.setup.solids.push_back({oldBox, -1});
  const BodySpec oldBody = floatingBox(0.8, 0.8, 0.8, 0.1, 500);
  st.setup.solids.push_back({oldBody.shape, 0});
  st.setup.bodies.push_back(oldBody);
  const SphState before = st;

  const ShapeSpec newBox = boxSpec(0.6, 0.3, 0.5, 0.3, 0.2, 0.4);
  const BodySpec drop = floatingBox(0.3, 0.7, 0.4, 0.15, 2000);
  const double clearance = 0.01;
  const size_t removed = editSphSolids(st, {oldBox, newBox}, {drop}, clearance, 0);

  // The expected survivors: outside newBox and the dropped body by the
  // clearance (the old box and the old body remove nothing).
  std::vector<size_t> expect;
  for (size_t i = 0; i < n; ++i) {
    const double p[3] = {before.pos[i].s[0], before.pos[i].s[1], before.pos[i].s[2]};
    if (boxSdf(newBox, p) >= clearance && boxSdf(drop.shape, p) >= clearance) expect.push_back(i);
  }
  ASSERT_GT(expect.size(), 0u);
  ASSERT_LT(expect.size(), n);
  EXPECT_EQ(removed, n - expect.size());
  ASSERT_EQ(st.pos.size(), expect.size());
  ASSERT_EQ(st.vel.size(), expect.size());
  ASSERT_EQ(st.ids.size(), expect.size());
  ASSERT_EQ(st.kdiv.size(), expect.size());
  ASSERT_EQ(st.kden.size(), expect.size());
  ASSERT_EQ(st.setup.particles.size(), expect.size());
  EXPECT_TRUE(st.rho.empty());  // none saved: none made up
  for (size_t k = 0; k < expect.size(); ++k) {
    const size_t i = expect[k];
    for (int a = 0; a < 4; ++a) EXPECT_EQ(st.pos[k].s[a], before.pos[i].s[a]);
    // Each array still holds its own particle's values (named by the old id).
    const float oldId = before.vel[i].s[0];
    EXPECT_EQ(st.vel[k].s[0], oldId);
    EXPECT_EQ(st.kdiv[k], 1000.f + oldId);
    EXPECT_EQ(st.kden[k], 2000.f + oldId);
    EXPECT_EQ(st.setup.particles[k].vx, double(oldId));
  }
  // Ids: a permutation of 0 .. n'-1 in the old ids' order.
  std::vector<char> seen(expect.size(), 0);
  for (cl_uint id : st.ids) {
    ASSERT_LT(id, expect.size());
    EXPECT_FALSE(seen[id]);
    seen[id] = 1;
  }
  for (size_t a = 0; a < expect.size(); ++a)
    for (size_t b = a + 1; b < std::min(expect.size(), a + 20); ++b)
      EXPECT_EQ(st.ids[a] < st.ids[b], before.ids[expect[a]] < before.ids[expect[b]]);
  // Solids: the obstacles, the old body, the dropped body; bodies appended.
  ASSERT_EQ(st.setup.solids.size(), 4u);
  EXPECT_EQ(st.setup.solids[0].body, -1);
  EXPECT_EQ(st.setup.solids[1].body, -1);
  EXPECT_EQ(st.setup.solids[1].spec.pose.position, newBox.pose.position);
  EXPECT_EQ(st.setup.solids[2].body, 0);
  EXPECT_EQ(st.setup.solids[3].body, 1);
  ASSERT_EQ(st.setup.bodies.size(), 2u);
  EXPECT_TRUE(st.setup.bodies[0] == oldBody);
  EXPECT_TRUE(st.setup.bodies[1] == drop);
}

TEST(SphSolidEdit, HostDeletingAndErrorsLeaveTheStateAlone) {
  SphState st = randomState(101, test::freshSeed());
  st.setup.solids.push_back({boxSpec(0.5, 0.5, 0.5, 0.2, 0.2, 0.2), -1});
  // Deleting the only obstacle: no particle goes, no solid is left.
  SphState del = st;
  EXPECT_EQ(editSphSolids(del, {}, {}, 0.01, 0), 0u);
  EXPECT_TRUE(del.setup.solids.empty());
  EXPECT_EQ(del.pos.size(), 101u);
  // A solid that swallows the whole tank: refused, the state unchanged.
  SphState all = st;
  EXPECT_THROW(editSphSolids(all, {boxSpec(0.5, 0.5, 0.5, 3, 3, 3)}, {}, 0.01, 0), Error);
  EXPECT_EQ(all.pos.size(), 101u);
  EXPECT_EQ(all.setup.solids.size(), 1u);
  // A mesh that does not exist: the error names the file, nothing changed.
  ShapeSpec mesh;
  mesh.kind = ShapeKind::Mesh;
  mesh.file = "/nonexistent/part.stl";
  SphState bad = st;
  try {
    editSphSolids(bad, {mesh}, {}, 0.01, 0);
    ADD_FAILURE() << "no error for a missing mesh";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("part.stl"), std::string::npos) << e.what();
  }
  EXPECT_EQ(bad.setup.solids.size(), 1u);
}

namespace {

// A small dam break (dx = 1 cm, 4 particles deep) with one floating body.
Params smallParams(const char* solver) {
  Params p(sphParamDecl());
  p.set("spacing", 0.01);
  p.set("depth", 0.06);
  p.set("capacity_factor", 1.5);
  p.setAssignment(std::string("solver=") + solver);
  return p;
}

SphSetup smallScene(const Params& p) {
  SphSetup s = makeSphScene("dam_break", p, {boxSpec(0.3, 0.03, 0.03, 0.04, 0.06, 0.06)});
  addSphBodies(s, {floatingBox(0.2, 0.05, 0.03, 0.03, 700)}, true, 0);
  return s;
}

}  // namespace

class SphSolidEditDevice : public ::testing::TestWithParam<const char*> {};

TEST_P(SphSolidEditDevice, UnchangedSolidsContinueBitIdentically) {
  const Params p = smallParams(GetParam());
  SphSim a(test::context(), p, smallScene(p));
  for (int k = 0; k < 15; ++k) a.step();
  auto b = a.withSolids(a.obstacles(), {});
  auto& sb = dynamic_cast<SphSim&>(*b);
  EXPECT_EQ(sb.size(), a.size());
  EXPECT_EQ(sb.steps(), a.steps());
  EXPECT_EQ(sb.bodyCount(), 1u);
  EXPECT_EQ(sb.solidPointCount(), a.solidPointCount());
  for (int k = 0; k < 15; ++k) {
    a.step();
    sb.step();
  }
  const auto pa = a.readPositions(), pb = sb.readPositions();
  ASSERT_EQ(pa.size(), pb.size());
  size_t differ = 0;
  for (size_t i = 0; i < pa.size(); ++i)
    for (int k = 0; k < 3; ++k) differ += pa[i].s[k] != pb[i].s[k];
  EXPECT_EQ(differ, 0u);
  EXPECT_EQ(a.bodies()->kernels().readRaw().size(), sb.bodies()->kernels().readRaw().size());
  const auto ra = a.bodies()->kernels().readRaw(), rb = sb.bodies()->kernels().readRaw();
  for (size_t i = 0; i < ra.size(); ++i)
    for (int k = 0; k < 4; ++k) EXPECT_EQ(ra[i].s[k], rb[i].s[k]) << "record float4 " << i;
  EXPECT_EQ(a.syncTime(), sb.syncTime());
}

TEST_P(SphSolidEditDevice, NewObstacleAndDroppedBodyJoinTheRun) {
  const Params p = smallParams(GetParam());
  SphSim a(test::context(), p, smallScene(p));
  for (int k = 0; k < 10; ++k) a.step();
  const auto before = a.readPositions();
  const auto bodyBefore = a.bodies()->kernels().readRaw();
  // A box in the water column (x < 0.057), and a ball dropped over the tank.
  const ShapeSpec wall = boxSpec(0.03, 0.04, 0.03, 0.02, 0.04, 0.03);
  BodySpec ball;
  ball.shape.kind = ShapeKind::Sphere;
  ball.shape.size = {0.03, 0.03, 0.03};
  ball.shape.pose.position = {0.3, 0.15, 0.03};
  ball.density = 400;
  std::vector<ShapeSpec> obstacles = a.obstacles();
  ASSERT_EQ(obstacles.size(), 1u);
  obstacles.push_back(wall);
  auto b = a.withSolids(obstacles, {ball});
  auto& sb = dynamic_cast<SphSim&>(*b);
  const double clear = 0.5 * 0.01;
  // (the wall is 2 spacings thin along x: too thin for the whole boundary
  // inset, so the fluid is kept that much farther along x: dropInsideSolids)
  const double inset = sphBoundaryInset(p, 0.01);
  ShapeSpec widened = wall;
  widened.size[0] += 2 * (inset - boundaryInsetOf(inset, 0.5 * wall.size[0]));
  size_t inside = 0;
  for (const auto& q : before) {
    const double x[3] = {q.s[0], q.s[1], q.s[2]};
    inside += boxSdf(widened, x) < clear;
  }
  EXPECT_GT(inside, 0u);
  EXPECT_EQ(sb.size(), a.size() - inside);
  EXPECT_EQ(sb.obstacles().size(), 2u);
  EXPECT_EQ(sb.bodyCount(), 2u);
  EXPECT_GT(sb.solidPointCount(), a.solidPointCount());
  // The running body's record is the one it had; the ball's is at rest at its place.
  const auto raw = sb.bodies()->kernels().readRaw();
  ASSERT_EQ(raw.size(), 2u * EDDY_BODY_STRIDE);
  for (size_t i = 0; i < EDDY_BODY_STRIDE; ++i)
    for (int k = 0; k < 4; ++k) EXPECT_EQ(raw[i].s[k], bodyBefore[i].s[k]);
  const auto states = sb.bodies()->read();
  EXPECT_NEAR(states[1].position[1], 0.15, 1e-6);
  EXPECT_EQ(states[1].velocity[1], 0.0);
  // It runs on: no particle inside the new box, the ball falls.
  for (int k = 0; k < 40; ++k) sb.step();
  for (const auto& q : sb.readPositions()) {
    const double x[3] = {q.s[0], q.s[1], q.s[2]};
    EXPECT_GE(boxSdf(wall, x), 0.0);
  }
  EXPECT_LT(sb.bodies()->read()[1].position[1], 0.15);
  EXPECT_EQ(sb.readCounters().escaped, 0u);
}

INSTANTIATE_TEST_SUITE_P(Solvers, SphSolidEditDevice, ::testing::Values("wcsph", "dfsph"));
