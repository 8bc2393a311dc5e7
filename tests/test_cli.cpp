// eddy-cli as users and scripts call it: exit codes, messages, file headers.
#include "test_util.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

using eddy::test::run;

namespace {

const std::string kCli = EDDY_CLI;

void expectUsageError(const std::string& args, const std::string& needle, int code = 2) {
  const auto r = run(kCli, args);
  EXPECT_EQ(r.code, code) << args << "\n" << r.err;
  EXPECT_NE(r.err.find(needle), std::string::npos) << args << "\nstderr: " << r.err;
  EXPECT_EQ(r.err.find("terminate called"), std::string::npos) << r.err;
}

}  // namespace

TEST(Cli, HelpAndVersion) {
  auto r = run(kCli, "--help");
  EXPECT_EQ(r.code, 0);
  EXPECT_NE(r.out.find("usage: eddy-cli"), std::string::npos);
  r = run(kCli, "--version");
  EXPECT_EQ(r.code, 0);
  EXPECT_NE(r.out.find("eddy "), std::string::npos);
  r = run(kCli, "");
  EXPECT_EQ(r.code, 2);
}

TEST(Cli, DevicesListsPoCL) {
  const auto r = run(kCli, "devices");
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("0:0"), std::string::npos);
  EXPECT_NE(r.out.find("compute units"), std::string::npos);
}

TEST(Cli, BadArgumentsGiveClearErrors) {
  expectUsageError("frobnicate", "unknown command 'frobnicate'");
  expectUsageError("run --steps abc", "--steps: 'abc' is not a whole number");
  expectUsageError("run --steps -5", "--steps");
  expectUsageError("run --n 0", "--n: 0 is out of range");
  expectUsageError("run --n", "--n needs a value");
  expectUsageError("run --bogus", "unknown option '--bogus'");
  expectUsageError("run --sim fluidz", "--sim 'fluidz': unknown simulation");
  expectUsageError("run --scene nope", "--scene 'nope': unknown nbody scene");
  expectUsageError("run --set nosuch=1", "unknown parameter 'nosuch'");
  expectUsageError("run --set dt=5", "'dt' = 5 is out of range: allowed [1e-06, 1]");
  expectUsageError("run --set dt=nan", "not a finite number");
  expectUsageError("run --set dt", "--set expects key=value");
  expectUsageError("run --steps 10 --until 1", "either --steps or --until");
  expectUsageError("run --until inf", "--until");
  expectUsageError("bench nbody --n 10,,20", "--n");
  expectUsageError("run --device 9:9 --n 8 --steps 1", "no such platform:device", 1);
  expectUsageError("run --device fast --n 8 --steps 1", "expected gpu, cpu or P:D", 1);
}

TEST(Cli, MalformedInitialConditionsAreRejected) {
  const std::string dir = eddy::test::tempDir();
  eddy::test::writeFile(dir + "/bad.csv", "x,y,z,vx,vy,vz,m\n0,0,0,0,0,0,1\n1,2,oops,0,0,0,1\n");
  expectUsageError("run --ic " + dir + "/bad.csv --steps 1 --device cpu", "bad.csv:3: column 'z'", 1);
  expectUsageError("run --ic " + dir + "/missing.csv --steps 1 --device cpu", "missing.csv: cannot open", 1);
  expectUsageError("run --ic " + dir + "/bad.csv --n 5", "--ic replaces the scene");
}

TEST(Cli, RunWritesDiagnosticsStateAndJson) {
  const std::string dir = eddy::test::tempDir();
  const auto r = run(kCli, "run --device cpu --sim nbody --scene plummer --n 97 --steps 25 "
                           "--set dt=0.002 --set softening=0.05 --diag " + dir + "/d.csv --diag-every 10 --out " +
                           dir + "/o.csv --json --quiet");
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["n"], 97);
  EXPECT_EQ(j["steps"], 25);
  EXPECT_NEAR(j["time"].get<double>(), 0.05, 1e-12);
  EXPECT_EQ(j["params"]["dt"], 0.002);
  EXPECT_FALSE(j["profile"].empty());
  const std::string diag = eddy::test::slurp(dir + "/d.csv");
  EXPECT_EQ(diag.substr(0, diag.find('\n')), "step,time,kinetic,potential,total,px,py,pz,lx,ly,lz");
  // rows at steps 0, 10, 20 and the final 25
  EXPECT_EQ(std::count(diag.begin(), diag.end(), '\n'), 5);
  const std::string out = eddy::test::slurp(dir + "/o.csv");
  EXPECT_EQ(out.substr(0, out.find('\n')), "x,y,z,vx,vy,vz,m");
  EXPECT_EQ(std::count(out.begin(), out.end(), '\n'), 98);

  // The final state is a valid --ic file: continue from it.
  const auto r2 = run(kCli, "run --device cpu --ic " + dir + "/o.csv --steps 3 --quiet");
  EXPECT_EQ(r2.code, 0) << r2.err;
  EXPECT_NE(r2.out.find("N = 97"), std::string::npos) << r2.out;
}

TEST(Cli, ParamsListsEveryDeclaredParameter) {
  const auto r = run(kCli, "params --sim nbody");
  EXPECT_EQ(r.code, 0);
  for (const char* key : {"dt", "G", "softening", "seed"})
    EXPECT_NE(r.out.find(key), std::string::npos) << key;
}

TEST(Cli, NoOpenClPlatformNamesThePackageToInstall) {
  const std::string empty = eddy::test::tempDir() + "/no-icd";
  std::system(("mkdir -p " + empty).c_str());
  for (const char* args : {"devices", "run --n 8 --steps 1"}) {
    const auto r = run("OCL_ICD_VENDORS=" + empty + " " + kCli, args);
    EXPECT_EQ(r.code, 1) << args;
    EXPECT_NE(r.err.find("no OpenCL platform found"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("pocl-opencl-icd"), std::string::npos) << r.err;
  }
}

TEST(Cli, BenchFrameMeasuresTheAppsPerFrameWork) {
  auto r = run(kCli, "bench frame --sim nbody --n 300 --frames 4 --substeps 2 --json");
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["n"], 300);
  EXPECT_EQ(j["frames"], 4);
  EXPECT_EQ(j["color_field"], "speed");
  EXPECT_GT(j["simulate_ms_per_frame"].get<double>(), 0.0);
  EXPECT_GT(j["transfer_ms_per_frame"].get<double>(), 0.0);
  // Every measured frame: 2 steps of drift + gravity, one colour kernel, two copies.
  for (const auto& p : j["profile"])
    if (p["phase"] == "drift") {
      EXPECT_EQ(p["launches"], 8);
    }
  for (const auto& p : j["frame_profile"]) EXPECT_EQ(p["launches"], 4) << p["phase"];
  r = run(kCli, "bench frame --sim nbody --n 100 --frames 2 --color none --json");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out)["frame_profile"].size(), 1u) << "positions only";
  r = run(kCli, "bench frame --sim nbody --n 100 --color density");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("density"), std::string::npos);
  r = run(kCli, "bench frame --frames 0");
  EXPECT_EQ(r.code, 2);
}

TEST(Cli, HeadlessBinaryLinksNoGraphicsLibrary) {
  // eddy-cli must run on a GPU server with nothing but an OpenCL driver.
  const auto r = run("ldd", kCli);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("libOpenCL"), std::string::npos) << r.out;
  for (const char* lib : {"libGL", "libglfw", "libX11", "libEGL", "libimgui"})
    EXPECT_EQ(r.out.find(lib), std::string::npos) << lib << " in\n" << r.out;
}
