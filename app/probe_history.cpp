#include "probe_history.hpp"

namespace eddy {

void ProbeHistory::reset(std::vector<ProbeSpec> probes) {
  probes_ = std::move(probes);
  rows_.clear();
}

void ProbeHistory::add(const ProbeRow& row) {
  if (row.values.size() != probes_.size()) return;
  if (!rows_.empty() && row.time < rows_.back().time) rows_.clear();
  rows_.push_back(row);
  while (rows_.size() > 1 && rows_.front().time < row.time - window_) rows_.pop_front();
}

std::vector<float> ProbeHistory::series(size_t i) const {
  std::vector<float> v;
  if (i >= probes_.size()) return v;
  v.reserve(rows_.size());
  for (const ProbeRow& r : rows_) v.push_back(float(r.values[i]));
  return v;
}

double ProbeHistory::latest(size_t i) const {
  return rows_.empty() || i >= probes_.size() ? 0.0 : rows_.back().values[i];
}

const char* ProbeHistory::unit(const ProbeSpec& p) {
  return p.kind == ProbeSpec::Kind::Pressure ? "Pa" : "m";
}

}  // namespace eddy
