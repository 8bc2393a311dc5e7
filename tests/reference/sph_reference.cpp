#include "sph_reference.hpp"

#include "sph_kernel.h"

#include <algorithm>
#include <cmath>

namespace eddy {

double sphReferencePressure(double rho, double rho0, double B) {
  return std::max(0.0, B * (std::pow(rho / rho0, 7.0) - 1.0));
}

// ---- CPU references ----------------------------------------------------------

bool sphIsNeighbour(const cl_float4& a, const cl_float4& b, float h) {
  const float dx = a.s[0] - b.s[0], dy = a.s[1] - b.s[1], dz = a.s[2] - b.s[2];
  const float xx = dx * dx, yy = dy * dy, zz = dz * dz;
  const float r2 = (xx + yy) + zz;
  return r2 < h * h;
}

SphWalls sphWalls(const cl_float4& p, const std::array<double, 3>& tank, double h) {
  const float hf = float(h);
  SphWalls W;
  for (int a = 0; a < 3; ++a) {
    const float x = p.s[a], L = float(tank[a]);
    const bool low = x <= L - x;
    W.w0[a] = low ? 0.0 : double(L);
    W.w1[a] = low ? double(L) : 0.0;
    if ((low ? x : L - x) < hf) W.mask |= 1u << a;
    if (L < hf && (low ? L - x : x) < hf) W.mask |= 8u << a;
  }
  return W;
}

int sphTermsPerNeighbour(const cl_float4& p, const std::array<double, 3>& tank, double h) {
  int terms = 1;
  for (int a = 0; a < 3; ++a) {
    const double x = p.s[a], reach = h * (1 + 1e-6);
    terms *= 1 + (x < reach) + (tank[a] - x < reach);
  }
  return terms;
}

void sphReferenceDensity(const SphReferenceInput& in, std::vector<double>& rho,
                         std::vector<unsigned>& count) {
  const size_t n = in.pos.size();
  const double h = in.phys.h;
  rho.assign(n, 0);
  count.assign(n, 0);
  for (size_t i = 0; i < n; ++i) {
    const SphWalls W = sphWalls(in.pos[i], in.tank, h);
    double sum = 0;
    for (size_t j = 0; j < n; ++j) {
      if (!sphIsNeighbour(in.pos[i], in.pos[j], float(h))) continue;
      ++count[i];
      double q[3], d2 = 0;
      for (int a = 0; a < 3; ++a) {
        q[a] = in.pos[j].s[a];
        const double d = double(in.pos[i].s[a]) - q[a];
        d2 += d * d;
      }
      sum += sphKernelW(std::sqrt(d2), h);
      for (unsigned s = W.mask; s; s = (s - 1) & W.mask) {
        if (!sphIsImage(s)) continue;
        double g2 = 0;
        for (int a = 0; a < 3; ++a) {
          const double g = sphMirror(q[a], s, a, W);
          const double d = double(in.pos[i].s[a]) - g;
          g2 += d * d;
        }
        sum += sphKernelW(std::sqrt(g2), h);
      }
    }
    rho[i] = in.phys.mass * sum;
  }
}

void sphReferenceForces(const SphReferenceInput& in, std::vector<std::array<double, 3>>& acc,
                        std::vector<double>& scale) {
  const size_t n = in.pos.size();
  const auto& P = in.phys;
  const double h = P.h, hs = 0.5 * h, eta2 = 0.01 * hs * hs;
  acc.assign(n, {0, 0, 0});
  scale.assign(n, 0);
  auto cohesion = [&](double r) {
    const double c = 32.0 / (M_PI * std::pow(h, 9));
    const double a = std::pow(h - r, 3) * r * r * r;
    return 2 * r > h ? c * a : c * (2 * a - std::pow(h, 6) / 64.0);
  };
  for (size_t i = 0; i < n; ++i) {
    const SphWalls W = sphWalls(in.pos[i], in.tank, h);
    const double rhoi = in.rhop[i].s[0], pri = P.gradScale * in.rhop[i].s[1] / (rhoi * rhoi);
    double a[3] = {0, 0, 0}, sc = 0;
    for (size_t j = 0; j < n; ++j) {
      if (!sphIsNeighbour(in.pos[i], in.pos[j], float(h))) continue;
      const double rhoj = in.rhop[j].s[0], prj = P.gradScale * in.rhop[j].s[1] / (rhoj * rhoj);
      const double cvis = P.alpha * P.c0 * hs * 2.0 / (rhoi + rhoj);
      for (unsigned s = W.mask;; s = (s - 1) & W.mask) {  // s = mask .. 0 (0 = the real pair)
        if (s != 0 && !sphIsImage(s)) continue;
        double d[3], dv[3], r2 = 0, vr = 0;
        for (int ax = 0; ax < 3; ++ax) {
          const double q = sphMirror(in.pos[j].s[ax], s, ax, W);
          const double vj = sphMirrorFlips(s, ax) ? -double(in.vel[j].s[ax]) : double(in.vel[j].s[ax]);
          d[ax] = double(in.pos[i].s[ax]) - q;
          dv[ax] = double(in.vel[i].s[ax]) - vj;
          r2 += d[ax] * d[ax];
          vr += dv[ax] * d[ax];
        }
        const double r = std::sqrt(r2);
        if (r < h) {
          const double pi = vr < 0 ? -cvis * vr / (r2 + eta2) : 0.0;
          const double f = r > 0 ? sphKernelDW(r, h) / r : 0.0;  // grad W = f * d
          double coh = 0;
          if (s == 0 && P.gamma > 0 && r2 > 0)
            coh = P.gamma * P.mass * (2 * P.rho0 / (rhoi + rhoj)) * cohesion(r) / r;
          // The device computes q = r/h in float; (1 - q)^3 in the kernel
          // gradient then carries a relative error of about 3 q/(1 - q) float
          // epsilons, large near the support's edge. Weighting each term's
          // magnitude by that condition number makes `scale` the size of the
          // float rounding to expect (a pair at q = 0.995 with a pressure 1e9
          // times the others' once put the force 6e-5 of the plain sum off).
          const double q = r / h, cond = 1.0 + 3.0 * q / std::max(1.0 - q, 1e-12);
          for (int ax = 0; ax < 3; ++ax) {
            const double t = -P.mass * (pri + prj + pi) * f * d[ax] - coh * d[ax];
            a[ax] += t;
            sc += std::fabs(t) * cond;
          }
        }
        if (s == 0) break;
      }
    }
    a[1] -= P.gravity;
    acc[i] = {a[0], a[1], a[2]};
    scale[i] = sc + P.gravity;
  }
}

// The weight of a pair term in the error scale of sphReferenceContinuity. Near
// the support's edge grad W ~ (1 - q)^3 changes fast with r, so the few float
// ulps in the kernels' r = |x_i - x_j| (a mirrored coordinate 2w - x, a sqrt,
// a product by 1/h) become kappa times as large in the term, kappa =
// |d ln(grad W) / d ln r| (about 3 q / (1 - q)). A relative tolerance of 1e-5
// is ~170 float ulps, so a term conditioned kappa gets 1 + kappa / 16 times its
// size: a single image at q = 0.9945 (kappa 540) came out 7.3e-5 off in float,
// rightly.
static double edgeWeight(double r, double h) {
  const double gr = sph_gradw(r, h), e = 1e-6 * h;
  if (gr == 0.0 || r <= e) return 1.0;
  const double r1 = std::min(r + e, h), r0 = r - e;  // no q beyond the support
  const double kappa = std::fabs(r * (sph_gradw(r1, h) - sph_gradw(r0, h)) / (r1 - r0) / gr);
  return 1.0 + kappa / 16.0;
}

void sphReferenceContinuity(const SphReferenceInput& in, const std::vector<double>& rho,
                            std::vector<double>& drho, std::vector<double>& scale) {
  const size_t n = in.pos.size();
  const double h = in.phys.h, m = in.phys.mass, rho0 = in.phys.rho0;
  const double kd = in.phys.densityDiffusion * h * in.phys.c0;  // delta (2 hs) c0
  const double kh = rho0 * in.phys.gravity / in.phys.B;
  drho.assign(n, 0);
  scale.assign(n, 0);
  for (size_t i = 0; i < n; ++i) {
    const SphWalls W = sphWalls(in.pos[i], in.tank, h);
    double sum = 0, mag = 0;
    for (size_t j = 0; j < n; ++j) {
      if (!sphIsNeighbour(in.pos[i], in.pos[j], float(h))) continue;
      const double dy = double(in.pos[i].s[1]) - in.pos[j].s[1];
      // Fourtakas et al. (2019): the departure from the hydrostatic density difference
      const double hyd = rho0 * (std::pow(1.0 + kh * dy, 1.0 / 7.0) - 1.0);
      const double dyn = (rho[j] - rho[i]) - hyd;
      const double dynMag = std::fabs(rho[j] - rho[i]) + std::fabs(hyd);
      for (unsigned s = 0; s < 64; ++s) {
        // the pair itself (s = 0) and its wall images
        if ((s & W.mask) != s || (s != 0 && !sphIsImage(s))) continue;
        double d[3], dv = 0, vmag = 0, r2 = 0;
        for (int a = 0; a < 3; ++a) {
          const double q = sphMirror(in.pos[j].s[a], s, a, W);
          const double vi = sphMovedV(in.vel[i], a), vj0 = sphMovedV(in.vel[j], a);
          const double vj = sphMirrorFlips(s, a) ? -vj0 : vj0;
          d[a] = double(in.pos[i].s[a]) - q;
          r2 += d[a] * d[a];
          dv += (vi - vj) * d[a];
          vmag += (std::fabs(vi) + std::fabs(vj)) * std::fabs(d[a]);
        }
        const double r = std::sqrt(r2);
        if (r >= h) continue;
        const double gr = sph_gradw(r, h);  // grad_i W_ij = gr r_ij
        // continuity m (v_i - v_j).grad W ; diffusion delta hs c0 psi.grad W V_j
        sum += m * gr * dv - kd * m * gr * dyn / rho[j];
        mag += std::fabs(m * gr) * (vmag + kd * dynMag / rho[j]) * edgeWeight(r, h);
      }
    }
    for (size_t b = 0; b < in.bpos.size(); ++b) {
      if (!sphIsNeighbour(in.pos[i], in.bpos[b], float(h))) continue;
      double dv = 0, vmag = 0, r2 = 0;
      for (int a = 0; a < 3; ++a) {
        const double d = double(in.pos[i].s[a]) - in.bpos[b].s[a];
        r2 += d * d;
        const double vi = sphMovedV(in.vel[i], a);
        dv += (vi - in.bvel[b].s[a]) * d;
        vmag += (std::fabs(vi) + std::fabs(in.bvel[b].s[a])) * std::fabs(d);
      }
      const double gr = sph_gradw(std::sqrt(r2), h);
      sum += in.bpos[b].s[3] * gr * dv;
      mag += std::fabs(in.bpos[b].s[3] * gr) * vmag * edgeWeight(std::sqrt(r2), h);
    }
    drho[i] = sum;
    scale[i] = mag + 1e-30;
  }
}

}  // namespace eddy
