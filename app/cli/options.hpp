// options.hpp: command-line options on CLI11 (Debian libcli11-dev), shared by
// eddy-cli (app/cli/) and the desktop app's parser (app/gui_options.cpp).
//
// CLI11 does the structure: subcommands, `--flag value` and `--flag=value`,
// repeated flags, help text from the registered options. The typed options
// below convert and check each value with eddy's own strict parsers
// (parseUnsigned, parseDouble) the moment the flag is read, left to right, so
// the first bad argument is the one reported and the messages name the flag
// as they always did:
//   --n needs a value            --n: 'abc' is not a whole number
//   --n: 0 is out of range [1, 2147483647]     run: unknown option '--bogus'
// Every problem throws UsageError (exit 2 in eddy-cli).
#pragma once

#include "config.hpp"  // CountLimit
#include "error.hpp"

#include <CLI/CLI.hpp>

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace eddy::cli {

// A usage error: exit 2 with "(see 'eddy-cli --help')".
class UsageError : public Error {
 public:
  using Error::Error;
};

// The value checks, each naming `flag` in its message.
unsigned long long parseCount(const std::string& flag, const std::string& v,
                              unsigned long long min, unsigned long long max);
double parseReal(const std::string& flag, const std::string& v, double min, double max);
// Comma-separated lists: every item checked, no empty item.
std::vector<unsigned long long> parseCounts(const std::string& flag, const std::string& v,
                                            unsigned long long min, unsigned long long max);
std::vector<double> parseReals(const std::string& flag, const std::string& v, double min,
                               double max);
// A comma-separated list of names, each one of `known`; `what` names them in
// the message ("--mode: 'x' is not cells or list").
std::vector<std::string> parseChoices(const std::string& flag, const std::string& v,
                                      const std::vector<std::string>& known,
                                      const std::string& what);

// The options of one command (or of the desktop app) on its CLI11 App. Each
// call registers one flag; `type` is its value's name in the help ("N",
// "FILE.csv"), `help` its description ('\n' starts an indented line).
class Options {
 public:
  // `name` prefixes "unknown option" messages ("run", "bench sph"; "" for the app).
  Options(CLI::App& app, std::string name);
  CLI::App& app() const { return *app_; }
  const std::string& name() const { return name_; }

  // Any value; given twice, the last one counts.
  CLI::Option* text(const std::string& flag, std::string& to, const std::string& type,
                    const std::string& help);
  CLI::Option* text(const std::string& flag, std::optional<std::string>& to,
                    const std::string& type, const std::string& help);
  // Repeatable: every occurrence appends its value.
  CLI::Option* texts(const std::string& flag, std::vector<std::string>& to,
                     const std::string& type, const std::string& help);
  // A whole number in [min, max] (to: any integer type or std::optional of one).
  template <class T>
  CLI::Option* count(const std::string& flag, T& to, unsigned long long min,
                     unsigned long long max, const std::string& type, const std::string& help) {
    return custom(flag, type, help, [&to, flag, min, max](const std::string& v) {
      to = static_cast<T>(parseCount(flag, v, min, max));
    });
  }
  template <class T>
  CLI::Option* count(const std::string& flag, T& to, CountLimit lim, const std::string& type,
                     const std::string& help) {
    return count(flag, to, lim.min, lim.max, type, help);
  }
  // A finite number in [min, max] (to: double or std::optional<double>).
  template <class T>
  CLI::Option* real(const std::string& flag, T& to, double min, double max,
                    const std::string& type, const std::string& help) {
    return custom(flag, type, help,
                  [&to, flag, min, max](const std::string& v) { to = parseReal(flag, v, min, max); });
  }
  // Comma-separated lists (given twice, the last list counts).
  CLI::Option* counts(const std::string& flag, std::vector<unsigned long long>& to,
                      unsigned long long min, unsigned long long max, const std::string& type,
                      const std::string& help);
  CLI::Option* reals(const std::string& flag, std::vector<double>& to, double min, double max,
                     const std::string& type, const std::string& help);
  // A switch without a value: sets `to = value`, or calls `set`.
  CLI::Option* flag(const std::string& flag, bool& to, bool value, const std::string& help);
  CLI::Option* flag(const std::string& flag, const std::string& help, std::function<void()> set);
  // Any other value: `read` converts and checks it (throwing UsageError).
  CLI::Option* custom(const std::string& flag, const std::string& type, const std::string& help,
                      std::function<void(const std::string&)> read);

  // "<name>: unknown option 'a'" (without the prefix where name is empty).
  UsageError unknownOption(const std::string& a) const;

 private:
  CLI::App* app_;
  std::string name_;
};

// An App for eddy's parsers: no CLI11 help flag (the callers answer --help
// themselves, before any other check), unknown arguments kept for
// leftovers(), at most one subcommand.
void configureApp(CLI::App& app);

// Parses `args` with `app` and its subcommands. A bad value throws
// UsageError from its option; a flag without a value at the end throws
// "FLAG needs a value". `leftovers` is called after the parse, and also
// before a UsageError is passed on (an argument nobody took that came
// before the bad one is the first problem): it throws for arguments left
// over (see leftovers()).
void parse(CLI::App& app, const std::vector<std::string>& args,
           const std::function<void()>& checkLeftovers);
// The arguments `app` (not its subcommands) did not take, in order.
std::vector<std::string> leftovers(const CLI::App& app);

// Help text of one App: its options as "  --flag TYPE   description" lines
// in a 31-column name field (eddy's usage layout), then "  --help  this text"
// where `withHelp`.
std::string optionLines(const CLI::App& app, bool withHelp);
// One help line: `name` in the name field, then `text` ('\n' indents).
std::string helpLine(const std::string& name, const std::string& text);

}  // namespace eddy::cli
