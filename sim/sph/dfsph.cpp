#include "dfsph.hpp"

#include "snapshot.hpp"
#include "sph.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace eddy {

namespace {

cl_float4 tank4(const std::array<double, 3>& t) { return makeFloat4(t[0], t[1], t[2], 0); }

template <class T>
std::vector<T> readBuf(cl::CommandQueue& q, const cl::Buffer& b, size_t n) {
  std::vector<T> out(n);
  if (n) q.enqueueReadBuffer(b, CL_TRUE, 0, n * sizeof(T), out.data());
  return out;
}

}  // namespace

cl::Program DfsphKernels::buildProgram(Context& ctx, bool crDivSqrt) {
  if (ctx.info().maxWorkGroup < EDDY_SPH_WG)
    throw Error("DFSPH needs work-groups of " + std::to_string(EDDY_SPH_WG) + " items; " +
                ctx.info().name + " allows " + std::to_string(ctx.info().maxWorkGroup));
  std::string opts = "-DSPH_WG=" + std::to_string(EDDY_SPH_WG) + " -DSPH_NLIST=1";
  if (crDivSqrt && ctx.info().correctlyRoundedDivSqrt)
    opts += " -cl-fp32-correctly-rounded-divide-sqrt";
  return ctx.buildProgram({"sph_common.cl", "sph_integrate.cl", "sph_dfsph.cl"}, opts);
}

DfsphKernels::DfsphKernels(Context& ctx, size_t capacity, Profiler& profiler, bool crDivSqrt)
    : ctx_(ctx),
      prof_(profiler),
      cap_(std::max<size_t>(capacity, 1)),
      program_(buildProgram(ctx, crDivSqrt)),
      stateHost_(EDDY_DFSPH_STATE_SIZE, 0),
      lastState_(EDDY_DFSPH_STATE_SIZE, 0) {
  // No step yet: the first solves get max_iterations rounds.
  stateHost_[EDDY_DFSPH_ST_DIV_ITER] = stateHost_[EDDY_DFSPH_ST_DEN_ITER] = EDDY_DFSPH_UNKNOWN_ITER;
  lastState_ = stateHost_;
  const size_t f = cap_ * sizeof(cl_float);
  try {
    aux_ = ctx.createBuffer(CL_MEM_READ_WRITE, cap_ * sizeof(cl_float2), "DFSPH factor");
    for (int k = 0; k < 2; ++k) {
      kdiv_[k] = ctx.createBuffer(CL_MEM_READ_WRITE, f, "DFSPH divergence pressure");
      kden_[k] = ctx.createBuffer(CL_MEM_READ_WRITE, f, "DFSPH density pressure");
    }
    dk_ = ctx.createBuffer(CL_MEM_READ_WRITE, f, "DFSPH pressure change");
    partial_ = ctx.createBuffer(CL_MEM_READ_WRITE, groups(cap_) * sizeof(cl_float),
                                "DFSPH error sums");
    state_ = ctx.createBuffer(CL_MEM_READ_WRITE, EDDY_DFSPH_STATE_SIZE * sizeof(cl_uint),
                              "DFSPH state");
    auto& q = ctx.queue();
    const std::vector<cl_float> zeros(cap_, 0.0f);
    for (int k = 0; k < 2; ++k) {
      q.enqueueWriteBuffer(kdiv_[k], CL_TRUE, 0, f, zeros.data());
      q.enqueueWriteBuffer(kden_[k], CL_TRUE, 0, f, zeros.data());
    }
    q.enqueueWriteBuffer(dk_, CL_TRUE, 0, f, zeros.data());
    q.enqueueWriteBuffer(state_, CL_TRUE, 0, EDDY_DFSPH_STATE_SIZE * sizeof(cl_uint),
                         stateHost_.data());
  } catch (const cl::Error& e) {
    throw Error("DFSPH setup: " + describe(e));
  }
}

DfsphKernels::~DfsphKernels() {
  try {
    if (statePending_) stateRead_.wait();  // the read writes into stateHost_
  } catch (...) {
    // teardown: nothing to report to
  }
}

cl::NDRange DfsphKernels::global(size_t n) const { return cl::NDRange(roundUp(n, EDDY_SPH_WG)); }
size_t DfsphKernels::groups(size_t n) const { return roundUp(n, EDDY_SPH_WG) / EDDY_SPH_WG; }

void DfsphKernels::runDensity(const DfsphBuffers& b, const DfsphParams& p, bool withPressure) {
  try {
    prof_.record("dfsph_density",
                 density_(cl::EnqueueArgs(ctx_.queue(), global(b.n), cl::NDRange(EDDY_SPH_WG)),
                          *b.pos, *b.nlist, *b.nbcount, *b.rhop, aux_, kden_[cur_],
                          kdiv_[cur_], *b.clock, cl_uint(withPressure ? 1 : 0), cl_uint(b.n), tank4(b.tank), cl_float(p.h),
                          cl_float(p.mass), cl_float(p.gradScale)));
  } catch (const cl::Error& e) {
    throw Error("DFSPH density kernel: " + describe(e));
  }
}

void DfsphKernels::runRate(unsigned slot, const DfsphBuffers& b, const DfsphParams& p) {
  auto args = cl::EnqueueArgs(ctx_.queue(), global(b.n), cl::NDRange(EDDY_SPH_WG));
  try {
    if (slot == EDDY_DFSPH_SLOT_DIV)
      prof_.record("divergence_rate",
                   divRate_(args, *b.pos, *b.vel, *b.nlist, *b.nbcount, aux_, kdiv_[cur_], dk_,
                            partial_, state_, cl_uint(b.n), tank4(b.tank), cl_float(p.h),
                            cl_float(p.mass), cl_float(EDDY_DFSPH_OMEGA)));
    else
      prof_.record("density_rate",
                   denRate_(args, *b.pos, *b.vel, *b.nlist, *b.nbcount, *b.rhop, aux_,
                            kden_[cur_], dk_, partial_, state_, *b.clock, cl_uint(b.n),
                            tank4(b.tank), cl_float(p.h), cl_float(p.mass), cl_float(p.rho0),
                            cl_float(EDDY_DFSPH_OMEGA)));
  } catch (const cl::Error& e) {
    throw Error("DFSPH rate kernel: " + describe(e));
  }
}

void DfsphKernels::runCheck(unsigned slot, const DfsphBuffers& b, const DfsphParams& p) {
  const bool div = slot == EDDY_DFSPH_SLOT_DIV;
  try {
    prof_.record(div ? "divergence_check" : "density_check",
                 check_(cl::EnqueueArgs(ctx_.queue(), cl::NDRange(EDDY_SPH_WG),
                                        cl::NDRange(EDDY_SPH_WG)),
                        partial_, state_, *b.clock, cl_uint(slot), cl_uint(groups(b.n)),
                        cl_uint(b.n), cl_float(p.rho0),
                        cl_float(div ? p.divergenceTolerance : p.densityTolerance),
                        cl_uint(p.minIterations), cl_uint(p.maxIterations)));
  } catch (const cl::Error& e) {
    throw Error("DFSPH convergence check kernel: " + describe(e));
  }
}

void DfsphKernels::runVelocity(unsigned slot, bool commit, const DfsphBuffers& b,
                              const DfsphParams& p) {
  const bool div = slot == EDDY_DFSPH_SLOT_DIV || slot == EDDY_DFSPH_NO_SLOT;
  const char* row = slot == EDDY_DFSPH_NO_SLOT ? "divergence_warm"
                    : div                      ? "divergence_velocity"
                                               : "density_velocity";
  try {
    prof_.record(row, velocity_(cl::EnqueueArgs(ctx_.queue(), global(b.n),
                                                cl::NDRange(EDDY_SPH_WG)),
                                *b.pos, *b.vel, *b.nlist, *b.nbcount,
                                slot == EDDY_DFSPH_NO_SLOT ? kdiv_[cur_] : dk_,
                                div ? kdiv_[cur_] : kden_[cur_], state_, *b.clock, cl_uint(slot),
                                cl_uint(div ? 0 : 1), cl_uint(commit ? 1 : 0), cl_uint(b.n),
                                tank4(b.tank), cl_float(p.h), cl_float(p.mass),
                                cl_float(p.gradScale)));
  } catch (const cl::Error& e) {
    throw Error("DFSPH velocity kernel: " + describe(e));
  }
}

// The rounds a solve is given: twice what it needed last step, plus 2, within
// [min_iterations, max_iterations]; max_iterations when unknown (the first
// step). Only the device state decides (restarts reproduce it); a solve that
// needed more stops at the batch with its error reported, and the next step's
// batch doubles.
unsigned DfsphKernels::batch(unsigned slot, const DfsphParams& p) const {
  const cl_uint last = lastState_[slot + EDDY_DFSPH_ST_ITER];
  if (last == EDDY_DFSPH_UNKNOWN_ITER || p.exactSolves) return p.maxIterations;
  const unsigned want = 2 * unsigned(std::min<cl_uint>(last, 1u << 20)) + 2;
  return std::clamp(want, std::max(p.minIterations, 1u), std::max(p.maxIterations, 1u));
}

// A solve: B rounds of (rate, check, velocity) and a last (rate, check) that
// measures the final error. Rounds after convergence are no-ops on the device
// (the done flag); nothing waits here.
void DfsphKernels::solve(unsigned slot, unsigned rounds, const DfsphBuffers& b,
                        const DfsphParams& p) {
  for (unsigned it = 0; it < rounds; ++it) {
    runRate(slot, b, p);
    runCheck(slot, b, p);
    runVelocity(slot, true, b, p);
  }
  runRate(slot, b, p);
  runCheck(slot, b, p);
}

void DfsphKernels::runDivergenceSolve(const DfsphBuffers& b, const DfsphParams& p) {
  runVelocity(EDDY_DFSPH_NO_SLOT, false, b, p);  // warm start (dk = kv); resets the state
  solve(EDDY_DFSPH_SLOT_DIV, batch(EDDY_DFSPH_SLOT_DIV, p), b, p);
}

void DfsphKernels::runDensitySolve(const DfsphBuffers& b, const DfsphParams& p) {
  solve(EDDY_DFSPH_SLOT_DEN, batch(EDDY_DFSPH_SLOT_DEN, p), b, p);
}

void DfsphKernels::runDt(const DfsphBuffers& b, const DfsphParams& p) {
  try {
    prof_.record("dt", dt_(cl::EnqueueArgs(ctx_.queue(), cl::NDRange(1)), *b.clock, *b.counters,
                           cl_float(p.spacing), cl_float(p.velocityCfl), cl_float(p.minDt),
                           cl_float(p.maxDt)));
  } catch (const cl::Error& e) {
    throw Error("DFSPH time-step kernel: " + describe(e));
  }
}

void DfsphKernels::runPredict(const DfsphBuffers& b, const DfsphParams& p) {
  try {
    prof_.record("predict",
                 predict_(cl::EnqueueArgs(ctx_.queue(), global(b.n), cl::NDRange(EDDY_SPH_WG)),
                          *b.pos, *b.vel, *b.acc, *b.nlist, *b.nbcount, kden_[cur_], *b.clock,
                          cl_uint(b.n), tank4(b.tank), cl_float(p.h), cl_float(p.mass),
                          cl_float(p.gradScale)));
  } catch (const cl::Error& e) {
    throw Error("DFSPH predict kernel: " + describe(e));
  }
}

void DfsphKernels::runIntegrate(const DfsphBuffers& b, const DfsphParams& p) {
  try {
    prof_.record("integrate",
                 integrate_(cl::EnqueueArgs(ctx_.queue(), global(b.n), cl::NDRange(EDDY_SPH_WG)),
                            *b.pos, *b.vel, *b.rhop, kden_[cur_], kdiv_[cur_], *b.clock,
                            *b.counters,
                            cl_uint(b.n), tank4(b.tank), cl_float(p.restitution)));
  } catch (const cl::Error& e) {
    throw Error("DFSPH integrate kernel: " + describe(e));
  }
}

void DfsphKernels::reorder(const cl::Buffer& order, size_t n) {
  const int next = 1 - cur_;
  try {
    prof_.record("reorder_warm",
                 reorder_(cl::EnqueueArgs(ctx_.queue(), global(n), cl::NDRange(EDDY_SPH_WG)),
                          order, kdiv_[cur_], kden_[cur_], kdiv_[next], kden_[next],
                          cl_uint(n)));
  } catch (const cl::Error& e) {
    throw Error("DFSPH reorder kernel: " + describe(e));
  }
  cur_ = next;
}

void DfsphKernels::beginStep(const DfsphBuffers& b, const DfsphParams& p) {
  // The batches come from the last step's state: wait for its read (the
  // device meanwhile runs this step's pipeline, enqueued before).
  if (statePending_) {
    stateRead_.wait();
    statePending_ = false;
    lastState_ = stateHost_;
    account(lastState_);
  }
  runDensity(b, p);
  runDivergenceSolve(b, p);
}

void DfsphKernels::finishStep(const DfsphBuffers& b, const DfsphParams& p) {
  runDt(b, p);
  runPredict(b, p);
  runDensitySolve(b, p);
  runIntegrate(b, p);
  // The state of this step, read without waiting (next step's batches, stats).
  {
    try {
      ctx_.queue().enqueueReadBuffer(state_, CL_FALSE, 0, stateHost_.size() * sizeof(cl_uint),
                                     stateHost_.data(), nullptr, &stateRead_);
    } catch (const cl::Error& e) {
      throw Error("DFSPH state read: " + describe(e));
    }
    statePending_ = true;
  }
}

void DfsphKernels::pollState() {
  if (statePending_ &&
      stateRead_.getInfo<CL_EVENT_COMMAND_EXECUTION_STATUS>() == CL_COMPLETE) {
    statePending_ = false;
    lastState_ = stateHost_;
    account(lastState_);
  }
}

void DfsphKernels::account(const std::vector<cl_uint>& st) {
  if (st[EDDY_DFSPH_ST_DEN_ITER] == EDDY_DFSPH_UNKNOWN_ITER) return;
  sumDen_ += double(st[EDDY_DFSPH_ST_DEN_ITER]);
  sumDiv_ += double(st[EDDY_DFSPH_ST_DIV_ITER]);
  stepsRead_ += 1;
}

DfsphStats DfsphKernels::decode(const std::vector<cl_uint>& s) {
  auto f = [&](int k) {
    float x;
    std::memcpy(&x, &s[k], sizeof x);
    return double(x);
  };
  auto it = [&](int k) { return s[k] == EDDY_DFSPH_UNKNOWN_ITER ? 0u : unsigned(s[k]); };
  DfsphStats d;
  d.divergenceIterations = it(EDDY_DFSPH_ST_DIV_ITER);
  d.densityIterations = it(EDDY_DFSPH_ST_DEN_ITER);
  d.divergenceError = f(EDDY_DFSPH_ST_DIV_ERR);
  d.densityError = f(EDDY_DFSPH_ST_DEN_ERR);
  return d;
}

DfsphStats DfsphKernels::polledStats() {
  pollState();
  return decode(lastState_);
}

DfsphStats DfsphKernels::stats() {
  if (statePending_) {
    stateRead_.wait();
    statePending_ = false;
    account(stateHost_);
  }
  lastState_ = readState();
  DfsphStats d = decode(lastState_);
  if (stepsRead_ > 0) {
    d.meanDensityIterations = sumDen_ / stepsRead_;
    d.meanDivergenceIterations = sumDiv_ / stepsRead_;
  }
  return d;
}

std::vector<cl_float2> DfsphKernels::readFactor(size_t n) {
  return readBuf<cl_float2>(ctx_.queue(), aux_, n);
}
std::vector<cl_float> DfsphKernels::readDivergencePressure(size_t n) {
  return readBuf<cl_float>(ctx_.queue(), kdiv_[cur_], n);
}
std::vector<cl_float> DfsphKernels::readDensityPressure(size_t n) {
  return readBuf<cl_float>(ctx_.queue(), kden_[cur_], n);
}
std::vector<cl_float> DfsphKernels::readDk(size_t n) { return readBuf<cl_float>(ctx_.queue(), dk_, n); }
std::vector<cl_uint> DfsphKernels::readState() {
  return readBuf<cl_uint>(ctx_.queue(), state_, EDDY_DFSPH_STATE_SIZE);
}

void DfsphKernels::writePressures(const std::vector<cl_float>& kdiv,
                                 const std::vector<cl_float>& kden) {
  if (kdiv.size() != kden.size() || kdiv.size() > cap_)
    throw Error("DFSPH: the pressures do not match the capacity");
  if (kdiv.empty()) return;
  auto& q = ctx_.queue();
  q.enqueueWriteBuffer(kdiv_[cur_], CL_TRUE, 0, kdiv.size() * sizeof(cl_float), kdiv.data());
  q.enqueueWriteBuffer(kden_[cur_], CL_TRUE, 0, kden.size() * sizeof(cl_float), kden.data());
}

void DfsphKernels::writeDk(const std::vector<cl_float>& dk) {
  if (dk.size() > cap_) throw Error("DFSPH: dk does not match the capacity");
  if (!dk.empty())
    ctx_.queue().enqueueWriteBuffer(dk_, CL_TRUE, 0, dk.size() * sizeof(cl_float), dk.data());
}

void DfsphKernels::writeState(const std::vector<cl_uint>& state) {
  if (state.size() != EDDY_DFSPH_STATE_SIZE) throw Error("DFSPH: wrong solver state size");
  if (statePending_) {
    stateRead_.wait();
    statePending_ = false;
  }
  ctx_.queue().enqueueWriteBuffer(state_, CL_TRUE, 0, state.size() * sizeof(cl_uint),
                                  state.data());
  lastState_ = state;
}

// ---- DfsphSolver ---------------------------------------------------------------

namespace {
Context& listMode(Context& ctx, const SphKernelConfig& cfg) {
  if (!cfg.neighbourList) throw Error("SPH: the dfsph solver needs the neighbour list (list mode)");
  return ctx;
}
}  // namespace

DfsphSolver::DfsphSolver(Context& ctx, SphParticles& p, const SphKernelConfig& cfg)
    : forcesProgram_(listMode(ctx, cfg).buildProgram(std::vector<std::string>{"sph_common.cl", "sph_forces.cl"},
                                                     SphParticles::buildOptions(ctx, cfg))),
      kernels_(ctx, p.capacity(), p.profiler(), cfg.correctlyRoundedDivSqrt) {
  const size_t cap = p.capacity();
  try {
    rhop_ = ctx.createBuffer(CL_MEM_READ_WRITE, cap * sizeof(cl_float2), "SPH rhop");
    acc_ = ctx.createBuffer(CL_MEM_READ_WRITE, cap * sizeof(cl_float4), "SPH acc");
    const std::vector<cl_float4> a(cap, makeFloat4(0, 0, 0, 0));
    ctx.queue().enqueueWriteBuffer(acc_, CL_TRUE, 0, cap * sizeof(cl_float4), a.data());
  } catch (const cl::Error& e) {
    throw Error("SPH setup: " + describe(e));
  }
}

DfsphParams DfsphSolver::params(const SphPhysics& phys) {
  DfsphParams d;
  d.h = phys.h;
  d.mass = phys.mass;
  d.rho0 = phys.rho0;
  d.gradScale = phys.gradScale;
  d.spacing = phys.spacing;
  d.velocityCfl = phys.velocityCfl;
  d.minDt = phys.minDt;
  d.maxDt = phys.maxDt;
  d.restitution = phys.restitution;
  d.densityTolerance = phys.densityTolerance;
  d.divergenceTolerance = phys.divergenceTolerance;
  d.minIterations = phys.minIterations;
  d.maxIterations = phys.maxIterations;
  return d;
}

DfsphBuffers DfsphSolver::buffers(SphParticles& p) const {
  DfsphBuffers b;
  b.pos = &p.positions();
  b.vel = &p.velocities();
  b.nlist = &p.neighbourList();
  b.nbcount = &p.neighbourCounts();
  b.rhop = &rhop_;
  b.acc = &acc_;
  b.clock = &p.clock();
  b.counters = &p.counters();
  b.n = p.size();
  b.tank = p.tank();
  return b;
}

void DfsphSolver::computeDensity(SphParticles& p, const SphPhysics& phys) {
  kernels_.runDensity(buffers(p), params(phys), true);
}

void DfsphSolver::computeAccelerations(SphParticles& p, const SphPhysics& phys) {
  try {
    p.profiler().record(
        "forces", forces_(p.launch(), p.positions(), p.velocities(), rhop_, p.cells(),
                          p.neighbourList(), p.neighbourCounts(), acc_, p.counters(), p.count(),
                          p.dims4(), p.invCell(), p.tank4(), cl_float(phys.h),
                          cl_float(phys.mass), cl_float(phys.c0), cl_float(phys.alpha),
                          cl_float(phys.gravity), cl_float(phys.gamma), cl_float(phys.rho0),
                          cl_float(phys.gradScale)));
  } catch (const cl::Error& e) {
    throw Error("SPH forces kernel: " + describe(e));
  }
}

void DfsphSolver::step(SphParticles& p, const SphPhysics& phys) {
  const DfsphBuffers b = buffers(p);
  const DfsphParams d = params(phys);
  kernels_.beginStep(b, d);        // density + factor (rhop's pressure 0), divergence solve
  computeAccelerations(p, phys);   // sph_forces without pressure; maxima for dt
  kernels_.finishStep(b, d);       // dt, predict, density solve, integrate
}

void DfsphSolver::reordered(SphParticles& p) { kernels_.reorder(p.order(), p.size()); }

bool DfsphSolver::solveStats(SphSolveStats& out) {
  out = kernels_.stats();
  return true;
}

void DfsphSolver::saveState(SnapshotWriter& out, size_t n) {
  out.addArray("sph/dfsph_kdiv", kernels_.readDivergencePressure(n));
  out.addArray("sph/dfsph_kden", kernels_.readDensityPressure(n));
  out.addArray("sph/dfsph_state", kernels_.readState());
}

void DfsphSolver::restoreState(const SphState& st) {
  const size_t n = st.pos.size();
  if (st.kdiv.size() == n && st.kden.size() == n) {
    kernels_.writePressures(st.kdiv, st.kden);
  } else {  // a WCSPH snapshot: start cold
    kernels_.writePressures(std::vector<cl_float>(n, 0.0f), std::vector<cl_float>(n, 0.0f));
  }
  if (st.dfsphState.size() == EDDY_DFSPH_STATE_SIZE) kernels_.writeState(st.dfsphState);
}

}  // namespace eddy
