// Static obstacles as boundary particles (issue 12), both solvers: a settled
// tank with a submerged box (hydrostatic pressure beside and above it, no
// particle inside, the buoyancy force rho g V from bforce), a dam break
// against a box (no penetration, no escape), the scenes that carry one.
#include "eddy_shared.h"
#include "registry.hpp"
#include "shape_spec_io.hpp"
#include "sph.hpp"
#include "test_util.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <sstream>

using namespace eddy;

namespace {

const double kG = 9.81;

using test::boxSdf;
using test::boxSpec;

struct TankResult {
  double worstBeside = 0, worstAbove = 0, force = 0, buoyancy = 0;
  double worstFace = 0;  // Shepard pressure on the box's faces (as the probes sample)
  size_t inside = 0;
  double dx = 0;  // the spacing it ran at
};

// 1 m of water (dx = 0.04 m: 12 x 25 x 4 particles) in a 0.48 m tank, a box
// 0.16 x 0.16 m suspended at 0.2 .. 0.36 m above the floor, through the
// whole slab (and one support radius beyond each side wall, so the walls'
// mirror images and the box meet without a gap). Settles for 1.2 s; the
// pressure is averaged over the next 0.8 s (about one period of the tank's
// first sloshing mode, 2 pi / sqrt(g k tanh(k H)) = 0.78 s with k = pi / 0.48 m:
// the 0.3 s until session 6 caught a phase of it, so that a last-bit change
// of rounding moved DFSPH's force by 8 %) per layer beside the box (x < 0.12
// or x > 0.36) and above it (0.16 < x < 0.32, y > 0.4), against rho0 g (Hs - y)
// with Hs the level from the volumes;
// the force on the box is the sum of bforce over its particles, averaged the
// same way, against the buoyancy rho0 g V of its wetted volume.
// The submerged-box tank: water 1 m deep, 0.48 m long, 4 dx deep (dx = 4
// cm), over a box 0.16 x 0.16 m on the floor at x = 0.24, through the slab.
constexpr double kBoxTankDx = 0.04;
// The slab is 4 spacings deep at any spacing dx.
ShapeSpec submergedBoxTank(Params& p, double dx = kBoxTankDx) {
  const double depth = 4 * dx;
  test::stillTank(p, dx, 0.48, 1.0, 1.2);
  p.set("speed_of_sound", 31.320920);
  p.set("viscosity", 0.05);
  const double h = p.get("smoothing_ratio") * dx;
  return boxSpec(0.24, 0.28, 0.5 * depth, 0.16, 0.16, depth + 2 * h);
}

TankResult submergedBox(Params p, double dx = kBoxTankDx) {
  // Developer aid: EDDY_BOX_TANK_DX runs the default-spacing tank at another
  // spacing (the bounds are the default spacing's, but for expectTank's
  // issue12 layers at <= 0.005 m; read the printout).
  if (const char* e = std::getenv("EDDY_BOX_TANK_DX"); e && *e && dx == kBoxTankDx) dx = std::atof(e);
  const double D = 4 * dx, h = p.get("smoothing_ratio") * dx;
  const ShapeSpec b = submergedBoxTank(p, dx);
  const SphSetup setup = makeSphScene("dam_break", p, {b});
  SphSim sim(test::context(), p, setup);
  EXPECT_GT(sim.boundary().size(), 0u);
  const int layers = int(std::lround(1.0 / dx));
  std::vector<double> pB(layers, 0), yB(layers, 0), nB(layers, 0);
  std::vector<double> pA(layers, 0), yA(layers, 0), nA(layers, 0);
  std::vector<double> pU(layers, 0), yU(layers, 0), nU(layers, 0);  // under the box (printed)
  TankResult r;
  r.dx = dx;
  double K = 0;
  double fSum = 0, fN = 0;
  const auto range = sim.boundary().range(0);
  // probe points: the middle of the left and right faces and of the top
  // (kind 0), then columns of probes every 5 cm beside the box (kind 1: x =
  // 0.06 and 0.42 m, midway between box and wall) and above it (kind 2: x =
  // 0.24 m), at depths 0.2 .. 0.85 m as the layers
  std::vector<std::array<double, 3>> faces = {
      {0.16, 0.28, 0.5 * D}, {0.32, 0.28, 0.5 * D}, {0.24, 0.36, 0.5 * D}};
  std::vector<int> kind(faces.size(), 0);
  for (double y = 0.15; y < 0.8 + 1e-9; y += 0.05) {
    for (double x : {0.06, 0.42}) {
      faces.push_back({x, y, 0.5 * D});
      kind.push_back(1);
    }
    if (y > 0.4) {
      faces.push_back({0.24, y, 0.5 * D});
      kind.push_back(2);
    }
  }
  std::vector<double> faceP(faces.size(), 0);
  while (sim.syncTime() < 2.0) {
    sim.step();  // sampled every step (DFSPH pulses with a period of ~20 steps)
    if (sim.time() < 1.2) continue;
    const auto F = sim.boundary().readForces();  // of the last step
    double fy = 0;
    for (size_t k = range.first; k < range.first + range.second; ++k) fy += F[k].s[1];
    fSum += fy;
    fN += 1;
    K = sim.diagnostics().kinetic;  // refreshes density/pressure for these positions
    const auto pos = sim.readPositions();
    const auto rp = sim.readDensityPressure();
    // Pressure probes on the box's faces, as sph_probes samples them:
    // sum V_j p_j W / sum V_j W over the fluid within h, V_j = m / rho_j.
    for (size_t f = 0; f < faces.size(); ++f) {
      double num = 0, den = 0;
      for (size_t i = 0; i < pos.size(); ++i) {
        const double r = std::hypot(pos[i].s[0] - faces[f][0], pos[i].s[1] - faces[f][1],
                                    pos[i].s[2] - faces[f][2]);
        const double w = sphKernelW(r, h) / rp[i].s[0];
        num += w * rp[i].s[1];
        den += w;
      }
      faceP[f] += den > 0 ? num / den : 0;
    }
    for (size_t i = 0; i < pos.size(); ++i) {
      const double x = pos[i].s[0], y = pos[i].s[1];
      const int l = std::clamp(int(y / dx), 0, layers - 1);
      if (x < 0.12 || x > 0.36) {
        pB[l] += rp[i].s[1];
        yB[l] += y;
        nB[l] += 1;
      } else if (x > 0.16 && x < 0.32 && y > 0.4) {
        pA[l] += rp[i].s[1];
        yA[l] += y;
        nA[l] += 1;
      } else if (x > 0.16 && x < 0.32 && y < 0.2) {
        pU[l] += rp[i].s[1];
        yU[l] += y;
        nU[l] += 1;
      }
    }
  }
  const double rho0 = sim.physics().rho0;
  // The free surface from the volumes: N dx^3 of fluid plus the geometric
  // box (its part inside the tank) over the 0.48 x D tank. The scene drops
  // the fluid within half a spacing of the box, so the level settles a
  // little below the 1 m column.
  const double Hs = (double(sim.size()) * dx * dx * dx + 0.16 * 0.16 * D) / (0.48 * D);
  std::printf("submerged box, %s, N = %zu, boundary %zu, %llu steps:\n",
              p.getChoice("solver").c_str(), sim.size(), sim.boundary().size(),
              static_cast<unsigned long long>(sim.steps()));
  for (int l = 0; l < layers; ++l) {
    for (int side = 0; side < 2; ++side) {
      const auto& P = side ? pA : pB;
      const auto& Y = side ? yA : yB;
      const auto& N = side ? nA : nB;
      if (N[l] == 0) continue;
      const double y = Y[l] / N[l], pSim = P[l] / N[l], pEx = rho0 * kG * (Hs - y);
      // depths 0.2 .. 0.85 m (the surface layers and the floor's first layers aside)
      if (y < 0.15 || y > 0.8) continue;
      const double err = (pSim - pEx) / pEx;
      std::printf("  %s y = %.3f m  p = %8.1f Pa  rho g d = %8.1f Pa  error %+.2f%%\n",
                  side ? "above " : "beside", y, pSim, pEx, 100 * err);
      (side ? r.worstAbove : r.worstBeside) =
          std::max(side ? r.worstAbove : r.worstBeside, std::fabs(err));
    }
  }
  for (int l = 0; l < layers; ++l)
    if (nU[l] > 0)
      std::printf("  under  y = %.3f m  p = %8.1f Pa  rho g d = %8.1f Pa\n", yU[l] / nU[l],
                  pU[l] / nU[l], rho0 * kG * (Hs - yU[l] / nU[l]));
  std::printf("  free surface from the volumes %.4f m\n", Hs);
  for (size_t f = 0; f < faces.size(); ++f) {
    const double pSim = faceP[f] / std::max(fN, 1.0), pEx = rho0 * kG * (Hs - faces[f][1]);
    const double err = (pSim - pEx) / pEx;
    static const char* what[3] = {"face", "beside", "above"};
    std::printf("  %s probe (%.2f, %.2f) p = %8.1f Pa  rho g d = %8.1f Pa  error %+.2f%%\n",
                what[kind[f]], faces[f][0], faces[f][1], pSim, pEx, 100 * err);
    if (kind[f] == 0) r.worstFace = std::max(r.worstFace, std::fabs(err));  // columns: printed only
  }
  std::printf("  kinetic energy at the end %.3e J\n", K);
  r.force = fSum / std::max(fN, 1.0);
  r.buoyancy = rho0 * kG * 0.16 * 0.16 * D;
  std::printf("  force on the box %.3f N, buoyancy rho g V %.3f N (%+.2f%%)\n", r.force, r.buoyancy,
              100 * (r.force - r.buoyancy) / r.buoyancy);
  for (const auto& q : sim.readPositions())
    if (boxSdf(b, q) < 0) ++r.inside;
  const auto c = sim.readCounters();
  EXPECT_EQ(c.escaped, 0u);
  EXPECT_EQ(c.outOfGrid, 0u);
  std::printf("  penetrations %llu, inside now %zu\n",
              static_cast<unsigned long long>(c.penetrations), r.inside);
  return r;
}

// A dam break (Martin & Moyce column a = 2.25 in, a/dx = 10, 2a high, slab of
// 4 layers) against a box 0.5a high and 0.5a long at x = 2.5a across the
// slab: for 0.5 s the surge hits and overtops it. `delta` > 0: wcsph with
// delta-SPH (density_diffusion). Returns the smallest mean time step of the
// 10-step chunks over the acoustic one cfl h / (c0 + sqrt(2 g H)), H = 2a.
double damBreakAgainstBox(const std::string& solver, double delta = 0) {
  const double a = 0.05715, dx = a / 10;
  Params p(sphParamDecl());
  p.setAssignment("solver=" + solver);
  p.set("density_diffusion", delta);
  p.set("spacing", dx);
  p.set("column_width", a);
  p.set("column_height", 2 * a);
  p.set("depth", 4 * dx);
  p.set("tank_length", 4.5 * a);
  p.set("tank_height", 2.6 * a);
  const double h = p.get("smoothing_ratio") * dx;
  const ShapeSpec b = boxSpec(2.5 * a, 0.25 * a, 2 * dx, 0.5 * a, 0.5 * a, 4 * dx + 2 * h);
  const SphSetup setup = makeSphScene("dam_break", p, {b});
  SphSim sim(test::context(), p, setup);
  size_t maxInside = 0;
  double minDt = 1e30, minRho = 1e30, maxRho = 0;
  while (sim.syncTime() < 0.5) {
    const double t0 = sim.syncTime();
    for (int k = 0; k < 10; ++k) sim.step();
    minDt = std::min(minDt, (sim.syncTime() - t0) / 10);
    for (const auto& d : sim.readDensityPressure()) {
      minRho = std::min(minRho, double(d.s[0]));
      maxRho = std::max(maxRho, double(d.s[0]));
    }
    size_t inside = 0;
    for (const auto& q : sim.readPositions()) inside += boxSdf(b, q) < 0;
    maxInside = std::max(maxInside, inside);
  }
  const auto c = sim.readCounters();
  const SphPhysics& ph = sim.physics();
  const double acoustic = ph.cfl * ph.h / (ph.c0 + std::sqrt(2 * kG * 2 * a));
  std::printf("dam break against a box, %s, density_diffusion %g: N = %zu, boundary %zu, %llu "
              "steps, smallest dt %.3e s (%.2f x cfl h / (c0 + sqrt(2 g H))), density %.4f .. "
              "%.4f rho0, penetrations %llu, escaped %llu, most inside at a check %zu\n",
              solver.c_str(), delta, sim.size(), sim.boundary().size(),
              static_cast<unsigned long long>(sim.steps()), minDt, minDt / acoustic,
              minRho / ph.rho0, maxRho / ph.rho0,
              static_cast<unsigned long long>(c.penetrations),
              static_cast<unsigned long long>(c.escaped), maxInside);
  EXPECT_EQ(c.penetrations, 0u);
  EXPECT_EQ(c.escaped, 0u);
  EXPECT_EQ(c.outOfGrid, 0u);
  EXPECT_EQ(maxInside, 0u);
  // The surge went past the box.
  double front = 0;
  for (const auto& q : sim.readPositions()) front = std::max(front, double(q.s[0]));
  EXPECT_GT(front, 3.0 * a);
  if (delta > 0) {
    // The carried density stays above its floor in the splash (without the
    // floor it fell to 0.12 rho0 here) and is not pumped up by it (a floor
    // at rho0 raised the largest density from 1.10 to 1.38 rho0).
    EXPECT_GE(minRho, double(EDDY_SPH_CARRIED_DENSITY_FLOOR) * ph.rho0 * (1 - 1e-6));
    EXPECT_LT(maxRho, 1.2 * ph.rho0);
  }
  return minDt / acoustic;
}

// The submerged-box tank of p within the given relative errors: pressure
// beside and above the box and on its faces, force on it against rho g V;
// and no fluid inside it.
// The bounds are the CI spacing's (0.04 m). issue12 = true: at the GPU
// benchmark's spacing (EDDY_BOX_TANK_DX <= 0.005 m) the layers beside and
// above the box are held to issue 12's 2 % instead (DFSPH, measured on the
// H200 at 0.005 m, 2026-12-04: 1.56 / 1.84 % at the defaults, 1.69 / 1.79 %
// at density_tolerance 0.01 %; docs/PERFORMANCE.md, session 24).
void expectTank(const Params& p, double beside, double above, double face, double force,
                bool issue12 = false) {
  const TankResult r = submergedBox(p);
  if (issue12 && r.dx <= 0.005 + 1e-12) beside = above = 0.02;
  EXPECT_LT(r.worstBeside, beside);
  EXPECT_LT(r.worstAbove, above);
  EXPECT_LT(r.worstFace, face);
  EXPECT_NEAR(r.force, r.buoyancy, force * r.buoyancy);
  EXPECT_EQ(r.inside, 0u);
}

}  // namespace

// Issue 12 asks for 2 % beside and above the box. Measured on PoCL
// (2026-12-02, session 9), depth counted from the level the volumes give,
// pressure averaged over 1.2-2.0 s:
//
//   | case                           | beside | above | faces (L / R / top)  | force on box |
//   | wcsph (defaults: delta-SPH 0.1)| 4.7 %  | 8.9 % | +6.8 / +7.2 / +8.2 % | -0.4 %       |
//   |   same, session 10's kernel    | 5.3 %  | 10.1 %| +7.3 / +7.3 / +9.0 % | +0.8 %       |
//   | wcsph, summation (delta 0)     | 6.5 %  | 6.3 % | -2.4 / -3.4 / -6.2 % | -4.1 %       |
//   | dfsph (defaults, tol. 0.05 %)  | 9.7 %  | 11.8 %| -9.0 / -9.0 / -11.5 %| -16.3 %      |
//   | dfsph, density_tolerance 0.02 %| 8.9 %  | 8.1 % | +6.8 / +5.1 / +2.1 % | +9.0 %       |
//   | dfsph, density_tolerance 0.01 %| 2.3 %  | 1.9 % | -1.1 / -1.2 / -5.0 % | -2.7 %       |
//   | dfsph, density_tolerance 0.005%| 2.0 %  | 2.6 % | -2.8 / -1.9 / -5.8 % | -10.8 %      |
//
// The tank is coarse (dx = 0.04 m, the box 4 dx across, 4 dx from the
// walls; the surface layer's half spacing alone is 200 Pa, 10 % of rho g d
// at 0.2 m depth) and the box's faces lie exactly half a spacing from
// lattice columns: until session 9 rounding filled the column at its right
// face and left a 1.5-spacing void at its left (dropInsideSolids now keeps
// a site exactly at the clearance on every side). With that void the
// summation read up to +5.5 % and DFSPH up to +12 % (earlier sessions):
// the figures move by several % with the packing, not with the solver's
// physics.
// DFSPH's settled pressure follows its solve's tolerance (docs/USAGE.md):
// each step's solve stops as soon as the average compression is within it,
// and the pressure that holds the column carries whatever the last solves
// left over; at the default 0.05 % it was -6 ... -12 % here and +8 ... +13 %
// at other packings and spacings (session 8: dx = 0.02 m, +9.7 ... +13 %),
// at 0.01 % within 2.3 % at both. How chaotic the settling is: session
// 10 wrote the hydrostatic term of sph_continuity.cl as a polynomial
// instead of expm1(log1p(x) / 7), the same value to 1e-7, and WCSPH's
// figures moved by up to 1.2 % (the row "session 10's kernel"; the exact
// form in the same build gave session 9's row again). Asserted at what is
// measured plus that spread, so that a regression still fails: WCSPH 6 %
// beside, 12 % above, 10 % on the faces, force 5 % (with the summation density 7 % everywhere, force 10 %), DFSPH
// at the defaults 12.5 % (force 20 %), DFSPH at density_tolerance 0.01 %
// (the setting docs/USAGE.md gives for sensor comparisons) 2.5 % beside and
// above, 6 % on the faces, force 5 %: the issue's 2 % is missed by 0.3 %
// beside the box, at the bottom.
// Half the spacing (dx = 0.02 m, 4 480 particles, 43 / 53 s on PoCL, session
// 8, with the old fill) did not bring either solver within 2 % at the
// defaults either: WCSPH beside -0.0 ... +5.5 %, above +3.1 ... +5.7 %;
// DFSPH +9.7 ... +13.0 % at every depth, at density_tolerance 0.01 % 0.84 %
// (max_dt 1 ms) and 1.63 % (0.9 ms). Re-measured with the current fill
// (session 11, submergedBox(p, 0.02), DFSPH at density_tolerance 0.01 %,
// 105 s on PoCL): layers beside +0.05 ... +2.5 %, above +0.2 ... +2.4 %; the
// probe columns (printed below the faces: Shepard samples every 5 cm, time
// averaged) beside -1.6 ... +2.6 %, above +0.1 ... +0.7 %; force -5.3 %. So
// 2 % is met above the box by the probes but missed beside it by up to
// 0.6 %: the bulk reads +1 ... +2 % high next to the walls.
// Session 12 found why: the settled packing's kernel-gradient moment is not
// the cubic lattice's that grad_scale corrects (s M measured 0.993 across,
// 0.978 along gravity, in the hydrostatic tank), so the pressure gradient
// the forces see was 2.2 % short. DFSPH now renormalises it by the measured
// moment (gradient_correction = packing, the default; sph_dfsph.cl,
// dfsph_gradient_measure). Measured with it (PoCL, 2026-12-02), DFSPH at
// density_tolerance 0.01 %: dx = 0.04 m layers beside -2.3 ... +1.8 %, above
// -1.9 ... +1.8 %, faces -0.8 / -1.7 / -2.8 %, force +3.2 %; dx = 0.02 m
// (138 s, not kept as a test) layers beside -2.05 ... +0.04 %, above
// -1.6 ... +0.1 %, probe columns beside -2.5 ... +0.5 %, above -2.0 ... -0.7 %,
// force +0.7 % (it was -5.3 %). The bottom's +2 % is gone; what is left is
// the solve's own shortfall near the surface (-1 ... -2 % at depths of
// 0.2 - 0.25 m), so 2 % is still missed, by 0.05 % at dx = 0.02 m. At the
// default tolerance: layers within 4.1 %, faces -4.6 / -4.8 / -6.7 %, force -9.0 %.
// Session 19 found that all of the above sampled the tank every 20 steps,
// and that DFSPH's pressure pulses from step to step with a period of about
// 20 steps at these tolerances (in the 25-layer hydrostatic tank of
// test_sph_physics.cpp, -39 ... +198 % at 0.6 m depth): those figures held
// one phase of the pulse. Now sampled after every step (PoCL, 2026-12-04):
//
//   | case                           | beside | above | faces (L / R / top)  | force on box |
//   | wcsph (defaults)               | 4.4 %  | 9.1 % | +6.4 / +6.4 / +8.2 % | +0.1 %       |
//   | wcsph, summation (delta 0)     | 6.9 %  | 6.7 % | worst 6.6 %          | -4.3 %       |
//   | dfsph (defaults)               | 3.0 %  | 5.1 % | -2.8 / -2.9 / -5.4 % | -4.0 %       |
//   | dfsph, density_tolerance 0.01 %| 3.4 %  | 3.3 % | -2.4 / -3.2 / -4.6 % | +0.3 %       |
//
// and on the H200 (same day, driver 580.159.04; its rounding settles the
// tank differently): wcsph 4.1 / 9.0 / worst face 8.5 % / +1.2 %, summation
// 5.7 / 6.9 / 6.7 % / -2.5 %, dfsph 3.4 / 4.2 / 6.6 % / -3.4 %, dfsph at
// 0.01 % 2.8 / 3.7 / 5.7 % / -4.0 %.
// DFSPH's worst layers are now the upper ones (-2 ... -5 % at depths of
// 0.2 - 0.25 m, 5 spacings, about 60 - 100 Pa: a centimetre of level in a
// tank whose surface layer alone spans 4 cm), the bulk within 2 % at both
// tolerances. The issue's 2 % stays missed at this resolution, by 1 - 3 %.
// Asserted: the worse device's figure plus a margin of about 0.5 %.
// Session 23 measured how far rounding alone moves the force and the faces
// (PoCL, EDDY_SPH_LANES = 1, 2, 4: the same sums in other orders; before
// and after DFSPH's boundary sums were kept per step, equal to 1e-7):
// force at the defaults -4.1 / -6.8 / -2.4 % before, -6.8 / -5.8 / -1.7 %
// after; at density_tolerance 0.01 % +0.3 / -1.7 / -3.4 % before,
// -5.2 / -2.5 / +0.1 % after, its worst face 7.2 % (lanes 2, after). So
// DFSPH's force is asserted at 8 % (defaults) and 6 % (0.01 %), its faces
// at 7.5 %: the spread that rounding gives, not a physics change.
TEST(SphObstacles, WcsphSubmergedBoxHydrostaticPressureAndBuoyancy) {
  Params p(sphParamDecl());
  ASSERT_GT(p.get("density_diffusion"), 0.0);  // the default: delta-SPH
  expectTank(p, 0.06, 0.12, 0.10, 0.05);
}

// Session 40 put each particle's Tait sound speed c0 (rho/rho0)^3 into
// WCSPH's time step (sph_forces.cl). Here the summation density next to the
// box counts the boundary sheet too (up to ~1.2 rho0, sph_continuity.cl's
// reorder comment), so the step near the box got shorter and the tank settled
// along another path: PoCL, summation, beside 6.3 %, above 8.05 % (one layer,
// 0.70 m; the layers on either side -0.6 and -5.0 %), 3 696 steps. The bound
// above the box is 8.5 % since (7.5 % before).
TEST(SphObstacles, WcsphSummationSubmergedBoxHydrostaticPressureAndBuoyancy) {
  Params p(sphParamDecl());
  p.set("density_diffusion", 0.0);
  expectTank(p, 0.075, 0.085, 0.075, 0.1);
}

TEST(SphObstacles, DfsphSubmergedBoxHydrostaticPressureAndBuoyancy) {
  Params p(sphParamDecl());
  p.setAssignment("solver=dfsph");
  expectTank(p, 0.04, 0.06, 0.075, 0.08, true);
}

TEST(SphObstacles, DfsphSubmergedBoxPressureAtTheSensorTolerance) {
  Params p(sphParamDecl());
  p.setAssignment("solver=dfsph");
  p.set("density_tolerance", 0.01);
  expectTank(p, 0.04, 0.045, 0.075, 0.06, true);
}

// WCSPH with delta-SPH (density_diffusion 0.1): with solids present the
// carried density starts from the summation capped at the scene's deepest
// hydrostatic density (sph_continuity_reorder). Next to the submerged box the summation counts
// the boundary sheet on top of fluid placed half a spacing off it (up to
// ~1.2 rho0); uncapped, that start exploded: the water's top went from 0.975
// to 1.18 m within 0.1 s and the column settled 7 % taller, its pressure
// +10 .. +24 % of rho g d (PoCL, 2026-12-01). Capped, measured: top 0.971 ..
// 0.976 m over 1.4 s. Asserted over the first 0.15 s: the top stays below
// 1.0 m (the nominal column) and nothing escapes.
TEST(SphObstacles, WcsphCarriedDensityStartsAtRestNextToASolid) {
  Params p(sphParamDecl());
  p.set("density_diffusion", 0.1);
  const ShapeSpec b = submergedBoxTank(p);
  SphSim sim(test::context(), p, makeSphScene("dam_break", p, {b}));
  double top = 0;
  while (sim.syncTime() < 0.15) {
    for (int k = 0; k < 20; ++k) sim.step();
    for (const auto& q : sim.readPositions()) top = std::max(top, double(q.s[1]));
  }
  std::printf("carried density next to a box: highest water %.4f m in 0.15 s (%llu steps)\n", top,
              static_cast<unsigned long long>(sim.steps()));
  EXPECT_LT(top, 1.0);
  EXPECT_EQ(sim.readCounters().escaped, 0u);
}

TEST(SphObstacles, WcsphDamBreakAgainstABoxLetsNothingThrough) { damBreakAgainstBox("wcsph"); }
TEST(SphObstacles, DfsphDamBreakAgainstABoxLetsNothingThrough) { damBreakAgainstBox("dfsph"); }

// WCSPH with delta-SPH (density_diffusion 0.1) at the default cfl 0.2: the
// carried density's explicit continuity equation stays stable through the
// impact on the box and its overtopping. The time step must stay the acoustic
// one, cfl h / (c0 + |v|max): a collapse (as measured in spheric_dam_break
// at dx = 0.01 m on the H200, 70 129 steps to t = 0.72 s, about 10x too
// many) falls below half of cfl h / (c0 + sqrt(2 g H)). That collapse was
// reproduced on PoCL in a slab of the SPHERIC tank (dx = 0.015 m): the jet
// over the obstacle reached the ceiling and its spray's carried density fell
// below 0 (-47 kg/m^3), where the delta-SPH weight V_j = m / rho_j is
// singular; at t = 0.726 s a neighbour jumped to 3.28 rho0 and the speed to
// 22 m/s. The density now has a floor, EDDY_SPH_CARRIED_DENSITY_FLOOR rho0
// (sph_continuity.cl), checked here over the whole run. 0 penetrations and 0
// escapes as with the summation density (docs/USAGE.md once recorded 3
// penetrations here at cfl 0.2). Measured (PoCL, 2026-12-01): 3 280 steps,
// smallest 10-step mean dt 1.44e-4 s = 0.94 x that bound, density 0.50 ..
// 1.099 rho0 (without the floor 0.118 .. 1.097), 0 penetrations; the
// summation density: 3 270 steps, also 0.94.
TEST(SphObstacles, WcsphDensityDiffusionDamBreakAgainstABoxStaysStable) {
  EXPECT_GT(damBreakAgainstBox("wcsph", 0.1), 0.5);
}

TEST(SphObstacles, ScenesCarryTheirObstacleAndNoFluidInsideIt) {
  Params p(sphParamDecl());
  p.set("spacing", 0.04);
  const SphSetup s = makeSphScene("spheric_dam_break", p);
  ASSERT_EQ(s.solids.size(), 1u);
  EXPECT_EQ(s.tank[0], 3.22);
  EXPECT_EQ(s.tank[1], 1.0);
  EXPECT_EQ(s.tank[2], 1.0);
  const ShapeSpec& b = s.solids[0].spec;
  EXPECT_NEAR(b.pose.position[0] - 0.5 * b.size[0], 0.6635, 1e-12);
  EXPECT_NEAR(b.pose.position[0] + 0.5 * b.size[0], 0.8245, 1e-12);
  EXPECT_NEAR(b.pose.position[2] - 0.5 * b.size[2], 0.295, 1e-12);
  EXPECT_NEAR(b.pose.position[2] + 0.5 * b.size[2], 0.698, 1e-12);
  EXPECT_NEAR(b.pose.position[1] - 0.5 * b.size[1], 0.0, 1e-12);
  EXPECT_NEAR(b.pose.position[1] + 0.5 * b.size[1], 0.161, 1e-12);
  double xmin = 10;
  for (const auto& q : s.particles) {
    xmin = std::min(xmin, q.x);
    EXPECT_LT(q.y, 0.55);
  }
  EXPECT_NEAR(xmin, 3.22 - 1.228 + 0.5 * 0.04, 0.04);
  EXPECT_EQ(sphSceneSize("spheric_dam_break", p).count, s.particles.size());
  // An obstacle inside the column: none of its fluid is created.
  p.set("spacing", 0.01);
  const ShapeSpec inCol = boxSpec(0.03, 0.03, 0.004, 0.02, 0.02, 0.1);
  const SphSetup d = makeSphScene("dam_break", p, {inCol});
  const SphSetup d0 = makeSphScene("dam_break", p);
  EXPECT_LT(d.particles.size(), d0.particles.size());
  for (const auto& q : d.particles)
    EXPECT_GE(boxSdf(inCol, makeFloat4(q.x, q.y, q.z)), 0.5 * 0.01 - 1e-9);
  EXPECT_EQ(sphSceneSize("dam_break", p, {inCol}).count, d.particles.size());
  // mesh_obstacle reads the shipped STL.
  p.set("spacing", 0.05);
  const SphSetup m = makeSphScene("mesh_obstacle", p);
  ASSERT_EQ(m.solids.size(), 1u);
  EXPECT_EQ(m.solids[0].spec.kind, ShapeKind::Mesh);
  EXPECT_GT(m.particles.size(), 0u);
}

// ---- eddy-cli: --obstacle, config "obstacles", snapshots, errors ----------

namespace {
const std::string kCli = EDDY_CLI;
// right in front of the column (x 0.06 .. 0.09): the surge hits it at once
const std::string kObstacle = "box:size=0.03,0.03,0.1:pos=0.075,0.015,0.02";
}  // namespace

TEST(SphObstaclesCli, RestartWithAnObstacleIsBitIdenticalForBothSolvers) {
  using eddy::test::run;
  using eddy::test::slurp;
  const std::string dir = eddy::test::tempDir();
  for (const std::string solver : {"wcsph", "dfsph"}) {
    SCOPED_TRACE(solver);
    const std::string common = "--device cpu --sim sph --scene dam_break --set spacing=0.01 "
                               "--set depth=0.04 --set solver=" + solver + " --quiet ";
    const std::string snap = dir + "/obst_" + solver + ".snap";
    auto r = run(kCli, "run " + common + "--obstacle " + kObstacle + " --steps 30 --save " + snap);
    ASSERT_EQ(r.code, 0) << r.err;
    r = run(kCli, "run --device cpu --quiet --load " + snap + " --steps 30 --json --out " + dir +
                      "/obst_resumed.csv");
    ASSERT_EQ(r.code, 0) << r.err;
    const auto j = nlohmann::json::parse(r.out);
    EXPECT_GT(j["boundary_particles"].get<long long>(), 0);  // the snapshot kept the obstacle
    EXPECT_EQ(j["final"]["penetrations"], 0);
    r = run(kCli, "run " + common + "--obstacle " + kObstacle + " --steps 60 --out " + dir +
                      "/obst_straight.csv");
    ASSERT_EQ(r.code, 0) << r.err;
    const std::string a = slurp(dir + "/obst_resumed.csv"), b = slurp(dir + "/obst_straight.csv");
    ASSERT_GT(a.size(), 100u);
    EXPECT_TRUE(a == b) << "resumed and straight-through runs with an obstacle differ";
    // ... and the obstacle matters (the run without it differs).
    r = run(kCli, "run " + common + "--steps 60 --out " + dir + "/obst_none.csv");
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_TRUE(slurp(dir + "/obst_none.csv") != a) << "the obstacle changed nothing";
  }
}

// A snapshot records the content hash of each mesh file: --load of a
// snapshot whose mesh changed since is refused naming the file, exit 1 (as
// any snapshot that cannot be restored), and loads again once the file is
// as it was.
TEST(SphObstaclesCli, LoadRefusesAMeshFileChangedSinceTheSave) {
  using eddy::test::run;
  const std::string dir = eddy::test::tempDir();
  const std::string mesh = dir + "/cli_changed.stl";
  const std::string cube = eddy::test::slurp(std::string(EDDY_TEST_DATA) + "/cube.stl");
  eddy::test::writeFile(mesh, cube);
  const std::string snap = dir + "/cli_changed.snap";
  auto r = run(kCli, "run --device cpu --sim sph --scene dam_break --set spacing=0.01 --set depth=0.04 --quiet "
                     "--obstacle mesh:file=" + mesh + ":scale=0.03,0.03,0.1:pos=0.075,0.015,0.02 --steps 2 --save " +
                         snap);
  ASSERT_EQ(r.code, 0) << r.err;
  eddy::test::writeFile(mesh, cube + "\n");  // one byte more: the same geometry, another file
  r = run(kCli, "run --device cpu --quiet --load " + snap + " --steps 1");
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_NE(r.err.find(mesh + ": the mesh file changed since the snapshot was saved"), std::string::npos) << r.err;
  eddy::test::writeFile(mesh, cube);
  r = run(kCli, "run --device cpu --quiet --load " + snap + " --steps 1");
  EXPECT_EQ(r.code, 0) << r.err;
}

TEST(SphObstaclesCli, ConfigObstaclesRunAndReportBoundaryParticles) {
  using eddy::test::run;
  const std::string dir = eddy::test::tempDir();
  const std::string cfg = dir + "/obst.json";
  eddy::test::writeFile(cfg, R"({"sim": "sph", "scene": "dam_break",
    "params": {"spacing": 0.01, "depth": 0.04},
    "obstacles": [{"shape": "box", "size": [0.03, 0.03, 0.1], "position": [0.15, 0.015, 0.02]},
                  {"shape": "sphere", "diameter": 0.04, "position": [0.3, 0.05, 0.02]}]})");
  auto r = run(kCli, "run --device cpu --quiet --config " + cfg + " --steps 3 --json");
  ASSERT_EQ(r.code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  const long long both = j["boundary_particles"].get<long long>();
  EXPECT_GT(both, 0);
  EXPECT_TRUE(j["final"].contains("penetrations"));
  // --obstacle adds to the config's.
  r = run(kCli, "run --device cpu --quiet --config " + cfg + " --obstacle sphere:d=0.02:pos=0.35,0.15,0.02 --steps 1 --json");
  ASSERT_EQ(r.code, 0) << r.err;
  j = nlohmann::json::parse(r.out);
  EXPECT_GT(j["boundary_particles"].get<long long>(), both);
  // Without obstacles: 0.
  r = run(kCli, "run --device cpu --quiet --sim sph --set spacing=0.01 --set depth=0.04 --steps 1 --json");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out)["boundary_particles"], 0);
}

TEST(SphObstaclesCli, BadObstacleSpecsAreRefusedNamingTheProblem) {
  using eddy::test::run;
  const std::string dir = eddy::test::tempDir();
  const std::string sph = "run --device cpu --sim sph --set spacing=0.01 --set depth=0.04 --steps 1 ";
  auto r = run(kCli, sph + "--obstacle box:size=-1,1,1");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("--obstacle"), std::string::npos) << r.err;
  r = run(kCli, sph + "--obstacle blob:size=1");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("blob"), std::string::npos) << r.err;
  r = run(kCli, sph + "--obstacle");
  EXPECT_EQ(r.code, 2);
  r = run(kCli, "run --device cpu --sim nbody --n 64 --steps 1 --obstacle box:size=1");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("no obstacles"), std::string::npos) << r.err;
  r = run(kCli, sph + "--obstacle mesh:file=" + dir + "/missing.stl");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("missing.stl"), std::string::npos) << r.err;
  const std::string cfg = dir + "/bad_obst.json";
  eddy::test::writeFile(cfg, R"({"sim": "sph", "obstacles": [{"shape": "box", "diameter": 1}]})");
  r = run(kCli, "run --device cpu --config " + cfg + " --steps 1");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("obstacles[0]"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("diameter"), std::string::npos) << r.err;
  eddy::test::writeFile(cfg, R"({"sim": "sph", "obstacles": {"shape": "box"}})");
  r = run(kCli, "run --device cpu --config " + cfg + " --steps 1");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("obstacles"), std::string::npos) << r.err;
  eddy::test::writeFile(cfg, R"({"sim": "nbody", "obstacles": []})");
  r = run(kCli, "run --device cpu --config " + cfg + " --steps 1");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("no obstacles"), std::string::npos) << r.err;
  // Sizes past what the boundary sampling and SDF grid hold (before: an
  // internal "invalid SDF grid", a false "no part of its surface lies within
  // ... of the tank", or the sampling limit, after the device was opened;
  // a mesh scaled that far was called degenerate or not closed).
  for (const std::string& o :
       {std::string("box:size=1e16,0.02,0.02:pos=0.2,0.05,0.02"), std::string("cylinder:d=1e17:h=0.04:pos=0.2,0.05,0.02"),
        std::string("sphere:d=10000:pos=0.2,-4999.99,0.02"), std::string("box:size=1e-30:pos=0.2,0.05,0.02"),
        "mesh:file=" + std::string(EDDY_TEST_DATA) + "/cube.stl:scale=1e6,0.02,0.02:pos=0.2,0.05,0.02"}) {
    SCOPED_TRACE(o);
    r = run(kCli, sph + "--obstacle " + o);
    EXPECT_EQ(r.code, 2) << r.err;
    EXPECT_NE(r.err.find("out of range (a solid is 1e-06 to 1000 m across"), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find("eddy: device"), std::string::npos) << r.err;
  }
  // Just past the limit prints as itself, not as the limit (was "1000 m").
  r = run(kCli, sph + "--obstacle box:size=1000.0001:pos=0.2,0.05,0.025");
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_NE(r.err.find("box size[0] is 1000.0001 m, out of range"), std::string::npos) << r.err;
  // The largest allowed, a cap reaching 1 cm into the tank, runs.
  r = run(kCli, sph + "--quiet --obstacle sphere:d=1000:pos=0.2,-499.99,0.02");
  EXPECT_EQ(r.code, 0) << r.err;
}

// Solids are placed against the tank before the device is opened: an
// obstacle wholly outside it and a body that does not fit inside it are usage
// errors naming the solid (the flag, or the config file and its key), as
// probes outside the tank are. An obstacle partly through a wall (standing in
// the floor, as the scenes' own obstacles rest on walls) still runs.
TEST(SphObstaclesCli, SolidsOutsideTheTankAreRefusedBeforeTheDevice) {
  using eddy::test::run;
  const std::string dir = eddy::test::tempDir();
  // tank 0.4 x 0.2 x 0.2 m
  const std::string b = "run --device cpu --sim sph --scene dam_break --set spacing=0.02 --set depth=0.2 "
                        "--set column_width=0.1 --set column_height=0.15 --steps 1 ";
  auto refused = [&](const std::string& args, const std::vector<std::string>& words) {
    SCOPED_TRACE(args);
    const auto r = run(kCli, b + args);
    EXPECT_EQ(r.code, 2) << r.err;
    for (const auto& w : words) EXPECT_NE(r.err.find(w), std::string::npos) << w << "\n" << r.err;
    EXPECT_EQ(r.err.find("eddy: device"), std::string::npos) << "found after the device was opened:\n" << r.err;
  };
  refused("--obstacle box:size=0.05:pos=5,5,5", {"--obstacle", "box:size=0.05", "entirely outside the tank"});
  refused("--obstacle sphere:d=0.1:pos=0.2,0.3,0.1", {"--obstacle", "entirely outside the tank"});  // above the lid
  // a rotated box whose bounding box reaches in but whose corner does not
  refused("--obstacle box:size=0.1:pos=-0.06,0.1,-0.06:rot=0,45,0", {"entirely outside the tank"});
  refused("--body box:size=0.05:pos=5,5,5:density=500", {"--body", "does not fit in the tank", "x extent"});
  refused("--body box:size=0.05:pos=0.39,0.1,0.1:density=500", {"--body", "x extent [0.365, 0.415] m"});
  // computed bounds without float noise (was [0.009999999999999995, 0.11])
  refused("--body box:size=0.1:pos=0.2,0.1,0.16:density=500", {"--body", "z extent [0.11, 0.21] m"});
  refused("--body sphere:d=0.06:pos=0.2,0.19,0.1:motion=rotate:speed=1", {"--body", "y extent"});
  // A kinematic body's whole stroke stays in the tank, and none moves faster
  // than sound in water (before: accepted, and the time step collapsed).
  refused("--body box:size=0.04,0.1,0.1:pos=0.1,0.06,0.1:motion=piston:amplitude=1e30:period=1",
          {"--body", "'amplitude': 1e+30 is out of range"});  // past what the device's float holds
  refused("--body box:size=0.04,0.1,0.1:pos=0.1,0.06,0.1:motion=piston:amplitude=0.09:period=1",
          {"--body", "piston stroke", "x extent sweeps [-0.01, 0.21]"});
  refused("--body box:size=0.04,0.1,0.1:pos=0.1,0.06,0.1:motion=piston:amplitude=0.01:period=1e-30",
          {"--body", "'period': 1e-30 is out of range"});
  refused("--body box:size=0.04,0.1,0.1:pos=0.1,0.06,0.1:motion=piston:amplitude=0.01:period=1e-5",
          {"--body", "more than 1500 m/s"});
  refused("--body box:size=0.04:pos=0.2,0.1,0.1:motion=rotate:speed=1e30", {"--body", "'speed': 1e+30 is out of range"});
  refused("--body box:size=0.04:pos=0.2,0.1,0.1:motion=rotate:speed=1e5", {"--body", "more than 1500 m/s"});
  // A rotating body's whole turn stays in the tank, as a piston's stroke does
  // (before: a bar longer than the tank is high, or a body orbiting an axis
  // outside the tank, ran until it blew up, "try a smaller time step").
  refused("--body box:size=0.3,0.01,0.04:pos=0.2,0.1,0.1:motion=rotate:speed=3",
          {"--body", "its rotation (about the axis 0,0,1 through 0.2,0.1,0.1) takes it out of the tank",
           "y extent sweeps [-0.05"});
  refused("--body box:size=0.03:pos=0.2,0.1,0.1:motion=rotate:speed=1:point=0.2,-1,0.1",
          {"--body", "its rotation", "x extent sweeps [-0.9"});
  refused("--body box:size=0.03:pos=0.2,0.1,0.1:motion=rotate:speed=1:axis=1,0,0:point=0.2,0.1,0.19",
          {"--body", "its rotation", "y extent sweeps [-0.006"});  // orbits through the floor and the lid
  const std::string cfg = dir + "/outside.json";
  eddy::test::writeFile(cfg, R"({"sim": "sph", "scene": "dam_break", "params": {"spacing": 0.02, "depth": 0.2,
      "column_width": 0.1, "column_height": 0.15},
      "obstacles": [{"shape": "box", "size": [0.05, 0.05, 0.05], "position": [0.25, 0.025, 0.1]},
                    {"shape": "box", "size": [0.05, 0.05, 0.05], "position": [0.25, -1, 0.1]}]})");
  refused("--config " + cfg, {"--config " + cfg + ": key 'obstacles[1]'", "entirely outside"});
  eddy::test::writeFile(cfg, R"({"sim": "sph", "scene": "dam_break", "params": {"spacing": 0.02, "depth": 0.2,
      "column_width": 0.1, "column_height": 0.15},
      "bodies": [{"shape": "sphere", "diameter": 0.05, "position": [0.3, 0.1, -0.5], "density": 500}]})");
  refused("--config " + cfg, {"--config " + cfg + ": key 'bodies[0]'", "z extent"});
  // the command line's solids come after the config's
  refused("--config " + cfg + " --body box:size=0.05:pos=0.3,0.1,0.1:density=500", {"key 'bodies[0]'"});
  // Partly through the floor and a wall: accepted.
  const auto r = run(kCli, b + "--quiet --json --obstacle box:size=0.05:pos=0.25,0,0.1 "
                              "--obstacle box:size=0.04:pos=0.4,0.1,0.1");
  EXPECT_EQ(r.code, 0) << r.err;
  // A piston axis whose squared length underflows is still a direction
  // (before: "its x extent sweeps [-inf, inf] m").
  const auto tiny = run(kCli, b + "--quiet --body box:size=0.04,0.1,0.1:pos=0.1,0.06,0.1:motion=piston:"
                                 "amplitude=0.01:period=1:axis=1e-300,0,0");
  EXPECT_EQ(tiny.code, 0) << tiny.err;
  // A piston whose stroke stays inside (x in [0.03, 0.17] m) at a sane speed runs.
  const auto p = run(kCli, b + "--quiet --body box:size=0.04,0.1,0.1:pos=0.1,0.06,0.1:motion=piston:"
                              "amplitude=0.05:period=1");
  EXPECT_EQ(p.code, 0) << p.err;
  // A bar turning about its middle whose ends clear the floor and lid (y in
  // [0.025, 0.175] m over a turn), and a sphere spinning in place beside a
  // wall (its bounding box's corners would sweep past it; the sphere does not).
  const auto t = run(kCli, b + "--quiet --body box:size=0.15,0.01,0.04:pos=0.2,0.1,0.1:motion=rotate:speed=3 "
                              "--body sphere:d=0.06:pos=0.3695,0.1,0.1:motion=rotate:speed=2:axis=1,1,0");
  EXPECT_EQ(t.code, 0) << t.err;
}

// A solid much larger than the tank whose cap reaches 1 cm into it: a
// sphere 30 m across under a 0.4 x 0.2 x 0.2 m tank has almost no coarse
// surface sample in the tank (before: "lies entirely outside the tank");
// the same sphere 2 cm lower (1 cm below the floor) is outside.
TEST(SphObstacles, ALargeSolidsCapReachingIntoTheTankIsInside) {
  const std::array<double, 3> tank{0.4, 0.2, 0.2};
  ShapeSpec s;
  s.kind = ShapeKind::Sphere;
  s.size = {30, 30, 30};
  s.pose.position = {0.2, 15.19, 0.1};  // lowest point y = 0.19: 1 cm into the tank below the lid
  EXPECT_NO_THROW(sphCheckSolids(tank, 0.02, {s}, {}));
  s.pose.position = {0.2, 15.21, 0.1};  // 1 cm above the lid
  EXPECT_THROW(sphCheckSolids(tank, 0.02, {s}, {}), Error);
  s.pose.position = {0.2, -14.99, 0.1};  // its top 1 cm above the floor
  EXPECT_NO_THROW(sphCheckSolids(tank, 0.02, {s}, {}));
  // The repository's ramp mesh scaled 20 x 0.1 x 0.1 (40 m long, 3 cm high,
  // 6 cm wide) lying through a 0.4 x 0.2 x 0.06 m tank: its world bounds come
  // from its vertices (before: from surface samples 0.31 m apart, which all
  // fell on one side face, so the bounds had no width and the mesh was
  // "entirely outside the tank").
  ShapeSpec ramp;
  ramp.kind = ShapeKind::Mesh;
  ramp.file = std::string(EDDY_TEST_DATA) + "/../../data/meshes/obstacle.stl";
  ramp.scale = {20, 0.1, 0.1};
  ramp.pose.position = {0.2, 0, 0.03};
  EXPECT_NO_THROW(sphCheckSolids({0.4, 0.2, 0.06}, 0.02, {ramp}, {}));
  ramp.pose.position = {0.2, -0.035, 0.03};  // 5 mm under the floor
  EXPECT_THROW(sphCheckSolids({0.4, 0.2, 0.06}, 0.02, {ramp}, {}), Error);
}

// A floating body must start clear of the obstacles and of the other
// bodies: an overlap of more than a spacing is refused naming both, one of up
// to a spacing (resting on it, or a little into it) is accepted; two
// kinematic bodies may overlap (their paths are theirs to choose). Shapes of
// every kind and a rotated box, at fresh random offsets around the limit.
TEST(SphObstacles, AFloatingBodyStartingInsideASolidIsRefused) {
  const double dx = 0.01;
  std::mt19937 rng(test::freshSeed());
  std::uniform_real_distribution<double> u(0, 1);
  const ShapeSpec obstacle = boxSpec(0.2, 0.05, 0.1, 0.1, 0.1, 0.1);  // y in [0, 0.1]
  auto body = [](ShapeSpec s) {
    BodySpec b;
    b.shape = s;
    b.density = 500;
    return b;
  };
  ShapeSpec sphere;
  sphere.kind = ShapeKind::Sphere;
  sphere.size = {0.06, 0.06, 0.06};
  ShapeSpec cyl;
  cyl.kind = ShapeKind::Cylinder;  // axis along y
  cyl.size = {0.06, 0.04, 0.06};
  ShapeSpec box = boxSpec(0, 0, 0, 0.06, 0.04, 0.06);
  for (const ShapeSpec& shape : {sphere, cyl, box}) {
    const double half = shape.kind == ShapeKind::Sphere ? 0.03 : 0.02;  // half its height
    // Its lowest point `sink` below the obstacle's top (y = 0.1).
    auto at = [&](double sink) {
      ShapeSpec s = shape;
      s.pose.position = {0.2 + 0.02 * (u(rng) - 0.5), 0.1 + half - sink, 0.1 + 0.02 * (u(rng) - 0.5)};
      return body(s);
    };
    SCOPED_TRACE(shapeSpecToString(shape));
    EXPECT_NO_THROW(sphCheckBodyClearance(dx, {obstacle}, {at(-0.05)}));          // above it
    EXPECT_NO_THROW(sphCheckBodyClearance(dx, {obstacle}, {at(0)}));              // resting on it
    EXPECT_NO_THROW(sphCheckBodyClearance(dx, {obstacle}, {at(0.5 * dx * u(rng))}));  // a little into it
    const double deep = 0.02 + 0.02 * u(rng);  // 2-4 spacings
    try {
      sphCheckBodyClearance(dx, {obstacle}, {body(boxSpec(0.5, 0.5, 0.5, 0.1, 0.1, 0.1)), at(deep)});
      ADD_FAILURE() << "a body " << deep << " m into the obstacle was accepted";
    } catch (const SolidSpecError& e) {
      EXPECT_TRUE(e.body);
      EXPECT_EQ(e.index, 1u);
      const std::string w = e.what();
      EXPECT_NE(w.find("it starts inside obstacle box:size=0.1,0.1,0.1"), std::string::npos) << w;
      EXPECT_NE(w.find("overlap by more than the particle spacing, 0.01 m"), std::string::npos) << w;
    }
    // Wholly inside, and another body (the error's index counts from `first`).
    ShapeSpec inside = shape;
    inside.pose.position = {0.2, 0.05, 0.1};
    EXPECT_THROW(sphCheckBodyClearance(dx, {obstacle}, {body(inside)}), SolidSpecError);
    ShapeSpec other = shape;
    other.pose.position = {0.5, 0.3, 0.1};
    BodySpec a = body(other), b = body(other);
    b.shape.pose.position[0] += 0.03;  // half a body's width into the other
    try {
      sphCheckBodyClearance(dx, {}, {body(box), a, b}, 1);
      ADD_FAILURE() << "two overlapping bodies were accepted";
    } catch (const SolidSpecError& e) {
      EXPECT_EQ(e.index, 0u);  // a, the first of the checked ones
      EXPECT_NE(std::string(e.what()).find("it starts inside body "), std::string::npos) << e.what();
    }
    b.shape.pose.position[0] += 0.03 + 0.5 * dx * u(rng);  // touching, or a gap
    EXPECT_NO_THROW(sphCheckBodyClearance(dx, {}, {a, b}));
    // Kinematic bodies: their overlaps are not checked, but a floating one
    // inside a kinematic one is.
    b.shape.pose.position[0] = a.shape.pose.position[0];
    a.motion = b.motion = BodyMotion::Rotate;
    EXPECT_NO_THROW(sphCheckBodyClearance(dx, {}, {a, b}));
    b.motion = BodyMotion::Floating;
    EXPECT_THROW(sphCheckBodyClearance(dx, {}, {a, b}), SolidSpecError);
  }
  // A box turned 45 degrees about z, its lowest edge 2.5 cm into the obstacle.
  ShapeSpec turned = boxSpec(0.2, 0.1 + 0.03 * std::sqrt(2.0) - 0.025, 0.1, 0.06, 0.06, 0.06);
  turned.pose.rotationDeg = {0, 0, 45};
  EXPECT_THROW(sphCheckBodyClearance(dx, {obstacle}, {body(turned)}), SolidSpecError);
  turned.pose.position[1] += 0.025;  // its edge on the top face
  EXPECT_NO_THROW(sphCheckBodyClearance(dx, {obstacle}, {body(turned)}));
}

// Solids thinner than two spacings (one particle layer deep, as in the app's
// 2-D-like slab) have no point half a spacing inside them: a floating box
// lying wholly on an identical obstacle, or on an identical body, passed and
// then fell through it (the hostile sweep of session 38). Their limit is
// half the thinner one's thickness; resting on each other, side by side, or
// a fifth of a spacing into each other stays accepted.
TEST(SphObstacles, ThinSolidsLyingOnEachOtherAreRefused) {
  const double dx = 0.008;
  std::mt19937 rng(test::freshSeed());
  std::uniform_real_distribution<double> u(0, 1);
  for (const double thick : {0.008, 0.012}) {  // one spacing, one and a half
    SCOPED_TRACE("thickness " + std::to_string(thick));
    auto body = [](ShapeSpec s) {
      BodySpec b;
      b.shape = s;
      b.density = 500;
      return b;
    };
    const double x = 0.2 + 0.01 * u(rng), y = 0.1 + 0.01 * u(rng);
    const ShapeSpec slab = boxSpec(x, y, 0.5 * thick, 0.03, 0.03, thick);
    try {
      sphCheckBodyClearance(dx, {slab}, {body(slab)});
      ADD_FAILURE() << "a thin body inside an identical obstacle was accepted";
    } catch (const SolidSpecError& e) {
      const std::string w = e.what();
      EXPECT_NE(w.find("it starts inside obstacle box:size=0.03,0.03,"), std::string::npos) << w;
      EXPECT_NE(w.find("more than half the thinner one's thickness, " + std::string(thick < 0.01 ? "0.004 m" : "0.006 m")),
                std::string::npos)
          << w;
    }
    EXPECT_THROW(sphCheckBodyClearance(dx, {}, {body(slab), body(slab)}), SolidSpecError);
    ShapeSpec shifted = slab;  // half its width into it
    shifted.pose.position[0] += 0.015;
    EXPECT_THROW(sphCheckBodyClearance(dx, {slab}, {body(shifted)}), SolidSpecError);
    ShapeSpec onTop = slab;  // resting on it, a fifth of a spacing into it, or beside it
    onTop.pose.position[1] += 0.03 - 0.2 * dx * u(rng);
    EXPECT_NO_THROW(sphCheckBodyClearance(dx, {slab}, {body(onTop)}));
    ShapeSpec beside = slab;
    beside.pose.position[0] += 0.03 - 0.2 * dx * u(rng);
    EXPECT_NO_THROW(sphCheckBodyClearance(dx, {slab}, {body(beside)}));
    EXPECT_NO_THROW(sphCheckBodyClearance(dx, {}, {body(slab), body(beside)}));
  }
}

// On the command line, the scene's own obstacle counts (SPHERIC's box), and
// an obstacle that takes all the water is named.
TEST(SphObstaclesCli, ABodyInsideTheScenesObstacleAndAnObstacleOverTheWaterAreNamed) {
  using eddy::test::run;
  auto r = run(kCli, "run --device cpu --sim sph --scene spheric_dam_break --set spacing=0.04 --steps 1 "
                     "--body box:size=0.1:pos=0.74,0.08,0.5:density=500");
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_NE(r.err.find("--body: body box:size=0.1,0.1,0.1:pos=0.74,0.08,0.5"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("it starts inside obstacle box:size=0.161"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("eddy: device"), std::string::npos) << r.err;
  r = run(kCli, "run --device cpu --sim sph --scene spheric_dam_break --set spacing=0.04 --steps 1 --quiet "
                "--body box:size=0.1:pos=0.74,0.2115,0.5:density=500");  // resting on its top
  EXPECT_EQ(r.code, 0) << r.err;
  r = run(kCli, "run --device cpu --sim sph --scene dam_break --set spacing=0.02 --set depth=0.2 --steps 1 "
                "--obstacle box:size=0.05:pos=0.3,0.1,0.1 --obstacle box:size=10:pos=0.5,0.5,0.5");
  EXPECT_EQ(r.code, 2) << r.err;  // a usage error, found before the device opens
  EXPECT_NE(r.err.find("no particles: obstacle box:size=10,10,10:pos=0.5,0.5,0.5:rot=0,0,0 covers all of its"),
            std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("eddy: device"), std::string::npos) << r.err;
  // Two obstacles that only together cover the column.
  r = run(kCli, "run --device cpu --sim sph --scene dam_break --set spacing=0.02 --set depth=0.2 --steps 1 "
                "--set column_width=0.1 --set column_height=0.2 "
                "--obstacle box:size=0.06,0.3,0.3:pos=0.02,0.1,0.1 --obstacle box:size=0.06,0.3,0.3:pos=0.08,0.1,0.1");
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_NE(r.err.find("no particles: its obstacles together cover all of its"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("eddy: device"), std::string::npos) << r.err;
}

// The check before the device (sphCheckScene walks the fluid sites and stops
// at the first one left) agrees with the build (which makes the sites and
// drops those covered) on whether obstacles take all the water: random
// boxes about a jittered column, some covering it, some not, some only
// together; and the message is the build's.
TEST(SphObstacles, TheCheckBeforeTheDeviceAgreesWithTheBuildOnWaterLeft) {
  const unsigned seed = test::freshSeed();
  SCOPED_TRACE("seed " + std::to_string(seed) + " (EDDY_TEST_SEED replays it)");
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  Params p(sphParamDecl());
  p.set("spacing", 0.01);
  p.set("depth", 0.05);
  p.set("column_width", 0.1);
  p.set("column_height", 0.2);
  p.set("jitter", 0.2);
  int refused = 0, kept = 0;
  for (int trial = 0; trial < 40; ++trial) {
    p.set("seed", double(trial));
    std::vector<ShapeSpec> boxes;
    const int count = 1 + int(u(rng) * 3);
    for (int k = 0; k < count; ++k)
      boxes.push_back(boxSpec(0.12 * u(rng), 0.25 * u(rng), 0.05 * u(rng), 0.05 + 0.2 * u(rng),
                              0.1 + 0.3 * u(rng), 0.05 + 0.1 * u(rng)));
    std::string built, checked;
    try {
      makeSphScene("dam_break", p, boxes);
    } catch (const Error& e) {
      built = e.what();
    }
    try {
      sphCheckScene("dam_break", p, boxes, {});
    } catch (const Error& e) {
      checked = e.what();
    }
    // (sphCheckScene also refuses boxes outside the tank: only those the build takes count)
    if (built.empty() && checked.find("no particles") != std::string::npos) ADD_FAILURE() << checked;
    if (!built.empty()) {
      EXPECT_NE(built.find("no particles"), std::string::npos) << built;
      EXPECT_EQ(checked, built);
    }
    (built.empty() ? kept : refused)++;
  }
  EXPECT_GT(refused, 0);
  EXPECT_GT(kept, 0);
}

// A floating body with less than the contact clearance (a spacing) to both
// walls of an axis, as one spanning a thin slab's depth, is held centred
// between them (before: pushed out of one wall by the clearance, through the
// other: a 0.04 m box in a 0.06 m slab at spacing 0.02 went from z = 0.030 to
// 0.016 in one step, its face 4 mm outside the tank). Started off centre by
// a random few millimetres, both solvers.
TEST(SphBodiesCli, ABodyTooWideForTheWallClearanceIsHeldCentred) {
  using eddy::test::run;
  const std::string dir = eddy::test::tempDir();
  std::mt19937 rng(test::freshSeed());
  const double z0 = 0.03 + std::uniform_real_distribution<double>(-0.006, 0.006)(rng);
  for (const std::string solver : {"wcsph", "dfsph"}) {
    SCOPED_TRACE(solver + ", z0 = " + std::to_string(z0));
    const std::string csv = dir + "/squeezed_" + solver + ".csv";
    const auto r = run(kCli, "run --device cpu --sim sph --scene dam_break --set spacing=0.02 --set depth=0.06 "
                             "--set solver=" + solver + " --steps 150 --quiet --json --body box:size=0.04:pos=0.2,0.12," +
                             std::to_string(z0) + ":density=500 --bodies-out " + csv + " --diag-every 1");
    ASSERT_EQ(r.code, 0) << r.err;
    std::istringstream in(test::slurp(csv));
    std::string line;
    std::getline(in, line);
    ASSERT_EQ(line.rfind("step,time,body,x,y,z,", 0), 0u) << line;
    size_t rows = 0;
    double last = 0;
    while (std::getline(in, line)) {
      std::vector<double> v;
      std::stringstream ls(line);
      for (std::string c; std::getline(ls, c, ',');) v.push_back(std::stod(c));
      ASSERT_GE(v.size(), 6u);
      const double z = v[5];
      // Its faces (0.02 m from its centre) inside the tank at every step...
      EXPECT_GE(z - 0.02, -1e-6) << line;
      EXPECT_LE(z + 0.02, 0.06 + 1e-6) << line;
      last = z;
      ++rows;
    }
    EXPECT_EQ(rows, 151u);
    // ... and centred after the first step.
    EXPECT_NEAR(last, 0.03, 1e-4);
    const auto j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j["final"]["escaped"].get<double>(), 0.0) << r.out;
  }
}

// A scene whose own geometry contradicts itself is a usage error found
// before the device (before: exit 1 after it was opened), with or without
// solids and bodies, and
// lobovsky_dam_break refuses a depth wider than the experiment's tank
// (before: silently clamped to 0.15 m while --json showed the value given).
TEST(SphScenesCli, SceneGeometryErrorsAreUsageErrors) {
  using eddy::test::run;
  const std::string base = "run --device cpu --sim sph --steps 1 --quiet ";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"--scene dam_break --set spacing=0.02 --set depth=0.008", "depth = 0.008 m rounds to no particle layer"},
      {"--scene dam_break --set spacing=0.02 --set depth=0.06 --set column_width=100",
       "column_width (100 m) does not fit in tank_length"},
      {"--scene drop --set spacing=0.02 --set depth=0.1 --set drop_height=1000", "does not fit in tank_height"},
      {"--scene lobovsky_dam_break --set spacing=0.03 --set depth=1000",
       "depth = 1000 m is wider than the experiment's tank (0.15 m)"},
      // with solids or bodies too (before: found only when the scene was built, exit 1)
      {"--scene dam_break --set spacing=0.02 --set depth=0.06 --set column_width=100 "
       "--obstacle box:size=0.05:pos=0.3,0.1,0.03",
       "column_width (100 m) does not fit in tank_length"},
      {"--scene dam_break --set spacing=0.02 --set depth=0.06 --set column_width=100 "
       "--body box:size=0.05:pos=0.3,0.1,0.03:density=500",
       "column_width (100 m) does not fit in tank_length"}};
  for (const auto& [args, needle] : cases) {
    SCOPED_TRACE(args);
    const auto r = run(kCli, base + args);
    EXPECT_EQ(r.code, 2) << r.err;
    EXPECT_NE(r.err.find(needle), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find("eddy: device"), std::string::npos) << r.err;
  }
  EXPECT_EQ(run(kCli, base + "--scene lobovsky_dam_break --set spacing=0.03 --set depth=0.15").code, 0);
}

// A static obstacle far larger than the tank, partly inside it (a 4 x 4 m
// slab under a 0.4 x 0.2 m tank), holds boundary particles only within the
// fluid's reach of the tank, and its SDF grid covers only that region: before,
// it held all of its ~80 000 surface samples here (and, at the default
// spacing, its setup ran for minutes). The fluid stays out of it.
TEST(SphObstaclesCli, AnObstacleMuchLargerThanTheTankIsSampledOnlyNearIt) {
  using eddy::test::run;
  const std::string b = "run --device cpu --sim sph --scene dam_break --set spacing=0.02 --set depth=0.2 "
                        "--set column_width=0.1 --set column_height=0.15 --steps 20 --quiet --json ";
  const auto big = run(kCli, b + "--obstacle box:size=4,0.04,4:pos=0.2,0.02,0.1");
  ASSERT_EQ(big.code, 0) << big.err;
  const auto j = nlohmann::json::parse(big.out);
  // The slab at boundary spacing 0.5 dx = 0.01 m: 2 x 16 m^2 / 1e-4 m^2 = 320 000
  // samples on its faces; the part within reach (the tank plus h + 2 spacings
  // around it, about 0.53 x 0.33 m of each face) is under 2 %.
  const double boundary = j["boundary_particles"].get<double>();
  EXPECT_GT(boundary, 0.0);
  EXPECT_LT(boundary, 0.02 * 320000) << big.out;
  EXPECT_EQ(j["final"]["penetrations"].get<double>(), 0.0) << big.out;
  EXPECT_EQ(j["final"]["escaped"].get<double>(), 0.0) << big.out;
  // The same slab as a mesh (its samples are also moved inward by the inset,
  // only those that can end within reach): as many boundary particles, to
  // within the two samplers' difference.
  const auto mesh = run(kCli, b + "--obstacle mesh:file=" + std::string(EDDY_TEST_DATA) +
                                  "/cube.obj:scale=4,0.04,4:pos=0.2,0.02,0.1");
  ASSERT_EQ(mesh.code, 0) << mesh.err;
  const auto jm = nlohmann::json::parse(mesh.out);
  const double meshBoundary = jm["boundary_particles"].get<double>();
  EXPECT_GT(meshBoundary, 0.5 * boundary) << mesh.out;
  EXPECT_LT(meshBoundary, 2 * boundary) << mesh.out;
  EXPECT_EQ(jm["final"]["penetrations"].get<double>(), 0.0) << mesh.out;
  EXPECT_EQ(jm["final"]["escaped"].get<double>(), 0.0) << mesh.out;
  // 100 m across (2e8 samples over the whole surface, over the cap of 2e7):
  // sampled only within reach of the tank, so as many as the 4 m slab's,
  // as a box and as a mesh.
  for (const std::string& obstacle : {std::string("box:size=100,0.04,100:pos=0.2,0.02,0.1"),
                                     "mesh:file=" + std::string(EDDY_TEST_DATA) +
                                         "/cube.obj:scale=100,0.04,100:pos=0.2,0.02,0.1"}) {
    SCOPED_TRACE(obstacle);
    const auto huge = run(kCli, b + "--obstacle " + obstacle);
    ASSERT_EQ(huge.code, 0) << huge.err;
    const auto jh = nlohmann::json::parse(huge.out);
    const double n = jh["boundary_particles"].get<double>();
    EXPECT_GT(n, 0.8 * boundary) << huge.out;
    EXPECT_LT(n, 1.25 * boundary) << huge.out;
    EXPECT_EQ(jh["final"]["penetrations"].get<double>(), 0.0) << huge.out;
    EXPECT_EQ(jh["final"]["escaped"].get<double>(), 0.0) << huge.out;
  }
}

// A pressure probe inside a static obstacle would only ever read 0: refused
// naming the probe and the obstacle. The scene's sensors on the obstacle's
// faces (SPHERIC P1-P8) are not inside.
TEST(SphObstaclesCli, PressureProbeInsideAnObstacleIsRefused) {
  using eddy::test::run;
  const std::string dir = eddy::test::tempDir();
  const std::string b = "run --device cpu --quiet --sim sph --scene spheric_dam_break --set spacing=0.05 "
                        "--steps 1 --probe-out " + dir + "/p.csv ";
  auto r = run(kCli, b + "--probe pressure:IN:0.744,0.08,0.5");
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_NE(r.err.find("probe IN"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("inside the obstacle box:size=0.161"), std::string::npos) << r.err;
  // an added (rotated) obstacle too; a level probe above it is fine
  const std::string d = "run --device cpu --quiet --sim sph --scene dam_break --set spacing=0.02 --set depth=0.2 "
                        "--set column_width=0.1 --set column_height=0.15 --steps 1 --probe-out " + dir +
                        "/q.csv --obstacle box:size=0.06:pos=0.3,0.03,0.1:rot=0,45,0 ";
  r = run(kCli, d + "--probe pressure:Q:0.3,0.02,0.135");  // 0.035 from the centre along z: inside (rotated)
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_NE(r.err.find("probe Q"), std::string::npos) << r.err;
  r = run(kCli, d + "--probe pressure:F:0.3,0.06,0.1 --probe level:L:0.3,0.1");  // on the top face; above
  EXPECT_EQ(r.code, 0) << r.err;
  r = run(kCli, b + "--probe pressure:OUT:0.9,0.08,0.5");
  EXPECT_EQ(r.code, 0) << r.err;
  // An added obstacle over the scene's own sensor P1 (x 0.8245, y 0.021,
  // z 0.471), no --probe given: the message names the scene's probes, not
  // --probe (as it did).
  r = run(kCli, b + "--obstacle box:size=0.1:pos=0.85,0.05,0.471");
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_NE(r.err.find("scene spheric_dam_break: its built-in probes: probe P1"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("--probe:"), std::string::npos) << r.err;
}

// A mesh that cannot be used (missing, a folder, empty, not a mesh, not
// closed) is a usage error (exit 2) found before the device is opened,
// naming the file; from a config file also the file and the key.
TEST(SphObstaclesCli, BadMeshesAreUsageErrorsBeforeTheDevice) {
  using eddy::test::run;
  const std::string dir = eddy::test::tempDir();
  const std::string data = EDDY_TEST_DATA;
  eddy::test::writeFile(dir + "/garbage.stl", "this is not a mesh\n\x01\x02\x03");
  const std::string b = "run --device cpu --sim sph --scene dam_break --set spacing=0.02 --set depth=0.2 "
                        "--set column_width=0.1 --set column_height=0.15 --steps 1 ";
  for (const std::string& file : {dir + "/missing.stl", dir, data + "/empty.stl", dir + "/garbage.stl",
                                  data + "/open_box.stl"}) {
    for (const std::string flag : {"--obstacle mesh:file=", "--body mesh:density=500:file="}) {
      SCOPED_TRACE(flag + file);
      const auto r = run(kCli, b + flag + file + ":scale=0.05:pos=0.25,0,0.05");
      EXPECT_EQ(r.code, 2) << r.err;
      EXPECT_NE(r.err.find(flag.substr(0, flag.find(' '))), std::string::npos) << r.err;
      EXPECT_NE(r.err.find(file), std::string::npos) << r.err;
      EXPECT_EQ(r.err.find("eddy: device"), std::string::npos) << r.err;
    }
  }
  // A vertex that is not a number is named as such (before: "all 1 triangles are degenerate").
  eddy::test::writeFile(dir + "/nan.stl", "solid t\n facet normal 0 0 1\n  outer loop\n   vertex 0 0 0\n"
                                          "   vertex 1 0 0\n   vertex 0 nan 0\n  endloop\n endfacet\nendsolid t\n");
  {
    const auto r = run(kCli, b + "--obstacle mesh:file=" + dir + "/nan.stl:scale=0.05:pos=0.25,0,0.05");
    EXPECT_EQ(r.code, 2) << r.err;
    EXPECT_NE(r.err.find(dir + "/nan.stl: triangle 1 of 1 has a non-finite vertex coordinate"), std::string::npos)
        << r.err;
  }
  const std::string cfg = dir + "/mesh.json";
  eddy::test::writeFile(cfg, R"({"sim": "sph", "params": {"spacing": 0.02, "depth": 0.2, "column_width": 0.1,
      "column_height": 0.15}, "obstacles": [{"shape": "mesh", "file": ")" + data +
                                 R"(/open_box.stl", "scale": 0.05, "position": [0.25, 0, 0.05]}]})");
  const auto r = run(kCli, b + "--config " + cfg);
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_NE(r.err.find("--config " + cfg + ": key 'obstacles[0]'"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("not closed"), std::string::npos) << r.err;
}

// A length is rounded to whole spacings, at least one: the check refuses one
// that rounds to none (less than half a spacing), and its message says so.
TEST(SphScenes, LengthsRoundToWholeSpacingsAndTheMessageSaysWhen) {
  Params p(sphParamDecl());
  p.set("spacing", 0.0105);  // depth 0.008: one layer, 0.0105 deep
  EXPECT_DOUBLE_EQ(sphSceneSize("dam_break", p).tank[2], 0.0105);
  p.set("depth", 0.005);     // less than half a spacing: no layer
  try {
    (void)sphSceneSize("dam_break", p);
    ADD_FAILURE() << "accepted";
  } catch (const Error& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("depth = 0.005 m rounds to no particle layer"), std::string::npos) << m;
    EXPECT_NE(m.find("less than half a particle spacing"), std::string::npos) << m;
  }
}

// A wider support (smoothing_ratio 3.0, DFSPH): the boundary particles lie
// deeper in proportion (sphBoundaryInset), because the fluid rests a fixed
// fraction of h off them. Measured (PoCL, 2026-12-06): the force on the box
// 0.889 rho g V (0.933 at the default 2.2 here); with the inset fixed at
// 0.7 dx it was 1.226 (the wider gap adds to the solid's volume) and the
// fluid next to the box started compressed. Asserted: 15 %, so that the
// fixed inset fails.
TEST(SphObstacles, DfsphSubmergedBoxAtAWideSupport) {
  Params p(sphParamDecl());
  EXPECT_EQ(p.get("smoothing_ratio"), kSphInsetReferenceRatio);  // the inset's reference: the default
  EXPECT_DOUBLE_EQ(sphBoundaryInset(p, 0.04), 0.7 * 0.04);
  p.setAssignment("solver=dfsph");
  p.set("smoothing_ratio", 3.0);
  EXPECT_DOUBLE_EQ(sphBoundaryInset(p, 0.04), 0.7 * 0.04 * 3.0 / 2.2);
  const TankResult r = submergedBox(p);
  EXPECT_NEAR(r.force, r.buoyancy, 0.15 * r.buoyancy);
  EXPECT_EQ(r.inside, 0u);
}

// A solid thinner than the boundary inset needs (wave_tank's piston, 4 cm
// thick, at spacings of 4, 3 and 2 cm): its boundary particles lie closer to
// its surface, so the fluid is kept that much farther from it
// (dropInsideSolids). Before, the fluid half a spacing off the piston summed
// to 1.22, 1.15 and 1.03 rho0 and DFSPH's first steps threw it off at 19, 5
// and 1.5 m/s (the piston moves at 0.25 m/s at most).
TEST(SphObstacles, FluidStartsAtRestBesideASolidThinnerThanTheInset) {
  for (double dx : {0.04, 0.03, 0.02}) {
    SCOPED_TRACE("spacing " + std::to_string(dx));
    Params p(sphParamDecl());
    p.setAssignment("solver=dfsph");
    p.set("spacing", dx);
    p.set("bodies", 0);
    SphSim sim(test::context(), p, makeSphScene("wave_tank", p));
    const double start = sim.diagnostics().maxDensityRatio;
    while (sim.syncTime() < 0.01) sim.step();
    const auto d = sim.diagnostics();
    std::printf("wave_tank at spacing %.2f m: max rho/rho0 %.4f at the start; after %.3f s max speed %.3f m/s\n", dx,
                start, sim.syncTime(), d.maxSpeed);
    EXPECT_LT(start, 1.01);
    EXPECT_LT(d.maxSpeed, 0.5);
    EXPECT_EQ(d.counters.penetrations, 0u);
  }
}
