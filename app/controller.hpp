// controller.hpp: owns the running simulation for the desktop app and is the
// only way the panel, the keys and the mouse change it. Every change is queued
// and applied in frame(), i.e. at a step boundary, never in the middle of a
// step; a change that needs a rebuild (simulation, scene, count, a parameter
// marked `rebuild`) frees the old simulation before building the new one.
// GL-free: the panel test drives it without a window.
#pragma once

#include "factory.hpp"

#include <memory>
#include <string>
#include <vector>

namespace eddy {

struct FrameReport {
  unsigned steps = 0;    // steps enqueued this frame
  bool rebuilt = false;  // a new simulation replaced the old one
};

class Controller {
 public:
  // Builds the first simulation; throws eddy::Error if that fails. A count of
  // 0 means the app's default for the device (defaultAppCount).
  Controller(Context& ctx, SceneSpec spec, Params params);
  ~Controller();

  Simulation& sim() { return *sim_; }
  const Simulation& sim() const { return *sim_; }
  Context& context() { return ctx_; }
  // The scene the running simulation was built from.
  const SceneSpec& spec() const { return spec_; }
  // Parameter values as edited (the panel shows these; pending ones included).
  const Params& editParams() const { return edit_; }

  // Checks the value now (throws ParamError naming key and range); the
  // simulation gets it at the next step boundary.
  void setParam(const std::string& name, double value);
  // Rebuilds at the next boundary:
  void selectSimulation(const std::string& sim);  // its default scene, count, parameters
  void selectScene(const std::string& scene);
  void setCount(size_t n);                        // 0 = the simulation's default
  void reset();                                   // same scene, edited parameters
  void reseed();                                  // "seed" + 1 where declared, then reset
  bool rebuildPending() const { return rebuildPending_; }
  // Interaction, applied at the next boundary (where the simulation offers it).
  void push(const Ray& ray, float radius, const Vec3f& dv);
  void addBlock(const Box& box);
  // A block in the upper middle of the simulation's domain (key B, panel).
  void dropBlock();

  // Run control.
  bool paused = false;
  unsigned substeps = 1;  // steps per frame while running
  void stepOnce();              // one step, then paused
  void runSteps(uint64_t n);    // n steps at `substeps` per frame, then paused
  uint64_t stepsQueued() const { return runRemaining_; }

  // One frame: applies queued rebuilds, parameters, blocks and pushes (this is
  // the step boundary), then enqueues this frame's steps. Push kernel events
  // go to `frameProf`. Failures of a rebuild keep the old simulation and are
  // reported by error().
  FrameReport frame(Profiler& frameProf);
  const std::string& error() const { return error_; }
  void clearError() { error_.clear(); }
  uint64_t generation() const { return generation_; }

 private:
  void rebuild();
  void applyParams();

  Context& ctx_;
  SceneSpec spec_, next_;
  Params edit_;
  std::unique_ptr<Simulation> sim_;
  bool rebuildPending_ = false;
  uint64_t runRemaining_ = 0;
  struct PushRequest {
    Ray ray;
    float radius;
    Vec3f dv;
  };
  std::vector<PushRequest> pushes_;
  std::vector<Box> blocks_;
  std::string error_;
  uint64_t generation_ = 0;
};

}  // namespace eddy
