// Config files: the reader (every kind of bad input names file, key and
// range), save/load round trip, and --config in eddy-cli with flag overrides.
#include "config.hpp"
#include "nbody.hpp"
#include "test_util.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>

using namespace eddy;

namespace {

const std::string kCli = EDDY_CLI;

std::string errorOf(const std::string& text) {
  try {
    parseConfig(text, "run.json");
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

#define EXPECT_CONFIG_ERROR(text, needle)                                      \
  do {                                                                         \
    const std::string e_ = errorOf(text);                                      \
    EXPECT_NE(e_.find("run.json"), std::string::npos) << (text) << " -> " << e_; \
    EXPECT_NE(e_.find(needle), std::string::npos) << (text) << " -> " << e_;   \
  } while (0)

}  // namespace

TEST(Config, ReadsEveryKey) {
  const auto c = parseConfig(R"({"eddy_config": 1, "sim": "nbody", "scene": "galaxies",
      "n": 4096, "steps": 200, "device": "cpu", "check_every": 0,
      "diag": "d.csv", "diag_every": 5, "out": "o.csv", "export": "frames",
      "export_every": 20, "save": "s.snap",
      "params": {"dt": 0.002, "softening": 0.05, "G": 2, "seed": 7}})",
                             "run.json");
  EXPECT_EQ(*c.sim, "nbody");
  EXPECT_EQ(*c.scene, "galaxies");
  EXPECT_EQ(*c.n, 4096u);
  EXPECT_EQ(*c.steps, 200u);
  EXPECT_FALSE(c.until);
  EXPECT_EQ(*c.checkEvery, 0u);
  EXPECT_EQ(*c.exportDir, "frames");
  EXPECT_EQ(*c.exportEvery, 20u);
  EXPECT_EQ(*c.save, "s.snap");
  ASSERT_EQ(c.params.size(), 4u);
  Params p(nbodyParamDecl());
  for (const auto& [k, v] : c.params) p.set(k, v);
  EXPECT_EQ(p.get("dt"), 0.002);
  EXPECT_EQ(p.get("seed"), 7);
  // A whole number written as 4096.0 is a count too.
  EXPECT_EQ(*parseConfig(R"({"n": 4096.0, "until": 1.5})", "x").n, 4096u);
}

TEST(Config, BadInputNamesFileKeyAndRange) {
  EXPECT_CONFIG_ERROR("", "not valid JSON");
  EXPECT_CONFIG_ERROR("{\"n\": 10,}", "not valid JSON");
  EXPECT_CONFIG_ERROR("{\"n\": 10", "not valid JSON");
  EXPECT_CONFIG_ERROR("[1, 2]", "expected a JSON object");
  EXPECT_CONFIG_ERROR(R"({"particles": 10})", "unknown key 'particles'");
  EXPECT_CONFIG_ERROR(R"({"bodies": 10})", "key 'bodies': expected an array");
  EXPECT_CONFIG_ERROR(R"({"bodies": [{"shape": "box", "size": 0.1}]})", "bodies[0]: key 'density'");
  EXPECT_CONFIG_ERROR(R"({"dt": 0.1})", "parameters go inside \"params\"");
  EXPECT_CONFIG_ERROR(R"({"sim": "plasma"})", "key 'sim': unknown simulation 'plasma'");
  EXPECT_CONFIG_ERROR(R"({"sim": 3})", "key 'sim': expected a string, got an integer");
  EXPECT_CONFIG_ERROR(R"({"scene": "cube"})", "key 'scene': unknown nbody scene 'cube'");
  // A NUL in a string is shown, and the message goes on past it (what() is a
  // C string: it once ended at the NUL, without the scenes' list).
  // NUL in any string is refused: a path cut there would name another file
  // ("notes.txt\u0000.snap" wrote over notes.txt).
  EXPECT_CONFIG_ERROR(R"({"scene": "cu\u0000be"})",
                      "key 'scene': the string cu\\x00be holds a NUL character (\\u0000)");
  EXPECT_CONFIG_ERROR(R"({"save": "notes.txt\u0000.snap"})", "key 'save': the string notes.txt\\x00.snap holds a NUL");
  EXPECT_CONFIG_ERROR(R"({"probes": ["level:a:0.1,0.1", {"kind": "level", "name": "A\u0000B"}]})",
                      "key 'probes[1].name': the string A\\x00B holds a NUL");
  // Counts: wrong types, zero, negative, fractional, absurd.
  EXPECT_CONFIG_ERROR(R"({"n": "many"})", "key 'n': expected a whole number in [1, 2147483647], got a string");
  EXPECT_CONFIG_ERROR(R"({"n": true})", "got a boolean");
  EXPECT_CONFIG_ERROR(R"({"n": null})", "got null");
  EXPECT_CONFIG_ERROR(R"({"n": 0})", "key 'n': 0 is out of range [1, 2147483647]");
  EXPECT_CONFIG_ERROR(R"({"n": -5})", "key 'n': -5 is out of range [1, 2147483647]");
  EXPECT_CONFIG_ERROR(R"({"n": 2.5})", "key 'n': expected a whole number");
  EXPECT_CONFIG_ERROR(R"({"n": 1e15})", "key 'n': 1e+15 is out of range");
  EXPECT_CONFIG_ERROR(R"({"n": 99999999999999999999999})", "key 'n'");
  EXPECT_CONFIG_ERROR(R"({"steps": -1})", "key 'steps': -1 is out of range [0, 1099511627776]");
  EXPECT_CONFIG_ERROR(R"({"diag_every": 0})", "key 'diag_every': 0 is out of range [1,");
  EXPECT_CONFIG_ERROR(R"({"until": 1e999})", "not valid JSON: number overflow parsing '1e999'");
  EXPECT_CONFIG_ERROR(R"({"until": -1})", "key 'until': -1 is out of range [0, 1e+12]");
  EXPECT_CONFIG_ERROR(R"({"until": NaN})", "not valid JSON");
  EXPECT_CONFIG_ERROR(R"({"steps": 5, "until": 1})", "either \"steps\" or \"until\"");
  EXPECT_CONFIG_ERROR(R"({"ic": "a.csv", "n": 5})", "\"ic\" replaces the scene");
  EXPECT_CONFIG_ERROR(R"({"ic": ""})", "key 'ic': must not be empty");
  EXPECT_CONFIG_ERROR(R"({"eddy_config": 2})", "key 'eddy_config': 2 is out of range [1, 1]");
  // Parameters: from the registry, with its ranges.
  EXPECT_CONFIG_ERROR(R"({"params": [1]})", "key 'params': expected an object");
  EXPECT_CONFIG_ERROR(R"({"params": {"viscosity": 1}})",
                      "key 'params.viscosity': unknown nbody parameter; known parameters: dt, G, softening, seed, energy_warning, method, theta");
  EXPECT_CONFIG_ERROR(R"({"params": {"dt": 5}})",
                      "key 'params.dt': parameter 'dt' = 5 is out of range: allowed [1e-06, 1] model time");
  EXPECT_CONFIG_ERROR(R"({"params": {"dt": "0.1"}})", "key 'params.dt': expected a number, got a string");
  EXPECT_CONFIG_ERROR(R"({"params": {"seed": 1.5}})", "must be a whole number");
  EXPECT_CONFIG_ERROR(R"({"params": {"softening": -1e400}})", "number overflow");
  // Deep nesting is refused before parsing.
  EXPECT_CONFIG_ERROR(std::string(100000, '[') + std::string(100000, ']'), "nested deeper than 16");
}

TEST(Config, SaveAndLoadRoundTrip) {
  RunConfig c;
  c.sim = "nbody";
  c.scene = "collapse";
  c.n = 777;
  c.until = 0.25;
  c.params = {{"dt", 1.0 / 3.0}, {"softening", 0.0123456789012345}};
  const std::string path = test::tempDir() + "/saved.json";
  saveConfig(path, c);
  const RunConfig r = loadConfig(path);
  EXPECT_EQ(*r.scene, "collapse");
  EXPECT_EQ(*r.n, 777u);
  EXPECT_EQ(*r.until, 0.25);
  ASSERT_EQ(r.params.size(), 2u);
  for (const auto& [k, v] : r.params)
    EXPECT_EQ(v, k == "dt" ? 1.0 / 3.0 : 0.0123456789012345) << k;  // exact doubles
  try {
    loadConfig(test::tempDir() + "/none.json");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("none.json: cannot open config file"), std::string::npos);
  }
}

TEST(Config, CliUsesTheFileAndFlagsOverrideIt) {
  const std::string dir = test::tempDir();
  test::writeFile(dir + "/run.json", R"({"sim": "nbody", "scene": "collapse", "n": 40,
      "steps": 12, "params": {"dt": 0.004, "softening": 0.05}})");
  auto r = test::run(kCli, "run --device cpu --config " + dir + "/run.json --json --quiet");
  ASSERT_EQ(r.code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["n"], 40);
  EXPECT_EQ(j["steps"], 12);
  EXPECT_EQ(j["scene"], "collapse");
  EXPECT_EQ(j["params"]["dt"], 0.004);
  // Flags win over the file, whatever their order.
  r = test::run(kCli, "run --device cpu --n 30 --set dt=0.001 --config " + dir +
                          "/run.json --steps 3 --json --quiet");
  ASSERT_EQ(r.code, 0) << r.err;
  j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["n"], 30);
  EXPECT_EQ(j["steps"], 3);
  EXPECT_EQ(j["params"]["dt"], 0.001);
  EXPECT_EQ(j["params"]["softening"], 0.05);  // from the file
  EXPECT_EQ(j["scene"], "collapse");
  // --until on the command line replaces the file's "steps".
  r = test::run(kCli, "run --device cpu --config " + dir + "/run.json --until 0.02 --json --quiet");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out)["steps"], 5);
  // --ic on the command line replaces the file's scene and n.
  test::writeFile(dir + "/two.csv", "x,y,z,vx,vy,vz,m\n0,0,0,0,0,0,1\n1,0,0,0,1,0,1\n");
  r = test::run(kCli, "run --device cpu --config " + dir + "/run.json --ic " + dir + "/two.csv --json --quiet");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out)["n"], 2);
}

TEST(Config, CliRejectsBadConfigsWithExitCode2) {
  const std::string dir = test::tempDir();
  test::writeFile(dir + "/bad.json", R"({"n": 0})");
  auto r = test::run(kCli, "run --config " + dir + "/bad.json");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("bad.json: key 'n': 0 is out of range [1, 2147483647]"), std::string::npos) << r.err;
  test::writeFile(dir + "/typo.json", R"({"params": {"dtt": 0.1}})");
  r = test::run(kCli, "run --config " + dir + "/typo.json");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("typo.json: key 'params.dtt': unknown nbody parameter"), std::string::npos) << r.err;
  r = test::run(kCli, "run --config " + dir + "/absent.json");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("absent.json: cannot open config file"), std::string::npos) << r.err;
  r = test::run(kCli, "run --config");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("--config needs a value"), std::string::npos) << r.err;
}

// A relative mesh path in a config file is relative to the file's folder and
// is stored absolute, whatever the working directory: a config given as a
// relative path (--config sub/c.json) used to leave "sub/m.stl", which a
// snapshot of the run kept and a --load from another folder could not find.
TEST(Config, RelativeMeshPathsBecomeAbsoluteFromTheConfigsFolder) {
  const std::string text = R"({"sim": "sph", "scene": "dam_break",
    "obstacles": [{"shape": "mesh", "file": "m.stl", "position": [0.1, 0.05, 0.004]}],
    "bodies": [{"shape": "mesh", "file": "../b.stl", "position": [0.3, 0.15, 0.004], "density": 500}]})";
  const RunConfig c = parseConfig(text, "sub/c.json");
  ASSERT_EQ(c.obstacles.size(), 1u);
  ASSERT_EQ(c.bodies.size(), 1u);
  const auto cwd = std::filesystem::current_path();
  EXPECT_EQ(c.obstacles[0].file, (cwd / "sub" / "m.stl").lexically_normal().string());
  EXPECT_EQ(c.bodies[0].shape.file, (cwd / "b.stl").lexically_normal().string());
  // An absolute config path and an absolute mesh path as they are.
  const RunConfig d = parseConfig(R"({"sim": "sph", "obstacles": [{"shape": "mesh", "file": "/m/x.stl"}]})",
                                  "/cases/c.json");
  EXPECT_EQ(d.obstacles[0].file, "/m/x.stl");
  const RunConfig e = parseConfig(R"({"sim": "sph", "obstacles": [{"shape": "mesh", "file": "x.stl"}]})",
                                  "/cases/c.json");
  EXPECT_EQ(e.obstacles[0].file, "/cases/x.stl");
}
