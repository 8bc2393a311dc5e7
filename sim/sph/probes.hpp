// probes.hpp: SPH pressure and level probes on the device (issue 12).
//
// Phase "probes" (kernels/sph/sph_probes.cl, one kernel, one profiler row),
// run after a step on the sorted positions, the step's (rho, p) and the cell
// table of SphParticles:
//   pressure  p(x) = sum_j V_j p_j W_ij / sum_j V_j W_ij, V_j = m / rho_j
//             (Shepard-normalised, wall images included); 0 (dry) when
//             sum_j V_j W_ij < EDDY_PROBE_DRY_SUM = 0.01 (no fluid within h
//             gives 0). p is the solver's pressure: WCSPH's Tait pressure,
//             DFSPH's (k + kv/dt) rho^2 of the step.
//   level     the top of the water standing on the floor below (x, z): the
//             first y going up at which the fluid fraction sum_j V_j W drops
//             below 0.5, from samples every dy <= dx/4, the crossing
//             interpolated; 0 when the floor there is dry (jets and sheets
//             above an air gap do not count).
// The pressure used is that of the step's density phase (the positions
// moved by one step since): the same pairing the colour fields show.
//
// Read-back (no blocking read per sample): each sample is one row of a
// device ring of kRingRows rows [step, time hi, time lo, values...]. The
// host enqueues a non-blocking read of the ring and the row counter every
// kRingRows/2 rows (with --probe-dt: launches, each of which may write
// one), or every ProbeCadence::deliverEvery (fewer) for a
// live plot (at most kRingRows/2 rows can have been written since the last
// read, so none is overwritten unread) and hands the rows of a read
// to the sink once the read has completed, checked at the next step without
// waiting; flush() reads what is left and waits (end of a run).
// The kernel runs after every step: a pressure probe's row is the
// dt-weighted mean of its value over the steps since the previous row (the
// sampling interval as the sensor's integration window, sph_probes.cl); a
// level probe's is the state at the row's step. With --probe-dt the device
// decides whether the clock has reached the next sample time; with
// --probe-every K the host marks every K-th launch (and, without pressure
// probes, launches only then).
#pragma once

#include "kernel_args.hpp"
#include "particles.hpp"
#include "probe.hpp"

#include <deque>
#include <memory>
#include <vector>

namespace eddy {

// Arguments of kernels/sph/sph_probes.cl, in its order (kernel_args.hpp).
struct SphProbeArgs {
  const cl::Buffer &pos, &rhop, &cells, &probes, &solids, &sdf, &clock, &state, &ring, &acc;
  cl_uint nprobes, ringRows, parity, step, emit;
  cl_float everyDt;
  cl_int4 dims;
  cl_float invCell;
  cl_float4 tank;
  cl_float h, scale, dy;
  cl_uint samples, nsolids;
  cl_float solidMargin;
  auto args() const {
    return std::tie(pos, rhop, cells, probes, solids, sdf, clock, state, ring, acc, nprobes,
                    ringRows, parity, step, emit, everyDt, dims, invCell, tank, h, scale, dy, samples, nsolids,
                    solidMargin);
  }
};

// The probes' running state that a restart snapshot keeps (SphSim::saveState):
// the probes, their cadence, each probe's open window (sum p dt, sum dt over
// the steps since its last row; level probes keep none) and the --probe-dt
// cadence's next sample index. A run restored from it and sampling the same
// probes at the same cadence writes the rows the uninterrupted run would
// have written after the restart step, bit for bit (continueFrom).
struct SphProbeState {
  std::vector<ProbeSpec> probes;
  ProbeCadence cadence;
  std::vector<cl_float2> windows;  // one per probe
  cl_uint next = 0;
};

class SphProbes {
 public:
  static constexpr cl_uint kRingRows = 256;

  // Builds the kernel and the buffers for `probes` (non-empty; names and
  // places already checked by the caller). `spacing` sets the level
  // probes' sample spacing (dx/4).
  SphProbes(Context& ctx, const SphKernelConfig& cfg, std::vector<ProbeSpec> probes,
            const ProbeCadence& cadence, ProbeSink sink, double spacing, double tankHeight);
  ~SphProbes();  // waits for reads still in flight (their host buffers)
  SphProbes(const SphProbes&) = delete;
  SphProbes& operator=(const SphProbes&) = delete;

  // After step `step`: launches the probe kernel (every step with a pressure
  // probe or --probe-dt, else every K steps), a row where the cadence wants
  // it (every K steps; with --probe-dt the device decides) and at `force`
  // (the first sample). Delivers the rows of completed reads.
  void afterStep(SphParticles& p, const cl::Buffer& rhop, double h, double mass, uint64_t step,
                 bool force = false);
  // Reads back every row still on the device, waits, delivers them.
  void flush();
  // The running state (blocking reads; call between steps).
  SphProbeState state();
  // Before the first launch: each probe that `kept` holds too (sameProbe)
  // goes on with its open window, and, at the same cadence, the --probe-dt
  // sample index goes on too; the others start a new window. Takes no sample.
  void continueFrom(const SphProbeState& kept);
  // The values of the last delivered row (empty before the first).
  const ProbeRow& last() const { return last_; }
  const std::vector<ProbeSpec>& probes() const { return probes_; }

 private:
  struct Read {
    std::vector<cl_float> ring;
    std::vector<cl_uint> state;
    cl::Event done;
    cl_uint copy = 0;  // which state copy holds the counter after the launch
    uint64_t step = 0;  // the step of the last launch before the read
  };
  void enqueueRead();
  void deliver(bool wait);

  Context& ctx_;
  std::vector<ProbeSpec> probes_;
  ProbeCadence cadence_;
  ProbeSink sink_;
  cl_uint samples_ = 0;
  double dy_ = 0;
  bool hasPressure_ = false;  // a pressure probe: the kernel runs every step (its window)
  cl::Program program_;
  cl::Buffer probeBuf_, state_, ring_, acc_;
  uint64_t launches_ = 0, sinceRead_ = 0, consumed_ = 0, lastStep_ = 0;
  uint64_t readEvery_ = kRingRows / 2;  // rows between reads (cadence.deliverEvery)
  std::deque<Read> reads_;
  ProbeRow last_;
  KernelFunctorOf<SphProbeArgs> kernel_{program_, "sph_probes"};
};

}  // namespace eddy
