// gui_options.hpp: the desktop app's command line (eddy [options]). GL-free.
#pragma once

#include "buffer_path.hpp"
#include "factory.hpp"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace eddy {

class GuiUsageError : public Error {
 public:
  using Error::Error;
};

struct GuiOptions {
  SceneSpec spec;                 // --sim, --scene, --n (defaults: defaultAppSpec())
  std::vector<std::string> sets;  // --set key=value
  std::string configPath;         // --config FILE (same loader and checks as eddy-cli)
  // Solids and probes (issue 12), as eddy-cli run takes them: the config's
  // "obstacles" and "bodies" then --obstacle / --body land in spec.obstacles
  // and spec.bodies; probes: the config's "probes" then --probe (the scene's
  // built-in probes come first, at the start).
  std::vector<ProbeSpec> probes;
  // The config's "params" (applied before --set) and its keys that only a
  // headless run uses (steps, diag, ...; the app ignores them and says so).
  std::vector<std::pair<std::string, double>> configParams;
  std::vector<std::string> ignoredConfigKeys;
  std::string loadPath;           // --load FILE.snap (see resolveLoad)
  std::string device;             // --device
  bool glSharing = true;          // --no-gl-sharing
  bool persistentMap = true;      // --no-persistent-map
  BufferPathRequest bufferPath = BufferPathRequest::Auto;  // --buffer-path gl_sharing|external|host
  uint64_t frames = 0;            // --frames N: quit after N frames (0 = run until closed)
  std::string screenshot;         // --screenshot FILE: written after the last frame
  unsigned substeps = 1;          // --substeps K (fixed stepping)
  bool substepsGiven = false;
  bool realtime = false;          // --realtime: paced also with --frames and --screenshot/--record
  bool speedGiven = false;        // --speed given (a fixed-stepping start notes that it waits)
  double speed = 1.0;             // --speed S: simulated time per wall second in real-time mode
  int width = 1280, height = 800; // --size WxH
  bool hidePanel = false;         // --hide-panel
  std::string color;              // --color FIELD|none
  std::string style;              // --style surface|spheres|glow
  std::string surfaceView;        // --surface-view depth|thickness|normals|final
  bool foam = false;              // --foam: surface style with foam where the speed is high
  std::string record;             // --record DIR | FILE.mp4
  bool overwrite = false;         // --overwrite: remove an earlier recording's frame_*.png from DIR
  unsigned recordEvery = 1;       // --record-every K
  double recordFps = 60;          // --record-fps F (video)
  bool offscreen = false;         // --offscreen: EGL, no window (implies --hide-panel)
  bool cameraGiven = false;       // --camera YAW,PITCH (degrees)
  float cameraYaw = 0.f, cameraPitch = 0.f;
  int vsync = -1;                 // --vsync on|off (default: on, off with --frames)
  bool stats = false;             // --stats: frame-time summary on stdout at exit
  bool paused = false;            // --paused
  bool help = false;
};

// `eddy --help`: the app's options, from the same registration as the parser.
std::string guiUsage();

// Throws GuiUsageError naming the flag and the problem (a bad --config file
// included: the file, the key and the allowed range, as eddy-cli says it).
GuiOptions parseGuiOptions(const std::vector<std::string>& args);
// Whether the app starts in real-time mode: yes, unless --substeps K is given,
// or --frames N with --screenshot or --record (a batch capture must not depend
// on the machine's speed) without --realtime.
bool startsRealtime(const GuiOptions& o);
// The parameters for the chosen simulation: the config's, then every --set.
Params guiParams(const GuiOptions& o);
// With --load: reads and checks the snapshot on the host (before any window
// or device: throws eddy::Error naming the file and the problem) and takes its
// simulation and scene into o.spec; --set values, and what needs a fluid
// (--probe), are checked against the snapshot's simulation (GuiUsageError).
void resolveLoad(GuiOptions& o);

}  // namespace eddy
