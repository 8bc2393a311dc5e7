// SPH scenes: dam_break (Martin & Moyce 1952), double_dam_break, drop.
#include "rng.hpp"
#include "sph.hpp"

#include <cmath>
#include <limits>
#include <sstream>

namespace eddy {

const std::vector<std::string>& sphSceneNames() {
  static const std::vector<std::string> names = {"dam_break", "drop", "double_dam_break"};
  return names;
}

namespace {

// Whole particles of spacing dx in a length, at least one; error names the parameter.
int count(double length, double dx, const char* name) {
  const double c = std::round(length / dx);
  if (c < 1) {
    std::ostringstream o;
    o << "SPH scene: " << name << " = " << length << " m is less than one particle spacing ("
      << dx << " m)";
    throw Error(o.str());
  }
  if (c > 1e6) {
    std::ostringstream o;
    o << "SPH scene: " << name << " / spacing = " << c << " particles along one axis is too many";
    throw Error(o.str());
  }
  return int(c);
}

struct Builder {
  double dx, rho0, B, g, jitter;
  int nz;
  Rng rng;
  bool countOnly = false;  // count the particles, store nothing (sphSceneSize)
  std::vector<SphParticle> out;
  size_t count = 0;

  void add(double x, double y, double z) {
    ++count;
    if (countOnly) return;
    SphParticle p;
    p.x = x + (jitter > 0 ? rng.uniform(-jitter, jitter) * dx : 0.0);
    p.y = y + (jitter > 0 ? rng.uniform(-jitter, jitter) * dx : 0.0);
    p.z = z + (jitter > 0 ? rng.uniform(-jitter, jitter) * dx : 0.0);
    out.push_back(p);
  }
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

namespace {

// Builds the scene, or with countOnly only counts its particles (the same
// geometry code either way: the count is exactly what a build gives).
SphSetup buildScene(std::string_view scene, const Params& P, bool countOnly, size_t& total) {
  // Only WCSPH's equation of state wants the squeezed hydrostatic start.
  const bool compressed = !P.find("solver") || P.getChoice("solver") == "wcsph";
  const double dx = P.get("spacing");
  const double L = P.get("tank_length"), H = P.get("tank_height");
  const double g = P.get("gravity"), rho0 = P.get("rest_density");
  SphSetup s;
  s.spacing = dx;
  const int nz = count(P.get("depth"), dx, "depth");
  s.tank = {L, H, nz * dx};

  // The scene's tallest water and largest speed fix the automatic sound speed,
  // which the hydrostatic initial compression needs too.
  double top = 0;
  if (scene == "dam_break" || scene == "double_dam_break") top = P.get("column_height");
  else if (scene == "drop") top = P.get("drop_height") + P.get("drop_radius");
  else {
    throw Error("unknown SPH scene '" + std::string(scene) +
                "'; known scenes: " + joinNames(sphSceneNames()));
  }
  s.expectedSpeed = std::sqrt(2.0 * std::max(g, 1e-3) * top);
  const double c0 = sphSoundSpeed(P.get("speed_of_sound"), s.expectedSpeed);
  const double B = compressed ? rho0 * c0 * c0 / 7.0 : std::numeric_limits<double>::infinity();
  Builder b{dx, rho0, B, g, P.get("jitter"), nz, Rng(uint64_t(P.getInt("seed"))), countOnly, {}, 0};

  auto fits = [&](double need, double have, const std::string& what, const std::string& limit) {
    if (need > have * (1 + 1e-9)) {
      std::ostringstream o;
      o << "SPH scene " << scene << ": " << what << " (" << need << " m) does not fit in "
        << limit << " (" << have << " m)";
      throw Error(o.str());
    }
  };
  if (scene == "dam_break" || scene == "double_dam_break") {
    const int nx = count(P.get("column_width"), dx, "column_width");
    const int ny = count(P.get("column_height"), dx, "column_height");
    const int columns = scene == "dam_break" ? 1 : 2;
    fits(columns * nx * dx, L, columns == 1 ? "column_width" : "2 x column_width", "tank_length");
    fits(ny * dx, H, "column_height", "tank_height");
    b.column(0.0, nx, ny);
    if (columns == 2) b.column(L - nx * dx, nx, ny);
  } else {  // drop: a pool and a sphere (clipped by the slab when depth < 2r)
    const double R = P.get("drop_radius"), yc = P.get("drop_height");
    const double pool = P.get("pool_height");
    const int ny = pool > 0 ? count(pool, dx, "pool_height") : 0;
    fits(ny * dx, H, "pool_height", "tank_height");
    if (yc - R < ny * dx + 0.5 * dx)
      throw Error("SPH scene drop: the drop (drop_height - drop_radius = " +
                  std::to_string(yc - R) + " m) must start above the pool surface (" +
                  std::to_string(ny * dx) + " m)");
    fits(yc + R, H, "drop_height + drop_radius", "tank_height");
    fits(2 * R, L, "2 x drop_radius", "tank_length");
    const int nx = count(L, dx, "tank_length");
    if (ny > 0) b.column(0.0, nx, ny);
    const double xc = 0.5 * L, zc = 0.5 * s.tank[2];
    const int k = int(std::ceil(R / dx));
    for (int j = -k; j <= k; ++j)
      for (int l = 0; l < nz; ++l)
        for (int i = 0; i < nx; ++i) {
          const double x = (i + 0.5) * dx, y = yc + j * dx, z = (l + 0.5) * dx;
          if ((x - xc) * (x - xc) + (y - yc) * (y - yc) + (z - zc) * (z - zc) <= R * R)
            b.add(x, y, z);
        }
  }
  total = b.count;
  s.particles = std::move(b.out);
  if (total == 0) throw Error("SPH scene " + std::string(scene) + ": no particles");
  return s;
}

}  // namespace

SphSetup makeSphScene(std::string_view scene, const Params& P) {
  size_t count = 0;
  return buildScene(scene, P, false, count);
}

SphSceneSize sphSceneSize(std::string_view scene, const Params& P) {
  size_t count = 0;
  const SphSetup s = buildScene(scene, P, true, count);
  return {count, s.tank, s.spacing};
}

SphSetup makeSphBenchScene(size_t target, const Params& params) {
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
