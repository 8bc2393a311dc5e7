// Restart snapshots: the container (header, sizes, checksum), corrupt and
// lying files, and bit-identical continuation of a run.
#include "body_spec.hpp"
#include "bodies.hpp"
#include "dfsph.hpp"
#include "factory.hpp"
#include "nbody.hpp"
#include "shape_spec_io.hpp"
#include "snapshot.hpp"
#include "snapshot_edit.hpp"
#include "sph.hpp"
#include "test_util.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>

using namespace eddy;
using eddy::test::loadError;
using eddy::test::withBlob;
using eddy::test::withoutBlob;

namespace {

std::string errorOfParse(const std::string& bytes) {
  try {
    Snapshot::parse(bytes, "t.snap");
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

std::string errorOfRead(const std::string& bytes) {
  static int k = 0;
  const std::string path = test::tempDir() + "/s" + std::to_string(k++) + ".snap";
  std::ofstream(path, std::ios::binary) << bytes;
  try {
    auto snap = Snapshot::read(path);
    auto h = readSnapshotHeader(snap);
    decodeNBodyState(snap, h.count);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

void putLE(std::string& s, size_t at, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) s[at + i] = char((v >> (8 * i)) & 0xff);
}
void fixCrc(std::string& s) { putLE(s, s.size() - 4, crc32(s.data(), s.size() - 4), 4); }

bool contains(const std::string& hay, const std::string& needle) {
  return hay.find(needle) != std::string::npos;
}

// A valid N-body snapshot of `n` bodies, built without a device.
std::string nbodySnapshotBytes(size_t n, uint64_t countField) {
  SnapshotWriter w;
  w.addString("eddy/sim", "nbody");
  w.addString("eddy/scene", "plummer");
  w.addString("eddy/ic", "");
  w.addU64("eddy/n", n);
  w.addU64("eddy/count", countField);
  w.addU64("eddy/step", 7);
  w.addF64("eddy/time", 0.007);
  w.addF64("param/dt", 0.001);
  std::vector<cl_float4> p(n), v(n), a(n);
  for (size_t i = 0; i < n; ++i) {
    p[i] = {{float(i), 0, 0, 1.0f / float(n)}};
    v[i] = {{0, float(i), 0, 0}};
    a[i] = {{0, 0, 0, 0}};
  }
  w.addArray("nbody/pos", p);
  w.addArray("nbody/vel", v);
  w.addArray("nbody/acc", a);
  return w.bytes();
}

}  // namespace

TEST(Crc32, MatchesTheStandardCheckValue) {
  EXPECT_EQ(crc32("123456789", 9), 0xCBF43926u);  // the CRC-32/ISO-HDLC check value
  EXPECT_EQ(crc32("", 0), 0u);
  // Incremental == one shot.
  EXPECT_EQ(crc32("6789", 4, crc32("12345", 5)), 0xCBF43926u);
}

TEST(Snapshot, ContainerRoundTrips) {
  SnapshotWriter w;
  w.addString("a", "hello");
  w.addU64("b", 0x0123456789abcdefull);
  w.addF64("c", -0.1);
  w.addArray("d", std::vector<float>{1.5f, -2.0f});
  w.addString("empty", "");
  EXPECT_THROW(w.addString("a", "again"), Error);
  EXPECT_THROW(w.addString("", "x"), Error);
  const auto s = Snapshot::parse(w.bytes(), "mem");
  EXPECT_EQ(s.string("a"), "hello");
  EXPECT_EQ(s.u64("b"), 0x0123456789abcdefull);
  EXPECT_EQ(s.f64("c"), -0.1);
  EXPECT_EQ(s.array<float>("d", 2), (std::vector<float>{1.5f, -2.0f}));
  EXPECT_EQ(s.string("empty"), "");
  EXPECT_TRUE(contains(errorOfParse(w.bytes()), ""));
  EXPECT_THROW(s.array<float>("d", 3), Error);
  EXPECT_THROW(s.u64("a"), Error);
  EXPECT_THROW(s.blob("nope"), Error);
}

TEST(Snapshot, CorruptFilesAreRejectedWithAClearMessage) {
  const std::string good = nbodySnapshotBytes(5, 5);
  EXPECT_EQ(errorOfRead(good), "");

  // Every truncation, from 0 bytes to one byte short.
  for (size_t len = 0; len < good.size(); ++len) {
    const std::string e = errorOfRead(good.substr(0, len));
    EXPECT_TRUE(contains(e, "not a valid eddy snapshot")) << len << ": " << e;
    if (len >= 8) {
      EXPECT_TRUE(contains(e, "truncated")) << len << ": " << e;
    }
  }
  // Wrong magic, wrong version.
  std::string bad = good;
  bad[0] = 'X';
  EXPECT_TRUE(contains(errorOfRead(bad), "wrong magic"));
  bad = good;
  putLE(bad, 8, 99, 4);
  EXPECT_TRUE(contains(errorOfRead(bad), "format version 99, this eddy reads version 1"));
  // One flipped bit anywhere in the body: checksum mismatch.
  unsigned seed = test::freshSeed();
  std::mt19937 rng(seed);
  for (int k = 0; k < 50; ++k) {
    bad = good;
    const size_t at = 24 + rng() % (good.size() - 28);
    bad[at] = char(bad[at] ^ (1 << (rng() % 8)));
    EXPECT_TRUE(contains(errorOfRead(bad), "checksum mismatch")) << "seed " << seed << " byte " << at;
  }
  // The recorded size disagrees with the file.
  bad = good + "extra";
  EXPECT_TRUE(contains(errorOfRead(bad), "the header records"));
  bad = good;
  putLE(bad, 16, uint64_t(1) << 40, 8);
  EXPECT_TRUE(contains(errorOfRead(bad), "the header records 1099511627776 bytes"));
}

TEST(Snapshot, LyingSizesAndHugeCountsAreRejectedBeforeAllocating) {
  // A blob whose size field claims more than the file holds (checksum fixed up,
  // so only the bounds check can catch it).
  std::string bad = nbodySnapshotBytes(3, 3);
  {
    const size_t at = 24 + 2 + std::strlen("eddy/sim");  // the first blob's size field
    putLE(bad, at, uint64_t(1) << 62, 8);
    fixCrc(bad);
    EXPECT_TRUE(contains(errorOfRead(bad), "claims 4611686018427387904 bytes")) << errorOfRead(bad);
  }
  // Absurd blob count in the header.
  bad = nbodySnapshotBytes(3, 3);
  putLE(bad, 12, 0xffffffffu, 4);
  fixCrc(bad);
  EXPECT_TRUE(contains(errorOfRead(bad), "absurd blob count")) << errorOfRead(bad);
  // The body count says 2^31 - 1 but the arrays hold 3 bodies: refused by the
  // size check, before any array of that count is allocated.
  const std::string e = errorOfRead(nbodySnapshotBytes(3, 0x7fffffffu));
  EXPECT_TRUE(contains(e, "blob 'nbody/pos' holds 48 bytes, expected 2147483647 x 16")) << e;
  EXPECT_TRUE(contains(errorOfRead(nbodySnapshotBytes(3, uint64_t(1) << 40)),
                       "outside [1, 2^31 - 1]"));
  EXPECT_TRUE(contains(errorOfRead(nbodySnapshotBytes(3, 0)), "outside [1, 2^31 - 1]"));
  // Unknown simulation and out-of-range parameter.
  SnapshotWriter w;
  w.addString("eddy/sim", "plasma");
  EXPECT_TRUE(contains(errorOfRead(w.bytes()), "unknown simulation 'plasma'"));
  std::string s = nbodySnapshotBytes(3, 3);
  const size_t at = s.find("param/dt") + 8 + 8;  // after name and size field
  const double huge = 1e9;
  std::memcpy(&s[at], &huge, 8);
  fixCrc(s);
  EXPECT_TRUE(contains(errorOfRead(s), "'dt' = 1e+09 is out of range")) << errorOfRead(s);
  // A scene no simulation has (was loaded, and failed only at a Reset).
  std::string t = nbodySnapshotBytes(3, 3);
  t.replace(t.find("plummer"), 7, "plumber");
  fixCrc(t);
  EXPECT_TRUE(contains(errorOfRead(t), "scene 'plumber' is not a nbody scene; known: ")) << errorOfRead(t);
}

TEST(Snapshot, NonFiniteStateIsRejected) {
  SnapshotWriter w;
  w.addString("eddy/sim", "nbody");
  w.addU64("eddy/count", 1);
  std::vector<cl_float4> p = {{{0, std::numeric_limits<float>::quiet_NaN(), 0, 1}}}, z(1);
  w.addArray("nbody/pos", p);
  w.addArray("nbody/vel", z);
  w.addArray("nbody/acc", z);
  const auto snap = Snapshot::parse(w.bytes(), "nan.snap");
  try {
    decodeNBodyState(snap, 1);
    FAIL();
  } catch (const Error& e) {
    EXPECT_TRUE(contains(e.what(), "body 0 has a non-finite value")) << e.what();
  }
}

// The heart of restarts: K steps, save, load, K more steps gives the same
// bits as 2K steps straight through (positions, velocities, accelerations,
// clock), on fresh random bodies of an awkward count. On a GPU
// (EDDY_TEST_DEVICE=gpu) this also checks that a restore picks the layout
// (work-group, bodies per item, source split) a new run of that size picks:
// until session 22 it took the CPU default there and the first step after
// the restart summed in another order (H200: n = 97 and 300 differed; PoCL,
// whose automatic layout is that default, could not tell).
TEST(Snapshot, RestartIsBitIdenticalToRunningStraightThrough) {
  const unsigned seed = test::freshSeed();
  for (size_t n : {1u, 97u, 300u}) {
    SceneSpec spec;
    spec.sim = "nbody";
    spec.scene = "plummer";
    spec.n = n;
    Params params(nbodyParamDecl());
    params.set("dt", 0.003);
    params.set("softening", 0.02);
    params.set("seed", seed % 100000);
    const int K = 37;
    auto straight = makeSimulation(test::context(), spec, params);
    auto half = makeSimulation(test::context(), spec, params);
    for (int k = 0; k < 2 * K; ++k) straight->step();
    for (int k = 0; k < K; ++k) half->step();
    const std::string path = test::tempDir() + "/restart" + std::to_string(n) + ".snap";
    saveSnapshot(*half, spec, path);
    half.reset();
    auto loaded = loadSnapshot(test::context(), Snapshot::read(path));
    EXPECT_EQ(loaded.spec.scene, "plummer");
    EXPECT_EQ(loaded.sim->steps(), uint64_t(K));
    EXPECT_EQ(loaded.sim->params().get("dt"), 0.003);
    for (int k = 0; k < K; ++k) loaded.sim->step();
    auto& a = dynamic_cast<NBodySim&>(*straight);
    auto& b = dynamic_cast<NBodySim&>(*loaded.sim);
    EXPECT_EQ(a.steps(), b.steps());
    EXPECT_EQ(a.time(), b.time());  // exactly: the clock is stored as bits
    const auto pa = a.readPositions(), pb = b.readPositions();
    const auto va = a.readVelocities(), vb = b.readVelocities();
    const auto aa = a.readAccelerations(), ab = b.readAccelerations();
    EXPECT_EQ(std::memcmp(pa.data(), pb.data(), n * sizeof(cl_float4)), 0) << "n=" << n << " seed " << seed;
    EXPECT_EQ(std::memcmp(va.data(), vb.data(), n * sizeof(cl_float4)), 0) << "n=" << n << " seed " << seed;
    EXPECT_EQ(std::memcmp(aa.data(), ab.data(), n * sizeof(cl_float4)), 0) << "n=" << n << " seed " << seed;
    // And the run did move (the comparison is not of two frozen states).
    EXPECT_NE(pa[0].s[0], float(makeNBodyScene("plummer", n, seed % 100000)[0].x));
  }
}

TEST(Snapshot, SaveIsAtomicAndKeepsThePreviousFileOnFailure) {
  const std::string path = test::tempDir() + "/keep.snap";
  SnapshotWriter w;
  w.addString("x", "first");
  w.write(path);
  // A writer whose destination folder vanished fails without touching `path`.
  SnapshotWriter w2;
  w2.addString("x", "second");
  EXPECT_THROW(w2.write(test::tempDir() + "/no-such-dir/keep.snap"), Error);
  EXPECT_EQ(Snapshot::read(path).string("x"), "first");
  // No temporary files are left behind.
  for (const auto& e : std::filesystem::directory_iterator(test::tempDir()))
    EXPECT_EQ(e.path().filename().string().find(".tmp."), std::string::npos) << e.path();
}

// The same for DFSPH: its warm-start pressures and solver state (which sets
// the next step's iteration batches) are part of the snapshot.
TEST(Snapshot, DfsphRestartIsBitIdenticalToRunningStraightThrough) {
  SceneSpec spec;
  spec.sim = "sph";
  spec.scene = "dam_break";
  Params params(sphParamDecl());
  params.set("spacing", 0.008);
  params.set("depth", 0.032);
  params.setAssignment("solver=dfsph");
  const int K = 30;
  auto straight = makeSimulation(test::context(), spec, params);
  auto half = makeSimulation(test::context(), spec, params);
  for (int k = 0; k < 2 * K; ++k) straight->step();
  for (int k = 0; k < K; ++k) half->step();
  // The pressure-gradient renormalisation carries into the next step (the
  // default gradient_correction = packing): it is state, and this run has
  // measured one that is not the identity.
  const auto c =
      dynamic_cast<DfsphSolver&>(dynamic_cast<SphSim&>(*half).solver()).kernels().readGradient();
  const std::array<cl_float, 6> one{1, 1, 1, 0, 0, 0};
  EXPECT_NE(c, one);
  const std::string path = test::tempDir() + "/restart_dfsph.snap";
  saveSnapshot(*half, spec, path);
  half.reset();
  {
    // A snapshot whose renormalisation is not finite or far off the
    // identity is refused with the entry named.
    const Snapshot good = Snapshot::read(path);
    for (const float bad : {std::numeric_limits<float>::quiet_NaN(), 1.5f}) {
      std::vector<cl_float> g(c.begin(), c.end());
      g[1] = bad;
      const std::string e = loadError(
          withBlob(good, "sph/dfsph_gradient", std::string(reinterpret_cast<const char*>(g.data()), g.size() * sizeof(cl_float))));
      EXPECT_TRUE(contains(e, "gradient renormalisation entry 1")) << bad << ": " << e;
    }
    // A device clock that is negative or not the header's time (a crafted
    // -1 loaded and ran at t = -0.999766).
    const std::vector<cl_float> clock = good.array<cl_float>("sph/clock", EDDY_SPH_CLOCK_SIZE);
    auto clockBlob = [](std::vector<cl_float> k) {
      return std::string(reinterpret_cast<const char*>(k.data()), k.size() * sizeof(cl_float));
    };
    std::vector<cl_float> k = clock;
    k[EDDY_SPH_CLOCK_T_HI] = -1.0f;
    EXPECT_TRUE(contains(loadError(withBlob(good, "sph/clock", clockBlob(k))), "the SPH clock")) << "t < 0";
    k = clock;
    k[EDDY_SPH_CLOCK_T_HI] *= 2.0f;
    EXPECT_TRUE(contains(loadError(withBlob(good, "sph/clock", clockBlob(k))), "is not the snapshot's time"));
    k = clock;
    k[EDDY_SPH_CLOCK_DT] = -1e-4f;
    EXPECT_TRUE(contains(loadError(withBlob(good, "sph/clock", clockBlob(k))), "the SPH clock")) << "dt < 0";
    EXPECT_EQ(loadError(withBlob(good, "sph/clock", clockBlob(clock))), "");  // as saved: loads
    // The particles' spacing against the parameter's (a crafted 100 m ran).
    const double spacing = 100;
    EXPECT_TRUE(contains(loadError(withBlob(good, "sph/spacing", std::string(reinterpret_cast<const char*>(&spacing), 8))),
                         "is not the parameter spacing"));
  }
  auto loaded = loadSnapshot(test::context(), Snapshot::read(path));
  EXPECT_EQ(loaded.sim->params().getChoice("solver"), "dfsph");
  for (int k = 0; k < K; ++k) loaded.sim->step();
  auto& a = dynamic_cast<SphSim&>(*straight);
  auto& b = dynamic_cast<SphSim&>(*loaded.sim);
  const size_t n = a.size();
  ASSERT_EQ(b.size(), n);
  EXPECT_EQ(a.syncTime(), b.syncTime());
  const auto pa = a.readPositions(), pb = b.readPositions();
  const auto va = a.readVelocities(), vb = b.readVelocities();
  EXPECT_EQ(std::memcmp(pa.data(), pb.data(), n * sizeof(cl_float4)), 0);
  EXPECT_EQ(std::memcmp(va.data(), vb.data(), n * sizeof(cl_float4)), 0);
  const auto da = a.diagnostics(), db = b.diagnostics();
  EXPECT_EQ(da.solve.densityIterations, db.solve.densityIterations);
  EXPECT_EQ(da.solve.densityError, db.solve.densityError);
  EXPECT_GT(da.kinetic, 0.0);  // it moved
}

// The same for WCSPH with density diffusion (the default): the carried
// density (sph/wcsph_rho) is state, stored and restored with the particles.
TEST(Snapshot, WcsphDensityDiffusionRestartIsBitIdentical) {
  SceneSpec spec;
  spec.sim = "sph";
  spec.scene = "dam_break";
  Params params(sphParamDecl());
  params.set("spacing", 0.008);
  params.set("depth", 0.032);
  params.set("density_diffusion", 0.1);
  const int K = 40;
  auto straight = makeSimulation(test::context(), spec, params);
  auto half = makeSimulation(test::context(), spec, params);
  for (int k = 0; k < 2 * K; ++k) straight->step();
  for (int k = 0; k < K; ++k) half->step();
  const std::string path = test::tempDir() + "/restart_wcsph.snap";
  saveSnapshot(*half, spec, path);
  const size_t n = half->size();
  half.reset();
  const Snapshot snap = Snapshot::read(path);
  ASSERT_TRUE(snap.has("sph/wcsph_rho"));
  const auto st = decodeSphState(snap, n);
  ASSERT_EQ(st.rho.size(), n);
  auto loaded = loadSnapshot(test::context(), snap);
  for (int k = 0; k < K; ++k) loaded.sim->step();
  auto& a = dynamic_cast<SphSim&>(*straight);
  auto& b = dynamic_cast<SphSim&>(*loaded.sim);
  ASSERT_EQ(b.size(), n);
  EXPECT_EQ(a.syncTime(), b.syncTime());
  const auto pa = a.readPositions(), pb = b.readPositions();
  const auto va = a.readVelocities(), vb = b.readVelocities();
  const auto ra = a.readDensityPressure(), rb = b.readDensityPressure();
  EXPECT_EQ(std::memcmp(pa.data(), pb.data(), n * sizeof(cl_float4)), 0);
  EXPECT_EQ(std::memcmp(va.data(), vb.data(), n * sizeof(cl_float4)), 0);
  EXPECT_EQ(std::memcmp(ra.data(), rb.data(), n * sizeof(cl_float2)), 0);
  EXPECT_GT(a.diagnostics().kinetic, 0.0);  // it moved
}

namespace {


// Two SPH runs hold the same bits (clock, positions, velocities).
void expectSameSphBits(Simulation& x, Simulation& y) {
  auto& a = dynamic_cast<SphSim&>(x);
  auto& b = dynamic_cast<SphSim&>(y);
  const size_t n = a.size();
  ASSERT_EQ(b.size(), n);
  EXPECT_EQ(a.steps(), b.steps());
  EXPECT_EQ(a.syncTime(), b.syncTime());
  const auto pa = a.readPositions(), pb = b.readPositions();
  const auto va = a.readVelocities(), vb = b.readVelocities();
  EXPECT_EQ(std::memcmp(pa.data(), pb.data(), n * sizeof(cl_float4)), 0);
  EXPECT_EQ(std::memcmp(va.data(), vb.data(), n * sizeof(cl_float4)), 0);
  EXPECT_GT(a.diagnostics().kinetic, 0.0);  // it moved
}


}  // namespace

TEST(Snapshot, FileContentHashIsFnv1a64) {
  const std::string dir = test::tempDir();
  for (const auto& [text, hash] : std::vector<std::pair<std::string, std::string>>{
           {"", "fnv1a64:cbf29ce484222325"}, {"a", "fnv1a64:af63dc4c8601ec8c"},
           {"foobar", "fnv1a64:85944171f73967e8"}}) {
    test::writeFile(dir + "/hash.txt", text);
    EXPECT_EQ(fileContentHash(dir + "/hash.txt"), hash) << "'" << text << "'";
  }
  EXPECT_THROW(fileContentHash(dir + "/no-such-file.stl"), Error);
}

// A mesh solid is stored by its path and its file's content hash: with the
// file unchanged the restart is bit-identical; once the file changed, the
// load is refused naming it (its new geometry would not continue the run);
// a snapshot without the hash (written before it was recorded) still loads.
TEST(Snapshot, MeshSolidRestartRefusesAChangedMeshFile) {
  const std::string dir = test::tempDir();
  const std::string mesh = dir + "/snap_cube.stl";
  const std::string cube = test::slurp(std::string(EDDY_TEST_DATA) + "/cube.stl");
  ASSERT_GT(cube.size(), 100u);
  test::writeFile(mesh, cube);
  SceneSpec spec;
  spec.sim = "sph";
  spec.scene = "dam_break";
  // right in front of the column: the surge hits it at once
  spec.obstacles = {parseShapeSpec("mesh:file=" + mesh + ":scale=0.03,0.03,0.1:pos=0.075,0.015,0.02")};
  Params params(sphParamDecl());
  params.set("spacing", 0.01);
  params.set("depth", 0.04);
  const int K = 20;
  auto straight = makeSimulation(test::context(), spec, params);
  auto half = makeSimulation(test::context(), spec, params);
  for (int k = 0; k < 2 * K; ++k) straight->step();
  for (int k = 0; k < K; ++k) half->step();
  const std::string path = dir + "/mesh_restart.snap";
  saveSnapshot(*half, spec, path);
  half.reset();
  const Snapshot snap = Snapshot::read(path);
  auto solids = nlohmann::json::parse(snap.string("sph/solids"));
  ASSERT_EQ(solids.size(), 1u);
  EXPECT_EQ(solids[0]["file"], mesh);
  EXPECT_EQ(solids[0]["file_hash"], fileContentHash(mesh));

  {  // unchanged: bit-identical
    auto loaded = loadSnapshot(test::context(), snap);
    for (int k = 0; k < K; ++k) loaded.sim->step();
    expectSameSphBits(*straight, *loaded.sim);
  }
  // The file changed (a smaller cube, still a valid mesh): refused, naming it.
  std::string smaller = cube;
  for (size_t at; (at = smaller.find("0.5")) != std::string::npos;) smaller.replace(at, 3, "0.4");
  test::writeFile(mesh, smaller);
  const std::string why = loadError(test::slurp(path));
  EXPECT_NE(why.find(mesh + ": the mesh file changed since the snapshot was saved"), std::string::npos)
      << why;

  // A snapshot of before the hash was recorded loads (nothing to check) ...
  nlohmann::json old = solids;
  old[0].erase("file_hash");
  const std::string oldBytes = withBlob(snap, "sph/solids", old.dump());
  EXPECT_EQ(loadError(oldBytes), "");
  // ... and with the file as it was, continues bit-identically.
  test::writeFile(mesh, cube);
  {
    auto loaded = loadSnapshot(test::context(), Snapshot::parse(oldBytes, "old.snap"));
    for (int k = 0; k < K; ++k) loaded.sim->step();
    expectSameSphBits(*straight, *loaded.sim);
  }
  // A hash that is not one (or on a primitive) is refused as a bad snapshot.
  nlohmann::json bad = solids;
  bad[0]["file_hash"] = "fnv1a64:xyz";
  std::string e = loadError(withBlob(snap, "sph/solids", bad.dump()));
  EXPECT_NE(e.find("file_hash"), std::string::npos) << e;
  bad[0]["file_hash"] = 7;
  e = loadError(withBlob(snap, "sph/solids", bad.dump()));
  EXPECT_NE(e.find("solid 0"), std::string::npos) << e;
  bad = nlohmann::json::array({shapeSpecToJson(parseShapeSpec("box:size=0.03,0.03,0.1:pos=0.075,0.015,0.02"))});
  bad[0]["body"] = -1;
  bad[0]["file_hash"] = solids[0]["file_hash"];
  e = loadError(withBlob(snap, "sph/solids", bad.dump()));
  EXPECT_NE(e.find("file_hash"), std::string::npos) << e;
}

// A snapshot whose solids include bodies but whose bodies were cut out is
// refused (before: it loaded, the bodies turned into static obstacles); a
// solid's bad key names the solid once (before: "solid 0: snapshot solid 0:").
TEST(Snapshot, SolidsThatAreBodiesNeedTheBodies) {
  SceneSpec spec;
  spec.sim = "sph";
  spec.scene = "dam_break";
  spec.obstacles = {parseShapeSpec("box:size=0.04:pos=0.3,0.02,0.1")};
  spec.bodies = {parseBodySpec("box:size=0.03:pos=0.15,0.15,0.1:density=500")};
  Params params(sphParamDecl());
  params.set("spacing", 0.02);
  params.set("depth", 0.2);
  params.set("column_width", 0.1);
  params.set("column_height", 0.15);
  auto sim = makeSimulation(test::context(), spec, params);
  sim->step();
  const std::string path = test::tempDir() + "/bodies_cut.snap";
  saveSnapshot(*sim, spec, path);
  const Snapshot snap = Snapshot::read(path);
  EXPECT_EQ(loadError(test::slurp(path)), "");
  std::string e = loadError(withoutBlob(snap, "sph/bodies"));
  EXPECT_NE(e.find("is rigid body 0, but the snapshot holds no bodies (sph/bodies)"), std::string::npos) << e;
  auto solids = nlohmann::json::parse(snap.string("sph/solids"));
  solids[0]["colour"] = "red";
  e = loadError(withBlob(snap, "sph/solids", solids.dump()));
  EXPECT_NE(e.find("snapshot solid 0: "), std::string::npos) << e;
  EXPECT_EQ(e.find("solid 0: snapshot solid 0"), std::string::npos) << e;
}

// Older eddy wrote kinematic (piston, rotate) bodies with a density or mass,
// which never had an effect; their snapshots load, the value dropped, and
// continue bit-identically. New input keeps refusing such a body.
TEST(Snapshot, KinematicBodyWithADensityFromAnOlderSnapshotLoads) {
  SceneSpec spec;
  spec.sim = "sph";
  spec.scene = "dam_break";
  spec.bodies = {parseBodySpec("box:size=0.1,0.01,0.1:pos=0.25,0.1,0.1:motion=rotate:speed=1"),
                 parseBodySpec("box:size=0.02,0.1,0.18:pos=0.35,0.06,0.1:motion=piston:amplitude=0.01:period=0.5"),
                 parseBodySpec("box:size=0.02:pos=0.3,0.15,0.1:density=500")};
  Params params(sphParamDecl());
  params.set("spacing", 0.02);
  params.set("depth", 0.2);
  params.set("column_width", 0.1);
  params.set("column_height", 0.15);
  params.setAssignment("solver=dfsph");
  const int K = 10;
  auto straight = makeSimulation(test::context(), spec, params);
  auto half = makeSimulation(test::context(), spec, params);
  for (int k = 0; k < 2 * K; ++k) straight->step();
  for (int k = 0; k < K; ++k) half->step();
  const std::string path = test::tempDir() + "/kinematic_density.snap";
  saveSnapshot(*half, spec, path);
  half.reset();
  const Snapshot snap = Snapshot::read(path);
  // As an older eddy stored them: the rotating paddle with a density, the
  // piston with a mass.
  auto bodies = nlohmann::json::parse(snap.string("sph/bodies"));
  ASSERT_EQ(bodies.size(), 3u);
  ASSERT_FALSE(bodies[0].contains("density"));
  bodies[0]["density"] = 700.0;
  bodies[1]["mass"] = 3.0;
  for (int b : {0, 1})  // what --body and a config say to them
    EXPECT_THROW(bodySpecFromJson(bodies[b], "config.json: bodies[0]"), Error) << bodies[b].dump();
  const std::string bytes = withBlob(snap, "sph/bodies", bodies.dump());
  LoadedSimulation loaded;
  try {
    loaded = loadSnapshot(test::context(), Snapshot::parse(bytes, "older.snap"));
  } catch (const Error& e) {
    FAIL() << e.what();
  }
  auto& sph = dynamic_cast<SphSim&>(*loaded.sim);
  ASSERT_NE(sph.bodies(), nullptr);
  const auto& specs = sph.bodies()->specs();
  ASSERT_EQ(specs.size(), 3u);
  EXPECT_EQ(specs[0].density, 0.0);
  EXPECT_EQ(specs[1].mass, 0.0);
  EXPECT_EQ(specs[2].density, 500.0);  // a floating body keeps its own
  EXPECT_EQ(specs[0], spec.bodies[0]);
  EXPECT_EQ(specs[1], spec.bodies[1]);
  for (int k = 0; k < K; ++k) loaded.sim->step();
  expectSameSphBits(*straight, *loaded.sim);
  // The next snapshot stores the bodies as this eddy takes them.
  const std::string again = test::tempDir() + "/kinematic_density_again.snap";
  saveSnapshot(*loaded.sim, loaded.spec, again);
  const auto resaved = nlohmann::json::parse(Snapshot::read(again).string("sph/bodies"));
  EXPECT_FALSE(resaved[0].contains("density")) << resaved[0].dump();
  EXPECT_FALSE(resaved[1].contains("mass")) << resaved[1].dump();
}

// A crafted snapshot whose velocities are 1e30 m/s: the adaptive time step
// collapses to 0, so `--steps` finishes having advanced no simulated time.
// It used to exit 0 silently; it now warns (--until ends such a run with an
// error after 1000 steps).
// A sane snapshot's run says nothing of the kind.
TEST(Snapshot, StepsThatAdvanceNoTimeAreWarnedOf) {
  const std::string dir = test::tempDir();
  const std::string cli = EDDY_CLI;
  auto r = test::run(cli, "run --device cpu --sim sph --set spacing=0.02 --set depth=0.06 --steps 2 --quiet "
                          "--save " + dir + "/good.snap");
  ASSERT_EQ(r.code, 0) << r.err;
  const Snapshot good = Snapshot::read(dir + "/good.snap");
  const size_t n = size_t(good.blob("sph/vel").size() / sizeof(cl_float4));
  ASSERT_GT(n, 0u);
  std::vector<cl_float4> v(n);
  for (auto& x : v) x = cl_float4{{1e30f, -1e30f, 1e30f, 0.0f}};
  {
    std::ofstream f(dir + "/fast.snap", std::ios::binary);
    f << withBlob(good, "sph/vel", std::string(reinterpret_cast<const char*>(v.data()), n * sizeof(cl_float4)));
  }
  r = test::run(cli, "run --device cpu --load " + dir + "/good.snap --steps 3 --json");
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.err.find("advanced no simulated time"), std::string::npos) << r.err;
  r = test::run(cli, "run --device cpu --load " + dir + "/fast.snap --steps 3 --json");
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.err.find("the 3 steps advanced no simulated time"), std::string::npos) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_TRUE(j.contains("warnings")) << r.out;
  EXPECT_NE(j["warnings"].dump().find("time step collapsed"), std::string::npos) << r.out;
}
