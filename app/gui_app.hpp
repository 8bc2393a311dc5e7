// gui_app.hpp: the desktop app's window and frame loop.
#pragma once

#include "gui_options.hpp"

#include <iosfwd>

namespace eddy {

// Returned by runGui when no window can be opened at all (glfwInit failed):
// the caller may fall back to the headless demo.
constexpr int kNoDisplay = -1;

// True when DISPLAY or WAYLAND_DISPLAY is set.
bool displayAvailable();

// Opens the window and runs until it is closed (or --frames). Returns the
// process exit code (0 ok, 1 runtime failure) or kNoDisplay.
int runGui(const GuiOptions& o, std::ostream& out, std::ostream& err);

}  // namespace eddy
