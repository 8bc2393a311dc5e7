#include "dfsph_reference.hpp"

#include "sph_reference.hpp"

#include <algorithm>
#include <cmath>

namespace eddy {


namespace {

// grad_i W(r_ij) = gradFactor(r) * (x_i - x_j)
double gradFactor(double r, double h) { return r > 0 ? sphKernelDW(r, h) / r : 0.0; }

// Every (j, image mask) pair of i within h, as the kernels walk them. Which
// pairs and images take part is decided in float exactly as the kernels do
// (the image 2w - x_j in float, sph_r2's uncontracted (xx + yy) + zz < h^2):
// a pair at the support's edge that the double r < h would judge the other
// way changed the neighbour count by one (CI, seed 1271127406, n = 2003);
// its kernel terms are zero or next to it either way. The terms themselves
// are in double.
template <class F>
void forPairs(const DfsphReferenceInput& in, size_t i, F&& body) {
  const float hf = float(in.h);
  const SphWalls W = sphWalls(in.pos[i], in.tank, in.h);
  for (size_t j = 0; j < in.pos.size(); ++j) {
    if (!sphIsNeighbour(in.pos[i], in.pos[j], hf)) continue;
    for (unsigned s = W.mask;; s = (s - 1) & W.mask) {
      if (s != 0 && !sphIsImage(s)) continue;
      double d[3], vj[3], r2 = 0;
      cl_float4 image = in.pos[j];
      for (int a = 0; a < 3; ++a) {
        if ((s >> a) & 1u) image.s[a] = 2.0f * float(W.w0[a]) - in.pos[j].s[a];
        if ((s >> (a + 3)) & 1u) image.s[a] = 2.0f * float(W.w1[a]) - in.pos[j].s[a];
        const double q = sphMirror(in.pos[j].s[a], s, a, W);
        vj[a] = in.vel.empty() ? 0.0 : (sphMirrorFlips(s, a) ? -1.0 : 1.0) * double(in.vel[j].s[a]);
        d[a] = double(in.pos[i].s[a]) - q;
        r2 += d[a] * d[a];
      }
      if (s == 0 || sphIsNeighbour(in.pos[i], image, hf)) body(j, s, d, std::sqrt(r2), vj);
      if (s == 0) break;
    }
  }
}

}  // namespace

void dfsphReferenceDensity(const DfsphReferenceInput& in, std::vector<double>& rho,
                           std::vector<double>& D, std::vector<unsigned>& count) {
  const size_t n = in.pos.size();
  rho.assign(n, 0);
  D.assign(n, 0);
  count.assign(n, 0);
  for (size_t i = 0; i < n; ++i) {
    double sw = 0, g[3] = {0, 0, 0}, g2 = 0;
    forPairs(in, i, [&](size_t, unsigned, const double* d, double r, const double*) {
      sw += sphKernelW(r, in.h);
      const double f = in.mass * gradFactor(r, in.h);
      for (int a = 0; a < 3; ++a) {
        g[a] += f * d[a];
        g2 += f * d[a] * f * d[a];
      }
      if (r > 0) ++count[i];
    });
    rho[i] = in.mass * sw;
    D[i] = g[0] * g[0] + g[1] * g[1] + g[2] * g[2] + g2;
  }
}

double dfsphReferenceGradCondition(const DfsphReferenceInput& in, size_t i) {
  double num = 0, den = 0;
  forPairs(in, i, [&](size_t, unsigned, const double*, double r, const double*) {
    const double q = r / in.h;
    if (!(q > 0 && q < 1)) return;
    const double w = q * (1 - q) * (1 - q) * (1 - q);
    num += w * (1 + 3 * q / (1 - q));
    den += w;
  });
  return den > 0 ? num / den : 1.0;
}

namespace {

// The smallest eigenvalue of the symmetric (xx, yy, zz, xy, xz, yz), by the
// trigonometric solution of the characteristic cubic (O. K. Smith 1961,
// "Eigenvalues of a symmetric 3 x 3 matrix", CACM 4:168).
double smallestEigenvalue(const std::array<double, 6>& m) {
  const double p1 = m[3] * m[3] + m[4] * m[4] + m[5] * m[5];
  const double q = (m[0] + m[1] + m[2]) / 3;
  if (p1 == 0) return std::min({m[0], m[1], m[2]});
  const double a = m[0] - q, b = m[1] - q, c = m[2] - q;
  const double p = std::sqrt((a * a + b * b + c * c + 2 * p1) / 6);
  // det((M - q I) / p) / 2
  const double r = (a * (b * c - m[5] * m[5]) - m[3] * (m[3] * c - m[5] * m[4]) +
                    m[4] * (m[3] * m[5] - b * m[4])) / (2 * p * p * p);
  const double phi = std::acos(std::clamp(r, -1.0, 1.0)) / 3;
  return q + 2 * p * std::cos(phi + 2 * M_PI / 3);
}

}  // namespace

std::array<double, 6> dfsphReferenceGradient(const DfsphReferenceInput& in, size_t* samples,
                                             std::vector<size_t>* borderline,
                                             const std::vector<size_t>* flip) {
  const size_t n = in.pos.size();
  std::array<double, 6> sum{};
  size_t count = 0;
  const float threshold = EDDY_DFSPH_GRAD_FULL_SUPPORT * float(in.rho0);
  if (borderline) borderline->clear();
  for (size_t i = 0; i < n; ++i) {
    if (!(float(in.rho[i]) >= threshold)) continue;
    std::array<double, 6> m{};
    forPairs(in, i, [&](size_t, unsigned, const double* d, double r, const double*) {
      const double f = -(in.mass / in.rho0) * in.gradScale * gradFactor(r, in.h);
      m[0] += f * d[0] * d[0];
      m[1] += f * d[1] * d[1];
      m[2] += f * d[2] * d[2];
      m[3] += f * d[0] * d[1];
      m[4] += f * d[0] * d[2];
      m[5] += f * d[1] * d[2];
    });
    const double margin = smallestEigenvalue(m) - double(EDDY_DFSPH_GRAD_MIN_EIGEN);
    if (borderline && std::fabs(margin) < 1e-4) borderline->push_back(i);
    bool interior = margin >= 0;
    if (flip && std::find(flip->begin(), flip->end(), i) != flip->end()) interior = !interior;
    if (!interior) continue;
    for (int k = 0; k < 6; ++k) sum[k] += m[k];
    ++count;
  }
  if (samples) *samples = count;
  std::array<double, 6> c{1, 1, 1, 0, 0, 0};
  if (count < EDDY_DFSPH_GRAD_MIN_SAMPLES) return c;
  const double a = sum[0] / count, b = sum[1] / count, cc = sum[2] / count;
  const double d = sum[3] / count, e = sum[4] / count, f = sum[5] / count;
  // The inverse of [[a, d, e], [d, b, f], [e, f, cc]] by cofactors.
  const double ixx = b * cc - f * f, ixy = e * f - d * cc, ixz = d * f - b * e;
  const double det = a * ixx + d * ixy + e * ixz;
  if (!(det > 0)) return c;
  const std::array<double, 6> inv{ixx / det,           (a * cc - e * e) / det, (a * b - d * d) / det,
                                  ixy / det,           ixz / det,              (d * e - a * f) / det};
  for (int k = 0; k < 6; ++k)
    if (!(std::fabs(inv[k] - (k < 3 ? 1.0 : 0.0)) <= double(EDDY_DFSPH_GRAD_LIMIT))) return c;
  return inv;
}

void dfsphReferenceRate(const DfsphReferenceInput& in, std::vector<double>& rate,
                        std::vector<double>& scale) {
  const size_t n = in.pos.size();
  rate.assign(n, 0);
  scale.assign(n, 0);
  for (size_t i = 0; i < n; ++i)
    forPairs(in, i, [&](size_t, unsigned, const double* d, double r, const double* vj) {
      double t = 0;
      for (int a = 0; a < 3; ++a) t += (double(in.vel[i].s[a]) - vj[a]) * d[a];
      t *= in.mass * gradFactor(r, in.h);
      rate[i] += t;
      scale[i] += std::fabs(t);
    });
}

void dfsphReferencePressureAccel(const DfsphReferenceInput& in, const std::vector<double>& k,
                                 std::vector<std::array<double, 3>>& acc,
                                 std::vector<double>& scale) {
  const size_t n = in.pos.size();
  acc.assign(n, {0, 0, 0});
  scale.assign(n, 0);
  for (size_t i = 0; i < n; ++i)
    forPairs(in, i, [&](size_t j, unsigned, const double* d, double r, const double*) {
      const double f = -in.gradScale * in.mass * (k[i] + k[j]) * gradFactor(r, in.h);
      for (int a = 0; a < 3; ++a) {
        acc[i][a] += f * d[a];
        scale[i] += std::fabs(f * d[a]);
      }
    });
}

}  // namespace eddy
