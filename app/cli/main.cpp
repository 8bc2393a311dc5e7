// main.cpp: eddy-cli's command tree (CLI11 subcommands), its help and cliMain.
#include "cli.hpp"
#include "cli_common.hpp"

#include <algorithm>
#include <iostream>
#include <list>

namespace eddy {
namespace cli {
namespace {

struct Command {
  Options opts;  // the command's CLI11 subcommand and its options
  Runner run;
};

// The command tree: `eddy-cli COMMAND [options]`, `bench` with one
// subcommand per benchmark. A new command is one add() line here and a file
// with its add* function (cli_common.hpp).
struct CommandTree {
  CLI::App app{"", "eddy-cli"};
  CLI::App* bench = nullptr;
  std::list<Command> commands;  // stable addresses: options refer to them

  CommandTree() {
    configureApp(app);
    add(app, "devices", "list OpenCL platforms and devices", "devices", addDevices);
    add(app, "run", "run a simulation headless", "run", addRun);
    bench = app.add_subcommand("bench", "measure the device work: one benchmark per subcommand");
    configureApp(*bench);
    // `bench nbody` reports its unknown options as "bench: ..." (as it always did).
    add(*bench, "nbody", "measure the N-body force kernel (or the tree, or several devices)", "bench",
        addBenchNbody);
    add(*bench, "sph", "measure the SPH step, kernel by kernel", "bench sph", addBenchSph);
    add(*bench, "realtime",
        "SPH real-time factor per solver: 3-D Koshizuka & Oka dam break\n(simulated seconds per "
        "wall second)",
        "bench realtime", addBenchRealtime);
    add(*bench, "frame",
        "the desktop app's per-frame device work without a window:\nsteps + colour field + host "
        "copy of the positions",
        "bench frame", addBenchFrame);
    add(*bench, "launch",
        "the host's cost of one kernel launch on this driver, with and\nwithout a profiling "
        "event",
        "bench launch", addBenchLaunch);
    add(app, "params", "list the declared parameters of a simulation", "params", addParams);
  }

  void add(CLI::App& parent, const std::string& name, const std::string& description,
           const std::string& errorName, Runner (*setup)(Options&)) {
    CLI::App* sub = parent.add_subcommand(name, description);
    configureApp(*sub);
    Command& c = commands.emplace_back(Command{Options(*sub, errorName), {}});
    c.run = setup(c.opts);
  }
};

std::vector<std::string> names(const CLI::App& app) {
  std::vector<std::string> out;
  for (const CLI::App* s : app.get_subcommands({})) out.push_back(s->get_name());
  return out;
}

CLI::App* find(CLI::App& parent, const std::string& name) {
  for (CLI::App* s : parent.get_subcommands({}))
    if (s->get_name() == name) return s;
  return nullptr;
}

// "bench nbody" for the bench nbody App.
std::string path(const CLI::App& a) {
  std::string p = a.get_name();
  for (const CLI::App* up = a.get_parent(); up && up->get_parent(); up = up->get_parent())
    p = up->get_name() + " " + p;
  return p;
}

bool hasOptions(const CLI::App& a) { return !a.get_options().empty(); }

// "run [options]", "bench nbody [options]", "devices".
std::string synopsis(const CLI::App& a) {
  return path(a) + (hasOptions(a) ? " [options]" : "");
}

// The commands (benchmarks spelled out) and every command's options.
std::string usageText(const CommandTree& t) {
  std::string text = "usage: eddy-cli <command> [options]\n\ncommands:\n";
  std::vector<const CLI::App*> leaves;
  for (const CLI::App* c : t.app.get_subcommands({})) {
    const auto kinds = c->get_subcommands({});
    if (kinds.empty()) leaves.push_back(c);
    for (const CLI::App* k : kinds) leaves.push_back(k);
  }
  for (const CLI::App* c : leaves) text += helpLine(synopsis(*c), c->get_description());
  text += helpLine("help, --help", "this text;  --version  the version");
  text += helpLine("COMMAND --help", "the help of one command");
  for (const CLI::App* c : leaves)
    if (hasOptions(*c)) text += "\n" + path(*c) + " options:\n" + optionLines(*c, false);
  return text;
}

// `eddy-cli COMMAND --help`: the command's description and options; for
// `bench`, every benchmark's.
std::string commandHelp(const CLI::App& a) {
  const auto kinds = a.get_subcommands({});
  std::string text = "usage: eddy-cli " + path(a);
  if (!kinds.empty()) {
    std::string list;
    for (const CLI::App* k : kinds) list += (list.empty() ? "" : "|") + k->get_name();
    text += " <" + list + "> [options]\n" + a.get_description() + "\n\nbenchmarks:\n";
    for (const CLI::App* k : kinds) text += helpLine(synopsis(*k).substr(path(a).size() + 1), k->get_description());
    for (const CLI::App* k : kinds)
      text += "\n" + path(*k) + " options:\n" + optionLines(*k, true);
    return text;
  }
  return text + (hasOptions(a) ? " [options]\n" : "\n") + a.get_description() + "\n\noptions:\n" +
         optionLines(a, true);
}

// `eddy-cli COMMAND ... --help` (or -h right after the command, `bench
// KIND -h` too) asks for help whatever else is given. "--help" is never a
// flag's value (a value that starts with "--" is refused).
bool wantsHelp(CLI::App& cmd, const std::vector<std::string>& argv) {
  const size_t at = argv.size() >= 2 && find(cmd, argv[1]) ? 2 : 1;  // after `bench KIND`
  if (argv.size() > at && argv[at] == "-h") return true;
  return std::find(argv.begin() + 1, argv.end(), "--help") != argv.end();
}

int dispatch(const std::vector<std::string>& argv, std::ostream& out, std::ostream& err) {
  CommandTree t;
  if (argv.empty()) {
    err << usageText(t);
    return 2;
  }
  const std::string& first = argv[0];
  if (first == "help" || first == "--help" || first == "-h") {
    if (argv.size() == 1) {
      out << usageText(t);
      return 0;
    }
    // `eddy-cli help run`, `eddy-cli --help bench realtime`: that command's
    // help; anything else after it is an error, not ignored.
    CLI::App* cmd = find(t.app, argv[1]);
    if (!cmd)
      throw UsageError(first + ": unknown command '" + printable(argv[1]) + "' (commands: " +
                       joinNames(names(t.app)) + ")");
    CLI::App* kind = argv.size() >= 3 ? find(*cmd, argv[2]) : nullptr;
    if (argv.size() >= 3 && !kind)
      throw UsageError(first + " " + argv[1] + ": unexpected '" + printable(argv[2]) + "'" +
                       (names(*cmd).empty() ? "" : " (known: " + joinNames(names(*cmd)) + ")"));
    if (argv.size() > (kind ? 3u : 2u))
      throw UsageError(first + ": unexpected '" + printable(argv[kind ? 3 : 2]) + "'");
    out << commandHelp(kind ? *kind : *cmd);
    return 0;
  }
  if (first == "--version") {
    if (argv.size() > 1) throw UsageError("--version takes no arguments, got '" + printable(argv[1]) + "'");
    out << "eddy " << EDDY_VERSION << '\n';
    return 0;
  }
  if (CLI::App* cmd = find(t.app, first); cmd && wantsHelp(*cmd, argv)) {
    CLI::App* kind = argv.size() >= 2 ? find(*cmd, argv[1]) : nullptr;
    out << commandHelp(kind ? *kind : *cmd);
    return 0;
  }
  // Arguments nobody took: the first one is the error (an unknown command,
  // benchmark or option), also when a later argument is bad as well.
  auto checkLeftovers = [&] {
    if (const auto l = leftovers(t.app); !l.empty())
      throw UsageError("unknown command '" + l[0] + "' (commands: " + joinNames(names(t.app)) + ")");
    if (const auto l = leftovers(*t.bench); t.bench->parsed() && !l.empty())
      throw UsageError("bench: unknown benchmark '" + l[0] + "' (known: " +
                       joinNames(names(*t.bench)) + ")");
    for (const Command& c : t.commands)
      if (const auto l = leftovers(c.opts.app()); c.opts.app().parsed() && !l.empty())
        throw c.opts.unknownOption(l[0]);
  };
  parse(t.app, argv, checkLeftovers);
  for (const Command& c : t.commands)
    if (c.opts.app().parsed()) return c.run(out, err);
  // `bench` without a benchmark.
  std::string which;
  const auto kinds = names(*t.bench);
  for (size_t i = 0; i < kinds.size(); ++i)
    which += std::string(i == 0 ? "" : i + 1 == kinds.size() ? " or " : ", ") + "'bench " + kinds[i] + "'";
  throw UsageError("bench: which benchmark? " + which);
}

}  // namespace
}  // namespace cli

using namespace cli;

int cliMain(const std::vector<std::string>& argv, std::ostream& out, std::ostream& err) {
  try {
    return dispatch(argv, out, err);
  } catch (const UsageError& e) {
    err << "eddy-cli: error: " << terminalSafe(e.what()) << "\n(see 'eddy-cli --help')\n";
    return 2;
  } catch (const Error& e) {
    err << "eddy-cli: error: " << terminalSafe(e.what()) << '\n';
    return 1;
  } catch (const cl::Error& e) {
    err << "eddy-cli: OpenCL error: " << terminalSafe(describe(e)) << '\n';
    return 1;
  } catch (const std::bad_alloc&) {
    err << "eddy-cli: error: out of host memory\n";
    return 1;
  } catch (const std::exception& e) {
    err << "eddy-cli: error: " << terminalSafe(e.what()) << '\n';
    return 1;
  }
}

}  // namespace eddy
