#include "simulation.hpp"

#include "body_spec.hpp"
#include "shape.hpp"
#include "shape_spec_io.hpp"

#include "eddy_shared.h"

#include <algorithm>
#include <cfloat>
#include <atomic>
#include <cmath>
#include <cstring>
#include <iomanip>
#include <sstream>

namespace eddy {

// The device-side blow-up check of one simulation: a counter buffer, the
// check_finite kernel, and the (non-blocking) read of the last check's count.
class FiniteCheck {
 public:
  explicit FiniteCheck(Context& ctx)
      : ctx_(ctx),
        program_(ctx.buildProgram("health.cl")),
        counter_(ctx.createBuffer(CL_MEM_READ_WRITE, 6 * sizeof(cl_uint), "the finite check")) {}
  ~FiniteCheck() {
    // The pending read writes into host_: never free it under the device's feet.
    if (pending_) {
      try {
        read_.wait();
      } catch (const cl::Error&) {
      }
    }
  }
  FiniteCheck(const FiniteCheck&) = delete;
  FiniteCheck& operator=(const FiniteCheck&) = delete;

  // speedLimit: the largest |b.xyz| of a pair's second buffer (its
  // velocities) that is not a blow-up; infinity: no limit. clock: a device
  // buffer whose first two floats sum to the simulated time of this step
  // (copied on the device with the counts; `time` is then not used).
  // putBack: the integrator's counts of particles put back (copied with the
  // answer); escapes: whether mass escapes are a blow-up.
  void enqueue(const std::vector<const cl::Buffer*>& buffers, size_t n, uint64_t step,
               double time, Profiler* profiler, double speedLimit = kNoSpeedLimit,
               const cl::Buffer* clock = nullptr, const PutBackCounters& putBack = {},
               bool escapes = true) {
    if (buffers.empty() || n == 0) return;
    auto& q = ctx_.queue();
    // A limit whose square no float holds is no limit.
    const double limit2 = speedLimit * speedLimit;
    const float speed2 = limit2 <= double(FLT_MAX) ? float(limit2) : INFINITY;
    try {
      q.enqueueFillBuffer(counter_, cl_uint(0), 0, 2 * sizeof(cl_uint));
      for (size_t i = 0; i < buffers.size(); i += 2) {
        const cl::Buffer& a = *buffers[i];
        const cl::Buffer& b = i + 1 < buffers.size() ? *buffers[i + 1] : a;
        cl::Event e = kernel_(EnqueueArgs(q, cl::NDRange(roundUp(n, EDDY_LINEAR_WG)),
                                              cl::NDRange(EDDY_LINEAR_WG)),
                              a, b, cl_uint(n), speed2, counter_);
        if (profiler) profiler->record("check", e);
      }
      if (clock)
        q.enqueueCopyBuffer(*clock, counter_, 0, 2 * sizeof(cl_uint), 2 * sizeof(cl_float));
      if (putBack.buffer) {
        q.enqueueCopyBuffer(*putBack.buffer, counter_, putBack.escaped * sizeof(cl_uint),
                            4 * sizeof(cl_uint), sizeof(cl_uint));
        q.enqueueCopyBuffer(*putBack.buffer, counter_, putBack.nonFinite * sizeof(cl_uint),
                            5 * sizeof(cl_uint), sizeof(cl_uint));
      }
      q.enqueueReadBuffer(counter_, CL_FALSE, 0, (putBack.buffer ? 6 : clock ? 4 : 2) * sizeof(cl_uint),
                          host_, nullptr, &read_);
    } catch (const cl::Error& e) {
      throw Error("finite check at step " + std::to_string(step) + ": " + describe(e));
    }
    pending_ = true;
    step_ = step;
    time_ = time;
    n_ = n;
    speedLimit_ = speedLimit;
    deviceTime_ = clock != nullptr;
    putBack_ = putBack.buffer != nullptr;
    escapes_ = escapes;
  }

  // Whether the last enqueued check has been answered (never waits).
  bool ready() const {
    if (!pending_) return false;
    try {
      return read_.getInfo<CL_EVENT_COMMAND_EXECUTION_STATUS>() <= CL_COMPLETE;  // done or failed
    } catch (const cl::Error&) {
      return true;  // collect() reports it
    }
  }

  // The result of the last enqueued check (waits for it), if it found any.
  std::optional<BlowUp> collect() {
    if (!pending_) return std::nullopt;
    try {
      read_.wait();
    } catch (const cl::Error& e) {
      pending_ = false;
      throw Error("finite check at step " + std::to_string(step_) + ": " + describe(e));
    }
    pending_ = false;
    // The put-back counts since the previous answer (the first answer is the
    // baseline: counts a restored snapshot carries are not this run's). The
    // counters are uint32: differences modulo 2^32.
    cl_uint nonFinite = 0, escaped = 0;
    uint64_t since = step_;
    if (putBack_) {
      if (haveBase_) {
        escaped = host_[4] - baseEscaped_;
        nonFinite = host_[5] - baseNonFinite_;
        since = baseStep_;
      }
      haveBase_ = true;
      baseEscaped_ = host_[4];
      baseNonFinite_ = host_[5];
      baseStep_ = step_;
    }
    const uint64_t window = step_ > since ? step_ - since : 0;
    const bool massEscape = escapes_ && window > 0 && escaped > 0 &&
                            double(escaped) >= kEscapeBlowUpShare * double(n_) * double(window);
    if (host_[0] == 0 && host_[1] == 0 && nonFinite == 0 && !massEscape) return std::nullopt;
    double t = time_;
    if (deviceTime_) {
      float hi, lo;
      std::memcpy(&hi, &host_[2], sizeof hi);
      std::memcpy(&lo, &host_[3], sizeof lo);
      t = double(hi) + double(lo);
    }
    BlowUp b;
    b.step = step_;
    b.time = t;
    b.particles = std::min<uint64_t>(host_[0], n_);
    b.n = n_;
    b.fast = std::min<uint64_t>(host_[1], n_);
    b.speedLimit = speedLimit_;
    b.putBackNonFinite = nonFinite;
    b.escaped = massEscape ? escaped : 0;
    b.since = since;
    return b;
  }

 private:
  Context& ctx_;
  cl::Program program_;
  KernelFunctor<cl::Buffer, cl::Buffer, cl_uint, cl_float, cl::Buffer> kernel_{program_,
                                                                                   "check_finite"};
  cl::Buffer counter_;
  // non-finite, too fast, the clock's time (2 floats), put back: escaped, non-finite
  cl_uint host_[6] = {0, 0, 0, 0, 0, 0};
  cl::Event read_;
  bool pending_ = false;
  uint64_t step_ = 0;
  double time_ = 0;
  size_t n_ = 0;
  double speedLimit_ = kNoSpeedLimit;
  bool deviceTime_ = false;
  bool putBack_ = false, escapes_ = true;
  bool haveBase_ = false;  // the put-back counts of the previous answer
  cl_uint baseEscaped_ = 0, baseNonFinite_ = 0;
  uint64_t baseStep_ = 0;
};

namespace {
std::atomic<int> gLive{0};
}

Simulation::Simulation(Context& ctx, const std::vector<ParamDesc>& decl)
    : ctx_(ctx), params_(decl) {
  ++gLive;
}

Simulation::~Simulation() { --gLive; }

std::string BlowUp::message(std::string_view sim) const {
  std::ostringstream o;
  o << "the " << sim << " simulation blew up: ";
  const bool putBack = particles == 0 && fast == 0 && (putBackNonFinite > 0 || escaped > 0);
  if (!putBack) {
    if (particles > 0 || fast == 0)
      o << particles << " of " << n << " particles have a non-finite (NaN or infinite) position or velocity";
    else
      o << fast << " of " << n << " particles move faster than " << std::setprecision(3) << speedLimit
        << std::setprecision(6) << speedBasis;
    o << " at step " << step << " (t = " << time << ")";
  } else {
    const uint64_t steps = std::max<uint64_t>(step > since ? step - since : 0, 1);
    if (putBackNonFinite > 0)
      o << "a particle's position or velocity went non-finite (NaN or infinite) "
        << putBackNonFinite << " times";
    else
      o << "particles left the tank " << escaped << " times (" << std::setprecision(3)
        << double(escaped) / double(steps) << " a step, of " << n << " particles; at least "
        << 100 * kEscapeBlowUpShare << std::setprecision(6)
        << " % of them a step is a blow-up: a particle escapes only by moving about a whole tank "
           "in one step)";
    o << " in the " << steps << " steps up to step " << step << " (t = " << time
      << "); each was put back into the tank, at rest";
  }
  if (reached > step) o << ", found when the run had reached step " << reached;
  if (diagNonFinite)
    o << "; the diagnostics rows hold non-finite values from step " << *diagNonFinite << " on";
  // At step 0 no step has been taken: the time step cannot be the cause.
  if (step == 0 && reached == 0 && !diagNonFinite)
    o << "; this is before the first step, so not the time step: check the initial conditions";
  else
    o << "; try a smaller time step";
  if (!hint.empty()) o << "; " << hint;
  return o.str();
}

int Simulation::liveCount() { return gLive.load(); }

cl::Event Simulation::writeColorField(size_t index, const cl::Buffer&) {
  throw Error(kind() + ": no colour field #" + std::to_string(index));
}

cl::Event Simulation::push(const Ray&, float, const Vec3f&) {
  throw Error(kind() + ": pushing particles is not offered");
}

void Simulation::addBlock(const Box&) {
  throw Error(kind() + ": adding a block of particles is not offered");
}

void Simulation::startProbes(const std::vector<ProbeSpec>&, const ProbeCadence&, ProbeSink) {
  throw Error(kind() + ": probes are not offered (they sample a fluid: --sim sph)");
}

ProbeCadence probeCadenceFor(const Simulation& sim, std::optional<uint64_t> every,
                             std::optional<double> dt) {
  if (!every && !dt)
    if (const std::optional<ProbeCadence> kept = sim.keptProbeCadence()) return *kept;
  ProbeCadence c;  // every 10 steps unless given
  if (every) c.every = *every;
  if (dt) c.dt = *dt;
  return c;
}

std::vector<ProbeSpec> probesToSample(const Simulation& sim, const std::vector<ProbeSpec>& extra,
                                      bool builtins) {
  if (!sim.supportsProbes()) {
    if (extra.empty()) return {};
    throw Error(sim.kind() + " has no probes (they sample a fluid: sph)");
  }
  std::vector<ProbeSpec> probes;
  if (builtins) probes = sim.builtinProbes();
  const size_t own = probes.size();
  // One of `extra` that is one of the simulation's own (the same kind, name
  // and place: a probe a snapshot kept, given again as before snapshots kept
  // them) is that probe, not a second one with its name.
  for (const ProbeSpec& p : extra) {
    if (std::any_of(probes.begin(), probes.begin() + own, [&](const ProbeSpec& q) { return sameProbe(p, q); }))
      continue;
    // A name the simulation's own probes already take: said so, not "given
    // twice" (the user gave it once).
    const auto taken = std::find_if(probes.begin(), probes.begin() + own,
                                    [&](const ProbeSpec& q) { return q.name == p.name; });
    if (taken != probes.begin() + own)
      throw Error("probe " + probeSpecText(p) + ": the name '" + p.name +
                  "' is taken by one of the simulation's own probes (its scene's or its snapshot's), " +
                  probeSpecText(*taken) + ": choose another name (names are CSV columns: each once)");
    probes.push_back(p);
  }
  checkProbeNames(probes);
  if (const std::optional<Box> box = sim.domain()) {
    const double tank[3] = {box->hi[0], box->hi[1], box->hi[2]};
    checkProbesInside(probes, tank);
  }
  // A pressure probe inside a static obstacle would only ever read 0 (no
  // fluid there); one on its face (the SPHERIC sensors) is fine.
  const std::vector<ShapeSpec> obstacles = sim.obstacles();
  bool anyPressure = false;
  for (const auto& p : probes) anyPressure |= p.kind == ProbeSpec::Kind::Pressure;
  if (anyPressure)
    for (const auto& o : obstacles) {
      const std::unique_ptr<Shape> shape = makeShape(o);
      const Mat3d R = rotationMatrix(o.pose.rotationDeg);
      const Aabb b = shape->bounds();
      double size = 0;
      for (int a = 0; a < 3; ++a) size = std::max(size, b.hi[a] - b.lo[a]);
      for (const auto& p : probes) {
        if (p.kind != ProbeSpec::Kind::Pressure) continue;
        const Vec3d l = poseToLocal(o.pose, R, {p.x, p.y, p.z});
        if (shape->sdf(l) < -1e-9 * std::max(1.0, size)) {
          std::ostringstream m;
          m << "probe " << p.name << " (" << probeSpecText(p) << ") lies inside the obstacle "
            << shapeSpecToString(o) << " (" << -shape->sdf(l)
            << " m below its surface), where there is no fluid: it would always read 0. Put it "
               "on the obstacle's face or in the fluid";
          throw Error(m.str());
        }
      }
    }
  return probes;
}

void Simulation::throttle(size_t maxPending, uint64_t maxSteps) {
  profiler_.collect(false);
  // The steps ahead are also held to about kMaxLeadSeconds of device time
  // (at least 4, at most maxSteps; 8 until a step has been timed): a stop
  // (Ctrl-C, a Python KeyboardInterrupt) waits for the steps already
  // enqueued, and with 256 allowed from the start a 12 000-body direct sum on
  // PoCL stopped 200 steps (64 s) late. Steps of 1 ms or less keep about the
  // 256 they had.
  const double stepMs = profiler_.meanStepMs();
  maxSteps = std::clamp<uint64_t>(stepMs > 0 ? uint64_t(kMaxLeadSeconds * 1e3 / stepMs) : 8, 4,
                                  std::max<uint64_t>(maxSteps, 4));
  if (profiler_.pending() > maxPending) {
    ctx_.queue().flush();
    profiler_.drainTo(maxPending / 2);
  }
  if (profiler_.stepsPending() > maxSteps) {
    ctx_.queue().flush();
    profiler_.drainStepsTo(maxSteps / 2);
  }
}

std::optional<BlowUp> Simulation::described(std::optional<BlowUp> b) const {
  if (b) {
    b->reached = steps_;
    if (b->fast) b->speedBasis = blowUpSpeedBasis();
    b->hint = blowUpHint();
  }
  return b;
}

std::optional<BlowUp> Simulation::pollFinite() {
  if (!finite_) finite_ = std::make_unique<FiniteCheck>(ctx_);
  auto previous = described(finite_->collect());
  finite_->enqueue(finiteCheckBuffers(), size(), steps_, time_, &profiler_,
                   speedCheck_ ? blowUpSpeed() : kNoSpeedLimit, timeBuffer(), putBackCounters(),
                   speedCheck_);
  ctx_.queue().flush();
  return previous;
}

std::optional<BlowUp> Simulation::checkFiniteNow() {
  if (!finite_) finite_ = std::make_unique<FiniteCheck>(ctx_);
  if (auto previous = described(finite_->collect())) return previous;
  finite_->enqueue(finiteCheckBuffers(), size(), steps_, time_, &profiler_,
                   speedCheck_ ? blowUpSpeed() : kNoSpeedLimit, timeBuffer(), putBackCounters(),
                   speedCheck_);
  return described(finite_->collect());
}

bool Simulation::finiteCheckAnswered() const { return finite_ && finite_->ready(); }

std::optional<BlowUp> Simulation::collectFinite() {
  return described(finite_ ? finite_->collect() : std::nullopt);
}

std::vector<const cl::Buffer*> Simulation::finiteCheckBuffers() const {
  return {&positionBuffer()};
}

std::vector<ShapeSpec> Simulation::obstacles() const { return {}; }

std::unique_ptr<Simulation> Simulation::withSolids(const std::vector<ShapeSpec>&,
                                                   const std::vector<BodySpec>&) {
  throw Error("the " + kind() + " simulation has no obstacles or rigid bodies");
}

void Simulation::saveState(SnapshotWriter&) {
  throw Error("the " + kind() + " simulation cannot save restart snapshots yet");
}

ParticleState Simulation::particleState() {
  const auto cols = stateColumns();
  const auto rows = stateRows();
  auto column = [&](std::string_view name) -> long {
    const auto it = std::find(cols.begin(), cols.end(), name);
    return it == cols.end() ? -1 : long(it - cols.begin());
  };
  ParticleState f;
  f.time = syncTime();  // the time of this very step (SPH: its device clock)
  f.step = steps_;
  const size_t n = rows.size();
  const long ix = column("x"), iy = column("y"), iz = column("z");
  if (ix < 0 || iy < 0 || iz < 0)
    throw Error("the " + kind() + " simulation's state has no x,y,z columns to export");
  f.positions.resize(3 * n);
  for (size_t i = 0; i < n; ++i) {
    f.positions[3 * i] = float(rows[i][ix]);
    f.positions[3 * i + 1] = float(rows[i][iy]);
    f.positions[3 * i + 2] = float(rows[i][iz]);
  }
  std::vector<long> used = {ix, iy, iz};
  const long ivx = column("vx"), ivy = column("vy"), ivz = column("vz");
  if (ivx >= 0 && ivy >= 0 && ivz >= 0) {
    PointArray v{"velocity", 3, std::vector<float>(3 * n)};
    for (size_t i = 0; i < n; ++i) {
      v.values[3 * i] = float(rows[i][ivx]);
      v.values[3 * i + 1] = float(rows[i][ivy]);
      v.values[3 * i + 2] = float(rows[i][ivz]);
    }
    f.arrays.push_back(std::move(v));
    used.insert(used.end(), {ivx, ivy, ivz});
  }
  for (long c = 0; c < long(cols.size()); ++c) {
    if (std::find(used.begin(), used.end(), c) != used.end()) continue;
    std::string name = cols[c];
    if (name == "m") name = "mass";
    else if (name == "rho") name = "density";
    else if (name == "p") name = "pressure";
    PointArray a{name, 1, std::vector<float>(n)};
    for (size_t i = 0; i < n; ++i) a.values[i] = float(rows[i][c]);
    f.arrays.push_back(std::move(a));
  }
  return f;
}

uint64_t countNonFinite(Context& ctx, const cl::Buffer& a, const cl::Buffer& b, size_t n) {
  return checkParticles(ctx, a, b, n, kNoSpeedLimit).nonFinite;
}

ParticleCheck checkParticles(Context& ctx, const cl::Buffer& a, const cl::Buffer& b, size_t n,
                             double speedLimit) {
  FiniteCheck check(ctx);
  check.enqueue({&a, &b}, n, 0, 0, nullptr, speedLimit);
  const auto r = check.collect();
  return r ? ParticleCheck{r->particles, r->fast} : ParticleCheck{};
}

void checkDeviceMemory(const DeviceInfo& info, size_t bytes, size_t largest, std::string_view what,
                       size_t hostBytes) {
  auto mib = [](double b) { return std::to_string(static_cast<long long>(b / (1 << 20))) + " MiB"; };
  if (largest > info.maxAlloc)
    throw Error(std::string(what) + " needs a buffer of " + mib(largest) +
                ", more than the device's largest allocation (CL_DEVICE_MAX_MEM_ALLOC_SIZE = " +
                mib(info.maxAlloc) + ") on " + info.name);
  // A CPU device's memory is the host's: the host's own copies count too
  // (268 million bodies passed the device's 18 of 22 GiB, then the scene's
  // 8 GiB on the host had the process killed for memory).
  if ((info.type & CL_DEVICE_TYPE_CPU) && hostBytes && double(bytes + hostBytes) > info.globalMem * 0.9)
    throw Error(std::string(what) + " needs " + mib(bytes) + " of device memory and " + mib(hostBytes) +
                " on the host; the CPU device shares the host's memory: " + mib(info.globalMem) +
                " (CL_DEVICE_GLOBAL_MEM_SIZE) on " + info.name);
  if (bytes > info.globalMem * 0.9)
    throw Error(std::string(what) + " needs " + mib(bytes) +
                " of device memory; the device has " + mib(info.globalMem) +
                " (CL_DEVICE_GLOBAL_MEM_SIZE) on " + info.name);
}

}  // namespace eddy
