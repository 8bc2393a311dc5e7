// The run loop (sim/session): the diagnostics cadence and the last row, the
// stop request at a step boundary, --until by simulated time, and the finite
// checks (before the first step, every checkEvery steps, once at the end).
#include "session.hpp"
#include "simulation.hpp"
#include "test_util.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

using namespace eddy;

namespace {

// A simulation of one particle whose diagnostics row is its step number and
// whose position turns NaN at step `nanAt` (0: never).
class CountingSim : public Simulation {
 public:
  CountingSim(Context& ctx, double dt, uint64_t nanAt = 0, uint64_t collapseAt = 0,
              double collapsedDt = 0)
      : Simulation(ctx, decl()), dt_(dt), nanAt_(nanAt), collapseAt_(collapseAt),
        collapsedDt_(collapsedDt),
        pos_(ctx.createBuffer(CL_MEM_READ_WRITE, sizeof(cl_float4), "counting")) {
    write(0.f);
  }
  static const std::vector<ParamDesc>& decl() {
    static const std::vector<ParamDesc> d;
    return d;
  }
  std::string kind() const override { return "counting"; }
  size_t size() const override { return 1; }
  void step() override {
    ++steps_;
    time_ += collapseAt_ && steps_ > collapseAt_ ? collapsedDt_ : dt_;
    if (steps_ == nanAt_) write(std::numeric_limits<float>::quiet_NaN());
  }
  std::vector<std::string> diagColumns() const override { return {"step"}; }
  std::vector<double> diagRow() override { return {double(steps_)}; }
  std::vector<std::string> stateColumns() const override { return {"x", "y", "z"}; }
  std::vector<std::vector<double>> stateRows() override { return {{0, 0, 0}}; }
  const cl::Buffer& positionBuffer() const override { return pos_; }

 private:
  void write(float v) {
    const cl_float4 p = makeFloat4(v, 0, 0, 0);
    ctx_.queue().enqueueWriteBuffer(pos_, CL_TRUE, 0, sizeof p, &p);
  }
  double dt_;
  uint64_t nanAt_, collapseAt_;  // collapseAt_ > 0: dt becomes collapsedDt_ after that step
  double collapsedDt_;
  cl::Buffer pos_;
};

// The step column of every data row of a diagnostics CSV.
std::vector<int> rowSteps(const std::string& csv) {
  std::istringstream in(csv);
  std::string line;
  std::getline(in, line);
  EXPECT_EQ(line, "step");
  std::vector<int> steps;
  while (std::getline(in, line)) steps.push_back(std::stoi(line));
  return steps;
}

}  // namespace

TEST(Session, DiagnosticsEveryKStepsAndTheLastRowOnce) {
  for (const uint64_t total : {uint64_t(25), uint64_t(30), uint64_t(1)}) {
    CountingSim sim(test::context(), 0.01);
    SessionSettings s;
    s.steps = total;
    s.diagEvery = 10;
    Session session(sim, s);
    std::ostringstream diag;
    session.setDiag(&diag);
    session.begin();
    const SessionEnd end = session.run();
    EXPECT_FALSE(end.stopped);
    session.end();
    EXPECT_EQ(sim.steps(), total);
    EXPECT_EQ(session.stepsRun(), total);
    std::vector<int> want;
    for (uint64_t k = 0; k <= total; k += 10) want.push_back(int(k));
    if (total % 10) want.push_back(int(total));
    EXPECT_EQ(rowSteps(diag.str()), want) << "steps " << total;
    EXPECT_EQ(session.firstRow(), std::vector<double>{0.0});
    EXPECT_EQ(session.lastRow(), std::vector<double>{double(total)});
  }
}

TEST(Session, StopIsHonouredAtAStepBoundaryAndCountsThisRunsSteps) {
  CountingSim sim(test::context(), 0.01);
  for (int i = 0; i < 5; ++i) sim.step();  // as after --load: steps count from here
  SessionSettings s;
  s.steps = 1000;
  Session session(sim, s);
  session.begin();
  int asked = 0;
  std::vector<uint64_t> progress;
  const SessionEnd end =
      session.run([&] { return ++asked > 7; }, [&](uint64_t step) { progress.push_back(step); });
  EXPECT_TRUE(end.stopped);
  EXPECT_EQ(session.startStep(), 5u);
  EXPECT_EQ(session.stepsRun(), 7u);
  EXPECT_EQ(sim.steps(), 12u);
  ASSERT_EQ(progress.size(), 7u);
  EXPECT_EQ(progress.front(), 6u);
  EXPECT_EQ(progress.back(), 12u);
}

TEST(Session, UntilStopsAtTheFirstStepAtOrPastTheTime) {
  for (const double dt : {0.1, 0.003, 0.7}) {
    CountingSim sim(test::context(), dt);
    SessionSettings s;
    s.until = 1.0;
    Session session(sim, s);
    session.begin();
    session.run();
    // The time is checked now and then, never before it could be reached:
    // the run ends at most at the check after the first step past the time.
    const double need = std::ceil(1.0 / dt - 1e-9);
    EXPECT_GE(double(sim.steps()), need) << "dt " << dt;
    EXPECT_LE(double(sim.steps()), 2 * need + 1) << "dt " << dt;
    EXPECT_GE(sim.time(), 1.0 - 1e-9);
  }
  // A tiny end time runs a step (an absolute tolerance of 1e-12 ran none).
  for (const double until : {1e-12, 1e-15}) {
    CountingSim sim(test::context(), 1e-3);
    SessionSettings s;
    s.until = until;
    Session session(sim, s);
    session.begin();
    session.run();
    EXPECT_EQ(sim.steps(), 1u) << until;
  }
  EXPECT_TRUE(Session::reached(1.0 - 1e-13, 1.0));  // a sum of steps a rounding short
  EXPECT_FALSE(Session::reached(0.0, 1e-12));
  EXPECT_TRUE(Session::reached(0.0, 0.0));
}

// An --until run whose time step collapses (to 0, or a millionth and less of
// what it was) ends with an error naming it within a few thousand steps
// instead of never reaching the time; a slowdown of 1000x still runs on.
TEST(Session, UntilEndsWithAnErrorWhenTheTimeStepCollapses) {
  for (const double collapsed : {0.0, 1e-12, 1e-10}) {
    CountingSim sim(test::context(), 1e-3, 0, 300, collapsed);
    SessionSettings s;
    s.until = 1.0;
    Session session(sim, s);
    session.begin();
    try {
      session.run();
      FAIL() << "a collapsed time step (" << collapsed << " s) ran to the end";
    } catch (const Error& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find("time step collapsed"), std::string::npos) << what;
      EXPECT_NE(what.find("--until 1 s"), std::string::npos) << what;
    }
    EXPECT_LT(sim.steps(), 300u + 3000u) << collapsed;
    EXPECT_NEAR(sim.time(), 0.3 + collapsed * double(sim.steps() - 300), 1e-9);
  }
  CountingSim slow(test::context(), 1e-3, 0, 300, 1e-6);
  SessionSettings s;
  s.until = 0.301;  // 1000 more steps at the slower dt
  Session session(slow, s);
  session.begin();
  EXPECT_NO_THROW(session.run());
  EXPECT_GE(slow.time(), 0.301 - 1e-9);
}

TEST(Session, ANonFiniteStateIsFoundByThePeriodicOrTheFinalCheck) {
  {  // periodic check every 4 steps; NaN at step 6 -> found by step 12 at the latest
    CountingSim sim(test::context(), 0.01, 6);
    SessionSettings s;
    s.steps = 1000;
    s.checkEvery = 4;
    Session session(sim, s);
    session.begin();
    EXPECT_THROW(session.run(), BlowUpError);
    EXPECT_GE(sim.steps(), 8u);
    EXPECT_LE(sim.steps(), 12u);
  }
  {  // no periodic checks: the final one still finds it
    CountingSim sim(test::context(), 0.01, 3);
    SessionSettings s;
    s.steps = 9;
    s.checkEvery = 0;
    Session session(sim, s);
    session.begin();
    EXPECT_THROW(session.run(), BlowUpError);
    EXPECT_EQ(sim.steps(), 9u);
  }
  {  // a state that is bad before the first step: begin() refuses it
    CountingSim sim(test::context(), 0.01, 1);
    sim.step();
    Session session(sim, SessionSettings{});
    EXPECT_THROW(session.begin(), BlowUpError);
  }
}

// ---- The frame API (the desktop app's Controller, bench frame) ----

TEST(Session, AdvanceRunsUpToTheAskedStepsAndStopsWhereTheRunIsDone) {
  CountingSim sim(test::context(), 0.01);
  SessionSettings s;
  s.steps = 10;
  s.checkEvery = 0;
  Session session(sim, s);
  EXPECT_EQ(session.advance(4), 4u);
  EXPECT_EQ(session.advance(0), 0u);
  EXPECT_EQ(session.advance(100), 6u) << "the run's 10 steps end it";
  EXPECT_EQ(session.advance(3), 0u);
  EXPECT_EQ(sim.steps(), 10u);
  SessionSettings forever;
  forever.steps = SessionSettings::kUnbounded;
  Session endless(sim, forever);
  EXPECT_EQ(endless.advance(1000), 1000u);
  EXPECT_EQ(sim.steps(), 1010u);
}

TEST(Session, FrameChecksFindABlowUpWithoutWaitingAndSettleWhenPaused) {
  {  // every 2 frames of 3 steps; NaN at step 7: enqueued after frame 4 (step 12),
     // its answer read by frameStart() of a later frame, before that frame's steps
    CountingSim sim(test::context(), 0.01, 7);
    SessionSettings s;
    s.steps = SessionSettings::kUnbounded;
    s.checkEvery = 0;
    Session session(sim, s);
    std::optional<BlowUp> found;
    int frames = 0;
    while (!found && frames < 50) {
      found = session.frameStart();
      if (found) break;
      const uint64_t n = session.advance(3);
      found = session.frameEnd(n, 2);
      test::context().queue().finish();  // the device keeps up, as a drawn frame waits for it
      ++frames;
    }
    ASSERT_TRUE(found.has_value());
    EXPECT_EQ(found->step, 12u) << "the first check after the NaN appeared";
    EXPECT_GE(found->particles, 1u);
    EXPECT_LE(sim.steps(), 18u) << "no more than one frame of steps after the checked one";
  }
  {  // a frame without steps settles: the unchecked steps are checked now
    CountingSim sim(test::context(), 0.01, 2);
    SessionSettings s;
    s.steps = SessionSettings::kUnbounded;
    s.checkEvery = 0;
    Session session(sim, s);
    EXPECT_FALSE(session.frameEnd(session.advance(3), 100).has_value());
    const auto b = session.frameEnd(0, 100);  // paused
    ASSERT_TRUE(b.has_value());
    EXPECT_EQ(b->step, 3u);
    EXPECT_FALSE(session.frameEnd(0, 100).has_value()) << "nothing left unchecked";
  }
  {  // everyFrames 0: no checks at all
    CountingSim sim(test::context(), 0.01, 1);
    Session session(sim, SessionSettings{});
    EXPECT_FALSE(session.frameEnd(session.advance(3), 0).has_value());
    EXPECT_FALSE(session.frameEnd(0, 0).has_value());
    EXPECT_FALSE(session.frameStart().has_value());
  }
}

namespace {
// A clock the host sees late, as SPH's: the sample is of step `sampleStep`.
class LaggingClockSim : public CountingSim {
 public:
  using CountingSim::CountingSim;
  uint64_t sampleStep = 0;
  double sampleTime = 0, sampleDt = 0;
  ClockSample clockSample() override { return {sampleStep, sampleTime, sampleDt}; }
};
}  // namespace

TEST(Session, EstimateTimeExtrapolatesTheLastClockSample) {
  LaggingClockSim sim(test::context(), 0.01);
  Session session(sim, SessionSettings{});
  Session::TimeEstimate e = session.estimateTime();
  EXPECT_EQ(e.dt, 0.0) << "no sample with a time step yet";
  EXPECT_EQ(e.time, 0.0);
  session.advance(20);
  e = session.estimateTime();
  EXPECT_EQ(e.dt, 0.0);
  EXPECT_EQ(e.time, 0.0) << "without a dt, the sample's own time";
  sim.sampleStep = 16;
  sim.sampleTime = 0.16;
  sim.sampleDt = 0.01;
  e = session.estimateTime();
  EXPECT_DOUBLE_EQ(e.dt, 0.01);
  EXPECT_NEAR(e.time, 0.20, 1e-12) << "0.16 at step 16, plus 4 steps of 0.01";
  for (double bad : {-1.0, std::nan("")}) {
    sim.sampleDt = bad;
    e = session.estimateTime();
    EXPECT_EQ(e.dt, 0.0);
    EXPECT_DOUBLE_EQ(e.time, 0.16);
  }
}
