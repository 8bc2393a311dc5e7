#include "gui_options.hpp"

#include "cli_common.hpp"
#include "config.hpp"
#include "defaults.hpp"
#include "factory.hpp"
#include "io.hpp"
#include "options.hpp"
#include "paced_frame.hpp"
#include "record_target.hpp"
#include "snapshot.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <filesystem>

namespace eddy {

namespace {

using cli::UsageError;

// An output path as given; "" is refused as eddy-cli refuses an empty output
// ("" would silently mean "none").
std::string nonEmptyOutput(const std::string& flag, const std::string& v) {
  if (v.empty()) throw UsageError(flag + " '': cannot write: the path is empty");
  return v;
}

// --screenshot's file: the app writes PNG, so a regular file's name ends in
// .png (any case); `x.jpg` got PNG data under that name. A device node, FIFO
// or one of the app's own descriptors (/dev/null, /dev/stdout) takes it as is.
std::string screenshotPath(const std::string& v) {
  nonEmptyOutput("--screenshot", v);
  if (isSpecialFile(v) || resolveOutput(v).fd >= 0) return v;
  std::string ext = std::filesystem::path(v).extension().string();  // "" for a name such as ".png"
  for (char& c : ext) c = char(std::tolower(static_cast<unsigned char>(c)));
  if (ext != ".png")
    throw UsageError("--screenshot '" + v + "': the app writes PNG images: name the file FILE.png");
  return v;
}

// Which of --sim, --scene, --n the command line gave.
struct Given {
  bool sim = false, scene = false, n = false;
};

// The app's options, one line each (CLI11 through cli::Options: the same
// value checks and messages as eddy-cli; a bad value throws UsageError).
void addGuiOptions(cli::Options& opt, GuiOptions& o, Given& given) {
  opt.custom("--sim", "NAME",
             "simulation (default: sph with scene dam_break where built in,\nelse nbody with plummer)",
             [&](const std::string& v) {
               if (v.empty())
                 throw UsageError("--sim '': unknown simulation; known: " + joinNames(simulationNames()));
               o.spec.sim = v;
               given.sim = true;
             });
  opt.custom("--scene", "NAME", "scene of the simulation",
             [&](const std::string& v) { o.spec.scene = v; given.scene = true; });
  opt.custom("--n", "N", "particle / body count", [&](const std::string& v) {
    o.spec.n = size_t(cli::parseCount("--n", v, kLimitN.min, kLimitN.max));
    given.n = true;
  });
  opt.texts("--set", o.sets, "key=value",
            "set a declared parameter (repeatable; 'eddy params --sim S')");
  opt.custom("--config", "FILE.json",
             "start from a run description (the format of eddy-cli --config\nand of the panel's "
             "\"Save settings\"); flags given with it win",
             [&](const std::string& v) { o.configPath = cli::nonEmptyPath("--config", v); });
  opt.custom("--load", "FILE.snap",
             "start from a restart snapshot (eddy-cli --save, panel \"Save\nsnapshot\"); not with "
             "--sim, --scene, --n",
             [&](const std::string& v) { o.loadPath = cli::nonEmptyPath("--load", v); });
  cli::addObstacleOption(opt, o.spec.obstacles);
  cli::addBodyOption(opt, o.spec.bodies);
  cli::addProbeOption(opt, o.probes);
  opt.custom("--device", "gpu|cpu|P:D", "OpenCL device",
             [&](const std::string& v) { o.device = cli::deviceSpec("--device", v); });
  opt.custom("--speed", "S",
             "real-time mode: simulated seconds (N-body: model time units) per\nwall second, 0.1 to 10 (default 1)",
             [&](const std::string& v) {
               char* end = nullptr;
               const double f = std::strtod(v.c_str(), &end);
               if (v.empty() || *end != '\0' || !(f >= 0.1 && f <= 10))
                 throw UsageError("--speed: '" + v + "' is not a number in [0.1, 10]");
               o.speed = f;
               o.speedGiven = true;
             });
  opt.custom("--substeps", "K", "fixed stepping: K simulation steps per frame (default: real time)",
             [&](const std::string& v) {
               o.substeps = unsigned(cli::parseCount("--substeps", v, 1, kMaxSubsteps));
               o.substepsGiven = true;
             });
  opt.flag("--realtime", o.realtime, true,
           "real-time mode also for --frames with --screenshot / --record\n(which otherwise step fixed, 1 step per frame)");
  opt.flag("--no-gl-sharing", o.glSharing, false,
           "never share buffers with OpenGL (cl_khr_gl_sharing); host copy");
  opt.flag("--no-persistent-map", o.persistentMap, false,
           "host copy through glBufferSubData, not a persistent mapping");
  opt.custom("--buffer-path", "gl_sharing|external|host",
             "how particles reach OpenGL (default: the first possible of\ngl_sharing, external = "
             "Vulkan-exported memory, host copy);\na forced path that is not possible is an error",
             [&](const std::string& v) {
               if (v == "gl_sharing") o.bufferPath = BufferPathRequest::GLSharing;
               else if (v == "external") o.bufferPath = BufferPathRequest::External;
               else if (v == "host") o.bufferPath = BufferPathRequest::Host;
               else throw UsageError("--buffer-path: '" + v + "' is not gl_sharing, external or host");
             });
  opt.count("--frames", o.frames, 1, 1ull << 40, "N", "quit after N frames");
  opt.custom("--screenshot", "FILE.png", "write the last frame to FILE (needs --frames)",
             [&](const std::string& v) { o.screenshot = screenshotPath(v); });
  opt.custom("--size", "WxH", "window size in screen coordinates (default 1280x800)",
             [&](const std::string& v) {
               const auto x = v.find('x');
               if (x == std::string::npos) throw UsageError("--size: '" + v + "' is not WxH");
               o.width = int(cli::parseCount("--size", v.substr(0, x), 64, 16384));
               o.height = int(cli::parseCount("--size", v.substr(x + 1), 64, 16384));
             });
  opt.flag("--hide-panel", o.hidePanel, true, "start with the panel hidden (H shows it)");
  opt.custom("--color", "FIELD|none", "colour field (e.g. speed, density, pressure, mass)",
             [&](const std::string& v) {
               if (v.empty())
                 throw UsageError("--color '': the field is empty; expected a colour field (e.g. speed, "
                                  "density, pressure, mass) or none (leave --color out for the "
                                  "default field)");
               o.color = v;
             });
  opt.custom("--style", "surface|spheres|glow",
             "particle style (default: surface for fluids, glow for N-body;\nsurface is for fluids only)",
             [&](const std::string& v) {
               if (v != "surface" && v != "spheres" && v != "glow")
                 throw UsageError("--style: '" + v + "' is not surface, spheres or glow");
               o.style = v;
             });
  opt.custom("--surface-view", "depth|thickness|normals|final",
             "surface style (fluids): show one pass alone (default final)", [&](const std::string& v) {
               if (v != "depth" && v != "thickness" && v != "normals" && v != "final")
                 throw UsageError("--surface-view: '" + v +
                                  "' is not depth, thickness, normals or final");
               o.surfaceView = v;
             });
  opt.custom("--record", "DIR|FILE.mp4",
             "record the frames (without the panel): DIR/frame_000000.png, ...\n(DIR must be "
             "empty or new unless --overwrite is given) or a video\nthrough ffmpeg (must be on PATH)",
             [&](const std::string& v) {
               o.record = nonEmptyOutput("--record", v);
             });
  opt.flag("--overwrite", o.overwrite, true,
           "with --record DIR: first remove an earlier recording's\nframe_*.png from DIR (nothing else)");
  opt.count("--record-every", o.recordEvery, 1, 1000000, "K",
            "record every K-th frame (default 1; --frames N gives ceil(N/K) files)");
  opt.custom("--record-fps", "F", "frame rate of the video (default 60)",
             [&](const std::string& v) {
               char* end = nullptr;
               const double f = std::strtod(v.c_str(), &end);
               if (v.empty() || *end != '\0' || !(f >= 1 && f <= 1000))
                 throw UsageError("--record-fps: '" + v + "' is not a number in [1, 1000]");
               o.recordFps = f;
             });
  opt.flag("--offscreen",
           "render through EGL into a framebuffer, without a window or X\nserver (for --frames "
           "with --screenshot / --record; no panel)",
           [&] { o.offscreen = o.hidePanel = true; });
  opt.flag("--foam", o.foam, true,
           "surface style (fluids): white foam sprites where the speed is high\n(off by default)");
  opt.custom("--camera", "YAW,PITCH", "view direction in degrees (0,0: looking along -z, face-on)",
             [&](const std::string& v) {
               // The strict reader of every other number (no hex, no blanks inside).
               const auto c = v.find(',');
               double yaw = 0, pitch = 0;
               if (c == std::string::npos || !parseDouble(std::string_view(v).substr(0, c), yaw) ||
                   !parseDouble(std::string_view(v).substr(c + 1), pitch))
                 throw UsageError("--camera: '" + v + "' is not YAW,PITCH (degrees, e.g. 0,0)");
               if (std::fabs(pitch) > 89)
                 throw UsageError("--camera: pitch " + v.substr(c + 1) + " is out of range [-89, 89]");
               // A yaw is an angle: any turn is one of [-360, 360] (1e308 was taken as is).
               if (std::fabs(yaw) > 360)
                 throw UsageError("--camera: yaw " + v.substr(0, c) + " is out of range [-360, 360]");
               o.cameraGiven = true;
               o.cameraYaw = float(yaw);
               o.cameraPitch = float(pitch);
             });
  opt.custom("--vsync", "on|off", "(default on; off with --frames)", [&](const std::string& v) {
    if (v != "on" && v != "off") throw UsageError("--vsync: '" + v + "' is not on or off");
    o.vsync = v == "on";
  });
  opt.flag("--paused", o.paused, true, "start paused");
  opt.flag("--stats", o.stats, true,
           "print the frame-time split (simulate / transfer / draw) at exit");
  opt.flag("-h,--help", o.help, true, "this text");
}

// --record DIR before any window: a file is not a folder; a name that looks
// like an image or an unsupported video (out.png) is refused rather than made
// a folder; a folder holding anything must be emptied first (--overwrite
// removes an earlier recording's frames), or the frames of two recordings mix.
void checkRecordFolder(const GuiOptions& o) {
  namespace fs = std::filesystem;
  const std::string& dir = o.record;
  std::error_code ec;
  const fs::file_status st = fs::status(dir, ec);
  if (fs::exists(st) && !fs::is_directory(st))
    throw GuiUsageError("--record '" + dir + "': cannot write to this folder: " + outputFolderProblem(dir) +
                        "; --record takes a folder for PNG frames or a video FILE.mp4|.mkv|.mov|.webm");
  if (!fs::exists(st)) {
    const std::string ext = fileLikeExtension(dir);
    if (!ext.empty())
      throw GuiUsageError("--record '" + dir + "': the name ends in ." + ext +
                          " like a file, but --record writes PNG frames into a folder "
                          "(DIR/frame_000000.png, ...) or a video (.mp4, .mkv, .mov, .webm); for one "
                          "picture use --screenshot FILE.png");
    return;
  }
  if (!o.overwrite && !fs::is_empty(dir, ec) && !ec)
    throw GuiUsageError("--record '" + dir + "': the folder is not empty; frames of an earlier "
                        "recording there would be mixed with this run's. Choose an empty or new "
                        "folder, or give --overwrite to remove the earlier frame_*.png first");
}

// What the options ask of the simulation that runs, once its type is known:
// from --sim / the config (parseGuiOptions) or from the --load snapshot
// (resolveLoad), with the same messages either way.
void checkForSimulation(const GuiOptions& o, const SimulationType& type) {
  const std::string fromLoad =
      o.loadPath.empty() ? "" : " (the snapshot " + o.loadPath + " is of --sim " + type.name + ")";
  if (!o.probes.empty() && !type.takesObstacles)
    throw GuiUsageError("--probe: " + type.name + " has no probes (they sample a fluid: --sim sph)" + fromLoad);
  // The surface style draws a fluid as water; a type drawn as points (stars)
  // has no surface: its flags are refused as --obstacle and --probe are.
  if (type.appGlow) {
    const std::string flag = o.style == "surface"      ? "--style surface"
                             : !o.surfaceView.empty() ? "--surface-view"
                             : o.foam                 ? "--foam"
                                                      : "";
    if (!flag.empty())
      throw GuiUsageError(flag + ": the surface style (water) and its --surface-view and --foam are "
                          "for fluids (--sim sph); " + type.name + " is drawn as points (--style glow or "
                          "spheres)" + fromLoad);
  }
}

}  // namespace

std::string guiUsage() {
  CLI::App app;
  cli::configureApp(app);
  cli::Options opt(app, "");
  GuiOptions o;
  Given given;
  addGuiOptions(opt, o, given);
  return "usage: eddy [options]            the desktop app (window, panel)\n"
         "       eddy <eddy-cli command> ...  headless commands (devices, run, bench, params)\n"
         "\noptions:\n" +
         cli::optionLines(app, false) +
         "\nWithout a display (no DISPLAY / WAYLAND_DISPLAY) 'eddy' with no arguments runs a\n"
         "headless demo instead: a whole dam break (one simulated second), what happened,\n"
         "and how to see it.\n"
         "Stepping: real time by default (simulated time keeps pace with the wall clock at\n"
         "--speed S); fixed with --substeps K, and with --frames N and --screenshot/--record\n"
         "unless --realtime is given.\n";
}

GuiOptions parseGuiOptions(const std::vector<std::string>& args) {
  GuiOptions o;
  Given given;
  CLI::App app;
  cli::configureApp(app);
  cli::Options opt(app, "");
  addGuiOptions(opt, o, given);
  try {
    cli::parse(app, args, [&] {
      if (const auto l = cli::leftovers(app); !l.empty()) throw opt.unknownOption(l[0]);
    });
  } catch (const UsageError& e) {
    throw GuiUsageError(e.what());
  }
  // --sim, --scene, --n from the command line or (below) the config file.
  bool simGiven = given.sim, sceneGiven = given.scene, nGiven = given.n;
  const bool simFlag = given.sim;
  if (o.record.empty() && (o.recordEvery != 1 || o.recordFps != 60))
    throw GuiUsageError("--record-every and --record-fps need --record DIR|FILE.mp4");
  if (o.overwrite && (o.record.empty() || isVideoTarget(o.record)))
    throw GuiUsageError("--overwrite needs --record DIR (a folder of PNG frames; a video file is "
                        "replaced anyway)");
  if (!o.record.empty() && !isVideoTarget(o.record)) checkRecordFolder(o);
  if (!o.record.empty() && isVideoTarget(o.record) && findOnPath("ffmpeg").empty())
    throw GuiUsageError("--record " + o.record + ": recording a video needs ffmpeg, which is not on "
                        "PATH (Debian: apt install ffmpeg); --record DIR writes PNG frames instead");
  if (o.realtime && o.substepsGiven)
    throw GuiUsageError("give either --realtime (paced to the wall clock) or --substeps K (fixed "
                        "stepping), not both");
  if (o.bufferPath == BufferPathRequest::GLSharing && !o.glSharing)
    throw GuiUsageError("--buffer-path gl_sharing contradicts --no-gl-sharing");
  if (!o.screenshot.empty() && o.frames == 0)
    throw GuiUsageError("--screenshot needs --frames N (the frame to capture)");
  size_t configObstacles = 0, configBodies = 0;  // the config's solids come first
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
    // Solids and probes: the config's first, then the command line's.
    configObstacles = c.obstacles.size();
    configBodies = c.bodies.size();
    o.spec.obstacles.insert(o.spec.obstacles.begin(), c.obstacles.begin(), c.obstacles.end());
    o.spec.bodies.insert(o.spec.bodies.begin(), c.bodies.begin(), c.bodies.end());
    o.probes.insert(o.probes.begin(), c.probes.begin(), c.probes.end());
    const std::pair<const char*, bool> headless[] = {
        {"steps", bool(c.steps)},  {"until", bool(c.until)}, {"diag", bool(c.diag)},
        {"diag_every", bool(c.diagEvery)}, {"out", bool(c.out)}, {"export", bool(c.exportDir)},
        {"export_every", bool(c.exportEvery)}, {"save", bool(c.save)},
        {"check_every", bool(c.checkEvery)}, {"probe_out", bool(c.probeOut)},
        {"probe_every", bool(c.probeEvery)}, {"probe_dt", bool(c.probeDt)}};
    for (const auto& [key, set] : headless)
      if (set) o.ignoredConfigKeys.push_back(key);
  }
  try {
    checkProbeNames(o.probes);
  } catch (const Error& e) {
    throw GuiUsageError(std::string("--probe: ") + e.what());
  }
  if (!o.loadPath.empty() && (!o.spec.obstacles.empty() || !o.spec.bodies.empty()))
    throw GuiUsageError("--load restores the simulation with its obstacles and bodies: do not "
                        "combine it with --obstacle or --body (nor a config with \"obstacles\" "
                        "or \"bodies\")");
  if (!o.loadPath.empty()) {
    if (sceneGiven || nGiven || simFlag)
      throw GuiUsageError("--load restores the simulation and its scene: do not combine it with "
                          "--sim, --scene or --n");
    return o;  // the snapshot decides the rest (resolveLoad)
  }
  if (!simGiven) {
    const SceneSpec d = defaultAppSpec();
    o.spec.sim = d.sim;
    if (o.spec.scene.empty() && !sceneGiven) o.spec.scene = d.scene;
  }
  const auto& sims = simulationNames();
  if (std::find(sims.begin(), sims.end(), o.spec.sim) == sims.end())
    throw GuiUsageError("--sim '" + o.spec.sim + "': unknown simulation; known: " + joinNames(sims));
  const SimulationType& type = simulationType(o.spec.sim);
  if ((!o.spec.obstacles.empty() || !o.spec.bodies.empty()) && !type.takesObstacles)
    throw GuiUsageError(std::string(o.spec.obstacles.empty() ? "--body" : "--obstacle") + ": " +
                        o.spec.sim + " has no obstacles or bodies");
  checkForSimulation(o, type);
  if (o.spec.n && simulationType(o.spec.sim).defaultCount == 0)
    throw GuiUsageError((nGiven ? std::string("--n") : "--config " + o.configPath + ": key 'n'") +
                        countNotUsedNote(o.spec.sim));
  if (o.spec.icPath.empty()) {
    // --scene '' is not "no scene" (eddy-cli: unknown scene), it names none.
    if (o.spec.scene.empty() && !sceneGiven) o.spec.scene = defaultSceneFor(o.spec.sim);
    const auto scenes = sceneNames(o.spec.sim);
    if (std::find(scenes.begin(), scenes.end(), o.spec.scene) == scenes.end())
      throw GuiUsageError("--scene '" + o.spec.scene + "': unknown " + o.spec.sim +
                          " scene; known: " + joinNames(scenes));
  } else {
    o.spec.scene.clear();
  }
  const Params params = guiParams(o);  // --set errors are usage errors
  // The solids of the command line and the config read (a mesh opened and
  // checked) and placed before any window opens, as eddy-cli run does: a
  // missing or open mesh or a solid outside the tank is a usage error naming
  // the flag or the config's key, not an error panel in a window.
  try {
    cli::checkSceneSpecAsUsage(o.spec, params, o.configPath, configObstacles, configBodies);
  } catch (const UsageError& e) {
    throw GuiUsageError(e.what());
  }
  return o;
}

bool startsRealtime(const GuiOptions& o) {
  if (o.substepsGiven) return false;
  if (o.realtime) return true;
  const bool batch = o.frames > 0 && (!o.screenshot.empty() || !o.record.empty());
  return !batch;
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
  checkForSimulation(o, simulationType(o.spec.sim));  // e.g. --probe on an N-body snapshot
  guiParams(o);  // --set (and config params) against the snapshot's simulation
}

}  // namespace eddy
