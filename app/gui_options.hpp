// gui_options.hpp: the desktop app's command line (eddy [options]). GL-free.
#pragma once

#include "factory.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace eddy {

class GuiUsageError : public Error {
 public:
  using Error::Error;
};

struct GuiOptions {
  SceneSpec spec;                 // --sim, --scene, --n (defaults: defaultAppSpec())
  std::vector<std::string> sets;  // --set key=value
  std::string device;             // --device
  bool glSharing = true;          // --no-gl-sharing
  bool persistentMap = true;      // --no-persistent-map
  uint64_t frames = 0;            // --frames N: quit after N frames (0 = run until closed)
  std::string screenshot;         // --screenshot FILE: written after the last frame
  unsigned substeps = 1;          // --substeps K
  int width = 1280, height = 800; // --size WxH
  bool hidePanel = false;         // --hide-panel
  std::string color;              // --color FIELD|none
  std::string style;              // --style spheres|glow
  int vsync = -1;                 // --vsync on|off (default: on, off with --frames)
  bool stats = false;             // --stats: frame-time summary on stdout at exit
  bool paused = false;            // --paused
  bool help = false;
};

extern const char* kGuiUsage;

// Throws GuiUsageError naming the flag and the problem.
GuiOptions parseGuiOptions(const std::vector<std::string>& args);
// The parameters for the chosen simulation with every --set applied.
Params guiParams(const GuiOptions& o);

}  // namespace eddy
