// simulation.hpp: what the CLI and the GUI see of any simulation.
#pragma once

#include "cl.hpp"
#include "particle_state.hpp"
#include "params.hpp"
#include "probe.hpp"
#include "profiler.hpp"

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace eddy {

using Vec3f = std::array<float, 3>;

// A ray in simulation coordinates (the cursor ray of the desktop app).
struct Ray {
  Vec3f origin{};
  Vec3f dir{0, 0, -1};  // unit length
};

// An axis-aligned box in simulation coordinates.
struct Box {
  Vec3f lo{}, hi{};
};

class Snapshot;
class SnapshotWriter;
class FiniteCheck;
struct ShapeSpec;  // sim/geometry/shape.hpp
struct BodySpec;   // sim/io/body_spec.hpp

// The state went non-finite: `particles` of `n` have a NaN or infinity in a
// checked buffer (positions, velocities) at step `step`, simulated time `time`;
// or it blew up with finite values: `fast` of them move faster than
// `speedLimit` (Simulation::blowUpSpeed); or, between step `since` and `step`,
// its integrator had to put particles back (Simulation::putBackCounters):
// `putBackNonFinite` particle-steps that had gone non-finite (any is a
// blow-up), or `escaped` particle-steps outside the domain, on average at
// least kEscapeBlowUpShare of the particles every step.
struct BlowUp {
  uint64_t step = 0;
  double time = 0;
  uint64_t particles = 0, n = 0;
  uint64_t fast = 0;
  double speedLimit = 0;
  uint64_t putBackNonFinite = 0, escaped = 0, since = 0;
  // The first diagnostics row a run wrote with a non-finite value, when it
  // is before `step` (Session::run's end check; named in the message).
  std::optional<uint64_t> diagNonFinite;
  // The step the simulation had reached when the answer was read (the
  // periodic check's answer is read a check later, never waited for); named
  // in the message when it is past `step`.
  uint64_t reached = 0;
  // After speedLimit in the message: its unit and where it comes from
  // (Simulation::blowUpSpeedBasis).
  std::string speedBasis;
  // Simulation::blowUpHint, added to the advice.
  std::string hint;
  std::string message(std::string_view sim) const;
};

// Escapes put back at an average rate of this share of the particles per step
// or more (between two checks) are a blow-up: a particle escapes only by
// moving about a whole tank in one step (the walls mirror anything less).
inline constexpr double kEscapeBlowUpShare = 0.01;

// Cumulative counts (uint32 at these indices of `buffer`) of the particles a
// simulation's integrator found outside its domain or non-finite and put back
// (SPH: kernels/sph/sph_integrate.cl); the finite check reads them with its
// answer. buffer nullptr: none.
struct PutBackCounters {
  const cl::Buffer* buffer = nullptr;
  size_t escaped = 0, nonFinite = 0;
};

// No speed limit for the blow-up check.
inline constexpr double kNoSpeedLimit = 1e300;
// A simulation's blow-up speed is this many times the fastest its scene can
// move the particles (Simulation::blowUpSpeed).
inline constexpr double kBlowUpSpeedFactor = 100;

// One device's part of a simulation split over several devices
// (MultiNBodySim; eddy-cli run prints them).
struct DeviceShare {
  std::string tag;    // "P:D"
  std::string name;   // device name
  size_t first = 0;   // its particles: [first, first + count)
  size_t count = 0;   // 0: the device sits this run out
  double weight = 0;  // its fraction of the particles as asked for (sums to 1)
  double rate = 0;    // calibrated pair interactions per second (0: shares given)
};

// The latest simulated time the host knows without waiting: the time after
// `step` steps, and the time step that step took (0: not known).
struct ClockSample {
  uint64_t step = 0;
  double time = 0;
  double dt = 0;
};

class BlowUpError : public Error {
 public:
  BlowUpError(const BlowUp& b, std::string_view sim) : Error(b.message(sim)), blowUp(b) {}
  BlowUp blowUp;
};

class Simulation {
 public:
  Simulation(Context& ctx, const std::vector<ParamDesc>& decl);
  virtual ~Simulation();
  Simulation(const Simulation&) = delete;
  Simulation& operator=(const Simulation&) = delete;

  virtual std::string kind() const = 0;  // "nbody", "sph"
  virtual size_t size() const = 0;       // particle / body count
  // Advance one step. Kernels are enqueued; nothing waits for them here.
  virtual void step() = 0;

  // Diagnostics: a CSV header and one row (reads back from the device).
  virtual std::vector<std::string> diagColumns() const = 0;
  virtual std::vector<double> diagRow() = 0;
  // Final state: header and one row per particle (reads back).
  virtual std::vector<std::string> stateColumns() const = 0;
  virtual std::vector<std::vector<double>> stateRows() = 0;
  // Rigid objects (SPH bodies): the columns of one row per object and the
  // rows now (reads back; eddy-cli --bodies-out and --json). None by default.
  virtual std::vector<std::string> objectColumns() const { return {}; }
  virtual std::vector<std::vector<double>> objectRows() { return {}; }
  // The buffer holding the current positions (float4 per particle) for drawing.
  virtual const cl::Buffer& positionBuffer() const = 0;
  // Waits until everything the simulation enqueued has completed (end of a
  // headless run, before timing). A multi-device simulation finishes all queues.
  virtual void finish() { ctx_.queue().finish(); }

  // ---- Hooks for interactive front ends (the desktop app). -----------------
  // Defaults offer nothing; a simulation overrides what it supports. All of
  // them are called between steps only, and enqueue work without waiting.

  // Names of the per-particle scalar fields the app can colour by
  // ("speed", "density", "pressure", "mass"), in the order writeColorField takes.
  virtual std::vector<std::string> colorFields() const { return {}; }
  // Enqueues writing field `index` of colorFields() (one float per particle)
  // into `out` (at least size() floats) and returns the event. Throws
  // eddy::Error for an index it does not offer.
  virtual cl::Event writeColorField(size_t index, const cl::Buffer& out);
  // Interaction: adds `dv` (a velocity change, weighted by a smooth kernel of
  // the distance to the ray) to every particle within `radius` of the ray.
  virtual bool supportsPush() const { return false; }
  virtual cl::Event push(const Ray& ray, float radius, const Vec3f& dv);
  // Adds a block of particles (SPH: fluid at rest filling `box`) at a step
  // boundary; size() grows. Throws eddy::Error when not offered or full.
  virtual bool supportsAddBlock() const { return false; }
  virtual void addBlock(const Box& box);
  // The largest size() reachable without a rebuild (addBlock); buffers for
  // drawing are allocated for this many particles.
  virtual size_t capacity() const { return size(); }
  // The fixed domain (SPH tank) if any; N-body has none (the app fits the view
  // to the particles instead).
  virtual std::optional<Box> domain() const { return std::nullopt; }
  // Radius of one particle for drawing (SPH: half the spacing); 0 = unknown,
  // the app derives one from the extent and the count.
  virtual float particleRadius() const { return 0.f; }

  // ---- Hooks for the end of a headless run (eddy-cli run). ----
  // Warnings for the last diagnostics row (diagColumns() order), each a
  // message without the "eddy: warning: " prefix. Default: none.
  virtual std::vector<std::string> runWarnings(const std::vector<double>& lastRow) const {
    (void)lastRow;
    return {};
  }
  // Relative change of a conserved total between two diagnostics rows, where
  // the simulation has one (N-body: the total energy). Default: none.
  virtual std::optional<double> conservedDrift(const std::vector<double>& firstRow,
                                               const std::vector<double>& lastRow) const {
    (void)firstRow;
    (void)lastRow;
    return std::nullopt;
  }
  // The virial ratio 2K/|W| of the current state (reads back), where it means
  // something (self-gravitating N-body). Default: none.
  virtual std::optional<double> virialRatio() { return std::nullopt; }
  // Extra counts for the run summary (eddy-cli run --json), e.g. SPH's
  // boundary_particles; none by default.
  virtual std::vector<std::pair<std::string, double>> summaryValues() const { return {}; }
  // Lines on the solver's state for a live display (the app's panel): SPH's
  // DFSPH gives its solves' iterations and errors from the newest step state
  // that has arrived (never waits); a solver whose figures need a blocking
  // read (WCSPH's density error) gives them only with mayRead (the panel asks
  // so twice a second) and otherwise nothing. Empty: nothing to show.
  virtual std::vector<std::string> solverStatus(bool mayRead) {
    (void)mayRead;
    return {};
  }
  // A simulation split over several devices: each device's part, in the
  // order the devices were given. nullptr: one device.
  virtual const std::vector<DeviceShare>* deviceShares() const { return nullptr; }

  // Probes (issue 12, probe.hpp): sensors sampled on the device after a
  // step. builtinProbes(): the scene's own (declared first), or, restored
  // from a snapshot, those the saved run sampled (else its scene's). startProbes()
  // checks nothing about names or places (the caller did), takes a sample of
  // the current state at once, then one at `cadence` (the first call on a
  // simulation restored at the saved run's cadence, keptProbeCadence(),
  // instead goes on with that run's samples: none at once), and hands every sample
  // to `sink` in order, in batches (never a blocking read per sample);
  // flushProbes() waits for the samples still on the device and delivers
  // them. The defaults: no probes (startProbes throws eddy::Error).
  virtual bool supportsProbes() const { return false; }
  virtual std::vector<ProbeSpec> builtinProbes() const { return {}; }
  // A simulation restored from a snapshot whose run sampled probes: that
  // run's cadence (the default for the restored run's probes, so that they
  // go on where the saved run's left off: SPH, sim/sph/probes.hpp). None
  // otherwise, and once startProbes() has been called.
  virtual std::optional<ProbeCadence> keptProbeCadence() const { return std::nullopt; }
  virtual void startProbes(const std::vector<ProbeSpec>& probes, const ProbeCadence& cadence,
                           ProbeSink sink);
  virtual void flushProbes() {}

  // Solids (issue 12: SPH obstacles and rigid bodies) for the desktop app.
  // solidPoints(): the solids' surface points (SPH: the boundary particles,
  // float4 with xyz in world coordinates), solidPointCount() of them, all
  // solids in declaration order; solidsMove(): whether they move (bodies),
  // else they are read once. The defaults: none.
  virtual const cl::Buffer* solidPoints() const { return nullptr; }
  virtual size_t solidPointCount() const { return 0; }
  virtual bool solidsMove() const { return false; }
  // Editing the solids of a running simulation. obstacles(): the static
  // obstacles as declared (the scene's and the added ones), bodyCount() the
  // rigid bodies. withSolids() builds a NEW simulation on the same device
  // that continues this one exactly (fluid, clock, solver state, bodies, as a
  // restart snapshot would) except that its static obstacles are
  // `obstacles` (replacing the current ones) and `addBodies` join the rigid
  // bodies at their declared pose, at rest; fluid particles inside a solid
  // that is new (or moved) or within half a spacing of it are removed.
  // Probes are not carried over (startProbes again). Throws eddy::Error
  // naming the problem (a bad shape, no fluid left); this simulation is
  // unchanged either way. Defaults: not supported (withSolids throws).
  virtual bool supportsSolidEdit() const { return false; }
  virtual std::vector<ShapeSpec> obstacles() const;
  virtual size_t bodyCount() const { return 0; }
  virtual std::unique_ptr<Simulation> withSolids(const std::vector<ShapeSpec>& obstacles,
                                                 const std::vector<BodySpec>& addBodies);

  // ---- Hooks for files and robustness. Each has a generic default; a
  // simulation overrides what it can do better or must add. ----

  // Export: positions and every per-particle field as named point data
  // (reads back). The default builds it from stateColumns()/stateRows():
  // x,y,z -> positions, vx,vy,vz -> "velocity", every other column a scalar
  // (m -> "mass", rho -> "density", p -> "pressure", else the column's name).
  virtual ParticleState particleState();
  // Blow-up check: float4-per-particle buffers whose xyz must stay finite,
  // in pairs (positions, velocities): the second of a pair is also held to
  // blowUpSpeed(). Default: positionBuffer() only.
  virtual std::vector<const cl::Buffer*> finiteCheckBuffers() const;
  // The speed (m/s, or the model's units) above which a particle counts as
  // blown up although its values are finite: kBlowUpSpeedFactor times the
  // fastest the scene can move it. Default kNoSpeedLimit: none.
  virtual double blowUpSpeed() const { return kNoSpeedLimit; }
  // What a blow-up message says after that speed: its unit and its basis
  // (SPH: " m/s, 100 times the fastest the scene can make them (...)").
  virtual std::string blowUpSpeedBasis() const { return ""; }
  // What else a blow-up message suggests besides the time step (a cause
  // of this simulation's own; "" = nothing).
  virtual std::string blowUpHint() const { return ""; }
  // Whether the checks hold the particles to blowUpSpeed() and count mass
  // escapes as a blow-up (default on). The desktop app turns it off: the
  // mouse pushes the fluid at any speed. Non-finite values are always one.
  void setSpeedCheck(bool on) { speedCheck_ = on; }
  // A device buffer whose first two floats sum to the simulated time of the
  // last enqueued step (SPH's clock: its dt is chosen on the device), so that
  // a blow-up names the time of the step it was found at; nullptr (default):
  // the host's time is that step's.
  virtual const cl::Buffer* timeBuffer() const { return nullptr; }
  // Where the integrator counts particles it put back (BlowUp). Default: none.
  virtual PutBackCounters putBackCounters() const { return {}; }
  // Restart snapshots: add / restore the simulation's own state (particles,
  // velocities, anything that the next step reads, RNG state) as named blobs.
  // The generic part (simulation name, scene, parameters, step, time) is
  // written by saveSnapshot() (sim/factory.hpp). The default throws: a
  // simulation without it cannot be saved.
  virtual void saveState(SnapshotWriter& out);

  // Enqueues the device-side finite check of the current state (kernel
  // "check", non-blocking) and returns the result of the previous check,
  // which has long finished by then: checking never stalls the pipeline.
  std::optional<BlowUp> pollFinite();
  // Checks the current state and waits for the answer (end of run, GUI).
  std::optional<BlowUp> checkFiniteNow();
  // Whether the device has answered the check pollFinite() enqueued (never
  // waits), and that answer (waits if it has not). The app asks every frame,
  // so that a blow-up stops the stepping as soon as it is known.
  bool finiteCheckAnswered() const;
  std::optional<BlowUp> collectFinite();

  // Restores the clock of a loaded snapshot.
  virtual void restoreClock(uint64_t steps, double time) {
    steps_ = steps;
    time_ = time;
  }

  double time() const { return time_; }
  // Brings time() up to date where the simulation chooses its time step on
  // the device (SPH: one small blocking read of the device clock) and returns
  // it; free where the host knows the clock (N-body). Front ends call it only
  // when they need the time (--until checks, diagnostics), never every step.
  virtual double syncTime() { return time_; }
  // Never waits: where the device chooses the time step (SPH) the clock read
  // that has completed last (it lags a few steps); elsewhere the host's
  // clock. The default has no time step (dt = 0): override it where the
  // simulation knows one. Front ends that pace steps to the wall clock read
  // it once per frame (Session::estimateTime).
  virtual ClockSample clockSample() { return {steps_, time_, 0.0}; }
  uint64_t steps() const { return steps_; }
  Params& params() { return params_; }
  const Params& params() const { return params_; }
  Profiler& profiler() { return profiler_; }
  Context& context() { return ctx_; }
  // Simulations alive in this process (tests check that rebuilds free them).
  static int liveCount();

 protected:
  // Keeps the host from running unboundedly far ahead of the device: collects
  // finished events and, when more than maxPending events or maxSteps steps
  // (fewer for slow steps: about kMaxLeadSeconds of device time) are
  // outstanding (with profile sampling most steps leave no event), waits on
  // an old one (never a clFinish after each kernel).
  void throttle(size_t maxPending = 4096, uint64_t maxSteps = 256);
  static constexpr double kMaxLeadSeconds = 0.25;

  Context& ctx_;
  Params params_;
  Profiler profiler_;
  double time_ = 0;
  uint64_t steps_ = 0;

 private:
  // A check's answer with what the run knows now: the step it has reached,
  // and the speed limit's basis when particles were too fast.
  std::optional<BlowUp> described(std::optional<BlowUp> b) const;

  std::unique_ptr<FiniteCheck> finite_;
  bool speedCheck_ = true;
};

// Counts the particles i < n whose a[i].xyz or b[i].xyz is not finite, on the
// device (kernel check_finite in kernels/health.cl), and waits for the answer.
uint64_t countNonFinite(Context& ctx, const cl::Buffer& a, const cl::Buffer& b, size_t n);
// The same check with a speed limit (kernel check_finite): the particles with
// a non-finite a or b, and the finite ones with |b.xyz| > speedLimit.
struct ParticleCheck {
  uint64_t nonFinite = 0, fast = 0;
};
ParticleCheck checkParticles(Context& ctx, const cl::Buffer& a, const cl::Buffer& b, size_t n,
                             double speedLimit);

// Throws eddy::Error if `bytes` in `buffers` buffers (largest one `largest`)
// cannot fit the device: checked before any allocation. `hostBytes`: what
// the host holds beside them (the scene it builds), counted too on a CPU
// device, whose memory is the host's.
void checkDeviceMemory(const DeviceInfo& info, size_t bytes, size_t largest, std::string_view what,
                       size_t hostBytes = 0);

// The probes a run samples: the simulation's own (builtinProbes(), when
// `builtins`), then `extra`, in that order (one of `extra` that is the same
// as one of its own, sameProbe, is that one); names checked (checkProbeNames) and points inside
// the simulation's domain (checkProbesInside). Throws eddy::Error naming the
// problem, and when `sim` has no probes but some were asked for. Used by
// every front end (eddy-cli run, the app, the Python module).
std::vector<ProbeSpec> probesToSample(const Simulation& sim, const std::vector<ProbeSpec>& extra,
                                      bool builtins = true);
// The cadence a run samples its probes at: `every` steps or every `dt`
// seconds when given (not both), else the saved run's (keptProbeCadence),
// else every 10 steps.
ProbeCadence probeCadenceFor(const Simulation& sim, std::optional<uint64_t> every,
                             std::optional<double> dt);

}  // namespace eddy
