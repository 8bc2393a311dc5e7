// main.cpp: the usage text, per-command help and cliMain (eddy-cli's entry).
#include "cli.hpp"
#include "cli_common.hpp"

#include <algorithm>
#include <iostream>
#include <sstream>

namespace eddy {
namespace cli {

const char* const kUsage = R"(usage: eddy-cli <command> [options]

commands:
  devices                      list OpenCL platforms and devices
  run [options]                run a simulation headless
  bench nbody [options]        measure the N-body force kernel
  bench sph [options]          measure the SPH step, kernel by kernel
  bench realtime [options]     SPH real-time factor per solver: 3-D Koshizuka & Oka dam break
                               (--n LIST, --solver LIST (wcsph,dfsph), --until S (0.3), --json)
  bench frame [options]        the desktop app's per-frame device work without a window:
                               steps + colour field + host copy of the positions
  params [--sim S]             list the declared parameters of a simulation
  help, --help                 this text;  --version  the version

run options:
  --config FILE.json           read the run from a config file; flags given with it
                               override the file's values (see docs/USAGE.md)
  --sim nbody|sph              simulation (default nbody)
  --scene NAME                 nbody: plummer (default), galaxies, collapse
                               sph: dam_break (default), drop, double_dam_break
  --n N                        nbody: body count (default 16384); sph: set spacing instead
  --steps N                    steps to run (default 1000; counted from a loaded step)
  --until T                    run until simulated time T (s for sph) instead of --steps
  --device gpu|cpu|P:D         device (default: first GPU, else a CPU device)
  --devices LIST               nbody: split the bodies over several devices: all, gpu, cpu
                               (every device of that kind) or P:D,P:D,...
  --shares W,W,...             with --devices: relative share of each device (default:
                               measured speed of each device)
  --set key=value              set a declared parameter (repeatable; see 'params')
  --ic FILE.csv                nbody initial conditions, header x,y,z,vx,vy,vz,m
  --diag FILE.csv              diagnostics every K steps (--diag-every K, default 10)
  --out FILE.csv               final particle state
  --export DIR                 ParaView frames DIR/step_*.vtp + DIR/eddy.pvd every
                               --export-every K steps (default 100), first and last too;
                               DIR must be empty or new unless --overwrite is given
  --overwrite                  with --export: first remove an earlier export's
                               step_*.vtp and eddy.pvd from DIR (nothing else)
  --save FILE.snap             restart snapshot of the final state
  --load FILE.snap             continue a run from a snapshot (bit-identical)
  --check-every K              blow-up check (NaN/inf on the device) every K steps
                               (default 100, 0 = only once at the end)
  --json                       machine-readable summary on stdout
  --quiet                      no progress on stderr

bench frame options:
  --sim, --scene, --n, --set, --device   as for run
  --frames N (default 50)  --substeps K (default 1)  --color FIELD|none  --json
  --realtime                   the app's real-time mode with the app's defaults (its scene
                               unless --sim, SPH with solver dfsph): each frame runs the
                               steps its wall time x --speed S (default 1) asks for, within
                               the compute budget; frames paced to --fps F (default 60,
                               0 = unpaced), --frames default 120; reports the real-time
                               factor reached

bench options:
  --n LIST                     comma-separated counts (nbody default 4096,16384,65536,262144
                               on a GPU, 1024,4096,16384 on a CPU; sph default
                               65536,262144,1048576,4194304 on a GPU, 16384,65536 on a CPU)
  --mode LIST                  sph: cells (direct 27-cell iteration), list (neighbour list);
                               default cells,list
  --cap N                      sph: neighbour list capacity (default 96)
  --approx-divsqrt             sph: the device's default (approximate) fp32 divide and sqrt
                               instead of correctly rounded ones
  --wg LIST, --bpi LIST        nbody: work-group sizes / bodies per work-item to try (default:
                               the layout a run picks for each N)
  --unroll LIST                unroll factors of the tile loop (0 = full; default 8)
  --method direct|tree|auto    nbody: how gravity is computed (default direct); with tree,
                               the per-phase profiler table is printed after each N
  --theta X                    nbody: the tree's opening angle (default: the parameter's)
  --tree-stack N               nbody: entries of the tree walk's stack in local memory
  --cl-options STR             kernel compiler options to try (repeatable)
  --steps N                    timed steps per configuration (default: about 1 s of work)
  --device, --json             as for run
  --devices LIST               time whole steps split over these devices (repeatable: each
                               list is one configuration, the first is the baseline of the
                               speedup column); reports pair interactions/s per device and
                               in total and the fraction of the step spent exchanging
  --shares W,W,...             as for run (applies to every list of that length)
)";


namespace {

// `eddy-cli COMMAND --help` (or -h right after the command): that command's
// help. "--help" is never a flag's value (Args::value refuses "--..." values).
bool wantsHelp(const std::vector<std::string>& argv) {
  if (argv.size() >= 2 && argv[1] == "-h") return true;
  return std::find(argv.begin() + 1, argv.end(), "--help") != argv.end();
}

// The part of kUsage about one command: its line(s) under "commands:" and
// its "... options:" sections.
std::string commandHelp(const std::string& cmd) {
  const std::string usage = kUsage;
  std::string text = "usage: eddy-cli " + cmd + " [options]\n";
  std::vector<std::string> sections;
  if (cmd == "run") sections = {"run options:"};
  else if (cmd == "bench") sections = {"bench options:", "bench frame options:"};
  std::istringstream lines(usage);
  std::string line;
  while (std::getline(lines, line))
    if (line.rfind("  " + cmd + " ", 0) == 0 || line == "  " + cmd) text += line + "\n";
  for (const auto& head : sections) {
    const auto at = usage.find("\n" + head + "\n");
    if (at == std::string::npos) continue;
    const auto end = usage.find("\n\n", at + 1);
    text += usage.substr(at, end == std::string::npos ? std::string::npos : end - at) + "\n";
  }
  return text;
}

}  // namespace
}  // namespace cli

using namespace cli;

int cliMain(const std::vector<std::string>& argv, std::ostream& out, std::ostream& err) {
  Args args(argv);
  try {
    if (args.done()) {
      err << kUsage;
      return 2;
    }
    const std::string cmd = args.next();
    if (cmd == "help" || cmd == "--help" || cmd == "-h") {
      out << kUsage;
      return 0;
    }
    if (cmd == "--version") {
      out << "eddy " << EDDY_VERSION << '\n';
      return 0;
    }
    const bool known = cmd == "devices" || cmd == "run" || cmd == "bench" || cmd == "params";
    if (known && wantsHelp(argv)) {
      out << commandHelp(cmd);
      return 0;
    }
    if (cmd == "devices") return cmdDevices(args, out);
    if (cmd == "params") return cmdParams(args, out);
    if (cmd == "run") return cmdRun(args, out, err);
    if (cmd == "bench") return cmdBench(args, out, err);
    throw UsageError("unknown command '" + cmd + "' (commands: devices, run, bench, params)");
  } catch (const UsageError& e) {
    err << "eddy-cli: error: " << e.what() << "\n(see 'eddy-cli --help')\n";
    return 2;
  } catch (const Error& e) {
    err << "eddy-cli: error: " << e.what() << '\n';
    return 1;
  } catch (const cl::Error& e) {
    err << "eddy-cli: OpenCL error: " << describe(e) << '\n';
    return 1;
  } catch (const std::bad_alloc&) {
    err << "eddy-cli: error: out of host memory\n";
    return 1;
  } catch (const std::exception& e) {
    err << "eddy-cli: error: " << e.what() << '\n';
    return 1;
  }
}

}  // namespace eddy

