// SPH scenes: dam_break (Martin & Moyce 1952), double_dam_break, drop,
// lobovsky_dam_break (Lobovsky et al. 2014, with its sensors as probes),
// spheric_dam_break (SPHERIC Benchmark Test 2, Kleefsman et al. 2005) and
// mesh_obstacle (a dam break against data/meshes/obstacle.stl).
#include "bodies.hpp"
#include "io.hpp"
#include "number_text.hpp"
#include "registry.hpp"
#include "rng.hpp"
#include "shape_spec_io.hpp"
#include "sph.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <limits>
#include <optional>
#include <sstream>

namespace eddy {

namespace {

// Whole particles of spacing dx in a length (rounded to the nearest, so a
// length of at least half a spacing gives one), at least one; the error names
// the parameter and says what the check is.
int count(double length, double dx, const char* name) {
  const double c = std::round(length / dx);
  if (c < 1) {
    std::ostringstream o;
    o << "SPH scene: " << name << " = " << length << " m rounds to no particle layer: it is less than "
      << "half a particle spacing (" << dx << " m; lengths are rounded to whole spacings, at least one)";
    throw Error(o.str());
  }
  if (c > 1e6) {
    std::ostringstream o;
    o << "SPH scene: " << name << " / spacing = " << c << " particles along one axis is too many";
    throw Error(o.str());
  }
  return int(c);
}

class SolidCover;
// Thrown by a Builder with a `probe` at the first site the probe's solids leave.
struct SiteLeft {};

struct Builder {
  double dx, rho0, B, g, jitter;
  int nz;
  Rng rng;
  bool countOnly = false;  // count the particles, store nothing (sphSceneSize)
  std::vector<SphParticle> out;
  size_t count = 0;
  // Set: store nothing, but throw SiteLeft at the first site these solids
  // do not cover (a walk that stops as soon as it has its answer).
  const SolidCover* probe = nullptr;

  void add(double x, double y, double z);
  // Hydrostatic compression of a layer at (uncompressed) depth d below the
  // surface: rho/rho0 = (1 + rho0 g d / B)^(1/7) (Tait), so its thickness is dx / that.
  double layer(double d) const { return dx / std::pow(1.0 + rho0 * g * d / B, 1.0 / 7.0); }

  // Column of nx x ny x nz particles resting on the floor from x = x0, layers
  // compressed as in hydrostatic equilibrium (starts near rest, no shock).
  void column(double x0, int nx, int ny) {
    if (countOnly) {  // 64-bit: nx * ny * nz can pass 2^31
      count += size_t(nx) * size_t(ny) * size_t(nz);
      return;
    }
    double y = 0;
    for (int k = 0; k < ny; ++k) {
      const double t = layer((ny - k - 0.5) * dx);
      const double yc = y + 0.5 * t;
      y += t;
      for (int l = 0; l < nz; ++l)
        for (int i = 0; i < nx; ++i) add(x0 + (i + 0.5) * dx, yc, (l + 0.5) * dx);
    }
  }
};

}  // namespace

std::string sphDataFile(const std::string& relative) {
  // EDDY_DATA_DIR (environment) first, then the source tree's data/.
  const char* env = std::getenv("EDDY_DATA_DIR");
  const std::string dir = env && *env ? std::string(env) : std::string(EDDY_DATA_DIR);
  return dir + "/" + relative;
}

namespace {

// Whether a fluid site lies inside one of the solids or closer than
// `clearance` to its surface, each extent of a primitive too thin for the
// boundary `inset` widened by what its inset falls short there
// (dropInsideSolids drops such sites).
class SolidCover {
 public:
  SolidCover(const std::vector<SphSolid>& solids, double clearance, double inset)
      : solids_(solids), clearance_(clearance) {
    for (const auto& so : solids) {
      ShapeSpec grown = so.spec;
      for (int a = 0; a < boundaryInsetExtents(so.spec.kind); ++a)
        grown.size[a] += 2 * (inset - boundaryInsetOf(inset, 0.5 * so.spec.size[a]));
      shapes_.push_back(makeShape(grown));
      rot_.push_back(rotationMatrix(so.spec.pose.rotationDeg));
    }
  }
  bool covers(const SphParticle& p) const {
    for (size_t k = 0; k < solids_.size(); ++k) {
      const Vec3d l = poseToLocal(solids_[k].spec.pose, rot_[k], {p.x, p.y, p.z});
      // A site exactly `clearance` from the surface is kept, whichever side
      // of the solid it lies on: without the relative slack, rounding kept
      // it on one side of a box and dropped it on the other (a box whose
      // faces lie half a spacing from lattice columns got fluid against its
      // right face and a 1.5-spacing void at its left).
      if (shapes_[k]->sdf(l) < clearance_ * (1 - 1e-9)) return true;
    }
    return false;
  }

 private:
  const std::vector<SphSolid>& solids_;
  double clearance_;
  std::vector<std::unique_ptr<Shape>> shapes_;
  std::vector<Mat3d> rot_;
};

void Builder::add(double x, double y, double z) {
  ++count;
  if (countOnly) return;
  SphParticle p;
  p.x = x + (jitter > 0 ? rng.uniform(-jitter, jitter) * dx : 0.0);
  p.y = y + (jitter > 0 ? rng.uniform(-jitter, jitter) * dx : 0.0);
  p.z = z + (jitter > 0 ? rng.uniform(-jitter, jitter) * dx : 0.0);
  if (probe) {
    if (!probe->covers(p)) throw SiteLeft{};
    return;
  }
  out.push_back(p);
}

}  // namespace

void dropInsideSolids(const std::vector<SphSolid>& solids, double clearance, double inset,
                      const std::vector<SphParticle>& in, std::vector<SphParticle>& out) {
  const SolidCover cover(solids, clearance, inset);
  out.clear();
  out.reserve(in.size());
  for (const auto& p : in)
    if (!cover.covers(p)) out.push_back(p);
}

namespace {

// Lobovsky, Botia-Vera, Castellana, Mas-Soler & Souto-Iglesias (2014),
// "Experimental investigation of dynamic pressure loads during dam break",
// J. Fluids Struct. 48:407-434: the H = 300 mm case. A water column 0.6 m
// long and 0.3 m high against the upstream wall x = 0 of a tank 1.61 m long
// and 0.6 m high; the experiment's tank is 0.15 m wide. Here a slab of the
// `depth` parameter between the mirror side walls, at least 4 particle
// layers and at most 0.15 m (the 2-D-like comparison; depth = 0.15 is the
// full 3-D tank). Built-in probes: pressure sensors S1..S4 on the downstream
// wall x = 1.61 at heights 3, 15, 30, 80 mm; level gauges H1..H4 at x =
// 0.300, 0.865, 1.114, 1.3625 m; both at the slab's centre plane.
struct Lobovsky {
  static constexpr double kTankLength = 1.61, kTankHeight = 0.6, kWidth = 0.15;
  static constexpr double kColumnLength = 0.6, kColumnHeight = 0.3;
  static int layers(double depth, double dx) {
    return std::max(4, int(std::lround(std::min(depth, kWidth) / dx)));
  }
  static std::vector<ProbeSpec> probes(double zc) {
    std::vector<ProbeSpec> out;
    const double sensors[4] = {0.003, 0.015, 0.030, 0.080};
    const double gauges[4] = {0.300, 0.865, 1.114, 1.3625};
    for (int i = 0; i < 4; ++i)
      out.push_back({ProbeSpec::Kind::Pressure, "S" + std::to_string(i + 1), kTankLength,
                     sensors[i], zc});
    for (int i = 0; i < 4; ++i)
      out.push_back({ProbeSpec::Kind::Level, "H" + std::to_string(i + 1), gauges[i], 0.0, zc});
    return out;
  }
};

// SPHERIC Benchmark Test 2 (Kleefsman et al. 2005, "A volume-of-fluid based
// simulation method for wave impact problems", JCP 206:363; issue 12): tank
// 3.22 x 1.0 x 1.0 m (y up), a water column 1.228 m long, 0.55 m high and the
// whole 1.0 m wide against the wall x = 3.22, and a box obstacle 0.161 (x) x
// 0.161 (y) x 0.403 (z) m standing on the floor with its faces at x = 0.6635
// and 0.8245, z = 0.295 and 0.698.
constexpr double kSphericTank[3] = {3.22, 1.0, 1.0};
constexpr double kSphericColumn[2] = {1.228, 0.55};  // length (x), height (y)
// Its sensors as built-in probes: pressure P1-P4 on the obstacle's face
// x = 0.8245 (the one the water hits) at z = 0.471 and heights 0.021,
// 0.061, 0.101, 0.141 m; P5-P8 on its top y = 0.161 at z = 0.471 and
// x = 0.8035, 0.7635, 0.7235, 0.6835 m; level gauges H1-H4 at x = 0.496,
// 0.992, 1.488, 2.638 m, z = 0.5.
std::vector<ProbeSpec> sphericProbes() {
  std::vector<ProbeSpec> out;
  const double face[4] = {0.021, 0.061, 0.101, 0.141};
  for (int i = 0; i < 4; ++i)
    out.push_back({ProbeSpec::Kind::Pressure, "P" + std::to_string(i + 1), 0.8245, face[i], 0.471});
  const double top[4] = {0.8035, 0.7635, 0.7235, 0.6835};
  for (int i = 0; i < 4; ++i)
    out.push_back({ProbeSpec::Kind::Pressure, "P" + std::to_string(i + 5), top[i], 0.161, 0.471});
  const double gauge[4] = {0.496, 0.992, 1.488, 2.638};
  for (int i = 0; i < 4; ++i)
    out.push_back({ProbeSpec::Kind::Level, "H" + std::to_string(i + 1), gauge[i], 0.0, 0.5});
  return out;
}

ShapeSpec sphericObstacle() {
  ShapeSpec b;
  b.kind = ShapeKind::Box;
  // Faces x = 0.6635 / 0.8245, y = 0 / 0.161, z = 0.295 / 0.698, written as
  // decimals: the differences in double (0.16100000000000003) showed in the
  // messages that name the obstacle.
  b.size = {0.161, 0.161, 0.403};
  b.pose.position = {0.744, 0.0805, 0.4965};
  return b;
}

// mesh_obstacle: a dam break against the ramp of data/meshes/obstacle.stl
// (x in [-0.5, 0.5], rising along +x, y in [0, 0.3], z in [-0.3, 0.3]),
// scaled by 0.5 and standing on the floor at x = 1.2, mid-depth: tank 2.0 x 0.8 x 0.6 m, column 0.6 long, 0.5 high, full depth.
constexpr double kMeshTank[3] = {2.0, 0.8, 0.6};
constexpr double kMeshColumn[2] = {0.6, 0.5};
ShapeSpec meshObstacle() {
  ShapeSpec m;
  m.kind = ShapeKind::Mesh;
  m.file = sphDataFile("meshes/obstacle.stl");
  m.scale = {0.5, 0.5, 0.5};
  m.pose.position = {1.2, 0.0, 0.3};  // the water runs up the ramp
  return m;
}

// wave_tank (issue 12): a piston wave-maker at x = 0 of a 1.6 x 0.4 x 0.4 m
// tank with water 0.2 m deep, and `bodies` floating boxes (density 500
// kg/m^3, half submerged) on a grid over x in [0.4, 1.5] m.
constexpr double kWaveTank[3] = {1.6, 0.4, 0.4};
constexpr double kWaveColumn[2] = {1.6, 0.2};

std::vector<BodySpec> waveTankBodies(const Params& P) {
  std::vector<BodySpec> out;
  // 4 cm thick, from the floor to the lid and wall to wall: a piston with
  // 1 cm of clearance there (before session 22) let the water round it and
  // made waves about 25 % lower than one that spans the tank
  // (docs/PERFORMANCE.md, "piston waves against linear wave-maker theory").
  BodySpec piston;
  piston.shape.kind = ShapeKind::Box;
  piston.shape.size = {0.04, kWaveTank[1], kWaveTank[2]};
  piston.shape.pose.position = {0.1, 0.5 * kWaveTank[1], 0.5 * kWaveTank[2]};
  piston.motion = BodyMotion::Piston;
  piston.piston.amplitude = 0.04;
  piston.piston.period = 1.0;
  out.push_back(piston);
  const int n = P.getInt("bodies");
  if (n <= 0) return out;
  const double lx = 1.1, lz = kWaveTank[2] - 0.04;
  const int rows = std::max(1, int(std::floor(std::sqrt(double(n) * lz / lx))));
  const int cols = (n + rows - 1) / rows;
  const double cell = std::min(lx / cols, lz / rows);
  const double a = std::min(0.6 * cell, 0.08);
  for (int k = 0; k < n; ++k) {
    const int i = k % cols, j = k / cols;
    BodySpec box;
    box.shape.kind = ShapeKind::Box;
    box.shape.size = {a, 0.5 * a, a};
    box.shape.pose.position = {0.4 + (i + 0.5) * lx / cols, kWaveColumn[1],
                               0.02 + (j + 0.5) * lz / rows};
    box.density = 500;
    out.push_back(box);
  }
  return out;
}

// What building a scene needs besides its own definition.
struct Fill {
  const std::string& scene;
  const Params& P;
  double dx;
  SphSetup& s;
  Builder& b;
  // Throws when `need` does not fit in `have` (both in m), naming both.
  void fits(double need, double have, const std::string& what, const std::string& limit) const {
    if (need > have * (1 + 1e-9)) {
      std::ostringstream o;
      o << "SPH scene " << scene << ": " << what << " (" << need << " m) does not fit in " << limit << " (" << have
        << " m)";
      throw Error(o.str());
    }
  }
  // The dam-break columns of the parameter scenes: one against x = 0, or two.
  void columns(int count) const {
    const int nx = eddy::count(P.get("column_width"), dx, "column_width");
    const int ny = eddy::count(P.get("column_height"), dx, "column_height");
    const double L = s.tank[0];
    fits(count * nx * dx, L, count == 1 ? "column_width" : "2 x column_width", "tank_length");
    fits(ny * dx, s.tank[1], "column_height", "tank_height");
    b.column(0.0, nx, ny);
    if (count == 2) b.column(L - nx * dx, nx, ny);
  }
  // A fixed scene's column (length x height, m) from x0, rounded to whole
  // particles (`down`: rounded down, so that it fits).
  void fixedColumn(double x0, const double col[2], bool down, bool atFarWall) const {
    const auto whole = [&](double len) {
      const double q = std::min(len / dx, 2e6);
      return std::max(1, int(down ? std::floor(q + 1e-9) : std::round(q)));
    };
    const int nx = whole(col[0]), ny = whole(col[1]);
    if (nx > 1000000 || ny > 1000000 || b.nz > 1000000)
      throw Error("SPH scene " + scene + ": spacing " + std::to_string(dx) +
                  " m gives too many particles along one axis");
    b.column(atFarWall ? s.tank[0] - nx * dx : x0, nx, ny);
  }
};

// The tank of the parameter scenes: tank_length x tank_height x whole
// layers of `depth`.
struct Tank {
  std::array<double, 3> size;
  int layers;  // particle layers across z
};
Tank parameterTank(const Params& P, double dx) {
  const int nz = count(P.get("depth"), dx, "depth");
  return {{P.get("tank_length"), P.get("tank_height"), nz * dx}, nz};
}
Tank fixedTank(const double t[3], double dx) {
  return {{t[0], t[1], t[2]}, std::max(1, int(std::floor(t[2] / dx + 1e-9)))};
}

// One SPH scene. Its name is an interface (--scene, config files, snapshots,
// the app's menu); the table below is the only place a scene is named.
struct SceneDef {
  std::string name;
  std::function<Tank(const Params&, double dx)> tank;
  std::function<double(const Params&)> top;  // its tallest water (m): the automatic sound speed
  std::function<std::vector<ShapeSpec>()> solids;  // its static obstacles (none: empty)
  std::function<void(const Fill&)> fill;     // fluid and probes
  std::function<std::vector<BodySpec>(const Params&)> bodies;  // rigid bodies (none: empty)
  // The geometry parameters it reads (of kSceneGeometryParams; the others
  // do not apply to it: sphSceneUnusedParams).
  std::vector<std::string> uses;
};

// The parameters that only some scenes read (the tank, the columns, the drop,
// wave_tank's bodies); spacing, jitter, seed, capacity_factor apply to all.
const std::vector<std::string> kSceneGeometryParams = {
    "tank_length", "tank_height", "depth", "column_width", "column_height",
    "pool_height", "drop_radius", "drop_height", "bodies"};

const std::vector<SceneDef>& sceneTable() {
  static const std::vector<SceneDef> table = [] {
    std::vector<SceneDef> t;
    auto columnTop = [](const Params& P) { return P.get("column_height"); };
    const std::vector<std::string> columnScene = {"tank_length", "tank_height", "depth", "column_width",
                                                  "column_height"};
    t.push_back({"dam_break", parameterTank, columnTop, {}, [](const Fill& f) { f.columns(1); }, {}, columnScene});
    t.push_back({"drop", parameterTank,
                 [](const Params& P) { return P.get("drop_height") + P.get("drop_radius"); }, {},
                 [](const Fill& f) {
                   // a pool and a sphere (clipped by the slab when depth < 2r)
                   const Params& P = f.P;
                   const double dx = f.dx, R = P.get("drop_radius"), yc = P.get("drop_height");
                   const double pool = P.get("pool_height"), L = f.s.tank[0];
                   const int ny = pool > 0 ? count(pool, dx, "pool_height") : 0;
                   f.fits(ny * dx, f.s.tank[1], "pool_height", "tank_height");
                   if (yc - R < ny * dx + 0.5 * dx)
                     throw Error("SPH scene drop: the drop (drop_height - drop_radius = " +
                                 std::to_string(yc - R) + " m) must start above the pool surface (" +
                                 std::to_string(ny * dx) + " m)");
                   f.fits(yc + R, f.s.tank[1], "drop_height + drop_radius", "tank_height");
                   f.fits(2 * R, L, "2 x drop_radius", "tank_length");
                   const int nx = count(L, dx, "tank_length");
                   if (ny > 0) f.b.column(0.0, nx, ny);
                   const double xc = 0.5 * L, zc = 0.5 * f.s.tank[2];
                   const int k = int(std::ceil(R / dx));
                   for (int j = -k; j <= k; ++j)
                     for (int l = 0; l < f.b.nz; ++l)
                       for (int i = 0; i < nx; ++i) {
                         const double x = (i + 0.5) * dx, y = yc + j * dx, z = (l + 0.5) * dx;
                         if ((x - xc) * (x - xc) + (y - yc) * (y - yc) + (z - zc) * (z - zc) <= R * R)
                           f.b.add(x, y, z);
                       }
                 },
                 {}, {"tank_length", "tank_height", "depth", "pool_height", "drop_radius", "drop_height"}});
    t.push_back({"double_dam_break", parameterTank, columnTop, {}, [](const Fill& f) { f.columns(2); }, {},
                 columnScene});
    t.push_back({"lobovsky_dam_break",
                 [](const Params& P, double dx) {
                   if (P.get("depth") > Lobovsky::kWidth * (1 + 1e-12))
                     throw Error("SPH scene lobovsky_dam_break: depth = " + formatNumber(P.get("depth")) +
                                 " m is wider than the experiment's tank (" + formatNumber(Lobovsky::kWidth) +
                                 " m): give at most " + formatNumber(Lobovsky::kWidth) + " (the full 3-D tank)");
                   const int nz = Lobovsky::layers(P.get("depth"), dx);
                   return Tank{{Lobovsky::kTankLength, Lobovsky::kTankHeight, nz * dx}, nz};
                 },
                 [](const Params&) { return Lobovsky::kColumnHeight; }, {},
                 [](const Fill& f) {
                   const int nx = count(Lobovsky::kColumnLength, f.dx, "the column length");
                   const int ny = count(Lobovsky::kColumnHeight, f.dx, "the column height");
                   f.b.column(0.0, nx, ny);
                   f.s.probes = Lobovsky::probes(0.5 * f.s.tank[2]);
                 },
                 {}, {"depth"}});
    t.push_back({"spheric_dam_break", [](const Params&, double dx) { return fixedTank(kSphericTank, dx); },
                 [](const Params&) { return kSphericColumn[1]; },
                 [] { return std::vector<ShapeSpec>{sphericObstacle()}; },
                 [](const Fill& f) {
                   f.fixedColumn(0.0, kSphericColumn, false, true);  // against the wall x = L
                   f.s.probes = sphericProbes();
                 },
                 {}, {}});
    t.push_back({"mesh_obstacle", [](const Params&, double dx) { return fixedTank(kMeshTank, dx); },
                 [](const Params&) { return kMeshColumn[1]; },
                 [] { return std::vector<ShapeSpec>{meshObstacle()}; },
                 [](const Fill& f) { f.fixedColumn(0.0, kMeshColumn, false, false); },
                 {}, {}});
    t.push_back({"wave_tank", [](const Params&, double dx) { return fixedTank(kWaveTank, dx); },
                 [](const Params&) { return kWaveColumn[1]; }, {},
                 // the water fills the tank's length: rounded down, so it fits
                 [](const Fill& f) { f.fixedColumn(0.0, kWaveColumn, true, false); }, waveTankBodies, {"bodies"}});
    return t;
  }();
  return table;
}

const SceneDef& sceneDef(std::string_view scene) {
  for (const auto& d : sceneTable())
    if (d.name == scene) return d;
  throw Error("unknown SPH scene '" + std::string(scene) + "'; known scenes: " + joinNames(sphSceneNames()));
}

// What buildScene is asked for.
enum class Build {
  particles,   // the scene
  count,       // its particle count (with solids or bodies: made to be counted)
  checkWater,  // only its geometry and that its solids leave some water (before any device)
};

// Builds the scene, or counts its particles (the same geometry code either
// way: the count is exactly what a build gives).
// `check` (may be empty): when counting, the limits a scene with solids or
// bodies must meet are checked on its upper bound before its particles are
// made, so that one too large for the device (or this machine's memory, which
// a CPU device shares) is refused instead of exhausting the host.
SphSetup buildScene(std::string_view scene, const Params& P, Build what, size_t& total,
                    const std::vector<ShapeSpec>& obstacles,
                    const std::function<void(const SphSceneSize&)>& check = {}) {
  const bool countOnly = what != Build::particles;
  const SceneDef& def = sceneDef(scene);
  // Only WCSPH's equation of state wants the squeezed hydrostatic start.
  const bool compressed = !P.find("solver") || P.getChoice("solver") == "wcsph";
  const double dx = P.get("spacing");
  const double g = P.get("gravity"), rho0 = P.get("rest_density");
  SphSetup s;
  s.spacing = dx;
  const Tank tank = def.tank(P, dx);
  s.tank = tank.size;

  // The scene's tallest water and largest speed fix the automatic sound speed,
  // which the hydrostatic initial compression needs too.
  s.expectedSpeed = std::sqrt(2.0 * std::max(g, 1e-3) * def.top(P));
  s.expectedSpeedGravity = g;
  const double inset = sphBoundaryInset(P, dx);  // the solids' boundary particles' (sampleSolid)
  // (as SphSim's, less the kinematic bodies, which are added after the water:
  // a piston faster than the water's free fall only squeezes it a little less)
  const double c0 = sphSoundSpeed(
      P.get("speed_of_sound"),
      sphFlowSpeed(s.expectedSpeed, g, g, 0,
                   sphCohesionSpeed(P.get("surface_tension"), rho0, dx, P.get("smoothing_ratio"))));
  const double B = compressed ? rho0 * c0 * c0 / 7.0 : std::numeric_limits<double>::infinity();
  // The scene's solids, then the caller's obstacles. With solids the count
  // needs the particles themselves (those inside a solid are not created).
  if (def.solids)
    for (const auto& o : def.solids()) s.solids.push_back({o, -1});
  for (const auto& o : obstacles) s.solids.push_back({o, -1});
  const auto fill = [&](bool counting, const SolidCover* probe = nullptr) {
    Builder b{dx, rho0, B, g, P.get("jitter"), tank.layers, Rng(uint64_t(P.getInt("seed"))), counting, {}, 0, probe};
    def.fill(Fill{def.name, P, dx, s, b});
    return b;
  };

  const bool takesFluid = !s.solids.empty() || def.bodies;  // solids and bodies remove fluid
  Builder b = fill(countOnly);
  if (b.count == 0) throw Error("SPH scene " + def.name + ": no particles");
  // Whether `solids` leave none of the fluid sites: the sites are walked,
  // not stored, and the walk stops at the first site left.
  const auto coversAll = [&](const std::vector<SphSolid>& solids) {
    const SolidCover cover(solids, 0.5 * dx, inset);
    try {
      fill(false, &cover);
    } catch (const SiteLeft&) {
      return false;
    }
    return true;
  };
  // The solids leave none of the fluid sites: the error, naming the solid
  // that takes them all alone if one does.
  const auto allCovered = [&] {
    std::string which = "its obstacles together cover";
    for (const SphSolid& one : s.solids)
      if (coversAll({one})) {
        which = "obstacle " + shapeSpecToString(one.spec) + " covers";
        break;
      }
    return Error("SPH scene " + def.name + ": no particles: " + which + " all of its " + std::to_string(b.count) +
                 " fluid particle sites (none lies half a spacing or more outside them)");
  };
  if (what == Build::checkWater) {
    total = b.count;
    // (past the limit: refused elsewhere; a scene with water costs next to nothing)
    if (b.count <= kMaxSphParticles && !s.solids.empty() && coversAll(s.solids)) throw allCovered();
    return s;
  }
  if (countOnly && (!takesFluid || b.count > kMaxSphParticles)) {
    // Exact without solids. With them this is the count before they take
    // their share, an upper bound: past the limit it is the answer (the
    // caller refuses it), so that such a scene is never made particle by
    // particle; within it the particles are made and counted.
    total = b.count;
    return s;
  }
  if (countOnly && check) check({b.count, s.tank, s.spacing});  // the bound, before any particle
  if (countOnly) b = fill(false);  // the particles, counted below (returned: makeSphScene with a check)
  if (!s.solids.empty()) {
    // No fluid inside a solid, nor within half a spacing of its surface
    // (the scenes' clearance from the tank walls).
    std::vector<SphParticle> kept;
    dropInsideSolids(s.solids, 0.5 * dx, inset, b.out, kept);
    if (kept.empty() && !b.out.empty()) throw allCovered();
    b.out = std::move(kept);
    b.count = b.out.size();
  }
  total = b.count;
  s.particles = std::move(b.out);
  if (def.bodies) {  // the scene's bodies (sim/sph/bodies.hpp)
    addSphBodies(s, def.bodies(P), true, inset);
    total = s.particles.size();
  }
  if (total == 0) throw Error("SPH scene " + def.name + ": no particles");
  return s;
}

}  // namespace

namespace {

std::string metres(double v) { return formatNumber(v) + " m"; }

// The world-frame bounding box of a placed shape (exact: Shape::turnedBounds).
Aabb worldBounds(const ShapeSpec& spec, const Shape& shape) {
  const Aabb t = shape.turnedBounds(rotationMatrix(spec.pose.rotationDeg));
  Aabb w;
  for (int a = 0; a < 3; ++a) {
    w.lo[a] = spec.pose.position[a] + t.lo[a];
    w.hi[a] = spec.pose.position[a] + t.hi[a];
  }
  return w;
}

// Whether a placed shape has any part inside the tank [0, tank] (a solid
// partly through a wall has; one wholly beyond a wall has not).
bool reachesIntoTank(const ShapeSpec& spec, const Shape& shape, const std::array<double, 3>& tank,
                     double spacing) {
  const Aabb w = worldBounds(spec, shape);
  for (int a = 0; a < 3; ++a) {
    const double eps = 1e-9 * std::max(1.0, tank[a]);
    if (w.hi[a] < -eps || w.lo[a] > tank[a] + eps) return false;
  }
  const Mat3d R = rotationMatrix(spec.pose.rotationDeg);
  auto inTank = [&](const Vec3d& p) {
    for (int a = 0; a < 3; ++a)
      if (p[a] < 0 || p[a] > tank[a]) return false;
    return true;
  };
  // Its centre of volume in the tank (and in the solid), or a surface sample.
  const Vec3d c = shape.centroid();
  if (shape.sdf(c) < 0 && inTank(poseToWorld(spec.pose, R, c))) return true;
  const Aabb l = shape.bounds();
  double ext = 0;
  for (int a = 0; a < 3; ++a) ext = std::max(ext, l.hi[a] - l.lo[a]);
  std::vector<Vec3d> pts, nrm;
  shape.sample(std::max(spacing, ext / 64), pts, nrm);
  for (const auto& p : pts)
    if (inTank(poseToWorld(spec.pose, R, p))) return true;
  // A lattice over the part of the tank inside its world bounds (at most
  // 65^3 points): a large solid's cap reaching into the tank has no coarse
  // surface sample there (a sphere 3 m across, 0.1 m of it in the tank, was
  // called "entirely outside").
  Aabb in;
  double step = spacing;
  for (int a = 0; a < 3; ++a) {
    in.lo[a] = std::max(0.0, w.lo[a]);
    in.hi[a] = std::min(tank[a], w.hi[a]);
    step = std::max(step, (in.hi[a] - in.lo[a]) / 64);
  }
  int cells[3];
  for (int a = 0; a < 3; ++a) cells[a] = std::max(1, int(std::ceil((in.hi[a] - in.lo[a]) / step)));
  for (int i = 0; i <= cells[0]; ++i)
    for (int j = 0; j <= cells[1]; ++j)
      for (int k = 0; k <= cells[2]; ++k) {
        const Vec3d p{in.lo[0] + (in.hi[0] - in.lo[0]) * i / cells[0], in.lo[1] + (in.hi[1] - in.lo[1]) * j / cells[1],
                      in.lo[2] + (in.hi[2] - in.lo[2]) * k / cells[2]};
        if (shape.sdf(poseToLocal(spec.pose, R, p)) < 0) return true;
      }
  // The whole tank inside the solid.
  const Vec3d mid{0.5 * tank[0], 0.5 * tank[1], 0.5 * tank[2]};
  return shape.sdf(poseToLocal(spec.pose, R, mid)) < 0;
}

std::string tankText(const std::array<double, 3>& t) {
  return formatNumber(t[0]) + " x " + formatNumber(t[1]) + " x " + formatNumber(t[2]) + " m";
}

// The world bounds a rotating body sweeps over one whole turn about its axis:
// its exact turned bounds (Shape::turnedBounds) at 720 angles, each turn of
// the body about rotate.point (so within about 1e-5 of its arm).
Aabb rotationSweep(const BodySpec& b, const Shape& shape) {
  const Vec3d u = unitDirection(b.rotate.axis);
  const Mat3d R0 = rotationMatrix(b.shape.pose.rotationDeg);
  Aabb sw;
  for (int a = 0; a < 3; ++a) {
    sw.lo[a] = std::numeric_limits<double>::infinity();
    sw.hi[a] = -sw.lo[a];
  }
  const Vec3d arm{b.shape.pose.position[0] - b.rotate.point[0], b.shape.pose.position[1] - b.rotate.point[1],
                  b.shape.pose.position[2] - b.rotate.point[2]};
  constexpr int kAngles = 720;
  for (int s = 0; s < kAngles; ++s) {
    const BodyMat Rt = bodyMatrixFromQuat(bodyAxisAngle(u, 2 * M_PI * s / kAngles));
    Mat3d R{};  // Rt R0: the body's orientation after the turn
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j)
        for (int k = 0; k < 3; ++k) R[3 * i + j] += Rt[3 * i + k] * R0[3 * k + j];
    const Vec3d at = rotate(Rt, arm);
    const Aabb t = shape.turnedBounds(R);
    for (int a = 0; a < 3; ++a) {
      sw.lo[a] = std::min(sw.lo[a], b.rotate.point[a] + at[a] + t.lo[a]);
      sw.hi[a] = std::max(sw.hi[a], b.rotate.point[a] + at[a] + t.hi[a]);
    }
  }
  return sw;
}

// "" when a body fits the tank and, floating, is thick enough; else why not.
std::string bodyProblem(const BodySpec& b, const Shape& shape, const std::array<double, 3>& tank,
                        double dx) {
  const Aabb w = worldBounds(b.shape, shape);
  static const char* axis[3] = {"x", "y", "z"};
  for (int a = 0; a < 3; ++a) {
    const double eps = 1e-9 * std::max(1.0, tank[a]);
    if (w.lo[a] < -eps || w.hi[a] > tank[a] + eps)
      return std::string("it does not fit in the tank (") + tankText(tank) + "): its " + axis[a] +
             " extent [" + formatApart(w.lo[a], 0.0) + ", " + formatApart(w.hi[a], tank[a]) + "] m is not within [0, " +
             formatNumber(tank[a]) + "]";
  }
  const auto short6 = [](double v) { return formatSignificant(v, 6); };  // no 0.20999999999999999
  const auto tooFast = [&](double peak, const std::string& how) {
    return "its fastest point moves at " + short6(peak) + " m/s (" + how + "), more than " +
           formatNumber(kSphMaxBodySpeed) + " m/s, the speed of sound in water: no SPH model here holds at that speed";
  };
  if (b.motion == BodyMotion::Piston) {
    // The whole stroke, x0 -/+ |amplitude| along the axis, stays in the tank.
    const Vec3d ax = unitDirection(b.piston.axis);
    const double A = std::fabs(b.piston.amplitude);
    for (int a = 0; a < 3; ++a) {
      const double eps = 1e-9 * std::max(1.0, tank[a]), reach = A * std::fabs(ax[a]);
      if (w.lo[a] - reach < -eps || w.hi[a] + reach > tank[a] + eps)
        return "its piston stroke (amplitude " + formatNumber(b.piston.amplitude) + " m) takes it out of the tank (" +
               tankText(tank) + "): its " + axis[a] + " extent sweeps [" + short6(w.lo[a] - reach) + ", " +
               short6(w.hi[a] + reach) + "] m, not within [0, " + formatNumber(tank[a]) + "]";
    }
    const double peak = kinematicPeakSpeed(b, w);
    if (!(peak <= kSphMaxBodySpeed))
      return tooFast(peak, "2 pi amplitude / period, amplitude " + formatNumber(b.piston.amplitude) +
                               " m, period " + formatNumber(b.piston.period) + " s");
  }
  if (b.motion == BodyMotion::Rotate) {
    // |speed| times the farthest corner of its bounds from the rotation axis.
    double arm = 0;
    const double peak = kinematicPeakSpeed(b, w, &arm);
    if (!(peak <= kSphMaxBodySpeed))
      return tooFast(peak, "speed " + formatNumber(b.rotate.speed) + " rad/s at up to " + short6(arm) +
                               " m from its axis");
    // The whole turn stays in the tank, as a piston's whole stroke does (a
    // bar longer than the tank is high, or a body orbiting an axis outside
    // it, ran until its particles blew up, "try a smaller time step").
    const Aabb sw = rotationSweep(b, shape);
    const auto vec6 = [&](const Vec3d& v) { return short6(v[0]) + "," + short6(v[1]) + "," + short6(v[2]); };
    for (int a = 0; a < 3; ++a) {
      const double eps = 1e-9 * std::max(1.0, tank[a]);
      if (sw.lo[a] < -eps || sw.hi[a] > tank[a] + eps)
        return "its rotation (about the axis " + vec6(unitDirection(b.rotate.axis)) + " through " +
               vec6(b.rotate.point) + ") takes it out of the tank (" + tankText(tank) + "): over a turn its " +
               axis[a] + " extent sweeps [" + short6(sw.lo[a]) + ", " + short6(sw.hi[a]) + "] m, not within [0, " +
               formatNumber(tank[a]) + "]";
    }
  }
  if (b.motion == BodyMotion::Floating) {
    const Aabb l = shape.bounds();
    const double thin = std::min({l.hi[0] - l.lo[0], l.hi[1] - l.lo[1], l.hi[2] - l.lo[2]});
    if (thin < kSphBodyMinSpacings * dx * (1 - 1e-9))
      return "its smallest extent is " + metres(thin) + " at spacing " + metres(dx) +
             ": a floating body must be at least " + formatNumber(kSphBodyMinSpacings) +
             " particle spacing across (thinner than one fluid particle, the fluid cannot resolve it: "
             "its boundary particles' inset does not fit and the forces on it are noise)";
  }
  return "";
}

// How deep two placed solids overlap, to a lattice's resolution: the largest
// d such that a point of a lattice over their world bounds' intersection
// (points dx / 4 apart or closer, but at most 33 an axis) lies at least d
// inside both; 0 when none lies inside both. Two solids that interpenetrate
// by t have d = t / 2 at best.
double overlapDepth(const ShapeSpec& a, const Shape& sa, const ShapeSpec& b, const Shape& sb, double dx) {
  const Aabb wa = worldBounds(a, sa), wb = worldBounds(b, sb);
  Aabb in;
  int cells[3];
  for (int k = 0; k < 3; ++k) {
    in.lo[k] = std::max(wa.lo[k], wb.lo[k]);
    in.hi[k] = std::min(wa.hi[k], wb.hi[k]);
    if (!(in.lo[k] <= in.hi[k])) return 0;  // disjoint bounds (or not finite)
    const double len = in.hi[k] - in.lo[k];
    cells[k] = int(std::clamp(std::ceil(len / (0.25 * dx)), 1.0, 32.0));
  }
  const Mat3d Ra = rotationMatrix(a.pose.rotationDeg), Rb = rotationMatrix(b.pose.rotationDeg);
  double depth = 0;
  for (int i = 0; i <= cells[0]; ++i)
    for (int j = 0; j <= cells[1]; ++j)
      for (int k = 0; k <= cells[2]; ++k) {
        const Vec3d p{in.lo[0] + (in.hi[0] - in.lo[0]) * i / cells[0], in.lo[1] + (in.hi[1] - in.lo[1]) * j / cells[1],
                      in.lo[2] + (in.hi[2] - in.lo[2]) * k / cells[2]};
        const double da = sa.sdf(poseToLocal(a.pose, Ra, p));
        if (!(da < 0)) continue;
        const double db = sb.sdf(poseToLocal(b.pose, Rb, p));
        if (db < 0) depth = std::max(depth, std::min(-da, -db));
      }
  return depth;
}

}  // namespace

std::vector<std::string> sphSceneUnusedParams(std::string_view scene) {
  const SceneDef& def = sceneDef(scene);
  std::vector<std::string> out;
  for (const auto& k : kSceneGeometryParams)
    if (std::find(def.uses.begin(), def.uses.end(), k) == def.uses.end()) out.push_back(k);
  return out;
}

void sphCheckParams(const Params& P) {
  auto ordered = [&](const std::string& lo, const std::string& hi) {
    if (!P.find(lo) || !P.find(hi)) return;
    if (P.get(lo) > P.get(hi))
      throw Error("parameters " + lo + " = " + formatNumber(P.get(lo)) + " and " + hi + " = " +
                  formatNumber(P.get(hi)) + " contradict each other: " + lo + " must not exceed " + hi);
  };
  ordered("min_dt", "max_dt");
  ordered("min_iterations", "max_iterations");
  ordered("divergence_min_iterations", "max_iterations");
}

void sphCheckSolids(const std::array<double, 3>& tank, double dx,
                    const std::vector<ShapeSpec>& obstacles, const std::vector<BodySpec>& bodies) {
  for (size_t i = 0; i < obstacles.size(); ++i) {
    const ShapeSpec& o = obstacles[i];
    const std::string name = "obstacle " + shapeSpecToString(o);
    std::unique_ptr<Shape> shape;
    try {
      shape = makeShape(o);
    } catch (const Error& e) {
      throw SolidSpecError(name + ": " + e.what(), false, i);
    }
    if (!reachesIntoTank(o, *shape, tank, dx))
      throw SolidSpecError(name + " lies entirely outside the tank (" + tankText(tank) +
                               " from the origin): it would hold boundary particles where no fluid can be",
                           false, i);
  }
  for (size_t i = 0; i < bodies.size(); ++i) {
    std::unique_ptr<Shape> shape;
    try {
      shape = makeShape(bodies[i].shape);
    } catch (const Error& e) {
      throw SolidSpecError("body " + bodySpecToString(bodies[i]) + ": " + e.what(), true, i);
    }
    if (const std::string why = bodyProblem(bodies[i], *shape, tank, dx); !why.empty())
      throw SolidSpecError("body " + bodySpecToString(bodies[i]) + ": " + why, true, i);
  }
}

void sphCheckBodyClearance(double dx, const std::vector<ShapeSpec>& solids, const std::vector<BodySpec>& bodies,
                           size_t first) {
  // An overlap of up to a spacing (a point at most half a spacing inside
  // both) is fine: a body resting on a solid, or placed a little into it,
  // which its contact pushes out. A solid thinner than two spacings (a body
  // or obstacle one particle layer deep in the app's 2-D-like slab) has no
  // point half a spacing inside it: two such solids lying wholly on each
  // other passed (the hostile sweep of session 38: a floating box inside an
  // identical obstacle fell through it). Their limit is half the thinner
  // one's thickness (its deepest point, measured on the same lattice).
  std::vector<std::unique_ptr<Shape>> solidShapes, bodyShapes;
  for (const ShapeSpec& o : solids) solidShapes.push_back(makeShape(o));
  for (const BodySpec& b : bodies) bodyShapes.push_back(makeShape(b.shape));
  // A solid's deepest inside point, found once and only for a solid that
  // overlaps another at all.
  std::vector<std::optional<double>> solidDepth(solids.size()), bodyDepth(bodies.size());
  auto inner = [&](std::optional<double>& memo, const ShapeSpec& spec, const Shape& shape) {
    if (!memo) memo = overlapDepth(spec, shape, spec, shape, dx);
    return *memo;
  };
  auto bodyInner = [&](size_t j) { return inner(bodyDepth[j], bodies[j].shape, *bodyShapes[j]); };
  auto solidInner = [&](size_t o) { return inner(solidDepth[o], solids[o], *solidShapes[o]); };
  // Refuses body i overlapping `what` by depth d > 0, the thinner of the two
  // `thinner` deep inside.
  auto check = [&](size_t i, const std::string& what, double d, double thinner) {
    const double limit = std::min(dx, thinner);
    if (!(d > 0.5 * limit)) return;
    const std::string why = limit < dx ? "they overlap by more than half the thinner one's thickness, " +
                                             formatSignificant(thinner, 3) + " m, under the particle spacing " +
                                             metres(dx)
                                       : "they overlap by more than the particle spacing, " + metres(dx);
    throw SolidSpecError("body " + bodySpecToString(bodies[i]) + ": it starts inside " + what + " (" + why +
                             "): a floating body must start clear of the obstacles and the other bodies "
                             "(touching is fine)",
                         true, i - first);
  };
  for (size_t i = first; i < bodies.size(); ++i) {
    for (size_t o = 0; o < solids.size() && bodies[i].motion == BodyMotion::Floating; ++o) {
      const double d = overlapDepth(bodies[i].shape, *bodyShapes[i], solids[o], *solidShapes[o], dx);
      if (d > 0) check(i, "obstacle " + shapeSpecToString(solids[o]), d, std::min(bodyInner(i), solidInner(o)));
    }
    for (size_t j = 0; j < bodies.size(); ++j) {
      if (j == i || (j >= first && j < i)) continue;  // each new pair once
      if (bodies[i].motion != BodyMotion::Floating && bodies[j].motion != BodyMotion::Floating) continue;
      const double d = overlapDepth(bodies[i].shape, *bodyShapes[i], bodies[j].shape, *bodyShapes[j], dx);
      if (d > 0) check(i, "body " + bodySpecToString(bodies[j]), d, std::min(bodyInner(i), bodyInner(j)));
    }
  }
}

void sphCheckScene(std::string_view scene, const Params& P, const std::vector<ShapeSpec>& obstacles,
                   const std::vector<BodySpec>& bodies) {
  const SceneDef& def = sceneDef(scene);
  const double dx = P.get("spacing");
  const std::array<double, 3> tank = def.tank(P, dx).size;
  sphCheckSolids(tank, dx, obstacles, {});
  // The scene's own geometry (a length that rounds to no particle layer, a
  // column wider than its tank, ...) is checked here too, so that it is a
  // usage error found before the device, and so is a scene whose solids
  // (its own and the obstacles) take all of its water. No particle is made:
  // the sites are counted, and walked only until one outside the solids.
  size_t count = 0;
  buildScene(scene, P, Build::checkWater, count, obstacles);
  std::vector<BodySpec> all;  // the scene's bodies, then the caller's
  if (def.bodies) {  // the scene's own bodies (e.g. wave_tank's `bodies` parameter)
    all = def.bodies(P);
    for (const BodySpec& b : all) {
      const auto shape = makeShape(b.shape);
      if (const std::string why = bodyProblem(b, *shape, tank, dx); !why.empty())
        throw Error("SPH scene " + def.name + ": bodies = " + std::to_string(P.getInt("bodies")) + " gives a " +
                    bodyMotionName(b.motion) + " " + shapeKindName(b.shape.kind) + " of " +
                    formatNumber(b.shape.size[0]) + " x " + formatNumber(b.shape.size[1]) + " x " +
                    formatNumber(b.shape.size[2]) + " m; " + why + "; give fewer bodies or a smaller spacing");
    }
  }
  sphCheckSolids(tank, dx, {}, bodies);
  std::vector<ShapeSpec> solids = def.solids ? def.solids() : std::vector<ShapeSpec>{};
  solids.insert(solids.end(), obstacles.begin(), obstacles.end());
  const size_t first = all.size();
  all.insert(all.end(), bodies.begin(), bodies.end());
  sphCheckBodyClearance(dx, solids, all, first);
}

const std::vector<std::string>& sphSceneNames() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> n;
    for (const auto& d : sceneTable()) n.push_back(d.name);
    return n;
  }();
  return names;
}

SphSetup makeSphScene(std::string_view scene, const Params& P,
                      const std::vector<ShapeSpec>& obstacles) {
  size_t count = 0;
  return buildScene(scene, P, Build::particles, count, obstacles);
}

SphSceneSize sphSceneSize(std::string_view scene, const Params& P,
                          const std::vector<ShapeSpec>& obstacles) {
  size_t count = 0;
  const SphSetup s = buildScene(scene, P, Build::count, count, obstacles);
  return {count, s.tank, s.spacing};
}

SphSetup makeSphScene(std::string_view scene, const Params& P, const std::vector<ShapeSpec>& obstacles,
                      const std::function<void(const SphSceneSize&)>& check) {
  size_t count = 0;
  SphSetup s = buildScene(scene, P, Build::count, count, obstacles, check);
  check({count, s.tank, s.spacing});
  if (!s.particles.empty()) return s;  // made to be counted (solids, bodies)
  return buildScene(scene, P, Build::particles, count, obstacles);
}

SphSetup makeSphBenchScene(size_t target, const Params& params) {
  // (no obstacles: the benchmark's block)
  return makeSphScene("dam_break", sphBenchParams(target, params));
}

Params sphBenchParams(size_t target, const Params& params) {
  // Block a x 2a x a of k x 2k x k particles: 2 k^3 = target.
  const int k = std::max(1, int(std::lround(std::cbrt(double(target) / 2.0))));
  const double a = 0.5;  // m; the spacing follows from the particle count
  Params p = params;
  const double dx = a / k;
  p.set("spacing", dx);
  p.set("column_width", a);
  p.set("column_height", 2 * a);
  p.set("depth", a);
  p.set("tank_length", 4 * a);
  p.set("tank_height", 2.5 * a);
  return p;
}

}  // namespace eddy
