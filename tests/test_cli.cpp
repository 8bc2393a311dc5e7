// eddy-cli as users and scripts call it: exit codes, messages, file headers.
#include "factory.hpp"
#include "test_util.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <sys/stat.h>
#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>

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
  // `help COMMAND` (and `--help COMMAND`) is that command's help.
  r = run(kCli, "help run");
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("usage: eddy-cli run"), std::string::npos) << r.out;
  r = run(kCli, "--help bench realtime");
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("usage: eddy-cli bench realtime"), std::string::npos) << r.out;
  // Words nobody reads are usage errors, not ignored.
  expectUsageError("--version extra", "--version takes no arguments, got 'extra'");
  expectUsageError("help bogus", "help: unknown command 'bogus' (commands: devices, run, bench, params)");
  expectUsageError("help run extra", "help run: unexpected 'extra'");
  expectUsageError("help bench bogus", "help bench: unexpected 'bogus' (known: ");
  expectUsageError("help bench realtime extra", "help: unexpected 'extra'");
  expectUsageError("-h run sph", "-h run: unexpected 'sph'");
  // -h right after the command, a benchmark's too (was: unknown option '-h').
  for (const char* kind : {"sph", "nbody", "realtime", "frame", "launch"}) {
    r = run(kCli, std::string("bench ") + kind + " -h");
    EXPECT_EQ(r.code, 0) << kind << ": " << r.err;
    EXPECT_NE(r.out.find(std::string("usage: eddy-cli bench ") + kind), std::string::npos) << r.out;
  }
  // A choice listed twice in a list flag.
  expectUsageError("bench realtime --solver wcsph,wcsph", "--solver: 'wcsph' is listed twice in 'wcsph,wcsph'");
  expectUsageError("bench sph --mode list,cells,list", "--mode: 'list' is listed twice");
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
  expectUsageError("run --device fast --n 8 --steps 1", "expected gpu, cpu or P:D");  // a usage error (issue 9)
}

TEST(Cli, BadValuesOfEveryKindAreUsageErrors) {
  // Missing values (at the end, or followed by another flag).
  for (const char* flag : {"--sim", "--scene", "--n", "--steps", "--until", "--device", "--set",
                           "--ic", "--diag", "--diag-every", "--out", "--export",
                           "--export-every", "--save", "--load", "--config", "--check-every"}) {
    expectUsageError(std::string("run ") + flag, std::string(flag) + " needs a value");
    expectUsageError(std::string("run ") + flag + " --quiet", std::string(flag) + " needs a value");
  }
  // Non-numbers, NaN/inf, negative, zero and absurd counts.
  expectUsageError("run --n abc", "--n: 'abc' is not a whole number");
  expectUsageError("run --n 1.5", "--n: '1.5' is not a whole number");
  // Blanks around a count are read as around a real number (both accepted:
  // --until ' 0.01' was, --n ' 5' was not); inside, they are not.
  EXPECT_EQ(run(kCli, "run --device cpu --quiet --n ' 5' --steps '1 '").code, 0);
  expectUsageError("run --n '5 0'", "--n: '5 0' is not a whole number");
  expectUsageError("run --n -3", "--n");
  expectUsageError("run --n 1e6", "--n: '1e6' is not a whole number");
  // All digits but beyond 64 bits: a whole number out of range (not "not a whole number").
  expectUsageError("run --n 99999999999999999999999", "--n: 99999999999999999999999 is out of range [1, ");
  expectUsageError("run --steps 99999999999999999999", "--steps: 99999999999999999999 is out of range [0, ");
  expectUsageError("run --n 2147483648", "--n: 2147483648 is out of range [1, 2147483647]");
  expectUsageError("run --steps 2000000000000", "--steps: 2000000000000 is out of range");
  expectUsageError("run --until nan", "--until: 'nan' is not a finite number");
  expectUsageError("run --until -inf", "--until");
  expectUsageError("run --until -1", "--until: -1 is out of range");
  expectUsageError("run --until 1e13", "--until: 1e13 is out of range");
  expectUsageError("run --set dt=inf", "not a finite number");
  expectUsageError("run --set dt=1e-400", "'1e-400' is not a finite number a double can hold");
  expectUsageError("run --sim sph --scene lobovsky_dam_break --set spacing=1",
                   "the column height = 0.3 m rounds to no particle layer");
  expectUsageError("run --set dt=1e-9", "out of range: allowed [1e-06, 1]");
  expectUsageError("run --set softening=-1", "out of range");
  expectUsageError("run --set seed=1.5", "must be a whole number");
  expectUsageError("run --set =3", "--set expects key=value");
  expectUsageError("run --diag-every 0 --diag x.csv", "--diag-every: 0 is out of range");
  expectUsageError("run --export-every 0 --export d", "--export-every: 0 is out of range");
  expectUsageError("run --export-every 5", "--export-every needs --export DIR");
  expectUsageError("run --diag-every 5", "--diag-every needs --diag FILE");
  expectUsageError("run --check-every x", "--check-every: 'x' is not a whole number");
  expectUsageError("run --load a.snap --n 5", "--load restores the simulation");
  expectUsageError("run --load a.snap --scene plummer", "--load restores the simulation");
  expectUsageError("run -n 5", "unknown option '-n'");
  expectUsageError("run --N 5", "unknown option '--N'");
  expectUsageError("run 5", "unknown option '5'");
  // Every benchmark checks --device as run does (bench sph and launch took
  // '' for the default device, 'foo' failed with exit 1), and bench frame its
  // --scene and --color (an unknown scene was exit 1, '' the default).
  for (const char* bench : {"sph", "launch", "nbody", "realtime", "frame"}) {
    expectUsageError(std::string("bench ") + bench + " --device ''", "--device '': the device is empty");
    expectUsageError(std::string("bench ") + bench + " --device foo", "--device 'foo': expected gpu, cpu or P:D");
  }
  expectUsageError("bench frame --scene dam_break", "--scene 'dam_break': unknown nbody scene; known: plummer");
  expectUsageError("bench frame --sim sph --scene ''", "--scene '': unknown sph scene; known: dam_break");
  expectUsageError("bench frame --color ''", "--color '': the field is empty");
  expectUsageError("bench frame --sim sph --set depth=0.01 --set spacing=0.04",
                   "depth = 0.01 m rounds to no particle layer");
  // An empty --ic ran the default scene with exit 0 (as --load '' it is refused).
  expectUsageError("run --ic '' --steps 1", "--ic '': the path is empty");
  // Counts past 2^31 - 1 are refused up front (were accepted, then exit 1 at run time).
  expectUsageError("bench nbody --n 2147483648", "--n: 2147483648 is out of range [1, 2147483647]");
  expectUsageError("bench frame --n 2147483648", "--n: 2147483648 is out of range [1, 2147483647]");
  // --cl-options may not redefine the macros --bpi, --wg, ... set (the
  // kernel's layout would not match the launch's).
  expectUsageError("bench nbody --n 64 --cl-options -DNBODY_BPI=8", "NBODY_BPI is eddy's own");
  expectUsageError("bench nbody --n 64 --cl-options '-cl-fast-relaxed-math -D EDDY_NATIVE_RSQRT'",
                   "EDDY_NATIVE_RSQRT is eddy's own");
}

TEST(Cli, ErrorsNeverPassControlCharactersToTheTerminal) {
  // An escape sequence in an input that an error quotes (here a file name)
  // reaches stderr as text, not as a command to the terminal.
  const auto e = run(kCli, "run --load \"$(printf 'a\\033[2Jb.snap')\"");
  EXPECT_EQ(e.code, 1) << e.err;
  EXPECT_EQ(e.err.find('\x1b'), std::string::npos) << e.err;
  EXPECT_NE(e.err.find("\\x1b[2J"), std::string::npos) << e.err;
}

TEST(Cli, MalformedInitialConditionsAreRejected) {
  const std::string dir = eddy::test::tempDir();
  eddy::test::writeFile(dir + "/bad.csv", "x,y,z,vx,vy,vz,m\n0,0,0,0,0,0,1\n1,2,oops,0,0,0,1\n");
  expectUsageError("run --ic " + dir + "/bad.csv --steps 1 --device cpu", "bad.csv:3: column 'z'", 1);
  expectUsageError("run --ic " + dir + "/missing.csv --steps 1 --device cpu", "missing.csv: cannot open", 1);
  expectUsageError("run --ic " + dir + " --steps 1 --device cpu", ": is a folder, not an initial-conditions file", 1);
  expectUsageError("run --ic " + dir + "/bad.csv --n 5", "--ic replaces the scene");
  // A line without an end: refused at the length limit, not read into memory whole.
  eddy::test::writeFile(dir + "/long.csv", "x,y,z,vx,vy,vz,m\n" + std::string(1 << 20, '1'));
  expectUsageError("run --ic " + dir + "/long.csv --steps 1 --device cpu",
                   "long.csv:2: line longer than 4096 characters", 1);
  eddy::test::writeFile(dir + "/bin.csv", std::string("\0\x01\xff\n", 4));
  expectUsageError("run --ic " + dir + "/bin.csv --steps 1 --device cpu", "bin.csv:1: expected the header", 1);
}

TEST(Cli, MalformedSnapshotsAreRejected) {
  const std::string dir = eddy::test::tempDir();
  eddy::test::writeFile(dir + "/text.snap", "x,y,z\n");
  expectUsageError("run --load " + dir + "/text.snap --device cpu", "text.snap: not a valid eddy snapshot: wrong magic", 1);
  eddy::test::writeFile(dir + "/short.snap", "EDDYSNAP");
  expectUsageError("run --load " + dir + "/short.snap --device cpu", "truncated", 1);
  expectUsageError("run --load " + dir + "/none.snap --device cpu", "none.snap: cannot open snapshot", 1);
  expectUsageError("run --load " + dir + " --device cpu", "not a regular file", 1);
  expectUsageError("run --load /dev/null --device cpu", "/dev/null: not a regular file", 1);
}

// A FIFO is no snapshot (nor a mesh): refused at once. Opening one for
// reading waits for a writer, and eddy-cli catches SIGTERM, so this hung
// for good. (`timeout -s KILL` only ends a regression: exit 137.)
TEST(Cli, AFifoIsRefusedAsSnapshotOrMeshInsteadOfHanging) {
  const std::string dir = eddy::test::tempDir();
  const std::string fifo = dir + "/cli.fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const std::string cli = "timeout -s KILL 120 " + kCli;
  auto r = run(cli, "run --device cpu --load " + fifo + " --steps 1");
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_NE(r.err.find(fifo + ": not a regular file"), std::string::npos) << r.err;
  r = run(cli, "run --device cpu --sim sph --set spacing=0.01 --set depth=0.04 --steps 1 --obstacle mesh:file=" +
                   fifo + ":scale=0.03:pos=0.2,0.05,0.02");
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_NE(r.err.find(fifo + ": cannot read mesh: not a regular file"), std::string::npos) << r.err;
}

TEST(Cli, SaveLoadContinuesBitIdentically) {
  const std::string dir = eddy::test::tempDir();
  const std::string common = " --device cpu --quiet --set dt=0.002 --set softening=0.03";
  auto r = run(kCli, "run --scene galaxies --n 101 --steps 30 --save " + dir + "/h.snap" + common);
  ASSERT_EQ(r.code, 0) << r.err;
  r = run(kCli, "run --load " + dir + "/h.snap --steps 20 --out " + dir + "/resumed.csv --save " +
                    dir + "/end.snap --json --device cpu --quiet");
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["steps"], 20);  // this run's steps
  EXPECT_EQ(j["step"], 50);   // the absolute step
  EXPECT_EQ(j["n"], 101);
  EXPECT_EQ(j["scene"], "galaxies");
  EXPECT_EQ(j["params"]["dt"], 0.002);
  r = run(kCli, "run --scene galaxies --n 101 --steps 50 --out " + dir + "/straight.csv" + common);
  ASSERT_EQ(r.code, 0) << r.err;
  const std::string a = eddy::test::slurp(dir + "/resumed.csv"), b = eddy::test::slurp(dir + "/straight.csv");
  EXPECT_EQ(std::count(a.begin(), a.end(), '\n'), 102);
  EXPECT_EQ(a, b);
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
  // Ranges exactly, as the messages give them (was [0, 4.29497e+09]).
  EXPECT_NE(r.out.find("range [0, 4294967295] (integer)"), std::string::npos) << r.out;
}

// --json: the same lists for scripts. Every declared parameter, with its
// default, range and choices as the declaration has them; every device with
// run's "device" keys.
TEST(Cli, DevicesAndParamsGiveJson) {
  const auto d = run(kCli, "devices --json");
  ASSERT_EQ(d.code, 0) << d.err;
  const auto dj = nlohmann::json::parse(d.out);
  ASSERT_FALSE(dj["devices"].empty());
  const auto& dev = dj["devices"][0];
  EXPECT_EQ(dev["index"], "0:0");
  for (const char* key : {"platform", "name", "type", "driver", "compute_units", "global_mem_bytes",
                          "gl_sharing", "max_work_group", "fp64"})
    EXPECT_TRUE(dev.contains(key)) << key;
  for (const std::string sim : {"nbody", "sph"}) {
    const auto r = run(kCli, "params --json --sim " + sim);
    ASSERT_EQ(r.code, 0) << r.err;
    const auto j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j["sim"], sim);
    const auto& decl = eddy::paramDecl(sim);
    ASSERT_EQ(j["params"].size(), decl.size());
    for (size_t i = 0; i < decl.size(); ++i) {
      const auto& p = j["params"][i];
      const eddy::ParamDesc& want = decl[i];
      SCOPED_TRACE(want.name);
      EXPECT_EQ(p["name"], want.name);
      EXPECT_EQ(p["rebuild"], want.rebuild);
      if (want.isEnum()) {
        EXPECT_EQ(p["type"], "choice");
        EXPECT_EQ(p["choices"].get<std::vector<std::string>>(), want.choices);
        EXPECT_EQ(p["default"], want.valueText(want.def));
      } else if (want.isBool()) {
        EXPECT_EQ(p["default"], want.def != 0);
      } else {
        EXPECT_EQ(p["type"], want.integer ? "int" : "float");
        EXPECT_EQ(p["unit"], want.unit);
        EXPECT_EQ(p["default"].get<double>(), want.def);
        EXPECT_EQ(p["min"].get<double>(), want.min);
        EXPECT_EQ(p["max"].get<double>(), want.max);
      }
    }
  }
  expectUsageError("params --json --sim bogus", "--sim 'bogus': unknown simulation");
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
  // SPH times one step in profile_every (32): 2 frames time none, and the
  // device time is unknown, not 0 ms.
  r = run(kCli, "bench frame --sim sph --set spacing=0.01 --frames 2 --json");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(nlohmann::json::parse(r.out)["simulate_ms_per_frame"].is_null()) << r.out;
  r = run(kCli, "bench frame --sim sph --set spacing=0.01 --frames 2");
  EXPECT_NE(r.out.find("simulate not timed (no step of the 2 was: one step in 32 is"), std::string::npos) << r.out;
  r = run(kCli, "bench frame --sim sph --set spacing=0.01 --set profile_every=1 --frames 2 --json");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_GT(nlohmann::json::parse(r.out)["simulate_ms_per_frame"].get<double>(), 0.0) << r.out;
}

// bench sph: a neighbour list too short (--cap) skips neighbours: the row is
// flagged as no valid measurement (it ran faster than the whole step), and
// the JSON has the N asked for beside the N measured.
TEST(Cli, BenchSphFlagsARowWhoseListOverflowed) {
  auto r = run(kCli, "bench sph --steps 2 --n 1000 --cap 1 --mode list,cells --json");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.err.find("neighbours did not fit the list (1 entries a particle; --cap): this row's time is of a "
                       "step that skipped them, not a valid measurement"),
            std::string::npos) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["sph"].size(), 2u);
  for (const auto& row : j["sph"]) {
    EXPECT_EQ(row["n_requested"], 1000);
    EXPECT_EQ(row["valid"], row["list_overflow"] == 0) << row;
  }
  EXPECT_FALSE(j["sph"][0]["valid"].get<bool>());  // list
  EXPECT_TRUE(j["sph"][1]["valid"].get<bool>());   // cells: no list
}

// bench nbody: flags that would do nothing are said so or refused; the tree's
// JSON has what its text line says; the one configuration of --devices that
// does not build is exit 2, as every configuration skipped without it.
TEST(Cli, BenchNBodyFlagsThatDoNothingAndTheTreeJson) {
  auto r = run(kCli, "bench nbody --n 64 --steps 1 --theta 0.5");
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.err.find("note: --theta is for --method tree or auto; the direct sum ignores it"), std::string::npos)
      << r.err;
  expectUsageError("bench nbody --n 64 --steps 1 --devices 0:0 --shares 1,1",
                   "--shares: 2 values for 1 device (--devices 0:0)");
  expectUsageError("bench nbody --n 64 --steps 1 --devices 0:0 --wg 3",
                   "bench nbody --devices 0:0: the configuration does not build: N-body: work-group size 3");
  r = run(kCli, "bench nbody --n 700 --steps 1 --method tree --theta 0.6 --json");
  ASSERT_EQ(r.code, 0) << r.err;
  const auto row = nlohmann::json::parse(r.out)["nbody"][0];
  EXPECT_EQ(row["method"], "tree");
  EXPECT_DOUBLE_EQ(row["theta"].get<double>(), 0.6);
  EXPECT_GT(row["tree_stack"].get<double>(), 0.0);
  EXPECT_GT(row["tree_groups"].get<double>(), 0.0);
  EXPECT_GE(row["tree_fallbacks"].get<double>(), 0.0);
  EXPECT_FALSE(row["phases_ms_per_step"].empty());
  r = run(kCli, "bench nbody --n 700 --steps 1 --method tree");
  EXPECT_NE(r.err.find("nodes summed body by body (stack full): "), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("(stack full): 0:"), std::string::npos) << r.err;
}

// bench launch: the host's cost of a launch with and without profiling
// events (why SPH samples them); every case runs and reports its times.
TEST(Cli, BenchLaunchReportsEveryCase) {
  auto r = run(kCli, "bench launch --n 37 --launches 24 --json");
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["n"], 37);
  EXPECT_EQ(j["launches"], 24);
  ASSERT_EQ(j["launch"].size(), 7u);
  for (const auto& c : j["launch"]) {
    EXPECT_GT(c["host_us_per_launch"].get<double>(), 0.0) << c["case"];
    EXPECT_GE(c["wall_us_per_launch"].get<double>(), c["host_us_per_launch"].get<double>());
    // Timed cases measured a device time; untimed ones have none.
    if (c["profile_every"].get<int>() > 0) EXPECT_GT(c["device_us_per_launch"].get<double>(), 0.0);
    else EXPECT_TRUE(c["device_us_per_launch"].is_null()) << c;  // not measured (was 0)
  }
  r = run(kCli, "bench launch --launches 0");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("--launches"), std::string::npos) << r.err;
}

// Issue 11: bench frame --realtime measures the app's paced mode and reports
// the real-time factor it reaches (no figure is asserted: only that the
// numbers agree with each other and that pacing never runs ahead of the speed).
TEST(Cli, BenchFrameRealtimeReportsTheFactorReached) {
  auto r = run(kCli, "bench frame --realtime --sim nbody --n 200 --frames 20 --speed 0.5 --json");
  ASSERT_EQ(r.code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["realtime"], true);
  EXPECT_EQ(j["frames"], 20);
  EXPECT_EQ(j["speed"], 0.5);
  EXPECT_EQ(j["fps"], 60.0);
  EXPECT_EQ(j["sim"], "nbody");
  EXPECT_TRUE(j["solver"].is_null()) << j.dump();  // N-body has no solver choice (was "")
  for (const char* k : {"realtime_factor", "simulated_s", "wall_s", "steps", "steps_per_frame",
                        "limited_frames", "budget_ms", "simulate_ms_per_frame", "wall_ms_per_frame"})
    EXPECT_TRUE(j.contains(k)) << k;
  const double sim = j["simulated_s"], wall = j["wall_s"], factor = j["realtime_factor"];
  const double paced = j["paced_wall_s"];
  const uint64_t steps = j["steps"];
  EXPECT_GT(steps, 0u);
  EXPECT_NEAR(sim, double(steps) * 1e-3, 1e-9) << "N-body: steps x dt";
  // The factor: over the wall time the frames' plans covered, which leaves
  // out at most the closing frame's finish within a frame period.
  EXPECT_NEAR(factor, sim / paced, 1e-9 * factor);
  EXPECT_LE(paced, wall);
  EXPECT_GE(paced, wall - 1.0 / 60 - 0.05);
  EXPECT_NEAR(j["steps_per_frame"].get<double>(), double(steps) / 20, 1e-12);
  EXPECT_LE(j["limited_frames"].get<uint64_t>(), 20u);
  // Paced: at most what the wall clock asked for at this speed (plus one
  // capped frame of 0.1 s carried in from the warm-up, and a step).
  EXPECT_LE(sim, 0.5 * (wall + 0.1) + 1e-3);
  // Without --sim: the app's default scene and solver.
  if (run(kCli, "params --sim sph").code == 0) {
    r = run(kCli, "bench frame --realtime --frames 3 --set spacing=0.008 --set depth=0.016 --json");
    ASSERT_EQ(r.code, 0) << r.err;
    j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j["sim"], "sph");
    EXPECT_EQ(j["solver"], "dfsph");
    r = run(kCli, "bench frame --realtime --frames 3 --set spacing=0.008 --set depth=0.016");
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_NE(r.out.find("sph (dfsph)"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("x real time"), std::string::npos) << r.out;
  }
  r = run(kCli, "bench frame --sim nbody --speed 2");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("need --realtime"), std::string::npos) << r.err;
  r = run(kCli, "bench frame --realtime --substeps 2");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("not both"), std::string::npos) << r.err;
  r = run(kCli, "bench frame --realtime --speed 20");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("--speed"), std::string::npos) << r.err;
  // A frame period of 1e5 s would never end; 1e-300 would measure nothing.
  for (const char* fps : {"1e-5", "0.5", "1e-300"}) {
    r = run(kCli, std::string("bench frame --realtime --sim nbody --n 64 --frames 1 --fps ") + fps);
    EXPECT_EQ(r.code, 2) << fps;
    EXPECT_NE(r.err.find("--fps"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("from 1 to 1000"), std::string::npos) << r.err;
  }
}

TEST(Cli, HeadlessBinaryLinksNoGraphicsLibrary) {
  // eddy-cli must run on a GPU server with nothing but an OpenCL driver.
  const auto r = run("ldd", kCli);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("libOpenCL"), std::string::npos) << r.out;
  for (const char* lib : {"libGL", "libglfw", "libX11", "libEGL", "libimgui"})
    EXPECT_EQ(r.out.find(lib), std::string::npos) << lib << " in\n" << r.out;
}

// Issue 10 (CLI11): `--flag=value` is the same as `--flag value`, for every
// kind of value (count, real, text, repeatable, list).
TEST(Cli, FlagEqualsValueFormMatchesTheSpacedForm) {
  const std::string dir = eddy::test::tempDir();
  const std::string common = " --device cpu --quiet --sim nbody --scene galaxies";
  auto a = run(kCli, "run" + common + " --n 73 --steps 12 --set dt=0.002 --set softening=0.05 "
                     "--diag " + dir + "/eq-a.csv --diag-every 4 --out " + dir + "/eq-a-out.csv");
  ASSERT_EQ(a.code, 0) << a.err;
  auto b = run(kCli, "run" + common + " --n=73 --steps=12 --set=dt=0.002 --set=softening=0.05 "
                     "--diag=" + dir + "/eq-b.csv --diag-every=4 --out=" + dir + "/eq-b-out.csv");
  ASSERT_EQ(b.code, 0) << b.err;
  EXPECT_EQ(eddy::test::slurp(dir + "/eq-a.csv"), eddy::test::slurp(dir + "/eq-b.csv"));
  EXPECT_EQ(eddy::test::slurp(dir + "/eq-a-out.csv"), eddy::test::slurp(dir + "/eq-b-out.csv"));
  const auto u1 = run(kCli, "run --device cpu --n 16 --until 0.0101 --set dt=0.002 --json --quiet");
  const auto u2 = run(kCli, "run --device=cpu --n=16 --until=0.0101 --set=dt=0.002 --json --quiet");
  ASSERT_EQ(u1.code, 0) << u1.err;
  ASSERT_EQ(u2.code, 0) << u2.err;
  const auto j1 = nlohmann::json::parse(u1.out), j2 = nlohmann::json::parse(u2.out);
  EXPECT_EQ(j1["steps"], j2["steps"]);
  EXPECT_EQ(j1["time"], j2["time"]);
  EXPECT_EQ(j1["params"], j2["params"]);
  // The checks and their messages are the same in both forms.
  expectUsageError("run --n=0", "--n: 0 is out of range [1, 2147483647]");
  expectUsageError("run --steps=abc", "--steps: 'abc' is not a whole number");
  expectUsageError("run --until=-1", "--until: -1 is out of range");
  expectUsageError("run --n=", "--n needs a value");
  expectUsageError("run --set=dt", "--set expects key=value");
  expectUsageError("bench nbody --wg=3,,5", "--wg: empty list item in '3,,5'");
  expectUsageError("bench sph --n ,64", "--n: empty list item in ',64'");  // as '64,'
  // A whole number outside the range says so (not "is not a whole number").
  expectUsageError("bench realtime --n 0", "--n: 0 is out of range [1, ");
  expectUsageError("bench nbody --wg=0", "--wg: 0 is out of range [1, 4096]");
  expectUsageError("bench nbody --wg=3,5,", "--wg: empty list item in '3,5,'");
  expectUsageError("bench sph --mode=cells,rows", "--mode: 'rows' is not cells or list");
  expectUsageError("bench realtime --solver=sesph", "--solver: 'sesph' is not one of");
  expectUsageError("bench frame --frames=0", "--frames: 0 is out of range [1, 1000000]");
  // --n for SPH (the app's default in --realtime) is a usage error, as in run (before: exit 1).
  expectUsageError("bench frame --realtime --n 64", "--n is not used by --sim sph");
  expectUsageError("run --device=fast", "--device 'fast': expected gpu, cpu or P:D");
}

// The first bad argument, left to right, is the one reported; a switch takes
// no value; "--" and "++" mean nothing special; a flag's value never starts
// with "--", but may with "-".
TEST(Cli, FirstBadArgumentIsReportedAndSpecialTokensAreUnknownOptions) {
  expectUsageError("run --steps abc --n 0", "--steps: 'abc' is not a whole number");
  expectUsageError("run --n 0 --steps abc", "--n: 0 is out of range");
  expectUsageError("run --bogus --n 0", "run: unknown option '--bogus'");
  expectUsageError("run --n 0 --bogus", "--n: 0 is out of range");
  expectUsageError("run --n --steps 5", "--n needs a value");
  expectUsageError("run --set --json", "--set needs a value");
  expectUsageError("run --steps -5", "--steps: '-5' is not a whole number");
  expectUsageError("run --json=x", "run: unknown option '--json=x'");
  expectUsageError("run --quiet=no", "run: unknown option '--quiet=no'");
  expectUsageError("run --", "run: unknown option '--'");
  expectUsageError("run -- --steps 5", "run: unknown option '--'");
  expectUsageError("run ++ --steps 5", "run: unknown option '++'");
  expectUsageError("run -xyz", "run: unknown option '-xyz'");
  expectUsageError("run --steps 5 -h", "run: unknown option '-h'");  // -h only right after the command
  expectUsageError("run bench", "run: unknown option 'bench'");
  expectUsageError("devices --bogus", "devices: unknown option '--bogus'");
  expectUsageError("params --sim", "--sim needs a value");
  expectUsageError("bench", "bench: which benchmark? 'bench nbody', 'bench sph', 'bench realtime', 'bench frame' or 'bench launch'");
  expectUsageError("bench foo", "bench: unknown benchmark 'foo' (known: nbody, sph, realtime, frame, launch)");
  expectUsageError("bench --json nbody", "bench: unknown benchmark '--json'");
  expectUsageError("bench foo nbody --wg x", "bench: unknown benchmark 'foo'");
  expectUsageError("bench nbody sph", "bench: unknown option 'sph'");
  expectUsageError("bench sph --wg 64", "bench sph: unknown option '--wg'");
  expectUsageError("bench frame --approx-divsqrt", "bench frame: unknown option '--approx-divsqrt'");
  expectUsageError("--json run", "unknown command '--json' (commands: devices, run, bench, params)");
  expectUsageError("--", "unknown command '--'");
}

// The help is made from the registered options: every command and every
// flag is listed; `bench KIND --help` shows that benchmark.
TEST(Cli, HelpListsEveryCommandAndFlag) {
  const auto top = run(kCli, "--help");
  ASSERT_EQ(top.code, 0);
  for (const char* s : {"devices", "run [options]", "bench nbody [options]", "bench sph [options]",
                        "bench realtime [options]", "bench frame [options]",
                        "bench launch [options]", "params [options]", "bench launch options:",
                        "--version", "run options:", "bench nbody options:", "bench sph options:",
                        "bench realtime options:", "bench frame options:", "params options:",
                        "--check-every K", "--overwrite", "--wg LIST", "--approx-divsqrt",
                        "--solver LIST", "--substeps K", "--color FIELD|none", "--sim NAME"})
    EXPECT_NE(top.out.find(s), std::string::npos) << s << "\n" << top.out;
  const auto none = run(kCli, "");
  EXPECT_EQ(none.code, 2);
  EXPECT_EQ(none.err, top.out);
  const auto nb = run(kCli, "bench nbody --help");
  EXPECT_EQ(nb.code, 0) << nb.err;
  EXPECT_NE(nb.out.find("usage: eddy-cli bench nbody [options]"), std::string::npos) << nb.out;
  EXPECT_NE(nb.out.find("--tree-stack N"), std::string::npos) << nb.out;
  EXPECT_EQ(nb.out.find("--mode"), std::string::npos) << nb.out;
  const auto rt = run(kCli, "bench realtime --n 5 --help");
  EXPECT_EQ(rt.code, 0) << rt.err;
  EXPECT_NE(rt.out.find("--until S"), std::string::npos) << rt.out;
  const auto params = run(kCli, "params --help");
  EXPECT_NE(params.out.find("--sim NAME"), std::string::npos) << params.out;
  EXPECT_NE(params.out.find("--help"), std::string::npos) << params.out;
}

// Results that cannot be written are not a success: JSON to a full disk, and
// a diagnostics stream whose reader closed the pipe (no silent SIGPIPE death;
// the run stops there instead of running on with its rows lost).
TEST(Cli, OutputToAFullDiskOrAClosedPipeIsAnError) {
  const std::string dir = eddy::test::tempDir();
  int status = std::system((kCli + " params --sim sph >/dev/full 2>" + dir + "/full.err").c_str());
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 1) << status;
  std::string err = eddy::test::slurp(dir + "/full.err");
  EXPECT_NE(err.find("writing the standard output failed"), std::string::npos) << err;
  status = std::system((kCli + eddy::test::onTestDevice(" run --device cpu --n 64 --steps 2 --json") +
                        " >/dev/full 2>" + dir + "/full2.err").c_str());
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 1) << status;
  err = eddy::test::slurp(dir + "/full2.err");
  EXPECT_NE(err.find("writing the standard output failed"), std::string::npos) << err;
  const std::string script = dir + "/pipe.sh";
  {
    std::ofstream s(script);
    s << kCli << eddy::test::onTestDevice(" run --device cpu --n 64 --steps 100000 --diag /dev/stdout --diag-every 1")
      << " 2>" << dir
      << "/pipe.err | head -c 10 >/dev/null\necho ${PIPESTATUS[0]} >" << dir << "/pipe.code\n";
  }
  ASSERT_EQ(std::system(("bash " + script).c_str()), 0);
  EXPECT_EQ(eddy::test::slurp(dir + "/pipe.code"), "1\n");
  err = eddy::test::slurp(dir + "/pipe.err");
  // Stopped at the failed write (not after the 100 000 steps), the flag named.
  EXPECT_NE(err.find("--diag /dev/stdout: write failed at step"), std::string::npos) << err;
  EXPECT_NE(err.find("Broken pipe"), std::string::npos) << err;
}

// N-body input the forces cannot be computed for, in float, is refused
// naming the problem: a body whose own term m / eps^3 overflows (its force
// was NaN: "blew up at step 0"), and a G below float's normal range (1e-50
// was 0 there: a run without gravity).
TEST(Cli, NBodyForcesBeyondFloatAreRefused) {
  const std::string dir = eddy::test::tempDir();
  eddy::test::writeFile(dir + "/heavy.csv", "x,y,z,vx,vy,vz,m\n0,0,0,0,0,0,4e26\n");
  auto r = run(kCli, "run --device cpu --quiet --ic " + dir + "/heavy.csv --steps 1 --set softening=1e-4");
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_NE(r.err.find("the forces leave single precision's range"), std::string::npos) << r.err;
  r = run(kCli, "run --device cpu --quiet --ic " + dir + "/heavy.csv --steps 1 --set softening=1");
  EXPECT_EQ(r.code, 0) << r.err;
  expectUsageError("run --device cpu --n 16 --steps 1 --set G=1e-50", "G = 1e-50 is below single precision's normal range");
  r = run(kCli, "run --device cpu --quiet --n 16 --steps 1 --set G=0");
  EXPECT_EQ(r.code, 0) << r.err;
}

// A --load with another G or softening: the first diagnostics row and the
// energy drift are those of the new values (the first row had the old G,
// and a correct run warned of a 201 % energy change).
TEST(Cli, NBodyLoadWithAnotherGMeasuresTheEnergyWithIt) {
  const std::string dir = eddy::test::tempDir();
  auto r = run(kCli, "run --device cpu --quiet --scene plummer --n 256 --steps 0 --save " + dir + "/g1.snap");
  ASSERT_EQ(r.code, 0) << r.err;
  double pot[2] = {0, 0};
  for (int k = 0; k < 2; ++k) {
    const std::string diag = dir + "/g" + std::to_string(k) + ".csv";
    r = run(kCli, "run --device cpu --quiet --json --load " + dir + "/g1.snap --steps 2 --diag " + diag +
                      " --diag-every 1" + (k ? " --set G=2" : ""));
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_EQ(r.err.find("energy changed"), std::string::npos) << r.err;
    const std::string csv = eddy::test::slurp(diag);
    const std::string row = csv.substr(csv.find('\n') + 1);  // step 0
    double step, time, kin;
    ASSERT_EQ(std::sscanf(row.c_str(), "%lf,%lf,%lf,%lf", &step, &time, &kin, &pot[k]), 4) << csv;
  }
  EXPECT_NEAR(pot[1], 2 * pot[0], 1e-6 * std::fabs(pot[0])) << "the step-0 potential at G = 2";
}

// A config's "ic" is an input, taken from the config file's folder as a
// mesh path is (it was taken from the working folder: "cannot open").
TEST(Cli, ConfigIcIsRelativeToTheConfigFolder) {
  const std::string dir = eddy::test::tempDir() + "/cfg-ic";
  std::filesystem::create_directories(dir);
  eddy::test::writeFile(dir + "/two.csv", "x,y,z,vx,vy,vz,m\n-0.5,0,0,0,-0.5,0,0.5\n0.5,0,0,0,0.5,0,0.5\n");
  eddy::test::writeFile(dir + "/c.json", R"({"sim": "nbody", "ic": "two.csv", "steps": 3})");
  const auto r = run(kCli, "run --device cpu --quiet --json --config " + dir + "/c.json");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out)["n"], 2);
}

