#include "nbody_multi.hpp"

#include "eddy_shared.h"

#include <algorithm>
#include <chrono>
#include <functional>
#include <cmath>
#include <numeric>
#include <thread>

namespace eddy {

namespace {

using GravityPart = KernelFunctor<cl::Buffer, cl::Buffer, cl_uint, cl_uint, cl::Buffer,
                                      cl::Buffer, cl_uint, cl_uint, cl_float, cl_float, cl_float,
                                      cl_uint>;
using Drift = KernelFunctor<cl::Buffer, cl::Buffer, cl::Buffer, cl::Buffer, cl_uint, cl_float>;
using Potential = KernelFunctor<cl::Buffer, cl::Buffer, cl_uint, cl_float>;

constexpr size_t kF4 = sizeof(cl_float4);

std::string devLabel(const DeviceInfo& info) {
  return "device " + deviceTag(info) + " (" + info.name + ")";
}

// Runs f; any failure becomes an eddy::Error that names the device first.
template <class F>
auto onDevice(const DeviceInfo& info, const std::string& what, F&& f) -> decltype(f()) {
  try {
    return f();
  } catch (const cl::Error& e) {
    throw Error(devLabel(info) + ": " + what + ": " + describe(e));
  } catch (const Error& e) {
    throw Error(devLabel(info) + ": " + e.what());
  }
}

// Completion of one device's "send" (its block is on the host) releases the
// user events that hold the other devices' "recv" writes. Runs on a driver
// thread: only clSetUserEventStatus / clReleaseEvent here.
struct SendNotice {
  std::vector<cl_event> users;  // retained; one per receiving device
  std::atomic<int>* pending;
};

void CL_CALLBACK onSent(cl_event, cl_int status, void* data) {
  auto* n = static_cast<SendNotice*>(data);
  for (cl_event u : n->users) {
    // An error status propagates: the waiting writes fail instead of hanging.
    clSetUserEventStatus(u, status < 0 ? status : CL_COMPLETE);
    clReleaseEvent(u);
  }
  std::atomic<int>* pending = n->pending;
  delete n;
  pending->fetch_sub(1);
}

}  // namespace

std::vector<size_t> splitBodies(size_t n, const std::vector<double>& weights) {
  if (weights.empty()) throw Error("splitting bodies: no devices");
  double sum = 0;
  for (double w : weights) {
    if (!std::isfinite(w) || w < 0)
      throw Error("device shares must be finite and >= 0, got " + std::to_string(w));
    sum += w;
  }
  if (sum <= 0) throw Error("device shares: at least one must be > 0");
  std::vector<size_t> out(weights.size());
  std::vector<std::pair<double, size_t>> rest;
  size_t given = 0;
  for (size_t i = 0; i < weights.size(); ++i) {
    const double exact = double(n) * weights[i] / sum;
    out[i] = std::min(n, size_t(std::floor(exact)));
    given += out[i];
    rest.push_back({exact - double(out[i]), i});
  }
  // Largest remainder first; ties to the lower index (stable).
  std::stable_sort(rest.begin(), rest.end(),
                   [](const auto& a, const auto& b) { return a.first > b.first; });
  for (size_t k = 0; given < n; k = (k + 1) % rest.size()) {
    if (weights[rest[k].second] <= 0) continue;
    ++out[rest[k].second];
    ++given;
  }
  while (given > n)  // floating-point excess (cannot happen with floor, kept for safety)
    for (auto& c : out)
      if (c > 0 && given > n) --c, --given;
  return out;
}

void checkMultiNBodyMemory(const std::vector<Context*>& devices, size_t n) {
  for (Context* c : devices)
    onDevice(c->info(), "", [&] {
      checkDeviceMemory(c->info(), 2 * n * kF4, n * kF4,
                        std::to_string(n) + " bodies (every device keeps all positions, twice)");
    });
}

// Everything one device holds for the run.
struct MultiNBodySim::Dev {
  Context* ctx = nullptr;
  std::string tag;
  NBodyKernelConfig cfg;
  cl::Program program;
  std::optional<GravityPart> part;
  std::optional<Drift> drift;
  std::optional<Potential> potential;
  cl::CommandQueue xfer;  // transfers: overlaps the compute queue ctx->queue()
  size_t first = 0, count = 0;
  cl::Buffer pos[2], vel, acc, phi;
  cl::Buffer stage[2];              // pinned host staging of the own block, by step parity
  void* stagePtr[2] = {nullptr, nullptr};
  std::string phDrift, phGravity, phSend, phRecv, phPotential;

  size_t gravityGlobal(size_t n) const {
    const size_t per = size_t(cfg.wg) * cfg.bpi;
    return (n + per - 1) / per * cfg.wg;
  }
};

struct MultiNBodySim::Prepared {
  std::vector<std::unique_ptr<Dev>> devs;  // with bodies only
  std::vector<NBodyDeviceShare> shares;
};

MultiNBodySim::Prepared MultiNBodySim::prepare(const std::vector<Context*>& devices,
                                               const Params& params,
                                               const std::vector<Body>& bodies,
                                               const MultiNBodyOptions& opts) {
  const size_t k = devices.size(), n = bodies.size();
  if (k == 0) throw Error("multi-device N-body: no devices given");
  if (n == 0) throw Error("N-body: no bodies");
  if (n > 0x7fffffffu) throw Error("N-body: too many bodies (limit 2^31 - 1)");
  if (!opts.shares.empty() && opts.shares.size() != k)
    throw Error("multi-device N-body: " + std::to_string(opts.shares.size()) +
                " shares given for " + std::to_string(k) + " devices");
  if (opts.kernels.size() > 1 && opts.kernels.size() != k)
    throw Error("multi-device N-body: " + std::to_string(opts.kernels.size()) +
                " kernel configurations given for " + std::to_string(k) + " devices");
  checkMultiNBodyMemory(devices, n);

  std::vector<cl_float4> p(n);
  for (size_t i = 0; i < n; ++i) {
    const Body& b = bodies[i];
    p[i] = {{float(b.x), float(b.y), float(b.z), float(b.m)}};
  }

  Prepared out;
  std::vector<std::unique_ptr<Dev>> all;
  for (size_t d = 0; d < k; ++d) {
    auto dev = std::make_unique<Dev>();
    dev->ctx = devices[d];
    dev->tag = deviceTag(devices[d]->info());
    // Default: the layout the single-device sim would pick for an even share.
    dev->cfg = opts.kernels.empty()
                   ? NBodyKernelConfig::automatic(devices[d]->info(), (n + k - 1) / k)
                   : opts.kernels[opts.kernels.size() == 1 ? 0 : d];
    onDevice(dev->ctx->info(), "building the N-body kernels", [&] {
      // Each device's program gets its own build options, so no two devices
      // share a program (hence kernel) hash. PoCL (3.1, Debian 12) keeps one
      // process-wide cache of loaded kernel binaries keyed by that hash, and
      // its release matches on hash and local size only, not on the grid
      // width the entry was specialised for: several CPU devices running the
      // same kernel at once over blocks of different sizes could decrement
      // another launch's entry and abort the process in
      // pocl_release_dlhandle_cache (seen once in CI, 3 devices, shares
      // 1:2:3). The define changes nothing in the code the kernels compile to.
      NBodyKernelConfig build = dev->cfg;
      if (k > 1) build.extraOptions += " -DEDDY_DEVICE_SLOT=" + std::to_string(d);
      dev->program = NBodySim::buildProgram(*dev->ctx, build);
      dev->part.emplace(dev->program, "nbody_gravity_part");
      dev->drift.emplace(dev->program, "nbody_drift");
      dev->potential.emplace(dev->program, "nbody_potential");
    });
    all.push_back(std::move(dev));
  }

  // Weights: given, or each device's measured rate of pair interactions.
  std::vector<double> weights = opts.shares, rates(k, 0.0);
  if (weights.empty()) {
    if (k == 1) {
      weights = {1.0};
    } else {
      const double eps = params.get("softening");
      const size_t tMax = (n + k - 1) / k;  // an even share: the size a device will see
      for (size_t d = 0; d < k; ++d) {
        Dev& dv = *all[d];
        rates[d] = onDevice(dv.ctx->info(), "calibrating the gravity kernel", [&] {
          auto& c = dv.ctx->context();
          auto& q = dv.ctx->queue();
          checkDeviceMemory(dv.ctx->info(), n * kF4 + 2 * tMax * kF4, n * kF4,
                            "calibrating with " + std::to_string(n) + " bodies");
          cl::Buffer pos(c, CL_MEM_READ_ONLY, n * kF4), vel(c, CL_MEM_READ_WRITE, tMax * kF4),
              acc(c, CL_MEM_READ_WRITE, tMax * kF4);
          q.enqueueWriteBuffer(pos, CL_TRUE, 0, n * kF4, p.data());
          q.enqueueFillBuffer(vel, cl_float4{{0, 0, 0, 0}}, 0, tMax * kF4);
          // Grow the targets to an even share, then the sources, until one
          // launch takes >= 20 ms (or covers the whole problem).
          size_t t = std::min<size_t>(tMax, 4096), s = std::min<size_t>(n, 4096);
          double ms = 0;
          for (int it = 0; it < 40; ++it) {
            cl::Event e = (*dv.part)(
                EnqueueArgs(q, cl::NDRange(dv.gravityGlobal(t)), cl::NDRange(dv.cfg.wg)), pos,
                pos, cl_uint(0), cl_uint(s), vel, acc, cl_uint(0), cl_uint(t), 1.0f,
                float(eps * eps), 0.0f, cl_uint(EDDY_NBODY_PART_FIRST | EDDY_NBODY_PART_LAST));
            e.wait();
            if (it == 0) continue;  // the first launch may include compiling for this size
            ms = double(e.getProfilingInfo<CL_PROFILING_COMMAND_END>() -
                        e.getProfilingInfo<CL_PROFILING_COMMAND_START>()) * 1e-6;
            if (ms >= 20.0 || (t == tMax && s == n)) break;
            if (t < tMax) t = std::min(tMax, 2 * t);
            else s = std::min(n, 2 * s);
          }
          return double(t) * double(s) / (std::max(ms, 1e-6) * 1e-3);
        });
      }
      weights = rates;
    }
  }
  const std::vector<size_t> counts = splitBodies(n, weights);
  const double wsum = std::accumulate(weights.begin(), weights.end(), 0.0);

  size_t first = 0;
  for (size_t d = 0; d < k; ++d) {
    NBodyDeviceShare sh;
    sh.tag = all[d]->tag;
    sh.name = devices[d]->info().name;
    sh.first = first;
    sh.count = counts[d];
    sh.weight = weights[d] / wsum;
    sh.rate = rates[d];
    out.shares.push_back(sh);
    all[d]->first = first;
    all[d]->count = counts[d];
    first += counts[d];
    if (counts[d] > 0) out.devs.push_back(std::move(all[d]));
  }
  return out;
}

MultiNBodySim::MultiNBodySim(const std::vector<Context*>& devices, const Params& params,
                             const std::vector<Body>& bodies, MultiNBodyOptions opts)
    : MultiNBodySim(prepare(devices, params, bodies, opts), params, bodies) {}

MultiNBodySim::MultiNBodySim(Prepared&& prep, const Params& params, const std::vector<Body>& bodies)
    : Simulation(*prep.devs.front()->ctx, nbodyParamDecl()),
      n_(bodies.size()),
      devs_(std::move(prep.devs)),
      shares_(std::move(prep.shares)) {
  params_ = params;
  std::vector<cl_float4> p(n_), v(n_);
  for (size_t i = 0; i < n_; ++i) {
    const Body& b = bodies[i];
    p[i] = {{float(b.x), float(b.y), float(b.z), float(b.m)}};
    v[i] = {{float(b.vx), float(b.vy), float(b.vz), 0.0f}};
  }
  kp_.setMasses(p);
  const size_t k = devs_.size();
  for (size_t d = 0; d < k; ++d) {
    Dev& dv = *devs_[d];
    const bool primary = d == 0;
    const DeviceInfo& info = dv.ctx->info();
    const size_t phiBytes = primary ? n_ * (info.fp64 ? sizeof(double) : sizeof(float)) : 0;
    onDevice(info, "setting up " + std::to_string(dv.count) + " of " + std::to_string(n_) +
                       " bodies", [&] {
      checkDeviceMemory(info, (2 * n_ + 2 * dv.count) * kF4 + phiBytes, n_ * kF4,
                        std::to_string(n_) + " bodies, " + std::to_string(dv.count) + " own");
      auto& c = dv.ctx->context();
      auto& q = dv.ctx->queue();
      dv.xfer = cl::CommandQueue(c, dv.ctx->device(), CL_QUEUE_PROFILING_ENABLE);
      dv.pos[0] = dv.ctx->createBuffer(CL_MEM_READ_WRITE, n_ * kF4, "N-body pos[0]");
      dv.pos[1] = dv.ctx->createBuffer(CL_MEM_READ_WRITE, n_ * kF4, "N-body pos[1]");
      dv.vel = dv.ctx->createBuffer(CL_MEM_READ_WRITE, dv.count * kF4, "N-body vel");
      dv.acc = dv.ctx->createBuffer(CL_MEM_READ_WRITE, dv.count * kF4, "N-body acc");
      if (primary) dv.phi = dv.ctx->createBuffer(CL_MEM_READ_WRITE, phiBytes, "N-body phi");
      if (k > 1)
        for (int s = 0; s < 2; ++s) {
          // Pinned (driver-allocated) host memory: transfers stay asynchronous.
          dv.stage[s] = dv.ctx->createBuffer(CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR, dv.count * kF4, "N-body staging");
          dv.stagePtr[s] = q.enqueueMapBuffer(dv.stage[s], CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0,
                                              dv.count * kF4);
        }
      q.enqueueWriteBuffer(dv.pos[0], CL_TRUE, 0, n_ * kF4, p.data());
      q.enqueueWriteBuffer(dv.vel, CL_TRUE, 0, dv.count * kF4, v.data() + dv.first);
    });
    dv.phDrift = phase("drift", dv.tag);
    dv.phGravity = phase("gravity", dv.tag);
    dv.phSend = phase("send", dv.tag);
    dv.phRecv = phase("recv", dv.tag);
    dv.phPotential = phase("potential", dv.tag);
  }
  // drift, send, k gravity launches and k-1 receives per device
  eventsPerStep_ = k * (2 + k + (k - 1)) - (k == 1 ? 1 : 0);
  syncParams();
  computeAccelerations();
}

std::vector<std::string> MultiNBodySim::programOptions() const {
  std::vector<std::string> out;
  for (const auto& d : devs_)
    out.push_back(d->program.getBuildInfo<CL_PROGRAM_BUILD_OPTIONS>(d->ctx->device()));
  return out;
}

MultiNBodySim::~MultiNBodySim() {
  try {
    finish();
  } catch (...) {
  }
  // The driver may still be running send callbacks; they touch callbacksPending_.
  for (int i = 0; i < 10000 && callbacksPending_.load() > 0; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  for (auto& dv : devs_)
    for (int s = 0; s < 2; ++s)
      if (dv->stagePtr[s]) {
        try {
          dv->ctx->queue().enqueueUnmapMemObject(dv->stage[s], dv->stagePtr[s]);
          dv->ctx->queue().finish();
        } catch (...) {
        }
      }
}

const cl::Buffer& MultiNBodySim::positionBuffer() const { return devs_.front()->pos[cur_]; }

void MultiNBodySim::syncParams() {
  // The stored a(x_n) drives the next opening kick: keep it consistent.
  if (kp_.sync(params_)) computeAccelerations();
}

void MultiNBodySim::flushAll() {
  for (auto& dv : devs_) {
    dv->ctx->queue().flush();
    dv->xfer.flush();
  }
}

cl::Event MultiNBodySim::launchPart(Dev& dv, int buf, const std::vector<cl::Event>& wait,
                                    const Dev& src, cl_uint flags, float halfDt) {
  cl::Event e = (*dv.part)(
      EnqueueArgs(dv.ctx->queue(), wait, cl::NDRange(dv.gravityGlobal(dv.count)),
                      cl::NDRange(dv.cfg.wg)),
      dv.pos[buf], dv.pos[buf], cl_uint(src.first), cl_uint(src.first + src.count), dv.vel, dv.acc,
      cl_uint(dv.first), cl_uint(dv.count), kp_.G, kp_.eps2, halfDt, flags);
  profiler_.record(dv.phGravity, e);
  return e;
}

// Flags of the i-th of k gravity launches of one device in one step.
static cl_uint partFlags(size_t i, size_t k) {
  return (i == 0 ? EDDY_NBODY_PART_FIRST : 0u) | (i + 1 == k ? EDDY_NBODY_PART_LAST : 0u);
}

void MultiNBodySim::gravity(float halfDt) {
  const size_t k = devs_.size();
  const std::vector<cl::Event> none;
  for (auto& dp : devs_) {
    Dev& dv = *dp;
    onDevice(dv.ctx->info(), "gravity kernel", [&] {
      // Own block first, then the others in list order (as in step()).
      size_t i = 0;
      launchPart(dv, cur_, none, dv, partFlags(i++, k), halfDt);
      for (auto& other : devs_)
        if (other.get() != &dv) launchPart(dv, cur_, none, *other, partFlags(i++, k), halfDt);
    });
  }
  flushAll();
}

void MultiNBodySim::computeAccelerations() { gravity(0.0f); }

void MultiNBodySim::signalAbandoned(std::vector<cl_event>& users) {
  for (cl_event u : users) {
    clSetUserEventStatus(u, CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST);
    clReleaseEvent(u);
  }
  users.clear();
}

void MultiNBodySim::step() {
  syncParams();
  const size_t k = devs_.size();
  const int cur = cur_, next = 1 - cur_;
  const int par = int(steps_ & 1);  // staging buffer of this step
  // arrive[d][e]: user event of device d's context, set once e's block is on the host.
  std::vector<std::vector<cl::UserEvent>> arrive(k, std::vector<cl::UserEvent>(k));
  std::vector<cl_event> unsignalled;  // user events no callback is responsible for yet
  std::vector<cl::Event> drifted(k);
  size_t d = 0;
  try {
    // 1. Drift the own block into pos[next]; send it to the host as soon as it is done.
    for (d = 0; d < k; ++d) {
      Dev& dv = *devs_[d];
      drifted[d] = (*dv.drift)(
          EnqueueArgs(dv.ctx->queue(), cl::NDRange(dv.first),
                          cl::NDRange(roundUp(dv.count, EDDY_LINEAR_WG)), cl::NDRange(EDDY_LINEAR_WG)),
          dv.pos[cur], dv.pos[next], dv.vel, dv.acc, cl_uint(dv.first + dv.count), kp_.dt);
      profiler_.record(dv.phDrift, drifted[d]);
    }
    if (k > 1) {
      for (d = 0; d < k; ++d)
        for (size_t e = 0; e < k; ++e)
          if (e != d) {
            arrive[d][e] = cl::UserEvent(devs_[d]->ctx->context());
            unsignalled.push_back(arrive[d][e]());
          }
      for (d = 0; d < k; ++d) {
        Dev& dv = *devs_[d];
        const std::vector<cl::Event> waitDrift{drifted[d]};
        cl::Event sent;
        dv.xfer.enqueueReadBuffer(dv.pos[next], CL_FALSE, dv.first * kF4, dv.count * kF4,
                                  dv.stagePtr[par], &waitDrift, &sent);
        profiler_.record(dv.phSend, sent);
        auto* notice = new SendNotice{{}, &callbacksPending_};
        for (size_t r = 0; r < k; ++r)
          if (r != d) {
            cl_event u = arrive[r][d]();
            clRetainEvent(u);
            notice->users.push_back(u);
          }
        const std::vector<cl_event> handedOver = notice->users;  // notice may be gone below
        callbacksPending_.fetch_add(1);
        const cl_int rc = clSetEventCallback(sent(), CL_COMPLETE, onSent, notice);
        if (rc != CL_SUCCESS) {
          for (cl_event u : notice->users) clReleaseEvent(u);
          delete notice;
          callbacksPending_.fetch_sub(1);
          throw cl::Error(rc, "clSetEventCallback");
        }
        for (const cl_event u : handedOver)
          unsignalled.erase(std::find(unsignalled.begin(), unsignalled.end(), u));
      }
    }
    // 2. Forces: the local tile first (its sources are already here), then each
    //    other block as soon as it has been written into pos[next].
    const std::vector<cl::Event> none;
    for (d = 0; d < k; ++d) {
      Dev& dv = *devs_[d];
      size_t i = 0;
      launchPart(dv, next, none, dv, partFlags(i++, k), 0.5f * kp_.dt);
      for (size_t e = 0; e < k; ++e) {
        if (e == d) continue;
        const Dev& src = *devs_[e];
        // pos[next] of this device is free once its own drift ran: the drift
        // follows every earlier gravity launch on the in-order compute queue.
        const std::vector<cl::Event> waitArrive{arrive[d][e], drifted[d]};
        cl::Event got;
        dv.xfer.enqueueWriteBuffer(dv.pos[next], CL_FALSE, src.first * kF4, src.count * kF4,
                                   src.stagePtr[par], &waitArrive, &got);
        profiler_.record(dv.phRecv, got);
        launchPart(dv, next, {got}, src, partFlags(i++, k), 0.5f * kp_.dt);
      }
    }
    flushAll();
  } catch (const cl::Error& e) {
    signalAbandoned(unsignalled);
    const std::string where = d < k ? devLabel(devs_[d]->ctx->info()) + ": " : "";
    throw Error(where + "N-body step " + std::to_string(steps_) + ": " + describe(e));
  }
  cur_ = next;
  time_ += kp_.dtExact;
  ++steps_;
  profiler_.endStep();
  // Bound how far the host runs ahead: a few steps are enough to keep every
  // device busy, and each step holds user events and callbacks.
  profiler_.collect(false);
  const size_t maxPending = std::min<size_t>(4096, 8 * eventsPerStep_);
  if (profiler_.pending() > maxPending)
    pollUntil([&] {
      profiler_.collect(false);
      return profiler_.pending() <= maxPending / 2;
    });
}

// Waits by polling, flushing every queue on each round: a command held by a
// user event may need a flush after the event is set on some drivers, and a
// blocking wait on one queue would never give it one.
void MultiNBodySim::pollUntil(const std::function<bool()>& done) {
  while (!done()) {
    flushAll();
    std::this_thread::sleep_for(std::chrono::microseconds(100));
  }
}

void MultiNBodySim::finish() {
  std::vector<std::pair<const Dev*, cl::Event>> marks;
  for (auto& dv : devs_)
    onDevice(dv->ctx->info(), "finishing", [&] {
      for (cl::CommandQueue* q : {&dv->ctx->queue(), &dv->xfer}) {
        cl::Event m;
        q->enqueueMarkerWithWaitList(nullptr, &m);
        marks.emplace_back(dv.get(), m);
      }
    });
  pollUntil([&] {
    for (const auto& [dv, m] : marks) {
      const cl_int st = m.getInfo<CL_EVENT_COMMAND_EXECUTION_STATUS>();
      if (st < 0)
        throw Error(devLabel(dv->ctx->info()) + ": a queued command failed: " + clErrorName(st));
      if (st != CL_COMPLETE) return false;
    }
    return true;
  });
  for (auto& dv : devs_)
    onDevice(dv->ctx->info(), "finishing", [&] {
      dv->ctx->queue().finish();
      dv->xfer.finish();
    });
}

std::vector<cl_float4> MultiNBodySim::readPositions() {
  finish();  // every block has arrived on the primary device
  Dev& p = *devs_.front();
  std::vector<cl_float4> out(n_);
  onDevice(p.ctx->info(), "reading positions", [&] {
    p.ctx->queue().enqueueReadBuffer(p.pos[cur_], CL_TRUE, 0, n_ * kF4, out.data());
  });
  return out;
}

std::vector<cl_float4> MultiNBodySim::gatherOwned(cl::Buffer Dev::*buffer, const char* what) {
  finish();
  std::vector<cl_float4> out(n_);
  for (auto& dv : devs_)
    onDevice(dv->ctx->info(), what, [&] {
      dv->ctx->queue().enqueueReadBuffer((*dv).*buffer, CL_TRUE, 0, dv->count * kF4,
                                         out.data() + dv->first);
    });
  return out;
}

std::vector<cl_float4> MultiNBodySim::readVelocities() {
  return gatherOwned(&Dev::vel, "reading velocities");
}

std::vector<cl_float4> MultiNBodySim::readAccelerations() {
  return gatherOwned(&Dev::acc, "reading accelerations");
}

NBodyDiagnostics MultiNBodySim::diagnostics() {
  syncParams();  // G and the softening as they are now (NBodySim::diagnostics)
  const auto p = readPositions();
  const auto v = readVelocities();
  Dev& dv = *devs_.front();
  std::vector<double> phi(n_);
  onDevice(dv.ctx->info(), "N-body diagnostics", [&] {
    auto& q = dv.ctx->queue();
    cl::Event e = (*dv.potential)(
        EnqueueArgs(q, cl::NDRange(roundUp(n_, EDDY_LINEAR_WG)), cl::NDRange(EDDY_LINEAR_WG)),
        dv.pos[cur_], dv.phi, cl_uint(n_), kp_.eps2);
    profiler_.record(dv.phPotential, e);
    if (dv.ctx->info().fp64) {
      q.enqueueReadBuffer(dv.phi, CL_TRUE, 0, n_ * sizeof(double), phi.data());
    } else {
      std::vector<float> f(n_);
      q.enqueueReadBuffer(dv.phi, CL_TRUE, 0, n_ * sizeof(float), f.data());
      for (size_t i = 0; i < n_; ++i) phi[i] = f[i];
    }
  });
  return nbodyDiagnostics(p, v, phi, double(kp_.G));
}

std::vector<double> MultiNBodySim::diagRow() { return nbodyDiagRow(steps_, time_, diagnostics()); }

std::vector<std::vector<double>> MultiNBodySim::stateRows() {
  return nbodyStateRows(readPositions(), readVelocities());
}

}  // namespace eddy
