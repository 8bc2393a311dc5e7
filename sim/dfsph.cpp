#include "dfsph.hpp"

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

cl::Program DfsphSolver::buildProgram(Context& ctx, bool crDivSqrt) {
  if (ctx.info().maxWorkGroup < EDDY_SPH_WG)
    throw Error("DFSPH needs work-groups of " + std::to_string(EDDY_SPH_WG) + " items; " +
                ctx.info().name + " allows " + std::to_string(ctx.info().maxWorkGroup));
  std::string opts = "-DSPH_WG=" + std::to_string(EDDY_SPH_WG) + " -DSPH_NLIST=1";
  if (crDivSqrt && ctx.info().correctlyRoundedDivSqrt)
    opts += " -cl-fp32-correctly-rounded-divide-sqrt";
  return ctx.buildProgram({"sph_common.cl", "sph_integrate.cl", "sph_dfsph.cl"}, opts);
}

DfsphSolver::DfsphSolver(Context& ctx, size_t capacity, Profiler& profiler, bool crDivSqrt)
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

DfsphSolver::~DfsphSolver() {
  try {
    if (statePending_) stateRead_.wait();  // the read writes into stateHost_
  } catch (...) {
    // teardown: nothing to report to
  }
}

cl::NDRange DfsphSolver::global(size_t n) const { return cl::NDRange(roundUp(n, EDDY_SPH_WG)); }
size_t DfsphSolver::groups(size_t n) const { return roundUp(n, EDDY_SPH_WG) / EDDY_SPH_WG; }

void DfsphSolver::runDensity(const DfsphBuffers& b, const DfsphParams& p, bool withPressure) {
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

void DfsphSolver::runRate(unsigned slot, const DfsphBuffers& b, const DfsphParams& p) {
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

void DfsphSolver::runCheck(unsigned slot, const DfsphBuffers& b, const DfsphParams& p) {
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

void DfsphSolver::runVelocity(unsigned slot, bool commit, const DfsphBuffers& b,
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
unsigned DfsphSolver::batch(unsigned slot, const DfsphParams& p) const {
  const cl_uint last = lastState_[slot + EDDY_DFSPH_ST_ITER];
  if (last == EDDY_DFSPH_UNKNOWN_ITER || p.exactSolves) return p.maxIterations;
  const unsigned want = 2 * unsigned(std::min<cl_uint>(last, 1u << 20)) + 2;
  return std::clamp(want, std::max(p.minIterations, 1u), std::max(p.maxIterations, 1u));
}

// A solve: B rounds of (rate, check, velocity) and a last (rate, check) that
// measures the final error. Rounds after convergence are no-ops on the device
// (the done flag); nothing waits here.
void DfsphSolver::solve(unsigned slot, unsigned rounds, const DfsphBuffers& b,
                        const DfsphParams& p) {
  for (unsigned it = 0; it < rounds; ++it) {
    runRate(slot, b, p);
    runCheck(slot, b, p);
    runVelocity(slot, true, b, p);
  }
  runRate(slot, b, p);
  runCheck(slot, b, p);
}

void DfsphSolver::runDivergenceSolve(const DfsphBuffers& b, const DfsphParams& p) {
  runVelocity(EDDY_DFSPH_NO_SLOT, false, b, p);  // warm start (dk = kv); resets the state
  solve(EDDY_DFSPH_SLOT_DIV, batch(EDDY_DFSPH_SLOT_DIV, p), b, p);
}

void DfsphSolver::runDensitySolve(const DfsphBuffers& b, const DfsphParams& p) {
  solve(EDDY_DFSPH_SLOT_DEN, batch(EDDY_DFSPH_SLOT_DEN, p), b, p);
}

void DfsphSolver::runDt(const DfsphBuffers& b, const DfsphParams& p) {
  try {
    prof_.record("dt", dt_(cl::EnqueueArgs(ctx_.queue(), cl::NDRange(1)), *b.clock, *b.counters,
                           cl_float(p.spacing), cl_float(p.velocityCfl), cl_float(p.minDt),
                           cl_float(p.maxDt)));
  } catch (const cl::Error& e) {
    throw Error("DFSPH time-step kernel: " + describe(e));
  }
}

void DfsphSolver::runPredict(const DfsphBuffers& b, const DfsphParams& p) {
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

void DfsphSolver::runIntegrate(const DfsphBuffers& b, const DfsphParams& p) {
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

void DfsphSolver::reorder(const cl::Buffer& order, size_t n) {
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

void DfsphSolver::beginStep(const DfsphBuffers& b, const DfsphParams& p) {
  // The batches come from the last step's state: wait for its read (the
  // device meanwhile runs this step's pipeline, enqueued before).
  if (statePending_) {
    stateRead_.wait();
    statePending_ = false;
    lastState_ = stateHost_;
  }
  runDensity(b, p);
  runDivergenceSolve(b, p);
}

void DfsphSolver::finishStep(const DfsphBuffers& b, const DfsphParams& p) {
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

void DfsphSolver::pollState() {
  if (statePending_ &&
      stateRead_.getInfo<CL_EVENT_COMMAND_EXECUTION_STATUS>() == CL_COMPLETE) {
    statePending_ = false;
    lastState_ = stateHost_;
  }
}

DfsphStats DfsphSolver::decode(const std::vector<cl_uint>& s) {
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

DfsphStats DfsphSolver::polledStats() {
  pollState();
  return decode(lastState_);
}

DfsphStats DfsphSolver::stats() {
  if (statePending_) {
    stateRead_.wait();
    statePending_ = false;
  }
  lastState_ = readState();
  return decode(lastState_);
}

std::vector<cl_float2> DfsphSolver::readFactor(size_t n) {
  return readBuf<cl_float2>(ctx_.queue(), aux_, n);
}
std::vector<cl_float> DfsphSolver::readDivergencePressure(size_t n) {
  return readBuf<cl_float>(ctx_.queue(), kdiv_[cur_], n);
}
std::vector<cl_float> DfsphSolver::readDensityPressure(size_t n) {
  return readBuf<cl_float>(ctx_.queue(), kden_[cur_], n);
}
std::vector<cl_float> DfsphSolver::readDk(size_t n) { return readBuf<cl_float>(ctx_.queue(), dk_, n); }
std::vector<cl_uint> DfsphSolver::readState() {
  return readBuf<cl_uint>(ctx_.queue(), state_, EDDY_DFSPH_STATE_SIZE);
}

void DfsphSolver::writePressures(const std::vector<cl_float>& kdiv,
                                 const std::vector<cl_float>& kden) {
  if (kdiv.size() != kden.size() || kdiv.size() > cap_)
    throw Error("DFSPH: the pressures do not match the capacity");
  if (kdiv.empty()) return;
  auto& q = ctx_.queue();
  q.enqueueWriteBuffer(kdiv_[cur_], CL_TRUE, 0, kdiv.size() * sizeof(cl_float), kdiv.data());
  q.enqueueWriteBuffer(kden_[cur_], CL_TRUE, 0, kden.size() * sizeof(cl_float), kden.data());
}

void DfsphSolver::writeDk(const std::vector<cl_float>& dk) {
  if (dk.size() > cap_) throw Error("DFSPH: dk does not match the capacity");
  if (!dk.empty())
    ctx_.queue().enqueueWriteBuffer(dk_, CL_TRUE, 0, dk.size() * sizeof(cl_float), dk.data());
}

void DfsphSolver::writeState(const std::vector<cl_uint>& state) {
  if (state.size() != EDDY_DFSPH_STATE_SIZE) throw Error("DFSPH: wrong solver state size");
  if (statePending_) {
    stateRead_.wait();
    statePending_ = false;
  }
  ctx_.queue().enqueueWriteBuffer(state_, CL_TRUE, 0, state.size() * sizeof(cl_uint),
                                  state.data());
  lastState_ = state;
}

// ---- CPU references ----------------------------------------------------------

namespace {

// grad_i W(r_ij) = gradFactor(r) * (x_i - x_j)
double gradFactor(double r, double h) { return r > 0 ? sphKernelDW(r, h) / r : 0.0; }

// Every (j, image mask) pair of i within h, as the kernels walk them.
template <class F>
void forPairs(const DfsphReferenceInput& in, size_t i, F&& body) {
  const float hf = float(in.h);
  unsigned mask = 0;
  double w[3] = {0, 0, 0};
  for (int a = 0; a < 3; ++a) {
    const float x = in.pos[i].s[a], L = float(in.tank[a]);
    if (x <= L - x) {
      if (x < hf) mask |= 1u << a;
    } else {
      w[a] = L;
      if (L - x < hf) mask |= 1u << a;
    }
  }
  for (size_t j = 0; j < in.pos.size(); ++j) {
    if (!sphIsNeighbour(in.pos[i], in.pos[j], hf)) continue;
    for (unsigned s = mask;; s = (s - 1) & mask) {
      double d[3], vj[3], r2 = 0;
      for (int a = 0; a < 3; ++a) {
        const bool m = (s >> a) & 1;
        const double q = m ? 2 * w[a] - in.pos[j].s[a] : in.pos[j].s[a];
        vj[a] = in.vel.empty() ? 0.0 : (m ? -1.0 : 1.0) * double(in.vel[j].s[a]);
        d[a] = double(in.pos[i].s[a]) - q;
        r2 += d[a] * d[a];
      }
      const double r = std::sqrt(r2);
      if (r < in.h) body(j, s, d, r, vj);
      if (s == 0) break;
    }
  }
}

}  // namespace

void dfsphReferenceDensity(const DfsphReferenceInput& in, std::vector<double>& rho,
                           std::vector<double>& D, std::vector<unsigned>& count) {
  const size_t n = in.pos.size();
  rho.assign(n, 0);
  D.assign(n, 0);
  count.assign(n, 0);
  for (size_t i = 0; i < n; ++i) {
    double sw = 0, g[3] = {0, 0, 0}, g2 = 0;
    forPairs(in, i, [&](size_t, unsigned, const double* d, double r, const double*) {
      sw += sphKernelW(r, in.h);
      const double f = in.mass * gradFactor(r, in.h);
      for (int a = 0; a < 3; ++a) {
        g[a] += f * d[a];
        g2 += f * d[a] * f * d[a];
      }
      if (r > 0) ++count[i];
    });
    rho[i] = in.mass * sw;
    D[i] = g[0] * g[0] + g[1] * g[1] + g[2] * g[2] + g2;
  }
}

void dfsphReferenceRate(const DfsphReferenceInput& in, std::vector<double>& rate,
                        std::vector<double>& scale) {
  const size_t n = in.pos.size();
  rate.assign(n, 0);
  scale.assign(n, 0);
  for (size_t i = 0; i < n; ++i)
    forPairs(in, i, [&](size_t, unsigned, const double* d, double r, const double* vj) {
      double t = 0;
      for (int a = 0; a < 3; ++a) t += (double(in.vel[i].s[a]) - vj[a]) * d[a];
      t *= in.mass * gradFactor(r, in.h);
      rate[i] += t;
      scale[i] += std::fabs(t);
    });
}

void dfsphReferencePressureAccel(const DfsphReferenceInput& in, const std::vector<double>& k,
                                 std::vector<std::array<double, 3>>& acc,
                                 std::vector<double>& scale) {
  const size_t n = in.pos.size();
  acc.assign(n, {0, 0, 0});
  scale.assign(n, 0);
  for (size_t i = 0; i < n; ++i)
    forPairs(in, i, [&](size_t j, unsigned, const double* d, double r, const double*) {
      const double f = -in.gradScale * in.mass * (k[i] + k[j]) * gradFactor(r, in.h);
      for (int a = 0; a < 3; ++a) {
        acc[i][a] += f * d[a];
        scale[i] += std::fabs(f * d[a]);
      }
    });
}

}  // namespace eddy
