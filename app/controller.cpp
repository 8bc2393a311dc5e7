#include "controller.hpp"

#include "defaults.hpp"
#include "paced_frame.hpp"
#include "shape_spec_io.hpp"
#include "snapshot.hpp"

#include <algorithm>
#include <cmath>
#include <exception>
#include <utility>

namespace eddy {

namespace {
bool onGpu(const Context& ctx) { return (ctx.info().type & CL_DEVICE_TYPE_GPU) != 0; }

std::string trimmed(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

// Runs f; returns the message of anything it throws (never lets it escape).
template <class F>
std::optional<std::string> attempt(F&& f) {
  try {
    f();
    return std::nullopt;
  } catch (const cl::Error& e) {
    return describe(e);
  } catch (const std::exception& e) {
    return trimmed(e.what());
  }
}

bool known(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}
}  // namespace

std::optional<Vec3f> dropPoint(const Ray& ray, const Box& tank, float half, float margin) {
  const Vec3f& o = ray.origin;
  const Vec3f& d = ray.dir;
  const float len = std::sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]);
  const float hl = std::sqrt(d[0] * d[0] + d[2] * d[2]);
  if (!(len > 0)) return std::nullopt;
  float t = 0;
  if (hl > 0.2f * len) {  // the vertical plane through the centre, facing the camera
    const float nx = d[0] / hl, nz = d[2] / hl;
    const float cx = 0.5f * (tank.lo[0] + tank.hi[0]), cz = 0.5f * (tank.lo[2] + tank.hi[2]);
    t = ((cx - o[0]) * nx + (cz - o[2]) * nz) / hl;
  } else {  // looking (nearly) straight down: the plane at 3/4 of the height
    const float y = tank.lo[1] + 0.75f * (tank.hi[1] - tank.lo[1]);
    t = (y - o[1]) / d[1];
  }
  if (!(t > 0) || !std::isfinite(t)) return std::nullopt;
  Vec3f p{};
  for (int k = 0; k < 3; ++k) {
    const float lo = tank.lo[k] + half + margin, hi = tank.hi[k] - half - margin;
    p[k] = lo <= hi ? std::clamp(o[k] + t * d[k], lo, hi) : 0.5f * (tank.lo[k] + tank.hi[k]);
  }
  return p;
}

BodySpec droppedBody(bool ball, double size, double density, const Vec3f& at) {
  BodySpec b;
  b.shape.kind = ball ? ShapeKind::Sphere : ShapeKind::Box;
  b.shape.size = {size, size, size};
  b.shape.pose.position = {at[0], at[1], at[2]};
  b.density = density;
  b.motion = BodyMotion::Floating;
  return b;
}

SceneSpec specFromConfig(const RunConfig& c) {
  SceneSpec s;
  s.sim = c.sim.value_or(defaultSimulationName());  // the config format's default (sim/config.hpp)
  if (!known(simulationNames(), s.sim)) throw Error("unknown simulation '" + s.sim + "'");
  const SimulationType& type = simulationType(s.sim);
  s.scene = c.scene.value_or("");
  s.icPath = c.ic.value_or("");
  s.n = size_t(c.n.value_or(0));
  s.obstacles = c.obstacles;
  s.bodies = c.bodies;
  if (!s.icPath.empty() && !type.takesIcFile)
    throw Error("\"ic\" is only for the " + icTypeNames() + " simulation");
  if (!s.icPath.empty() && (c.scene || c.n))
    throw Error("\"ic\" replaces the scene: do not combine it with \"scene\" or \"n\"");
  if (s.n && type.defaultCount == 0)
    throw Error("\"n\" is not used by the " + s.sim + " simulation: the particle count follows "
                "from the scene (set \"" + type.countParam + "\" instead)");
  if (s.icPath.empty()) {
    if (s.scene.empty()) s.scene = defaultSceneFor(s.sim);
    if (!known(sceneNames(s.sim), s.scene))
      throw Error("unknown " + s.sim + " scene '" + s.scene + "'");
  } else {
    s.scene.clear();
  }
  return s;
}

Params paramsFromConfig(const RunConfig& c) {
  Params p(paramDecl(c.sim.value_or(defaultSimulationName())));
  for (const auto& [k, v] : c.params) p.set(k, v);
  return p;
}

Controller::Controller(Context& ctx, SceneSpec spec, Params params, const std::string& loadPath)
    : ctx_(ctx), spec_(std::move(spec)), next_(spec_), edit_(std::move(params)) {
  if (spec_.scene.empty() && spec_.icPath.empty()) spec_.scene = next_.scene = defaultSceneFor(spec_.sim);
  if (spec_.n == 0 && spec_.icPath.empty()) spec_.n = next_.n = defaultAppCount(spec_.sim, onGpu(ctx_));
  if (!loadPath.empty() && load(loadPath)) return;
  const std::string loadError = error_;
  if (!loadPath.empty()) {  // error_'s first line is the panel's ("... (Retry builds it again)")
    const auto nl = loadError.find('\n');
    startLoadError_ = "cannot restore " + loadPath +
                      (nl == std::string::npos ? std::string() : ": " + loadError.substr(nl + 1));
  }
  if (auto why = attempt([&] {
        sim_ = makeSimulation(ctx_, spec_, edit_);
        startSession();
      })) {
    error_ = "Building the " + spec_.sim + " simulation failed (Retry builds it again):\n" + *why;
    if (!loadError.empty()) error_ = loadError + "\n" + error_;
  } else if (!loadError.empty()) {
    error_ = loadError + "\n(started the " + spec_.sim + " scene '" + spec_.scene + "' instead)";
  }
}

Controller::~Controller() {
  try {
    ctx_.queue().finish();
  } catch (const cl::Error&) {
    // teardown
  }
}

void Controller::setParam(const std::string& name, double value) {
  const ParamDesc* d = edit_.find(name);
  if (!d) throw ParamError("unknown parameter '" + name + "'; known: " + edit_.knownKeys());
  if (edit_.get(name) == value) return;
  edit_.set(name, value);  // throws ParamError for a bad value
  if (d->rebuild) rebuildPending_ = true;
}

void Controller::selectSimulation(const std::string& sim) {
  if (sim == next_.sim) return;
  const auto& names = simulationNames();
  if (std::find(names.begin(), names.end(), sim) == names.end())
    throw Error("unknown simulation '" + sim + "'");
  next_ = SceneSpec{};
  next_.sim = sim;
  next_.scene = defaultSceneFor(sim);
  next_.n = defaultAppCount(sim, onGpu(ctx_));
  edit_ = defaultAppParams(sim);
  rebuildPending_ = true;
}

void Controller::selectScene(const std::string& scene) {
  const auto names = sceneNames(next_.sim);
  if (std::find(names.begin(), names.end(), scene) == names.end())
    throw Error("unknown " + next_.sim + " scene '" + scene + "'");
  next_.scene = scene;
  next_.icPath.clear();
  rebuildPending_ = true;
}

void Controller::setCount(size_t n) {
  next_.n = n;
  next_.icPath.clear();
  rebuildPending_ = true;
}

void Controller::reset() { rebuildPending_ = true; }

void Controller::reseed() {
  if (edit_.find("seed")) {
    const ParamDesc& d = *edit_.find("seed");
    double s = edit_.get("seed") + 1;
    if (s > d.max) s = d.min;
    edit_.set("seed", s);
  }
  next_.icPath.clear();
  rebuildPending_ = true;
}

void Controller::push(const Ray& ray, float radius, const Vec3f& dv) {
  pushes_.push_back({ray, radius, dv});
}

void Controller::addBlock(const Box& box) { blocks_.push_back(box); }

void Controller::dropBlock() {
  if (!sim_ || !sim_->supportsAddBlock()) return;
  const auto d = sim_->domain();
  if (!d) {
    error_ = sim_->kind() + ": no domain to drop a block into";
    return;
  }
  Box b;
  const float fl[3] = {0.40f, 0.60f, 0.30f}, fh[3] = {0.60f, 0.85f, 0.70f};
  for (int k = 0; k < 3; ++k) {
    const float w = d->hi[k] - d->lo[k];
    b.lo[k] = d->lo[k] + fl[k] * w;
    b.hi[k] = d->lo[k] + fh[k] * w;
  }
  addBlock(b);
}

void Controller::setObstacles(std::vector<ShapeSpec> obstacles) {
  obstacleEdit_ = std::move(obstacles);
}

void Controller::dropBody(const BodySpec& body) { bodyDrops_.push_back(body); }

std::vector<ShapeSpec> Controller::obstacles() const {
  if (obstacleEdit_) return *obstacleEdit_;
  return sim_ ? sim_->obstacles() : std::vector<ShapeSpec>{};
}

void Controller::dropBodyAbove(bool ball, double size, double density) {
  if (!sim_ || !sim_->supportsSolidEdit()) return;
  const auto d = sim_->domain();
  if (!d) return;
  const Vec3f at{0.5f * (d->lo[0] + d->hi[0]), d->lo[1] + 0.8f * (d->hi[1] - d->lo[1]),
                 0.5f * (d->lo[2] + d->hi[2])};
  // Inside the tank by a particle radius (dropPoint's clamp, straight down).
  const Ray down{{at[0], d->hi[1] + 1.f, at[2]}, {0, -1, 0}};
  const float margin = 2 * sim_->particleRadius();
  const auto p = dropPoint(down, *d, float(0.5 * size), margin);
  dropBody(droppedBody(ball, size, density, {at[0], p ? std::min(at[1], (*p)[1]) : at[1], at[2]}));
}

void Controller::setProbes(std::vector<ProbeSpec> probes) {
  probes_ = std::move(probes);
  startProbes();
}

void Controller::startProbes() {
  probeError_.clear();
  appProbeError_.clear();
  if (!sim_ || !sim_->supportsProbes()) {
    history_.reset({});
    return;
  }
  // The scene's (or the snapshot's) probes, then each of the app's, that
  // fits this simulation (a name of its own, inside the tank, not inside a
  // static obstacle); the others are left out with why. A scene's probe is
  // left out too, not thrown: an obstacle added from the panel over one of
  // the SPHERIC sensors once ended the app.
  const std::vector<ProbeSpec> builtin = sim_->builtinProbes();
  std::vector<ProbeSpec> all;
  auto add = [&](const ProbeSpec& p, bool own) {
    std::vector<ProbeSpec> trial = all;
    trial.push_back(p);
    try {
      probesToSample(*sim_, trial, false);
      all = std::move(trial);
    } catch (const Error& e) {
      const std::string line = (own ? "the scene's probe " : "") + probeSpecText(p) + " left out: " + e.what();
      probeError_ += (probeError_.empty() ? "" : "\n") + line;
      if (!own) appProbeError_ += (appProbeError_.empty() ? "" : "\n") + probeSpecText(p) + ": " + e.what();
    }
  };
  std::vector<ProbeSpec> wanted = builtin;
  for (const ProbeSpec& p : probes_)  // one that is the scene's own is that one
    if (std::none_of(builtin.begin(), builtin.end(), [&](const ProbeSpec& q) { return sameProbe(p, q); }))
      wanted.push_back(p);
  // All at once first (one check: a mesh obstacle's file read once); one by
  // one, each against those kept, only when that fails.
  try {
    all = probesToSample(*sim_, wanted, false);
  } catch (const Error&) {
    for (size_t i = 0; i < wanted.size(); ++i) add(wanted[i], i < builtin.size());
  }
  // The same probes (a solid edit continues the run): the history goes on.
  bool same = all.size() == history_.probes().size();
  for (size_t i = 0; same && i < all.size(); ++i)
    same = probeSpecText(all[i]) == probeSpecText(history_.probes()[i]);
  if (!same) history_.reset(all);
  if (all.empty()) return;
  ProbeCadence cadence;
  cadence.dt = kProbeDt;
  cadence.deliverEvery = kProbeDeliverEvery;
  if (auto why = attempt([&] {
        sim_->startProbes(all, cadence, [this](const ProbeRow& row) { history_.add(row); });
      }))
    probeError_ = "Starting the probes failed: " + *why;
}

size_t Controller::particlesNear(const Box& box) {
  // One blocking read of the positions: on a user's action only.
  const size_t n = sim_->size();
  std::vector<cl_float4> pos(n);
  try {
    ctx_.queue().enqueueReadBuffer(sim_->positionBuffer(), CL_TRUE, 0, n * sizeof(cl_float4),
                                   pos.data());
  } catch (const cl::Error& e) {
    throw Error("Drop block: reading the positions failed: " + describe(e));
  }
  // The box grown by one particle radius: fluid touching the block counts.
  const float r = sim_->particleRadius();
  size_t count = 0;
  for (const auto& p : pos) {
    bool in = true;
    for (int k = 0; k < 3; ++k) in = in && p.s[k] >= box.lo[k] - r && p.s[k] < box.hi[k] + r;
    count += in;
  }
  return count;
}

void Controller::stepOnce() {
  paused = true;
  runRemaining_ = 1;
}

void Controller::runSteps(uint64_t n) { runRemaining_ = n; }

void Controller::setRealtime(bool on) {
  if (on != realtime_) pacing_ = false;  // the pacer starts afresh at the next paced frame
  realtime_ = on;
}

void Controller::setSpeed(double s) {
  if (!std::isfinite(s)) return;
  pacer_.setSpeed(std::clamp(s, kMinSpeed, kMaxSpeed));  // a change forgets the debt
}

void Controller::startSession() {
  session_.reset();
  pacing_ = false;
  if (!sim_) return;
  // The mouse pushes the fluid at whatever speed the drag asks: only NaN and
  // infinity count as a blow-up here (eddy-cli also holds SPH to a speed).
  sim_->setSpeedCheck(false);
  SessionSettings s;
  s.steps = SessionSettings::kUnbounded;
  s.checkEvery = 0;  // the app checks per frame (frameStart / frameEnd), not per step
  session_ = std::make_unique<Session>(*sim_, s);
  startProbes();
}

bool Controller::keepOldWhileBuilding() const {
  // The running simulation stays alive while the new one is built (so a
  // failure leaves it exactly as it was) when it holds at most a quarter of
  // the device's memory; a bigger one is freed first so the peak stays one
  // simulation, and a failure then restarts the previous scene from its spec.
  return deviceMemoryInUse().bytes * 4 <= static_cast<long long>(ctx_.info().globalMem);
}

bool Controller::replace(const std::function<LoadedSimulation()>& build, const std::string& what,
                         bool needsOld) {
  pushes_.clear();
  blocks_.clear();
  notice_.clear();
  attempt([&] { ctx_.queue().finish(); });
  std::optional<SceneSpec> freedSpec;
  std::optional<Params> freedParams;
  if (sim_ && !needsOld && !keepOldWhileBuilding()) {
    freedSpec = spec_;
    freedParams = sim_->params();
    session_.reset();
    sim_.reset();
  }
  LoadedSimulation made;
  if (auto why = attempt([&] { made = build(); })) {
    if (sim_) {  // kept alive: untouched
      error_ = what + " failed; the running scene is unchanged:\n" + *why;
      next_ = spec_;
      edit_ = sim_->params();
      return false;
    }
    ++generation_;
    blowUp_.reset();
    if (freedSpec) {
      const std::string first = *why;
      if (auto why2 = attempt([&] {
            sim_ = makeSimulation(ctx_, *freedSpec, *freedParams);
            startSession();
          })) {
        error_ = what + " failed (Retry builds it again):\n" + first +
                 "\nand rebuilding the previous scene failed too:\n" + *why2;
        next_ = spec_ = *freedSpec;
        edit_ = *freedParams;
      } else {
        error_ = what + " failed; restarted the previous scene:\n" + first;
        next_ = spec_ = *freedSpec;
        edit_ = *freedParams;
      }
      return true;
    }
    error_ = what + " failed (Retry builds it again):\n" + *why;
    return true;
  }
  session_.reset();
  sim_ = std::move(made.sim);  // frees the old simulation (if it was kept) after the new one exists
  startSession();              // a fresh run loop: no check pending, the pacer starts afresh
  next_ = spec_ = made.spec;
  edit_ = sim_->params();
  error_.clear();
  blowUp_.reset();
  ++generation_;
  if (!needsOld) {  // a new scene: its own obstacles come before the added ones
    sceneObstacles_ = sim_->obstacles();
    const size_t added = std::min(spec_.obstacles.size(), sceneObstacles_.size());
    sceneObstacles_.resize(sceneObstacles_.size() - added);
  }
  return true;
}

bool Controller::editSolids() {
  std::vector<ShapeSpec> obstacles = obstacleEdit_ ? *obstacleEdit_ : sim_->obstacles();
  const std::vector<BodySpec> drops = std::exchange(bodyDrops_, {});
  obstacleEdit_.reset();
  if (!sim_->supportsSolidEdit()) {
    error_ = "The " + sim_->kind() + " simulation has no obstacles or bodies";
    return false;
  }
  // The scene as a reset would build it again: the scene's own obstacles
  // still there are not "added"; the dropped bodies join the declared ones.
  SceneSpec next = spec_;
  next.obstacles.clear();
  for (const ShapeSpec& o : obstacles) {
    bool own = false;
    for (const ShapeSpec& s : sceneObstacles_)
      own = own || shapeSpecToString(s) == shapeSpecToString(o);
    if (!own) next.obstacles.push_back(o);
  }
  next.bodies.insert(next.bodies.end(), drops.begin(), drops.end());
  const std::string what = drops.empty() ? "Changing the obstacles" : "Dropping a body";
  return replace(
      [&] {
        LoadedSimulation l;
        l.sim = sim_->withSolids(obstacles, drops);
        l.spec = next;
        return l;
      },
      what, true);
}

bool Controller::rebuild() {
  rebuildPending_ = false;
  const SceneSpec want = next_;
  const Params params = edit_;
  return replace(
      [&] {
        LoadedSimulation l;
        l.sim = makeSimulation(ctx_, want, params);
        l.spec = want;
        return l;
      },
      "Building the " + want.sim + " scene '" + (want.icPath.empty() ? want.scene : want.icPath) + "'");
}

bool Controller::load(const std::string& path) {
  const bool ok = replace([&] { return eddy::loadSnapshot(ctx_, Snapshot::read(path)); },
                          "Loading the snapshot " + path);
  if (ok && sim_ && error_.empty())
    notice_ = "loaded " + path + " (step " + std::to_string(sim_->steps()) + ")";
  return ok && sim_ && error_.empty();
}

RunConfig Controller::settings() const {
  RunConfig c;
  c.sim = next_.sim;
  if (!next_.icPath.empty()) {
    c.ic = next_.icPath;
  } else {
    c.scene = next_.scene;
    if (next_.n) c.n = next_.n;
  }
  for (const ParamDesc& d : edit_.declarations()) c.params.emplace_back(d.name, edit_.get(d.name));
  c.obstacles = next_.obstacles;
  c.bodies = next_.bodies;
  c.probes = probes_;
  return c;
}

bool Controller::saveSettings(const std::string& path) {
  if (auto why = attempt([&] { saveConfig(path, settings()); })) {
    error_ = "Saving the settings failed:\n" + *why;
    notice_.clear();
    return false;
  }
  notice_ = "saved settings to " + path;
  return true;
}

bool Controller::loadSettings(const std::string& path) {
  SceneSpec spec;
  std::optional<Params> params;
  if (auto why = attempt([&] {
        const RunConfig c = loadConfig(path);
        spec = specFromConfig(c);
        params = paramsFromConfig(c);
      })) {
    error_ = "Loading the settings failed; nothing changed:\n" + *why;
    notice_.clear();
    return false;
  }
  if (spec.n == 0 && spec.icPath.empty()) spec.n = defaultAppCount(spec.sim, onGpu(ctx_));
  next_ = spec;
  edit_ = *params;
  rebuildPending_ = true;
  probes_ = loadConfig(path).probes;  // read and checked above
  notice_ = "loaded settings from " + path;
  return true;
}

bool Controller::saveSnapshot(const std::string& path) {
  if (!sim_) {
    error_ = "Saving a snapshot failed: there is no simulation running";
    return false;
  }
  if (!rebuildPending_) applyParams();  // between frames: a step boundary
  if (auto why = attempt([&] { eddy::saveSnapshot(*sim_, spec_, path); })) {
    error_ = "Saving the snapshot failed:\n" + *why;
    notice_.clear();
    return false;
  }
  notice_ = "saved " + path + " (step " + std::to_string(sim_->steps()) + ")";
  return true;
}

void Controller::loadSnapshot(const std::string& path) { loadPath_ = path; }

void Controller::applyParams() {
  if (!sim_) return;
  Params& p = sim_->params();
  for (const ParamDesc& d : edit_.declarations())
    if (!d.rebuild && p.get(d.name) != edit_.get(d.name)) p.set(d.name, edit_.get(d.name));
}

FrameReport Controller::frame(Profiler& frameProf, double wallSeconds) {
  FrameReport r;
  // ---- step boundary: everything queued since the last frame lands here ----
  if (!loadPath_.empty()) {
    const std::string path = std::exchange(loadPath_, {});
    rebuildPending_ = false;
    const uint64_t g = generation_;
    load(path);
    r.rebuilt = generation_ != g;
  } else if (rebuildPending_) {
    r.rebuilt = rebuild();
  }
  if (sim_ && !r.rebuilt && (obstacleEdit_ || !bodyDrops_.empty())) {
    const uint64_t g = generation_;
    editSolids();
    r.rebuilt = r.solidsEdited = generation_ != g;
  }
  obstacleEdit_.reset();
  bodyDrops_.clear();
  if (!sim_) {
    pushes_.clear();
    blocks_.clear();
    runRemaining_ = 0;
    return r;
  }
  applyParams();
  for (const Box& b : blocks_) {
    try {
      // A block only where there is room: fluid dropped onto fluid (pressing
      // B again before the last block has fallen) overlaps it, and the
      // pressure of the overlap throws particles out at hundreds of m/s.
      const size_t inside = sim_->supportsAddBlock() ? particlesNear(b) : 0;
      if (inside > 0) {
        error_ = "Drop block refused: " + std::to_string(inside) +
                 " particles are already in the block's space; wait until the last block "
                 "has fallen";
        continue;
      }
      sim_->addBlock(b);
    } catch (const Error& e) {
      error_ = e.what();
    }
  }
  blocks_.clear();
  if (sim_->supportsPush())
    for (const auto& p : pushes_) frameProf.record("push", sim_->push(p.ray, p.radius, p.dv));
  pushes_.clear();
  // A check enqueued in an earlier frame that the device has answered by now
  // (never waits): a blow-up stops the stepping before this frame's steps,
  // not only when the next check is due.
  if (checkEvery) {
    std::optional<BlowUp> b;
    if (auto why = attempt([&] { b = session_->frameStart(); })) {
      error_ = "The finite check failed; paused:\n" + *why;
      paused = true;
      runRemaining_ = 0;
    }
    if (b) reportBlowUp(r, *b);
  }
  // ---- this frame's steps, through the session ----
  uint64_t n = 0;
  if (auto why = attempt([&] { n = session_->advance(stepsThisFrame(r, wallSeconds)); })) {
    error_ = "A step failed; paused:\n" + *why;
    paused = true;
    runRemaining_ = 0;
    pacing_ = false;
  }
  r.steps = unsigned(std::min<uint64_t>(n, UINT32_MAX));
  check(r, r.steps);
  return r;
}

// How many steps this frame runs. Step / Run N steps: a fixed count,
// `substeps` per frame, in either mode. Running in fixed mode: `substeps`.
// Running in real-time mode: the pacer's plan for this frame's wall time,
// from the session's estimate of the simulated time and dt (a clock sample,
// never a blocking read) and the profiler's device time per step.
uint64_t Controller::stepsThisFrame(FrameReport& r, double wallSeconds) {
  if (wallSeconds < 0) {  // no wall time given: measured here
    const auto now = std::chrono::steady_clock::now();
    wallSeconds = lastFrame_ ? std::chrono::duration<double>(now - *lastFrame_).count() : 0.0;
    lastFrame_ = now;
  }
  const uint64_t fixed = std::max(substeps, 1u);
  if (runRemaining_ > 0) {
    const uint64_t n = std::min<uint64_t>(runRemaining_, fixed);
    runRemaining_ -= n;
    if (runRemaining_ == 0) paused = true;
    pacing_ = false;
    return n;
  }
  if (paused) {
    pacing_ = false;
    return 0;
  }
  if (!realtime_) return fixed;
  const PacedFrame f = planPacedFrame(pacer_, *session_, *sim_, wallSeconds, !pacing_);
  pacing_ = true;  // a probe frame is counted by the pacer too
  r.paced = !f.probe;
  r.plan = f.plan;
  return f.steps;
}

void Controller::check(FrameReport& r, unsigned steps) {
  if (checkEvery == 0) return;
  std::optional<BlowUp> b;
  if (auto why = attempt([&] { b = session_->frameEnd(steps, checkEvery); })) {
    error_ = "The finite check failed; paused:\n" + *why;
    paused = true;
    runRemaining_ = 0;
  }
  if (b) reportBlowUp(r, *b);
}

void Controller::reportBlowUp(FrameReport& r, const BlowUp& b) {
  paused = true;
  runRemaining_ = 0;
  // The first blow-up is the one to report: a later check of the same broken
  // state (steps already enqueued) would only repeat it at a later step.
  if (blowUp_) return;
  blowUp_ = b;
  r.blewUp = true;
  error_ = "Blow-up at step " + std::to_string(b.step) + ". Paused.\n" + b.message(sim_->kind()) +
           ".\nReset (R) rebuilds the scene; a smaller time step may help.";
}

}  // namespace eddy
