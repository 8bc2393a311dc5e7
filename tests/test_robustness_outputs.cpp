// Outputs that never destroy (issue 9, part A): special files written in
// place, output paths checked before the first step, two outputs on one path,
// SIGINT/SIGTERM during a run, a blow-up never ending in exit 0 or in a
// snapshot --load would refuse, every output recording the time of its own
// step, exports into a non-empty folder, and JSON integers.
#include "factory.hpp"
#include "io.hpp"
#include "nbody.hpp"
#include "test_util.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <csignal>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <sys/stat.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

using namespace eddy;
namespace fs = std::filesystem;

namespace {

const std::string kCli = EDDY_CLI;

bool contains(const std::string& hay, const std::string& needle) {
  return hay.find(needle) != std::string::npos;
}

// A fresh folder of its own for each test.
std::string freshDir(const std::string& name) {
  const std::string d = test::tempDir() + "/" + name;
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

// Every file under `dir` whose name has ".tmp." in it (eddy's temporaries).
std::vector<std::string> temporaries(const std::string& dir, bool recursive = true) {
  std::vector<std::string> out;
  auto look = [&](const fs::path& p) {
    if (contains(p.filename().string(), ".tmp.")) out.push_back(p.string());
  };
  if (recursive)
    for (const auto& e : fs::recursive_directory_iterator(dir)) look(e.path());
  else
    for (const auto& e : fs::directory_iterator(dir)) look(e.path());
  return out;
}

bool isCharDevice(const std::string& path) {
  struct stat st{};
  return ::stat(path.c_str(), &st) == 0 && S_ISCHR(st.st_mode);
}

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream ss(text);
  std::string l;
  while (std::getline(ss, l)) out.push_back(l);
  return out;
}

std::vector<double> cells(const std::string& line) {
  std::vector<double> out;
  std::stringstream ss(line);
  std::string c;
  while (std::getline(ss, c, ',')) out.push_back(std::stod(c));
  return out;
}

// Every value of the attribute NAME="..." in the text, in order. (No
// std::regex: GCC 12's -Wmaybe-uninitialized misfires on it in the
// sanitizer build, which treats warnings as errors.)
std::vector<std::string> attributeValues(const std::string& text, const std::string& name) {
  std::vector<std::string> out;
  const std::string key = name + "=\"";
  for (size_t at = text.find(key); at != std::string::npos; at = text.find(key, at)) {
    at += key.size();
    const size_t end = text.find('"', at);
    if (end == std::string::npos) break;
    out.push_back(text.substr(at, end - at));
    at = end + 1;
  }
  return out;
}

// The timestep="..." values of eddy.pvd, in order.
std::vector<double> pvdTimes(const std::string& pvd) {
  std::vector<double> out;
  for (const auto& v : attributeValues(test::slurp(pvd), "timestep")) out.push_back(std::stod(v));
  return out;
}

std::vector<std::string> pvdFiles(const std::string& pvd) {
  return attributeValues(test::slurp(pvd), "file");
}

// A real eddy-cli process (fork + exec), stdout and stderr into files.
struct Child {
  pid_t pid = -1;
  std::string outPath, errPath;
};

Child spawn(const std::vector<std::string>& args, const std::string& base) {
  Child c;
  c.outPath = base + ".out";
  c.errPath = base + ".err";
  c.pid = ::fork();
  if (c.pid == 0) {
    const int o = ::open(c.outPath.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int e = ::open(c.errPath.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (o < 0 || e < 0) ::_exit(126);
    ::dup2(o, 1);
    ::dup2(e, 2);
    std::vector<char*> argv;
    argv.push_back(const_cast<char*>(kCli.c_str()));
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    ::execv(kCli.c_str(), argv.data());
    ::_exit(127);
  }
  return c;
}

// Waits (bounded, not timed) until `ready()` holds or the child exits.
bool waitUntil(const Child& c, const std::function<bool()>& ready) {
  for (int i = 0; i < 6000; ++i) {  // at most ~10 minutes
    if (ready()) return true;
    int status = 0;
    if (::waitpid(c.pid, &status, WNOHANG) == c.pid) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return false;
}

int waitExit(const Child& c) {
  int status = 0;
  if (::waitpid(c.pid, &status, 0) != c.pid) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

// Sends `sig` to a long run once it is writing frames, and checks what is left.
void interruptRun(int sig, const std::string& name, const std::vector<std::string>& simArgs,
                  size_t diagColumns) {
  const std::string dir = freshDir(name);
  test::writeFile(dir + "/o.csv", "an earlier good file\n");
  std::vector<std::string> args = {"run", "--device", "cpu", "--steps", "100000000",
                                   "--diag", dir + "/d.csv", "--diag-every", "3",
                                   "--export", dir + "/exp", "--export-every", "10",
                                   "--out", dir + "/o.csv", "--save", dir + "/s.snap"};
  args.insert(args.end(), simArgs.begin(), simArgs.end());
  const Child c = spawn(args, dir + "/child");
  ASSERT_GT(c.pid, 0);
  const std::string pvd = dir + "/exp/eddy.pvd";
  const bool running = waitUntil(c, [&] { return pvdFiles(pvd).size() >= 3; });
  if (!running) ::kill(c.pid, SIGKILL);
  ASSERT_TRUE(running) << test::slurp(c.errPath);
  ASSERT_EQ(::kill(c.pid, sig), 0);
  const int code = waitExit(c);
  const std::string err = test::slurp(c.errPath);
  EXPECT_EQ(code, 128 + sig) << err;
  EXPECT_TRUE(contains(err, std::string(sig == SIGINT ? "SIGINT" : "SIGTERM") + " received: stopped at step"))
      << err;
  EXPECT_TRUE(contains(err, "wrote " + dir + "/d.csv")) << err;
  EXPECT_TRUE(contains(err, "wrote " + pvd)) << err;
  EXPECT_TRUE(contains(err, "not written: --out")) << err;
  // No temporaries; the earlier good file intact; no snapshot of an unfinished run.
  EXPECT_TRUE(temporaries(dir).empty()) << temporaries(dir)[0];
  EXPECT_EQ(test::slurp(dir + "/o.csv"), "an earlier good file\n");
  EXPECT_FALSE(fs::exists(dir + "/s.snap"));
  // The diagnostics: a header and complete rows every 3 steps, in order.
  const auto d = lines(test::slurp(dir + "/d.csv"));
  ASSERT_GE(d.size(), 3u);
  EXPECT_EQ(d[0].rfind("step,time,", 0), 0u) << d[0];
  double lastStep = -1;
  for (size_t i = 1; i < d.size(); ++i) {
    const auto row = cells(d[i]);
    ASSERT_EQ(row.size(), diagColumns) << "row " << i << ": " << d[i];
    EXPECT_EQ(std::fmod(row[0], 3.0), 0.0) << d[i];
    EXPECT_GT(row[0], lastStep);
    lastStep = row[0];
  }
  // Every frame eddy.pvd lists is there, at least the three seen before the signal.
  const auto files = pvdFiles(pvd);
  EXPECT_GE(files.size(), 3u);
  for (const auto& f : files) EXPECT_TRUE(fs::exists(dir + "/exp/" + f)) << f;
}

}  // namespace

// ---- 1. special files ------------------------------------------------------

TEST(SpecialFiles, DevNullStaysADeviceForEveryOutput) {
  ASSERT_TRUE(isCharDevice("/dev/null"));
  const auto r = test::run(kCli, "run --device cpu --n 64 --steps 5 --quiet --out /dev/null "
                                 "--diag /dev/null --save /dev/null");
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(isCharDevice("/dev/null")) << "/dev/null was replaced";
  EXPECT_TRUE(temporaries("/dev", false).empty());
}

TEST(SpecialFiles, AFifoIsWrittenInPlace) {
  const std::string dir = freshDir("fifo");
  const std::string fifo = dir + "/pipe";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  std::string got;
  std::thread reader([&] { got = test::slurp(fifo); });
  {
    AtomicFile f(fifo);
    EXPECT_TRUE(f.inPlace());
    f.stream() << "a,b\n1,2\n";
    f.commit();
  }
  reader.join();
  EXPECT_EQ(got, "a,b\n1,2\n");
  struct stat st{};
  ASSERT_EQ(::stat(fifo.c_str(), &st), 0);
  EXPECT_TRUE(S_ISFIFO(st.st_mode)) << "the FIFO was replaced by a regular file";
  EXPECT_TRUE(temporaries(dir).empty());
  // A regular file is still replaced atomically.
  AtomicFile g(dir + "/plain.csv");
  EXPECT_FALSE(g.inPlace());
}

// ---- 2. output paths checked before the first step --------------------------

TEST(OutputPaths, BadPathsAreRefusedBeforeTheRunNamingTheReason) {
  const std::string dir = freshDir("badpaths");
  fs::create_directories(dir + "/folder");
  test::writeFile(dir + "/file", "x\n");
  test::writeFile(dir + "/good.csv", "an earlier good file\n");
  const std::string base = "run --device cpu --n 64 --steps 5 ";
  struct Case {
    std::string flag, path, reason;
  };
  const std::vector<Case> cases = {
      {"--out", dir + "/missing/o.csv", "No such file or directory"},
      {"--out", dir + "/folder", "Is a directory"},
      {"--out", "''", "the path is empty"},
      {"--out", dir + "/file/o.csv", "Not a directory"},
      {"--diag", dir + "/missing/d.csv", "No such file or directory"},
      {"--diag", dir + "/folder", "Is a directory"},
      {"--save", dir + "/folder", "Is a directory"},
      {"--save", "''", "the path is empty"},
      {"--export", dir + "/file", "Not a directory"},
      {"--export", dir + "/file/sub", "Not a directory"},
      {"--export", "''", "the path is empty"},
  };
  for (const auto& c : cases) {
    // A good output next to the bad path: nothing may be written before the check.
    const auto r = test::run(kCli, base + c.flag + " " + c.path +
                                       (c.flag == "--out" ? " --diag " : " --out ") + dir + "/never.csv");
    EXPECT_EQ(r.code, 2) << c.flag << " " << c.path << "\n" << r.err;
    EXPECT_TRUE(contains(r.err, c.flag + " '")) << r.err;
    EXPECT_TRUE(contains(r.err, c.reason)) << c.flag << " " << c.path << "\n" << r.err;
    EXPECT_FALSE(contains(r.err, "eddy: device")) << "the check must come before the device";
    EXPECT_FALSE(fs::exists(dir + "/never.csv"));
  }
  // A folder that cannot be made although the permission bits allow it
  // (/proc, also for root): refused at the check, naming the flag (before:
  // exit 1 at the first frame, "cannot create the export folder").
  if (fs::is_directory("/proc/self")) {
    const auto p = test::run(kCli, base + "--export /proc/eddy-export");
    EXPECT_EQ(p.code, 2) << p.err;
    EXPECT_TRUE(contains(p.err, "--export '/proc/eddy-export': cannot write to this folder")) << p.err;
  }
  // The earlier good file is intact after a refused run.
  const auto r = test::run(kCli, base + "--out " + dir + "/good.csv --diag " + dir + "/folder");
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_EQ(test::slurp(dir + "/good.csv"), "an earlier good file\n");
  EXPECT_TRUE(fs::is_directory(dir + "/folder"));
  EXPECT_TRUE(temporaries(dir).empty());
}

// ---- 3. SIGINT / SIGTERM -----------------------------------------------------

TEST(Signals, SigintStopsAtAStepBoundaryAndFinishesEveryFile) {
  interruptRun(SIGINT, "sigint", {"--sim", "nbody", "--n", "256", "--quiet"}, 11);
}

TEST(Signals, SigtermStopsAnSphRunTheSameWay) {
  interruptRun(SIGTERM, "sigterm",
               {"--sim", "sph", "--set", "spacing=0.01", "--set", "depth=0.04", "--quiet"}, 18);
}

// A signal while the run is still being set up (here: reading --ic from a
// FIFO no one writes to; in use, sampling a large obstacle) ends it at once:
// before, it was only recorded for a step loop that had not started, and the
// setup ran on for minutes. Nothing of the run's output exists yet.
TEST(Signals, ASignalWhileSettingUpEndsTheRunAtOnceAndWritesNothing) {
  const std::string dir = freshDir("setup-signal");
  const std::string fifo = dir + "/ic.csv";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  test::writeFile(dir + "/o.csv", "an earlier good file\n");
  const Child c = spawn({"run", "--device", "cpu", "--ic", fifo, "--steps", "10", "--diag", dir + "/d.csv",
                         "--out", dir + "/o.csv"},
                        dir + "/child");
  ASSERT_GT(c.pid, 0);
  // The run has the FIFO open for reading (a non-blocking writer can open it
  // only then) and is blocked reading it, in its setup.
  int fd = -1;
  const bool reading = waitUntil(c, [&] { return (fd = ::open(fifo.c_str(), O_WRONLY | O_NONBLOCK)) >= 0; });
  if (!reading) ::kill(c.pid, SIGKILL);
  ASSERT_TRUE(reading) << test::slurp(c.errPath);
  ASSERT_EQ(::kill(c.pid, SIGTERM), 0);
  ::close(fd);  // end of file: a run that ignored the signal goes on (and fails on the empty --ic)
  const int code = waitExit(c);
  const std::string err = test::slurp(c.errPath);
  EXPECT_EQ(code, 128 + SIGTERM) << err;
  EXPECT_TRUE(contains(err, "SIGTERM received while setting up: stopped before the first step")) << err;
  EXPECT_FALSE(fs::exists(dir + "/d.csv"));
  EXPECT_EQ(test::slurp(dir + "/o.csv"), "an earlier good file\n");
  EXPECT_TRUE(temporaries(dir).empty());
}

// ---- 4. a blow-up with --check-every 0 --------------------------------------

TEST(BlowUp, CheckEveryZeroStillFailsAtTheEndAndSavesNothing) {
  const std::string dir = freshDir("nan");
  test::writeFile(dir + "/boom.csv",
                  "x,y,z,vx,vy,vz,m\n0,0,0,3e38,0,0,1\n5,0,0,0,0,0,1\n-5,0,0,0,0,0,1\n");
  test::writeFile(dir + "/o.csv", "an earlier good file\n");
  const auto r = test::run(kCli, "run --device cpu --ic " + dir + "/boom.csv --set dt=0.5 --steps 5 "
                                 "--check-every 0 --quiet --save " + dir + "/s.snap --out " + dir +
                                 "/o.csv --diag " + dir + "/d.csv");
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_TRUE(contains(r.err, "blew up: 3 of 3 particles")) << r.err;
  EXPECT_TRUE(contains(r.err, "at step 5")) << r.err;
  EXPECT_FALSE(fs::exists(dir + "/s.snap"));
  EXPECT_EQ(test::slurp(dir + "/o.csv"), "an earlier good file\n");
  EXPECT_TRUE(fs::exists(dir + "/d.csv"));  // what was recorded is kept
  EXPECT_TRUE(temporaries(dir).empty());
  // With a row every step, the message also names the first row that went
  // non-finite (the body reaches infinity in step 3), not only the end.
  const auto rows = test::run(kCli, "run --device cpu --ic " + dir + "/boom.csv --set dt=0.5 --steps 5 "
                                    "--check-every 0 --quiet --diag-every 1 --diag " + dir + "/d1.csv");
  EXPECT_EQ(rows.code, 1) << rows.err;
  EXPECT_TRUE(contains(rows.err, "at step 5 (t = 2.5); the diagnostics rows hold non-finite values from step 3 on"))
      << rows.err;
  const auto d1 = lines(test::slurp(dir + "/d1.csv"));
  ASSERT_GE(d1.size(), 5u);
  EXPECT_FALSE(contains(d1[3], "nan")) << d1[3];  // step 2
  EXPECT_TRUE(contains(d1[4], "nan")) << d1[4];   // step 3
}

TEST(BlowUp, NoSnapshotOfANonFiniteState) {
  const std::string dir = freshDir("nansnap");
  std::vector<Body> b = {Body{0, 0, 0, 3e38, 0, 0, 1}, Body{5, 0, 0, 0, 0, 0, 1},
                         Body{-5, 0, 0, 0, 0, 0, 1}};
  Params params(nbodyParamDecl());
  params.set("dt", 0.5);
  NBodySim sim(test::context(), params, b);
  for (int i = 0; i < 4; ++i) sim.step();
  SceneSpec spec;
  try {
    saveSnapshot(sim, spec, dir + "/bad.snap");
    FAIL() << "a non-finite state was saved";
  } catch (const Error& e) {
    EXPECT_TRUE(contains(e.what(), "snapshot not saved")) << e.what();
    EXPECT_TRUE(contains(e.what(), "non-finite")) << e.what();
  }
  EXPECT_FALSE(fs::exists(dir + "/bad.snap"));
  EXPECT_TRUE(temporaries(dir).empty());
}

// ---- 8. two outputs on one path ------------------------------------------------

TEST(OutputPaths, TwoOutputsOnOnePathAreAUsageError) {
  const std::string dir = freshDir("same");
  fs::create_directories(dir + "/sub");
  fs::create_symlink(dir + "/same.csv", dir + "/link.csv");  // to a file that does not exist yet
  const std::string base = "run --device cpu --n 64 --steps 5 --quiet ";
  struct Case {
    std::string args, a, b;
  };
  const std::vector<Case> cases = {
      {"--diag " + dir + "/same.csv --out " + dir + "/same.csv", "--diag", "--out"},
      {"--out " + dir + "/sub/../same.csv --save " + dir + "/same.csv", "--out", "--save"},
      {"--diag " + dir + "/link.csv --save " + dir + "/same.csv", "--diag", "--save"},
      {"--out " + dir + "/exp/eddy.pvd --export " + dir + "/exp", "--out", "--export"},
      {"--save " + dir + "/exp/step_000000005.vtp --export " + dir + "/exp", "--save", "--export"},
  };
  for (const auto& c : cases) {
    const auto r = test::run(kCli, base + c.args);
    EXPECT_EQ(r.code, 2) << c.args << "\n" << r.err;
    EXPECT_TRUE(contains(r.err, c.a + " '") && contains(r.err, c.b + " '")) << r.err;
    EXPECT_TRUE(contains(r.err, "name the same file")) << r.err;
  }
  EXPECT_FALSE(fs::exists(dir + "/same.csv"));
  EXPECT_FALSE(fs::exists(dir + "/exp"));
  // A sink may take several outputs; other files in the export folder are fine.
  auto r = test::run(kCli, base + "--diag /dev/null --out /dev/null");
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(isCharDevice("/dev/null"));
  r = test::run(kCli, base + "--out " + dir + "/exp2/final.csv --export " + dir + "/exp2");
  EXPECT_EQ(r.code, 0) << r.err;
}

// An output naming a file the run reads (the hostile sweep of session 27:
// `--ic a.csv --out a.csv` overwrote the initial conditions, exit 0).
TEST(OutputPaths, AnOutputOnAnInputIsAUsageErrorAndTheInputIsKept) {
  const std::string dir = freshDir("onInput");
  const std::string ic = dir + "/ic.csv", cfg = dir + "/run.json", snap = dir + "/s.snap";
  {
    std::ofstream f(ic);
    f << "x,y,z,vx,vy,vz,m\n0,0,0,0,0,0,1\n1,0,0,0,0.5,0,1\n-1,0,0,0,-0.5,0,1\n";
  }
  {
    std::ofstream f(cfg);
    f << R"({"sim": "nbody", "n": 64, "steps": 3})";
  }
  auto r = test::run(kCli, "run --device cpu --n 64 --steps 3 --quiet --save " + snap);
  ASSERT_EQ(r.code, 0) << r.err;
  const std::string mesh = dir + "/cube.stl";
  fs::copy_file(std::string(EDDY_TEST_DATA) + "/cube.stl", mesh, fs::copy_options::overwrite_existing);
  const std::string icText = test::slurp(ic), cfgText = test::slurp(cfg), snapText = test::slurp(snap),
                    meshText = test::slurp(mesh);
  const std::string sph = "run --device cpu --sim sph --set spacing=0.01 --set depth=0.04 --steps 3 --quiet ";
  fs::create_directories(dir + "/sub");
  // A snapshot whose obstacle is a mesh file: a restart reads that file
  // again (the hostile sweep of session 34: --load s.snap --save mesh
  // replaced it, exit 0, and neither snapshot could be loaded again).
  const std::string meshSnap = dir + "/mesh.snap";
  r = test::run(kCli, sph + "--obstacle mesh:file=" + mesh + ":scale=0.02:pos=0.1,0.01,0.02 --save " + meshSnap);
  ASSERT_EQ(r.code, 0) << r.err;
  const std::string fromSnap = "mesh (of --load " + meshSnap + ")";
  struct Case {
    std::string args, in, out;
  };
  const std::vector<Case> cases = {
      {"run --device cpu --steps 3 --quiet --ic " + ic + " --out " + ic, "--ic", "--out"},
      {"run --device cpu --steps 3 --quiet --ic " + ic + " --diag " + dir + "/sub/../ic.csv", "--ic", "--diag"},
      {"run --device cpu --quiet --config " + cfg + " --out " + cfg, "--config", "--out"},
      {"run --device cpu --steps 3 --quiet --load " + snap + " --save " + snap, "--load", "--save"},
      {"run --device cpu --steps 3 --quiet --load " + snap + " --out " + snap, "--load", "--out"},
      // an obstacle's or a body's mesh file
      {sph + "--obstacle mesh:file=" + mesh + ":scale=0.02:pos=0.1,0.01,0.05 --out " + mesh, "--obstacle mesh",
       "--out"},
      {sph + "--body mesh:file=" + mesh + ":scale=0.02:pos=0.1,0.05,0.05:density=500 --diag " + mesh,
       "--body mesh", "--diag"},
      // the mesh a loaded snapshot reads
      {"run --device cpu --steps 1 --quiet --load " + meshSnap + " --save " + mesh, fromSnap, "--save"},
      {"run --device cpu --steps 1 --quiet --load " + meshSnap + " --diag " + dir + "/sub/../cube.stl", fromSnap,
       "--diag"},
  };
  for (const auto& c : cases) {
    r = test::run(kCli, c.args);
    EXPECT_EQ(r.code, 2) << c.args << "\n" << r.err;
    EXPECT_TRUE(contains(r.err, c.out + " '") && contains(r.err, "the input " + c.in + " '")) << r.err;
  }
  EXPECT_EQ(test::slurp(ic), icText);
  EXPECT_EQ(test::slurp(cfg), cfgText);
  EXPECT_EQ(test::slurp(snap), snapText);
  EXPECT_EQ(test::slurp(mesh), meshText);
  r = test::run(kCli, "run --device cpu --steps 1 --quiet --load " + meshSnap);
  EXPECT_EQ(r.code, 0) << r.err;  // the snapshot still loads: its mesh is unchanged
  // The standard output itself, where --json writes its object (was: the
  // rows, then the object: invalid JSON, exit 0).
  for (const std::string flag : {"--diag", "--out"}) {
    r = test::run(kCli, "run --device cpu --n 50 --steps 2 --json --quiet " + flag + " /dev/stdout");
    EXPECT_EQ(r.code, 2) << r.err;
    EXPECT_TRUE(contains(r.err, flag + " '/dev/stdout' is the standard output, where --json")) << r.err;
  }
  // Without --json, the file stdout is redirected to, named as an output, would
  // be replaced at the end by that output: the summary printed into it lost
  // (was: exit 0, the summary gone). /dev/stdout is written through, beside it.
  {
    const std::string same = dir + "/same.txt";
    const std::string cmd = kCli + " " + test::onTestDevice("run --device cpu --n 50 --steps 2 --diag " + same) +
                            " >" + same + " 2>" + dir + "/same.err </dev/null";
    const int status = std::system(cmd.c_str());
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 2) << status;
    EXPECT_TRUE(contains(test::slurp(dir + "/same.err"),
                         "--diag '" + same + "' is the file the standard output is redirected to"))
        << test::slurp(dir + "/same.err");
    r = test::run(kCli, "run --device cpu --n 50 --steps 2 --diag-every 1 --diag /dev/stdout");
    EXPECT_EQ(r.code, 0) << r.err;
    EXPECT_TRUE(contains(r.out, "step,time") && contains(r.out, "diagnostics")) << r.out;
  }
  // Another file beside the input is fine.
  r = test::run(kCli, "run --device cpu --steps 3 --quiet --ic " + ic + " --out " + dir + "/final.csv");
  EXPECT_EQ(r.code, 0) << r.err;
}

// ---- 11. every output records the time of its own step ------------------------

TEST(OutputTimes, ExportFramesWithoutDiagCarryTheirOwnStepsTime) {
  const std::string dir = freshDir("times");
  const std::string common = "run --device cpu --sim sph --set spacing=0.01 --set depth=0.04 "
                             "--steps 300 --quiet ";
  auto r = test::run(kCli, common + "--export " + dir + "/exp --export-every 100 --json");
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  const auto times = pvdTimes(dir + "/exp/eddy.pvd");
  ASSERT_EQ(times.size(), 4u);
  for (size_t i = 1; i < times.size(); ++i) EXPECT_GT(times[i], times[i - 1]) << "frame " << i;
  // A separate run with --diag: its rows at steps 0, 100, 200, 300 give the times.
  r = test::run(kCli, common + "--diag " + dir + "/d.csv --diag-every 100");
  ASSERT_EQ(r.code, 0) << r.err;
  const auto d = lines(test::slurp(dir + "/d.csv"));
  ASSERT_EQ(d.size(), 5u);
  for (size_t i = 0; i < 4; ++i) {
    const auto row = cells(d[i + 1]);
    EXPECT_EQ(row[0], double(100 * i));
    EXPECT_DOUBLE_EQ(times[i], row[1]) << "step " << row[0];
  }
  EXPECT_DOUBLE_EQ(j["time"].get<double>(), cells(d[4])[1]) << "--json time";
}

// ---- 13. --load counts, export folders, JSON integers ---------------------------

TEST(OutputJson, AfterLoadStepsCountThisRunAndIntegersAreIntegers) {
  const std::string dir = freshDir("json");
  const std::string common = " --device cpu --quiet --set dt=0.002 --set softening=0.03";
  auto r = test::run(kCli, "run --scene galaxies --n 101 --steps 30 --save " + dir + "/h.snap" + common);
  ASSERT_EQ(r.code, 0) << r.err;
  r = test::run(kCli, "run --load " + dir + "/h.snap --steps 20 --json --device cpu --quiet");
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["steps"], 20);
  EXPECT_EQ(j["step"], 50);
  EXPECT_TRUE(j["step"].is_number_integer());
  EXPECT_TRUE(j["final"]["step"].is_number_integer()) << j["final"]["step"];
  EXPECT_EQ(j["final"]["step"], 50);
  EXPECT_EQ(j["initial"]["step"], 30);
  EXPECT_TRUE(j["params"]["seed"].is_number_integer()) << j["params"]["seed"];
  EXPECT_TRUE(j["params"]["dt"].is_number_float());
  EXPECT_TRUE(j["final"]["time"].is_number_float());
  EXPECT_FALSE(contains(r.out, "\"step\": 50.0")) << r.out;
  // The text summary: this run's steps, and the absolute ones.
  r = test::run(kCli, "run --load " + dir + "/h.snap --steps 20 --device cpu --quiet");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(contains(r.out, ", 20 steps (steps 30 to 50) to t = ")) << r.out;
}

TEST(ExportFolder, ANonEmptyFolderNeedsOverwrite) {
  const std::string dir = freshDir("exportagain");
  const std::string exp = dir + "/exp";
  const std::string base = "run --device cpu --n 64 --quiet --export " + exp + " --export-every 5 ";
  auto r = test::run(kCli, base + "--steps 20");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(pvdFiles(exp + "/eddy.pvd").size(), 5u);
  const std::string before = test::slurp(exp + "/eddy.pvd");
  // Again into the same folder: refused, naming the folder and --overwrite; nothing changed.
  r = test::run(kCli, base + "--steps 10");
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_TRUE(contains(r.err, "--export '" + exp + "': the folder is not empty")) << r.err;
  EXPECT_TRUE(contains(r.err, "--overwrite")) << r.err;
  EXPECT_EQ(test::slurp(exp + "/eddy.pvd"), before);
  EXPECT_TRUE(fs::exists(exp + "/step_000000020.vtp"));
  // With --overwrite: eddy's old frames go, a user's file stays.
  test::writeFile(exp + "/notes.txt", "mine\n");
  r = test::run(kCli, base + "--steps 10 --overwrite");
  ASSERT_EQ(r.code, 0) << r.err;
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(exp)) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names, (std::vector<std::string>{"eddy.pvd", "notes.txt", "step_000000000.vtp",
                                             "step_000000005.vtp", "step_000000010.vtp"}));
  EXPECT_EQ(test::slurp(exp + "/notes.txt"), "mine\n");
  EXPECT_EQ(pvdFiles(exp + "/eddy.pvd").size(), 3u);
  // A folder named as a frame this run would write: refused before anything
  // is removed or run (it failed after stepping, the old frames gone).
  fs::create_directory(exp + "/step_000000002.vtp");
  r = test::run(kCli, "run --device cpu --n 64 --quiet --export " + exp + " --export-every 2 --steps 4 --overwrite");
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_TRUE(contains(r.err, "step_000000002.vtp: a folder where the export folder keeps a file")) << r.err;
  EXPECT_TRUE(fs::exists(exp + "/step_000000010.vtp"));
  EXPECT_EQ(pvdFiles(exp + "/eddy.pvd").size(), 3u);
  // --overwrite alone is a usage error.
  r = test::run(kCli, "run --device cpu --n 64 --steps 1 --overwrite");
  EXPECT_EQ(r.code, 2);
  EXPECT_TRUE(contains(r.err, "--overwrite needs --export DIR")) << r.err;
}

// ---- fix-run: outputs through symbolic links and descriptors -----------------

TEST(OutputLinks, ASymbolicLinkIsWrittenThroughToItsTarget) {
  const std::string dir = freshDir("symlink");
  fs::create_directories(dir + "/real");
  test::writeFile(dir + "/real/target.csv", "old\n");
  fs::create_symlink("real/target.csv", dir + "/link.csv");  // relative, as ln -s makes it
  {
    AtomicFile f(dir + "/link.csv");
    EXPECT_FALSE(f.inPlace());  // still atomic: the temporary goes next to the target
    f.stream() << "a,b\n1,2\n";
    f.commit();
  }
  EXPECT_TRUE(fs::is_symlink(dir + "/link.csv")) << "the link was replaced by a regular file";
  EXPECT_EQ(test::slurp(dir + "/real/target.csv"), "a,b\n1,2\n");
  EXPECT_TRUE(temporaries(dir).empty());
  // The run's outputs too (a link to a file that does not exist yet as well).
  fs::create_symlink(dir + "/real/probes.csv", dir + "/plink.csv");
  fs::create_symlink(dir + "/real/diag.csv", dir + "/dlink.csv");
  const auto r = test::run(kCli, "run --device cpu --sim sph --scene dam_break --set spacing=0.02 "
                                 "--set depth=0.2 --set column_width=0.1 --set column_height=0.15 "
                                 "--steps 4 --quiet --probe pressure:P:0.05,0.02,0.1 --probe-every 2 "
                                 "--probe-out " + dir + "/plink.csv --diag " + dir + "/dlink.csv "
                                 "--diag-every 2 --out " + dir + "/link.csv");
  ASSERT_EQ(r.code, 0) << r.err;
  for (const auto* l : {"/plink.csv", "/dlink.csv", "/link.csv"})
    EXPECT_TRUE(fs::is_symlink(dir + l)) << l << " was replaced";
  EXPECT_EQ(test::slurp(dir + "/real/probes.csv").rfind("step,time,P", 0), 0u);
  EXPECT_EQ(test::slurp(dir + "/real/diag.csv").rfind("step,time,", 0), 0u);
  EXPECT_NE(test::slurp(dir + "/real/target.csv"), "a,b\n1,2\n");
  EXPECT_TRUE(temporaries(dir).empty());
}

// Replacing a file keeps its permission bits (before: the umask's, so a
// 0600 file of results became world-readable); a new file gets the umask's.
TEST(OutputLinks, AReplacedFileKeepsItsPermissions) {
  const std::string dir = freshDir("mode");
  for (const fs::perms mode : {fs::perms(0600), fs::perms(0640), fs::perms(0444), fs::perms(0755)}) {
    SCOPED_TRACE(int(mode));
    const std::string path = dir + "/kept.csv";
    test::writeFile(path, "old\n");
    fs::permissions(path, mode, fs::perm_options::replace);
    AtomicFile f(path);
    f.stream() << "new\n";
    f.commit();
    EXPECT_EQ(test::slurp(path), "new\n");
    EXPECT_EQ(fs::status(path).permissions() & fs::perms::all, mode);
    fs::permissions(path, fs::perms(0644), fs::perm_options::replace);
    fs::remove(path);
  }
  // A new file: what the umask allows of 0666.
  const mode_t mask = ::umask(0022);
  ::umask(mask);
  AtomicFile g(dir + "/new.csv");
  g.stream() << "x\n";
  g.commit();
  EXPECT_EQ(fs::status(dir + "/new.csv").permissions() & fs::perms::all, fs::perms(0666 & ~mask));
  // Through the command line as well.
  test::writeFile(dir + "/out.csv", "old\n");
  fs::permissions(dir + "/out.csv", fs::perms(0600), fs::perm_options::replace);
  const auto r = test::run(kCli, "run --device cpu --sim sph --scene dam_break --set spacing=0.02 --set depth=0.06 "
                                 "--steps 2 --quiet --out " + dir + "/out.csv");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(test::slurp(dir + "/out.csv"), "old\n");
  EXPECT_EQ(fs::status(dir + "/out.csv").permissions() & fs::perms::all, fs::perms(0600));
  EXPECT_TRUE(temporaries(dir).empty());
}

TEST(OutputLinks, ADescriptorPathIsWrittenThroughTheDescriptor) {
  // /proc/self/fd/N (what /dev/stdout links to) open on a regular file: the
  // rows go through that descriptor, at its offset, and nothing is renamed.
  const std::string dir = freshDir("fdpath");
  const std::string file = dir + "/log.txt";
  const int fd = ::open(file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::write(fd, "before\n", 7), 7);
  {
    AtomicFile f("/proc/self/fd/" + std::to_string(fd));
    EXPECT_TRUE(f.inPlace());
    f.stream() << "a,b\n1,2\n";
    f.commit();
  }
  ASSERT_EQ(::write(fd, "after\n", 6), 6);  // the shared offset: after the rows
  ::close(fd);
  EXPECT_EQ(test::slurp(file), "before\na,b\n1,2\nafter\n");
  EXPECT_TRUE(temporaries(dir).empty());
  // eddy-cli with its stdout on a file: --diag /proc/self/fd/1 puts the rows
  // there, before the summary, and both survive.
  const auto r = test::run(kCli, "run --device cpu --sim sph --scene dam_break --set spacing=0.02 "
                                 "--set depth=0.2 --set column_width=0.1 --set column_height=0.15 "
                                 "--steps 4 --diag-every 2 --quiet --diag /proc/self/fd/1");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out.rfind("step,time,", 0), 0u) << r.out;
  EXPECT_TRUE(contains(r.out, "eddy sph scene dam_break")) << r.out;
}

TEST(OutputLinks, ProcIsNotAMissingFolder) {
  const auto r = test::run(kCli, "run --device cpu --n 64 --steps 2 --quiet --diag /proc/x.csv");
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_TRUE(contains(r.err, "no new file can be created in '/proc'")) << r.err;
  EXPECT_FALSE(contains(r.err, "its folder does not exist")) << r.err;
}

// ---- fix-run: bad input refused with exit 2 -----------------------------------

namespace {
const std::string kTinySph = "run --device cpu --sim sph --scene dam_break --set spacing=0.02 --set depth=0.2 "
                             "--set column_width=0.1 --set column_height=0.15 --quiet ";
}

TEST(BadInput, ABodyMassOrDensityBeyondTheFloatRangeIsRefused) {
  const std::string dir = freshDir("bodymass");
  for (const std::string v : {"mass=1e39", "mass=1e300", "density=1e25", "mass=1e-30"}) {
    const auto r = test::run(kCli, kTinySph + "--steps 2 --body box:size=0.05:pos=0.25,0.1,0.1:" + v +
                                       " --save " + dir + "/n.snap");
    EXPECT_EQ(r.code, 2) << v << "\n" << r.err;
    EXPECT_TRUE(contains(r.err, v.substr(0, v.find('=')))) << r.err;
    EXPECT_TRUE(contains(r.err, "out of range")) << r.err;
    EXPECT_FALSE(fs::exists(dir + "/n.snap"));
  }
  // A config file's body the same way (its key named).
  test::writeFile(dir + "/c.json", R"({"sim": "sph", "bodies": [{"shape": "box", "size": [0.05, 0.05, 0.05], "position": [0.25, 0.1, 0.1], "mass": 1e39}]})");
  const auto r = test::run(kCli, "run --device cpu --steps 2 --quiet --config " + dir + "/c.json");
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_TRUE(contains(r.err, "mass")) << r.err;
}

TEST(BadInput, EmptyLoadConfigAndDevicePathsAreRefused) {
  for (const std::string a : {"--load ''", "--config ''", "--device ''"}) {
    const auto r = test::run(kCli, "run --n 64 --steps 2 --quiet " + a);
    EXPECT_EQ(r.code, 2) << a << "\n" << r.err;
    EXPECT_TRUE(contains(r.err, "empty")) << a << "\n" << r.err;
    EXPECT_TRUE(r.out.empty()) << a << ": a run started\n" << r.out;
  }
}

TEST(BadInput, BenchRealtimeArgumentsAreUsageErrors) {
  for (const std::string a : {"--device foo", "--device ''", "--solver dfsph,", "--solver ,wcsph"}) {
    const auto r = test::run(kCli, "bench realtime --n 500 --until 0.001 --json " + a);
    EXPECT_EQ(r.code, 2) << a << "\n" << r.err;
    EXPECT_TRUE(r.out.empty()) << a << "\n" << r.out;
  }
  // Every N against the limits before the first run: nothing runs, the
  // message names the N.
  const auto t0 = std::chrono::steady_clock::now();
  const auto r = test::run(kCli, "bench realtime --device cpu --n 500,268435456 --until 0.01 --json");
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_TRUE(contains(r.err, "--n 268435456")) << r.err;
  EXPECT_TRUE(r.out.empty()) << r.out;
  EXPECT_LT(secs, 20.0) << "the N = 500 run ran before the limit check";
}

TEST(BadInput, MessagesNameTheRealProblem) {
  const std::string dir = freshDir("messages");
  const auto s = test::run(kCli, "run --device cpu --n 64 --steps 2 --quiet --save " + dir + "/s1.snap");
  ASSERT_EQ(s.code, 0) << s.err;
  auto r = test::run(kCli, "run --load " + dir + "/s1.snap --obstacle box:size=0.05");
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_TRUE(contains(r.err, "do not combine --obstacle with --load")) << r.err;
  r = test::run(kCli, "run --load " + dir + "/s1.snap --scene dam_break");
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_FALSE(contains(r.err, "unknown nbody scene")) << r.err;
  EXPECT_TRUE(contains(r.err, "--load restores the simulation and its scene")) << r.err;
  // A config file's probe is blamed on the file and its key, not on --probe.
  test::writeFile(dir + "/c.json", R"({"sim": "sph", "probes": ["pressure:P:0.05,0.02,0.1"]})");
  r = test::run(kCli, "run --device cpu --steps 2 --quiet --config " + dir + "/c.json");
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_TRUE(contains(r.err, "--config " + dir + "/c.json: key 'probes'")) << r.err;
  EXPECT_FALSE(contains(r.err, "--probe pressure")) << r.err;
}

// ---- fix-run: failures while stepping keep the rows so far ---------------------

TEST(RunFailure, ATimeStepCollapseKeepsTheDiagAndProbeRows) {
  // A body of 1e-20 kg goes non-finite at step 10 and the time step to 0;
  // without --bodies-out and the periodic check (which finds the fluid
  // particles the body turned non-finite) nothing reads the state until the
  // collapse guard stops the --until run (a plain error, not a blow-up) at
  // step ~1350.
  const std::string dir = freshDir("collapse");
  test::writeFile(dir + "/s.snap", "an earlier good file\n");
  const auto r = test::run(kCli, kTinySph + "--until 0.02 --check-every 0 --body box:size=0.05:pos=0.12,0.1,0.1:mass=1e-20 "
                                 "--diag " + dir + "/d.csv --probe pressure:P:0.05,0.02,0.1 --probe-out " +
                                 dir + "/p.csv --save " + dir + "/s.snap");
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_TRUE(contains(r.err, "time step collapsed")) << r.err;
  EXPECT_TRUE(contains(r.err, "wrote " + dir + "/d.csv")) << r.err;
  EXPECT_TRUE(contains(r.err, "not written: --save")) << r.err;
  const auto d = lines(test::slurp(dir + "/d.csv")), p = lines(test::slurp(dir + "/p.csv"));
  ASSERT_GE(d.size(), 100u);
  EXPECT_EQ(d[0].rfind("step,time,", 0), 0u);
  ASSERT_GE(p.size(), 100u);
  EXPECT_EQ(p[0], "step,time,P");
  EXPECT_EQ(test::slurp(dir + "/s.snap"), "an earlier good file\n");
  EXPECT_TRUE(temporaries(dir).empty());
}

TEST(RunFailure, ANonFiniteBodyIsABlowUpWithoutASnapshot) {
  const std::string dir = freshDir("nanbody");
  for (const bool rows : {true, false}) {
    fs::remove(dir + "/b.csv");
    const auto r = test::run(kCli, kTinySph + "--steps 60 --body box:size=0.05:pos=0.12,0.1,0.1:mass=1e-20 " +
                                       (rows ? "--bodies-out " + dir + "/b.csv " : std::string()) +
                                       "--save " + dir + "/n.snap");
    EXPECT_EQ(r.code, 1) << r.err;
    EXPECT_TRUE(contains(r.err, "blew up: 1 of 1 rigid bodies have a non-finite")) << r.err;
    EXPECT_FALSE(fs::exists(dir + "/n.snap"));
    if (rows) {  // the rows before it, none with a NaN
      const std::string b = test::slurp(dir + "/b.csv");
      EXPECT_EQ(b.rfind("step,time,body", 0), 0u) << b;
      EXPECT_FALSE(contains(b, "nan")) << b;
    }
  }
  EXPECT_TRUE(temporaries(dir).empty());
}

// ---- fix-run: bench realtime ----------------------------------------------------

TEST(BenchRealtime, EachRunStopsAtUntilForBothSolvers) {
  const double until = 0.001;
  const auto r = test::run(kCli, "bench realtime --device cpu --n 500 --until 0.001 --json");
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["realtime"].size(), 2u);
  for (const auto& row : j["realtime"]) {
    const double t = row["simulated_s"], steps = row["steps"];
    ASSERT_GT(steps, 0);
    // The first step at or past --until: less than one (largest) step beyond it.
    EXPECT_GE(t, until - 1e-9) << row.dump();
    EXPECT_LT(t, until + 3 * t / steps) << row.dump();
  }
}

// ---- fix-run: a snapshot finds its command-line mesh from any folder ------------

TEST(SnapshotMesh, ACommandLineMeshPathIsStoredAbsolute) {
  const std::string dir = freshDir("snapmesh");
  fs::create_directories(dir + "/a");
  fs::create_directories(dir + "/b");
  fs::copy_file(std::string(EDDY_TEST_DATA) + "/cube.stl", dir + "/a/m.stl");
  const auto s = test::run("cd " + dir + "/a && " + kCli,
                           kTinySph + "--steps 2 --obstacle mesh:file=m.stl:scale=0.05:pos=0.3,0.03,0.1 "
                                      "--save s.snap");
  ASSERT_EQ(s.code, 0) << s.err;
  const auto r = test::run("cd " + dir + "/b && " + kCli, "run --device cpu --load ../a/s.snap --steps 2 --quiet");
  EXPECT_EQ(r.code, 0) << r.err;
}

// The app's own names (a panel screenshot eddy-<time>.png, a recording
// eddy-record-<time>) never write over anything: the first free of name,
// name-2, name-3, ...; a dangling symbolic link counts as taken.
TEST(OutputPaths, FreshPathSkipsEveryNameTaken) {
  const std::string dir = freshDir("freshpath");
  const std::string stem = dir + "/eddy-20261206-161900";
  EXPECT_EQ(freshPath(stem, ".png"), stem + ".png");
  test::writeFile(stem + ".png", "x");
  EXPECT_EQ(freshPath(stem, ".png"), stem + "-2.png");
  fs::create_directories(stem + "-2.png");  // a folder of that name
  ASSERT_EQ(symlink("nowhere", (stem + "-3.png").c_str()), 0);
  EXPECT_EQ(freshPath(stem, ".png"), stem + "-4.png");
  EXPECT_EQ(freshPath(stem), stem);  // the folder stem itself is free
  fs::create_directories(stem);
  EXPECT_EQ(freshPath(stem), stem + "-2");
}
