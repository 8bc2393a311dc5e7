// bench_frame.cpp: eddy-cli bench frame.
#include "cli_common.hpp"

#include "config.hpp"
#include "defaults.hpp"
#include "factory.hpp"
#include "io.hpp"
#include "nbody.hpp"
#include "nbody_multi.hpp"
#include "paced_frame.hpp"
#include "session.hpp"
#include "snapshot.hpp"
#include "sph.hpp"
#include "vtk.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <csignal>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <thread>

namespace eddy::cli {

namespace {

struct FrameArgs {
  SceneSpec spec;
  std::optional<std::string> sim;  // given: --realtime measures it instead of the app's scene
  std::optional<std::string> scene;
  std::vector<std::string> sets;
  std::string device;
  std::optional<std::string> color;
  std::optional<unsigned long long> frames, substeps;
  std::optional<double> speed, fps;
  bool asJson = false, realtime = false;
};

void addFrameOptions(Options& o, FrameArgs& a) {
  addSimOption(o, a.sim);
  addSceneOption(o, a.scene);
  o.count("--n", a.spec.n, kLimitN, "N", "particle / body count");
  addSetOption(o, a.sets);
  addDeviceOption(o, a.device);
  o.count("--frames", a.frames, 1, 1000000, "N", "frames to time (default 50; 120 with --realtime)");
  o.count("--substeps", a.substeps, 1, kMaxSubsteps, "K", "simulation steps per frame (default 1)");
  o.flag("--realtime", a.realtime, true, "the app's real-time mode: paced steps, its defaults (DFSPH)");
  o.real("--speed", a.speed, 0.1, 10, "S", "with --realtime: simulated s per wall s asked (default 1)");
  o.real("--fps", a.fps, 0, 1000, "F",
         "with --realtime: frames paced to F per second, 1 to 1000\n(default 60; 0 = no wait between frames)");
  o.text("--color", a.color, "FIELD|none", "colour field (default: the simulation's first)");
  addJsonOption(o, a.asJson);
}

// The desktop app's per-frame device work, headless (a GPU server has no
// display): `substeps` steps, the colour field kernel, and the non-blocking
// reads of the field and the positions into host memory, double-buffered like
// the app's host-copy path (frame f's copy is waited for in frame f+1).
// With --realtime, the app's real-time mode: each frame runs the steps the
// pacer plans for its wall time (paced_frame.hpp, as the app's Controller),
// frames paced to --fps as a display's vsync would, and the real-time factor
// reached is reported; it measures the app's own defaults (its scene where
// --sim is not given, and its parameters: SPH with DFSPH).
int cmdBenchFrame(const FrameArgs& args, std::ostream& out, std::ostream& err) {
  SceneSpec spec = args.spec;
  if (args.sim) spec.sim = *args.sim;
  if (args.scene) spec.scene = *args.scene;
  std::vector<std::string> sets = args.sets;
  std::string device = args.device, color = args.color.value_or("");
  const bool asJson = args.asJson, realtime = args.realtime;
  unsigned long long frames = args.frames.value_or(50), substeps = args.substeps.value_or(1);
  const double speed = args.speed.value_or(1), fps = args.fps.value_or(60);
  if (realtime && args.substeps)
    throw UsageError("bench frame: give either --realtime (paced steps) or --substeps K (fixed), not both");
  if (!realtime && (args.speed || args.fps)) throw UsageError("bench frame: --speed and --fps need --realtime");
  // A frame period over a second would make the benchmark a wait (and one of
  // 1e10 s never end); below 1 frame/s no display paces.
  if (fps > 0 && fps < 1)
    throw UsageError("bench frame: --fps " + formatNumber(fps) +
                     ": must be 0 (no wait between frames) or from 1 to 1000 frames per second");
  if (realtime && !args.frames) frames = 120;  // two seconds of a 60 Hz display
  if (realtime && !args.sim) {  // the app's default scene
    const SceneSpec app = defaultAppSpec();
    spec.sim = app.sim;
    if (!args.scene) spec.scene = app.scene;
  }
  const auto& sims = simulationNames();
  if (std::find(sims.begin(), sims.end(), spec.sim) == sims.end())
    throw UsageError("--sim '" + spec.sim + "': unknown simulation");
  if (args.scene) {  // as eddy-cli run: '' is no scene, not the default
    const auto names = sceneNames(spec.sim);
    if (std::find(names.begin(), names.end(), *args.scene) == names.end())
      throw UsageError("--scene '" + printable(*args.scene) + "': unknown " + spec.sim + " scene; known: " +
                       joinNames(names));
  }
  if (args.color && args.color->empty())
    throw UsageError("--color '': the field is empty; give a colour field of " + spec.sim + " or none (leave "
                     "--color out for the simulation's first)");
  if (spec.n && defaultCount(spec.sim) == 0)  // as eddy-cli run: a usage error before the device
    throw UsageError("--n" + countNotUsedNote(spec.sim));
  Params params = realtime ? defaultAppParams(spec.sim) : Params(paramDecl(spec.sim));
  for (const auto& s : sets) {
    try {
      params.setAssignment(s);
    } catch (const ParamError& e) {
      throw UsageError(std::string("--set ") + s + ": " + e.what());
    }
  }
  try {
    checkParamsTogether(spec.sim, params);  // taken together (min_dt <= max_dt, ...), as eddy-cli run
  } catch (const Error& e) {
    throw UsageError(e.what());
  }
  checkSceneSpecAsUsage(spec, params, "", 0, 0);  // the scene's geometry, as eddy-cli run: before the device
  Context ctx(device);
  auto sim = makeSimulation(ctx, spec, params);
  const auto fields = sim->colorFields();
  int field = fields.empty() ? -1 : 0;
  if (color == "none") field = -1;
  else if (!color.empty()) {
    const auto it = std::find(fields.begin(), fields.end(), color);
    if (it == fields.end()) throw UsageError("--color '" + color + "': not a colour field of " + spec.sim);
    field = int(it - fields.begin());
  }
  const size_t n = sim->size();
  std::vector<float> pos[2] = {std::vector<float>(n * 4), std::vector<float>(n * 4)};
  std::vector<float> col[2] = {std::vector<float>(n), std::vector<float>(n)};
  cl::Buffer colDev(ctx.context(), CL_MEM_READ_WRITE, n * sizeof(float));
  Profiler frameProf;
  cl::Event pending[2][2];
  // The run loop without outputs or checks: substeps steps per frame (or paced).
  SessionSettings plain;
  plain.steps = SessionSettings::kUnbounded;
  plain.checkEvery = 0;
  Session session(*sim, plain);
  auto& q = ctx.queue();
  // --realtime: the pacer, as the app's Controller drives it.
  RealtimePacer pacer;
  pacer.setSpeed(speed);
  bool pacing = false;
  unsigned long long limited = 0, stepsRun = 0;
  auto lastFrame = Clock::now();
  auto stepsFor = [&]() -> uint64_t {
    if (!realtime) return substeps;
    const auto now = Clock::now();
    const double wall = std::chrono::duration<double>(now - lastFrame).count();
    lastFrame = now;
    const PacedFrame pf = planPacedFrame(pacer, session, *sim, wall, !pacing);
    pacing = true;
    limited += pf.plan.limited;
    return pf.steps;
  };
  auto oneFrame = [&](unsigned long long f) {
    const auto start = Clock::now();
    const int w = int(f % 2);
    stepsRun += session.advance(stepsFor());
    if (field >= 0) {
      frameProf.record("color", sim->writeColorField(size_t(field), colDev));
      q.enqueueReadBuffer(colDev, CL_FALSE, 0, n * sizeof(float), col[w].data(), nullptr, &pending[w][1]);
      frameProf.record("transfer field", pending[w][1]);
    }
    q.enqueueReadBuffer(sim->positionBuffer(), CL_FALSE, 0, n * 4 * sizeof(float), pos[w].data(),
                        nullptr, &pending[w][0]);
    frameProf.record("transfer pos", pending[w][0]);
    q.flush();
    for (auto& e : pending[1 - w])  // the slot "drawn" this frame: last frame's copy
      if (e()) e.wait();
    frameProf.collect(false);
    if (realtime && fps > 0)  // a display's vsync: the next frame starts 1/fps after this one
      std::this_thread::sleep_until(start + std::chrono::duration_cast<Clock::duration>(
                                                std::chrono::duration<double>(1.0 / fps)));
  };
  // Warm-up: 3 frames; in real-time mode a dozen more, so that the pacer has
  // measured a step and the simulation's time step has been read back.
  const unsigned long long warmup = realtime ? 15 : 3;
  for (unsigned long long f = 0; f < warmup; ++f) oneFrame(f);
  q.finish();
  sim->profiler().reset();
  frameProf.reset();
  limited = stepsRun = 0;
  const double simStart = realtime ? sim->syncTime() : 0.0;
  const auto t0 = Clock::now();
  lastFrame = t0;
  // The timed frames start owing nothing: a shortfall the warm-up carried
  // (the pacer's catch-up window) would otherwise be repaid inside the window
  // and count as real time reached there.
  pacer.reset();
  for (unsigned long long f = 0; f < frames; ++f) oneFrame(f + warmup);
  // --realtime: a frame's steps answer the wall time since the frame before
  // was planned (the first timed frame's, since t0: about none), so the last
  // frame's own duration is answered by the frame after it. Without that
  // closing plan the factor could reach only (frames - 1) / frames (0.992 at
  // 120 frames) with every frame on time. The factor is the simulated time
  // over the wall time the plans covered (t0 to the closing plan), plus any
  // time the device took past a frame period to finish the closing steps.
  // Its steps and a cap count with the frames': the first timed frame's plan
  // covers almost no time (and cannot be capped), so `frames` plans cover
  // the window.
  double pacedWall = 0;
  if (realtime) {
    stepsRun += session.advance(stepsFor());  // lastFrame: the closing plan's time
    const auto closing = lastFrame;
    q.finish();
    const double finishing = std::chrono::duration<double>(Clock::now() - closing).count();
    const double period = fps > 0 ? 1.0 / fps : 0.0;
    pacedWall = std::chrono::duration<double>(closing - t0).count() + std::max(0.0, finishing - period);
  }
  q.finish();
  const double wall = std::chrono::duration<double>(Clock::now() - t0).count();
  const double simulated = realtime ? sim->syncTime() - simStart : 0.0;
  sim->profiler().collect(true);
  frameProf.collect(true);
  double simMs = 0, transferMs = 0, colorMs = 0;
  for (const auto& st : sim->profiler().stats()) simMs += st.totalMs;
  simMs = sim->profiler().allStepsMs(simMs);  // SPH times one step in profile_every
  for (const auto& st : frameProf.stats())
    (st.name == "color" ? colorMs : transferMs) += st.totalMs;
  const double fr = double(frames);
  const std::string fieldName = field >= 0 ? fields[size_t(field)] : "none";
  // What both modes report (json objects keep their keys sorted: the order of
  // insertion does not change the output).
  // SPH times one step in profile_every: a short run may have timed none,
  // and its device time is then not known (not 0).
  const bool timed = sim->profiler().sampledSteps() > 0 || sim->profiler().steps() == 0;
  const json simulateMs = timed ? json(simMs / fr) : json(nullptr);
  json j{{"device", deviceJson(ctx.info())}, {"sim", spec.sim}, {"n", n}, {"frames", frames},
         {"color_field", fieldName}, {"simulate_ms_per_frame", simulateMs},
         {"color_ms_per_frame", colorMs / fr}, {"transfer_ms_per_frame", transferMs / fr},
         {"wall_ms_per_frame", wall * 1e3 / fr}, {"profile", profileJson(sim->profiler())},
         {"frame_profile", profileJson(frameProf)},
         {"command_buffers", commandBuffersJson(sim->profiler())}};
  std::ostringstream head;
  head << "device: " << ctx.info().name << " (" << ctx.info().platformName << ")\n";
  if (realtime) {
    const double factor = pacedWall > 0 ? simulated / pacedWall : 0.0;
    j.update({{"realtime", true}, {"speed", speed}, {"fps", fps},
              {"solver", params.find("solver") ? json(params.getChoice("solver")) : json(nullptr)},  // nbody: null
              {"budget_ms", pacer.budget() * 1e3}, {"realtime_factor", factor}, {"simulated_s", simulated},
              {"wall_s", wall}, {"paced_wall_s", pacedWall}, {"steps", stepsRun},
              {"steps_per_frame", double(stepsRun) / fr}, {"limited_frames", limited}});
    head << spec.sim << (params.find("solver") ? " (" + params.getChoice("solver") + ")" : std::string())
         << ", N = " << n << ", " << frames << " frames in real-time mode at " << std::defaultfloat << speed
         << "x, paced to " << fps << " frames/s, colour field " << fieldName << "\n"
         << std::setprecision(3) << "real time: reached " << factor << "x real time (" << simulated
         << " simulated s in the " << pacedWall << " s the frames paced, " << wall << " s in all), "
         << double(stepsRun) / fr << " steps per frame; the compute budget (" << pacer.budget() * 1e3 << " ms) capped " << limited
         << " of " << frames << " frames\n";
  } else {
    j["substeps"] = substeps;
    head << spec.sim << ", N = " << n << ", " << frames << " frames x " << substeps
         << " steps, colour field " << fieldName << "\n";
  }
  if (asJson) {
    out << j.dump(2) << '\n';
  } else {
    std::ostringstream simulate;
    if (timed) simulate << std::fixed << std::setprecision(3) << simMs / fr << " (device)";
    else
      simulate << "not timed (no step of the " << sim->profiler().steps() << " was: one step in "
               << sim->profiler().sampleEvery() << " is; give more frames or --set profile_every=1)";
    out << head.str() << std::fixed << std::setprecision(3) << "per frame (ms): simulate " << simulate.str()
        << "  colour " << colorMs / fr << "  transfer " << transferMs / fr << " (device)  wall "
        << wall * 1e3 / fr << "\n\n"
        << sim->profiler().table() << frameProf.table();
  }
  (void)err;
  return 0;
}

}  // namespace

Runner addBenchFrame(Options& o) {
  auto a = std::make_shared<FrameArgs>();
  addFrameOptions(o, *a);
  return [a](std::ostream& out, std::ostream& err) { return cmdBenchFrame(*a, out, err); };
}

}  // namespace eddy::cli
