// eddy: the desktop app. `eddy` opens a window with the default scene and the
// panel; `eddy <eddy-cli command> ...` runs the headless commands. Without a
// display, `eddy` with no arguments runs the headless demo (app/demo.hpp).
#include "cli.hpp"
#include "defaults.hpp"
#include "demo.hpp"

#include <algorithm>
#include <cstdlib>
#include <iostream>

#if EDDY_HAVE_GUI
#include "gui_app.hpp"
#include "gui_options.hpp"
#endif

namespace {

bool isCliCommand(const std::string& a) {
  static const char* cmds[] = {"devices", "run", "bench", "params", "help", "--version"};
  return std::any_of(std::begin(cmds), std::end(cmds), [&](const char* c) { return a == c; });
}

int headlessDemo() {
  std::cerr << "eddy: no display; running the headless demo\n";
  eddy::DemoOptions o;
  // EDDY_DEMO_UNTIL=T: a shorter demo (the tests run it end to end).
  if (const char* u = std::getenv("EDDY_DEMO_UNTIL"); u && *u) {
    char* end = nullptr;
    const double t = std::strtod(u, &end);
    if (*end != '\0' || !(t > 0 && t <= 1e6)) {
      std::cerr << "eddy: error: EDDY_DEMO_UNTIL='" << u << "' is not a time in (0, 1e6] s\n";
      return 2;
    }
    o.until = t;
  }
  return eddy::runHeadlessDemo(std::cout, std::cerr, o);
}

}  // namespace

int main(int argc, char** argv) {
  const std::vector<std::string> args(argv + 1, argv + argc);
  if (!args.empty() && isCliCommand(args[0])) return eddy::cliMain(args, std::cout, std::cerr);
#if EDDY_HAVE_GUI
  eddy::GuiOptions o;
  try {
    o = eddy::parseGuiOptions(args);
  } catch (const eddy::GuiUsageError& e) {
    std::cerr << "eddy: error: " << e.what() << "\n(see 'eddy --help')\n";
    return 2;
  } catch (const eddy::Error& e) {
    std::cerr << "eddy: error: " << e.what() << '\n';
    return 1;
  }
  if (o.help) {
    std::cout << eddy::guiUsage();
    return 0;
  }
  // Files named on the command line are checked before any window opens.
  try {
    eddy::resolveLoad(o);
  } catch (const eddy::GuiUsageError& e) {
    std::cerr << "eddy: error: " << e.what() << "\n(see 'eddy --help')\n";
    return 2;
  } catch (const eddy::Error& e) {
    std::cerr << "eddy: error: --load: " << e.what() << '\n';
    return 1;
  }
  if (!o.ignoredConfigKeys.empty()) {
    const std::string keys = eddy::joinNames(o.ignoredConfigKeys);
    std::cerr << "eddy: --config " << o.configPath << ": the app ignores " << keys
              << " (they describe a headless run: eddy-cli run --config)\n";
  }
  if (!o.offscreen && !eddy::displayAvailable()) {
    if (args.empty()) return headlessDemo();
    std::cerr << "eddy: error: no display (DISPLAY / WAYLAND_DISPLAY unset); run under "
                 "xvfb-run or use eddy-cli\n";
    return 1;
  }
  const int rc = eddy::runGui(o, std::cout, std::cerr);
  if (rc != eddy::kNoDisplay) return rc;
  if (args.empty()) return headlessDemo();
  std::cerr << "eddy: error: cannot open a window (glfwInit failed)\n";
  return 1;
#else
  if (!args.empty()) {
    std::cerr << "eddy: built without the desktop app (EDDY_BUILD_GUI=OFF); use eddy-cli\n";
    return 2;
  }
  return headlessDemo();
#endif
}
