/*
 * sph_kernel.h: the SPH smoothing kernel, written once for the host and the
 * device. It is in the common subset of C++ and OpenCL C: the real type
 * SPH_REAL is float in OpenCL C (every SPH kernel: the file is put in front
 * of sph_common.cl when an SPH program is built) and double in C++ (the mass
 * calibration and gradient normalisation of sim/sph/sph.cpp, the test
 * references). Functions only; no includes.
 *
 * Wendland C2 in 3-D (H. Wendland 1995, "Piecewise polynomial, positive
 * definite and compactly supported radial functions of minimal degree", Adv.
 * Comput. Math. 4:389; normalisation as in Dehnen & Aly 2012, MNRAS
 * 425:1068), with h the SUPPORT radius (W = 0 for r >= h; these functions
 * assume 0 <= r < h, the callers test the support):
 *     W(r) = 21 / (2 pi h^3) (1 - q)^4 (1 + 4 q),   q = r / h
 *     grad_i W(r_ij) = sph_gradw(r, h) r_ij,
 *     sph_gradw(r, h) = -20 * 21 / (2 pi h^3) (1 - q)^3 / h^2
 * (the gradient needs no division by r; dW/dr = sph_gradw(r, h) r). Each is
 * a constant of h times a polynomial of q (the _sigma / _coef and _q parts).
 */
#ifndef EDDY_SPH_KERNEL_H
#define EDDY_SPH_KERNEL_H

#ifdef __OPENCL_VERSION__
#define SPH_REAL float
#define SPH_PI 3.14159265358979f
#else
#define SPH_REAL double
#define SPH_PI 3.14159265358979323846
namespace eddy {
#endif

#define SPH_R(x) ((SPH_REAL)(x))

/* W(r) = sph_w_sigma(h) sph_w_q(q), q = r / h. */
inline SPH_REAL sph_w_sigma(const SPH_REAL h)
{
    return SPH_R(21) / (SPH_R(2) * SPH_PI * h * h * h);
}
inline SPH_REAL sph_w_q(const SPH_REAL q)
{
    const SPH_REAL t = SPH_R(1) - q;
    const SPH_REAL t2 = t * t;
    return t2 * t2 * (SPH_R(1) + SPH_R(4) * q);
}
inline SPH_REAL sph_w(const SPH_REAL r, const SPH_REAL h)
{
    return sph_w_sigma(h) * sph_w_q(r / h);
}

/* sph_gradw(r, h) = sph_gradw_coef(h) sph_gradw_q(q), q = r / h. Neighbour
 * loops compute the coefficient and 1 / h once per particle and q = r (1/h)
 * per pair: no division per pair (a correctly rounded division is many
 * instructions on GPUs). */
inline SPH_REAL sph_gradw_coef(const SPH_REAL h)
{
    return (SPH_R(-20) * SPH_R(21) / (SPH_R(2) * SPH_PI)) / (h * h * h * h * h);
}
inline SPH_REAL sph_gradw_q(const SPH_REAL q)
{
    const SPH_REAL t = SPH_R(1) - q;
    return t * t * t;
}
inline SPH_REAL sph_gradw(const SPH_REAL r, const SPH_REAL h)
{
    return sph_gradw_coef(h) * sph_gradw_q(r / h);
}

/* Cohesion spline C(r) of Akinci, Akinci & Teschner 2013, "Versatile surface
 * tension and adhesion for SPH fluids", ACM TOG 32(6):182, eq. 2 (0 <= r < h):
 * the kernels' cohesion force and the automatic speed of sound's estimate of
 * the speed it drives (sphCohesionSpeed). */
inline SPH_REAL sph_cohesion(const SPH_REAL r, const SPH_REAL h)
{
    const SPH_REAL h3 = h * h * h;
    const SPH_REAL a = (h - r) * (h - r) * (h - r) * r * r * r;
    const SPH_REAL c = SPH_R(32) / (SPH_PI * h3 * h3 * h3);
    return SPH_R(2) * r > h ? c * a : c * (SPH_R(2) * a - h3 * h3 / SPH_R(64));
}

#ifndef __OPENCL_VERSION__
}  // namespace eddy
#endif

#endif /* EDDY_SPH_KERNEL_H */
