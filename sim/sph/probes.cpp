#include "probes.hpp"

#include "sph_kernel.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace eddy {

SphProbes::SphProbes(Context& ctx, const SphKernelConfig& cfg, std::vector<ProbeSpec> probes,
                     const ProbeCadence& cadence, ProbeSink sink, double spacing, double tankHeight)
    : ctx_(ctx),
      probes_(std::move(probes)),
      cadence_(cadence),
      sink_(std::move(sink)),
      program_(ctx.buildProgram(sphProgramFiles({"sph_probes.cl"}),
                                SphParticles::buildOptions(ctx, cfg))) {
  if (probes_.empty()) throw Error("SPH probes: no probe given");
  if (cadence_.dt <= 0 && cadence_.every == 0) throw Error("SPH probes: the cadence is not set");
  if (cadence_.deliverEvery > 0) readEvery_ = std::min<uint64_t>(cadence_.deliverEvery, kRingRows / 2);
  // Level samples y_k = k dy, k = 0 .. S-1, dy = H / (S - 1) <= dx / 4.
  const double want = std::max(spacing, 1e-12) / 4.0;
  const double s = std::ceil(tankHeight / want);
  if (!(s < 1e6)) throw Error("SPH probes: the tank is too tall for level probes (over 1e6 samples)");
  samples_ = cl_uint(std::max(2.0, s + 1.0));
  dy_ = tankHeight / double(samples_ - 1);
  std::vector<cl_float4> pb;
  for (const auto& p : probes_) {
    hasPressure_ |= p.kind == ProbeSpec::Kind::Pressure;
    pb.push_back(makeFloat4(p.x, p.y, p.z, p.kind == ProbeSpec::Kind::Level ? EDDY_PROBE_LEVEL
                                                                            : EDDY_PROBE_PRESSURE));
  }
  const std::vector<cl_uint> st(2 * EDDY_PROBE_STATE_SIZE, 0u);
  const size_t rowWords = EDDY_PROBE_ROW_HEAD + probes_.size();
  const std::vector<cl_float> ring(kRingRows * rowWords, 0.0f);
  try {
    probeBuf_ = ctx.createBuffer(CL_MEM_READ_ONLY, pb.size() * sizeof(cl_float4), "SPH probes");
    state_ = ctx.createBuffer(CL_MEM_READ_WRITE, st.size() * sizeof(cl_uint), "SPH probe state");
    ring_ = ctx.createBuffer(CL_MEM_READ_WRITE, ring.size() * sizeof(cl_float), "SPH probe ring");
    const std::vector<cl_float2> acc(probes_.size(), cl_float2{{0.0f, 0.0f}});
    acc_ = ctx.createBuffer(CL_MEM_READ_WRITE, acc.size() * sizeof(cl_float2), "SPH probe windows");
    auto& q = ctx.queue();
    q.enqueueWriteBuffer(probeBuf_, CL_TRUE, 0, pb.size() * sizeof(cl_float4), pb.data());
    q.enqueueWriteBuffer(state_, CL_TRUE, 0, st.size() * sizeof(cl_uint), st.data());
    q.enqueueWriteBuffer(ring_, CL_TRUE, 0, ring.size() * sizeof(cl_float), ring.data());
    q.enqueueWriteBuffer(acc_, CL_TRUE, 0, acc.size() * sizeof(cl_float2), acc.data());
  } catch (const cl::Error& e) {
    throw Error("SPH probes setup: " + describe(e));
  }
}

SphProbes::~SphProbes() {
  try {
    for (auto& r : reads_) r.done.wait();
  } catch (...) {
    // teardown: nothing to report to
  }
}

void SphProbes::afterStep(SphParticles& p, const cl::Buffer& rhop, double h, double mass,
                          uint64_t step, bool force) {
  // `emit`: a row is due (--probe-every K; with --probe-dt the device
  // decides). Between rows only the pressure probes' windows need the
  // kernel (sph_probes.cl): without pressure probes it runs for rows only.
  const bool emit = force || (cadence_.dt <= 0 && step % cadence_.every == 0);
  if (!emit && cadence_.dt <= 0 && !hasPressure_) {
    deliver(false);
    return;
  }
  const SphProbeArgs a{.pos = p.positions(),
                       .rhop = rhop,
                       .cells = p.cells(),
                       .probes = probeBuf_,
                       .solids = p.boundary().solidRecords(),
                       .sdf = p.boundary().sdfValues(),
                       .clock = p.clock(),
                       .state = state_,
                       .ring = ring_,
                       .acc = acc_,
                       .nprobes = cl_uint(probes_.size()),
                       .ringRows = kRingRows,
                       .parity = cl_uint(launches_ % 2),
                       .step = cl_uint(step),
                       .emit = cl_uint(emit ? 1 : 0),
                       .everyDt = cl_float(cadence_.dt),
                       .dims = p.dims4(),
                       .invCell = p.invCell(),
                       .tank = p.tank4(),
                       .h = cl_float(h),
                       .scale = cl_float(mass * sph_w_sigma(h)),
                       .dy = cl_float(dy_),
                       .samples = samples_,
                       .nsolids = cl_uint(p.boundary().solidCount()),
                       .solidMargin = cl_float(0.5 * h)};
  try {
    const EnqueueArgs range(ctx_.queue(), cl::NDRange(probes_.size() * EDDY_PROBE_WG),
                            cl::NDRange(EDDY_PROBE_WG));
    p.profiler().launch("probes", kernel_, range, a);
  } catch (const cl::Error& e) {
    throw Error("SPH probes kernel: " + describe(e));
  }
  ++launches_;
  lastStep_ = step;
  // Rows since the last read (a launch between rows writes none).
  if ((emit || cadence_.dt > 0) && ++sinceRead_ >= readEvery_) enqueueRead();
  deliver(false);
}

void SphProbes::enqueueRead() {
  Read r;
  r.ring.resize(kRingRows * (EDDY_PROBE_ROW_HEAD + probes_.size()));
  r.state.resize(2 * EDDY_PROBE_STATE_SIZE);
  r.copy = cl_uint(launches_ % 2);
  r.step = lastStep_;
  try {
    auto& q = ctx_.queue();
    q.enqueueReadBuffer(ring_, CL_FALSE, 0, r.ring.size() * sizeof(cl_float), r.ring.data());
    // In-order queue: this read completes after the ring's.
    q.enqueueReadBuffer(state_, CL_FALSE, 0, r.state.size() * sizeof(cl_uint), r.state.data(),
                        nullptr, &r.done);
    q.flush();
  } catch (const cl::Error& e) {
    throw Error("SPH probes read: " + describe(e));
  }
  reads_.push_back(std::move(r));
  sinceRead_ = 0;
}

void SphProbes::deliver(bool wait) {
  while (!reads_.empty()) {
    Read& r = reads_.front();
    if (wait) r.done.wait();
    else if (r.done.getInfo<CL_EVENT_COMMAND_EXECUTION_STATUS>() != CL_COMPLETE) return;
    const uint64_t rows = r.state[r.copy * EDDY_PROBE_STATE_SIZE + EDDY_PROBE_ST_ROWS];
    const size_t words = EDDY_PROBE_ROW_HEAD + probes_.size();
    // At most kRingRows / 2 launches (rows) between two reads: none lost.
    for (uint64_t k = consumed_; k < rows; ++k) {
      const cl_float* w = r.ring.data() + (k % kRingRows) * words;
      ProbeRow row;
      cl_uint step;
      std::memcpy(&step, &w[0], sizeof step);
      // The low 32 bits on the device; the row is of a step <= the read's.
      row.step = r.step - cl_uint(cl_uint(r.step) - step);
      row.time = double(w[1]) + double(w[2]);
      row.values.assign(w + EDDY_PROBE_ROW_HEAD, w + words);
      if (sink_) sink_(row);
      last_ = std::move(row);
    }
    consumed_ = std::max<uint64_t>(consumed_, rows);
    reads_.pop_front();
  }
}

SphProbeState SphProbes::state() {
  SphProbeState s;
  s.probes = probes_;
  s.cadence = cadence_;
  s.cadence.deliverEvery = 0;  // the reader's choice, not the run's
  s.windows.resize(probes_.size());
  std::vector<cl_uint> st(2 * EDDY_PROBE_STATE_SIZE);
  try {
    auto& q = ctx_.queue();
    q.enqueueReadBuffer(acc_, CL_TRUE, 0, s.windows.size() * sizeof(cl_float2), s.windows.data());
    q.enqueueReadBuffer(state_, CL_TRUE, 0, st.size() * sizeof(cl_uint), st.data());
  } catch (const cl::Error& e) {
    throw Error("SPH probes state read: " + describe(e));
  }
  // The next launch reads copy launches_ % 2 (sph_probes.cl).
  s.next = st[(launches_ % 2) * EDDY_PROBE_STATE_SIZE + EDDY_PROBE_ST_NEXT];
  return s;
}

void SphProbes::continueFrom(const SphProbeState& kept) {
  if (launches_ != 0) throw Error("SPH probes: continueFrom after the first sample");
  std::vector<cl_float2> acc(probes_.size(), cl_float2{{0.0f, 0.0f}});
  for (size_t k = 0; k < probes_.size(); ++k)
    for (size_t m = 0; m < kept.probes.size() && m < kept.windows.size(); ++m)
      if (sameProbe(probes_[k], kept.probes[m])) acc[k] = kept.windows[m];
  std::vector<cl_uint> st(2 * EDDY_PROBE_STATE_SIZE, 0u);
  if (cadence_.dt > 0 && sameProbeCadence(cadence_, kept.cadence))
    st[EDDY_PROBE_ST_NEXT] = kept.next;  // copy 0: the first launch's
  try {
    auto& q = ctx_.queue();
    q.enqueueWriteBuffer(acc_, CL_TRUE, 0, acc.size() * sizeof(cl_float2), acc.data());
    q.enqueueWriteBuffer(state_, CL_TRUE, 0, st.size() * sizeof(cl_uint), st.data());
  } catch (const cl::Error& e) {
    throw Error("SPH probes state write: " + describe(e));
  }
}

void SphProbes::flush() {
  if (sinceRead_ > 0 || reads_.empty()) enqueueRead();
  deliver(true);
}

}  // namespace eddy
