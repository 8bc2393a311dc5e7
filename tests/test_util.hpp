// Shared helpers for the test suite: one OpenCL context (PoCL's CPU device by
// default; EDDY_TEST_DEVICE overrides) and a CLI runner.
#pragma once

#include "cl.hpp"
#include "params.hpp"
#include "shape.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <sys/wait.h>

namespace eddy::test {

inline Context& context() {
  static Context ctx([] {
    const char* d = std::getenv("EDDY_TEST_DEVICE");
    return std::string(d && *d ? d : "cpu");
  }());
  return ctx;
}

// A seed that differs per run (fresh random inputs) but is printed so that a
// failure can be replayed with EDDY_TEST_SEED.
inline unsigned freshSeed() {
  if (const char* s = std::getenv("EDDY_TEST_SEED")) return unsigned(std::strtoul(s, nullptr, 10));
  static const unsigned seed = std::random_device{}();
  return seed;
}

struct Result {
  int code = -1;
  std::string out, err;
};

inline std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

inline std::string tempDir() {
  static std::string dir = [] {
    char tmpl[] = "/tmp/eddy-test-XXXXXX";
    const char* d = mkdtemp(tmpl);
    return std::string(d ? d : "/tmp");
  }();
  return dir;
}

inline void writeFile(const std::string& path, const std::string& text) {
  std::ofstream(path) << text;
}

// Runs a binary with the arguments (a shell-quoted string) and captures output.
// The CLI tests are written for the CI's device (`--device cpu`, PoCL); with
// EDDY_TEST_DEVICE=D set (e.g. gpu, on the H200) every `--device cpu` (and
// `--device=cpu`) in the arguments names D instead, so that they run there too.
// `args` with every `--device cpu` naming EDDY_TEST_DEVICE's device (see run).
inline std::string onTestDevice(std::string a) {
  if (const char* d = std::getenv("EDDY_TEST_DEVICE"); d && *d && std::string(d) != "cpu")
    for (const std::string flag : {"--device cpu", "--device=cpu"})
      for (size_t at = 0; (at = a.find(flag, at)) != std::string::npos;) {
        const size_t end = at + flag.size();
        if (end < a.size() && a[end] != ' ') {  // e.g. --device cpu:1 or a longer word
          at = end;
          continue;
        }
        const std::string to = flag.substr(0, flag.size() - 3) + d;  // "cpu" -> D
        a.replace(at, flag.size(), to);
        at += to.size();
      }
  return a;
}

inline Result run(const std::string& binary, const std::string& args) {
  static int counter = 0;
  const std::string base = tempDir() + "/run" + std::to_string(counter++);
  const std::string cmd = binary + " " + onTestDevice(args) + " >" + base + ".out 2>" + base + ".err </dev/null";
  const int status = std::system(cmd.c_str());
  Result r;
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.out = slurp(base + ".out");
  r.err = slurp(base + ".err");
  return r;
}

// The dam_break scene as a still tank filled wall to wall: water `height`
// deep across the whole `width`, in a tank `tankHeight` tall, a slab 4
// spacings deep at spacing dx (SPH parameters).
inline void stillTank(Params& p, double dx, double width, double height, double tankHeight) {
  p.set("spacing", dx);
  p.set("column_width", width);
  p.set("tank_length", width);
  p.set("column_height", height);
  p.set("tank_height", tankHeight);
  p.set("depth", 4 * dx);
}

// An axis-aligned box spec: centre (cx, cy, cz), sides (sx, sy, sz).
inline ShapeSpec boxSpec(double cx, double cy, double cz, double sx, double sy, double sz) {
  ShapeSpec b;
  b.kind = ShapeKind::Box;
  b.size = {sx, sy, sz};
  b.pose.position = {cx, cy, cz};
  return b;
}

// Signed distance to an axis-aligned box spec (test geometry, independent of sim/geometry).
inline double boxSdf(const ShapeSpec& b, const double p[3]) {
  double out = 0, in = -1e30;
  for (int k = 0; k < 3; ++k) {
    const double q = std::fabs(p[k] - b.pose.position[k]) - 0.5 * b.size[k];
    out += std::max(q, 0.0) * std::max(q, 0.0);
    in = std::max(in, q);
  }
  return std::sqrt(out) + std::min(in, 0.0);
}
inline double boxSdf(const ShapeSpec& b, const cl_float4& p) {
  const double q[3] = {double(p.s[0]), double(p.s[1]), double(p.s[2])};
  return boxSdf(b, q);
}

}  // namespace eddy::test
