/*
 * nbody.cl: gravitational N-body, all pairs, kick-drift-kick leapfrog.
 *
 * Force kernel after Nyland, Harris & Prins, "Fast N-Body Simulation with
 * CUDA", GPU Gems 3, ch. 31 (2007): each work-group loads a tile of positions
 * into __local memory, synchronises, and every work-item accumulates the tile's
 * pull on its own bodies. Softened (Plummer) gravity:
 *     a_i = G * sum_j m_j (x_j - x_i) / (|x_j - x_i|^2 + eps^2)^(3/2)
 * The j = i term contributes exactly zero (dx = 0); padding bodies beyond N have
 * mass 0 and contribute exactly zero too (eps > 0 keeps r^2 > 0), so any N works.
 *
 * Compile-time knobs (host passes -D):
 *   NBODY_WG   work-group size = tile length
 *   NBODY_BPI  bodies per work-item (each tile entry read once, used NBODY_BPI times)
 *   NBODY_UNROLL  unroll factor of the loop over a tile (0 = full)
 *   EDDY_NATIVE_RSQRT, NBODY_PTX_RSQRT  the reciprocal square root
 *                      (kernels/nbody/nbody_common.cl)
 */
#ifndef NBODY_WG
#define NBODY_WG EDDY_NBODY_DEFAULT_WG
#endif
#ifndef NBODY_BPI
#define NBODY_BPI EDDY_NBODY_DEFAULT_BPI
#endif
#ifndef NBODY_UNROLL
#define NBODY_UNROLL 8
#endif
#define NBODY_STR2(x) #x
#define NBODY_STR(x) NBODY_STR2(x)
#if NBODY_UNROLL == 0
#define NBODY_PRAGMA_UNROLL _Pragma("unroll")
#else
#define NBODY_PRAGMA_UNROLL _Pragma(NBODY_STR(unroll NBODY_UNROLL))
#endif
/* NBODY_RSQRT: kernels/nbody/nbody_common.cl (built in front of this file). */

/* The force loop shared by every gravity kernel: accumulates the pull of the
 * sources src[j0 .. j1) on this work-item's NBODY_BPI bodies at (px, py, pz)
 * into (ax, ay, az), as raw sums without G. j runs in ascending order, one tile
 * of NBODY_WG sources at a time; slots past j1 are padded with mass 0 (exactly
 * no pull), so any range works. Every work-item of the group must call it (it
 * synchronises on the tile). */
static inline void nbody_accumulate(__global const float4* restrict src,
                                    const uint j0, const uint j1,
                                    __local float4* restrict tile, const float eps2,
                                    const float* px, const float* py, const float* pz,
                                    float* ax, float* ay, float* az)
{
    const uint lid = get_local_id(0);
    for (uint t = j0; t < j1; t += NBODY_WG) {
        const uint j = t + lid;
        tile[lid] = j < j1 ? src[j] : (float4)(0.0f);  /* mass 0: no pull */
        barrier(CLK_LOCAL_MEM_FENCE);
        NBODY_PRAGMA_UNROLL
        for (int jj = 0; jj < NBODY_WG; ++jj) {
            const float4 q = tile[jj];
#pragma unroll
            for (int k = 0; k < NBODY_BPI; ++k) {
                const float dx = q.x - px[k], dy = q.y - py[k], dz = q.z - pz[k];
                const float r2 = fma(dx, dx, fma(dy, dy, fma(dz, dz, eps2)));
                const float inv = NBODY_RSQRT(r2);
                const float s = q.w * inv * inv * inv;
                ax[k] = fma(dx, s, ax[k]);
                ay[k] = fma(dy, s, ay[k]);
                az[k] = fma(dz, s, az[k]);
            }
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
}

/* Phase "gravity": a(x) for every body, then the closing half kick v += a dt/2.
 * With half_dt = 0 it only computes accelerations (start-up). */
__kernel __attribute__((reqd_work_group_size(NBODY_WG, 1, 1)))
void nbody_gravity(__global const float4* restrict pos,
                   __global float4* restrict vel,
                   __global float4* restrict acc,
                   const uint n, const float G, const float eps2,
                   const float half_dt)
{
    __local float4 tile[NBODY_WG];
    const uint lid = get_local_id(0);
    const uint first = get_group_id(0) * (NBODY_WG * NBODY_BPI) + lid;

    float px[NBODY_BPI], py[NBODY_BPI], pz[NBODY_BPI];
    float ax[NBODY_BPI], ay[NBODY_BPI], az[NBODY_BPI];
#pragma unroll
    for (int k = 0; k < NBODY_BPI; ++k) {
        const uint i = first + (uint)k * NBODY_WG;
        const float4 p = i < n ? pos[i] : (float4)(0.0f);
        px[k] = p.x; py[k] = p.y; pz[k] = p.z;
        ax[k] = 0.0f; ay[k] = 0.0f; az[k] = 0.0f;
    }

    nbody_accumulate(pos, 0, n, tile, eps2, px, py, pz, ax, ay, az);

#pragma unroll
    for (int k = 0; k < NBODY_BPI; ++k) {
        const uint i = first + (uint)k * NBODY_WG;
        if (i < n) {
            const float4 a = (float4)(G * ax[k], G * ay[k], G * az[k], 0.0f);
            acc[i] = a;
            float4 v = vel[i];
            v.xyz += half_dt * a.xyz;
            vel[i] = v;
        }
    }
}

/* Phase "gravity" at small N, where one work-group per NBODY_WG * NBODY_BPI
 * bodies leaves most of a GPU idle: the sources are split into slices of
 * `slice` bodies (a multiple of NBODY_WG), and work-group (g, s) sums slice s
 * of the sources on the bodies of block g (the same loop as nbody_gravity),
 * storing the raw sum in partial[s * n + i]. nbody_gravity_reduce then adds
 * the slices in order: a fixed summation order, so reruns are bit-identical. */
__kernel __attribute__((reqd_work_group_size(NBODY_WG, 1, 1)))
void nbody_gravity_split(__global const float4* restrict pos,
                         __global float4* restrict partial,
                         const uint n, const float eps2, const uint slice)
{
    __local float4 tile[NBODY_WG];
    const uint lid = get_local_id(0);
    const uint first = get_group_id(0) * (NBODY_WG * NBODY_BPI) + lid;
    const uint s = get_group_id(1);
    const uint j0 = s * slice, j1 = min(n, j0 + slice);

    float px[NBODY_BPI], py[NBODY_BPI], pz[NBODY_BPI];
    float ax[NBODY_BPI], ay[NBODY_BPI], az[NBODY_BPI];
#pragma unroll
    for (int k = 0; k < NBODY_BPI; ++k) {
        const uint i = first + (uint)k * NBODY_WG;
        const float4 p = i < n ? pos[i] : (float4)(0.0f);
        px[k] = p.x; py[k] = p.y; pz[k] = p.z;
        ax[k] = 0.0f; ay[k] = 0.0f; az[k] = 0.0f;
    }

    nbody_accumulate(pos, j0, j1, tile, eps2, px, py, pz, ax, ay, az);

#pragma unroll
    for (int k = 0; k < NBODY_BPI; ++k) {
        const uint i = first + (uint)k * NBODY_WG;
        if (i < n) partial[(size_t)s * n + i] = (float4)(ax[k], ay[k], az[k], 0.0f);
    }
}

/* Phase "gravity_reduce": a_i = G * sum over the `slices` partial sums of
 * nbody_gravity_split (slice 0 first), then the closing half kick as in
 * nbody_gravity. */
__kernel void nbody_gravity_reduce(__global const float4* restrict partial,
                                   __global float4* restrict vel,
                                   __global float4* restrict acc,
                                   const uint n, const uint slices,
                                   const float G, const float half_dt)
{
    const uint i = get_global_id(0);
    if (i >= n) return;
    float3 sum = partial[i].xyz;
    for (uint s = 1; s < slices; ++s) sum += partial[(size_t)s * n + i].xyz;
    const float4 a = (float4)(G * sum, 0.0f);
    acc[i] = a;
    float4 v = vel[i];
    v.xyz += half_dt * a.xyz;
    vel[i] = v;
}

/* Phase "gravity@P:D" of the multi-device N-body (sim/nbody_multi.cpp): the
 * pull of the sources src[j0 .. j1) on this device's n bodies, whose positions
 * are pos[i0 .. i0 + n) and whose velocities and accelerations are vel[0 .. n),
 * acc[0 .. n). One launch per block of sources, so the local block can be done
 * while the other devices' blocks are still in transit:
 *   flags & EDDY_NBODY_PART_FIRST: start from zero, else continue the raw sum
 *                                  stored in acc by the previous launch;
 *   flags & EDDY_NBODY_PART_LAST:  finish: acc = G * sum, v += a dt/2 (as
 *                                  nbody_gravity); else store the raw sum.
 * Launched once with FIRST | LAST over j in [0, N) it computes exactly what
 * nbody_gravity computes (same loop, same order of summation). */
__kernel __attribute__((reqd_work_group_size(NBODY_WG, 1, 1)))
void nbody_gravity_part(__global const float4* restrict pos,
                        __global const float4* restrict src,
                        const uint j0, const uint j1,
                        __global float4* restrict vel,
                        __global float4* restrict acc,
                        const uint i0, const uint n,
                        const float G, const float eps2, const float half_dt,
                        const uint flags)
{
    __local float4 tile[NBODY_WG];
    const uint lid = get_local_id(0);
    const uint first = get_group_id(0) * (NBODY_WG * NBODY_BPI) + lid;

    float px[NBODY_BPI], py[NBODY_BPI], pz[NBODY_BPI];
    float ax[NBODY_BPI], ay[NBODY_BPI], az[NBODY_BPI];
#pragma unroll
    for (int k = 0; k < NBODY_BPI; ++k) {
        const uint i = first + (uint)k * NBODY_WG;
        const float4 p = i < n ? pos[i0 + i] : (float4)(0.0f);
        px[k] = p.x; py[k] = p.y; pz[k] = p.z;
        const float4 a = (i < n && !(flags & EDDY_NBODY_PART_FIRST)) ? acc[i] : (float4)(0.0f);
        ax[k] = a.x; ay[k] = a.y; az[k] = a.z;
    }

    nbody_accumulate(src, j0, j1, tile, eps2, px, py, pz, ax, ay, az);

#pragma unroll
    for (int k = 0; k < NBODY_BPI; ++k) {
        const uint i = first + (uint)k * NBODY_WG;
        if (i < n) {
            if (flags & EDDY_NBODY_PART_LAST) {
                const float4 a = (float4)(G * ax[k], G * ay[k], G * az[k], 0.0f);
                acc[i] = a;
                float4 v = vel[i];
                v.xyz += half_dt * a.xyz;
                vel[i] = v;
            } else {
                acc[i] = (float4)(ax[k], ay[k], az[k], 0.0f);
            }
        }
    }
}

/* Phase "drift": opening half kick with the stored a(x_n), then the drift
 * x_{n+1} = x_n + v dt into the other position buffer (mass copied along).
 * Launched with a global work offset o (multi-device: this device's bodies are
 * o .. n-1 of the position buffers), vel and acc hold bodies o .. n-1 at
 * index i - o. The single-device sim launches with o = 0. */
__kernel void nbody_drift(__global const float4* restrict pos_in,
                          __global float4* restrict pos_out,
                          __global float4* restrict vel,
                          __global const float4* restrict acc,
                          const uint n, const float dt)
{
    const uint i = get_global_id(0);
    if (i >= n) return;
    const uint k = i - (uint)get_global_offset(0);
    float4 v = vel[k];
    v.xyz += (0.5f * dt) * acc[k].xyz;
    vel[k] = v;
    float4 p = pos_in[i];
    p.xyz += dt * v.xyz;
    pos_out[i] = p;
}

/* Phase "potential" (diagnostics only): phi_i = -sum_{j != i} m_j / sqrt(r^2 + eps^2),
 * the same softening as the force. Accumulated in double where the device has
 * cl_khr_fp64 (EDDY_FP64 defined by the host), else in float. */
#ifdef EDDY_FP64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
typedef double real_t;
#else
typedef float real_t;
#endif
__kernel void nbody_potential(__global const float4* restrict pos,
                              __global real_t* restrict phi,
                              const uint n, const float eps2)
{
    const uint i = get_global_id(0);
    if (i >= n) return;
    const float4 pi = pos[i];
    real_t sum = 0;
    for (uint j = 0; j < n; ++j) {
        if (j == i) continue;
        const float4 q = pos[j];
        const real_t dx = (real_t)q.x - (real_t)pi.x;
        const real_t dy = (real_t)q.y - (real_t)pi.y;
        const real_t dz = (real_t)q.z - (real_t)pi.z;
        sum -= (real_t)q.w / sqrt(dx * dx + dy * dy + dz * dz + (real_t)eps2);
    }
    phi[i] = sum;
}
