// options.cpp: typed options on CLI11 (options.hpp).
#include "options.hpp"

#include "io.hpp"      // formatNumber
#include "params.hpp"  // parseUnsigned, parseDouble, joinNames

#include <algorithm>
#include <sstream>

namespace eddy::cli {

unsigned long long parseCount(const std::string& flag, const std::string& v,
                              unsigned long long min, unsigned long long max) {
  unsigned long long n = 0;
  if (!parseUnsigned(v, n)) {
    // All digits but more than 64 bits hold: a whole number, out of range.
    if (!v.empty() && v.find_first_not_of("0123456789") == std::string::npos)
      throw UsageError(flag + ": " + v + " is out of range [" + std::to_string(min) + ", " +
                       std::to_string(max) + "]");
    throw UsageError(flag + ": '" + v + "' is not a whole number in [" + std::to_string(min) + ", " +
                     std::to_string(max) + "]");
  }
  if (n < min || n > max)
    throw UsageError(flag + ": " + v + " is out of range [" + std::to_string(min) + ", " +
                     std::to_string(max) + "]");
  return n;
}

double parseReal(const std::string& flag, const std::string& v, double min, double max) {
  double d = 0;
  if (!parseDouble(v, d)) throw UsageError(flag + ": '" + v + "' is not a finite number");
  if (d < min || d > max) {
    std::ostringstream o;
    o << flag << ": " << v << " is out of range [" << formatNumber(min) << ", "
      << formatNumber(max) << "]";
    throw UsageError(o.str());
  }
  return d;
}

std::vector<unsigned long long> parseCounts(const std::string& flag, const std::string& v,
                                            unsigned long long min, unsigned long long max) {
  std::vector<unsigned long long> out;
  std::stringstream ss(v);
  std::string item;
  while (std::getline(ss, item, ',')) {
    unsigned long long n = 0;
    const std::string range = "[" + std::to_string(min) + ", " + std::to_string(max) + "]";
    if (item.find_first_not_of(" \t") == std::string::npos)  // ",64", "4,,8" as "64,"
      throw UsageError(flag + ": empty list item in '" + v + "'");
    if (!parseUnsigned(item, n))
      throw UsageError(flag + ": '" + item + "' is not a whole number in " + range);
    if (n < min || n > max) throw UsageError(flag + ": " + item + " is out of range " + range);
    out.push_back(n);
  }
  if (out.empty() || v.back() == ',') throw UsageError(flag + ": empty list item in '" + v + "'");
  return out;
}

std::vector<double> parseReals(const std::string& flag, const std::string& v, double min,
                               double max) {
  std::vector<double> out;
  std::stringstream ss(v);
  std::string item;
  while (std::getline(ss, item, ',')) {
    double d = 0;
    if (item.find_first_not_of(" \t") == std::string::npos)
      throw UsageError(flag + ": empty list item in '" + v + "'");
    if (!parseDouble(item, d) || d < min || d > max) {
      std::ostringstream o;
      o << flag << ": '" << item << "' is not a number in [" << formatNumber(min) << ", "
        << formatNumber(max) << "]";
      throw UsageError(o.str());
    }
    out.push_back(d);
  }
  if (out.empty() || v.back() == ',') throw UsageError(flag + ": empty list item in '" + v + "'");
  return out;
}

std::vector<std::string> parseChoices(const std::string& flag, const std::string& v,
                                      const std::vector<std::string>& known,
                                      const std::string& what) {
  std::vector<std::string> out;
  if (!v.empty() && v.back() == ',')  // getline would drop the empty last item
    throw UsageError(flag + ": empty item in '" + v + "'");
  std::stringstream ss(v);
  std::string m;
  while (std::getline(ss, m, ',')) {
    if (std::find(known.begin(), known.end(), m) == known.end())
      throw UsageError(flag + ": '" + printable(m) + "' is not " + what);
    if (std::find(out.begin(), out.end(), m) != out.end())
      throw UsageError(flag + ": '" + m + "' is listed twice in '" + printable(v) + "'");
    out.push_back(m);
  }
  if (out.empty()) throw UsageError(flag + ": empty list");
  return out;
}

namespace {

// CLI11 gives "--", "++" and clusters of short options ("-abc") a meaning of
// their own; eddy never did (they were values or unknown options). Such
// arguments are shielded behind a mark CLI11 takes for a plain word, and
// unshielded wherever a value or a leftover is read.
constexpr char kShield = '\x1f';

std::string shield(const std::string& a) {
  const bool special = a == "--" || a == "++" || (!a.empty() && a[0] == kShield) ||
                       (a.size() > 2 && a[0] == '-' && a[1] != '-');
  return special ? kShield + a : a;
}

std::string unshield(const std::string& a) {
  return !a.empty() && a[0] == kShield ? a.substr(1) : a;
}

}  // namespace

Options::Options(CLI::App& app, std::string name) : app_(&app), name_(std::move(name)) {}

UsageError Options::unknownOption(const std::string& a) const {
  return UsageError((name_.empty() ? "" : name_ + ": ") + "unknown option '" + a + "'");
}

CLI::Option* Options::custom(const std::string& flag, const std::string& type,
                             const std::string& help, std::function<void(const std::string&)> read) {
  CLI::callback_t callback = [flag, read = std::move(read)](const CLI::results_t& r) {
    // One result per occurrence: trigger_on_parse clears the earlier one.
    const std::string v = unshield(r.empty() ? std::string() : r.back());
    // A flag's value is never an option ("--x"); a lone "--" is a value.
    if (v.size() > 2 && v.rfind("--", 0) == 0) throw UsageError(flag + " needs a value");
    read(v);
    return true;
  };
  return app_->add_option(flag, callback, help)->type_name(type)->trigger_on_parse();
}

CLI::Option* Options::text(const std::string& flag, std::string& to, const std::string& type,
                           const std::string& help) {
  return custom(flag, type, help, [&to](const std::string& v) { to = v; });
}

CLI::Option* Options::text(const std::string& flag, std::optional<std::string>& to,
                           const std::string& type, const std::string& help) {
  return custom(flag, type, help, [&to](const std::string& v) { to = v; });
}

CLI::Option* Options::texts(const std::string& flag, std::vector<std::string>& to,
                            const std::string& type, const std::string& help) {
  return custom(flag, type, help, [&to](const std::string& v) { to.push_back(v); });
}

CLI::Option* Options::counts(const std::string& flag, std::vector<unsigned long long>& to,
                             unsigned long long min, unsigned long long max,
                             const std::string& type, const std::string& help) {
  return custom(flag, type, help, [&to, flag, min, max](const std::string& v) {
    to = parseCounts(flag, v, min, max);
  });
}

CLI::Option* Options::reals(const std::string& flag, std::vector<double>& to, double min,
                            double max, const std::string& type, const std::string& help) {
  return custom(flag, type, help, [&to, flag, min, max](const std::string& v) {
    to = parseReals(flag, v, min, max);
  });
}

CLI::Option* Options::flag(const std::string& flag, bool& to, bool value,
                           const std::string& help) {
  return this->flag(flag, help, [&to, value] { to = value; });
}

CLI::Option* Options::flag(const std::string& flag, const std::string& help,
                           std::function<void()> set) {
  // A switch takes no value: "--json=x" stays an unknown option, as it always
  // was. (CLI11 reads a switch given alone as "true", so --json=true is --json.)
  const auto comma = flag.rfind(',');
  const std::string longName = comma == std::string::npos ? flag : flag.substr(comma + 1);
  CLI::callback_t callback = [this, longName, set = std::move(set)](const CLI::results_t& r) {
    const std::string v = r.empty() ? "true" : r.back();
    if (v != "true") throw unknownOption(longName + "=" + unshield(v));
    set();
    return true;
  };
  return app_->add_option(flag, callback, help)
      ->expected(0)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeLast)
      ->trigger_on_parse();
}

void configureApp(CLI::App& app) {
  app.set_help_flag();
  app.allow_extras();
  app.require_subcommand(0, 1);
}

std::vector<std::string> leftovers(const CLI::App& app) {
  std::vector<std::string> out;
  for (const auto& a : app.remaining(false)) out.push_back(unshield(a));
  return out;
}

void parse(CLI::App& app, const std::vector<std::string>& args,
           const std::function<void()>& checkLeftovers) {
  std::vector<std::string> shielded;
  for (auto it = args.rbegin(); it != args.rend(); ++it) shielded.push_back(shield(*it));
  try {
    app.parse(shielded);  // CLI11 takes the arguments reversed
  } catch (const UsageError&) {
    checkLeftovers();
    throw;
  } catch (const CLI::ArgumentMismatch&) {
    // The last argument is a flag that needs a value (`--n` or `--n=`).
    checkLeftovers();
    const std::string last = unshield(args.back());
    throw UsageError(last.substr(0, last.find('=')) + " needs a value");
  } catch (const CLI::Error& e) {
    checkLeftovers();
    throw UsageError(e.what());
  }
  checkLeftovers();
}

std::string helpLine(const std::string& name, const std::string& text) {
  constexpr size_t kWidth = 31;  // "  " + name, then the text from this column
  std::string line = "  " + name;
  if (text.empty()) return line + "\n";
  // At least two spaces between name and text: a longer name gets a line of its own.
  line += line.size() + 2 > kWidth ? "\n" + std::string(kWidth, ' ')
                                   : std::string(kWidth - line.size(), ' ');
  for (const char c : text) {
    line += c;
    if (c == '\n') line += std::string(kWidth, ' ');
  }
  return line + "\n";
}

std::string optionLines(const CLI::App& app, bool withHelp) {
  std::string text;
  for (const CLI::Option* o : app.get_options()) {
    std::string names;
    for (const auto& s : o->get_snames()) names += (names.empty() ? "-" : ", -") + s;
    for (const auto& l : o->get_lnames()) names += (names.empty() ? "--" : ", --") + l;
    if (!o->get_type_name().empty()) names += " " + o->get_type_name();
    text += helpLine(names, o->get_description());
  }
  if (withHelp) text += helpLine("--help", "this text");
  return text;
}

}  // namespace eddy::cli
