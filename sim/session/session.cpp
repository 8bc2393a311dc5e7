#include "session.hpp"

#include "io.hpp"
#include "vtk.hpp"

#include <algorithm>

namespace eddy {

Session::Session(Simulation& sim, SessionSettings settings)
    : sim_(sim), s_(settings), startStep_(sim.steps()) {}

void Session::begin() {
  startStep_ = sim_.steps();
  if (diag_) *diag_ << joinCsv(sim_.diagColumns()) << '\n';
  if (series_) series_->add(sim_.particleState());
  first_ = sim_.diagRow();
  if (diag_) *diag_ << joinCsv(first_) << '\n';
  nextCheck_ = 0;
  lastSteps_ = sim_.steps();
  lastTime_ = sim_.syncTime();
  if (auto b = sim_.checkFiniteNow()) throw BlowUpError(*b, sim_.kind());
  t0_ = Clock::now();
  sim_.profiler().reset();
}

void Session::step() {
  sim_.step();
  const uint64_t s = sim_.steps();
  if (s_.checkEvery && s % s_.checkEvery == 0)
    if (auto b = sim_.pollFinite()) throw BlowUpError(*b, sim_.kind());
  if (diag_ && s % s_.diagEvery == 0) *diag_ << joinCsv(sim_.diagRow()) << '\n';
  if (series_ && s % s_.exportEvery == 0) series_->add(sim_.particleState());
}

bool Session::finished() {
  if (!s_.until) return sim_.steps() - startStep_ >= s_.steps;
  if (sim_.steps() < nextCheck_) return false;
  const double t = sim_.syncTime();
  if (t >= *s_.until - 1e-12) return true;
  const double meanDt =
      sim_.steps() > lastSteps_ ? (t - lastTime_) / double(sim_.steps() - lastSteps_) : 0.0;
  const double left = meanDt > 0 ? (*s_.until - t) / meanDt : 0.0;
  nextCheck_ = sim_.steps() + std::clamp<uint64_t>(static_cast<uint64_t>(left / 2), 1, 1000);
  lastTime_ = t;
  lastSteps_ = sim_.steps();
  return false;
}

SessionEnd Session::run(const std::function<bool()>& stop,
                        const std::function<void(uint64_t)>& progress) {
  SessionEnd e;
  while (!(stop && stop()) && !finished()) {
    step();
    if (progress) progress(sim_.steps());
  }
  sim_.finish();
  // Once at the end whatever checkEvery is: a blow-up never ends in success.
  if (auto b = sim_.checkFiniteNow()) throw BlowUpError(*b, sim_.kind());
  e.stopped = stop && stop();
  e.wallSeconds = std::chrono::duration<double>(Clock::now() - t0_).count();
  return e;
}

const std::vector<double>& Session::end() {
  last_ = sim_.diagRow();
  const bool moved = sim_.steps() != startStep_;
  if (diag_ && moved && sim_.steps() % s_.diagEvery != 0) *diag_ << joinCsv(last_) << '\n';
  if (series_ && moved && sim_.steps() % s_.exportEvery != 0) series_->add(sim_.particleState());
  return last_;
}

}  // namespace eddy
