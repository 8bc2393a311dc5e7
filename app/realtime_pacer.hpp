// realtime_pacer.hpp: how many steps a frame runs so that simulated time keeps
// pace with the wall clock (the app's real-time mode, `bench frame --realtime`).
//
// Each frame of wall time w at speed s owes s·w of simulated time. The pacer
// keeps that debt and spends it in whole steps of the simulation's current time
// step (an estimate: SPH chooses dt on the device, the host only sees it late),
// the nearest whole number, carrying the rest (within half a step either way)
// over to the next frame, so that over many frames simulated time advances by
// s·Σw to within half a step.
//
// The steps of one frame are capped by a compute budget: budget / (device time
// of one step). When the cap bites, the device cannot keep up for that frame.
// What the frame could not run is carried, but only up to a catch-up window of
// simulated time (speed x 0.1 wall seconds by default): a short hiccup (one
// heavy frame in a dam break's impact) is made up by the frames after it, so
// that simulated time keeps following the wall clock, while a device that is
// behind for long drops the rest instead of piling up a debt (the "spiral of
// death": ever more steps owed by ever slower frames). Debt is repaid gently:
// a frame runs at most (1 + catch-up rate) x its own s.w (rate 0.25 by
// default), so catching up shows as the fluid running at most 25 % fast for a
// moment, never as a burst. The real-time factor actually reached is reported:
// the simulated time the frames of about the last wall second advanced over
// their wall time (a plain ratio over a window, so that a short first frame or
// a burst long gone does not hold it up: an exponential average seeded with
// the first frame showed 0.55x for a device reaching 0.13x, still 2x after
// 1.6 s).
//
// The time step is only an estimate (DFSPH's dt is adaptive and chosen on the
// device; the host learns it from a clock read that arrives a frame or so
// late). So the caller also reports, once per frame before plan(), the
// simulated time it believes the simulation has reached (observe()): the
// difference from what the plans so far should have reached goes into the
// debt, and a dt estimate that is off is made up a frame later instead of
// drifting.
//
// No clock or device is read here: the caller passes the frame's wall time and
// its estimates, so the logic is tested with a fake clock (tests/test_realtime_pacer.cpp).
#pragma once

#include <cstdint>
#include <deque>
#include <utility>

namespace eddy {

class RealtimePacer {
 public:
  struct Plan {
    uint64_t steps = 0;     // steps to run this frame
    double owed = 0;        // simulated time this frame asked for (s·w plus the debt it repays)
    double planned = 0;     // simulated time the steps will advance (steps · dt)
    bool limited = false;   // the compute budget capped the steps
  };

  // speed: simulated seconds per wall second (0.1..10 in the app).
  void setSpeed(double speed);
  double speed() const { return speed_; }
  // budget: device seconds one frame may spend on steps (default 0.025 s;
  // infinity: no cap, as for a batch recording, whose frames no one waits for).
  void setBudget(double seconds);
  double budget() const { return budget_; }
  // A wall interval longer than this (a stalled or minimised window) counts as
  // this long, so a pause never turns into a burst of catching up.
  void setMaxFrameTime(double seconds);
  // Catch-up: the budget's shortfall is carried up to speed x `window` wall
  // seconds (0: dropped at once, every capped frame is lost time), and a
  // frame spends at most (1 + rate) x speed x its wall time.
  void setCatchUp(double window, double rate);
  double catchUpWindow() const { return catchUpWindow_; }

  // wall: wall seconds since the previous frame; dt: the simulation's current
  // time step (> 0); stepCost: device seconds per step (<= 0 = not known yet:
  // no cap, since nothing has been measured).
  Plan plan(double wall, double dt, double stepCost);

  // A frame that runs one step before frames can be planned (planPacedFrame's
  // probe: dt or a step's device time not known yet). It owes s·w as any
  // frame does; its step advances dt (0 when dt is not known: observe()
  // credits what the step did advance). The shortfall is carried up to
  // kProbeCarry wall seconds' worth (x speed), longer than a capped frame's
  // catch-up window: probing is the start's one-off, not a device behind, and
  // a recording started with the run then covers its video's length x speed.
  // Planned frames repay it at the catch-up rate.
  Plan probe(double wall, double dt);
  static constexpr double kProbeCarry = 0.5;

  // The simulated time reached so far, as well as the caller knows it now
  // (a clock sample extrapolated with its dt). The first call after reset()
  // only anchors; later ones correct the debt by (simTime - the time the
  // plans since then should have reached). Non-finite values are ignored.
  void observe(double simTime);

  // Simulated seconds per wall second reached over the frames of about the
  // last kFactorWindow wall seconds (all frames since reset() until that much
  // has passed), and whether it falls short of the speed asked for.
  double realtimeFactor() const { return factor_; }
  bool keepingUp() const { return !behind_; }
  static constexpr double kFactorWindow = 1.0;
  // Forget the debt and the history (after a reset, a pause or a speed change).
  void reset();

  // The device time of one step last measured (seconds; 0: none yet). Kept
  // across reset(): a pause, a speed change or a reset of the profiler's
  // statistics (--stats, bench frame: its window of step times is emptied)
  // does not change what a step costs. forgetStepCost() for a new simulation.
  void rememberStepCost(double seconds);
  double rememberedStepCost() const { return stepCost_; }
  void forgetStepCost() { stepCost_ = 0; }

 private:
  // A frame's steps of dt taken off the debt; what it still owes is then
  // held to `carry` wall seconds' worth (x speed, at least a step; < 0: all
  // of it is carried).
  void spendOn(Plan& p, double dt, double carry);
  // The real-time factor over recent frames and keepingUp(), after a frame.
  void account(const Plan& p, double wall);

  double speed_ = 1.0;
  double budget_ = 0.025;
  double maxFrame_ = 0.1;
  double catchUpWindow_ = 0.1;  // wall seconds of shortfall carried (x speed)
  double catchUpRate_ = 0.25;   // a frame spends at most (1 + rate) s w
  double debt_ = 0;     // simulated time owed and not yet planned
  double expected_ = 0; // simulated time the plans should have reached (after observe())
  double corrected_ = 0;  // observe()'s corrections since the last plan (for the factor)
  bool anchored_ = false;
  double factor_ = 0;   // advanced / wall over recent_
  std::deque<std::pair<double, double>> recent_;  // (wall, simulated time advanced) per frame
  bool behind_ = false;
  double elapsed_ = 0;  // wall seconds since reset()
  double stepCost_ = 0; // rememberStepCost()
};

}  // namespace eddy
