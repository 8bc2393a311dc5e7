#include "profiler.hpp"

#include <algorithm>
#include <cstdio>
#include <numeric>

namespace eddy {

size_t Profiler::phaseIndex(const std::string& name) {
  for (size_t i = 0; i < phases_.size(); ++i)
    if (phases_[i].name == name) return i;
  phases_.push_back(Phase{name, {}, 0, 0, 0});
  return phases_.size() - 1;
}

void Profiler::record(const std::string& phase, const cl::Event& event) {
  pending_.push_back(Pending{phaseIndex(phase), step_, event});
}

void Profiler::collect(bool wait) {
  while (!pending_.empty()) {
    Pending& p = pending_.front();
    if (wait) p.event.wait();
    cl_int status = p.event.getInfo<CL_EVENT_COMMAND_EXECUTION_STATUS>();
    if (status < 0)
      throw Error("a '" + phases_[p.phase].name + "' kernel failed on the device: " +
                  clErrorName(status));
    if (status != CL_COMPLETE) break;  // in-order queue: later ones are not done either
    const cl_ulong t0 = p.event.getProfilingInfo<CL_PROFILING_COMMAND_START>();
    const cl_ulong t1 = p.event.getProfilingInfo<CL_PROFILING_COMMAND_END>();
    const double ms = t1 > t0 ? double(t1 - t0) * 1e-6 : 0.0;
    Phase& ph = phases_[p.phase];
    ph.last = ms;
    ph.total += ms;
    ++ph.count;
    ph.window.push_back(ms);
    if (ph.window.size() > window_) ph.window.pop_front();
    if (p.step != openStep_) {
      if (openStep_ != UINT64_MAX) {
        stepHistory_.push_back(openStepMs_);
        if (stepHistory_.size() > window_) stepHistory_.pop_front();
      }
      openStep_ = p.step;
      openStepMs_ = 0;
    }
    openStepMs_ += ms;
    pending_.pop_front();
  }
  // A step whose events are all done and whose successor started is closed above;
  // close the last one too once nothing of it is pending and the step ended.
  if (pending_.empty() && openStep_ != UINT64_MAX && openStep_ < step_) {
    stepHistory_.push_back(openStepMs_);
    if (stepHistory_.size() > window_) stepHistory_.pop_front();
    openStep_ = UINT64_MAX;
    openStepMs_ = 0;
  }
}

void Profiler::drainTo(size_t keep) {
  if (pending_.size() > keep) pending_[pending_.size() - keep - 1].event.wait();
  collect(false);
}

void Profiler::drainStepsTo(uint64_t keep) {
  // The newest pending event of a step at least `keep` steps old.
  for (auto it = pending_.rbegin(); it != pending_.rend(); ++it)
    if (step_ - it->step >= keep) {
      it->event.wait();
      break;
    }
  collect(false);
}

std::vector<PhaseStats> Profiler::stats() const {
  std::vector<PhaseStats> out;
  for (const auto& ph : phases_) {
    PhaseStats s;
    s.name = ph.name;
    s.lastMs = ph.last;
    s.totalMs = ph.total;
    s.count = ph.count;
    if (!ph.window.empty()) {
      s.meanMs = std::accumulate(ph.window.begin(), ph.window.end(), 0.0) / ph.window.size();
      s.minMs = *std::min_element(ph.window.begin(), ph.window.end());
      s.maxMs = *std::max_element(ph.window.begin(), ph.window.end());
    }
    out.push_back(s);
  }
  return out;
}

double Profiler::meanStepMs() const {
  if (stepHistory_.empty()) return 0;
  return std::accumulate(stepHistory_.begin(), stepHistory_.end(), 0.0) / stepHistory_.size();
}

std::string Profiler::table() const {
  const auto st = stats();
  double all = 0;  // device time of every phase since reset
  for (const auto& s : st) all += s.totalMs;
  std::string out;
  char line[256];
  std::snprintf(line, sizeof line, "%-16s %10s %10s %10s %10s %7s %9s\n", "phase", "last ms",
                "mean ms", "min ms", "max ms", "share", "launches");
  out += line;
  for (const auto& s : st) {
    if (s.count == 0) continue;  // not launched since the last reset
    // Share of the step = this phase's share of all device time since reset.
    std::snprintf(line, sizeof line, "%-16s %10.4f %10.4f %10.4f %10.4f %6.1f%% %9llu\n",
                  s.name.c_str(), s.lastMs, s.meanMs, s.minMs, s.maxMs,
                  all > 0 ? 100.0 * s.totalMs / all : 0.0,
                  static_cast<unsigned long long>(s.count));
    out += line;
  }
  return out;
}

void Profiler::reset() {
  collect(true);
  for (auto& ph : phases_) {
    ph.window.clear();
    ph.last = ph.total = 0;
    ph.count = 0;
  }
  stepHistory_.clear();
  sampled_ = 0;
  resetStep_ = step_;
  openStep_ = UINT64_MAX;
  openStepMs_ = 0;
}

}  // namespace eddy
