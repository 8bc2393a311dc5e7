// Probes (issue 12): the probe kernel against a double-precision CPU
// reference on random particle sets, a still tank's pressure (rho g d) and
// water height, the probe CSV (header, columns, --probe-every / --probe-dt
// cadence) and the CLI's and config files' errors.
#include "config.hpp"
#include "eddy_shared.h"
#include "factory.hpp"
#include "snapshot.hpp"
#include "snapshot_edit.hpp"
#include "probe.hpp"
#include "sph.hpp"
#include "reference/sph_reference.hpp"
#include "test_util.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <limits>
#include <random>
#include <sstream>

using namespace eddy;

namespace {

// ---- CPU reference (double) of kernels/sph/sph_probes.cl ----------------------

struct RefParticle {
  double x[3];
  double rho, p;
};

// Walls within h of x (sph_walls, in double): the nearer wall of each axis,
// both across a tank thinner than h (SphWalls).
SphWalls refWalls(const double x[3], const std::array<double, 3>& tank, double h) {
  SphWalls W;
  for (int a = 0; a < 3; ++a) {
    const bool low = x[a] <= tank[a] - x[a];
    W.w0[a] = low ? 0.0 : tank[a];
    W.w1[a] = low ? tank[a] : 0.0;
    if ((low ? x[a] : tank[a] - x[a]) < h) W.mask |= 1u << a;
    if (tank[a] < h && (low ? tank[a] - x[a] : x[a]) < h) W.mask |= 8u << a;
  }
  return W;
}

// sum_j V_j W and sum_j V_j p_j W at x over the particles and their images.
std::array<double, 2> refSums(const double x[3], const std::vector<RefParticle>& ps,
                              const std::array<double, 3>& tank, double h, double mass) {
  const SphWalls W = refWalls(x, tank, h);
  const unsigned mask = W.mask;
  double den = 0, num = 0;
  for (const auto& q : ps) {
    auto dist = [&](unsigned s) {
      double r2 = 0;
      for (int a = 0; a < 3; ++a) {
        const double qa = sphMirror(q.x[a], s, a, W);
        r2 += (x[a] - qa) * (x[a] - qa);
      }
      return std::sqrt(r2);
    };
    const double r = dist(0);
    if (r >= h) continue;  // images only of real neighbours (as the kernels)
    double ws = sphKernelW(r, h);
    for (unsigned s = mask; s != 0u; s = (s - 1u) & mask)
      if (sphIsImage(s)) ws += sphKernelW(dist(s), h);
    den += mass / q.rho * ws;
    num += mass / q.rho * q.p * ws;
  }
  return {den, num};
}

// Level samples as SphProbes places them (dy = H / (S - 1) <= dx / 4).
struct Samples {
  unsigned count;
  double dy;
};
Samples levelSamples(double dx, double height) {
  const unsigned s = unsigned(std::max(2.0, std::ceil(height / (dx / 4.0)) + 1.0));
  return {s, height / double(s - 1)};
}

std::vector<RefParticle> readParticles(SphSim& sim) {
  const auto pos = sim.readPositions();
  const auto rp = sim.readDensityPressure();
  std::vector<RefParticle> out(pos.size());
  for (size_t i = 0; i < pos.size(); ++i)
    out[i] = {{pos[i].s[0], pos[i].s[1], pos[i].s[2]}, rp[i].s[0], rp[i].s[1]};
  return out;
}

// Samples once (the first sample startProbes takes) and returns that row.
ProbeRow sampleNow(SphSim& sim, const std::vector<ProbeSpec>& probes) {
  std::vector<ProbeRow> rows;
  sim.startProbes(probes, ProbeCadence{}, [&rows](const ProbeRow& r) { rows.push_back(r); });
  sim.flushProbes();
  EXPECT_EQ(rows.size(), 1u);
  return rows.empty() ? ProbeRow{} : rows.front();
}

Params wcsphParams() {
  Params p(sphParamDecl());
  p.set("speed_of_sound", 20.0);
  return p;
}

}  // namespace

// Random particles in the lower 60 % of a tank (some on walls, in corners),
// random pressure probes (some on wall faces, some in the dry upper part)
// and level probes: the device's values against the double reference.
// Pressure: within 2e-4 of the largest particle pressure; level: within
// 1e-3 dy + 1e-6 m. Probes whose reference sits within 1e-4 of a threshold
// (the dry sum, a level sample's 0.5) can legitimately round either way in
// float and are skipped (counted; at most a few).
TEST(SphProbeKernel, PressureAndLevelMatchTheDoubleReference) {
  const unsigned seed = test::freshSeed();
  SCOPED_TRACE("EDDY_TEST_SEED=" + std::to_string(seed));
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(0, 1);
  const double dx = 0.01;
  size_t skipped = 0, checked = 0;
  for (size_t n : {size_t(1), size_t(13), size_t(127), size_t(1009), size_t(2003)}) {
    SCOPED_TRACE("n = " + std::to_string(n));
    const double h = 2.2 * dx, sphere = 4.0 / 3.0 * M_PI * h * h * h;
    const double volume = std::max(double(n) * sphere / 30.0, 8 * h * h * h);
    const double side = std::cbrt(volume / 0.5 / 0.6);
    SphSetup s;
    s.spacing = dx;
    s.tank = {side, 0.8 * side, 0.625 * side};
    s.expectedSpeed = 1.0;
    for (size_t i = 0; i < n; ++i) {
      SphParticle p;
      p.x = u(rng) * s.tank[0];
      p.y = u(rng) * 0.6 * s.tank[1];
      p.z = u(rng) * s.tank[2];
      if (i % 17 == 3) p.x = 0.0;
      if (i % 29 == 7) { p.x = 0.2 * h; p.y = 0.1 * h; p.z = s.tank[2] - 0.5 * h; }
      s.particles.push_back(p);
    }
    SphSim sim(test::context(), wcsphParams(), s);
    std::vector<ProbeSpec> probes;
    for (int k = 0; k < 23; ++k) {  // a prime count of probes (work-groups)
      ProbeSpec p;
      p.name = "p" + std::to_string(k);
      p.kind = k % 3 == 2 ? ProbeSpec::Kind::Level : ProbeSpec::Kind::Pressure;
      p.x = u(rng) * s.tank[0];
      p.y = p.kind == ProbeSpec::Kind::Level ? 0.0 : u(rng) * s.tank[1];
      p.z = u(rng) * s.tank[2];
      if (k == 0) p.x = s.tank[0];         // on a wall face
      if (k == 3) { p.x = 0; p.y = 0; }    // in a corner
      if (k == 5) p.x = s.tank[0];         // a level probe on a wall
      probes.push_back(p);
    }
    const ProbeRow row = sampleNow(sim, probes);
    ASSERT_EQ(row.values.size(), probes.size());
    EXPECT_EQ(row.step, 0u);
    const auto ps = readParticles(sim);
    const double mass = sim.physics().mass, hh = sim.physics().h;
    double pmax = 1;
    for (const auto& q : ps) pmax = std::max(pmax, std::fabs(q.p));
    const Samples smp = levelSamples(dx, s.tank[1]);
    for (size_t k = 0; k < probes.size(); ++k) {
      const ProbeSpec& p = probes[k];
      SCOPED_TRACE(probeSpecText(p));
      if (p.kind == ProbeSpec::Kind::Pressure) {
        const double x[3] = {p.x, p.y, p.z};
        const auto sum = refSums(x, ps, s.tank, hh, mass);
        if (std::fabs(sum[0] - EDDY_PROBE_DRY_SUM) < 1e-4) {
          ++skipped;
          continue;
        }
        const double want = sum[0] >= EDDY_PROBE_DRY_SUM ? sum[1] / sum[0] : 0.0;
        EXPECT_NEAR(row.values[k], want, 2e-4 * pmax);
      } else {
        // The first dry sample going up from the floor; the level lies below it.
        std::vector<double> f(smp.count);
        bool ambiguous = false;
        unsigned dry = smp.count;
        for (unsigned i = 0; i < smp.count && dry == smp.count; ++i) {
          const double x[3] = {p.x, i * smp.dy, p.z};
          f[i] = refSums(x, ps, s.tank, hh, mass)[0];
          if (std::fabs(f[i] - EDDY_PROBE_LEVEL_FRACTION) < 1e-4) ambiguous = true;
          if (f[i] < EDDY_PROBE_LEVEL_FRACTION) dry = i;
        }
        if (ambiguous) {
          ++skipped;
          continue;
        }
        const int top = int(dry) - 1;
        double want = 0;
        if (top >= 0) {
          want = top * smp.dy;
          if (unsigned(top) + 1 < smp.count) {
            const double d = f[top] - f[top + 1];
            want += smp.dy * std::clamp(d > 0 ? (f[top] - 0.5) / d : 0.0, 0.0, 1.0);
          }
        }
        EXPECT_NEAR(row.values[k], want, 1e-3 * smp.dy + 1e-6);
      }
      ++checked;
    }
  }
  EXPECT_GE(checked, 100u);
  EXPECT_LE(skipped, 5u);
}

namespace {

// A still tank: water 0.1 m deep filling a 0.1 m long tank (4 layers thick
// slab), dx = 5 mm, settled for 300 steps.
struct StillTank {
  Params params;
  SphSetup setup;
  double depth = 0;
  explicit StillTank(const std::string& solver) : params(sphParamDecl()) {
    params.setAssignment("solver=" + solver);
    params.set("spacing", 0.005);
    params.set("tank_length", 0.1);
    params.set("column_width", 0.1);
    params.set("column_height", 0.1);
    params.set("tank_height", 0.15);
    params.set("depth", 0.02);
    setup = makeSphScene("dam_break", params);
    depth = 0.1;
  }
};

}  // namespace

// Pressure probes in a still tank read rho g d at depths 2 .. 10 cm (the
// floor), in the bulk and on a wall face (x = 0): within 3 % of rho g H
// (29 Pa) with WCSPH (its Tait pressure carries the lattice's small
// gradient bias and a settling wave). Level probes read the water height
// within dx / 4.
TEST(SphProbePhysics, StillTankPressureIsRhoGDAndLevelIsTheWaterHeight) {
  StillTank t("wcsph");
  SphSim sim(test::context(), t.params, t.setup);
  for (int i = 0; i < 300; ++i) sim.step();
  std::vector<ProbeSpec> probes;
  const double depths[5] = {0.02, 0.04, 0.06, 0.08, 0.1};
  for (int i = 0; i < 5; ++i) {
    probes.push_back({ProbeSpec::Kind::Pressure, "mid" + std::to_string(i), 0.05, t.depth - depths[i], 0.01});
    probes.push_back({ProbeSpec::Kind::Pressure, "wall" + std::to_string(i), 0.0, t.depth - depths[i], 0.01});
  }
  for (double x : {0.0, 0.033, 0.05, 0.1})
    probes.push_back({ProbeSpec::Kind::Level, "h" + std::to_string(int(x * 1000)), x, 0, 0.01});
  probes.push_back({ProbeSpec::Kind::Pressure, "air", 0.05, 0.14, 0.01});
  const ProbeRow row = sampleNow(sim, probes);
  ASSERT_EQ(row.values.size(), probes.size());
  const double rho = 1000, g = 9.81, tol = 0.03 * rho * g * t.depth;
  for (int i = 0; i < 5; ++i) {
    EXPECT_NEAR(row.values[2 * i], rho * g * depths[i], tol) << probes[2 * i].name;
    EXPECT_NEAR(row.values[2 * i + 1], rho * g * depths[i], tol) << probes[2 * i + 1].name;
  }
  for (size_t k = 10; k < 14; ++k) EXPECT_NEAR(row.values[k], t.depth, 0.005 / 4) << probes[k].name;
  EXPECT_EQ(row.values[14], 0.0) << "a probe in the air reads 0 (dry)";
}

// Level probes and solids (sph_probes.cl): a gauge above a submerged box
// reads the free surface above it (the box and the fluid's clearance band
// over it are passed over, not taken for air), as a gauge in the open water
// beside it does; a gauge over a pillar that pierces the surface has only
// solid below its first air sample and reads 0 (dry). Before solids were
// passed over, the gauge above the box read the water under it (about one
// spacing, 0.01 m). A 0.2 m tank of still water 0.1 m deep, both solvers.
TEST(SphProbePhysics, LevelAboveASubmergedSolidIsTheFreeSurface) {
  for (const std::string solver : {"wcsph", "dfsph"}) {
    SCOPED_TRACE(solver);
    Params p(sphParamDecl());
    p.setAssignment("solver=" + solver);
    const double dx = 0.01, depth = 4 * dx;
    test::stillTank(p, dx, 0.2, 0.1, 0.2);
    const double h = p.get("smoothing_ratio") * dx;
    const ShapeSpec box = test::boxSpec(0.06, 0.035, 0.5 * depth, 0.04, 0.05, depth + 2 * h);
    const ShapeSpec pillar = test::boxSpec(0.155, 0.075, 0.5 * depth, 0.03, 0.15, depth + 2 * h);
    SphSim sim(test::context(), p, makeSphScene("dam_break", p, {box, pillar}));
    for (int i = 0; i < 20; ++i) sim.step();
    const std::vector<ProbeSpec> probes = {{ProbeSpec::Kind::Level, "above", 0.06, 0, 0.5 * depth},
                                           {ProbeSpec::Kind::Level, "open", 0.11, 0, 0.5 * depth},
                                           {ProbeSpec::Kind::Level, "pillar", 0.155, 0, 0.5 * depth}};
    const ProbeRow row = sampleNow(sim, probes);
    ASSERT_EQ(row.values.size(), 3u);
    std::printf("%s: level above the box %.4f m, in the open %.4f m, over the pillar %.4f m\n",
                solver.c_str(), row.values[0], row.values[1], row.values[2]);
    EXPECT_NEAR(row.values[1], 0.1, dx);
    EXPECT_NEAR(row.values[0], row.values[1], 0.5 * dx);
    EXPECT_EQ(row.values[2], 0.0);
  }
}

// deliverEvery (the app's live plots): the samples reach the sink within a
// few steps of being taken, without a flush; the default waits for half the
// device ring (128 launches). Both give the same rows in the end.
TEST(SphProbeDelivery, DeliverEveryHandsSamplesOverWithinAFewSteps) {
  StillTank t("wcsph");
  const std::vector<ProbeSpec> probes = {{ProbeSpec::Kind::Pressure, "p", 0.05, 0.02, 0.01},
                                         {ProbeSpec::Kind::Level, "h", 0.05, 0, 0.01}};
  std::vector<ProbeRow> live, batched;
  SphSim a(test::context(), t.params, t.setup), b(test::context(), t.params, t.setup);
  ProbeCadence fast;
  fast.every = 1;
  fast.deliverEvery = 4;
  ProbeCadence slow = fast;
  slow.deliverEvery = 0;
  a.startProbes(probes, fast, [&live](const ProbeRow& r) { live.push_back(r); });
  b.startProbes(probes, slow, [&batched](const ProbeRow& r) { batched.push_back(r); });
  size_t most = 0;
  for (int k = 1; k <= 40; ++k) {
    a.step();
    b.step();
    a.context().queue().finish();  // the reads done: delivered at the next step's check
    b.context().queue().finish();
    if (k > 8) {
      ASSERT_FALSE(live.empty()) << "step " << k;
      EXPECT_GE(live.back().step + 9, uint64_t(k)) << "the live rows lag by at most 2 reads";
    }
    most = std::max(most, batched.size());
  }
  EXPECT_LE(most, 1u) << "the default hands rows over every 128 launches";
  a.flushProbes();
  b.flushProbes();
  ASSERT_EQ(live.size(), 41u);
  ASSERT_EQ(batched.size(), 41u);
  for (size_t i = 0; i < live.size(); ++i) {
    EXPECT_EQ(live[i].step, batched[i].step);
    EXPECT_EQ(live[i].values, batched[i].values);
  }
}

// The sampling window (sph_probes.cl): a pressure probe's row is the
// dt-weighted mean of its per-step values since the previous row, the row's
// own step included; a level probe's row is the state at its step. Two runs
// of the same still DFSPH tank (probes do not change a run): one sampled
// every step (each row the step's own value), one every K steps (K = 7, 10:
// the default, 1) or every T seconds; each row of the second against the
// mean of the first's rows in its window, weighted by their steps' dt (the
// clock's, from the rows' times). Then what the window is for: DFSPH's
// pressure pulses from step to step at the default tolerance, so a probe
// read every 10 steps without it held one phase of the pulse.
TEST(SphProbeDelivery, PressureRowsAreTheMeanOverTheSamplingWindow) {
  StillTank t("dfsph");
  const std::vector<ProbeSpec> probes = {{ProbeSpec::Kind::Pressure, "deep", 0.05, 0.02, 0.01},
                                         {ProbeSpec::Kind::Level, "h", 0.05, 0, 0.01},
                                         {ProbeSpec::Kind::Pressure, "wall", 0.0, 0.05, 0.01},
                                         {ProbeSpec::Kind::Pressure, "air", 0.05, 0.14, 0.01}};
  const int kSteps = 160;
  std::vector<ProbeRow> every;  // every step
  {
    SphSim a(test::context(), t.params, t.setup);
    ProbeCadence c;
    c.every = 1;
    a.startProbes(probes, c, [&every](const ProbeRow& r) { every.push_back(r); });
    for (int k = 0; k < kSteps; ++k) a.step();
    a.flushProbes();
  }
  ASSERT_EQ(every.size(), size_t(kSteps + 1));
  double pmax = 1;
  for (const auto& r : every) pmax = std::max(pmax, std::fabs(r.values[0]));
  std::vector<ProbeCadence> cadences(4);
  cadences[0].every = 7;
  cadences[1].every = 10;
  cadences[2].every = 1;
  cadences[3].dt = 0.0123;
  for (const ProbeCadence& c : cadences) {
    SCOPED_TRACE("every " + std::to_string(c.every) + ", dt " + std::to_string(c.dt));
    std::vector<ProbeRow> rows;
    SphSim b(test::context(), t.params, t.setup);
    b.startProbes(probes, c, [&rows](const ProbeRow& r) { rows.push_back(r); });
    for (int k = 0; k < kSteps; ++k) b.step();
    b.flushProbes();
    ASSERT_GE(rows.size(), 5u);
    EXPECT_EQ(rows[0].step, 0u);
    EXPECT_EQ(rows[0].values, every[0].values) << "the first row: the starting state";
    for (size_t m = 1; m < rows.size(); ++m) {
      const uint64_t s0 = rows[m - 1].step, s1 = rows[m].step;
      ASSERT_LT(s0, s1);
      ASSERT_LE(s1, uint64_t(kSteps));
      EXPECT_EQ(rows[m].time, every[s1].time);
      EXPECT_EQ(rows[m].values[1], every[s1].values[1]) << "level: the state at the row's step";
      if (s1 == s0 + 1) {  // a window of one step: that step's value, bit for bit
        EXPECT_EQ(rows[m].values, every[s1].values);
        continue;
      }
      for (size_t q : {size_t(0), size_t(2), size_t(3)}) {
        double num = 0, den = 0;
        for (uint64_t s = s0 + 1; s <= s1; ++s) {
          const double dt = every[s].time - every[s - 1].time;
          num += every[s].values[q] * dt;
          den += dt;
        }
        EXPECT_NEAR(rows[m].values[q], num / den, 1e-5 * pmax)
            << probes[q].name << ", row at step " << s1;
      }
      EXPECT_EQ(rows[m].values[3], 0.0) << "a probe in the air stays dry";
    }
  }
  // The pulse, and the window against it: depth 8 cm, over the last 100 steps.
  double lo = 1e30, hi = 0, mean = 0, dts = 0;
  for (int s = kSteps - 99; s <= kSteps; ++s) {
    const double v = every[s].values[0], dt = every[s].time - every[s - 1].time;
    lo = std::min(lo, v);
    hi = std::max(hi, v);
    mean += v * dt;
    dts += dt;
  }
  mean /= dts;
  const double rgd = 1000 * 9.81 * 0.08;
  std::printf("dfsph still tank, depth 8 cm: per-step pressure %.0f .. %.0f Pa, mean %.0f Pa, "
              "rho g d %.0f Pa\n",
              lo, hi, mean, rgd);
  EXPECT_NEAR(mean, rgd, 0.03 * rgd);
}

// A restart snapshot keeps the probes and their running state: a restored
// run sampling them at the saved cadence (its default) writes the rows the
// uninterrupted run wrote after the restart step, bit for bit, also when the
// restart falls inside a pressure window (step 14 of every 4) and with
// --probe-dt; no row of the restored state. At another cadence the probes
// start anew (a row of the restored state, new windows).
TEST(SphProbeRestart, RowsAfterALoadAreTheUninterruptedRunsBitForBit) {
  SceneSpec spec;
  spec.sim = "sph";
  spec.scene = "dam_break";
  const std::vector<ProbeSpec> probes = {{ProbeSpec::Kind::Pressure, "deep", 0.03, 0.01, 0.016},
                                         {ProbeSpec::Kind::Level, "L", 0.12, 0, 0.016},
                                         {ProbeSpec::Kind::Pressure, "wall", 0.0, 0.02, 0.016}};
  const int kSave = 14, kMore = 16;
  for (const std::string solver : {"dfsph", "wcsph"}) {
    std::vector<ProbeCadence> cadences(2);
    cadences[0].every = 4;
    cadences[1].dt = solver == "dfsph" ? 0.0025 : 0.0007;  // 2-7 steps a window
    for (const ProbeCadence& c : cadences) {
      SCOPED_TRACE(solver + ", every " + std::to_string(c.every) + ", dt " + std::to_string(c.dt));
      Params params(sphParamDecl());
      params.set("spacing", 0.008);
      params.set("depth", 0.032);
      params.setAssignment("solver=" + solver);
      std::vector<ProbeRow> straightRows, firstRows, restartRows;
      auto straight = makeSimulation(test::context(), spec, params);
      straight->startProbes(probes, c, [&](const ProbeRow& r) { straightRows.push_back(r); });
      for (int k = 0; k < kSave + kMore; ++k) straight->step();
      straight->flushProbes();
      const std::string path = test::tempDir() + "/probes_" + solver + ".snap";
      {
        auto half = makeSimulation(test::context(), spec, params);
        half->startProbes(probes, c, [&](const ProbeRow& r) { firstRows.push_back(r); });
        for (int k = 0; k < kSave; ++k) half->step();
        half->flushProbes();
        saveSnapshot(*half, spec, path);
      }
      auto loaded = loadSnapshot(test::context(), Snapshot::read(path));
      Simulation& sim = *loaded.sim;
      const std::vector<ProbeSpec> kept = sim.builtinProbes();
      ASSERT_EQ(kept.size(), probes.size());
      for (size_t k = 0; k < probes.size(); ++k) EXPECT_TRUE(sameProbe(kept[k], probes[k])) << k;
      ASSERT_TRUE(sim.keptProbeCadence());
      const ProbeCadence again = probeCadenceFor(sim, std::nullopt, std::nullopt);
      EXPECT_TRUE(sameProbeCadence(again, c));
      // The same probe given again is that probe; another one with its name is refused.
      EXPECT_EQ(probesToSample(sim, {probes[1]}).size(), probes.size());
      ProbeSpec moved = probes[1];
      moved.x += 0.01;
      EXPECT_THROW(probesToSample(sim, {moved}), Error);
      sim.startProbes(probesToSample(sim, {}), again,
                      [&](const ProbeRow& r) { restartRows.push_back(r); });
      EXPECT_FALSE(sim.keptProbeCadence()) << "used once";
      for (int k = 0; k < kMore; ++k) sim.step();
      sim.flushProbes();
      ASSERT_FALSE(restartRows.empty());
      EXPECT_GT(restartRows.front().step, uint64_t(kSave)) << "no row of the restored state";
      std::vector<ProbeRow> joined = firstRows;
      joined.insert(joined.end(), restartRows.begin(), restartRows.end());
      ASSERT_EQ(joined.size(), straightRows.size());
      bool windowOpen = false;  // the restart fell inside a pressure window
      for (size_t m = 0; m < joined.size(); ++m) {
        EXPECT_EQ(joined[m].step, straightRows[m].step) << "row " << m;
        EXPECT_EQ(joined[m].time, straightRows[m].time) << "row " << m;
        EXPECT_EQ(joined[m].values, straightRows[m].values) << "row " << m << " (step " << joined[m].step << ")";
        if (m > 0 && joined[m - 1].step < uint64_t(kSave) && joined[m].step > uint64_t(kSave)) windowOpen = true;
      }
      std::string steps;
      for (const auto& r : joined) steps += " " + std::to_string(r.step);
      EXPECT_TRUE(windowOpen) << "rows at steps" << steps;
      EXPECT_GT(straightRows.back().values[0], 0.0);

      // Another cadence: the probes start anew at the restored state.
      auto other = loadSnapshot(test::context(), Snapshot::read(path));
      std::vector<ProbeRow> otherRows;
      ProbeCadence five;
      five.every = 5;
      other.sim->startProbes(other.sim->builtinProbes(), five,
                             [&](const ProbeRow& r) { otherRows.push_back(r); });
      for (int k = 0; k < 5; ++k) other.sim->step();
      other.sim->flushProbes();
      ASSERT_EQ(otherRows.size(), 2u);
      EXPECT_EQ(otherRows[0].step, uint64_t(kSave));
      EXPECT_EQ(otherRows[1].step, 15u);  // the first multiple of 5 after the restart
    }
  }
}

// A snapshot's probes that are not probes are refused, naming them.
TEST(SphProbeRestart, BadProbesInASnapshotAreRefused) {
  SceneSpec spec;
  spec.sim = "sph";
  spec.scene = "dam_break";
  Params params(sphParamDecl());
  params.set("spacing", 0.01);
  params.set("depth", 0.04);
  auto sim = makeSimulation(test::context(), spec, params);
  ProbeCadence c;
  c.every = 3;
  sim->startProbes({{ProbeSpec::Kind::Pressure, "p", 0.03, 0.01, 0.02}}, c, nullptr);
  sim->step();
  const std::string path = test::tempDir() + "/probes_bad.snap";
  saveSnapshot(*sim, spec, path);
  const Snapshot good = Snapshot::read(path);
  auto edited = [&](const std::string& blob, const std::string& bytes) {
    return test::loadError(test::withBlob(good, blob, bytes));
  };
  auto has = [](const std::string& s, const std::string& what) { return s.find(what) != std::string::npos; };
  EXPECT_TRUE(has(edited("sph/probes", R"(["pressure:p:0.03,0.01"])"), "probe 0: ")) << "two coordinates";
  EXPECT_TRUE(has(edited("sph/probes", R"(["pressure:p:9,0.01,0.02"])"), "lies outside the tank"));
  EXPECT_TRUE(has(edited("sph/probes", "{"), "sph/probes is not valid JSON"));
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const cl_float2 w{{nan, 0.0f}};
  EXPECT_TRUE(has(edited("sph/probe_windows", std::string(reinterpret_cast<const char*>(&w), sizeof w)),
                  "window is not finite"));
  EXPECT_TRUE(has(edited("sph/probe_windows", std::string(16, '\0')), "sph/probe_windows"));
  // A cadence no run could have had (before: -5 and 2^63 loaded, and the
  // run wrote no probe rows, silently).
  auto u64 = [](uint64_t v) { return std::string(reinterpret_cast<const char*>(&v), sizeof v); };
  auto f64 = [](double v) { return std::string(reinterpret_cast<const char*>(&v), sizeof v); };
  for (const uint64_t every : {uint64_t(0), uint64_t(-5), uint64_t(1) << 63, (uint64_t(1) << 40) + 1})
    EXPECT_TRUE(has(edited("sph/probe_every", u64(every)), "is not a cadence")) << every;
  for (const double dt : {-1.0, 1e-300, std::numeric_limits<double>::infinity()})
    EXPECT_TRUE(has(edited("sph/probe_dt", f64(dt)), "is not a cadence")) << dt;
  EXPECT_EQ(edited("sph/probe_every", u64(7)), "");
  EXPECT_EQ(edited("sph/probe_dt", f64(0.01)), "");  // by time, its step count kept unused
}

// CSV through eddy-cli: the header, one column per probe (the scene's first,
// then the config's, then --probe's), a row at step 0 and every K steps;
// with --probe-dt a row at the first step at or after each multiple of T.
TEST(SphProbeCli, CsvHeaderColumnsAndCadence) {
  const std::string dir = test::tempDir();
  const std::string csv = dir + "/probes_every.csv";
  const std::string base =
      "run --sim sph --device cpu --quiet --set spacing=0.02 --set depth=0.08 "
      "--scene lobovsky_dam_break ";
  const std::string cfg = dir + "/probes.json";
  test::writeFile(cfg, R"({"sim": "sph", "probes": ["level:C1:0.5,0.04",
      {"type": "pressure", "name": "C2", "x": 0.1, "y": 0.05, "z": 0.04}]})");
  auto r = test::run(EDDY_CLI, base + "--config " + cfg + " --steps 12 --probe pressure:P:0.2,0.1,0.04 "
                                      "--probe-out " + csv + " --probe-every 5 --json");
  ASSERT_EQ(r.code, 0) << r.err;
  // --json: the last sample of every probe.
  EXPECT_NE(r.out.find("\"probes\": {"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\"H1\": "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\"phase\": \"probes\""), std::string::npos) << "a profiler row";
  std::istringstream in(test::slurp(csv));
  std::string line;
  std::getline(in, line);
  EXPECT_EQ(line, "step,time,S1,S2,S3,S4,H1,H2,H3,H4,C1,C2,P");
  std::vector<std::vector<double>> rows;
  while (std::getline(in, line)) {
    std::vector<double> v;
    std::stringstream ss(line);
    std::string cell;
    while (std::getline(ss, cell, ',')) v.push_back(std::stod(cell));
    EXPECT_EQ(v.size(), 13u) << line;
    rows.push_back(v);
  }
  ASSERT_EQ(rows.size(), 3u);  // steps 0, 5, 10
  EXPECT_EQ(rows[0][0], 0);
  EXPECT_EQ(rows[1][0], 5);
  EXPECT_EQ(rows[2][0], 10);
  EXPECT_EQ(rows[0][1], 0.0);
  EXPECT_GT(rows[1][1], 0.0);
  // At rest: H1 (inside the column) reads the column's height, H4 is dry;
  // the column reaches neither S1 nor P.
  EXPECT_NEAR(rows[0][6], 0.3, 0.02 / 4 + 0.003);
  EXPECT_EQ(rows[0][9], 0.0);
  EXPECT_EQ(rows[0][2], 0.0);
  EXPECT_GT(rows[0][12], 0.0);  // P lies in the column at 0.2 m depth

  // --probe-dt: rows at t = 0 and at the first step past each multiple of T.
  const std::string csv2 = dir + "/probes_dt.csv";
  r = test::run(EDDY_CLI, base + "--until 0.01 --probe-out " + csv2 + " --probe-dt 0.002");
  ASSERT_EQ(r.code, 0) << r.err;
  std::istringstream in2(test::slurp(csv2));
  std::getline(in2, line);
  EXPECT_EQ(line, "step,time,S1,S2,S3,S4,H1,H2,H3,H4");
  std::vector<double> times;
  std::vector<double> steps;
  while (std::getline(in2, line)) {
    steps.push_back(std::stod(line.substr(0, line.find(','))));
    times.push_back(std::stod(line.substr(line.find(',') + 1)));
  }
  ASSERT_GE(times.size(), 5u);
  EXPECT_EQ(times[0], 0.0);
  for (size_t k = 1; k < times.size(); ++k) {
    EXPECT_GT(steps[k], steps[k - 1]);
    EXPECT_GE(times[k], 0.002 * double(k) - 1e-7) << "sample " << k;
    EXPECT_LT(times[k], 0.002 * double(k) + 0.0015) << "sample " << k << " (a step is < 1.5 ms)";
  }
}

// eddy-cli run --load: the snapshot's probes (the scene's and --probe's)
// are written without being given again, at the saved cadence, and the CSV
// goes on where the saved run's stopped: the two files hold the
// uninterrupted run's rows. The same --probe given again is that probe;
// another one with its name is refused (exit 2).
TEST(SphProbeCli, LoadGoesOnWithTheSnapshotsProbes) {
  const std::string dir = test::tempDir();
  const std::string base =
      "run --sim sph --device cpu --quiet --set spacing=0.02 --set depth=0.08 "
      "--scene lobovsky_dam_break --probe pressure:P:0.2,0.1,0.04 --probe-every 4 ";
  auto lines = [](const std::string& path) {
    std::vector<std::string> out;
    std::istringstream in(test::slurp(path));
    for (std::string l; std::getline(in, l);) out.push_back(l);
    return out;
  };
  auto r = test::run(EDDY_CLI, base + "--steps 30 --probe-out " + dir + "/all.csv");
  ASSERT_EQ(r.code, 0) << r.err;
  r = test::run(EDDY_CLI, base + "--steps 13 --probe-out " + dir + "/a.csv --save " + dir + "/s.snap");
  ASSERT_EQ(r.code, 0) << r.err;
  const std::string load = "run --device cpu --quiet --load " + dir + "/s.snap --steps 17 ";
  r = test::run(EDDY_CLI, load + "--probe-out " + dir + "/b.csv");
  ASSERT_EQ(r.code, 0) << r.err;
  const auto all = lines(dir + "/all.csv"), a = lines(dir + "/a.csv"), b = lines(dir + "/b.csv");
  ASSERT_EQ(all.size(), 9u);  // the header, steps 0, 4, .., 28
  EXPECT_EQ(all[0], "step,time,S1,S2,S3,S4,H1,H2,H3,H4,P");
  ASSERT_FALSE(b.empty());
  EXPECT_EQ(b[0], all[0]);
  std::vector<std::string> joined = a;
  joined.insert(joined.end(), b.begin() + 1, b.end());
  EXPECT_EQ(joined, all);
  r = test::run(EDDY_CLI, load + "--probe pressure:P:0.2,0.1,0.04 --probe-out " + dir + "/c.csv");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(lines(dir + "/c.csv"), b);
  // The snapshot's P elsewhere, and the scene's S1: the name is taken by
  // the simulation's own probe (was "given twice": the user gave it once).
  r = test::run(EDDY_CLI, load + "--probe pressure:P:0.3,0.1,0.04 --probe-out " + dir + "/d.csv");
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_NE(r.err.find("probe pressure:P:0.3,0.1,0.04: the name 'P' is taken by one of the simulation's own "
                       "probes (its scene's or its snapshot's), pressure:P:0.2,0.1,0.04"),
            std::string::npos)
      << r.err;
  r = test::run(EDDY_CLI, base + "--steps 1 --probe level:S1:0.3,0.04 --probe-out " + dir + "/e.csv");
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_NE(r.err.find("the name 'S1' is taken by one of the simulation's own probes"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("given twice"), std::string::npos) << r.err;
}

// Usage errors: exit 2 with a message naming the problem.
TEST(SphProbeCli, BadProbesAreUsageErrors) {
  const std::string dir = test::tempDir();
  const std::string out = " --probe-out " + dir + "/bad.csv";
  const std::string sph = "run --sim sph --device cpu --quiet --steps 1 ";
  struct Case {
    std::string args, message;
  };
  const std::vector<Case> cases = {
      {sph + "--probe pressure:P1:0.1,0.1" + out, "takes 3 coordinates"},
      {sph + "--probe temperature:T:0.1,0.1,0.1" + out, "unknown probe kind 'temperature'"},
      {sph + "--probe level:H1:0.1,abc" + out, "'abc' is not a finite number"},
      {sph + "--probe pressure:P1:0.1,0.05,0.004 --probe level:P1:0.1,0.004" + out,
       "'P1' is given twice"},
      {sph + "--probe pressure:P1:5,0.05,0.004" + out, "outside the tank"},
      {sph + "--probe 'pressure:a,b:0.1,0.05,0.004'" + out, "contains a comma"},
      {sph + "--probe 'pressure:time:0.1,0.05,0.004'" + out, "'time' is a column"},
      {sph + "--scene dam_break" + out, "there are no probes"},
      {sph + "--probe pressure:P1:0.1,0.05,0.004", "need --probe-out"},
      {sph + "--probe-every 3", "--probe-every needs --probe-out"},
      {sph + "--probe pressure:P1:0.1,0.05,0.004 --probe-every 2 --probe-dt 0.1" + out,
       "either --probe-every or --probe-dt"},
      {"run --sim nbody --device cpu --quiet --steps 1 --n 16 --probe pressure:P:0,0,0" + out,
       "has no probes"},
  };
  for (const auto& c : cases) {
    const auto r = test::run(EDDY_CLI, c.args);
    EXPECT_EQ(r.code, 2) << c.args << "\n" << r.err;
    EXPECT_NE(r.err.find(c.message), std::string::npos) << c.args << "\n" << r.err;
  }
  // From a config file, the key is named (before: "--probe-every needs ...").
  const std::string cfg = test::tempDir() + "/probe_every.json";
  test::writeFile(cfg, R"({"sim": "sph", "scene": "dam_break", "steps": 2, "probe_every": 5,
      "params": {"spacing": 0.02, "depth": 0.06}})");
  const auto r = test::run(EDDY_CLI, "run --device cpu --config " + cfg);
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_NE(r.err.find("--config " + cfg + ": key 'probe_every' needs --probe-out FILE.csv"), std::string::npos)
      << r.err;
}

// Config files: strings and objects, and their errors naming the key.
TEST(SphProbeConfig, ProbesKeysParseAndErrorsNameTheKey) {
  const RunConfig c = parseConfig(
      R"({"sim": "sph", "probes": ["pressure:P1:0.8245,0.021,0.471",
          {"type": "level", "name": "H1", "x": 0.496, "z": 0.5}],
          "probe_out": "p.csv", "probe_dt": 0.001})",
      "t.json");
  ASSERT_EQ(c.probes.size(), 2u);
  EXPECT_EQ(c.probes[0].name, "P1");
  EXPECT_EQ(c.probes[0].kind, ProbeSpec::Kind::Pressure);
  EXPECT_DOUBLE_EQ(c.probes[0].y, 0.021);
  EXPECT_EQ(c.probes[1].kind, ProbeSpec::Kind::Level);
  EXPECT_DOUBLE_EQ(c.probes[1].x, 0.496);
  EXPECT_EQ(c.probeOut.value_or(""), "p.csv");
  EXPECT_DOUBLE_EQ(c.probeDt.value_or(0), 0.001);
  // Round trip.
  const RunConfig back = parseConfig(configToJson(c), "back.json");
  ASSERT_EQ(back.probes.size(), 2u);
  EXPECT_EQ(probeSpecText(back.probes[1]), probeSpecText(c.probes[1]));

  struct Case {
    std::string text, message;
  };
  const std::vector<Case> cases = {
      {R"({"probes": "pressure:P:0,0,0"})", "key 'probes': expected an array"},
      {R"({"probes": ["pressure:P:0,0"]})", "key 'probes[0]'"},
      {R"({"probes": [{"type": "level", "name": "H", "x": 1, "y": 2, "z": 0}]})", "probes[0].y"},
      {R"({"probes": [{"type": "pressure", "name": "P", "x": 1, "z": 0}]})", "needs \"y\""},
      {R"({"probes": [{"type": "pressure", "name": "a\nb", "x": 1, "y": 1, "z": 0}]})", "newline"},
      {R"({"probes": ["level:H:1,0", "level:H:2,0"]})", "given twice"},
      {R"({"probe_every": 5, "probe_dt": 0.1})", "not both"},
      {R"({"probe_dt": -1})", "must be from 1e-12"},
      {R"({"probe_dt": 1e-300})", "1e-300 is out of range"},  // as --probe-dt: no sample would fit a float clock
  };
  for (const auto& k : cases) {
    try {
      (void)parseConfig(k.text, "t.json");
      ADD_FAILURE() << "accepted: " << k.text;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(k.message), std::string::npos) << e.what();
    }
  }
}

// probeSpecFromJson, which config files and the Python module's probes=[...]
// share: the caller words the message from the key at fault ("" for the
// probe itself) and the problem.
TEST(SphProbeConfig, ProbeSpecFromJsonLeavesTheWordingToTheCaller) {
  const KeyMessage word = [](const std::string& key, const std::string& why) { return "<" + key + "> " + why; };
  const ProbeSpec a = probeSpecFromJson(nlohmann::json::parse(R"({"type": "level", "name": "H", "x": 1, "z": 2})"), word);
  EXPECT_EQ(a.kind, ProbeSpec::Kind::Level);
  EXPECT_EQ(a.name, "H");
  EXPECT_EQ(a.x, 1.0);
  EXPECT_EQ(a.z, 2.0);
  const ProbeSpec b = probeSpecFromJson(nlohmann::json("pressure:P:1,2,3"), word);
  EXPECT_EQ(b.kind, ProbeSpec::Kind::Pressure);
  EXPECT_EQ(b.y, 2.0);
  struct Case {
    std::string json, message;
  };
  const std::vector<Case> cases = {
      {R"(5)", "<> expected a string or an object, got an integer"},
      {R"("pressure:P:1,2")", "<> probe P: pressure takes 3 coordinates"},
      {R"({"type": "level", "name": "H", "x": 1})", "<> the probe has no \"z\""},
      {R"({"type": "level", "name": "H", "x": 1, "y": 0, "z": 2})", "<y> a level probe has no \"y\""},
      {R"({"type": "level", "name": "H", "x": 1, "z": 2, "w": 0})", "<w> unknown key"},
      {R"({"type": "pressure", "name": "", "x": 1, "y": 0, "z": 2})", "<name> must not be empty"},
      {R"({"type": "pressure", "name": "P", "x": 1, "y": true, "z": 2})", "<y> expected a number, got a boolean"},
  };
  for (const auto& k : cases) {
    try {
      (void)probeSpecFromJson(nlohmann::json::parse(k.json), word);
      ADD_FAILURE() << "accepted: " << k.json;
    } catch (const Error& e) {
      EXPECT_EQ(std::string(e.what()).rfind(k.message, 0), 0u) << e.what();
    }
  }
}

// A spec without its colons says what it lacks: a bare kind has no name and
// no coordinates (before: "'pressure' has no kind").
TEST(SphProbeCli, AnIncompleteSpecSaysWhatIsMissing) {
  struct Case {
    std::string spec, message;
  };
  for (const Case& k : std::vector<Case>{{"pressure", "'pressure' has no name and no coordinates"},
                                         {"level", "'level' has no name and no coordinates"},
                                         {"P1", "'P1' is not KIND:NAME:COORDINATES"},
                                         {"pressure:P1", "'pressure:P1' has no coordinates"}}) {
    try {
      (void)parseProbeSpec(k.spec);
      ADD_FAILURE() << "accepted: " << k.spec;
    } catch (const Error& e) {
      EXPECT_EQ(std::string(e.what()).rfind(k.message, 0), 0u) << e.what();
      EXPECT_NE(std::string(e.what()).find("expected pressure:NAME:x,y,z or level:NAME:x,z"), std::string::npos);
    }
  }
}

// Probe coordinates are read as strictly as every other number (shape specs,
// --set): no hexadecimal, no blanks, no '+'; a name with a non-ASCII
// character is refused with the name whole, never one byte of it.
TEST(SphProbeCli, CoordinatesAreStrictNumbersAndNamesPrintWhole) {
  for (const std::string bad : {"pressure:P:0x0.05p0,0.01,0.005", "pressure:P:0x10,0.01,0.005",
                                "pressure:P: 0.05,0.01,0.005", "pressure:P:0.05,+0.01,0.005",
                                "pressure:P:0.05,0.01,0.005 ", "level:L:0.05,\t0.01", "level:L:inf,0.01",
                                "level:L:nan,0.01", "level:L:1e999,0.01", "level:L:0.05,"}) {
    try {
      (void)parseProbeSpec(bad);
      ADD_FAILURE() << "accepted: " << bad;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("is not a finite number"), std::string::npos) << e.what();
    }
  }
  EXPECT_DOUBLE_EQ(parseProbeSpec("pressure:P:0.05,1e-2,-0").y, 0.01);
  const std::string name = "P\xc3\xbc";  // "Pü"
  try {
    (void)parseProbeSpec("pressure:" + name + ":0.05,0.01,0.005");
    ADD_FAILURE() << "accepted a non-ASCII name";
  } catch (const Error& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("probe '" + name + "'"), std::string::npos) << m;
    EXPECT_NE(m.find("a non-ASCII character"), std::string::npos) << m;
    EXPECT_EQ(m.find("'\xc3'"), std::string::npos) << m;  // not one byte of it
  }
}
