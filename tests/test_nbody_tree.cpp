// The N-body tree (kernels/nbody_tree.cl, sim/nbody_tree.cpp) against CPU
// references: Morton keys, the sort permutation, the radix tree's structure,
// node moments as direct double sums, and the force error against direct
// double summation on a Plummer sphere, the galaxies scene and degenerate
// inputs.
#include "eddy_shared.h"
#include "nbody.hpp"
#include "nbody_tree.hpp"
#include "reference/nbody_reference.hpp"
#include "reference/nbody_tree_reference.hpp"
#include "snapshot.hpp"
#include "test_util.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <limits>
#include <numeric>
#include <random>

using namespace eddy;

namespace {

std::vector<cl_float4> toFloat4(const std::vector<Body>& b) {
  std::vector<cl_float4> p(b.size());
  for (size_t i = 0; i < b.size(); ++i) p[i] = makeFloat4(b[i].x, b[i].y, b[i].z, b[i].m);
  return p;
}

std::vector<cl_float4> randomCube(size_t n, unsigned seed, double side = 1.0) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(-0.5 * side, 0.5 * side), m(0.5, 1.5);
  std::vector<cl_float4> p(n);
  for (auto& v : p) v = makeFloat4(u(rng), u(rng), u(rng), m(rng) / double(n));
  return p;
}

// Device buffers for one evaluation: positions in, accelerations out.
struct TreeRun {
  NBodyTree tree;
  cl::Buffer pos, vel, acc;
  Profiler prof;
  TreeRun(const std::vector<cl_float4>& p, unsigned stackCap = 0, const std::string& options = "")
      : tree(test::context(), p.size(), stackCap, options) {
    auto& ctx = test::context();
    const size_t bytes = p.size() * sizeof(cl_float4);
    pos = ctx.createBuffer(CL_MEM_READ_WRITE, bytes, "test positions");
    vel = ctx.createBuffer(CL_MEM_READ_WRITE, bytes, "test velocities");
    acc = ctx.createBuffer(CL_MEM_READ_WRITE, bytes, "test accelerations");
    std::vector<cl_float4> zero(p.size(), makeFloat4(0, 0, 0, 0));
    ctx.queue().enqueueWriteBuffer(pos, CL_TRUE, 0, bytes, p.data());
    ctx.queue().enqueueWriteBuffer(vel, CL_TRUE, 0, bytes, zero.data());
  }
  std::vector<cl_float4> forces(float G, float eps, float theta) {
    tree.computeAccelerations(pos, G, eps * eps, theta, vel, acc, 0.0f, prof);
    std::vector<cl_float4> a(tree.size());
    test::context().queue().enqueueReadBuffer(acc, CL_TRUE, 0, a.size() * sizeof(cl_float4),
                                              a.data());
    return a;
  }
};

// Checks keys, sort and structure of the tree of p after a build.
void checkTree(const std::vector<cl_float4>& p, const std::string& what) {
  SCOPED_TRACE(what + ", n = " + std::to_string(p.size()));
  TreeRun r(p);
  r.tree.build(r.pos, 0.5f, r.prof);
  const auto h = r.tree.read();
  const size_t n = p.size();

  // Box: exact min/max; scale = 2^21 / largest side (0 for a point).
  float mn[3], mx[3];
  for (int k = 0; k < 3; ++k) {
    mn[k] = mx[k] = p[0].s[k];
    for (const auto& v : p) mn[k] = std::min(mn[k], v.s[k]), mx[k] = std::max(mx[k], v.s[k]);
    EXPECT_EQ(h.boxMin.s[k], mn[k]);
    EXPECT_EQ(h.boxMax.s[k], mx[k]);
  }
  const float side = std::max({mx[0] - mn[0], mx[1] - mn[1], mx[2] - mn[2]});
  EXPECT_EQ(h.boxMax.s[3], side);
  const float scale = h.boxMin.s[3];
  if (side > 0) {
    EXPECT_NEAR(scale, double(1 << 21) / side, 1e-5 * double(1 << 21) / side);
  } else {
    EXPECT_EQ(scale, 0.0f);
  }

  // Keys against the CPU quantisation with the device's scale.
  size_t badKeys = 0;
  for (size_t i = 0; i < n; ++i) badKeys += h.keys[i] != test::mortonKey(p[i], h.boxMin, scale);
  EXPECT_EQ(badKeys, 0u);

  // Sort: a stable permutation giving non-decreasing keys.
  std::vector<int> seen(n, 0);
  for (size_t i = 0; i < n; ++i) {
    ASSERT_LT(h.perm[i], n);
    ++seen[h.perm[i]];
    EXPECT_EQ(h.sortedKeys[i], h.keys[h.perm[i]]);
    EXPECT_EQ(h.spos[i].s[0], p[h.perm[i]].s[0]);
    if (i) {
      ASSERT_LE(h.sortedKeys[i - 1], h.sortedKeys[i]);
      if (h.sortedKeys[i - 1] == h.sortedKeys[i]) {
        EXPECT_LT(h.perm[i - 1], h.perm[i]);
      }
    }
  }
  for (size_t i = 0; i < n; ++i) ASSERT_EQ(seen[i], 1) << "body " << i;

  // Structure: from the root every body is reached in exactly one leaf; each
  // node covers a contiguous range split between its children; parent links
  // agree; bounds contain (and are) the extremes of the node's bodies.
  const size_t nodes = 2 * n - 1;
  EXPECT_EQ(h.parent[0], EDDY_TREE_NONE);
  std::vector<int> leafHits(n, 0);
  std::vector<std::pair<uint32_t, uint32_t>> cover(nodes);
  size_t maxDepth = 0, visited = 0;
  std::function<void(uint32_t, size_t)> visit = [&](uint32_t node, size_t depth) {
    ASSERT_LT(node, nodes);
    ++visited;
    maxDepth = std::max(maxDepth, depth);
    if (node >= n - 1) {
      const uint32_t j = node - uint32_t(n - 1);
      ++leafHits[j];
      cover[node] = {j, j};
    } else {
      const auto ch = h.children[node];
      for (int c = 0; c < 2; ++c) {
        ASSERT_EQ(h.parent[ch.s[c]], node) << "child " << ch.s[c] << " of node " << node;
        visit(uint32_t(ch.s[c]), depth + 1);
      }
      cover[node] = {cover[ch.s[0]].first, cover[ch.s[1]].second};
      EXPECT_EQ(cover[ch.s[0]].second + 1, cover[ch.s[1]].first) << "node " << node;
      EXPECT_EQ(h.range[node].s[0], cover[node].first) << "node " << node;
      EXPECT_EQ(h.range[node].s[1], cover[node].second) << "node " << node;
    }
    for (int k = 0; k < 3; ++k) {
      float lo = h.spos[cover[node].first].s[k], hi = lo;
      for (uint32_t j = cover[node].first; j <= cover[node].second; ++j)
        lo = std::min(lo, h.spos[j].s[k]), hi = std::max(hi, h.spos[j].s[k]);
      EXPECT_EQ(h.bmin[node].s[k], lo) << "node " << node;
      EXPECT_EQ(h.bmax[node].s[k], hi) << "node " << node;
    }
  };
  visit(0, 0);
  EXPECT_EQ(visited, nodes);
  for (size_t j = 0; j < n; ++j) ASSERT_EQ(leafHits[j], 1) << "body " << j;
  EXPECT_LE(maxDepth, 64u + 32u);

  // Groups: the largest nodes with at most EDDY_TREE_NCRIT bodies; every
  // body in exactly one group.
  auto count = [&](uint32_t node) { return cover[node].second - cover[node].first + 1; };
  std::vector<int> groupHits(n, 0);
  ASSERT_GE(h.groups.size(), 1u);
  for (const uint32_t g : h.groups) {
    ASSERT_LT(g, nodes);
    EXPECT_LE(count(g), uint32_t(EDDY_TREE_NCRIT)) << "group node " << g;
    if (h.parent[g] != EDDY_TREE_NONE) {
      EXPECT_GT(count(h.parent[g]), uint32_t(EDDY_TREE_NCRIT)) << "group node " << g;
    }
    for (uint32_t j = cover[g].first; j <= cover[g].second; ++j) ++groupHits[j];
  }
  for (size_t j = 0; j < n; ++j) ASSERT_EQ(groupHits[j], 1) << "body " << j;
  EXPECT_EQ(r.tree.groupCount(), h.groups.size());
}

double sumSquares(const std::array<double, 6>& q) {
  double s = 0;
  for (double v : q) s += v * v;
  return std::sqrt(s);
}

}  // namespace

TEST(NBodyTree, KeysSortAndStructureMatchTheCpu) {
  const unsigned seed = test::freshSeed();
  for (size_t n : {size_t(1), size_t(2), size_t(3), size_t(97), size_t(1000), size_t(4099)})
    checkTree(randomCube(n, seed + unsigned(n)), "random cube");
  checkTree(toFloat4(makeNBodyScene("plummer", 3001, seed)), "plummer");
  // All bodies at one point: one key, the tree splits by index.
  checkTree(std::vector<cl_float4>(257, makeFloat4(0.3, -2, 7, 0.01)), "one point");
  // Duplicated points and a flat disk (z = 0).
  auto dup = randomCube(50, seed);
  for (int k = 0; k < 5; ++k) dup.insert(dup.end(), dup.begin(), dup.begin() + 50);
  checkTree(dup, "duplicates");
  auto disk = randomCube(1009, seed + 5);
  for (auto& v : disk) v.s[2] = 0;
  checkTree(disk, "flat disk");
}

TEST(NBodyTree, CoordinatesSpanningTwelveDecadesKeepExactKeysAndTree) {
  // |x| log-uniform in 1e-6 .. 1e6: most bodies share a cell of the 2^21 grid;
  // the keys still match the CPU and the tree stays well formed.
  std::mt19937 rng(test::freshSeed());
  std::uniform_real_distribution<double> e(-6, 6), s(-1, 1);
  std::vector<cl_float4> p(2000);
  for (auto& v : p) {
    double c[3];
    for (double& x : c) x = std::copysign(std::pow(10.0, e(rng)), s(rng));
    v = makeFloat4(c[0], c[1], c[2], 1.0 / 2000);
  }
  checkTree(p, "1e-6 .. 1e6");
}

TEST(NBodyTree, MomentsMatchDirectDoubleSums) {
  const unsigned seed = test::freshSeed();
  for (const auto& p : {toFloat4(makeNBodyScene("plummer", 2003, seed)), randomCube(777, seed)}) {
    const float theta = 0.6f;
    TreeRun r(p);
    r.tree.build(r.pos, theta, r.prof);
    const auto h = r.tree.read();
    const size_t n = p.size();
    double worstM = 0, worstC = 0, worstQ = 0, worstR = 0;
    for (size_t node = 0; node + 1 < n; ++node) {
      const auto [first, last] = std::pair{h.range[node].s[0], h.range[node].s[1]};
      const auto ref = test::moments(h.spos, first, last);
      double size = 0;
      for (int k = 0; k < 3; ++k) size = std::max(size, double(h.bmax[node].s[k] - h.bmin[node].s[k]));
      worstM = std::max(worstM, std::fabs(h.com[node].s[3] - ref.m) / ref.m);
      for (int k = 0; k < 3; ++k)
        // Relative to the node's size or, for a small node far from the
        // origin, to |centre| (float sums of m x carry eps |x| absolutely).
        worstC = std::max(worstC, std::fabs(h.com[node].s[k] - ref.c[k]) /
                                      std::max({size, std::fabs(ref.c[k]), 1e-30}));
      const double got[6] = {h.q0[node].s[0], h.q0[node].s[1], h.q0[node].s[2],
                             h.q0[node].s[3], h.q1[node].s[0], h.q1[node].s[1]};
      const double qscale = ref.m * size * size;
      for (int k = 0; k < 6; ++k)
        worstQ = std::max(worstQ, std::fabs(got[k] - ref.q[k]) / std::max(qscale, 1e-30));
      // traceless by construction
      EXPECT_NEAR(got[0] + got[1] + got[2], 0.0, 1e-4 * std::max(qscale, sumSquares(ref.q)));
      // opening radius: b_max / theta from the bounds and the centre of mass
      double b2 = 0;
      for (int k = 0; k < 3; ++k) {
        const double b = std::max(ref.c[k] - h.bmin[node].s[k], h.bmax[node].s[k] - ref.c[k]);
        b2 += b * b;
      }
      worstR = std::max(worstR, std::fabs(h.q1[node].s[2] * theta * theta - b2) / std::max(b2, 1e-30));
      EXPECT_EQ(h.q1[node].s[3], 1.0f);
    }
    for (size_t j = 0; j < n; ++j) {
      const size_t leaf = n - 1 + j;
      EXPECT_EQ(h.com[leaf].s[3], h.spos[j].s[3]);
      EXPECT_EQ(h.q1[leaf].s[3], 0.0f);
    }
    std::printf("moments, n = %zu: worst relative mass %.2e, com/size %.2e, Q/(m size^2) %.2e, "
                "r_crit^2 %.2e\n",
                n, worstM, worstC, worstQ, worstR);
    EXPECT_LT(worstM, 1e-5);
    EXPECT_LT(worstC, 1e-5);
    EXPECT_LT(worstQ, 1e-4);
    EXPECT_LT(worstR, 1e-3);
  }
}

namespace {

struct Scene {
  std::string name;
  std::vector<cl_float4> pos;
  double eps;
};

// Errors of the tree forces at each theta against direct double summation.
std::vector<test::ErrorStats> accuracyTable(const Scene& s, const std::vector<float>& thetas,
                                            bool byMean = false, const std::string& options = "") {
  const auto ref = referenceAccelerations(s.pos, 1.0, s.eps);
  TreeRun r(s.pos, 0, options);
  std::vector<test::ErrorStats> out;
  for (float theta : thetas) {
    const auto st = test::forceErrors(r.forces(1.0f, float(s.eps), theta), ref, byMean);
    std::printf("%-10s N=%6zu theta=%.2f: median %.2e  p99 %.2e  max %.2e%s %s\n",
                s.name.c_str(), s.pos.size(), theta, st.median, st.p99, st.max,
                byMean ? " (of mean |a|)" : "", options.c_str());
    out.push_back(st);
  }
  EXPECT_EQ(r.tree.fallbacks(), 0u) << "the walk's stack overflowed";
  return out;
}

}  // namespace

TEST(NBodyTree, ForceErrorFallsWithThetaAndMeetsTheBoundsAtTheDefault) {
  const unsigned seed = test::freshSeed();
  const std::vector<float> thetas = {0.3f, 0.5f, 0.7f, 0.9f};
  const float def = float(nbodyParamDecl().back().def);
  ASSERT_EQ(nbodyParamDecl().back().name, "theta");
  for (const Scene& s : {Scene{"plummer", toFloat4(makeNBodyScene("plummer", 10000, seed)), 0.01},
                         Scene{"galaxies", toFloat4(makeNBodyScene("galaxies", 10000, seed)), 0.01}}) {
    const auto t = accuracyTable(s, thetas);
    for (size_t k = 1; k < t.size(); ++k) {
      EXPECT_GT(t[k].median, t[k - 1].median) << s.name << ": median not monotone in theta";
      EXPECT_GT(t[k].p99, t[k - 1].p99) << s.name << ": p99 not monotone in theta";
    }
    const auto d = accuracyTable(s, {def});
    EXPECT_LE(d[0].median, 1e-3) << s.name << " at the default theta " << def;
    EXPECT_LE(d[0].p99, 1e-2) << s.name << " at the default theta " << def;
  }
}

TEST(NBodyTree, DegenerateInputsAgreeWithDirectSummation) {
  const unsigned seed = test::freshSeed();
  std::mt19937 rng(seed);
  std::vector<Scene> scenes;
  for (size_t n : {size_t(1), size_t(2), size_t(3), size_t(5), size_t(63), size_t(64),
                   size_t(65), size_t(127), size_t(1021)})
    scenes.push_back({"cube", randomCube(n, seed + unsigned(n)), 0.01});
  scenes.push_back({"one point", std::vector<cl_float4>(300, makeFloat4(1, 2, 3, 0.01)), 0.01});
  {  // two clusters 1e4 of their sizes apart
    auto a = randomCube(400, seed + 1), b = randomCube(313, seed + 2);
    for (auto& v : b) v.s[0] += 1e4f;
    a.insert(a.end(), b.begin(), b.end());
    scenes.push_back({"far pair", a, 1e-3});
  }
  {  // a flat disk
    auto d = randomCube(1500, seed + 3);
    for (auto& v : d) v.s[2] = 0;
    scenes.push_back({"flat disk", d, 0.01});
  }
  {  // coordinates spanning 1e-6 .. 1e6
    std::uniform_real_distribution<double> e(-6, 6), s(-1, 1);
    std::vector<cl_float4> p(1200);
    for (auto& v : p) {
      double c[3];
      for (double& x : c) x = std::copysign(std::pow(10.0, e(rng)), s(rng));
      v = makeFloat4(c[0], c[1], c[2], 1.0 / 1200);
    }
    scenes.push_back({"1e-6..1e6", p, 1e-6});
  }
  for (const auto& s : scenes) {
    SCOPED_TRACE(s.name + ", n = " + std::to_string(s.pos.size()));
    // Errors relative to the mean |a|: a flat sheet or a tiny sample has
    // bodies whose net pull nearly cancels, where |da| / |a| says nothing.
    // (A flat sheet's higher multipoles are larger than a 3-D cloud's: its
    // errors at theta 0.5 are about twice the Plummer sphere's.)
    // p99 is the bound; the single worst body of a random draw is heavy-tailed
    // (0.107 once for the flat disk), so the max only guards against blunders.
    const auto t = accuracyTable(s, {0.5f}, true);
    EXPECT_LE(t[0].p99, 2e-2);
    EXPECT_LE(t[0].max, 2e-1);
    if (s.pos.size() <= 3) {
      EXPECT_LE(t[0].max, 1e-5);  // every node opened: exact sums
    }
  }
}

TEST(NBodyTree, FullStackFallsBackToExactSumsAndRerunsAreBitIdentical) {
  const auto p = toFloat4(makeNBodyScene("plummer", 3000, test::freshSeed()));
  const auto ref = referenceAccelerations(p, 1.0, 0.01);
  TreeRun normal(p), tiny(p, 70);
  const auto a = normal.forces(1.0f, 0.01f, 0.5f);
  const auto b = tiny.forces(1.0f, 0.01f, 0.5f);
  const auto again = normal.forces(1.0f, 0.01f, 0.5f);
  EXPECT_EQ(normal.tree.fallbacks(), 0u);
  EXPECT_GT(tiny.tree.fallbacks(), 0u);
  const auto ea = test::forceErrors(a, ref), eb = test::forceErrors(b, ref);
  std::printf("stack %u: median %.2e p99 %.2e; stack 70 (%llu fallbacks): median %.2e p99 %.2e\n",
              normal.tree.stackCap(), ea.median, ea.p99,
              (unsigned long long)tiny.tree.fallbacks(), eb.median, eb.p99);
  EXPECT_LE(eb.p99, ea.p99 * 1.01);  // summing opened nodes exactly can only help
  for (size_t i = 0; i < p.size(); ++i)
    for (int k = 0; k < 3; ++k) ASSERT_EQ(a[i].s[k], again[i].s[k]) << "body " << i;
  // One profiler row per phase.
  normal.prof.collect(true);
  std::vector<std::string> rows;
  for (const auto& s : normal.prof.stats()) rows.push_back(s.name);
  for (const char* phase : {"bounds", "keys", "sort_split", "sort_gather", "build", "moments",
                            "groups", "walk"})
    EXPECT_NE(std::find(rows.begin(), rows.end(), phase), rows.end()) << phase;
  // The 32-bit passes: one launch (radix_sort_local) or three per pass.
  const bool local = std::find(rows.begin(), rows.end(), "sort_local") != rows.end();
  const bool passes = std::find(rows.begin(), rows.end(), "sort_scatter") != rows.end();
  EXPECT_TRUE(local != passes);
}

TEST(NBodyTree, RejectsThetaOutsideItsRange) {
  TreeRun r(randomCube(10, 1));
  EXPECT_THROW(r.forces(1.0f, 0.01f, 0.0f), Error);
  EXPECT_THROW(r.forces(1.0f, 0.01f, 1.5f), Error);
  EXPECT_THROW(r.forces(1.0f, 0.01f, std::nanf("")), Error);
}

TEST(NBodyTree, OtherWalkLayoutsMeetTheSameBounds) {
  // The walk's compile-time knobs (work-group size, bodies per group and so
  // per item, bucket size) change the order of summation and the lists:
  // two bodies per item with 4-body buckets, and 16-item groups with
  // one-body buckets. At theta 0.01 every node is opened, so the sums are
  // exact on awkward sizes (the body lists and the bucket paths alone); at
  // theta 0.5 a Plummer sphere stays within the accuracy bounds (smaller
  // groups accept more nodes: p99 up to 0.95e-2 on the H200 with 16-body
  // groups, so 2e-2 as for the degenerate inputs).
  const unsigned seed = test::freshSeed();
  for (const std::string options : {"-DTREE_W=32 -DTREE_NCRIT=64 -DTREE_NLEAF=4",
                                    "-DTREE_W=16 -DTREE_NCRIT=16 -DTREE_NLEAF=1"}) {
    for (const size_t n : {size_t(97), size_t(1021)}) {
      SCOPED_TRACE(options + ", cube, n = " + std::to_string(n));
      const auto t = accuracyTable(Scene{"cube", randomCube(n, seed + unsigned(n)), 0.01}, {0.01f},
                                   true, options);
      EXPECT_LE(t[0].max, 1e-5);
    }
    SCOPED_TRACE(options + ", plummer");
    const auto t = accuracyTable(
        Scene{"plummer", toFloat4(makeNBodyScene("plummer", 3001, seed)), 0.01}, {0.5f}, false,
        options);
    EXPECT_LE(t[0].median, 1e-3);
    EXPECT_LE(t[0].p99, 2e-2);
  }
}

TEST(NBodyTree, PotentialMatchesDirectDoubleSums) {
  // The potential build of the walk (diagnostics at large N) against the
  // double sum: per body |dphi| / |phi|, and the total W = 1/2 sum m phi.
  const unsigned seed = test::freshSeed();
  for (const Scene& s : {Scene{"plummer", toFloat4(makeNBodyScene("plummer", 10000, seed)), 0.01},
                         Scene{"galaxies", toFloat4(makeNBodyScene("galaxies", 10000, seed)), 0.01},
                         Scene{"cube", randomCube(1, seed), 0.01},
                         Scene{"cube", randomCube(3, seed), 0.01},
                         Scene{"cube", randomCube(131, seed), 0.01}}) {
    SCOPED_TRACE(s.name + ", n = " + std::to_string(s.pos.size()));
    const float eps2 = float(s.eps) * float(s.eps);
    const auto ref = referencePotentials(s.pos, double(eps2));
    TreeRun r(s.pos);
    for (float theta : {0.3f, 0.5f}) {
      const cl::Buffer& b = r.tree.potential(r.pos, eps2, theta, r.prof);
      std::vector<float> phi(s.pos.size());
      test::context().queue().enqueueReadBuffer(b, CL_TRUE, 0, phi.size() * sizeof(float),
                                                phi.data());
      std::vector<double> e(phi.size());
      double W = 0, Wref = 0;
      for (size_t i = 0; i < phi.size(); ++i) {
        e[i] = ref[i] != 0 ? std::fabs(phi[i] - ref[i]) / std::fabs(ref[i]) : std::fabs(phi[i]);
        W += 0.5 * s.pos[i].s[3] * phi[i];
        Wref += 0.5 * s.pos[i].s[3] * ref[i];
      }
      std::sort(e.begin(), e.end());
      const double median = e[e.size() / 2], p99 = e[size_t(0.99 * double(e.size() - 1))];
      const double dW = Wref != 0 ? std::fabs(W - Wref) / std::fabs(Wref) : std::fabs(W);
      std::printf("potential %-8s N=%6zu theta=%.1f: median %.2e p99 %.2e max %.2e, |dW/W| %.2e\n",
                  s.name.c_str(), s.pos.size(), theta, median, p99, e.back(), dW);
      EXPECT_LE(median, 1e-3);
      EXPECT_LE(p99, 1e-2);
      EXPECT_LE(dW, 1e-3);
      if (s.pos.size() <= 3) {
        EXPECT_LE(e.back(), 1e-5);  // every node opened: exact sums
      }
    }
  }
}

// ---- NBodySim with method = tree ---------------------------------------------

namespace {
NBodyKernelConfig treeConfig() {
  NBodyKernelConfig cfg;
  cfg.method = NBodyMethod::Tree;
  return cfg;
}
}  // namespace

TEST(NBodyTreeSim, MethodChoiceAndProfilerRows) {
  auto& ctx = test::context();
  NBodyKernelConfig cfg;
  EXPECT_EQ(cfg.resolve(ctx.info(), 1 << 20), NBodyMethod::Direct);  // the C++ default
  cfg.method = NBodyMethod::Auto;
  const size_t cross = NBodyKernelConfig::treeCrossover(ctx.info());
  EXPECT_EQ(cfg.resolve(ctx.info(), cross - 1), NBodyMethod::Direct);
  EXPECT_EQ(cfg.resolve(ctx.info(), cross), NBodyMethod::Tree);
  EXPECT_STREQ(methodName(NBodyMethod::Auto), "auto");

  Params params(nbodyParamDecl());
  NBodySim sim(ctx, params, makeNBodyScene("plummer", 500, 1), treeConfig());
  EXPECT_EQ(sim.method(), NBodyMethod::Tree);
  sim.step();
  sim.profiler().collect(true);
  std::vector<std::string> rows;
  for (const auto& s : sim.profiler().stats()) rows.push_back(s.name);
  for (const char* phase : {"drift", "keys", "sort_local", "build", "moments", "groups", "walk"})
    EXPECT_NE(std::find(rows.begin(), rows.end(), phase), rows.end()) << phase;
  EXPECT_EQ(std::find(rows.begin(), rows.end(), "gravity"), rows.end());
}

TEST(NBodyTreeSim, AccelerationsMatchTheDirectMethodInTheInputOrder) {
  // The tree reorders bodies internally; the simulation's arrays stay in the
  // input order, so the stored accelerations line up with the direct ones.
  auto& ctx = test::context();
  Params params(nbodyParamDecl());
  params.set("theta", 0.3);
  const auto bodies = makeNBodyScene("galaxies", 3000, test::freshSeed());
  NBodySim direct(ctx, params, bodies), tree(ctx, params, bodies, treeConfig());
  const auto a = direct.readAccelerations(), b = tree.readAccelerations();
  std::vector<std::array<double, 3>> ref(a.size());
  for (size_t i = 0; i < a.size(); ++i) ref[i] = {a[i].s[0], a[i].s[1], a[i].s[2]};
  const auto st = test::forceErrors(b, ref);
  std::printf("tree (theta 0.3) vs direct in NBodySim: median %.2e p99 %.2e max %.2e\n", st.median,
              st.p99, st.max);
  EXPECT_LT(st.median, 1e-3);
  EXPECT_LT(st.p99, 1e-2);
  // A live theta change recomputes the stored accelerations.
  params.set("theta", 0.9);
  tree.params() = params;
  tree.step();
  EXPECT_EQ(tree.readPositions().size(), bodies.size());
}

namespace {
// A test size from the environment (the GPU runs recorded in
// docs/PERFORMANCE.md use larger ones than CI), else the default.
double envOr(const char* name, double def) {
  const char* v = std::getenv(name);
  return v && *v ? std::strtod(v, nullptr) : def;
}
}  // namespace

TEST(NBodyTreeSim, PlummerStaysInVirialEquilibriumAndConservesEnergy) {
  // The CI check: 10^4 bodies, two crossing times, |dE/E| <= 1e-3 and
  // 2K/|W| within 0.05 of 1. EDDY_TEST_PLUMMER_N and EDDY_TEST_PLUMMER_CROSSINGS
  // scale it up (the H200 run: 10^5 bodies, 10 crossing times). The energies
  // use the direct double potential (exact), not the tree's.
  const size_t n = size_t(envOr("EDDY_TEST_PLUMMER_N", 10000));
  const double crossings = envOr("EDDY_TEST_PLUMMER_CROSSINGS", 2);
  Params params(nbodyParamDecl());
  params.set("softening", 0.03);
  params.set("dt", 0.01);
  auto cfg = treeConfig();
  cfg.treePotentialMin = std::numeric_limits<size_t>::max();
  NBodySim sim(test::context(), params, makeNBodyScene("plummer", n, test::freshSeed()), cfg);
  const auto d0 = sim.diagnostics();
  const double tCross = 2.0 * std::sqrt(2.0);  // Henon units
  const int steps = int(std::ceil(crossings * tCross / 0.01));
  const int every = std::max(1, steps / 6);
  double maxAbs = 0;
  for (int s = 1; s <= steps; ++s) {
    sim.step();
    if (s % every == 0 || s == steps) {
      const auto d = sim.diagnostics();
      maxAbs = std::max(maxAbs, std::fabs((d.total - d0.total) / d0.total));
    }
  }
  const auto d1 = sim.diagnostics();
  std::printf("tree Plummer N=%zu, theta %.2f, %d steps (%.1f crossing times): Q0 = %.4f, "
              "Q = %.4f, max |dE/E| = %.3e, nodes summed body by body: %llu\n",
              n, params.get("theta"), steps, crossings, d0.virialRatio, d1.virialRatio, maxAbs,
              (unsigned long long)sim.tree()->fallbacks());
  EXPECT_LT(maxAbs, 1e-3);
  EXPECT_NEAR(d1.virialRatio, 1.0, 0.05);
}

TEST(NBodyTreeSim, DiagnosticsTakeTheTreePotentialFromTheThreshold) {
  // From treePotentialMin bodies on, the tree method's energies come from the
  // tree walk; they agree with the direct double sum to the tree's error.
  auto& ctx = test::context();
  Params params(nbodyParamDecl());
  const auto bodies = makeNBodyScene("plummer", 3001, test::freshSeed());
  auto viaTree = treeConfig(), viaDirect = treeConfig();
  viaTree.treePotentialMin = 1;
  viaDirect.treePotentialMin = std::numeric_limits<size_t>::max();
  NBodySim a(ctx, params, bodies, viaTree), b(ctx, params, bodies, viaDirect);
  const auto da = a.diagnostics(), db = b.diagnostics();
  std::printf("W tree %.8f, direct %.8f: relative %.2e\n", da.potential, db.potential,
              std::fabs(da.potential - db.potential) / std::fabs(db.potential));
  EXPECT_NEAR(da.potential, db.potential, 1e-3 * std::fabs(db.potential));
  EXPECT_NE(da.potential, db.potential);  // not the same code
  EXPECT_EQ(da.kinetic, db.kinetic);
  a.profiler().collect(true);
  bool row = false;
  for (const auto& st : a.profiler().stats()) row |= st.name == "tree_potential";
  EXPECT_TRUE(row);
  // The diagnostics' tree build leaves the next step's forces alone.
  a.step();
  b.step();
  const auto pa = a.readPositions(), pb = b.readPositions();
  EXPECT_EQ(std::memcmp(pa.data(), pb.data(), pa.size() * sizeof(cl_float4)), 0);
}

namespace {
// Radius about the centre of mass of bodies [first, last) enclosing each
// fraction of their mass.
std::vector<double> lagrangianRadii(const std::vector<cl_float4>& p, size_t first, size_t last,
                                    const std::vector<double>& fractions) {
  double m = 0, c[3] = {0, 0, 0};
  for (size_t i = first; i < last; ++i) {
    m += p[i].s[3];
    for (int k = 0; k < 3; ++k) c[k] += double(p[i].s[3]) * p[i].s[k];
  }
  for (double& x : c) x /= m;
  std::vector<std::pair<double, double>> rm;
  for (size_t i = first; i < last; ++i) {
    double r2 = 0;
    for (int k = 0; k < 3; ++k) r2 += (p[i].s[k] - c[k]) * (p[i].s[k] - c[k]);
    rm.push_back({std::sqrt(r2), p[i].s[3]});
  }
  std::sort(rm.begin(), rm.end());
  std::vector<double> out;
  for (double f : fractions) {
    double acc = 0;
    size_t j = 0;
    while (j + 1 < rm.size() && acc + rm[j].second < f * m) acc += rm[j++].second;
    out.push_back(rm[j].first);
  }
  return out;
}

// t_cr = G M^(5/2) / (2|E|)^(3/2) of bodies [first, last) alone (their own
// kinetic energy about their centre of mass and their own potential).
double crossingTime(const std::vector<Body>& b, size_t first, size_t last, double eps) {
  double m = 0, v[3] = {0, 0, 0};
  for (size_t i = first; i < last; ++i) {
    m += b[i].m;
    v[0] += b[i].m * b[i].vx, v[1] += b[i].m * b[i].vy, v[2] += b[i].m * b[i].vz;
  }
  for (double& x : v) x /= m;
  double K = 0, W = 0;
  for (size_t i = first; i < last; ++i) {
    const double dv[3] = {b[i].vx - v[0], b[i].vy - v[1], b[i].vz - v[2]};
    K += 0.5 * b[i].m * (dv[0] * dv[0] + dv[1] * dv[1] + dv[2] * dv[2]);
    for (size_t j = i + 1; j < last; ++j) {
      const double dx = b[j].x - b[i].x, dy = b[j].y - b[i].y, dz = b[j].z - b[i].z;
      W -= b[i].m * b[j].m / std::sqrt(dx * dx + dy * dy + dz * dz + eps * eps);
    }
  }
  return std::pow(m, 2.5) / std::pow(2 * std::fabs(K + W), 1.5);
}
}  // namespace

TEST(NBodyTreeSim, GalaxiesLagrangianRadiiAgreeWithTheDirectMethod) {
  // Issue 13: the galaxies scene run with `direct` and with `tree` for two
  // crossing times; the 10/50/90 % Lagrangian radii of each galaxy agree
  // within 2 %. Orbits are chaotic, so the radii (mass statistics) are
  // compared, not bodies. The 16 384 bodies take minutes of direct
  // summation on 2 PoCL cores, so CI runs 8192 (4096 per galaxy);
  // EDDY_TEST_GALAXIES_N sets the size (the H200 run in docs/PERFORMANCE.md
  // uses 16 384).
  // What is asserted: each radius averaged over the second crossing time
  // (every 8 steps), and the 50 and 90 % radii at the end, within 2 %. The
  // 10 % radius at the end (from 410 bodies) is printed, not asserted: two
  // runs that have decorrelated are two samples of the core, and it differed
  // by 0.74-2.93 % in 11 runs with a correct tree (CI failed once at 2.93 %
  // against a limit of 2.83 %), while the averages differed by 0.06-0.25 %
  // and the end's 50/90 % radii by at most 0.70 % (6 seeds). The averages
  // still see a wrong tree (seed 11, tree run altered, 2026-12-01): theta
  // 1.0 gave 1.08 % (0.11 % at the default 0.5), softening x1.5 4.67 %,
  // G x1.02 1.73 % and G x1.05 6.78 %.
  auto& ctx = test::context();
  const size_t n = size_t(envOr("EDDY_TEST_GALAXIES_N", 8192));
  const double dt = 0.005, eps = 0.01;
  Params params(nbodyParamDecl());
  params.set("dt", dt);
  params.set("softening", eps);
  const auto bodies = makeNBodyScene("galaxies", n, test::freshSeed());
  const size_t n1 = n / 2 + n % 2;  // makeNBodyScene: galaxy 1 first
  const double tCross = std::max(crossingTime(bodies, 0, n1, eps), crossingTime(bodies, n1, n, eps));
  const int steps = int(std::ceil(2 * tCross / dt));
  NBodySim direct(ctx, params, bodies), tree(ctx, params, bodies, treeConfig());
  const std::vector<double> fractions = {0.1, 0.5, 0.9};
  const std::pair<size_t, size_t> galaxies[2] = {{0, n1}, {n1, n}};
  // Radii summed over the second crossing time, sampled every `every` steps
  // (index: galaxy * 3 + fraction), and the radii at the end.
  const int every = 8;
  std::vector<double> sumD(6, 0), sumT(6, 0), endD, endT;
  int samples = 0;
  for (int s = 1; s <= steps; ++s) {
    direct.step();
    tree.step();
    if (2 * s < steps || (steps - s) % every) continue;
    const auto pd = direct.readPositions(), pt = tree.readPositions();
    endD.clear(), endT.clear();
    for (const auto& [first, last] : galaxies) {
      for (double r : lagrangianRadii(pd, first, last, fractions)) endD.push_back(r);
      for (double r : lagrangianRadii(pt, first, last, fractions)) endT.push_back(r);
    }
    for (size_t k = 0; k < 6; ++k) sumD[k] += endD[k], sumT[k] += endT[k];
    ++samples;
  }
  ASSERT_GT(samples, 1);
  const double limit = 0.02;
  double worst = 0, worstEnd = 0;
  for (size_t g = 0; g < 2; ++g) {
    const auto r0 = lagrangianRadii(toFloat4(bodies), galaxies[g].first, galaxies[g].second, fractions);
    for (size_t k = 0; k < fractions.size(); ++k) {
      const size_t i = g * 3 + k;
      const double rd = sumD[i] / samples, rt = sumT[i] / samples;
      const double rel = std::fabs(rt - rd) / rd, relEnd = std::fabs(endT[i] - endD[i]) / endD[i];
      worst = std::max(worst, rel);
      worstEnd = std::max(worstEnd, relEnd);
      std::printf("galaxy %zu N=%zu, %d steps (t_cr %.3f): r%.0f%% start %.4f; over the second "
                  "crossing time (%d samples) direct %.4f, tree %.4f (%.2f%%); at the end direct "
                  "%.4f, tree %.4f (%.2f%%)\n",
                  g + 1, n, steps, tCross, 100 * fractions[k], r0[k], samples, rd, rt, 100 * rel,
                  endD[i], endT[i], 100 * relEnd);
      EXPECT_LE(rel, limit) << "galaxy " << g + 1 << ", averaged, " << fractions[k];
      if (fractions[k] >= 0.5) {
        EXPECT_LE(relEnd, limit) << "galaxy " << g + 1 << ", end, " << fractions[k];
      }
    }
  }
  std::printf("galaxies: worst Lagrangian radius difference %.2f%% averaged, %.2f%% at the end\n",
              100 * worst, 100 * worstEnd);
}

TEST(NBodyTreeSim, RestartFromTheSavedStateIsBitIdentical) {
  auto& ctx = test::context();
  Params params(nbodyParamDecl());
  params.set("dt", 0.003);
  params.set("softening", 0.02);
  const auto bodies = makeNBodyScene("plummer", 777, test::freshSeed());
  const int K = 23;
  NBodySim straight(ctx, params, bodies, treeConfig()), half(ctx, params, bodies, treeConfig());
  for (int k = 0; k < 2 * K; ++k) straight.step();
  for (int k = 0; k < K; ++k) half.step();
  SnapshotWriter w;
  w.addString("eddy/sim", "nbody");
  half.saveState(w);
  const auto snap = Snapshot::parse(w.bytes(), "tree.snap");
  NBodySim loaded(ctx, params, decodeNBodyState(snap, bodies.size()), treeConfig());
  for (int k = 0; k < K; ++k) loaded.step();
  const auto pa = straight.readPositions(), pb = loaded.readPositions();
  const auto va = straight.readVelocities(), vb = loaded.readVelocities();
  const auto aa = straight.readAccelerations(), ab = loaded.readAccelerations();
  const size_t bytes = bodies.size() * sizeof(cl_float4);
  EXPECT_EQ(std::memcmp(pa.data(), pb.data(), bytes), 0);
  EXPECT_EQ(std::memcmp(va.data(), vb.data(), bytes), 0);
  EXPECT_EQ(std::memcmp(aa.data(), ab.data(), bytes), 0);
  EXPECT_NE(pa[0].s[0], float(bodies[0].x));
}
