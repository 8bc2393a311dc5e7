/*
 * nbody_common.cl: what the all-pairs kernels (nbody.cl) and the tree code
 * (nbody_tree.cl) share; the host builds it in front of either file.
 *
 * NBODY_RSQRT(x), the reciprocal square root of the force loops:
 *   EDDY_NATIVE_RSQRT  native_rsqrt (fast, implementation-defined accuracy)
 *   NBODY_PTX_RSQRT    NVIDIA: inline PTX rsqrt.approx.ftz.f32 (see below)
 *   neither            rsqrt
 */
#if defined(NBODY_PTX_RSQRT)
/* NVIDIA only: the OpenCL front end emits rsqrt.approx.f32 without .ftz, which
 * ptxas guards with a denormal fix-up (compare, two scalings) costing three
 * issue slots per interaction. r^2 >= eps^2 > 0 is never denormal for any
 * sensible softening, so the flush-to-zero form is exact here. */
inline float nbody_rsqrt(float x)
{
    float r;
    asm("rsqrt.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(x));
    return r;
}
#define NBODY_RSQRT nbody_rsqrt
#elif defined(EDDY_NATIVE_RSQRT)
#define NBODY_RSQRT native_rsqrt
#else
#define NBODY_RSQRT rsqrt
#endif
