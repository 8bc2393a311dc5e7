#include "controller.hpp"

#include "defaults.hpp"

#include <algorithm>

namespace eddy {

namespace {
bool onGpu(const Context& ctx) { return (ctx.info().type & CL_DEVICE_TYPE_GPU) != 0; }
}  // namespace

Controller::Controller(Context& ctx, SceneSpec spec, Params params)
    : ctx_(ctx), spec_(std::move(spec)), next_(spec_), edit_(std::move(params)) {
  if (spec_.scene.empty()) spec_.scene = next_.scene = defaultSceneFor(spec_.sim);
  if (spec_.n == 0 && spec_.icPath.empty()) spec_.n = next_.n = defaultAppCount(spec_.sim, onGpu(ctx_));
  sim_ = makeSimulation(ctx_, spec_, edit_);
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
  if (!sim_->supportsAddBlock()) return;
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

void Controller::stepOnce() {
  paused = true;
  runRemaining_ = 1;
}

void Controller::runSteps(uint64_t n) { runRemaining_ = n; }

void Controller::rebuild() {
  rebuildPending_ = false;
  pushes_.clear();
  blocks_.clear();
  // Free the old simulation first (its device buffers), then build the new
  // one; if that fails, build the old scene again and report why.
  ctx_.queue().finish();
  const SceneSpec oldSpec = spec_;
  const Params oldParams = sim_->params();
  sim_.reset();
  try {
    sim_ = makeSimulation(ctx_, next_, edit_);
    spec_ = next_;
    error_.clear();
  } catch (const Error& e) {
    error_ = std::string("rebuild failed, kept the previous scene: ") + e.what();
    next_ = spec_ = oldSpec;
    edit_ = oldParams;
    sim_ = makeSimulation(ctx_, spec_, edit_);
  }
  ++generation_;
}

void Controller::applyParams() {
  Params& p = sim_->params();
  for (const ParamDesc& d : edit_.declarations())
    if (!d.rebuild && p.get(d.name) != edit_.get(d.name)) p.set(d.name, edit_.get(d.name));
}

FrameReport Controller::frame(Profiler& frameProf) {
  FrameReport r;
  // ---- step boundary: everything queued since the last frame lands here ----
  if (rebuildPending_) {
    rebuild();
    r.rebuilt = true;
  }
  applyParams();
  for (const Box& b : blocks_) {
    try {
      sim_->addBlock(b);
    } catch (const Error& e) {
      error_ = e.what();
    }
  }
  blocks_.clear();
  if (sim_->supportsPush())
    for (const auto& p : pushes_) frameProf.record("push", sim_->push(p.ray, p.radius, p.dv));
  pushes_.clear();
  // ---- this frame's steps ----
  unsigned n = 0;
  if (runRemaining_ > 0) {
    n = unsigned(std::min<uint64_t>(runRemaining_, std::max(substeps, 1u)));
    runRemaining_ -= n;
    if (runRemaining_ == 0) paused = true;
  } else if (!paused) {
    n = std::max(substeps, 1u);
  }
  for (unsigned i = 0; i < n; ++i) sim_->step();
  r.steps = n;
  return r;
}

}  // namespace eddy
