// bench_frame.cpp: eddy-cli bench frame.
#include "cli_common.hpp"

#include "config.hpp"
#include "factory.hpp"
#include "io.hpp"
#include "nbody.hpp"
#include "nbody_multi.hpp"
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

namespace eddy::cli {

namespace {

struct FrameArgs {
  SceneSpec spec;
  std::vector<std::string> sets;
  std::string device, color;
  unsigned long long frames = 50, substeps = 1;
  bool asJson = false;
};

void addFrameOptions(Options& o, FrameArgs& a) {
  addSimOption(o, a.spec.sim);
  addSceneOption(o, a.spec.scene);
  o.count("--n", a.spec.n, 1, 1ull << 31, "N", "particle / body count");
  addSetOption(o, a.sets);
  addDeviceOption(o, a.device);
  o.count("--frames", a.frames, 1, 1000000, "N", "frames to time (default 50)");
  o.count("--substeps", a.substeps, 1, 10000, "K", "simulation steps per frame (default 1)");
  o.text("--color", a.color, "FIELD|none", "colour field (default: the simulation's first)");
  addJsonOption(o, a.asJson);
}

// The desktop app's per-frame device work, headless (a GPU server has no
// display): `substeps` steps, the colour field kernel, and the non-blocking
// reads of the field and the positions into host memory, double-buffered like
// the app's host-copy path (frame f's copy is waited for in frame f+1).
int cmdBenchFrame(const FrameArgs& args, std::ostream& out, std::ostream& err) {
  SceneSpec spec = args.spec;
  std::vector<std::string> sets = args.sets;
  std::string device = args.device, color = args.color;
  unsigned long long frames = args.frames, substeps = args.substeps;
  bool asJson = args.asJson;
  const auto& sims = simulationNames();
  if (std::find(sims.begin(), sims.end(), spec.sim) == sims.end())
    throw UsageError("--sim '" + spec.sim + "': unknown simulation");
  Params params(paramDecl(spec.sim));
  for (const auto& s : sets) {
    try {
      params.setAssignment(s);
    } catch (const ParamError& e) {
      throw UsageError(std::string("--set ") + s + ": " + e.what());
    }
  }
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
  // The run loop without outputs or checks: substeps steps per frame.
  SessionSettings plain;
  plain.checkEvery = 0;
  Session session(*sim, plain);
  auto& q = ctx.queue();
  auto oneFrame = [&](unsigned long long f) {
    const int w = int(f % 2);
    for (unsigned long long s = 0; s < substeps; ++s) session.step();
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
  };
  for (unsigned long long f = 0; f < 3; ++f) oneFrame(f);  // warm-up
  q.finish();
  sim->profiler().reset();
  frameProf.reset();
  const auto t0 = Clock::now();
  for (unsigned long long f = 0; f < frames; ++f) oneFrame(f + 3);
  q.finish();
  const double wall = std::chrono::duration<double>(Clock::now() - t0).count();
  sim->profiler().collect(true);
  frameProf.collect(true);
  double simMs = 0, transferMs = 0, colorMs = 0;
  for (const auto& st : sim->profiler().stats()) simMs += st.totalMs;
  for (const auto& st : frameProf.stats())
    (st.name == "color" ? colorMs : transferMs) += st.totalMs;
  const double fr = double(frames);
  if (asJson) {
    out << json{{"device", deviceJson(ctx.info())}, {"sim", spec.sim}, {"n", n},
                {"frames", frames}, {"substeps", substeps},
                {"color_field", field >= 0 ? fields[size_t(field)] : "none"},
                {"simulate_ms_per_frame", simMs / fr}, {"color_ms_per_frame", colorMs / fr},
                {"transfer_ms_per_frame", transferMs / fr},
                {"wall_ms_per_frame", wall * 1e3 / fr}, {"profile", profileJson(sim->profiler())},
                {"frame_profile", profileJson(frameProf)}}
               .dump(2)
        << '\n';
  } else {
    out << "device: " << ctx.info().name << " (" << ctx.info().platformName << ")\n"
        << spec.sim << ", N = " << n << ", " << frames << " frames x " << substeps
        << " steps, colour field " << (field >= 0 ? fields[size_t(field)] : "none") << "\n"
        << std::fixed << std::setprecision(3) << "per frame (ms): simulate " << simMs / fr
        << " (device)  colour " << colorMs / fr << "  transfer " << transferMs / fr
        << " (device)  wall " << wall * 1e3 / fr << "\n\n"
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
