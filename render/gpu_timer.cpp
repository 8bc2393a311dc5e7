#include "gpu_timer.hpp"

#include <algorithm>

namespace eddy {

void PassStats::add(const std::string& pass, double ms) {
  auto it = std::find_if(passes_.begin(), passes_.end(), [&](const Pass& p) { return p.name == pass; });
  if (it == passes_.end()) {
    passes_.push_back({pass, {}, 0, 0, 0});
    it = passes_.end() - 1;
  }
  it->last = ms;
  it->total += ms;
  ++it->count;
  it->window.push_back(ms);
  while (it->window.size() > window_) it->window.pop_front();
}

std::vector<PhaseStats> PassStats::stats() const {
  std::vector<PhaseStats> out;
  for (const Pass& p : passes_) {
    PhaseStats s;
    s.name = p.name;
    s.lastMs = p.last;
    s.totalMs = p.total;
    s.count = p.count;
    if (!p.window.empty()) {
      double sum = 0;
      s.minMs = s.maxMs = p.window.front();
      for (double v : p.window) {
        sum += v;
        s.minMs = std::min(s.minMs, v);
        s.maxMs = std::max(s.maxMs, v);
      }
      s.meanMs = sum / double(p.window.size());
    }
    out.push_back(s);
  }
  return out;
}

void PassStats::reset() {
  passes_.clear();
  lastFrameMs_ = 0;
  frames_ = 0;
}

GpuTimer::~GpuTimer() {
  for (Slot& s : ring_)
    if (!s.queries.empty()) glDeleteQueries(GLsizei(s.queries.size()), s.queries.data());
}

size_t GpuTimer::queryObjects() const {
  size_t n = 0;
  for (const Slot& s : ring_) n += s.queries.size();
  return n;
}

bool GpuTimer::collect(Slot& s) {
  if (!s.pending) return true;
  // Queries finish in order: the last one available means all are.
  for (size_t i = s.names.size(); i-- > 0;) {
    GLint ready = 0;
    glGetQueryObjectiv(s.queries[i], GL_QUERY_RESULT_AVAILABLE, &ready);
    if (!ready) return false;
  }
  double total = 0;
  for (size_t i = 0; i < s.names.size(); ++i) {
    GLuint64 ns = 0;
    glGetQueryObjectui64v(s.queries[i], GL_QUERY_RESULT, &ns);
    const double ms = double(ns) * 1e-6;
    stats_.add(s.names[i], ms);
    total += ms;
  }
  stats_.endFrame(total);
  s.names.clear();
  s.pending = false;
  return true;
}

void GpuTimer::beginFrame() {
  // Oldest first, so the statistics see frames in order.
  for (size_t k = 1; k <= kRing; ++k) {
    Slot& s = ring_[(frame_ + k) % kRing];
    if (!collect(s)) break;
  }
  Slot& s = ring_[frame_ % kRing];
  cur_ = collect(s) ? &s : nullptr;
  if (!cur_) ++skipped_;
  open_ = false;
}

void GpuTimer::begin(const char* pass) {
  if (!cur_ || open_) return;
  const size_t i = cur_->names.size();
  if (i == cur_->queries.size()) {
    GLuint q = 0;
    glGenQueries(1, &q);
    cur_->queries.push_back(q);
  }
  cur_->names.emplace_back(pass);
  glBeginQuery(GL_TIME_ELAPSED, cur_->queries[i]);
  open_ = true;
}

void GpuTimer::end() {
  if (!cur_ || !open_) return;
  glEndQuery(GL_TIME_ELAPSED);
  open_ = false;
}

void GpuTimer::endFrame() {
  if (cur_) {
    end();
    cur_->pending = !cur_->names.empty();
  }
  cur_ = nullptr;
  ++frame_;
}

}  // namespace eddy
