// Physics of the N-body integrator: Kepler two-body orbit (analytic) and an
// equilibrium Plummer sphere (see tests/data/nbody.md, from shared/validation).
#include "nbody.hpp"
#include "test_util.hpp"

#include <gtest/gtest.h>

#include <cmath>

using namespace eddy;

namespace {

// Equal masses m1 = m2 = 1, a = 1, e = 0.5, G = 1, started at pericentre in the
// centre-of-mass frame: P = 2 pi / sqrt(2), E = -0.5 (nbody.md section 1).
const double kPeriod = 4.442882938158366;

struct KeplerRun {
  double posError;    // max |x_i(P) - x_i(0)| after one period
  double energyError; // max |E(t) - E0| / |E0| over the orbit
  double e0;
};

KeplerRun runKepler(int stepsPerOrbit) {
  std::vector<Body> b = {Body{-0.25, 0, 0, 0, -1.224744871391589, 0, 1},
                         Body{0.25, 0, 0, 0, 1.224744871391589, 0, 1}};
  Params params(nbodyParamDecl());
  params.set("dt", kPeriod / stepsPerOrbit);
  params.set("softening", 1e-6);  // negligible against r >= 0.5
  NBodySim sim(test::context(), params, b);
  KeplerRun r{0, 0, sim.diagnostics().total};
  for (int s = 0; s < stepsPerOrbit; ++s) {
    sim.step();
    if (s % 10 == 0) {
      const double e = sim.diagnostics().total;
      r.energyError = std::max(r.energyError, std::fabs(e - r.e0) / std::fabs(r.e0));
    }
  }
  const auto p = sim.readPositions();
  for (int i = 0; i < 2; ++i) {
    const double dx = p[i].s[0] - b[i].x, dy = p[i].s[1] - b[i].y, dz = p[i].s[2] - b[i].z;
    r.posError = std::max(r.posError, std::sqrt(dx * dx + dy * dy + dz * dz));
  }
  return r;
}

TEST(Kepler, OrbitClosesAndEnergyErrorScalesAsDtSquared) {
  const KeplerRun coarse = runKepler(1000), fine = runKepler(2000);
  std::printf("Kepler e=0.5: dt=P/1000 pos err %.3e, max dE/E %.3e; dt=P/2000 pos err %.3e, "
              "max dE/E %.3e\n",
              coarse.posError, coarse.energyError, fine.posError, fine.energyError);
  EXPECT_NEAR(coarse.e0, -0.5, 1e-6);  // E = -G m1 m2 / (2a)
  // Tolerance from dt^2: KDK leapfrog's phase error per orbit is C (dt / t_peri)^2
  // with t_peri = r_p / v_p = 0.5 / 2.449 = 0.204 the pericentre time scale. For
  // dt = P/1000 = 4.44e-3: (dt / t_peri)^2 = 4.7e-4; with C <= 10 the bodies are
  // back within 5e-3 of their start. Halving dt must cut the error about 4x.
  EXPECT_LT(coarse.posError, 5e-3);
  EXPECT_LT(fine.posError, coarse.posError / 3.0);
  EXPECT_GT(fine.posError, coarse.posError / 5.0);
  // Energy error: second order, bounded; halving dt divides it by about 4.
  EXPECT_LT(coarse.energyError, 4.7e-4 * 10);
  const double ratio = coarse.energyError / fine.energyError;
  EXPECT_GT(ratio, 3.2) << "energy error should scale as dt^2";
  EXPECT_LT(ratio, 4.8) << "energy error should scale as dt^2";
}

TEST(Plummer, SamplerMatchesTheAnalyticModel) {
  // Henon units: half-mass radius 0.768571, E = -1/4 (nbody.md section 2).
  const size_t n = 20000;
  auto b = makeNBodyScene("plummer", n, 7);
  std::vector<double> r;
  double M = 0, P[3] = {0, 0, 0};
  for (const auto& p : b) {
    r.push_back(std::sqrt(p.x * p.x + p.y * p.y + p.z * p.z));
    M += p.m;
    P[0] += p.m * p.vx; P[1] += p.m * p.vy; P[2] += p.m * p.vz;
  }
  std::nth_element(r.begin(), r.begin() + n / 2, r.end());
  EXPECT_NEAR(M, 1.0, 1e-12);
  EXPECT_NEAR(r[n / 2], 0.768571, 0.768571 * 0.03);
  for (double c : P) EXPECT_NEAR(c, 0.0, 1e-12);
  // Same seed, same bodies; another seed, other bodies.
  auto again = makeNBodyScene("plummer", n, 7);
  auto other = makeNBodyScene("plummer", n, 8);
  EXPECT_EQ(again[123].x, b[123].x);
  EXPECT_NE(other[123].x, b[123].x);
}

TEST(Plummer, StaysInVirialEquilibriumAndConservesEnergyAndMomentum) {
  const size_t n = 1024;
  Params params(nbodyParamDecl());
  // eps ~ 1/2 the mean spacing at the half-mass radius; dt so a body moves
  // < eps/2 per step (Rodionov & Sotnikova 2005, nbody.md section 3).
  params.set("softening", 0.04);
  params.set("dt", 0.005);
  NBodySim sim(test::context(), params, makeNBodyScene("plummer", n, 3));
  const auto d0 = sim.diagnostics();
  double msum = 0;  // sum m|v|: the scale of momentum rounding
  for (const auto& v : sim.readVelocities())
    msum += (1.0 / n) * std::sqrt(double(v.s[0]) * v.s[0] + double(v.s[1]) * v.s[1] + double(v.s[2]) * v.s[2]);
  const double tCross = 2.0 * std::sqrt(2.0);
  const int steps = int(std::ceil(3 * tCross / 0.005));  // three crossing times
  std::vector<double> dE;
  double maxDp = 0;
  for (int s = 1; s <= steps; ++s) {
    sim.step();
    if (s % 25 == 0) {
      const auto d = sim.diagnostics();
      dE.push_back((d.total - d0.total) / std::fabs(d0.total));
      for (int k = 0; k < 3; ++k) maxDp = std::max(maxDp, std::fabs(d.momentum[k] - d0.momentum[k]));
    }
  }
  const auto d1 = sim.diagnostics();
  double maxAbs = 0;
  for (double e : dE) maxAbs = std::max(maxAbs, std::fabs(e));
  // Secular drift: mean error of the last third vs the first third.
  const size_t third = dE.size() / 3;
  double early = 0, late = 0;
  for (size_t i = 0; i < third; ++i) {
    early += dE[i] / third;
    late += dE[dE.size() - 1 - i] / third;
  }
  std::printf("Plummer N=%zu: Q0 = %.4f, Q(3 t_cr) = %.4f, max |dE/E| = %.3e, drift %.3e, "
              "max |dP| / sum m|v| = %.3e\n",
              n, d0.virialRatio, d1.virialRatio, maxAbs, late - early, maxDp / msum);
  // 2K/|W| = 1 in equilibrium; sampling noise is O(N^-1/2) ~ 0.03 at N = 1024.
  EXPECT_NEAR(d0.virialRatio, 1.0, 0.1);
  EXPECT_NEAR(d1.virialRatio, 1.0, 0.15);
  EXPECT_NEAR(d0.total, -0.25, 0.02);  // Henon units (softening lowers |W| slightly)
  EXPECT_LT(maxAbs, 1e-3);             // REBOUND's order-2 leapfrog acceptance level
  EXPECT_LT(std::fabs(late - early), 2e-4);
  // fp32 forces are not pairwise antisymmetric: momentum is conserved to
  // rounding, ~1e-7 relative per step, a random walk over ~1700 steps.
  EXPECT_LT(maxDp / msum, 1e-5);
}

}  // namespace
