// cli_common.hpp: what the eddy-cli commands share (app/cli/): usage errors, the
// argument cursor, JSON and device helpers. One file per command:
// run.cpp, bench_nbody.cpp (and the `bench` dispatch), bench_sph.cpp,
// bench_frame.cpp, devices.cpp, params.cpp; main.cpp holds the usage text,
// the help and cliMain.
#pragma once

#include "cl.hpp"
#include "io.hpp"
#include "params.hpp"
#include "profiler.hpp"

#include <nlohmann/json.hpp>

#include <chrono>
#include <iosfwd>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

namespace eddy::cli {

using Clock = std::chrono::steady_clock;
using json = nlohmann::json;

// A usage error: exit 2 with "(see 'eddy-cli --help')".
class UsageError : public Error {
 public:
  using Error::Error;
};

extern const char* const kUsage;  // main.cpp

// Cursor over the arguments with typed accessors that name the flag on error.
class Args {
 public:
  explicit Args(const std::vector<std::string>& a) : a_(a) {}
  bool done() const { return i_ >= a_.size(); }
  std::string next() { return a_[i_++]; }
  std::string value(const std::string& flag) {
    if (done() || (a_[i_].rfind("--", 0) == 0 && a_[i_].size() > 2))
      throw UsageError(flag + " needs a value");
    return next();
  }
  unsigned long long count(const std::string& flag, unsigned long long min,
                           unsigned long long max) {
    const std::string v = value(flag);
    unsigned long long n = 0;
    if (!parseUnsigned(v, n))
      throw UsageError(flag + ": '" + v + "' is not a whole number");
    if (n < min || n > max)
      throw UsageError(flag + ": " + v + " is out of range [" + std::to_string(min) + ", " +
                       std::to_string(max) + "]");
    return n;
  }
  double real(const std::string& flag, double min, double max) {
    const std::string v = value(flag);
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
  std::vector<double> reals(const std::string& flag, double min, double max) {
    const std::string v = value(flag);
    std::vector<double> out;
    std::stringstream ss(v);
    std::string item;
    while (std::getline(ss, item, ',')) {
      double d = 0;
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
  std::vector<unsigned long long> list(const std::string& flag, unsigned long long min,
                                       unsigned long long max) {
    const std::string v = value(flag);
    std::vector<unsigned long long> out;
    std::stringstream ss(v);
    std::string item;
    while (std::getline(ss, item, ',')) {
      unsigned long long n = 0;
      if (!parseUnsigned(item, n) || n < min || n > max)
        throw UsageError(flag + ": '" + item + "' is not a whole number in [" +
                         std::to_string(min) + ", " + std::to_string(max) + "]");
      out.push_back(n);
    }
    if (out.empty() || v.back() == ',') throw UsageError(flag + ": empty list item in '" + v + "'");
    return out;
  }

 private:
  const std::vector<std::string>& a_;
  size_t i_ = 0;
};

json deviceJson(const DeviceInfo& d);
json profileJson(const Profiler& p);
// Syntax of a --device value (whether the device exists is found out later).
std::string deviceSpec(const std::string& flag, const std::string& v);
// Syntax of a --devices value: all | gpu | cpu | P:D[,P:D...], no device listed twice.
std::string checkDeviceList(const std::string& flag, const std::string& v);
void checkShares(const std::vector<double>& shares);
// Opens every device of a --devices list; a failure names the device.
std::vector<std::unique_ptr<Context>> openDevices(const std::string& list);
std::vector<Context*> pointers(const std::vector<std::unique_ptr<Context>>& v);
// JSON number: a whole value of an integer quantity is written as an integer.
json jsonNumber(double v, bool integer);
// Diagnostics columns that count (steps, particles, list entries).
bool integerColumn(const std::string& name);

// The commands; each returns the exit code or throws UsageError / Error.
int cmdDevices(Args& args, std::ostream& out);
int cmdParams(Args& args, std::ostream& out);
int cmdRun(Args& args, std::ostream& out, std::ostream& err);
int cmdBench(Args& args, std::ostream& out, std::ostream& err);  // bench nbody|sph|realtime|frame
int cmdBenchSph(Args& args, std::ostream& out);
int cmdBenchRealtime(Args& args, std::ostream& out);
int cmdBenchFrame(Args& args, std::ostream& out, std::ostream& err);

}  // namespace eddy::cli
