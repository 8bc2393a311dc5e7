/*
 * sph_dfsph.cl: Divergence-Free SPH (J. Bender & D. Koschier, "Divergence-Free
 * Smoothed Particle Hydrodynamics", SCA 2015; "Divergence-Free SPH for
 * Incompressible and Viscous Fluids", IEEE TVCG 23(3):1193, 2017), on the
 * sorted particles and the neighbour list of the SPH pipeline. Built after
 * sph_common.cl and sph_integrate.cl (SPH_NLIST = 1: the list is required).
 *
 * Notation (one fluid, equal masses m): rho_i = m sum_j W_ij; the "pressure"
 * unknown of particle i is k_i = p_i / rho_i^2 (kappa_i / rho_i in [BK17]);
 * the pressure acceleration is
 *     a_i = -s sum_j m (k_i + k_j) grad_i W_ij                       (1)
 * with s the lattice gradient normalisation of the WCSPH forces (grad_scale).
 * The density change rate is Drho_i/Dt = sum_j m (v_i - v_j) . grad_i W_ij (2).
 * A change dk_i of k_i alone changes Drho_i/Dt by -dt s D_i dk_i with
 *     D_i = |sum_j m grad_i W_ij|^2 + sum_j |m grad_i W_ij|^2      ([BK17] eq. 11)
 * (alpha_i = rho_i / D_i in the paper). Both solves are relaxed, projected
 * Jacobi iterations on that diagonal (k >= 0; relaxation EDDY_DFSPH_OMEGA), in
 * the velocity form of [BK17] Algorithms 2 and 3: every iteration measures the
 * rate (2) from the current velocities, updates k, and applies the change of
 * (1) to the velocities.
 *  - divergence solve: target Drho/Dt = 0; the unknown is stored as kv = k dt
 *    (so its velocity change, -s sum m (kv_i + kv_j) grad W, needs no dt);
 *  - density solve: target rho_i + dt Drho_i/Dt = rho0 (predicted density).
 * Both are warm-started from a fraction of the previous step's values
 * (EDDY_DFSPH_WARM_*), kept in sorted order: the pipeline's reorder permutes
 * them (sph_dfsph_reorder).
 *
 * Walls: the mirror images of sph_common.cl take part in every sum: an image
 * of j has j's mass, density, k ("pressure mirroring") and j's velocity with
 * the wall-normal component reversed, so the wall is impermeable in (2) and
 * pushes back with the fluid's own pressure in (1).
 *
 * Convergence without host reads: each rate kernel writes per-work-group sums
 * of the error; sph_dfsph_check (one work-group) adds them in a fixed order
 * (bit-reproducible), stores the average and the iteration count in the
 * solver state and sets its "done" flag once the error is within tolerance
 * (after min_iterations) or max_iterations were applied. Every later kernel of
 * that solve reads the flag and returns at once.
 */

/* Sum over the real neighbours of i (list) and their wall images. BODY sees:
 * j, d (x_i - x_image), r2, s (image mask, 0 = the real particle). */
#define DFSPH_PAIRS_BEGIN(i, p, mask, w)                                        \
    {                                                                           \
        const uint nb_cnt_ = nbcount[i];                                        \
        for (uint k_ = 0; k_ < nb_cnt_; ++k_) {                                 \
            const uint j = nlist[(size_t)k_ * n + (i)];                         \
            const float3 q_ = pos[j].xyz;                                       \
            for (uint s = (mask);; s = (s - 1u) & (mask)) {                     \
                const float3 d = (p) - (s ? sph_mirror(q_, s, (w)) : q_);       \
                const float r2 = sph_r2(d);                                     \
                if (r2 < h * h) {
#define DFSPH_PAIRS_END                                                         \
                }                                                               \
                if (s == 0u) break;                                             \
            }                                                                   \
        }                                                                       \
    }

/* Work-group sum of x (fixed tree: bit-reproducible); lane 0 stores it. */
inline void dfsph_group_sum(__local float* red, const float x, __global float* out)
{
    const uint lid = get_local_id(0);
    red[lid] = x;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint off = SPH_WG / 2; off > 0; off >>= 1) {
        if (lid < off) red[lid] += red[lid + off];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (lid == 0) out[get_group_id(0)] = red[0];
}

/* The pressure of particle i: both solves act as a pressure over the step,
 * p_i = (k_i + kv_i / dt) rho_i^2 (the divergence solve's unknown holds dt). At
 * rest the density solve alone would carry rho g d; within its tolerance part
 * of the load is left to the next step's divergence solve. */
inline float dfsph_pressure(const float k, const float kv, __global const float* clock,
                            const float rho)
{
    const float dt = clock[EDDY_SPH_CLOCK_DT];
    return (k + (dt > 0.0f ? kv / dt : 0.0f)) * rho * rho;
}

/* Phase "dfsph_density": rho_i (real neighbours and images, as sph_density)
 * and the factor 1 / (s D_i) (0 where D_i = 0: an isolated particle), with
 * the neighbour count (real and images, self excluded) for the deficiency
 * rule of the divergence solve. rhop gets (rho_i, 0) during a step (the
 * non-pressure forces are sph_forces without pressure) and (rho_i, p_i) with
 * with_pressure set (a refresh for output: the last step's pressure, see
 * dfsph_pressure), which changes nothing else: refreshes never alter the
 * run. In a step it scales the stored k by the warm-start fractions. */
__kernel __attribute__((reqd_work_group_size(SPH_WG, 1, 1)))
void sph_dfsph_density(__global const float4* restrict pos,
                       __global const uint* restrict nlist,
                       __global const uint* restrict nbcount,
                       __global float2* restrict rhop,
                       __global float2* restrict aux,
                       __global float* restrict kden,
                       __global float* restrict kdiv,
                       __global const float* restrict clock,
                       const uint with_pressure,
                       const uint n, const float4 tank, const float h, const float mass,
                       const float grad_scale)
{
    const uint i = get_global_id(0);
    if (i >= n) return;
    const float3 p = pos[i].xyz;
    float3 w;
    const uint mask = sph_walls(p, tank, h, &w);
    float sw = 0.0f, g2 = 0.0f, cnt = 0.0f;
    float3 g = (float3)(0.0f);
    DFSPH_PAIRS_BEGIN(i, p, mask, w)
        const float r = sqrt(r2);
        sw += sph_w(r, h);
        const float3 gj = (mass * sph_gradw(r, h)) * d;
        g += gj;
        g2 += dot(gj, gj);
        if (r2 > 0.0f) cnt += 1.0f;
    DFSPH_PAIRS_END
    const float D = dot(g, g) + g2;
    const float rho = mass * sw;
    if (with_pressure) {
        rhop[i] = (float2)(rho, dfsph_pressure(kden[i], kdiv[i], clock, rho));
    } else {
        /* A step begins: the warm start is this fraction of last step's k. */
        rhop[i] = (float2)(rho, 0.0f);
        kdiv[i] *= EDDY_DFSPH_WARM_DIV;
        kden[i] *= EDDY_DFSPH_WARM_DENSITY;
    }
    aux[i] = (float2)(D > 0.0f ? 1.0f / (grad_scale * D) : 0.0f, cnt);
}

/* Drho_i/Dt, eq. (2), with the images' mirrored velocities. */
#define DFSPH_RATE(rate)                                                        \
    float rate = 0.0f;                                                          \
    {                                                                           \
        const float3 v_ = vel[i].xyz;                                           \
        DFSPH_PAIRS_BEGIN(i, p, mask, w)                                        \
            const float3 vj_ = s ? sph_mirror_v(vel[j].xyz, s) : vel[j].xyz;    \
            rate += mass * sph_gradw(sqrt(r2), h) * dot(v_ - vj_, d);           \
        DFSPH_PAIRS_END                                                         \
    }

/* Phase "divergence_rate": one Jacobi update of the divergence solve,
 *     kv_i <- max(kv_i + omega Drho_i/Dt / (s D_i), 0),
 * the change into dk (committed by sph_dfsph_velocity), and the work-group
 * sum of max(Drho_i/Dt, 0) (compression only, as SPlisHSPlasH). Particles with
 * fewer than EDDY_DFSPH_MIN_NEIGHBOURS neighbours (a free surface, a spray
 * droplet) are left out, as in SPlisHSPlasH: their divergence is physical. */
__kernel __attribute__((reqd_work_group_size(SPH_WG, 1, 1)))
void sph_dfsph_divergence_rate(__global const float4* restrict pos,
                               __global const float4* restrict vel,
                               __global const uint* restrict nlist,
                               __global const uint* restrict nbcount,
                               __global const float2* restrict aux,
                               __global const float* restrict kdiv,
                               __global float* restrict dk,
                               __global float* restrict partial,
                               __global const uint* restrict state,
                               const uint n, const float4 tank, const float h,
                               const float mass, const float omega)
{
    __local float red[SPH_WG];
    /* Done: a no-op. Uniform, but no return before the barrier (PoCL). */
    const uint done = state[EDDY_DFSPH_ST_DIV_DONE];
    const uint i = get_global_id(0);
    float err = 0.0f;
    if (i < n && !done) {
        const float3 p = pos[i].xyz;
        float3 w;
        const uint mask = sph_walls(p, tank, h, &w);
        DFSPH_RATE(rate)
        const float2 a = aux[i];
        if (a.y < (float)EDDY_DFSPH_MIN_NEIGHBOURS) rate = 0.0f;
        const float k0 = kdiv[i];
        dk[i] = fmax(k0 + omega * rate * a.x, 0.0f) - k0;
        err = fmax(rate, 0.0f);
    }
    dfsph_group_sum(red, err, partial);
}

/* Phase "density_rate": one Jacobi update of the density solve with the
 * predicted density rho*_i = rho_i + dt Drho_i/Dt:
 *     k_i <- max(k_i + omega (rho*_i - rho0) / (dt^2 s D_i), 0),
 * the change into dk, and the work-group sum of max(rho*_i - rho0, 0). */
__kernel __attribute__((reqd_work_group_size(SPH_WG, 1, 1)))
void sph_dfsph_density_rate(__global const float4* restrict pos,
                            __global const float4* restrict vel,
                            __global const uint* restrict nlist,
                            __global const uint* restrict nbcount,
                            __global const float2* restrict rhop,
                            __global const float2* restrict aux,
                            __global const float* restrict kden,
                            __global float* restrict dk,
                            __global float* restrict partial,
                            __global const uint* restrict state,
                            __global const float* restrict clock,
                            const uint n, const float4 tank, const float h,
                            const float mass, const float rho0, const float omega)
{
    __local float red[SPH_WG];
    /* Done: a no-op. Uniform, but no return before the barrier (PoCL). */
    const uint done = state[EDDY_DFSPH_ST_DEN_DONE];
    const uint i = get_global_id(0);
    float err = 0.0f;
    if (i < n && !done) {
        const float dt = clock[EDDY_SPH_CLOCK_DT];
        const float3 p = pos[i].xyz;
        float3 w;
        const uint mask = sph_walls(p, tank, h, &w);
        DFSPH_RATE(rate)
        const float e = rhop[i].x + dt * rate - rho0;
        const float k0 = kden[i];
        const float inv = dt > 0.0f ? aux[i].x / (dt * dt) : 0.0f;
        dk[i] = fmax(k0 + omega * e * inv, 0.0f) - k0;
        err = fmax(e, 0.0f);
    }
    dfsph_group_sum(red, err, partial);
}

/* Phases "divergence_check" / "density_check" (one work-group): the average
 * error of the solve in slot (EDDY_DFSPH_ST_DIV_* or _DEN_*), in percent:
 * sum / n * scale (divergence: scale = 100 dt / rho0 with the dt of the last
 * step, as SPlisHSPlasH; density: 100 / rho0). Stores it; counts an iteration
 * or sets the done flag. */
__kernel __attribute__((reqd_work_group_size(SPH_WG, 1, 1)))
void sph_dfsph_check(__global const float* restrict partial,
                     __global uint* restrict state,
                     __global const float* restrict clock,
                     const uint slot, const uint groups, const uint n,
                     const float rho0, const float tolerance,
                     const uint min_iter, const uint max_iter)
{
    __local float red[SPH_WG];
    /* Uniform, but read once and no return before the barriers (PoCL). */
    const uint done = state[slot + EDDY_DFSPH_ST_DONE];
    const uint lid = get_local_id(0);
    float x = 0.0f;
    for (uint g = lid; g < groups; g += SPH_WG) x += partial[g];
    red[lid] = x;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint off = SPH_WG / 2; off > 0; off >>= 1) {
        if (lid < off) red[lid] += red[lid + off];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (lid == 0 && !done) {
        float scale = 100.0f / rho0;
        if (slot == EDDY_DFSPH_SLOT_DIV) scale *= clock[EDDY_SPH_CLOCK_DT];
        const float err = red[0] / (float)n * scale;
        const uint it = state[slot + EDDY_DFSPH_ST_ITER];
        state[slot + EDDY_DFSPH_ST_ERR] = as_uint(err);
        if ((it >= min_iter && err <= tolerance) || it >= max_iter || !isfinite(err))
            state[slot + EDDY_DFSPH_ST_DONE] = 1u;
        else
            state[slot + EDDY_DFSPH_ST_ITER] = it + 1u;
    }
}

/* Phases "divergence_velocity" / "density_velocity" / "divergence_warm":
 * the velocity change of eq. (1) for the pressure changes dk (the warm start:
 * dk = the stored kv itself, which also starts the step: both solves' state is
 * reset),
 *     v_i -= f s sum_j m (dk_i + dk_j) grad_i W_ij
 * (f = dt for the density solve, 1 for the divergence solve, whose unknown
 * already holds dt), and k_i += dk_i when commit is set. Skipped once the solve
 * in slot is done (slot = EDDY_DFSPH_NO_SLOT: never skipped). */
__kernel __attribute__((reqd_work_group_size(SPH_WG, 1, 1)))
void sph_dfsph_velocity(__global const float4* restrict pos,
                        __global float4* restrict vel,
                        __global const uint* restrict nlist,
                        __global const uint* restrict nbcount,
                        __global const float* restrict dk,
                        __global float* restrict k,
                        __global uint* restrict state,
                        __global const float* restrict clock,
                        const uint slot, const uint use_dt, const uint commit,
                        const uint n, const float4 tank, const float h, const float mass,
                        const float grad_scale)
{
    const uint i = get_global_id(0);
    if (slot == EDDY_DFSPH_NO_SLOT) {
        if (i == 0) {
            state[EDDY_DFSPH_ST_DIV_ITER] = 0u;
            state[EDDY_DFSPH_ST_DIV_DONE] = 0u;
            state[EDDY_DFSPH_ST_DEN_ITER] = 0u;
            state[EDDY_DFSPH_ST_DEN_DONE] = 0u;
        }
    } else if (state[slot + EDDY_DFSPH_ST_DONE]) {
        return;
    }
    if (i >= n) return;
    const float3 p = pos[i].xyz;
    float3 w;
    const uint mask = sph_walls(p, tank, h, &w);
    const float dki = dk[i];
    float3 a = (float3)(0.0f);
    DFSPH_PAIRS_BEGIN(i, p, mask, w)
        a += (mass * (dki + dk[j]) * sph_gradw(sqrt(r2), h)) * d;
    DFSPH_PAIRS_END
    const float f = (use_dt ? clock[EDDY_SPH_CLOCK_DT] : 1.0f) * grad_scale;
    vel[i].xyz -= f * a;
    if (commit) k[i] += dki;
}

/* Phase "dfsph_dt" (one work-item): dt = velocity_cfl spacing / v with
 * v = |v|max + |a|max dt_last (the largest speed the step can reach from the
 * non-pressure forces, sph_forces' maxima), clamped to [min_dt, max_dt]
 * (max_dt while nothing moves); no speed of sound. Advances the device clock
 * as sph_dt does and resets the maxima. */
__kernel void sph_dfsph_dt(__global float* restrict clock,
                           __global uint* restrict counters,
                           const float spacing, const float cfl, const float min_dt,
                           const float max_dt)
{
    if (get_global_id(0) != 0) return;
    const float a = sqrt(as_float(counters[EDDY_SPH_CNT_MAX_A2]));
    const float v = sqrt(as_float(counters[EDDY_SPH_CNT_MAX_V2])) + a * clock[EDDY_SPH_CLOCK_DT];
    float dt = v > 0.0f ? clamp(cfl * spacing / v, min_dt, max_dt) : max_dt;
    if (!(dt > 0.0f) || !isfinite(v)) dt = 0.0f; /* NaN: stop the clock */
    clock[EDDY_SPH_CLOCK_DT] = dt;
    const float hi = clock[EDDY_SPH_CLOCK_T_HI], lo = clock[EDDY_SPH_CLOCK_T_LO];
    const float y = dt - lo;
    const float t = hi + y;
    clock[EDDY_SPH_CLOCK_T_LO] = (t - hi) - y;
    clock[EDDY_SPH_CLOCK_T_HI] = t;
    counters[EDDY_SPH_CNT_MAX_A2] = 0u;
    counters[EDDY_SPH_CNT_MAX_V2] = 0u;
}

/* Phase "predict": v*_i = v_i + dt (a_i - s sum_j m (k_i + k_j) grad_i W_ij):
 * the non-pressure accelerations and the density solve's warm start. */
__kernel __attribute__((reqd_work_group_size(SPH_WG, 1, 1)))
void sph_dfsph_predict(__global const float4* restrict pos,
                       __global float4* restrict vel,
                       __global const float4* restrict acc,
                       __global const uint* restrict nlist,
                       __global const uint* restrict nbcount,
                       __global const float* restrict kden,
                       __global const float* restrict clock,
                       const uint n, const float4 tank, const float h, const float mass,
                       const float grad_scale)
{
    const uint i = get_global_id(0);
    if (i >= n) return;
    const float3 p = pos[i].xyz;
    float3 w;
    const uint mask = sph_walls(p, tank, h, &w);
    const float ki = kden[i];
    float3 a = (float3)(0.0f);
    DFSPH_PAIRS_BEGIN(i, p, mask, w)
        a += (mass * (ki + kden[j]) * sph_gradw(sqrt(r2), h)) * d;
    DFSPH_PAIRS_END
    const float dt = clock[EDDY_SPH_CLOCK_DT];
    vel[i].xyz += dt * (acc[i].xyz - grad_scale * a);
}

/* Phase "integrate" (DFSPH): x += dt v (the velocities are final), the walls
 * and escape counting of sph_integrate; the pressure (dfsph_pressure) into
 * rhop for the colour field. */
__kernel __attribute__((reqd_work_group_size(SPH_WG, 1, 1)))
void sph_dfsph_integrate(__global float4* restrict pos,
                         __global float4* restrict vel,
                         __global float2* restrict rhop,
                         __global const float* restrict kden,
                         __global const float* restrict kdiv,
                         __global const float* restrict clock,
                         __global uint* restrict counters,
                         const uint n, const float4 tank, const float restitution)
{
    const uint i = get_global_id(0);
    if (i >= n) return;
    const float dt = clock[EDDY_SPH_CLOCK_DT];
    float4 p = pos[i], v = vel[i];
    p.xyz += dt * v.xyz;
    const float2 wx = sph_wall_axis(p.x, v.x, tank.x, restitution);
    const float2 wy = sph_wall_axis(p.y, v.y, tank.y, restitution);
    const float2 wz = sph_wall_axis(p.z, v.z, tank.z, restitution);
    p.x = wx.x; v.x = wx.y;
    p.y = wy.x; v.y = wy.y;
    p.z = wz.x; v.z = wz.y;
    const bool finite = all(isfinite(p.xyz)) && all(isfinite(v.xyz));
    const bool inside = p.x >= 0.0f && p.x <= tank.x && p.y >= 0.0f && p.y <= tank.y &&
                        p.z >= 0.0f && p.z <= tank.z;
    if (!finite || !inside) {
        atomic_inc(&counters[EDDY_SPH_CNT_ESCAPED]);
        p.xyz = isfinite(p.xyz) ? clamp(p.xyz, (float3)(0.0f), tank.xyz) : 0.5f * tank.xyz;
        v.xyz = (float3)(0.0f);
    }
    pos[i] = p;
    vel[i] = v;
    rhop[i].y = dfsph_pressure(kden[i], kdiv[i], clock, rhop[i].x);
}

/* Phase "reorder_warm": the warm-start values follow their particles into the
 * new sorted order (the pipeline's reorder permutation). */
__kernel __attribute__((reqd_work_group_size(SPH_WG, 1, 1)))
void sph_dfsph_reorder(__global const uint* restrict order,
                       __global const float* restrict kdiv_in,
                       __global const float* restrict kden_in,
                       __global float* restrict kdiv_out,
                       __global float* restrict kden_out,
                       const uint n)
{
    const uint i = get_global_id(0);
    if (i >= n) return;
    const uint src = order[i];
    kdiv_out[i] = kdiv_in[src];
    kden_out[i] = kden_in[src];
}
