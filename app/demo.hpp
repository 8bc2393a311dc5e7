// demo.hpp: the headless demo `eddy` runs where there is no display
// (scripts/run.sh on a server): the app's default scene for about a simulated
// second (SPH: a whole dam break with the app's solver, DFSPH), progress on
// stderr, then what happened (the surge front, the real-time factor) and how
// to see it (the app, or an export for ParaView) on stdout.
#pragma once

#include <ostream>
#include <string>

namespace eddy {

struct DemoOptions {
  std::string device;  // "" = the default device (the first GPU, else the CPU)
  double until = 0;    // > 0: run to this simulated time instead of the demo's own
};

// Exit code as eddy-cli's: 0, or 1 for a runtime failure (message on `err`).
int runHeadlessDemo(std::ostream& out, std::ostream& err, const DemoOptions& o = {});

}  // namespace eddy
