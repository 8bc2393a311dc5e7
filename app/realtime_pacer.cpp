#include "realtime_pacer.hpp"

#include <algorithm>
#include <cmath>

namespace eddy {

void RealtimePacer::setSpeed(double speed) {
  if (std::isfinite(speed) && speed > 0 && speed != speed_) {
    speed_ = speed;
    reset();
  }
}

void RealtimePacer::setBudget(double seconds) {
  if (!std::isnan(seconds) && seconds > 0) budget_ = seconds;  // infinity: no cap
}

void RealtimePacer::setMaxFrameTime(double seconds) {
  if (std::isfinite(seconds) && seconds > 0) maxFrame_ = seconds;
}

void RealtimePacer::setCatchUp(double window, double rate) {
  if (std::isfinite(window) && window >= 0) catchUpWindow_ = window;
  if (std::isfinite(rate) && rate >= 0) catchUpRate_ = rate;
}

void RealtimePacer::rememberStepCost(double seconds) {
  if (std::isfinite(seconds) && seconds > 0) stepCost_ = seconds;
}

void RealtimePacer::reset() {
  debt_ = 0;
  expected_ = 0;
  corrected_ = 0;
  anchored_ = false;
  factor_ = 0;
  recent_.clear();
  behind_ = false;
  elapsed_ = 0;
}

void RealtimePacer::observe(double simTime) {
  if (!std::isfinite(simTime)) return;
  if (anchored_) {
    const double ahead = simTime - expected_;  // > 0: the steps went further than planned
    debt_ -= ahead;
    corrected_ += ahead;
  }
  expected_ = simTime;
  anchored_ = true;
}

RealtimePacer::Plan RealtimePacer::plan(double wall, double dt, double stepCost) {
  Plan p;
  if (!(std::isfinite(wall) && wall > 0) || !(std::isfinite(dt) && dt > 0)) return p;
  wall = std::min(wall, maxFrame_);
  debt_ += speed_ * wall;
  // The whole number of steps nearest to the debt; the remainder (within half
  // a step either way) carries over, so simulated time follows the wall clock
  // to within half a step, neither systematically behind nor ahead. Debt from
  // earlier frames is spent at no more than the catch-up rate, so this frame
  // runs at most (1 + rate) s w, plus the step a remainder rounds to.
  const double spend = std::min(debt_, speed_ * wall * (1 + catchUpRate_) + 0.5 * dt);
  p.owed = spend;
  double want = std::max(0.0, std::floor(spend / dt + 0.5));  // none when ahead (debt < dt / 2)
  if (std::isfinite(stepCost) && stepCost > 0) {
    const double cap = std::max(1.0, std::floor(budget_ / stepCost));
    if (want > cap) {
      want = cap;
      p.limited = true;
    }
  }
  p.steps = uint64_t(want);
  // Behind: carry the shortfall up to the catch-up window (at least a step),
  // drop the rest, so a device that stays behind never owes more and more.
  spendOn(p, dt, p.limited ? catchUpWindow_ : -1.0);
  account(p, wall);
  return p;
}

RealtimePacer::Plan RealtimePacer::probe(double wall, double dt) {
  Plan p;
  p.steps = 1;
  if (!(std::isfinite(wall) && wall > 0)) return p;
  wall = std::min(wall, maxFrame_);
  debt_ += speed_ * wall;
  p.owed = speed_ * wall;
  spendOn(p, std::isfinite(dt) && dt > 0 ? dt : 0.0, std::max(catchUpWindow_, kProbeCarry));
  account(p, wall);
  return p;
}

void RealtimePacer::spendOn(Plan& p, double dt, double carry) {
  p.planned = double(p.steps) * dt;
  debt_ -= p.planned;
  expected_ += p.planned;
  if (carry >= 0) debt_ = std::min(debt_, std::max(dt, speed_ * carry));
}

void RealtimePacer::account(const Plan& p, double wall) {
  // The factor over about the last second of wall time: what the steps really
  // advanced as far as observe() has told (planned plus its corrections).
  recent_.emplace_back(wall, std::max(0.0, p.planned + corrected_));
  corrected_ = 0;
  double w = 0, advanced = 0;
  for (const auto& f : recent_) w += f.first;
  while (recent_.size() > 1 && w - recent_.front().first >= kFactorWindow) {
    w -= recent_.front().first;
    recent_.pop_front();
  }
  w = 0;
  for (const auto& f : recent_) w += f.first, advanced += f.second;
  factor_ = w > 0 ? advanced / w : 0.0;
  elapsed_ += wall;
  // Behind when the budget capped this frame, or (once the average covers a
  // second) the smoothed rate is under 95 % of the speed asked for.
  behind_ = p.limited || (elapsed_ >= 1.0 && factor_ < 0.95 * speed_);
}

}  // namespace eddy
