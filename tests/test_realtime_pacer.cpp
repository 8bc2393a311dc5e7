// The app's real-time pacing (app/realtime_pacer.hpp) driven by a fake clock:
// a frame of wall time w at speed s advances simulated time by s·w whenever the
// compute budget allows, and by less, reported, when it does not.
#include "realtime_pacer.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

namespace eddy {
namespace {

struct Totals {
  double wall = 0, sim = 0;
  uint64_t steps = 0;
  unsigned limitedFrames = 0;
};

// Runs `frames` frames of wall times from `wall()` against a simulation of
// constant time step dt and device cost per step `cost`.
template <class WallFn>
Totals drive(RealtimePacer& p, unsigned frames, WallFn wall, double dt, double cost) {
  Totals t;
  for (unsigned f = 0; f < frames; ++f) {
    const double w = wall();
    const auto plan = p.plan(w, dt, cost);
    EXPECT_NEAR(plan.planned, double(plan.steps) * dt, 1e-12);
    if (!plan.limited) {
      // Never plans more than it owes, and leaves less than a step owed.
      EXPECT_LE(plan.planned, plan.owed + 1e-12);
      EXPECT_LT(plan.owed - plan.planned, dt + 1e-12);
    }
    t.wall += w;
    t.sim += plan.planned;
    t.steps += plan.steps;
    t.limitedFrames += plan.limited;
  }
  return t;
}

TEST(RealtimePacer, KeepsPaceWithTheWallClockToWithinOneStep) {
  for (double speed : {0.1, 1.0, 2.5, 10.0}) {
    RealtimePacer p;
    p.setSpeed(speed);
    const double dt = 1.3e-4;
    const Totals t = drive(p, 600, [] { return 1.0 / 60; }, dt, 1e-6);
    EXPECT_EQ(t.limitedFrames, 0u) << speed;
    EXPECT_NEAR(t.sim, speed * t.wall, dt) << speed;
    EXPECT_TRUE(p.keepingUp()) << speed;
    EXPECT_NEAR(p.realtimeFactor(), speed, 0.02 * speed) << speed;
  }
}

TEST(RealtimePacer, JitteredFramesAndStepsLargerThanAFrame) {
  std::mt19937 rng(std::random_device{}());
  std::uniform_real_distribution<double> jitter(0.004, 0.05);
  for (double dt : {1e-5, 3e-3, 0.05}) {  // from many steps a frame to one step every few frames
    RealtimePacer p;
    const Totals t = drive(p, 2000, [&] { return jitter(rng); }, dt, 0);  // cost unknown: no cap
    EXPECT_EQ(t.limitedFrames, 0u);
    EXPECT_NEAR(t.sim, t.wall, dt) << dt;
  }
}

TEST(RealtimePacer, BudgetCapsTheStepsAndReportsTheFactorReached) {
  RealtimePacer p;
  p.setBudget(0.01);
  const double dt = 1e-4, cost = 1e-3;  // 10 steps fit a frame: 1e-3 s of a 1/60 s frame
  const Totals t = drive(p, 300, [] { return 1.0 / 60; }, dt, cost);
  EXPECT_EQ(t.limitedFrames, 300u);
  EXPECT_EQ(t.steps, 3000u);
  EXPECT_FALSE(p.keepingUp());
  EXPECT_NEAR(p.realtimeFactor(), 10 * dt * 60, 1e-3);  // 0.06x real time
  // The shortfall is not carried: once the device is fast again, the next
  // frame runs what one frame owes (plus at most one step), not a burst.
  const auto plan = p.plan(1.0 / 60, dt, 1e-7);
  EXPECT_FALSE(plan.limited);
  EXPECT_LE(plan.planned, 1.0 / 60 + dt + 1e-12);
  EXPECT_GE(plan.planned, 1.0 / 60 - dt - 1e-12);
}

TEST(RealtimePacer, AlwaysAtLeastOneStepWhenOwedEvenIfOneStepExceedsTheBudget) {
  RealtimePacer p;
  p.setBudget(0.001);
  const auto plan = p.plan(1.0 / 30, 1e-3, 0.5);  // one step costs 500x the budget
  EXPECT_EQ(plan.steps, 1u);
  EXPECT_TRUE(plan.limited);
}

TEST(RealtimePacer, StalledWindowDoesNotBurst) {
  RealtimePacer p;
  p.setMaxFrameTime(0.1);
  const auto plan = p.plan(5.0, 1e-3, 0);  // 5 s without a frame (dragged or minimised)
  EXPECT_EQ(plan.steps, 100u);
  EXPECT_NEAR(plan.owed, 0.1, 1e-12);
}

TEST(RealtimePacer, BadInputsRunNothing) {
  RealtimePacer p;
  for (double dt : {0.0, -1.0, std::nan(""), double(INFINITY)}) EXPECT_EQ(p.plan(0.016, dt, 0).steps, 0u);
  for (double w : {0.0, -1.0, std::nan("")}) EXPECT_EQ(p.plan(w, 1e-3, 0).steps, 0u);
  p.setSpeed(-2);  // ignored
  EXPECT_EQ(p.speed(), 1.0);
  EXPECT_EQ(p.plan(0.016, 1e-3, 0).steps, 16u);
}

TEST(RealtimePacer, SpeedChangeForgetsTheDebt) {
  RealtimePacer p;
  p.plan(0.0105, 1e-3, 0);  // 10 steps, 0.5e-3 carried
  p.setSpeed(2);
  const auto plan = p.plan(0.01, 1e-3, 0);
  EXPECT_EQ(plan.steps, 20u);
  EXPECT_NEAR(plan.owed, 0.02, 1e-12);
}

}  // namespace
}  // namespace eddy
