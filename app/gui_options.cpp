#include "gui_options.hpp"

#include "config.hpp"
#include "defaults.hpp"
#include "record_target.hpp"
#include "snapshot.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>

namespace eddy {

const char* kGuiUsage = R"(usage: eddy [options]            the desktop app (window, panel)
       eddy <eddy-cli command> ...  headless commands (devices, run, bench, params)

options:
  --sim NAME              simulation (default: sph with scene dam_break where built in,
                          else nbody with plummer)
  --scene NAME            scene of the simulation
  --n N                   particle / body count
  --set key=value         set a declared parameter (repeatable; 'eddy params --sim S')
  --config FILE.json      start from a run description (the format of eddy-cli --config
                          and of the panel's "Save settings"); flags given with it win
  --load FILE.snap        start from a restart snapshot (eddy-cli --save, panel "Save
                          snapshot"); not with --sim, --scene, --n
  --device gpu|cpu|P:D    OpenCL device
  --substeps K            simulation steps per frame (default 1)
  --no-gl-sharing         never share buffers with OpenGL (cl_khr_gl_sharing); host copy
  --no-persistent-map     host copy through glBufferSubData, not a persistent mapping
  --buffer-path gl_sharing|external|host
                          how particles reach OpenGL (default: the first possible of
                          gl_sharing, external = Vulkan-exported memory, host copy);
                          a forced path that is not possible is an error
  --frames N              quit after N frames
  --screenshot FILE.png   write the last frame to FILE (needs --frames)
  --size WxH              window size in screen coordinates (default 1280x800)
  --hide-panel            start with the panel hidden (H shows it)
  --color FIELD|none      colour field (e.g. speed, density, pressure, mass)
  --style surface|spheres|glow
                          particle style (default: surface for fluids, glow for N-body)
  --surface-view depth|thickness|normals|final
                          surface style: show one pass alone (default final)
  --record DIR|FILE.mp4   record the frames (without the panel): DIR/frame_000000.png, ...
                          or a video through ffmpeg (must be on PATH)
  --record-every K        record every K-th frame (default 1; --frames N gives ceil(N/K) files)
  --record-fps F          frame rate of the video (default 60)
  --offscreen             render through EGL into a framebuffer, without a window or X
                          server (for --frames with --screenshot / --record; no panel)
  --foam                  surface style: white foam sprites where the speed is high (off by default)
  --camera YAW,PITCH      view direction in degrees (0,0: looking along -z, face-on)
  --vsync on|off          (default on; off with --frames)
  --paused                start paused
  --stats                 print the frame-time split (simulate / transfer / draw) at exit
  --help                  this text

Without a display (no DISPLAY / WAYLAND_DISPLAY) 'eddy' with no arguments runs a
short headless demo instead.
)";

namespace {

unsigned long long number(const std::string& flag, const std::string& v, unsigned long long lo,
                          unsigned long long hi) {
  unsigned long long n = 0;
  if (!parseUnsigned(v, n)) throw GuiUsageError(flag + ": '" + v + "' is not a whole number");
  if (n < lo || n > hi)
    throw GuiUsageError(flag + ": " + v + " is out of range [" + std::to_string(lo) + ", " +
                        std::to_string(hi) + "]");
  return n;
}

}  // namespace

GuiOptions parseGuiOptions(const std::vector<std::string>& args) {
  GuiOptions o;
  bool simGiven = false, sceneGiven = false, nGiven = false, simFlag = false;
  size_t i = 0;
  auto value = [&](const std::string& flag) -> std::string {
    if (i >= args.size() || (args[i].rfind("--", 0) == 0 && args[i].size() > 2))
      throw GuiUsageError(flag + " needs a value");
    return args[i++];
  };
  while (i < args.size()) {
    const std::string a = args[i++];
    if (a == "--sim") { o.spec.sim = value(a); simGiven = simFlag = true; }
    else if (a == "--scene") { o.spec.scene = value(a); sceneGiven = true; }
    else if (a == "--n") { o.spec.n = size_t(number(a, value(a), kLimitN.min, kLimitN.max)); nGiven = true; }
    else if (a == "--config") o.configPath = value(a);
    else if (a == "--load") o.loadPath = value(a);
    else if (a == "--set") o.sets.push_back(value(a));
    else if (a == "--device") {
      o.device = value(a);
      if (!isDeviceSpec(o.device)) throw GuiUsageError("--device " + deviceSpecError(o.device));
    }
    else if (a == "--substeps") o.substeps = unsigned(number(a, value(a), 1, 1000));
    else if (a == "--no-gl-sharing") o.glSharing = false;
    else if (a == "--no-persistent-map") o.persistentMap = false;
    else if (a == "--buffer-path") {
      const std::string v = value(a);
      if (v == "gl_sharing") o.bufferPath = BufferPathRequest::GLSharing;
      else if (v == "external") o.bufferPath = BufferPathRequest::External;
      else if (v == "host") o.bufferPath = BufferPathRequest::Host;
      else throw GuiUsageError("--buffer-path: '" + v + "' is not gl_sharing, external or host");
    }
    else if (a == "--frames") o.frames = number(a, value(a), 1, 1ull << 40);
    else if (a == "--screenshot") o.screenshot = value(a);
    else if (a == "--size") {
      const std::string v = value(a);
      const auto x = v.find('x');
      if (x == std::string::npos) throw GuiUsageError("--size: '" + v + "' is not WxH");
      o.width = int(number(a, v.substr(0, x), 64, 16384));
      o.height = int(number(a, v.substr(x + 1), 64, 16384));
    } else if (a == "--hide-panel") o.hidePanel = true;
    else if (a == "--offscreen") o.offscreen = o.hidePanel = true;
    else if (a == "--foam") o.foam = true;
    else if (a == "--color") o.color = value(a);
    else if (a == "--style") {
      o.style = value(a);
      if (o.style != "surface" && o.style != "spheres" && o.style != "glow")
        throw GuiUsageError("--style: '" + o.style + "' is not surface, spheres or glow");
    } else if (a == "--surface-view") {
      o.surfaceView = value(a);
      if (o.surfaceView != "depth" && o.surfaceView != "thickness" && o.surfaceView != "normals" &&
          o.surfaceView != "final")
        throw GuiUsageError("--surface-view: '" + o.surfaceView +
                            "' is not depth, thickness, normals or final");
    } else if (a == "--record") {
      o.record = value(a);
      if (o.record.empty()) throw GuiUsageError("--record needs a directory or a video file name");
    } else if (a == "--record-every") {
      o.recordEvery = unsigned(number(a, value(a), 1, 1000000));
    } else if (a == "--record-fps") {
      const std::string v = value(a);
      char* end = nullptr;
      const double f = std::strtod(v.c_str(), &end);
      if (v.empty() || *end != '\0' || !(f >= 1 && f <= 1000))
        throw GuiUsageError("--record-fps: '" + v + "' is not a number in [1, 1000]");
      o.recordFps = f;
    } else if (a == "--camera") {
      const std::string v = value(a);
      const auto c = v.find(',');
      char* end = nullptr;
      const double yaw = c == std::string::npos ? 0 : std::strtod(v.c_str(), &end);
      const bool yawOk = c != std::string::npos && end == v.c_str() + c && c > 0;
      const double pitch = yawOk ? std::strtod(v.c_str() + c + 1, &end) : 0;
      if (!yawOk || *end != '\0' || end == v.c_str() + c + 1 || !std::isfinite(yaw) || !std::isfinite(pitch))
        throw GuiUsageError("--camera: '" + v + "' is not YAW,PITCH (degrees, e.g. 0,0)");
      if (std::fabs(pitch) > 89)
        throw GuiUsageError("--camera: pitch " + v.substr(c + 1) + " is out of range [-89, 89]");
      o.cameraGiven = true;
      o.cameraYaw = float(yaw);
      o.cameraPitch = float(pitch);
    } else if (a == "--vsync") {
      const std::string v = value(a);
      if (v != "on" && v != "off") throw GuiUsageError("--vsync: '" + v + "' is not on or off");
      o.vsync = v == "on";
    } else if (a == "--stats") o.stats = true;
    else if (a == "--paused") o.paused = true;
    else if (a == "--help" || a == "-h") o.help = true;
    else throw GuiUsageError("unknown option '" + a + "'");
  }
  if (o.record.empty() && (o.recordEvery != 1 || o.recordFps != 60))
    throw GuiUsageError("--record-every and --record-fps need --record DIR|FILE.mp4");
  if (!o.record.empty() && isVideoTarget(o.record) && findOnPath("ffmpeg").empty())
    throw GuiUsageError("--record " + o.record + ": recording a video needs ffmpeg, which is not on "
                        "PATH (Debian: apt install ffmpeg); --record DIR writes PNG frames instead");
  if (o.bufferPath == BufferPathRequest::GLSharing && !o.glSharing)
    throw GuiUsageError("--buffer-path gl_sharing contradicts --no-gl-sharing");
  if (!o.screenshot.empty() && o.frames == 0)
    throw GuiUsageError("--screenshot needs --frames N (the frame to capture)");
  if (!o.configPath.empty()) {
    RunConfig c;
    try {
      c = loadConfig(o.configPath);
    } catch (const Error& e) {
      throw GuiUsageError(std::string("--config: ") + e.what());
    }
    const std::string csim = c.sim.value_or(defaultSimulationName());  // the format's default
    if (simGiven && csim != o.spec.sim && !c.params.empty())
      throw GuiUsageError("--sim " + o.spec.sim + " overrides the config's simulation '" + csim +
                          "', whose \"params\" do not apply");
    if (!o.loadPath.empty() && (c.sim || c.scene || c.n || c.ic))
      throw GuiUsageError("--load restores the simulation and its scene: do not combine it with "
                          "a config that sets sim, scene, n or ic");
    if (!simGiven && o.loadPath.empty()) {
      o.spec.sim = csim;
      simGiven = true;
    }
    if (!sceneGiven && !nGiven && c.ic) o.spec.icPath = *c.ic;
    else {
      if (!sceneGiven && c.scene) o.spec.scene = *c.scene;
      if (!nGiven && c.n) o.spec.n = size_t(*c.n);
    }
    if (!o.spec.icPath.empty() && !takesIcFile(o.spec.sim))
      throw GuiUsageError("--config: \"ic\" is only for the " + icTypeNames() + " simulation");
    o.configParams = c.params;
    if (c.device && o.device.empty()) o.device = *c.device;
    const std::pair<const char*, bool> headless[] = {
        {"steps", bool(c.steps)},  {"until", bool(c.until)}, {"diag", bool(c.diag)},
        {"diag_every", bool(c.diagEvery)}, {"out", bool(c.out)}, {"export", bool(c.exportDir)},
        {"export_every", bool(c.exportEvery)}, {"save", bool(c.save)},
        {"check_every", bool(c.checkEvery)}};
    for (const auto& [key, set] : headless)
      if (set) o.ignoredConfigKeys.push_back(key);
  }
  if (!o.loadPath.empty()) {
    if (sceneGiven || nGiven || simFlag)
      throw GuiUsageError("--load restores the simulation and its scene: do not combine it with "
                          "--sim, --scene or --n");
    return o;  // the snapshot decides the rest (resolveLoad)
  }
  if (!simGiven) {
    const SceneSpec d = defaultAppSpec();
    o.spec.sim = d.sim;
    if (o.spec.scene.empty()) o.spec.scene = d.scene;
  }
  const auto& sims = simulationNames();
  if (std::find(sims.begin(), sims.end(), o.spec.sim) == sims.end())
    throw GuiUsageError("--sim '" + o.spec.sim + "': unknown simulation; known: " + joinNames(sims));
  if (o.spec.n && simulationType(o.spec.sim).defaultCount == 0)
    throw GuiUsageError((nGiven ? std::string("--n") : "--config " + o.configPath + ": key 'n'") +
                        countNotUsedNote(o.spec.sim));
  if (o.spec.icPath.empty()) {
    if (o.spec.scene.empty()) o.spec.scene = defaultSceneFor(o.spec.sim);
    const auto scenes = sceneNames(o.spec.sim);
    if (std::find(scenes.begin(), scenes.end(), o.spec.scene) == scenes.end())
      throw GuiUsageError("--scene '" + o.spec.scene + "': unknown " + o.spec.sim +
                          " scene; known: " + joinNames(scenes));
  } else {
    o.spec.scene.clear();
  }
  guiParams(o);  // --set errors are usage errors
  return o;
}

Params guiParams(const GuiOptions& o) {
  Params p = defaultAppParams(o.spec.sim);
  for (const auto& [k, v] : o.configParams) {
    try {
      p.set(k, v);
    } catch (const ParamError& e) {
      throw GuiUsageError("--config " + o.configPath + ": key 'params." + k + "': " + e.what());
    }
  }
  for (const auto& s : o.sets) {
    try {
      p.setAssignment(s);
    } catch (const ParamError& e) {
      throw GuiUsageError("--set " + s + ": " + e.what());
    }
  }
  return p;
}

void resolveLoad(GuiOptions& o) {
  if (o.loadPath.empty()) return;
  const SnapshotHeader h = readSnapshotHeader(Snapshot::read(o.loadPath));
  o.spec = h.spec;
  guiParams(o);  // --set (and config params) against the snapshot's simulation
}

}  // namespace eddy
