// eddy's command line and the app defaults (no window needed).
#include "defaults.hpp"
#include "gui_options.hpp"
#include "record_target.hpp"
#include "test_util.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

using namespace eddy;

namespace {

bool hasSph() {
  const auto& s = simulationNames();
  return std::find(s.begin(), s.end(), "sph") != s.end();
}

TEST(AppDefaults, DamBreakWhereSphExistsElsePlummer) {
  const SceneSpec d = defaultAppSpec();
  if (hasSph()) {
    EXPECT_EQ(d.sim, "sph");
    EXPECT_EQ(d.scene, "dam_break");
  } else {
    EXPECT_EQ(d.sim, "nbody");
    EXPECT_EQ(d.scene, "plummer");
  }
  const GuiOptions o = parseGuiOptions({});
  EXPECT_EQ(o.spec.sim, d.sim);
  EXPECT_EQ(o.spec.scene, d.scene);
  EXPECT_EQ(defaultSceneFor("nbody"), hasSph() ? defaultScene("nbody") : "plummer");
  EXPECT_EQ(defaultAppCount("nbody", true), 0u) << "a GPU gets the factory's default";
  EXPECT_EQ(defaultAppCount("nbody", false), 2048u);
  const auto demo = headlessDemoArgs();
  ASSERT_GE(demo.size(), 3u);
  EXPECT_EQ(demo[0], "run");
  EXPECT_EQ(demo[2], d.sim);
}

TEST(GuiOptions, ParsesEverything) {
  const GuiOptions o = parseGuiOptions(
      {"--sim", "nbody", "--scene", "galaxies", "--n", "2000", "--set", "dt=0.002", "--frames",
       "12", "--screenshot", "x.png", "--substeps", "3", "--size", "640x480", "--hide-panel",
       "--no-gl-sharing", "--no-persistent-map", "--color", "mass", "--style", "glow", "--vsync",
       "off", "--stats", "--paused", "--device", "cpu"});
  EXPECT_EQ(o.spec.sim, "nbody");
  EXPECT_EQ(o.spec.scene, "galaxies");
  EXPECT_EQ(o.spec.n, 2000u);
  EXPECT_EQ(o.frames, 12u);
  EXPECT_EQ(o.screenshot, "x.png");
  EXPECT_EQ(o.substeps, 3u);
  EXPECT_EQ(o.width, 640);
  EXPECT_EQ(o.height, 480);
  EXPECT_TRUE(o.hidePanel && o.stats && o.paused);
  EXPECT_FALSE(o.glSharing);
  EXPECT_FALSE(o.persistentMap);
  EXPECT_EQ(o.color, "mass");
  EXPECT_EQ(o.style, "glow");
  EXPECT_EQ(o.vsync, 0);
  EXPECT_EQ(o.device, "cpu");
  EXPECT_DOUBLE_EQ(guiParams(o).get("dt"), 0.002);
  EXPECT_EQ(parseGuiOptions({"--sim", "nbody"}).spec.scene, defaultSceneFor("nbody"));
}

// The usage error parseGuiOptions gives for `a`, or "(accepted)".
static std::string guiUsageMessage(const std::vector<std::string>& a) {
  try {
    parseGuiOptions(a);
  } catch (const GuiUsageError& e) {
    return std::string(e.what());
  }
  return std::string("(accepted)");
}

TEST(GuiOptions, BadInputNamesTheProblem) {
  const auto msg = guiUsageMessage;
  EXPECT_NE(msg({"--sim", "lbm"}).find("unknown simulation"), std::string::npos);
  EXPECT_NE(msg({"--sim", "nbody", "--scene", "x"}).find("unknown nbody scene"), std::string::npos);
  EXPECT_NE(msg({"--frames", "0"}).find("out of range"), std::string::npos);
  EXPECT_NE(msg({"--frames", "abc"}).find("not a whole number"), std::string::npos);
  EXPECT_NE(msg({"--screenshot", "a.png"}).find("needs --frames"), std::string::npos);
  EXPECT_NE(msg({"--size", "100"}).find("WxH"), std::string::npos);
  EXPECT_NE(msg({"--style", "cubes"}).find("spheres or glow"), std::string::npos);
  EXPECT_NE(msg({"--sim", "nbody", "--set", "dt=5"}).find("dt"), std::string::npos);
  EXPECT_NE(msg({"--sim", "nbody", "--set", "bogus=1"}).find("bogus"), std::string::npos);
  EXPECT_NE(msg({"--n"}).find("needs a value"), std::string::npos);
  EXPECT_NE(msg({"--wat"}).find("unknown option"), std::string::npos);
  // Issue 9: a malformed device is a usage error; a config's key is named as such.
  EXPECT_EQ(msg({"--device", "xyz"}),
            "--device 'xyz': expected gpu, cpu or P:D (platform:device indices, see 'eddy-cli devices')");
  EXPECT_EQ(msg({"--device", "0:0"}), "(accepted)");
  const std::string cfg = test::tempDir() + "/gui-sph-n.json";
  test::writeFile(cfg, R"({"sim": "sph", "n": 500})");
  EXPECT_EQ(msg({"--config", cfg}).find("--config " + cfg + ": key 'n' is not used by --sim sph"), 0u)
      << msg({"--config", cfg});
  const std::string dup = test::tempDir() + "/gui-dup.json";
  test::writeFile(dup, R"({"sim": "nbody", "sim": "sph"})");
  EXPECT_NE(msg({"--config", dup}).find("key 'sim' is given twice"), std::string::npos) << msg({"--config", dup});
}

// The solids of the command line and of a config file are read and placed
// before any window opens, as eddy-cli run does: a missing mesh, or an
// obstacle or body outside the tank, is a usage error naming the flag or the
// config's key (the app used to open a window with an error panel, exit 1
// with --frames, and wait forever without).
TEST(GuiOptions, SolidsAreCheckedBeforeTheWindow) {
  const auto& sims = simulationNames();
  if (std::find(sims.begin(), sims.end(), "sph") == sims.end()) GTEST_SKIP() << "no SPH";
  const auto msg = guiUsageMessage;
  const std::string missing = test::tempDir() + "/no-such-mesh.stl";
  const std::string m1 = msg({"--obstacle", "mesh:file=" + missing});
  EXPECT_EQ(m1.rfind("--obstacle: ", 0), 0u) << m1;
  EXPECT_NE(m1.find("no-such-mesh.stl"), std::string::npos) << m1;
  const std::string m2 = msg({"--body", "box:size=0.01:pos=5,0.05,0.004:density=500"});
  EXPECT_EQ(m2.rfind("--body: ", 0), 0u) << m2;
  EXPECT_NE(m2.find("tank"), std::string::npos) << m2;
  const std::string cfg = test::tempDir() + "/gui-solid-outside.json";
  test::writeFile(cfg, R"({"sim": "sph", "obstacles": [{"shape": "box", "size": 0.01, "position": [0.1, 0.01, 0.004]},
      {"shape": "box", "size": 0.01, "position": [3, 3, 3]}]})");
  const std::string m3 = msg({"--config", cfg});
  EXPECT_EQ(m3.rfind("--config " + cfg + ": key 'obstacles[1]': ", 0), 0u) << m3;
  EXPECT_EQ(msg({"--obstacle", "box:size=0.01:pos=0.1,0.01,0.004"}), "(accepted)");
}

// Issue 10 (CLI11): `--flag=value` works for the app's options too; the first
// bad argument is reported; a switch takes no value; the help lists every flag.
TEST(GuiOptions, FlagEqualsValueFormAndFirstBadArgument) {
  const GuiOptions o = parseGuiOptions({"--sim=nbody", "--n=2000", "--size=640x480", "--set=dt=0.002",
                                        "--camera=30,-20", "--vsync=off", "--stats"});
  EXPECT_EQ(o.spec.sim, "nbody");
  EXPECT_EQ(o.spec.n, 2000u);
  EXPECT_EQ(o.width, 640);
  EXPECT_EQ(o.height, 480);
  EXPECT_FLOAT_EQ(o.cameraYaw, 30.f);
  EXPECT_FLOAT_EQ(o.cameraPitch, -20.f);
  EXPECT_EQ(o.vsync, 0);
  EXPECT_TRUE(o.stats);
  EXPECT_DOUBLE_EQ(guiParams(o).get("dt"), 0.002);
  EXPECT_TRUE(parseGuiOptions({"-h"}).help);
  EXPECT_TRUE(parseGuiOptions({"--paused", "--help"}).help);
  const auto msg = guiUsageMessage;
  EXPECT_EQ(msg({"--frames", "abc", "--wat"}), "--frames: 'abc' is not a whole number in [1, 1099511627776]");
  EXPECT_EQ(msg({"--wat", "--frames", "abc"}), "unknown option '--wat'");
  EXPECT_EQ(msg({"--size=10x480"}), "--size: 10 is out of range [64, 16384]");
  EXPECT_EQ(msg({"--hide-panel=1"}), "unknown option '--hide-panel=1'");
  EXPECT_EQ(msg({"--n", "--frames", "5"}), "--n needs a value");
  EXPECT_EQ(msg({"--record="}), "--record needs a value");
  EXPECT_EQ(msg({"--"}), "unknown option '--'");
  EXPECT_EQ(msg({"-hx"}), "unknown option '-hx'");
  EXPECT_EQ(msg({"--help", "--frames", "0"}), "--frames: 0 is out of range [1, 1099511627776]");
  const std::string help = guiUsage();
  for (const char* s : {"usage: eddy [options]", "--sim NAME", "--set key=value", "--camera YAW,PITCH",
                        "--record-fps F", "--offscreen", "--foam", "--stats", "-h, --help",
                        "headless demo"})
    EXPECT_NE(help.find(s), std::string::npos) << s << "\n" << help;
}

// An empty value is not "not given": every flag that takes a value refuses
// '' naming the flag (before, --load '', --config '', --screenshot '',
// --device '', --color '' and --scene '' ran the default and exited 0). The
// flags are taken from the help, so a flag added later is checked too.
TEST(GuiOptions, EmptyValuesAreUsageErrorsNamingTheFlag) {
  const auto msg = guiUsageMessage;
  // eddy-cli's wording for the same flags.
  EXPECT_EQ(msg({"--load", ""}), "--load '': the path is empty; give a file (or leave --load out)");
  EXPECT_EQ(msg({"--config", ""}), "--config '': the path is empty; give a file (or leave --config out)");
  EXPECT_EQ(msg({"--screenshot", "", "--frames", "2"}), "--screenshot '': cannot write: the path is empty");
  // The app writes PNG: another name would hold PNG data under it (was: exit 0).
  for (const std::string bad : {"x.jpg", "shot", "dir/.png", "x.png.bak"})
    EXPECT_EQ(msg({"--screenshot", bad, "--frames", "2"}),
              "--screenshot '" + bad + "': the app writes PNG images: name the file FILE.png")
        << bad;
  // --camera reads its numbers as every other flag does: no hex, a yaw in [-360, 360].
  for (const std::string bad : {"0x1,0", "1,0x1", "30", ",0", "30,", "nan,0", "1e400,0"})
    EXPECT_EQ(msg({"--camera", bad}), "--camera: '" + bad + "' is not YAW,PITCH (degrees, e.g. 0,0)") << bad;
  EXPECT_EQ(msg({"--camera", "1e308,0"}), "--camera: yaw 1e308 is out of range [-360, 360]");
  EXPECT_EQ(msg({"--camera", "0,90"}), "--camera: pitch 90 is out of range [-89, 89]");
  for (const std::string good : {"x.PNG", "a/b.png", "/dev/null"})
    EXPECT_EQ(msg({"--screenshot", good}), "--screenshot needs --frames N (the frame to capture)") << good;
  EXPECT_EQ(msg({"--record", ""}), "--record '': cannot write: the path is empty");
  EXPECT_EQ(msg({"--device", ""}),
            "--device '': the device is empty; expected gpu, cpu or P:D (leave --device out for the default device)");
  EXPECT_EQ(msg({"--color", ""}).rfind("--color '': the field is empty", 0), 0u) << msg({"--color", ""});
  EXPECT_EQ(msg({"--scene", ""}).rfind("--scene '': unknown " + defaultAppSpec().sim + " scene; known: ", 0), 0u)
      << msg({"--scene", ""});
  EXPECT_EQ(msg({"--sim", "nbody", "--scene", ""}).rfind("--scene '': unknown nbody scene; known: ", 0), 0u);
  EXPECT_EQ(msg({"--sim", ""}).rfind("--sim '': unknown simulation; known: ", 0), 0u) << msg({"--sim", ""});
  // Every flag of the help that takes a value ("  --flag TYPE   text").
  const std::string help = guiUsage();
  std::vector<std::string> flags;
  for (size_t at = help.find("\n  --"); at != std::string::npos; at = help.find("\n  --", at + 1)) {
    const std::string line = help.substr(at + 3, help.find('\n', at + 1) - at - 3);
    const auto sp = line.find(' ');
    if (sp != std::string::npos && sp + 1 < line.size() && line[sp + 1] != ' ') flags.push_back(line.substr(0, sp));
  }
  EXPECT_GE(flags.size(), 20u) << help;
  for (const std::string& flag : flags) {
    const std::string m = msg({flag, "", "--frames", "1"});
    EXPECT_EQ(m.rfind(flag, 0), 0u) << flag << " '' gives: " << m;
  }
}

// --record DIR, as eddy-cli run --export DIR: a folder that holds anything is
// refused before any window (the frames of two recordings would mix: a new
// frame_000000.png beside stale frames 1, 2 of an earlier run), unless
// --overwrite; an existing file, or a new name that looks like an image or a
// video format the app does not write (out.png), is refused too.
TEST(GuiOptions, RecordFolderMustBeEmptyOrNewUnlessOverwrite) {
  namespace fs = std::filesystem;
  const auto msg = guiUsageMessage;
  const std::string dir = test::tempDir() + "/gui-rec-used";
  fs::remove_all(dir);
  fs::create_directories(dir);
  EXPECT_EQ(msg({"--frames", "1", "--record", dir}), "(accepted)") << "an empty folder";
  test::writeFile(dir + "/frame_000001.png", "stale");
  const std::string m = msg({"--frames", "1", "--record", dir});
  EXPECT_EQ(m.rfind("--record '" + dir + "': the folder is not empty", 0), 0u) << m;
  EXPECT_NE(m.find("--overwrite"), std::string::npos) << m;
  const GuiOptions o = parseGuiOptions({"--frames", "1", "--record", dir, "--overwrite"});
  EXPECT_TRUE(o.overwrite);
  EXPECT_EQ(msg({"--frames", "1", "--overwrite"}).rfind("--overwrite needs --record DIR", 0), 0u);
  EXPECT_EQ(msg({"--frames", "1", "--overwrite", "--record", dir + "/v.mp4"}).rfind("--overwrite needs --record DIR", 0),
            0u);
  // A regular file is not a folder.
  const std::string file = dir + "/frame_000001.png";
  const std::string mf = msg({"--frames", "1", "--record", file});
  EXPECT_EQ(mf.rfind("--record '" + file + "': cannot write to this folder: ", 0), 0u) << mf;
  // A new name ending like an image (or a video format not written) is not made a folder.
  for (const char* name : {"/out.png", "/clip.AVI", "/shot.jpeg"}) {
    const std::string mp = msg({"--frames", "1", "--record", test::tempDir() + name});
    EXPECT_EQ(mp.rfind("--record '" + test::tempDir() + name + "': the name ends in .", 0), 0u) << mp;
    EXPECT_NE(mp.find("--screenshot"), std::string::npos) << mp;
    EXPECT_FALSE(fs::exists(test::tempDir() + name));
  }
  // ... but an existing folder of such a name is a folder.
  const std::string pngDir = test::tempDir() + "/gui-rec-folder.png";
  fs::remove_all(pngDir);
  fs::create_directories(pngDir);
  EXPECT_EQ(msg({"--frames", "1", "--record", pngDir}), "(accepted)");
  EXPECT_NE(guiUsage().find("--overwrite"), std::string::npos);
  // The names --overwrite removes: an earlier recording's frames, nothing else.
  EXPECT_TRUE(isRecordFrameName("frame_000000.png"));
  EXPECT_TRUE(isRecordFrameName("frame_1234567.png"));
  EXPECT_FALSE(isRecordFrameName("frame_.png"));
  EXPECT_FALSE(isRecordFrameName("frame_0001.png.tmp.1"));
  EXPECT_FALSE(isRecordFrameName("notes.txt"));
  EXPECT_FALSE(isRecordFrameName("frame_00x1.png"));
}

// Issue 11: the app paces its steps to the wall clock unless asked for fixed
// stepping; a batch capture (--frames with --screenshot or --record) steps
// fixed unless --realtime says otherwise, so it does not depend on the
// machine's speed.
TEST(GuiOptions, RealTimeUnlessFixedSteppingIsAskedForOrABatchCapture) {
  auto rt = [](std::vector<std::string> a) { return startsRealtime(parseGuiOptions(a)); };
  EXPECT_TRUE(rt({})) << "the app's default";
  EXPECT_TRUE(rt({"--frames", "30"})) << "frames alone: nothing is captured";
  EXPECT_TRUE(rt({"--record", "out"})) << "an interactive recording";
  EXPECT_FALSE(rt({"--substeps", "1"})) << "--substeps K: fixed, even K = 1";
  EXPECT_FALSE(rt({"--frames", "30", "--screenshot", "x.png"}));
  EXPECT_FALSE(rt({"--frames", "30", "--record", "out"}));
  EXPECT_FALSE(rt({"--frames", "30", "--screenshot", "x.png", "--record", "out"}));
  EXPECT_TRUE(rt({"--frames", "30", "--screenshot", "x.png", "--realtime"}));
  EXPECT_TRUE(rt({"--frames", "30", "--record", "out", "--realtime"}));
  EXPECT_DOUBLE_EQ(parseGuiOptions({}).speed, 1.0);
  EXPECT_DOUBLE_EQ(parseGuiOptions({"--speed", "0.25"}).speed, 0.25);
  EXPECT_DOUBLE_EQ(parseGuiOptions({"--speed", "10"}).speed, 10.0);
  // Given with fixed stepping, the start-up line says it waits for the switch.
  EXPECT_TRUE(parseGuiOptions({"--speed", "2", "--substeps", "2"}).speedGiven);
  EXPECT_FALSE(parseGuiOptions({"--substeps", "2"}).speedGiven);
  const auto msg = guiUsageMessage;
  EXPECT_EQ(msg({"--speed", "0.05"}), "--speed: '0.05' is not a number in [0.1, 10]");
  EXPECT_EQ(msg({"--speed", "11"}), "--speed: '11' is not a number in [0.1, 10]");
  EXPECT_EQ(msg({"--speed", "fast"}), "--speed: 'fast' is not a number in [0.1, 10]");
  EXPECT_EQ(msg({"--speed", "nan"}), "--speed: 'nan' is not a number in [0.1, 10]");
  EXPECT_EQ(msg({"--speed"}), "--speed needs a value");
  EXPECT_NE(msg({"--realtime", "--substeps", "2"}).find("not both"), std::string::npos);
}

// The app's default SPH solver is DFSPH (eddy-cli keeps the declared default).
TEST(GuiOptions, TheAppStartsSphWithDfsph) {
  const auto& sims = simulationNames();
  if (std::find(sims.begin(), sims.end(), "sph") == sims.end()) GTEST_SKIP() << "no SPH";
  EXPECT_EQ(defaultAppParams("sph").getChoice("solver"), "dfsph");
  EXPECT_EQ(Params(paramDecl("sph")).getChoice("solver"), "wcsph") << "the declared default stays";
  EXPECT_EQ(guiParams(parseGuiOptions({"--sim", "sph"})).getChoice("solver"), "dfsph");
  EXPECT_EQ(guiParams(parseGuiOptions({"--sim", "sph", "--set", "solver=wcsph"})).getChoice("solver"),
            "wcsph");
  const auto demo = headlessDemoArgs(false);
  EXPECT_NE(std::find(demo.begin(), demo.end(), "solver=dfsph"), demo.end());
  EXPECT_NE(std::find(demo.begin(), demo.end(), "--until"), demo.end()) << "a whole dam break";
}

}  // namespace
