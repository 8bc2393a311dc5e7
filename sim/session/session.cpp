#include "session.hpp"

#include "io.hpp"
#include "vtk.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>

namespace eddy {

BodyBlowUpError::BodyBlowUpError(const BlowUp& b, std::string_view sim, size_t badBodies,
                                 size_t bodies)
    : BlowUpError(b, sim) {
  std::ostringstream o;
  o << "the " << sim << " simulation blew up: " << badBodies << " of " << bodies
    << " rigid bodies have a non-finite (NaN or infinite) position, orientation or velocity at "
    << "step " << b.step << " (t = " << b.time << "); check the bodies' mass or density, or try "
    << "a smaller time step";
  message_ = o.str();
}

void Session::checkObjects(const std::vector<std::vector<double>>& rows) {
  size_t bad = 0;
  for (const auto& r : rows)
    if (std::any_of(r.begin(), r.end(), [](double v) { return !std::isfinite(v); })) ++bad;
  if (!bad) return;
  BlowUp b;
  b.step = sim_.steps();
  b.time = sim_.syncTime();
  b.n = sim_.size();
  throw BodyBlowUpError(b, sim_.kind(), bad, rows.size());
}

Session::Session(Simulation& sim, SessionSettings settings)
    : sim_(sim), s_(settings), startStep_(sim.steps()) {}

void Session::begin() {
  startStep_ = sim_.steps();
  if (diag_) *diag_ << joinCsv(sim_.diagColumns()) << '\n';
  if (series_) series_->add(sim_.particleState());
  first_ = sim_.diagRow();
  if (diag_) *diag_ << joinCsv(first_) << '\n';
  if (objects_) {
    std::vector<std::string> cols{"step", "time"};
    for (const auto& c : sim_.objectColumns()) cols.push_back(c);
    *objects_ << joinCsv(cols) << '\n';
    writeObjects();
  }
  nextCheck_ = 0;
  lastSteps_ = sim_.steps();
  lastTime_ = sim_.syncTime();
  peakDt_ = 0;
  if (auto b = sim_.checkFiniteNow()) throw BlowUpError(*b, sim_.kind());
  if (!objects_ && sim_.bodyCount()) checkObjects(sim_.objectRows());
  t0_ = Clock::now();
  sim_.profiler().reset();
}

void Session::step() {
  sim_.step();
  const uint64_t s = sim_.steps();
  if (s_.checkEvery && s % s_.checkEvery == 0)
    if (auto b = sim_.pollFinite()) throw BlowUpError(*b, sim_.kind());
  if (diag_ && s % s_.diagEvery == 0) {
    const std::vector<double> row = sim_.diagRow();
    if (!diagNonFinite_ && std::any_of(row.begin(), row.end(), [](double v) { return !std::isfinite(v); }))
      diagNonFinite_ = s;
    *diag_ << joinCsv(row) << '\n';
  }
  if (objects_ && s % s_.diagEvery == 0) writeObjects();
  if (series_ && s % s_.exportEvery == 0) series_->add(sim_.particleState());
}

bool Session::finished() {
  if (!s_.until) return sim_.steps() - startStep_ >= s_.steps;
  if (sim_.steps() < nextCheck_) return false;
  const double t = sim_.syncTime();
  if (reached(t, *s_.until)) return true;
  const uint64_t ran = sim_.steps() - lastSteps_;
  const double meanDt = ran > 0 ? (t - lastTime_) / double(ran) : 0.0;
  // A time step that collapsed (an unstable run: WCSPH's dt follows the
  // fastest particle) would never reach `until`: a hang. Over at least 1000
  // steps, no advance at all or a mean dt a million times below the largest
  // seen so far ends the run with an error instead.
  if (ran >= kCollapseSteps && (!(meanDt > 0) || meanDt < 1e-6 * peakDt_)) {
    std::ostringstream m;
    m << sim_.kind() << ": the time step collapsed at t = " << t << " s (step " << sim_.steps()
      << "): the last " << ran << " steps advanced " << (t - lastTime_) << " s (mean dt "
      << meanDt << " s, earlier up to " << peakDt_ << " s); the simulation went unstable "
      << "and would not reach --until " << *s_.until << " s";
    throw Error(m.str());
  }
  peakDt_ = std::max(peakDt_, meanDt);
  // Steps that advanced nothing: look again after kCollapseSteps steps (not
  // every step); before the first step, after it.
  const double left = meanDt > 0 ? (*s_.until - t) / meanDt : ran > 0 ? 2.0 * kCollapseSteps : 0.0;
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
  // A diagnostics row written with NaN before it (periodic checks off or
  // sparse) dates it better than the end does: the message says so.
  // The rigid bodies first (one small read of their state): a body can go
  // non-finite while every particle stays finite (its time step 0), and one
  // that did is what then poisons the fluid around it, so it is the cause.
  if (sim_.bodyCount()) checkObjects(sim_.objectRows());
  if (auto b = sim_.checkFiniteNow()) {
    if (diagNonFinite_ && *diagNonFinite_ < b->step) b->diagNonFinite = diagNonFinite_;
    throw BlowUpError(*b, sim_.kind());
  }
  e.stopped = stop && stop();
  e.wallSeconds = std::chrono::duration<double>(Clock::now() - t0_).count();
  return e;
}

uint64_t Session::advance(uint64_t maxSteps) {
  uint64_t n = 0;
  while (n < maxSteps && !finished()) {
    step();
    ++n;
  }
  return n;
}

std::optional<BlowUp> Session::frameStart() {
  if (!checkPending_) return std::nullopt;
  try {
    if (!sim_.finiteCheckAnswered()) return std::nullopt;
  } catch (...) {
    checkPending_ = false;  // a check that cannot be asked about is over
    throw;
  }
  checkPending_ = false;  // also when collecting throws: that check is over
  return sim_.collectFinite();
}

std::optional<BlowUp> Session::frameEnd(uint64_t steps, unsigned everyFrames) {
  if (everyFrames == 0) return std::nullopt;
  if (steps) {
    uncheckedSteps_ = true;
    ++framesSinceCheck_;
  }
  if (steps && framesSinceCheck_ >= everyFrames) {
    // Enqueue a check of this frame's state; read the previous one's answer
    // (finished long ago): never stalls the pipeline.
    checkPending_ = true;
    uncheckedSteps_ = false;
    framesSinceCheck_ = 0;
    return sim_.pollFinite();
  }
  if (!steps && (checkPending_ || uncheckedSteps_)) {
    // No steps (paused, or stopped): settle the last answer once, and check
    // the steps not yet checked. A tiny kernel behind work already done.
    checkPending_ = uncheckedSteps_ = false;
    framesSinceCheck_ = 0;
    return sim_.checkFiniteNow();
  }
  return std::nullopt;
}

Session::TimeEstimate Session::estimateTime() {
  const ClockSample c = sim_.clockSample();
  TimeEstimate e;
  e.dt = std::isfinite(c.dt) && c.dt > 0 ? c.dt : 0.0;
  const uint64_t now = sim_.steps();
  e.time = c.time + (now > c.step ? double(now - c.step) * e.dt : 0.0);
  return e;
}

void Session::writeObjects() {
  const double step = double(sim_.steps()), time = sim_.syncTime();
  const auto rows = sim_.objectRows();
  checkObjects(rows);  // no row of a non-finite body: the run fails instead
  for (auto row : rows) {
    row.insert(row.begin(), {step, time});
    *objects_ << joinCsv(row) << '\n';
  }
}

const std::vector<double>& Session::end() {
  last_ = sim_.diagRow();
  const bool moved = sim_.steps() != startStep_;
  if (diag_ && moved && sim_.steps() % s_.diagEvery != 0) *diag_ << joinCsv(last_) << '\n';
  if (objects_ && moved && sim_.steps() % s_.diagEvery != 0) writeObjects();
  if (series_ && moved && sim_.steps() % s_.exportEvery != 0) series_->add(sim_.particleState());
  return last_;
}

}  // namespace eddy
