#include "dfsph.hpp"

#include "number_text.hpp"
#include "snapshot.hpp"
#include "sph.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>

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

cl::Program DfsphKernels::buildProgram(Context& ctx, bool crDivSqrt, bool thinWalls, bool twoSums) {
  if (ctx.info().maxWorkGroup < EDDY_SPH_WG)
    throw Error("DFSPH needs work-groups of " + std::to_string(EDDY_SPH_WG) + " items; " +
                ctx.info().name + " allows " + std::to_string(ctx.info().maxWorkGroup));
  std::string opts = "-DSPH_WG=" + std::to_string(EDDY_SPH_WG) + " -DSPH_NLIST=1";
  if (crDivSqrt && ctx.info().correctlyRoundedDivSqrt)
    opts += " -cl-fp32-correctly-rounded-divide-sqrt";
  if (twoSums) opts += " -DEDDY_DFSPH_TWO_SUMS=1";
  if (thinWalls) opts += " -DSPH_THIN_WALLS=1";  // SphKernelConfig::thinWalls
  // GPU devices: the solve passes after the done flag return at their first
  // line (kernels/sph/sph_common.cl, SPH_UNIFORM_RETURN; PoCL cannot). The
  // developer aid EDDY_SPH_UNIFORM_RETURN=0 turns it off to measure it.
  if ((ctx.info().type & CL_DEVICE_TYPE_GPU) != 0 && envSwitch("EDDY_SPH_UNIFORM_RETURN", true))
    opts += " -DSPH_UNIFORM_RETURN=1";
  return ctx.buildProgram(sphProgramFiles({"sph_integrate.cl", "sph_dfsph.cl"}), opts);
}

KernelFunctorOf<DfsphRateArgs>& DfsphKernels::relaxedRate() {
  if (!rateRelaxed_) {
    relaxedProgram_ = buildProgram(ctx_, crDivSqrt_, thinWalls_, true);
    rateRelaxed_ = std::make_unique<KernelFunctorOf<DfsphRateArgs>>(relaxedProgram_, "sph_dfsph_rate");
  }
  return *rateRelaxed_;
}

DfsphKernels::DfsphKernels(Context& ctx, size_t capacity, Profiler& profiler, bool crDivSqrt, bool thinWalls)
    : ctx_(ctx),
      prof_(profiler),
      cap_(std::max<size_t>(capacity, 1)),
      crDivSqrt_(crDivSqrt),
      thinWalls_(thinWalls),
      program_(buildProgram(ctx, crDivSqrt, thinWalls)) {
  // No step yet: the first solves get max_iterations rounds.
  std::vector<cl_uint> initial(EDDY_DFSPH_STATE_SIZE, 0);
  initial[EDDY_DFSPH_ST_DIV_ITER] = initial[EDDY_DFSPH_ST_DEN_ITER] = EDDY_DFSPH_UNKNOWN_ITER;
  initial[EDDY_DFSPH_ST_DIV_PREV] = initial[EDDY_DFSPH_ST_DEN_PREV] = EDDY_DFSPH_UNKNOWN_ITER;
  for (auto& r : reads_) r.host = initial;
  batchState_ = latestState_ = initial;
  kstride_ = roundUp(cap_, EDDY_DFSPH_K_ALIGN);
  const size_t rows = EDDY_DFSPH_K_ROWS * kstride_ * sizeof(cl_float);
  // The rate kernel's partial sums: two per work-group (residual, error) at
  // any lane count.
  const size_t maxGroups = roundUp(cap_ << EDDY_SPH_LANE_BITS_LIMIT, EDDY_SPH_WG) / EDDY_SPH_WG;
  // (dfsph_density's gradient sums: EDDY_DFSPH_GRAD_SUMS a group)
  const size_t ctlWords = EDDY_DFSPH_CTL_PARTIAL + EDDY_DFSPH_GRAD_SUMS * maxGroups;
  static_assert(EDDY_DFSPH_CTL_TICKET_GRAD < EDDY_DFSPH_CTL_GRAD &&
                    EDDY_DFSPH_CTL_GRAD + 6 <= EDDY_DFSPH_CTL_GRAD_NEXT &&
                    EDDY_DFSPH_CTL_GRAD_NEXT + 6 <= EDDY_DFSPH_CTL_PARTIAL &&
                    EDDY_DFSPH_CTL_RESIDUAL + 2 <= EDDY_DFSPH_CTL_GRAD && EDDY_DFSPH_GRAD_SUMS >= 2,
                "DFSPH control words overlap");
  try {
    for (auto& kb : kb_) kb = ctx.createBuffer(CL_MEM_READ_WRITE, rows, "DFSPH pressures and factors");
    ctl_ = ctx.createBuffer(CL_MEM_READ_WRITE, ctlWords * sizeof(cl_uint), "DFSPH state and error sums");
    warmAcc_ = ctx.createBuffer(CL_MEM_READ_WRITE, cap_ * sizeof(cl_float4), "DFSPH warm-start pressure");
    noBoundary_ = ctx.createBuffer(CL_MEM_READ_WRITE, sizeof(cl_float4), "DFSPH no boundary");
    noBoundaryCells_ = ctx.createBuffer(CL_MEM_READ_WRITE, 2 * sizeof(cl_uint), "DFSPH no boundary");
    auto& q = ctx.queue();
    const std::vector<cl_float> zeros(EDDY_DFSPH_K_ROWS * kstride_, 0.0f);
    for (auto& kb : kb_) q.enqueueWriteBuffer(kb, CL_TRUE, 0, rows, zeros.data());
    std::vector<cl_uint> ctl(ctlWords, 0);  // no tickets taken, no sums
    std::copy(initial.begin(), initial.end(), ctl.begin());
    const cl_float one[6] = EDDY_DFSPH_GRAD_IDENTITY;  // no renormalisation measured yet
    std::memcpy(&ctl[EDDY_DFSPH_CTL_GRAD], one, sizeof one);
    std::memcpy(&ctl[EDDY_DFSPH_CTL_GRAD_NEXT], one, sizeof one);
    q.enqueueWriteBuffer(ctl_, CL_TRUE, 0, ctlWords * sizeof(cl_uint), ctl.data());
    // Pinned host words for the done-flag polls (a mapped ALLOC_HOST_PTR
    // buffer, the usual destination of asynchronous reads on NVIDIA's
    // OpenCL; pageable memory was not tried).
    pollPinned_ = ctx.createBuffer(CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR, kPollWords * sizeof(cl_uint),
                                   "DFSPH done polls");
    pollHost_ = static_cast<cl_uint*>(q.enqueueMapBuffer(pollPinned_, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0,
                                                         kPollWords * sizeof(cl_uint)));
  } catch (const cl::Error& e) {
    throw Error("DFSPH setup: " + describe(e));
  }
  polling_ = envSwitch("EDDY_DFSPH_POLL", true);  // developer aid: 0 = no polls
  if (const char* e = std::getenv("EDDY_DFSPH_POLL_AHEAD"); e && *e)  // developer aid
    aheadMode_ = envSwitch("EDDY_DFSPH_POLL_AHEAD", true) ? PollAhead::on : PollAhead::off;
  if (const char* e = std::getenv("EDDY_DFSPH_POLL_AHEAD_DEPTH"); e && *e)  // developer aid
    setPollAheadDepth(unsigned(std::clamp(std::atoi(e), 1, int(kPollWords) - 1)));
  if (const char* e = std::getenv("EDDY_DFSPH_PAIRS"); e && *e)  // developer aid
    pairsMode_ = envSwitch("EDDY_DFSPH_PAIRS", true) ? PairGradients::on : PairGradients::off;
}

// The pair gradients for this density launch (and the solves after it), see
// setPairGradients; the buffer (4 bytes a list slot of every particle of the
// capacity) is allocated once, the first time. One that does not fit, or an
// allocation the driver refuses, turns them off for good (the kernels then
// evaluate the gradient per pair, as without them).
bool DfsphKernels::preparePairs(const DfsphBuffers& b) {
  if (pairsFailed_ || b.listCapacity == 0 || pairsMode_ == PairGradients::off) return false;
  const DeviceInfo& info = ctx_.info();
  if (pairsMode_ == PairGradients::automatic &&
      (!(info.type & CL_DEVICE_TYPE_GPU) || b.n < kPairGradientsMinParticles))
    return false;
  if (pairs_() != nullptr && pairsCap_ >= b.listCapacity) return true;
  const double bytes = double(EDDY_SPH_LIST_ROUNDUP(b.listCapacity)) * double(cap_) * sizeof(cl_float);
  if (bytes > double(info.maxAlloc) || bytes > 0.25 * double(info.globalMem)) {
    pairsFailed_ = true;
    return false;
  }
  try {
    pairs_ = ctx_.createBuffer(CL_MEM_READ_WRITE, size_t(bytes), "DFSPH pair gradients");
    pairsCap_ = b.listCapacity;
  } catch (const std::exception&) {
    pairs_ = cl::Buffer();
    pairsCap_ = 0;
    pairsFailed_ = true;
    return false;
  }
  return true;
}

DfsphKernels::~DfsphKernels() {
  try {
    for (auto& r : reads_)
      if (r.pending) r.event.wait();  // the read writes into r.host
    for (auto& poll : polls_) poll.event.wait();  // ... and these into pollHost_
    if (pollHost_) ctx_.queue().enqueueUnmapMemObject(pollPinned_, pollHost_);
    ctx_.queue().finish();
  } catch (...) {
    // teardown: nothing to report to
  }
}

SphBoundaryView DfsphKernels::boundaryView(const DfsphBuffers& b) const {
  if (b.boundary) return b.boundary->view();
  return {&noBoundary_, &noBoundary_, &noBoundaryCells_, 0};
}

EnqueueArgs DfsphKernels::perParticle(size_t n) const {
  return EnqueueArgs(ctx_.launchQueue(), cl::NDRange(roundUp(n, EDDY_SPH_WG)), cl::NDRange(EDDY_SPH_WG));
}
EnqueueArgs DfsphKernels::lanes(const DfsphBuffers& b) const {
  return sphLaneLaunch(ctx_.launchQueue(), b.n, b.laneBits);
}

void DfsphKernels::runDensity(const DfsphBuffers& b, const DfsphParams& p, bool withPressure) {
  pairsOn_ = preparePairs(b);  // the solves after this launch read what it stores
  const SphBoundaryView bv = boundaryView(b);
  const DfsphDensityArgs a{.pos = *b.pos,
                           .vel = *b.vel,
                           .nlist = *b.nlist,
                           .nbcount = *b.nbcount,
                           .rhop = *b.rhop,
                           .kb = kb_[cur_],
                           .ctl = ctl_,
                           .clock = *b.clock,
                           .bpos = *bv.pos,
                           .bvel = *bv.vel,
                           .bcells = *bv.cells,
                           .nbound = bv.count,
                           .dims = b.dims,
                           .invCell = b.invCell,
                           .withPressure = cl_uint(withPressure ? 1 : 0),
                           .correct = cl_uint(p.gradientCorrection ? 1 : 0),
                           .rho0 = cl_float(p.rho0),
                           .n = cl_uint(b.n),
                           .tank = tank4(b.tank),
                           .h = cl_float(p.h),
                           .mass = cl_float(p.mass),
                           .gradScale = cl_float(p.gradScale),
                           .laneBits = b.laneBits,
                           .kstride = cl_uint(kstride_),
                           .pairs = pairsArg(),
                           .usePairs = cl_uint(pairsOn_),
                           .warmAcc = warmAcc_};
  try {
    prof_.launch("dfsph_density", density_, lanes(b), a);
  } catch (const cl::Error& e) {
    throw Error("DFSPH density kernel: " + describe(e));
  }
}

void DfsphKernels::runRate(unsigned slot, const DfsphBuffers& b, const DfsphParams& p) {
  const bool div = slot == EDDY_DFSPH_SLOT_DIV;
  const SphBoundaryView bv = boundaryView(b);
  const DfsphRateArgs a{.pos = *b.pos,
                        .vel = *b.vel,
                        .nlist = *b.nlist,
                        .nbcount = *b.nbcount,
                        .rhop = *b.rhop,
                        .kb = kb_[cur_],
                        .ctl = ctl_,
                        .clock = *b.clock,
                        .nbound = bv.count,
                        .slot = cl_uint(slot),
                        .n = cl_uint(b.n),
                        .tank = tank4(b.tank),
                        .h = cl_float(p.h),
                        .mass = cl_float(p.mass),
                        .rho0 = cl_float(p.rho0),
                        .tolerance = cl_float(div ? p.divergenceTolerance : p.densityTolerance),
                        .minIter = cl_uint(p.leastIterations(slot)),
                        .maxIter = cl_uint(p.maxIterations),
                        .chebyshevRho = cl_float(p.chebyshevRho),
                        .omega = cl_float(p.omega),
                        .beta = cl_float(div ? 1.0 : p.densityRelaxation),
                        .laneBits = b.laneBits,
                        .kstride = cl_uint(kstride_),
                        .pairs = pairsArg(),
                        .usePairs = cl_uint(pairsOn_)};
  try {
    // density_relaxation < 1: the program whose rate kernel also sums the
    // error (the default one would ignore beta).
    auto& kernel = !div && p.densityRelaxation < 1.0 ? relaxedRate() : rate_;
    prof_.launch(div ? "divergence_rate" : "density_rate", kernel, lanes(b), a);
  } catch (const cl::Error& e) {
    throw Error("DFSPH rate kernel: " + describe(e));
  }
}

void DfsphKernels::runVelocity(unsigned slot, bool commit, const DfsphBuffers& b,
                              const DfsphParams& p) {
  const bool div = slot == EDDY_DFSPH_SLOT_DIV;
  const char* row = div ? "divergence_velocity" : "density_velocity";
  const SphBoundaryView bv = boundaryView(b);
  const DfsphVelocityArgs a{.pos = *b.pos,
                            .vel = *b.vel,
                            .nlist = *b.nlist,
                            .nbcount = *b.nbcount,
                            .kb = kb_[cur_],  // dk, k: rows chosen by slot
                            .ctl = ctl_,
                            .clock = *b.clock,
                            .nbound = bv.count,
                            .slot = cl_uint(slot),
                            .useDt = cl_uint(div ? 0 : 1),
                            .commit = cl_uint(commit ? 1 : 0),
                            .n = cl_uint(b.n),
                            .tank = tank4(b.tank),
                            .h = cl_float(p.h),
                            .mass = cl_float(p.mass),
                            .gradScale = cl_float(p.gradScale),
                            .laneBits = b.laneBits,
                            .kstride = cl_uint(kstride_),
                            .pairs = pairsArg(),
                            .usePairs = cl_uint(pairsOn_)};
  try {
    prof_.launch(row, velocity_, lanes(b), a);
  } catch (const cl::Error& e) {
    throw Error("DFSPH velocity kernel: " + describe(e));
  }
}

// The rounds a solve is given: twice what it needed two steps before, plus 2,
// within [min_iterations, max_iterations]; max_iterations when unknown (the
// first two steps). Only the device state decides (restarts reproduce it); a
// solve that needed more stops at the batch with its error reported (counted
// in cutSolves), and the batches after it double. A tighter margin cuts
// solves, and a cut solve leaves more for the next ones: max(2c, c + 2)
// (session 3) cut solves in the settled-tank test (error 0.057 % > 0.05 %);
// c + max(2, ceil(c / 2)) + 1 (session 6) took it from <= 5 iterations at
// 0.0499 % to 11 at 0.0518 %.
unsigned DfsphKernels::batch(unsigned slot, const DfsphParams& p) const {
  const cl_uint last = batchState_[slot + EDDY_DFSPH_ST_ITER];
  if (last == EDDY_DFSPH_UNKNOWN_ITER || p.exactSolves) return p.maxIterations;
  const unsigned want = 2 * unsigned(std::min<cl_uint>(last, 1u << 20)) + 2;
  return std::clamp(want, std::max(p.leastIterations(slot), 1u), std::max(p.maxIterations, 1u));
}

// A solve: B rounds of (rate with its check, velocity) and a last rate that
// measures the final error. Rounds after convergence are no-ops on the device
// (the done flag); nothing waits here.
void DfsphKernels::solve(unsigned slot, unsigned rounds, const DfsphBuffers& b,
                        const DfsphParams& p) {
  const unsigned long long id = ++solves_;
  // Poll after the round whose rate would find the solve done if it needs
  // as many iterations as the last known solve of this slot (c iterations:
  // round c + 1's rate sets the flag), and after each round from there. A
  // poll costs about a launch (11.6 us of host time on the H200: an
  // event, a read, a flush): starting two rounds earlier made 7.5 polls a step at 6 612
  // particles, 0.09 ms of a 0.62 ms step.
  const cl_uint last = batchState_[slot + EDDY_DFSPH_ST_ITER];
  const unsigned from = last == EDDY_DFSPH_UNKNOWN_ITER ? 1u : unsigned(std::min<cl_uint>(last, rounds)) + 1u;
  // Where the device is behind the host, no poll arrives before the batch is
  // launched and each poll only costs (an event, a read, a flush: -10 % at
  // 54 000 particles on the H200). A solve whose polls spared nothing makes
  // the next 1, 3, 7, ... 63 solves go without; one that spared resets that.
  aheadUsed_ = polling_ && !pollWait_ && pollAhead(b.n);
  if (aheadUsed_) {
    solveAhead(slot, rounds, from, id, b, p);
    return;
  }
  bool poll = polling_;
  if (poll && pollSkip_ > 0) {
    --pollSkip_;
    poll = pollWait_;
  }
  // The first poll was just enqueued when it is first checked: where the
  // device keeps up with the host (it then waits for the host's launches),
  // it arrives within about one round's device time, and waiting that long
  // costs less than launching a round (~25 us of host time) and a second
  // poll. So the first check spins up to kPollSpinUs while the last first
  // poll arrived that way (and in one solve of 16, to find out again).
  const bool spin = pollSpinOk_ || id % 16 == 0;
  for (unsigned it = 0; it < rounds; ++it) {
    if (poll && it >= from) {
      const bool first = it == from;
      const bool done = polledDone(id, first && spin ? kPollSpinUs : 0.0);
      if (first && !pollWait_)
        pollSpinOk_ = std::none_of(polls_.begin(), polls_.end(), [&](const Poll& q) { return q.solve == id; });
      if (done) {
        roundsSpared_ += rounds - it;
        pollBackoff_ = pollSkip_ = 0;
        return;  // the rest, the final rate included, would be no-ops
      }
    }
    runRate(slot, b, p);
    runVelocity(slot, true, b, p);
    ++roundsLaunched_;
    if (poll && it + 1 >= from && it + 1 < rounds) enqueuePoll(slot, id);
  }
  runRate(slot, b, p);
  if (poll && rounds > from) {  // it polled and spared nothing
    pollBackoff_ = std::min(2 * pollBackoff_ + 1, 63u);
    pollSkip_ = pollBackoff_;
  }
}

bool DfsphKernels::pollAhead(size_t n) const {
  if (aheadMode_ != PollAhead::automatic) return aheadMode_ == PollAhead::on;
  return (ctx_.info().type & CL_DEVICE_TYPE_GPU) != 0 && n >= kPollAheadMinParticles;
}

// setPollAhead: rounds 1 .. from as a batch, a poll after each round from
// `from` on; before launching round k + 1 (k > from) the host waits for the
// poll after round k - d (d = setPollAheadDepth, 1 by default) while rounds
// k - d + 1 .. k run.
void DfsphKernels::solveAhead(unsigned slot, unsigned rounds, unsigned from,
                             unsigned long long id, const DfsphBuffers& b, const DfsphParams& p) {
  for (unsigned it = 0; it < rounds; ++it) {
    if (it > from && polledDoneAhead(id)) {
      roundsSpared_ += rounds - it;
      return;  // rounds `it` - d .. `it` - 1 (launched) are the solve's no-ops at most
    }
    runRate(slot, b, p);
    runVelocity(slot, true, b, p);
    ++roundsLaunched_;
    if (it + 1 >= from && it + 1 < rounds) enqueuePoll(slot, id);
  }
  runRate(slot, b, p);
}

bool DfsphKernels::polledDoneAhead(unsigned long long solve) {
  bool done = false;
  try {
    while (polls_.size() > aheadDepth_) {
      Poll& poll = polls_.front();
      // Spin first: a blocking wait costs a wake-up (tens of microseconds,
      // a round's device time at ~100 000 particles); give up spinning
      // after 2 ms (the device is far behind: nothing is lost by sleeping).
      using Clock = std::chrono::steady_clock;
      const auto until = Clock::now() + std::chrono::milliseconds(2);
      while (poll.event.getInfo<CL_EVENT_COMMAND_EXECUTION_STATUS>() > CL_COMPLETE &&
             Clock::now() < until) {
      }
      poll.event.wait();  // returns at once when it has arrived; throws on an error status
      done = done || (poll.solve == solve && pollHost_[poll.word] != 0u);
      polls_.pop_front();
    }
  } catch (const cl::Error& e) {
    throw Error("DFSPH done poll: " + describe(e));
  }
  return done;
}

void DfsphKernels::enqueuePoll(unsigned slot, unsigned long long solve) {
  if (polls_.size() >= kPollWords) return;  // every word awaits a read
  const size_t word = pollNext_;
  pollNext_ = (pollNext_ + 1) % kPollWords;
  Poll poll{cl::Event(), word, solve};
  try {
    ctx_.queue().enqueueReadBuffer(ctl_, CL_FALSE, (slot + EDDY_DFSPH_ST_DONE) * sizeof(cl_uint),
                                   sizeof(cl_uint), pollHost_ + word, nullptr, &poll.event);
    ctx_.queue().flush();  // on its way now, not with the next batch of commands
  } catch (const cl::Error& e) {
    throw Error("DFSPH done poll: " + describe(e));
  }
  polls_.push_back(std::move(poll));
}

bool DfsphKernels::polledDone(unsigned long long solve, double spinUs) {
  bool done = false;
  try {
    while (!polls_.empty()) {
      Poll& poll = polls_.front();
      if (pollWait_) {
        poll.event.wait();
      } else if (poll.event.getInfo<CL_EVENT_COMMAND_EXECUTION_STATUS>() != CL_COMPLETE) {
        if (!(spinUs > 0) || poll.solve != solve) break;
        using Clock = std::chrono::steady_clock;
        const auto until = Clock::now() + std::chrono::duration<double, std::micro>(spinUs);
        bool arrived = false;
        while (!(arrived = poll.event.getInfo<CL_EVENT_COMMAND_EXECUTION_STATUS>() == CL_COMPLETE) &&
               Clock::now() < until) {
        }
        spinUs = 0;  // one spin per check
        if (!arrived) break;
      }
      done = done || (poll.solve == solve && pollHost_[poll.word] != 0u);
      polls_.pop_front();
    }
  } catch (const cl::Error& e) {
    throw Error("DFSPH done poll: " + describe(e));
  }
  return done;
}

void DfsphKernels::runDivergenceSolve(const DfsphBuffers& b, const DfsphParams& p) {
  // The warm start (the velocity change of the stored kv) and the reset of
  // the solves' state came with the density (sph_dfsph_density).
  solve(EDDY_DFSPH_SLOT_DIV, batch(EDDY_DFSPH_SLOT_DIV, p), b, p);
}

void DfsphKernels::runDensitySolve(const DfsphBuffers& b, const DfsphParams& p) {
  solve(EDDY_DFSPH_SLOT_DEN, batch(EDDY_DFSPH_SLOT_DEN, p), b, p);
}

void DfsphKernels::runDt(const DfsphBuffers& b, const DfsphParams& p) {
  const DfsphDtArgs a{.clock = *b.clock,
                      .counters = *b.counters,
                      .ctl = ctl_,
                      .spacing = cl_float(p.spacing),
                      .cfl = cl_float(p.velocityCfl),
                      .minDt = cl_float(p.minDt),
                      .maxDt = cl_float(p.maxDt),
                      .gravity = cl_float(p.gravity),
                      .tankHeight = cl_float(b.tank[1])};
  try {
    prof_.launch("dt", dt_, EnqueueArgs(ctx_.launchQueue(), cl::NDRange(1)), a);
  } catch (const cl::Error& e) {
    throw Error("DFSPH time-step kernel: " + describe(e));
  }
}

void DfsphKernels::runPredict(const DfsphBuffers& b, const DfsphParams& p) {
  // Reads the warm-start term of this step's runDensity (warmAcc_).
  const DfsphPredictArgs a{.vel = *b.vel,
                           .acc = *b.acc,
                           .warmAcc = warmAcc_,
                           .ctl = ctl_,
                           .clock = *b.clock,
                           .n = cl_uint(b.n),
                           .gradScale = cl_float(p.gradScale)};
  try {
    prof_.launch("predict", predict_, perParticle(b.n), a);
  } catch (const cl::Error& e) {
    throw Error("DFSPH predict kernel: " + describe(e));
  }
}

void DfsphKernels::runIntegrate(const DfsphBuffers& b, const DfsphParams& p) {
  DfsphIntegrateArgs a{.pos = *b.pos,
                       .vel = *b.vel,
                       .rhop = *b.rhop,
                       .kb = kb_[cur_],
                       .clock = *b.clock,
                       .counters = *b.counters,
                       .n = cl_uint(b.n),
                       .tank = tank4(b.tank),
                       .restitution = cl_float(p.restitution),
                       .kstride = cl_uint(kstride_)};
  a.tank.s[3] = cl_float(EDDY_DFSPH_WALL_CLEARANCE * p.spacing);  // the wall clearance
  try {
    prof_.launch("integrate", integrate_, perParticle(b.n), a);
  } catch (const cl::Error& e) {
    throw Error("DFSPH integrate kernel: " + describe(e));
  }
}

void DfsphKernels::runBoundaryForce(const DfsphBuffers& b, const DfsphParams& p) {
  if (!b.boundary || b.boundary->size() == 0) return;
  SphBoundaryFluid f;
  f.pos = b.pos;
  f.vel = b.vel;
  f.rhop = b.rhop;
  f.cells = b.cells;
  f.clock = b.clock;
  f.ctl = &ctl_;
  f.kb = &kb_[cur_];
  f.kstride = cl_uint(kstride_);
  f.mode = EDDY_BOUNDARY_FORCE_DFSPH;
  f.h = p.h;
  f.mass = p.mass;
  f.c0 = p.c0;
  f.alphaB = p.boundaryViscosity;
  f.gradScale = p.gradScale;
  b.boundary->runForce(f);
}

void DfsphKernels::reorder(const cl::Buffer& order, size_t n, bool stepStart) {
  const int next = 1 - cur_;
  const DfsphReorderArgs a{.order = order,
                           .kbIn = kb_[cur_],
                           .kbOut = kb_[next],
                           .n = cl_uint(n),
                           .kstride = cl_uint(kstride_),
                           .warm = cl_uint(stepStart ? 1 : 0)};
  try {
    prof_.launch("reorder_warm", reorder_, perParticle(n), a);
  } catch (const cl::Error& e) {
    throw Error("DFSPH reorder kernel: " + describe(e));
  }
  cur_ = next;
}

// Takes a state read once it is complete (wait: blocks for it): counted in
// the means once, and the newest state for the stats.
bool DfsphKernels::collect(StateRead& r, bool wait) {
  if (!r.pending) return true;
  if (wait)
    r.event.wait();
  else if (r.event.getInfo<CL_EVENT_COMMAND_EXECUTION_STATUS>() != CL_COMPLETE)
    return false;
  r.pending = false;
  if (!r.accounted) {
    account(r.host);
    r.accounted = true;
    latestState_ = r.host;
  }
  return true;
}

void DfsphKernels::beginStep(const DfsphBuffers& b, const DfsphParams& p) {
  // The batches come from the state read two steps ago (finished long since,
  // normally: the device has the whole last step queued meanwhile).
  StateRead& r = reads_[next_];
  collect(r, true);
  batchState_ = r.host;
  runDensity(b, p);
  runDivergenceSolve(b, p);
}

void DfsphKernels::finishStep(const DfsphBuffers& b, const DfsphParams& p) {
  runDt(b, p);
  runPredict(b, p);
  runDensitySolve(b, p);
  runBoundaryForce(b, p);
  // The velocities are final: none may carry a particle through a solid.
  if (b.boundary)
    b.boundary->runContact(*b.pos, *b.vel, nullptr, *b.clock, b.n,
                           EDDY_SOLID_CLEARANCE * p.spacing);
  runIntegrate(b, p);
  // The state of this step, read without waiting (the batches two steps on,
  // stats). reads_[next_] was taken by beginStep.
  StateRead& r = reads_[next_];
  try {
    ctx_.queue().enqueueReadBuffer(ctl_, CL_FALSE, 0, r.host.size() * sizeof(cl_uint),
                                   r.host.data(), nullptr, &r.event);
  } catch (const cl::Error& e) {
    throw Error("DFSPH state read: " + describe(e));
  }
  r.pending = true;
  r.accounted = false;
  next_ ^= 1;
}

void DfsphKernels::account(const std::vector<cl_uint>& st) {
  if (st[EDDY_DFSPH_ST_DEN_ITER] == EDDY_DFSPH_UNKNOWN_ITER) return;
  sumDen_ += double(st[EDDY_DFSPH_ST_DEN_ITER]);
  sumDiv_ += double(st[EDDY_DFSPH_ST_DIV_ITER]);
  stepsRead_ += 1;
  // Not done at the end of the step: the batch ran out (max_iterations sets done).
  cutSolves_ += (st[EDDY_DFSPH_ST_DIV_DONE] == 0u) + (st[EDDY_DFSPH_ST_DEN_DONE] == 0u);
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
  // Older read first: the newest complete one ends up in latestState_.
  StateRead& older = reads_[next_];
  if (collect(older, false)) collect(reads_[next_ ^ 1], false);
  return decode(latestState_);
}

DfsphStats DfsphKernels::stats() {
  collect(reads_[next_], true);
  collect(reads_[next_ ^ 1], true);
  latestState_ = readState();
  DfsphStats d = decode(latestState_);
  d.densityResidual = readResiduals()[1];
  if (stepsRead_ > 0) {
    d.meanDensityIterations = sumDen_ / stepsRead_;
    d.meanDivergenceIterations = sumDiv_ / stepsRead_;
  }
  d.cutSolves = cutSolves_;
  return d;
}

std::vector<cl_float> DfsphKernels::readRow(unsigned row, size_t count) {
  std::vector<cl_float> out(count);
  if (count)
    ctx_.queue().enqueueReadBuffer(kb_[cur_], CL_TRUE, row * kstride_ * sizeof(cl_float),
                                   count * sizeof(cl_float), out.data());
  return out;
}
std::vector<cl_float2> DfsphKernels::readFactor(size_t n) {
  const auto f = readRow(EDDY_DFSPH_K_AUX, 2 * n);
  std::vector<cl_float2> out(n);
  for (size_t i = 0; i < n; ++i) out[i] = cl_float2{{f[2 * i], f[2 * i + 1]}};
  return out;
}
std::vector<cl_float> DfsphKernels::readDivergencePressure(size_t n) { return readRow(EDDY_DFSPH_K_DIV, n); }
std::vector<cl_float> DfsphKernels::readDensityPressure(size_t n) { return readRow(EDDY_DFSPH_K_DEN, n); }
std::vector<cl_float> DfsphKernels::readDk(size_t n) { return readRow(EDDY_DFSPH_K_DK, n); }
std::array<cl_float, 2> DfsphKernels::readResiduals() {
  std::array<cl_float, 2> r{};
  ctx_.queue().enqueueReadBuffer(ctl_, CL_TRUE, EDDY_DFSPH_CTL_RESIDUAL * sizeof(cl_uint),
                                 sizeof r, r.data());
  return r;
}
std::vector<cl_uint> DfsphKernels::readState() {
  return readBuf<cl_uint>(ctx_.queue(), ctl_, EDDY_DFSPH_STATE_SIZE);
}

std::array<cl_float, 6> DfsphKernels::readGradient() {
  std::array<cl_float, 6> c{};
  ctx_.queue().enqueueReadBuffer(ctl_, CL_TRUE, EDDY_DFSPH_CTL_GRAD * sizeof(cl_uint),
                                 sizeof c, c.data());
  return c;
}

void DfsphKernels::writeGradient(const std::array<cl_float, 6>& c) {
  ctx_.queue().enqueueWriteBuffer(ctl_, CL_TRUE, EDDY_DFSPH_CTL_GRAD * sizeof(cl_uint),
                                  sizeof c, c.data());
}

void DfsphKernels::writePressures(const std::vector<cl_float>& kdiv,
                                 const std::vector<cl_float>& kden) {
  if (kdiv.size() != kden.size() || kdiv.size() > cap_)
    throw Error("DFSPH: the pressures do not match the capacity");
  if (kdiv.empty()) return;
  auto& q = ctx_.queue();
  q.enqueueWriteBuffer(kb_[cur_], CL_TRUE, EDDY_DFSPH_K_DIV * kstride_ * sizeof(cl_float),
                       kdiv.size() * sizeof(cl_float), kdiv.data());
  q.enqueueWriteBuffer(kb_[cur_], CL_TRUE, EDDY_DFSPH_K_DEN * kstride_ * sizeof(cl_float),
                       kden.size() * sizeof(cl_float), kden.data());
}

void DfsphKernels::writeDk(const std::vector<cl_float>& dk) {
  if (dk.size() > cap_) throw Error("DFSPH: dk does not match the capacity");
  if (!dk.empty())
    ctx_.queue().enqueueWriteBuffer(kb_[cur_], CL_TRUE, EDDY_DFSPH_K_DK * kstride_ * sizeof(cl_float),
                                    dk.size() * sizeof(cl_float), dk.data());
}

// A restored state after step k holds the iterations of step k (ITER) and
// k - 1 (PREV): step k + 1 sizes its batches from k - 1, step k + 2 from k,
// as the run that saved it did.
void DfsphKernels::writeState(const std::vector<cl_uint>& state) {
  if (state.size() != EDDY_DFSPH_STATE_SIZE) throw Error("DFSPH: wrong solver state size");
  for (auto& r : reads_) {
    if (r.pending) r.event.wait();
    r.pending = false;
    r.accounted = true;
  }
  ctx_.queue().enqueueWriteBuffer(ctl_, CL_TRUE, 0, state.size() * sizeof(cl_uint),
                                  state.data());
  // The residuals are a diagnostic a snapshot does not keep: until the next
  // solve they read as the errors (equal at density_relaxation 1).
  const cl_uint res[2] = {state[EDDY_DFSPH_ST_DIV_ERR], state[EDDY_DFSPH_ST_DEN_ERR]};
  ctx_.queue().enqueueWriteBuffer(ctl_, CL_TRUE, EDDY_DFSPH_CTL_RESIDUAL * sizeof(cl_uint),
                                  sizeof res, res);
  std::vector<cl_uint> before = state;
  before[EDDY_DFSPH_ST_DIV_ITER] = state[EDDY_DFSPH_ST_DIV_PREV];
  before[EDDY_DFSPH_ST_DEN_ITER] = state[EDDY_DFSPH_ST_DEN_PREV];
  reads_[next_].host = before;
  reads_[next_ ^ 1].host = state;
  latestState_ = state;
}

// ---- DfsphSolver ---------------------------------------------------------------

namespace {
Context& listMode(Context& ctx, const SphKernelConfig& cfg) {
  if (!cfg.neighbourList) throw Error("SPH: the dfsph solver needs the neighbour list (list mode)");
  return ctx;
}
}  // namespace

DfsphSolver::DfsphSolver(Context& ctx, SphParticles& p, const SphKernelConfig& cfg)
    : forcesProgram_(listMode(ctx, cfg).buildProgram(sphProgramFiles({"sph_forces.cl"}),
                                                     SphParticles::buildOptions(ctx, cfg))),
      kernels_(ctx, p.capacity(), p.profiler(), cfg.correctlyRoundedDivSqrt, cfg.thinWalls) {
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

float DfsphSolver::viscousDtLimit(const SphPhysics& phys) {
  const double alpha = std::max(double(phys.alpha), double(phys.boundaryViscosity));
  if (!(alpha > 0) || !(phys.c0 > 0)) return std::numeric_limits<float>::max();
  return float(kViscousDtFactor * 0.5 * double(phys.h) / (alpha * double(phys.c0)));
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
  d.maxDt = std::max(phys.minDt, std::min(phys.maxDt, double(viscousDtLimit(phys))));
  d.gravity = phys.gravity;
  d.restitution = phys.restitution;
  d.densityTolerance = phys.densityTolerance;
  d.divergenceTolerance = phys.divergenceTolerance;
  d.minIterations = phys.minIterations;
  d.divergenceMinIterations = phys.divergenceMinIterations;
  d.maxIterations = phys.maxIterations;
  d.chebyshevRho = phys.chebyshevRho;
  d.omega = phys.jacobiOmega;
  d.densityRelaxation = phys.densityRelaxation;
  d.gradientCorrection = phys.gradientCorrection;
  d.c0 = phys.c0;
  d.boundaryViscosity = phys.boundaryViscosity;
  return d;
}

DfsphBuffers dfsphBuffersOf(SphParticles& p, const cl::Buffer& rhop, const cl::Buffer& acc) {
  DfsphBuffers b;
  b.pos = &p.positions();
  b.vel = &p.velocities();
  b.nlist = &p.neighbourList();
  b.nbcount = &p.neighbourCounts();
  b.rhop = &rhop;
  b.acc = &acc;
  b.clock = &p.clock();
  b.counters = &p.counters();
  b.n = p.size();
  b.listCapacity = p.listCapacity();
  b.tank = p.tank();
  b.laneBits = p.laneBits();
  b.boundary = &p.boundary();
  b.cells = &p.cells();
  b.dims = p.dims4();
  b.invCell = p.invCell();
  return b;
}

DfsphBuffers DfsphSolver::buffers(SphParticles& p) const { return dfsphBuffersOf(p, rhop_, acc_); }

void DfsphSolver::computeDensity(SphParticles& p, const SphPhysics& phys) {
  kernels_.runDensity(buffers(p), params(phys), true);
}

void DfsphSolver::computeAccelerations(SphParticles& p, const SphPhysics& phys) {
  try {
    p.profiler().launch("forces", forces_, p.laneLaunch(),
                        SphForcesArgs::of(p, rhop_, acc_, phys, /*soundInDt=*/false));
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

void DfsphSolver::reordered(SphParticles& p, bool stepStart) {
  kernels_.reorder(p.order(), p.size(), stepStart);
}

bool DfsphSolver::solveStats(SphSolveStats& out) {
  out = kernels_.stats();
  out.pairGradients = kernels_.pairGradients();
  out.pollAhead = kernels_.pollAheadUsed();
  return true;
}

bool DfsphSolver::polledSolveStats(SphSolveStats& out) {
  out = kernels_.polledStats();
  return true;
}

void DfsphSolver::saveState(SnapshotWriter& out, size_t n) {
  out.addArray("sph/dfsph_kdiv", kernels_.readDivergencePressure(n));
  out.addArray("sph/dfsph_kden", kernels_.readDensityPressure(n));
  out.addArray("sph/dfsph_state", kernels_.readState());
  const auto c = kernels_.readGradient();
  out.addArray("sph/dfsph_gradient", std::vector<cl_float>(c.begin(), c.end()));
}

void DfsphSolver::restoreState(const SphState& st) {
  const size_t n = st.pos.size();
  if (st.kdiv.size() == n && st.kden.size() == n) {
    kernels_.writePressures(st.kdiv, st.kden);
  } else {  // a WCSPH snapshot: start cold
    kernels_.writePressures(std::vector<cl_float>(n, 0.0f), std::vector<cl_float>(n, 0.0f));
  }
  if (st.dfsphState.size() == EDDY_DFSPH_STATE_SIZE) kernels_.writeState(st.dfsphState);
  // The renormalisation the next step's divergence solve applies (a
  // snapshot from before it, or a WCSPH one: the identity; sph_dfsph.cl).
  std::array<cl_float, 6> c = EDDY_DFSPH_GRAD_IDENTITY;
  if (st.dfsphGradient.size() == 6) std::copy(st.dfsphGradient.begin(), st.dfsphGradient.end(), c.begin());
  kernels_.writeGradient(c);
}

std::string DfsphSolver::compressionAdvice(const SphPhysics&, const Params& params) const {
  return "dfsph aims at density_tolerance " + formatNumber(params.get("density_tolerance")) +
         " % on average: raise max_iterations or lower velocity_cfl";
}

}  // namespace eddy
