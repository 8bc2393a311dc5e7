// N-body initial conditions: built-in scenes and the CSV reader.
#include "nbody.hpp"
#include "io.hpp"
#include "rng.hpp"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>

namespace eddy {

namespace {

constexpr double kPi = 3.141592653589793;

void toCentreOfMassFrame(std::vector<Body>& b) {
  double M = 0, c[6] = {0, 0, 0, 0, 0, 0};
  for (const auto& p : b) {
    M += p.m;
    c[0] += p.m * p.x; c[1] += p.m * p.y; c[2] += p.m * p.z;
    c[3] += p.m * p.vx; c[4] += p.m * p.vy; c[5] += p.m * p.vz;
  }
  if (M <= 0) return;
  for (auto& p : b) {
    p.x -= c[0] / M; p.y -= c[1] / M; p.z -= c[2] / M;
    p.vx -= c[3] / M; p.vy -= c[4] / M; p.vz -= c[5] / M;
  }
}

// Plummer sphere of total mass M and scale radius a (G = 1), centred at the
// origin, sampled after Aarseth, Henon & Wielen (1974), A&A 37, 183:
// radii from the inverted cumulative mass M(r)/M = r^3/(r^2+a^2)^(3/2), cut at
// 0.999 of the mass (as AMUSE does); speeds v = q v_esc(r) with q drawn by
// rejection from g(q) = q^2 (1-q^2)^(7/2) (comparison height 0.1).
void appendPlummer(std::vector<Body>& out, size_t n, double M, double a, Rng& rng) {
  const double mass = M / double(n);
  for (size_t i = 0; i < n; ++i) {
    const double X = rng.uniformOpen() * 0.999;
    const double r = a / std::sqrt(std::pow(X, -2.0 / 3.0) - 1.0);
    Body b;
    rng.unitVector(b.x, b.y, b.z);
    b.x *= r; b.y *= r; b.z *= r;
    double q = 0;
    for (;;) {
      q = rng.uniform();
      const double g = q * q * std::pow(1.0 - q * q, 3.5);
      if (rng.uniform(0.0, 0.1) < g) break;
    }
    const double v = q * std::sqrt(2.0 * M) * std::pow(r * r + a * a, -0.25);
    rng.unitVector(b.vx, b.vy, b.vz);
    b.vx *= v; b.vy *= v; b.vz *= v;
    b.m = mass;
    out.push_back(b);
  }
}

// A disk galaxy: Plummer bulge (bulgeFraction of the mass, scale aBulge) and an
// exponential disk (scale length Rd, sech^2-ish thickness z0) on circular
// orbits, with a small velocity dispersion. Spin about +z. The circular speed
// is that of the bulge (Plummer; its scale widened by the default softening,
// 0.01, as the forces see it) plus that of a thin exponential disk, Freeman
// (1970), ApJ 160, 811, eq. 10:
//     v_d^2(R) = 4 pi G Sigma_0 Rd y^2 [I0(y) K0(y) - I1(y) K1(y)],  y = R / (2 Rd),
// Sigma_0 = Md / (2 pi Rd^2). (The spherical M(<R) / R used before gave 0.81-0.84
// of the radial pull from R = 2 Rd on: disks that fell inwards at the start.)
std::vector<Body> diskGalaxy(size_t n, double M, Rng& rng) {
  const double bulgeFraction = 0.25, aBulge = 0.08, Rd = 0.25, z0 = 0.02, Rmax = 6 * Rd;
  const double eps = 0.01;  // the default softening
  const size_t nb = std::max<size_t>(n > 1 ? 1 : 0, size_t(std::llround(n * bulgeFraction)));
  const size_t nd = n - nb;
  std::vector<Body> g;
  g.reserve(n);
  const double Mb = nd == 0 ? M : M * double(nb) / double(n), Md = M - Mb;
  appendPlummer(g, nb, Mb, aBulge, rng);
  auto vc2 = [&](double R) {
    const double a2 = aBulge * aBulge + eps * eps;
    const double bulge = Mb * R * R / std::pow(R * R + a2, 1.5);
    const double y = std::max(R, 1e-6) / (2 * Rd);
    const double disk = 2 * Md / Rd * y * y *
                        (std::cyl_bessel_i(0.0, y) * std::cyl_bessel_k(0.0, y) -
                         std::cyl_bessel_i(1.0, y) * std::cyl_bessel_k(1.0, y));
    return bulge + disk;
  };
  for (size_t i = 0; i < nd; ++i) {
    double R;
    do R = -Rd * std::log(rng.uniformOpen() * rng.uniformOpen());  // Gamma(2, Rd): exponential disk
    while (R > Rmax);
    const double phi = 2 * kPi * rng.uniform();
    Body b;
    b.x = R * std::cos(phi);
    b.y = R * std::sin(phi);
    b.z = z0 * 0.5 * std::log(rng.uniformOpen() / rng.uniformOpen());  // logistic ~ sech^2
    const double vc = std::sqrt(std::max(vc2(R), 0.0));
    const double sigma = 0.05 * vc;
    b.vx = -vc * std::sin(phi) + sigma * rng.normal();
    b.vy = vc * std::cos(phi) + sigma * rng.normal();
    b.vz = 0.5 * sigma * rng.normal();
    b.m = Md / double(nd);
    g.push_back(b);
  }
  toCentreOfMassFrame(g);
  return g;
}

void rotateX(Body& b, double angle) {
  const double c = std::cos(angle), s = std::sin(angle);
  const double y = c * b.y - s * b.z, z = s * b.y + c * b.z;
  const double vy = c * b.vy - s * b.vz, vz = s * b.vy + c * b.vz;
  b.y = y; b.z = z; b.vy = vy; b.vz = vz;
}

}  // namespace

const std::vector<std::string>& nbodySceneNames() {
  static const std::vector<std::string> names = {"plummer", "galaxies", "collapse"};
  return names;
}

std::vector<Body> makeNBodyScene(std::string_view scene, size_t n, uint64_t seed, double G) {
  if (n == 0) throw Error("N-body scene: the body count must be at least 1");
  if (!(G >= 0) || !std::isfinite(G)) throw Error("N-body scene: G must be a finite number >= 0");
  Rng rng(seed);
  std::vector<Body> b;
  b.reserve(n);
  if (scene == "plummer") {
    // Henon units (G = M = 1, E = -1/4): scale radius a = 3 pi / 16.
    appendPlummer(b, n, 1.0, 3.0 * kPi / 16.0, rng);
    if (n > 1) toCentreOfMassFrame(b);
  } else if (scene == "galaxies") {
    // Two equal galaxies of mass 1/2 each on a prograde/inclined near-parabolic
    // encounter: start 3 apart in x, offset 0.6 in y (impact parameter).
    const size_t n1 = n / 2 + n % 2, n2 = n / 2;
    auto g1 = diskGalaxy(n1, n2 ? 0.5 : 1.0, rng);
    auto g2 = n2 ? diskGalaxy(n2, 0.5, rng) : std::vector<Body>{};
    const double sep = 3.0, impact = 0.6;
    const double vrel = std::sqrt(2.0 * 1.0 / std::sqrt(sep * sep + impact * impact));  // parabolic
    for (auto& p : g1) {
      p.x -= sep / 2; p.y -= impact / 2; p.vx += vrel / 2;
    }
    for (auto& p : g2) {
      rotateX(p, kPi / 3);  // 60 degree inclination
      p.x += sep / 2; p.y += impact / 2; p.vx -= vrel / 2;
    }
    b = std::move(g1);
    b.insert(b.end(), g2.begin(), g2.end());
    if (n > 1) toCentreOfMassFrame(b);
  } else if (scene == "collapse") {
    // Cold uniform sphere: radius 1, mass 1, at rest. Free-fall time pi/(2 sqrt 2).
    for (size_t i = 0; i < n; ++i) {
      Body p;
      do {
        p.x = rng.uniform(-1, 1); p.y = rng.uniform(-1, 1); p.z = rng.uniform(-1, 1);
      } while (p.x * p.x + p.y * p.y + p.z * p.z > 1.0);
      p.m = 1.0 / double(n);
      b.push_back(p);
    }
  } else {
    throw Error("unknown N-body scene '" + std::string(scene) +
                "'; known scenes: " + joinNames(nbodySceneNames()));
  }
  // Built for G = 1: speeds scale as sqrt(G M / r), so sqrt(G) keeps the
  // scene in the same balance at any G (at G = 0, no gravity: at rest).
  if (G != 1.0) {
    const double k = std::sqrt(G);
    for (auto& p : b) {
      p.vx *= k; p.vy *= k; p.vz *= k;
    }
  }
  return b;
}

std::vector<Body> readBodiesCsv(const std::string& path) {
  // A folder opens as a stream on Linux and then fails at the first read
  // with libstdc++'s "basic_filebuf::underflow error reading the file".
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    throw Error(path + ": is a folder, not an initial-conditions file (CSV)");
  std::ifstream in(path);
  if (!in) throw Error(path + ": cannot open initial-conditions file: " + std::strerror(errno));
  return parseBodiesCsv(in, path);
}

std::vector<Body> parseBodiesCsv(std::istream& in, const std::string& path) {
  std::string line;
  size_t lineNo = 0;
  bool header = false;
  std::vector<Body> out;
  auto fail = [&](const std::string& why) {
    throw Error(path + ":" + std::to_string(lineNo) + ": " + why);
  };
  // One line into `line`, at most kMaxCsvLine characters; false at the end.
  auto nextLine = [&]() {
    line.clear();
    auto* buf = in.rdbuf();
    if (!buf) return false;
    bool any = false;
    for (int c; (c = buf->sbumpc()) != std::char_traits<char>::eof();) {
      any = true;
      if (c == '\n') return true;
      if (line.size() >= kMaxCsvLine) {
        ++lineNo;
        fail("line longer than " + std::to_string(kMaxCsvLine) + " characters");
      }
      line.push_back(char(c));
    }
    return any;
  };
  while (nextLine()) {
    ++lineNo;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    // A UTF-8 byte order mark (spreadsheet exports) before the header.
    if (lineNo == 1 && line.rfind("\xEF\xBB\xBF", 0) == 0) line.erase(0, 3);
    if (line.empty() || line[0] == '#') continue;
    std::vector<std::string> cells;
    std::stringstream ss(line);
    std::string cell;
    while (std::getline(ss, cell, ',')) cells.push_back(cell);
    if (!line.empty() && line.back() == ',') cells.push_back("");
    if (!header) {
      static const char* expect[] = {"x", "y", "z", "vx", "vy", "vz", "m"};
      bool ok = cells.size() == 7;
      for (size_t i = 0; ok && i < 7; ++i) {
        std::string c = cells[i];
        c.erase(0, c.find_first_not_of(" \t"));
        c.erase(c.find_last_not_of(" \t") + 1);
        ok = c == expect[i];
      }
      if (!ok) fail("expected the header 'x,y,z,vx,vy,vz,m', got '" + printable(line) + "'");
      header = true;
      continue;
    }
    if (cells.size() != 7)
      fail("expected 7 values (x,y,z,vx,vy,vz,m), got " + std::to_string(cells.size()));
    double v[7];
    static const char* names[] = {"x", "y", "z", "vx", "vy", "vz", "m"};
    for (size_t i = 0; i < 7; ++i)
      if (!parseDouble(cells[i], v[i]))
        fail("column '" + std::string(names[i]) + "': '" + cells[i] +
             "' is not a finite number");
    // The device computes in float: a value beyond its range would be inf
    // there (and be reported as a blow-up at step 0).
    for (size_t i = 0; i < 7; ++i)
      if (std::fabs(v[i]) > double(std::numeric_limits<float>::max()))
        fail("column '" + std::string(names[i]) + "': " + cells[i] +
             " is beyond the float range (magnitude at most " +
             formatNumber(double(std::numeric_limits<float>::max())) +
             "; the simulation computes in single precision)");
    if (v[6] <= 0) fail("mass must be positive, got " + cells[6]);
    // ... also in single precision: 1e-50 became 0 there, a massless run,
    // and a subnormal mass (below 1.2e-38) kept too few digits for its force
    // (up to 100 % off).
    if (!(std::fabs(double(float(v[6]))) >= double(std::numeric_limits<float>::min())))
      fail("mass " + cells[6] + " is below single precision's normal range (the simulation computes in float: "
           "a mass must be at least " + formatSignificant(double(std::numeric_limits<float>::min()), 3) + ")");
    if (out.size() >= (size_t(1) << 31) - 1) fail("too many bodies (limit 2^31 - 1)");
    out.push_back(Body{v[0], v[1], v[2], v[3], v[4], v[5], v[6]});
  }
  if (in.bad()) throw Error(path + ": read error");
  if (!header) throw Error(path + ": empty file; expected the header 'x,y,z,vx,vy,vz,m'");
  if (out.empty()) throw Error(path + ": no bodies after the header");
  // Gravity takes differences of positions in float: bodies further apart
  // than its range (3e38 and -3e38) gave infinities, then NaN, at step 0.
  const double flt = double(std::numeric_limits<float>::max());
  for (int a = 0; a < 3; ++a) {
    auto coord = [a](const Body& b) { return a == 0 ? b.x : a == 1 ? b.y : b.z; };
    const auto [lo, hi] = std::minmax_element(out.begin(), out.end(),
                                              [&](const Body& p, const Body& q) { return coord(p) < coord(q); });
    if (coord(*hi) - coord(*lo) > flt)
      throw Error(path + ": the bodies span " + formatSignificant(coord(*hi) - coord(*lo), 3) + " in " +
                  std::string(1, char('x' + a)) + " (from " + formatSignificant(coord(*lo), 3) + " to " +
                  formatSignificant(coord(*hi), 3) + "): the distances between them are beyond the float range (" +
                  formatSignificant(flt, 3) + "; the simulation computes in single precision)");
  }
  return out;
}

}  // namespace eddy
