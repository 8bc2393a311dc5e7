// controller.hpp: owns the running simulation for the desktop app and is the
// only way the panel, the keys and the mouse change it. Every change is queued
// and applied in frame(), i.e. at a step boundary, never in the middle of a
// step; a change that needs a rebuild (simulation, scene, count, a parameter
// marked `rebuild`) frees the old simulation before building the new one.
// GL-free: the panel test drives it without a window.
//
// Robustness: nothing the user does here ends the app. A simulation that fails
// to build (a kernel build error, not enough device memory, a bad snapshot)
// leaves the running one in place, or — at start-up — no simulation at all
// (hasSim() false) with the error and the build log in error(), and retry().
// Every few frames the device checks the state for NaN/inf (pollFinite, never
// blocking); a blow-up pauses the run and says so in error() / blowUp().
//
// The steps run through a Session (sim/session: the one run loop, also used
// by eddy-cli run and bench frame), made anew with each simulation. How many
// a frame runs: in real-time mode (`realtime`, the app's default) as many as
// the frame's wall time x speed asks for, within a compute budget per frame
// (RealtimePacer); in fixed mode `substeps`.
#pragma once

#include "config.hpp"
#include "factory.hpp"
#include "probe_history.hpp"
#include "realtime_pacer.hpp"
#include "session.hpp"

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace eddy {

struct FrameReport {
  unsigned steps = 0;    // steps enqueued this frame
  bool paced = false;    // real-time mode chose the steps (plan holds the pacer's plan)
  RealtimePacer::Plan plan;
  bool rebuilt = false;  // a new simulation replaced the old one (or the first one appeared)
  bool solidsEdited = false;  // ... and it continues the old one with edited solids (same view)
  bool blewUp = false;   // this frame's finite check found a blow-up (now paused)
};

// The scene and the parameter values a run description asks for (the app's
// --config and "Load settings"). Throws eddy::Error naming the problem (unknown
// simulation or scene, a count where the simulation takes none).
SceneSpec specFromConfig(const RunConfig& c);
Params paramsFromConfig(const RunConfig& c);

// Where shift + double-click drops a body (issue 12): the cursor ray's point
// on the vertical plane through the tank's centre that faces the camera (its
// normal is the ray's horizontal direction; a ray looking nearly straight
// down uses the plane y = 3/4 of the tank's height instead), clamped into
// the tank so that a body reaching `half` from its centre stays `margin`
// inside every wall. nullopt: the ray does not meet the plane in front of it.
std::optional<Vec3f> dropPoint(const Ray& ray, const Box& tank, float half, float margin);

// The body the panel's "Drop body" and shift + double-click drop: a floating
// box of edge `size` (ball: of diameter `size`) of `density` kg/m^3 centred
// at `at`, at rest.
BodySpec droppedBody(bool ball, double size, double density, const Vec3f& at);

class Controller {
 public:
  // Builds the first simulation, or with `loadPath` restores that snapshot. A
  // count of 0 means the app's default for the device (defaultAppCount). Never
  // throws for a failed build or load: see hasSim(), error(), retry().
  Controller(Context& ctx, SceneSpec spec, Params params, const std::string& loadPath = {});
  ~Controller();

  // False only when no simulation could be built yet (start-up failure).
  bool hasSim() const { return sim_ != nullptr; }
  // Why the constructor's `loadPath` could not be restored; empty if it was
  // (or none was given).
  const std::string& startLoadError() const { return startLoadError_; }
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
  void retry() { reset(); }                       // build again after a failure
  bool rebuildPending() const { return rebuildPending_; }
  // Interaction, applied at the next boundary (where the simulation offers it).
  void push(const Ray& ray, float radius, const Vec3f& dv);
  void addBlock(const Box& box);
  // A block in the upper middle of the simulation's domain (key B, panel).
  // Every block (addBlock, dropBlock) is placed only where there is room: with
  // fluid already in its space (the last block still falling) it is refused,
  // saying so in error().
  void dropBlock();

  // ---- Solids (issue 12), where the simulation supportsSolidEdit(). ----
  // At the next boundary the running simulation is replaced by one that
  // continues it with these static obstacles (the full list as edited: the
  // scene's own and the added ones; Simulation::withSolids), or with this
  // body dropped in. The view is kept (FrameReport::solidsEdited). Several
  // edits of one frame make one replacement. A failure keeps the running
  // simulation and says why in error().
  void setObstacles(std::vector<ShapeSpec> obstacles);
  void dropBody(const BodySpec& body);
  // The obstacles as the next frame will have them (pending edits included).
  std::vector<ShapeSpec> obstacles() const;
  // A body dropped at the upper middle of the domain (the panel's button).
  void dropBodyAbove(bool ball, double size, double density);

  // ---- Probes (issue 12), where the simulation supportsProbes(): the
  // scene's built-in ones, then these (the app's --probe and config
  // "probes"), sampled every kProbeDt simulated seconds into probeHistory()
  // (the last 10 s). Probes that cannot be are left out, saying so in probeError().
  void setProbes(std::vector<ProbeSpec> probes);
  const ProbeHistory& probeHistory() const { return history_; }
  // Why some probes were left out (outside the tank, a name taken, inside
  // an obstacle), else ""; appProbeError() only for those of setProbes, as
  // "SPEC: why" lines (the app refuses them at start; the scene's own are
  // left out when an obstacle covers them, not refused).
  const std::string& probeError() const { return probeError_; }
  const std::string& appProbeError() const { return appProbeError_; }
  static constexpr double kProbeDt = 0.01;
  static constexpr unsigned kProbeDeliverEvery = 16;  // steps between read-backs: the plots lag that little

  // Run control.
  bool paused = false;
  unsigned substeps = 1;  // steps per frame while running in fixed mode
  void stepOnce();              // one step, then paused
  void runSteps(uint64_t n);    // n steps at `substeps` per frame (either mode), then paused
  uint64_t stepsQueued() const { return runRemaining_; }

  // Real-time mode: each frame advances simulated time by its wall time x
  // speed (SPH: seconds; N-body: model time units per wall second), running
  // as many steps as fit the pacer's compute budget; when they do not, the
  // pacer reports the real-time factor reached. Off (the default here; the
  // app turns it on unless asked for fixed stepping): `substeps` per frame.
  bool realtime() const { return realtime_; }
  void setRealtime(bool on);
  double speed() const { return pacer_.speed(); }
  void setSpeed(double s);  // clamped to [kMinSpeed, kMaxSpeed]
  static constexpr double kMinSpeed = 0.1, kMaxSpeed = 10.0;
  RealtimePacer& pacer() { return pacer_; }
  const RealtimePacer& pacer() const { return pacer_; }

  // One frame: applies queued rebuilds, parameters, blocks and pushes (this is
  // the step boundary), then enqueues this frame's steps. Push kernel events
  // go to `frameProf`. Failures of a rebuild keep the old simulation and are
  // reported by error(). `wallSeconds`: the frame's wall time for real-time
  // mode (the app measures it; tests pass a fake clock); < 0: measured here
  // from the previous call.
  FrameReport frame(Profiler& frameProf, double wallSeconds = -1);
  // The last failure (first line: what happened; then details such as the
  // kernel build log), empty when none.
  const std::string& error() const { return error_; }
  void clearError() { error_.clear(); }
  // The last successful file action ("saved settings to ..."), for the panel.
  const std::string& notice() const { return notice_; }
  uint64_t generation() const { return generation_; }

  // ---- Files. Each reports failure in error() and success in notice(). ----
  // The run description of the current settings: simulation, scene (or ic),
  // count and every declared parameter as edited (pending ones included).
  RunConfig settings() const;
  // Writes settings() with saveConfig (atomic). Returns false on failure.
  bool saveSettings(const std::string& path);
  // Reads a config (loadConfig: same checks as --config) and rebuilds with it
  // at the next boundary. A bad file changes nothing. Returns false on failure.
  bool loadSettings(const std::string& path);
  // Writes a restart snapshot of the running simulation now (atomic).
  bool saveSnapshot(const std::string& path);
  // Restores a snapshot at the next boundary; a bad file (or a failed build)
  // is reported and the running simulation keeps running, untouched.
  void loadSnapshot(const std::string& path);

  // ---- Blow-up check. ----
  unsigned checkEvery = 8;  // frames with steps between device-side checks (0 = off)
  const std::optional<BlowUp>& blowUp() const { return blowUp_; }

 private:
  // needsOld: build() reads the running simulation (a solid edit): it is
  // never freed first.
  bool replace(const std::function<LoadedSimulation()>& build, const std::string& what,
               bool needsOld = false);
  bool editSolids();
  void startProbes();
  bool rebuild();
  bool load(const std::string& path);
  void applyParams();
  bool keepOldWhileBuilding() const;
  void check(FrameReport& r, unsigned steps);
  uint64_t stepsThisFrame(FrameReport& r, double wallSeconds);
  void startSession();  // a new session_ for sim_ (none without one)
  void reportBlowUp(FrameReport& r, const BlowUp& b);
  size_t particlesNear(const Box& box);  // particles in box (grown by a particle radius)

  Context& ctx_;
  SceneSpec spec_, next_;
  Params edit_;
  std::unique_ptr<Simulation> sim_;
  std::unique_ptr<Session> session_;  // sim_'s run loop (made with it)
  bool realtime_ = false;
  RealtimePacer pacer_;
  bool pacing_ = false;  // the last frame's steps were paced (else the pacer starts afresh)
  std::optional<std::chrono::steady_clock::time_point> lastFrame_;  // frame() without a wall time
  bool rebuildPending_ = false;
  uint64_t runRemaining_ = 0;
  struct PushRequest {
    Ray ray;
    float radius;
    Vec3f dv;
  };
  std::vector<PushRequest> pushes_;
  std::vector<Box> blocks_;
  std::string error_, notice_, loadPath_;
  uint64_t generation_ = 0;
  std::optional<BlowUp> blowUp_;
  std::string startLoadError_;
  std::optional<std::vector<ShapeSpec>> obstacleEdit_;  // setObstacles, pending
  std::vector<BodySpec> bodyDrops_;                     // dropBody, pending
  std::vector<ShapeSpec> sceneObstacles_;  // the scene's own (not in spec_.obstacles)
  std::vector<ProbeSpec> probes_;          // setProbes
  std::string probeError_, appProbeError_;
  ProbeHistory history_;
};

}  // namespace eddy
