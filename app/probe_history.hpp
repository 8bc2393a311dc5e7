// probe_history.hpp: the recent history of the probes for the app's panel
// (issue 12: "the panel plots their recent history"). GL-free, no device:
// the Controller feeds it the rows its simulation's probes deliver.
#pragma once

#include "probe.hpp"

#include <cstddef>
#include <deque>
#include <string>
#include <vector>

namespace eddy {

class ProbeHistory {
 public:
  explicit ProbeHistory(double window = 10.0) : window_(window) {}
  // A new set of probes: forgets everything.
  void reset(std::vector<ProbeSpec> probes);
  // One sample (values in the probes' order). Rows older than `window`
  // seconds before the newest go; a row whose time lies before the last one
  // (a rebuilt simulation starts again at 0) first forgets the history.
  // Rows of another width are ignored.
  void add(const ProbeRow& row);
  void clear() { rows_.clear(); }

  const std::vector<ProbeSpec>& probes() const { return probes_; }
  size_t samples() const { return rows_.size(); }
  double window() const { return window_; }
  // Probe i's values oldest first (as ImGui::PlotLines takes them), and its newest.
  std::vector<float> series(size_t i) const;
  bool hasValue() const { return !rows_.empty(); }
  double latest(size_t i) const;
  double latestTime() const { return rows_.empty() ? 0.0 : rows_.back().time; }
  double oldestTime() const { return rows_.empty() ? 0.0 : rows_.front().time; }
  // "Pa" (pressure) or "m" (level).
  static const char* unit(const ProbeSpec& p);

 private:
  double window_;
  std::vector<ProbeSpec> probes_;
  std::deque<ProbeRow> rows_;
};

}  // namespace eddy
