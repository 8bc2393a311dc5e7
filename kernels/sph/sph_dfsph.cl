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
 * Jacobi iterations on that diagonal (k >= 0; relaxation omega: EDDY_DFSPH_OMEGA,
 * less with a wide support, sph.cpp's dfsphJacobiOmega), in
 * the velocity form of [BK17] Algorithms 2 and 3: every iteration measures the
 * rate (2) from the current velocities, updates k, and applies the change of
 * (1) to the velocities.
 *  - divergence solve: target Drho/Dt = 0; the unknown is stored as kv = k dt
 *    (so its velocity change, -s sum m (kv_i + kv_j) grad W, needs no dt);
 *  - density solve: target rho_i + dt Drho_i/Dt = rho0 (predicted density).
 * Both are warm-started from a fraction of the previous step's values
 * (EDDY_DFSPH_WARM_*), kept in sorted order: the pipeline's reorder permutes
 * them and, in the sort that starts a step, scales them (sph_dfsph_reorder).
 *
 * Walls: the mirror images of sph_common.cl take part in every sum: an image
 * of j has j's mass, density, k ("pressure mirroring") and j's velocity with
 * the wall-normal component reversed, so the wall is impermeable in (2) and
 * pushes back with the fluid's own pressure in (1).
 *
 * Boundary particles (Akinci et al. 2012; in DFSPH as [BK17] section 5 and
 * SPlisHSPlasH): every sum also runs over the boundary neighbours b
 * (SPH_BOUNDARY_BEGIN) with m replaced by psi_b: rho_i += sum_b psi_b W_ib,
 * Drho_i/Dt += sum_b psi_b (v_i - v_b) . grad W_ib (bvel enters here), and
 * the pressure acceleration (1) gets -s sum_b psi_b f k_i grad W_ib
 * (f = EDDY_SPH_BOUNDARY_PRESSURE_FACTOR = 2, pressure mirroring, with psi's
 * half-space scale: eddy_shared.h). Within a step nothing of the boundary
 * moves (the bodies move after the integration), so the two boundary terms
 * of the solves are linear in what changes:
 *     sum_b psi_b (v_i - v_b) . grad W_ib = v_i . g_b - c_b,
 *     sum_b psi_b f k_i grad W_ib        = f k_i g_b,
 * with g_b = sum_b psi_b grad W_ib and c_b = sum_b psi_b v_b . grad W_ib,
 * which sph_dfsph_density sums once per step (row EDDY_DFSPH_K_BND: g_b,
 * c_b); the solves' kernels read them instead of walking the boundary's
 * cells at every iteration. D_i then uses G = g_f + g_b:
 *     D_i = |G|^2 + (f - 1) |G| |g_b| + sum_j |m grad W_ij|^2,
 * never below the exact diagonal |G|^2 + (f - 1) G . g_b + sum_j |..|^2
 * (equal where G and g_b are aligned; a larger diagonal only slows Jacobi).
 * A boundary neighbour counts psi_b / m neighbours for the deficiency rule.
 *
 * Convergence without host reads: the rate kernel writes per-work-group sums
 * of the error, and the work-group that finishes last (a ticket counter)
 * adds them in a fixed order (bit-reproducible: the same sum whichever group
 * is last), stores the average and the iteration count in the solver state
 * and sets its "done" flag once the error is within tolerance (after
 * min_iterations) or max_iterations were applied. Every later kernel of that
 * solve reads the flag and does nothing.
 *
 * The two solves are one rate kernel and one velocity kernel, told apart by
 * the slot (EDDY_DFSPH_SLOT_DIV / _DEN). Every neighbour sum may run on
 * 2^lane_bits work-items per particle (sph_common.cl, "Lanes").
 */

/* Sum over the real neighbours of i (list) and their wall images, this
 * work-item's lane's share. BODY sees: j, d (x_i - x_image), r2, s (image
 * mask, 0 = the real particle). */
#define DFSPH_PAIRS_BEGIN(i, p, mask, w)                                        \
    SPH_NEIGHBOURS_BEGIN(i, p)                                                  \
            const float3 q_ = pos[j].xyz;                                       \
            for (uint s = (mask);; s = (s - 1u) & (mask)) {                     \
                const float3 d = (p) - (s ? sph_mirror(q_, s, (w)) : q_);       \
                const float r2 = sph_r2(d);                                     \
                if (r2 < h * h) {
#define DFSPH_PAIRS_END                                                         \
                }                                                               \
                if (s == 0u) break;                                             \
            }                                                                   \
    SPH_NEIGHBOURS_END

/* The pair gradients (use_pairs != 0; DfsphKernels::setPairGradients,
 * "Pair gradients" in docs/ARCHITECTURE.md): dfsph_density stores, for
 * every list slot k of i, the scalar of the real pair's kernel gradient
 *     pairs[slot(k, i)] = g_ij = m c_g W'(q_ij)   (0 where |x_i - x_j| >= h),
 * c_g = sph_gradw_coef(h), so that m grad_i W_ij = g_ij (x_i - x_j). The
 * positions do not move between dfsph_density and the end of the density
 * solve, so the solves' kernels take g_ij instead of a square root and the
 * kernel's polynomial per pair per iteration. BODY sees j and
 * G = g_ij (x_i - x_j); the wall images of j (mask != 0) are not stored:
 * DFSPH_IMAGES_BEGIN inside the body sums them from x_j as DFSPH_PAIRS does
 * (d, r2, s). The float4 G_ij itself (16 bytes a pair, no load of x_j) was
 * slower than this scalar at every size measured on the H200
 * (docs/PERFORMANCE.md, session 15). The list entry and g_ij are loaded one
 * round ahead, as in SPH_NEIGHBOURS_BEGIN (sph_common.cl, "Prefetch"). */
#define DFSPH_STORED_BEGIN(i, p)                                                \
    {                                                                           \
        const uint nb_cnt_ = nbcount[i];                                        \
        const uint step_ = 1u << lane_bits;                                     \
        const uint last_ = nb_cnt_ != 0u ? nb_cnt_ - 1u : 0u;                   \
        size_t sn_ = EDDY_SPH_LIST_SLOT(min(lane, last_), (i), n);              \
        uint jn_ = nlist[sn_];                                                  \
        float gn_ = pairs[sn_];                                                 \
        for (uint k_ = lane; k_ < nb_cnt_; k_ += step_) {                       \
            const uint j = jn_;                                                 \
            const float g_ = gn_;                                               \
            sn_ = EDDY_SPH_LIST_SLOT(min(k_ + step_, last_), (i), n);           \
            jn_ = nlist[sn_];                                                   \
            gn_ = pairs[sn_];                                                   \
            const float3 xj_ = pos[j].xyz;                                      \
            const float3 G = g_ * ((p) - xj_);
#define DFSPH_STORED_END }}
#define DFSPH_IMAGES_BEGIN(p, mask, w)                                          \
    if (mask) {                                                                 \
        for (uint s = (mask); s != 0u; s = (s - 1u) & (mask)) {                 \
            const float3 d = (p) - sph_mirror(xj_, s, (w));                     \
            const float r2 = sph_r2(d);                                         \
            if (r2 < h * h) {
#define DFSPH_IMAGES_END }}}

/* The rate kernel's per-group sums (dfsph_sum_t): the residual alone, or,
 * in the program built with EDDY_DFSPH_TWO_SUMS (the density solve with
 * density_relaxation < 1, DfsphKernels::runRate), the residual and the error
 * (float2), DFSPH_SUM_WORDS floats a group from EDDY_DFSPH_CTL_PARTIAL. */
#ifdef EDDY_DFSPH_TWO_SUMS
typedef float2 dfsph_sum_t;
#define DFSPH_SUM_WORDS 2u
#define DFSPH_RESIDUAL(s) ((s).x)
#define DFSPH_ERROR(s) ((s).y)
#else
typedef float dfsph_sum_t;
#define DFSPH_SUM_WORDS 1u
#define DFSPH_RESIDUAL(s) (s)
#define DFSPH_ERROR(s) (s)
#endif

/* Work-group sum of x (fixed tree: bit-reproducible); lane 0 stores it. */
inline void dfsph_group_sum(__local dfsph_sum_t* red, const dfsph_sum_t x, __global float* out)
{
    const uint lid = get_local_id(0);
    red[lid] = x;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint off = SPH_WG / 2; off > 0; off >>= 1) {
        if (lid < off) red[lid] += red[lid + off];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (lid == 0) *(__global dfsph_sum_t*)(out + DFSPH_SUM_WORDS * get_group_id(0)) = red[0];
}

/* Work-group sum of x in a fixed tree (bit-reproducible), returned to every
 * work-item; every work-item of the group must call it (barriers). */
inline float4 dfsph_group_sum4(__local float4* red, const float4 x)
{
    const uint lid = get_local_id(0);
    barrier(CLK_LOCAL_MEM_FENCE); /* red may still be read by an earlier sum */
    red[lid] = x;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint off = SPH_WG / 2; off > 0; off >>= 1) {
        if (lid < off) red[lid] += red[lid + off];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    return red[0];
}

/* The pressure-gradient renormalisation C (EDDY_DFSPH_CTL_GRAD) applied to a
 * pressure acceleration or force: C a (C symmetric, the identity when off). */
inline float3 dfsph_gcorr(__global const uint* restrict ctl, const float3 a)
{
    return sph_sym3_apply((__global const float*)(ctl + EDDY_DFSPH_CTL_GRAD), a);
}

/* The renormalisation from the mean second moment of the kernel gradient
 * over the full-support particles (gradient_correction = packing):
 *     M_i = -sum_j V_j x_ij (x) grad_i W_ij     (V_j = m / rho0; images included)
 * equals the identity for the continuous kernel, and 1 / s (s = grad_scale,
 * sph.cpp's sphLatticeGradientNorm) on the cubic lattice the scenes start
 * from. A settled fluid is not that lattice: in the hydrostatic tank (PoCL,
 * DFSPH, 2026-12-02) s M averaged 0.993 across and 0.978 along gravity, so
 * the pressure gradient the forces see was 2.2 % short and the column's
 * pressure rested 2 % high (the bias of tests/test_sph_physics.cpp and
 * tests/test_sph_obstacles.cpp). The kernels apply C = (s <M>)^-1 to every
 * pressure acceleration (and its reaction on boundary particles): the
 * pressure gradient of the actual packing, on average, is exact to first
 * order, as a per-particle kernel gradient correction (Bonet & Lok 1999,
 * "Variational and momentum preservation aspects of smooth particle
 * hydrodynamic formulations", CMAME 180:97) makes it for each particle;
 * one matrix for all pairs keeps the pair forces antisymmetric (momentum is
 * conserved) at the cost of one reduction a step and no per-pair load. The
 * identity when fewer than EDDY_DFSPH_GRAD_MIN_SAMPLES particles qualify or
 * when an entry of C is more than EDDY_DFSPH_GRAD_LIMIT off it. A particle
 * qualifies with a full support (eddy_shared.h): no boundary particle, a
 * density of at least EDDY_DFSPH_GRAD_FULL_SUPPORT rho0, and no eigenvalue
 * of s M_i under EDDY_DFSPH_GRAD_MIN_EIGEN (dfsph_moment_interior). Without
 * the last, a settled column's surface layer, sunk to rho0, entered with s M
 * 0.44 along gravity and made C_yy 1.053 instead of 1.019 after 6 s
 * (PoCL, 2026-12-05): the pressure rested 1-2 % low.
 * a = (sxx, syy, szz, sxy), b = (sxz, syz, count, 0): this work-item's
 * particle's s M_i (0 when it does not qualify). The group sums go to
 * ctl's partials; the work-group that finishes last adds them in a fixed
 * order and writes C to EDDY_DFSPH_CTL_GRAD_NEXT. Every work-item of the
 * group must call it. */
inline void dfsph_gradient_measure(__local float4* red, __local uint* last, const float4 a,
                                   const float4 b, __global uint* restrict ctl)
{
    const uint lid = get_local_id(0), groups = get_num_groups(0);
    volatile __global float* part = (volatile __global float*)(ctl + EDDY_DFSPH_CTL_PARTIAL);
    const float4 ga = dfsph_group_sum4(red, a);
    const float4 gb = dfsph_group_sum4(red, b);
    __global uint* t = &ctl[EDDY_DFSPH_CTL_TICKET_GRAD];
    if (lid == 0) {
        const uint o = get_group_id(0) * EDDY_DFSPH_GRAD_SUMS;
        part[o + 0] = ga.x; part[o + 1] = ga.y; part[o + 2] = ga.z; part[o + 3] = ga.w;
        part[o + 4] = gb.x; part[o + 5] = gb.y; part[o + 6] = gb.z; part[o + 7] = 0.0f;
        mem_fence(CLK_GLOBAL_MEM_FENCE);
        *last = atomic_inc(t) == groups - 1u;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    if (*last) { /* uniform in the group */
        float4 ta = (float4)(0.0f), tb = (float4)(0.0f);
        for (uint g = lid; g < groups; g += SPH_WG) {
            const uint o = g * EDDY_DFSPH_GRAD_SUMS;
            ta += (float4)(part[o + 0], part[o + 1], part[o + 2], part[o + 3]);
            tb += (float4)(part[o + 4], part[o + 5], part[o + 6], 0.0f);
        }
        ta = dfsph_group_sum4(red, ta);
        tb = dfsph_group_sum4(red, tb);
        if (lid == 0) {
            float c[6] = EDDY_DFSPH_GRAD_IDENTITY;
            const float cnt = tb.z;
            if (cnt >= (float)EDDY_DFSPH_GRAD_MIN_SAMPLES) {
                const float xx = ta.x / cnt, yy = ta.y / cnt, zz = ta.z / cnt;
                const float xy = ta.w / cnt, xz = tb.x / cnt, yz = tb.y / cnt;
                const float ixx = yy * zz - yz * yz, ixy = xz * yz - xy * zz, ixz = xy * yz - yy * xz;
                const float det = xx * ixx + xy * ixy + xz * ixz;
                if (det > 0.0f && isfinite(det)) {
                    const float inv[6] = {ixx / det, (xx * zz - xz * xz) / det,
                                          (xx * yy - xy * xy) / det, ixy / det, ixz / det,
                                          (xy * xz - xx * yz) / det};
                    bool ok = true;
                    for (int k = 0; k < 6; ++k)
                        ok = ok && isfinite(inv[k]) &&
                             fabs(inv[k] - (k < 3 ? 1.0f : 0.0f)) <= EDDY_DFSPH_GRAD_LIMIT;
                    if (ok)
                        for (int k = 0; k < 6; ++k) c[k] = inv[k];
                }
            }
            for (int k = 0; k < 6; ++k) ctl[EDDY_DFSPH_CTL_GRAD_NEXT + k] = as_uint(c[k]);
            *t = 0u;
        }
    }
}

/* Whether a particle's moment s M_i = (xx, yy, zz, xy | xz, yz) has all its
 * eigenvalues at least EDDY_DFSPH_GRAD_MIN_EIGEN (eddy_shared.h): s M_i - t I
 * positive definite, by its leading principal minors (Sylvester). */
inline bool dfsph_moment_interior(const float4 a, const float4 b)
{
    const float t = EDDY_DFSPH_GRAD_MIN_EIGEN;
    const float xx = a.x - t, yy = a.y - t, zz = a.z - t, xy = a.w, xz = b.x, yz = b.y;
    const float m2 = xx * yy - xy * xy;
    const float m3 = xx * (yy * zz - yz * yz) - xy * (xy * zz - yz * xz) + xz * (xy * yz - yy * xz);
    return xx > 0.0f && m2 > 0.0f && m3 > 0.0f;
}

/* The pressure of particle i: both solves act as a pressure over the step,
 * p_i = (k_i + kv_i / dt) rho_i^2 (the divergence solve's unknown holds dt). */
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
 * run.
 * In a step (with_pressure = 0) the same walk also applies the divergence
 * solve's warm start, the velocity change of eq. (1) for the stored kv
 * (already scaled by the warm-start fraction in sph_dfsph_reorder),
 *     v_i -= s (sum_j m (kv_i + kv_j) grad_i W_ij + f kv_i g_b),
 * written with sph_dfsph_velocity's expressions (on PoCL the runs gave the
 * same bits as the separate launch; on the H200 the last bits differ, the
 * compiler being free to contract the two kernels' sums differently), and resets both
 * solves' state (the iterations of the step before kept in
 * EDDY_DFSPH_ST_*_PREV). Nothing here reads a velocity, so the change of v_i
 * cannot reach another particle's sums in this launch.
 * The same walk also sums the density solve's warm-start pressure term for
 * sph_dfsph_predict, from the stored k (the warm-start fraction of the last
 * step's, sph_dfsph_reorder):
 *     warm_acc_i = sum_j m (k_i + k_j) grad_i W_ij + f k_i g_b
 * (images included; f k_i g_b the boundary's, g_b as kept below). Neither
 * the positions nor k change before predict, so this is the sum predict
 * took in its own walk until session 24, done here at the cost of one more
 * load per pair. */
__kernel __attribute__((reqd_work_group_size(SPH_WG, 1, 1)))
void sph_dfsph_density(__global const float4* restrict pos,
                       __global float4* restrict vel,
                       __global const uint* restrict nlist,
                       __global const uint* restrict nbcount,
                       __global float2* restrict rhop,
                       __global float* restrict kb,
                       __global uint* restrict ctl,
                       __global const float* restrict clock,
                       __global const float4* restrict bpos,
                       __global const float4* restrict bvel,
                       __global const uint2* restrict bcells,
                       const uint nbound, const int4 dims, const float inv_cell,
                       const uint with_pressure, const uint correct, const float rho0,
                       const uint n, const float4 tank, const float h, const float mass,
                       const float grad_scale, const uint lane_bits, const uint kstride,
                       __global float* restrict pairs, const uint use_pairs,
                       __global float4* restrict warm_acc)
{
    __local float4 red[SPH_WG];
    __local uint last;
    __global float2* aux = (__global float2*)(kb + EDDY_DFSPH_K_AUX * kstride);
    __global const float* kdiv = kb + EDDY_DFSPH_K_DIV * kstride;
    __global const float* kden = kb + EDDY_DFSPH_K_DEN * kstride;
    const bool warm = with_pressure == 0u; /* a step: the divergence warm start too */
    /* A step measures the gradient renormalisation (dfsph_gradient_measure)
     * when it is on; off, it leaves the identity. A refresh does neither. */
    const bool measure = warm && correct != 0u;
    if (warm && !measure && get_global_id(0) == 0) {
        const float one[6] = EDDY_DFSPH_GRAD_IDENTITY;
        for (int k = 0; k < 6; ++k) ctl[EDDY_DFSPH_CTL_GRAD_NEXT + k] = as_uint(one[k]);
    }
    if (warm && get_global_id(0) == 0) {
        __global uint* state = ctl; /* the state words lead the control words */
        state[EDDY_DFSPH_ST_DIV_PREV] = state[EDDY_DFSPH_ST_DIV_ITER];
        state[EDDY_DFSPH_ST_DEN_PREV] = state[EDDY_DFSPH_ST_DEN_ITER];
        state[EDDY_DFSPH_ST_DIV_ITER] = 0u;
        state[EDDY_DFSPH_ST_DIV_DONE] = 0u;
        state[EDDY_DFSPH_ST_DEN_ITER] = 0u;
        state[EDDY_DFSPH_ST_DEN_DONE] = 0u;
    }
    SPH_LANE_ID(i, lane);
    float sw = 0.0f, g2 = 0.0f, cnt = 0.0f, bsw = 0.0f, bcnt = 0.0f, cb = 0.0f;
    float3 g = (float3)(0.0f), gb = (float3)(0.0f), a = (float3)(0.0f), ad = (float3)(0.0f);
    float kdi = 0.0f, kvi = 0.0f;
    float mxx = 0.0f, myy = 0.0f, mzz = 0.0f, mxy = 0.0f, mxz = 0.0f, myz = 0.0f;
    if (i < n) {
        const float3 p = pos[i].xyz;
        sph_walls_t w;
        const uint mask = sph_walls(p, tank, h, &w);
        const float inv_h = 1.0f / h, gc = mass * sph_gradw_coef(h);
        kvi = kdiv[i];
        kdi = kden[i];
        /* DFSPH_PAIRS written out: the real pair's g_ij (s = 0, the last
         * of j's terms) is stored for the solves (DFSPH_STORED_BEGIN). */
        SPH_NEIGHBOURS_BEGIN(i, p)
            const float3 q_ = pos[j].xyz;
            float gs = 0.0f;
            for (uint s = mask;; s = (s - 1u) & mask) {
                const float3 d = p - (s ? sph_mirror(q_, s, w) : q_);
                const float r2 = sph_r2(d);
                if (r2 < h * h) {
                    const float q = sqrt(r2) * inv_h;
                    sw += sph_w_q(q);
                    const float gw = sph_gradw_q(q);
                    const float3 gj = (gc * gw) * d;
                    g += gj;
                    g2 += dot(gj, gj);
                    if (r2 > 0.0f) cnt += 1.0f;
                    if (warm) {
                        a += ((kvi + kdiv[j]) * gw) * d;
                        ad += ((kdi + kden[j]) * gw) * d;
                    }
                    if (measure) {
                        const float3 gd = gw * d;
                        mxx += gd.x * d.x; myy += gd.y * d.y; mzz += gd.z * d.z;
                        mxy += gd.x * d.y; mxz += gd.x * d.z; myz += gd.y * d.z;
                    }
                    gs = gc * gw; /* kept only from s = 0 */
                }
                if (s == 0u) break;
                gs = 0.0f;
            }
            if (use_pairs) pairs[EDDY_SPH_LIST_SLOT(k_, i, n)] = gs;
        SPH_NEIGHBOURS_END
        a *= gc;
        ad *= gc;
        const float gcu = sph_gradw_coef(h);
        SPH_BOUNDARY_BEGIN(p)
            const float q = sqrt(br2) * inv_h;
            bsw += bp.w * sph_w_q(q);
            const float gw = sph_gradw_q(q);
            const float3 gbb = (bp.w * gcu * gw) * bd;
            gb += gbb;
            cb += dot(bvel[bj].xyz, gbb);
            bcnt += bp.w;
        SPH_BOUNDARY_END
    }
    const float4 s1 = sph_lane_sum(red, (float4)(g, sw), lane_bits);
    const float4 s2 = sph_lane_sum(red, (float4)(g2, cnt, bcnt, mxx), lane_bits);
    float4 s3 = (float4)(0.0f), s5 = (float4)(0.0f);
    if (nbound != 0u) { /* uniform */
        s3 = sph_lane_sum(red, (float4)(gb, bsw), lane_bits);
        s5 = sph_lane_sum(red, (float4)(cb, 0.0f, 0.0f, 0.0f), lane_bits);
    }
    const float4 sa4 = sph_lane_sum(red, (float4)(a, myy), lane_bits);
    float3 sa = sa4.xyz;
    float3 sad = (float3)(0.0f);
    if (warm) /* uniform */
        sad = sph_lane_sum(red, (float4)(ad, 0.0f), lane_bits).xyz;
    float rho = mass * sph_w_sigma(h) * s1.w;
    if (nbound != 0u) rho += sph_w_sigma(h) * s3.w;
    if (measure) { /* uniform */
        const float4 s4 = sph_lane_sum(red, (float4)(mzz, mxy, mxz, myz), lane_bits);
        float4 ma = (float4)(0.0f), mb = (float4)(0.0f);
        if (i < n && lane == 0u && s2.z == 0.0f && rho >= EDDY_DFSPH_GRAD_FULL_SUPPORT * rho0) {
            const float sc = -(mass / rho0) * sph_gradw_coef(h) * grad_scale;
            ma = sc * (float4)(s2.w, sa4.w, s4.x, s4.y);
            mb = (float4)(sc * s4.z, sc * s4.w, 1.0f, 0.0f);
            if (!dfsph_moment_interior(ma, mb)) {
                ma = (float4)(0.0f);
                mb = (float4)(0.0f);
            }
        }
        dfsph_gradient_measure(red, &last, ma, mb, ctl);
    }
    if (i >= n || lane != 0u) return;
    if (warm) {
        /* the boundary's share of the divergence warm start, f kv_i g_b, as
         * sph_dfsph_velocity adds it (and the density one below) */
        if (nbound != 0u) sa += (EDDY_SPH_BOUNDARY_PRESSURE_FACTOR * kvi) * s3.xyz;
        vel[i].xyz -= grad_scale * dfsph_gcorr(ctl, sa);
    }
    float D = dot(s1.xyz, s1.xyz) + s2.x;
    float neighbours = s2.y;
    if (nbound != 0u) {
        const float3 G = s1.xyz + s3.xyz;
        D = dot(G, G) + (EDDY_SPH_BOUNDARY_PRESSURE_FACTOR - 1.0f) * length(G) * length(s3.xyz) +
            s2.x;
        neighbours += s2.z / mass;
    }
    rhop[i] = (float2)(rho, warm ? 0.0f : dfsph_pressure(kden[i], kdiv[i], clock, rho));
    aux[i] = (float2)(D > 0.0f ? 1.0f / (grad_scale * D) : 0.0f, neighbours);
    if (nbound != 0u) /* the solves' boundary terms (g_b, c_b) */
        ((__global float4*)(kb + EDDY_DFSPH_K_BND * kstride))[i] = (float4)(s3.xyz, s5.x);
    if (warm) {
        if (nbound != 0u) sad += (EDDY_SPH_BOUNDARY_PRESSURE_FACTOR * kdi) * s3.xyz;
        warm_acc[i] = (float4)(sad, 0.0f);
    }
}

/* The check of a solve (slot), by the work-group of sph_dfsph_rate that
 * finished last: the average errors in percent, sum / n * scale (divergence:
 * scale = 100 dt / rho0 with the dt of the last step, as SPlisHSPlasH;
 * density: 100 / rho0), the group sums (x: the residual the solve reduces,
 * y: the error, see sph_dfsph_rate) added in a fixed tree; stores the error
 * (EDDY_DFSPH_ST_ERR) and the residual (EDDY_DFSPH_CTL_RESIDUAL), counts an
 * iteration or, once the residual is within the tolerance, sets the done
 * flag. The sums were written by other work-groups of the same launch: read
 * through volatile (past any cache that is not coherent across compute
 * units). */
inline void dfsph_check(__local dfsph_sum_t* red, volatile __global const float* partial,
                        __global uint* restrict state, __global const float* restrict clock,
                        const uint slot, const uint done, const uint n, const float rho0,
                        const float tolerance, const uint min_iter, const uint max_iter)
{
    const uint lid = get_local_id(0), groups = get_num_groups(0);
    dfsph_sum_t x = (dfsph_sum_t)(0.0f);
    for (uint g = lid; g < groups; g += SPH_WG)
        x += *(volatile __global const dfsph_sum_t*)(partial + DFSPH_SUM_WORDS * g);
    red[lid] = x;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint off = SPH_WG / 2; off > 0; off >>= 1) {
        if (lid < off) red[lid] += red[lid + off];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (lid == 0 && !done) {
        float scale = 100.0f / rho0;
        if (slot == EDDY_DFSPH_SLOT_DIV) scale *= clock[EDDY_SPH_CLOCK_DT];
        const float err = DFSPH_RESIDUAL(red[0]) / (float)n * scale;
        const uint it = state[slot + EDDY_DFSPH_ST_ITER];
        state[slot + EDDY_DFSPH_ST_ERR] = as_uint(DFSPH_ERROR(red[0]) / (float)n * scale);
        state[EDDY_DFSPH_CTL_RESIDUAL + (slot == EDDY_DFSPH_SLOT_DIV ? 0 : 1)] = as_uint(err);
        if ((it >= min_iter && err <= tolerance) || it >= max_iter || !isfinite(err))
            state[slot + EDDY_DFSPH_ST_DONE] = 1u;
        else
            state[slot + EDDY_DFSPH_ST_ITER] = it + 1u;
    }
}

/* Phases "divergence_rate" / "density_rate": one relaxed Jacobi update of
 * the solve in slot, from the density change rate Drho_i/Dt (eq. 2, the
 * images with mirrored velocities):
 *  - divergence (slot EDDY_DFSPH_SLOT_DIV), error e_i = Drho_i/Dt (0 for a
 *    particle with fewer than EDDY_DFSPH_MIN_NEIGHBOURS neighbours: a free
 *    surface or a spray droplet, whose divergence is physical, as in
 *    SPlisHSPlasH), kv_i <- max(kv_i + omega e_i / (s D_i), 0);
 *  - density (EDDY_DFSPH_SLOT_DEN), the residual
 *    r_i = beta (rho_i - rho0) + dt Drho_i/Dt, k_i <- max(k_i + omega r_i / (dt^2 s D_i), 0),
 *    with beta = density_relaxation: at 1 (the default) r_i is the predicted
 *    compression e_i = rho_i + dt Drho_i/Dt - rho0, as in Bender & Koschier;
 *    below 1 the solve removes only that fraction of the compression the
 *    particle already has within the step (a Baumgarte-like relaxation:
 *    Baumgarte 1972, "Stabilization of constraints and integrals of motion
 *    in dynamical systems", Comput. Methods Appl. Mech. Eng. 1:1), which
 *    damps the deep column's pressure "breathing" (docs/PERFORMANCE.md,
 *    session 14);
 *    (beta < 1 only in the program built with EDDY_DFSPH_TWO_SUMS, which the
 *    host builds the first time a density solve asks for it; the default
 *    program has r = e and ignores beta, so beta = 1 costs nothing);
 * the change into dk (applied by sph_dfsph_velocity), the work-group sum of
 * max(r_i, 0) and, with EDDY_DFSPH_TWO_SUMS, of max(e_i, 0) (compression
 * only, as SPlisHSPlasH), and, in the work-group that finishes last, the
 * check (dfsph_check): the solve stops on the residual and reports the
 * error. The slot's ticket counts the finished work-groups (the last one
 * resets it). */
__kernel __attribute__((reqd_work_group_size(SPH_WG, 1, 1)))
void sph_dfsph_rate(__global const float4* restrict pos,
                    __global const float4* restrict vel,
                    __global const uint* restrict nlist,
                    __global const uint* restrict nbcount,
                    __global const float2* restrict rhop,
                    __global float* restrict kb,
                    __global uint* restrict ctl,
                    __global const float* restrict clock,
                    const uint nbound,
                    const uint slot, const uint n, const float4 tank, const float h,
                    const float mass, const float rho0, const float tolerance,
                    const uint min_iter, const uint max_iter, const float cheb_rho,
                    const float omega, const float beta, const uint lane_bits, const uint kstride,
                    __global const float* restrict pairs, const uint use_pairs)
{
    __local float4 red[SPH_WG];
    __local dfsph_sum_t redf[SPH_WG];
    __local uint last;
    __global const float2* aux = (__global const float2*)(kb + EDDY_DFSPH_K_AUX * kstride);
    __global const float* k =
        kb + (slot == EDDY_DFSPH_SLOT_DIV ? EDDY_DFSPH_K_DIV : EDDY_DFSPH_K_DEN) * kstride;
    __global float* dk = kb + EDDY_DFSPH_K_DK * kstride;
    __global uint* state = ctl;
    __global float* partial = (__global float*)(ctl + EDDY_DFSPH_CTL_PARTIAL);
    /* Done: a no-op. GPU devices return at once (SPH_UNIFORM_RETURN,
     * sph_common.cl); elsewhere no return before the barriers, nor barriers
     * inside a branch (PoCL 3.1 miscompiles both): the loads, the ticket's
     * atomic (one per work-group, all on one word) and the check are
     * skipped. */
    const uint done = state[slot + EDDY_DFSPH_ST_DONE];
#if SPH_UNIFORM_RETURN
    if (done) return; /* the whole launch (sph_common.cl) */
#endif
    SPH_LANE_ID(i, lane);
    const bool active = i < n && !done;
    float rate = 0.0f;
    if (active) {
        const float3 p = pos[i].xyz;
        const float3 vi = vel[i].xyz;
        sph_walls_t w;
        const uint mask = sph_walls(p, tank, h, &w);
        const float inv_h = 1.0f / h;
        if (use_pairs) {
            float rimg = 0.0f; /* the images' sum, without m c_g */
            DFSPH_STORED_BEGIN(i, p)
                const float3 vj = vel[j].xyz;
                rate += dot(vi - vj, G);
                DFSPH_IMAGES_BEGIN(p, mask, w)
                    rimg += sph_gradw_q(sqrt(r2) * inv_h) * dot(vi - sph_mirror_v(vj, s), d);
                DFSPH_IMAGES_END
            DFSPH_STORED_END
            rate += (mass * sph_gradw_coef(h)) * rimg;
        } else {
            DFSPH_PAIRS_BEGIN(i, p, mask, w)
                const float3 vj = s ? sph_mirror_v(vel[j].xyz, s) : vel[j].xyz;
                rate += sph_gradw_q(sqrt(r2) * inv_h) * dot(vi - vj, d);
            DFSPH_PAIRS_END
            rate *= mass * sph_gradw_coef(h);
        }
        if (nbound != 0u && lane == 0u) { /* v_i . g_b - c_b (sph_dfsph_density) */
            const float4 gcb = ((__global const float4*)(kb + EDDY_DFSPH_K_BND * kstride))[i];
            rate += dot(vi, gcb.xyz) - gcb.w;
        }
    }
    rate = sph_lane_sum(red, (float4)(rate, 0.0f, 0.0f, 0.0f), lane_bits).x;
    dfsph_sum_t err = (dfsph_sum_t)(0.0f); /* the residual (, the error) */
    if (active && lane == 0u) {
        const float2 a = aux[i];
        float e, r, inv;
        if (slot == EDDY_DFSPH_SLOT_DIV) {
            e = a.y < (float)EDDY_DFSPH_MIN_NEIGHBOURS ? 0.0f : rate;
            r = e;
            inv = a.x;
        } else {
            const float dt = clock[EDDY_SPH_CLOCK_DT];
            e = rhop[i].x + dt * rate - rho0;
#ifdef EDDY_DFSPH_TWO_SUMS
            r = beta * (rhop[i].x - rho0) + dt * rate;
#else
            r = e; /* beta = 1: bit for bit as before the parameter */
#endif
            inv = dt > 0.0f ? a.x / (dt * dt) : 0.0f;
        }
        const float k0 = k[i];
        /* The plain update in one expression, as before chebyshev_rho: the
         * compiler may contract it (an fma), and a split changed the rounding
         * and, through a settling column's packing, a test's pressures. */
        float kn = k0 + omega * r * inv;
        if (cheb_rho > 0.0f) {
            /* Chebyshev semi-iterative acceleration (Golub & Varga 1961, "Chebyshev
             * semi-iterative methods, successive overrelaxation iterative methods,
             * and second order Richardson iterative methods", Numer. Math. 3:147;
             * Wang 2015, "A Chebyshev semi-iterative approach for accelerating
             * projective and position-based dynamics", ACM TOG 34(6):246):
             *   x_m+1 = w_m+1 (x^_m+1 - x_m) + w_m+1 x_m + (1 - w_m+1) x_m-1
             * with x^ the (relaxed) Jacobi update, i.e. the step applied is w times
             * the Jacobi step plus (w - 1) times the last step (dk, applied by the
             * velocity kernel before this one); w_1 = 1, w_2 = 2 / (2 - rho^2),
             * w_m+1 = 4 / (4 - rho^2 w_m). The projection k >= 0 follows. The
             * sequence starts after EDDY_DFSPH_CHEB_DELAY plain iterations
             * (Wang's delay): m = it - delay + 1. */
            const uint it = state[slot + EDDY_DFSPH_ST_ITER]; /* steps applied so far */
            if (it > EDDY_DFSPH_CHEB_DELAY) {
                const float r2c = cheb_rho * cheb_rho;
                float wc = 2.0f / (2.0f - r2c);
                for (uint q = EDDY_DFSPH_CHEB_DELAY + 2u; q <= it; ++q)
                    wc = 4.0f / (4.0f - r2c * wc);
                kn = k0 + (wc * (omega * r * inv) + (wc - 1.0f) * dk[i]);
            }
        }
        dk[i] = fmax(kn, 0.0f) - k0;
#ifdef EDDY_DFSPH_TWO_SUMS
        err = (float2)(fmax(r, 0.0f), fmax(e, 0.0f));
#else
        err = fmax(r, 0.0f); /* r == e */
#endif
    }
    dfsph_group_sum(redf, err, partial);
    /* The last work-group to finish: its sum was made visible (fence) before
     * its ticket, as every other group's. */
    __global uint* t = &ctl[EDDY_DFSPH_CTL_TICKET + (slot == EDDY_DFSPH_SLOT_DIV ? 0 : 1)];
    if (get_local_id(0) == 0) {
        mem_fence(CLK_GLOBAL_MEM_FENCE);
        last = !done && atomic_inc(t) == get_num_groups(0) - 1u;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    if (last) { /* uniform in the group */
        dfsph_check(redf, partial, state, clock, slot, done, n, rho0, tolerance, min_iter,
                    max_iter);
        if (get_local_id(0) == 0) *t = 0u;
    }
}

/* This lane's share of the pressure term of eq. (1) for the unknowns kk
 * (k_i = ki), before -s C:
 *     m sum_j (k_i + k_j) grad_i W_ij  (list, wall images)  +  sum_b f k_i psi_b grad_i W_ib
 * (boundary, f = EDDY_SPH_BOUNDARY_PRESSURE_FACTOR), from the stored pair
 * gradients (use_pairs) or the kernel evaluated per pair. The velocity
 * kernel's sum (predict's is summed by sph_dfsph_density, in its own walk);
 * the parameters carry the names the walk macros use. */
inline float3 dfsph_pressure_sum(const uint i, const float3 p, const float ki,
                                 __global const float* restrict kk,
                                 __global const float4* restrict pos,
                                 __global const uint* restrict nlist,
                                 __global const uint* restrict nbcount,
                                 __global const float* restrict pairs, const uint use_pairs,
                                 __global const float4* restrict bnd, const uint nbound,
                                 const uint n, const float4 tank, const float h,
                                 const float mass, const uint lane, const uint lane_bits)
{
    sph_walls_t w;
    const uint mask = sph_walls(p, tank, h, &w);
    const float inv_h = 1.0f / h;
    float3 a = (float3)(0.0f);
    if (use_pairs) {
        float3 aimg = (float3)(0.0f); /* the images' sum, without m c_g */
        DFSPH_STORED_BEGIN(i, p)
            const float kij = ki + kk[j];
            a += kij * G;
            DFSPH_IMAGES_BEGIN(p, mask, w)
                aimg += (kij * sph_gradw_q(sqrt(r2) * inv_h)) * d;
            DFSPH_IMAGES_END
        DFSPH_STORED_END
        a += (mass * sph_gradw_coef(h)) * aimg;
    } else {
        DFSPH_PAIRS_BEGIN(i, p, mask, w)
            a += ((ki + kk[j]) * sph_gradw_q(sqrt(r2) * inv_h)) * d;
        DFSPH_PAIRS_END
        a *= mass * sph_gradw_coef(h);
    }
    if (nbound != 0u && lane == 0u) /* f k_i g_b (sph_dfsph_density) */
        a += (EDDY_SPH_BOUNDARY_PRESSURE_FACTOR * ki) * bnd[i].xyz;
    return a;
}

/* Phases "divergence_velocity" / "density_velocity": the velocity change of
 * eq. (1) for the pressure changes dk,
 *     v_i -= f s sum_j m (dk_i + dk_j) grad_i W_ij
 * (f = dt for the density solve, 1 for the divergence solve, whose unknown
 * already holds dt), and k_i += dk_i when commit is set. Skipped once the solve
 * in slot is done. (The divergence solve's warm start, the same change for
 * the stored kv, is applied by sph_dfsph_density.) */
__kernel __attribute__((reqd_work_group_size(SPH_WG, 1, 1)))
void sph_dfsph_velocity(__global const float4* restrict pos,
                        __global float4* restrict vel,
                        __global const uint* restrict nlist,
                        __global const uint* restrict nbcount,
                        __global float* restrict kb,
                        __global uint* restrict ctl,
                        __global const float* restrict clock,
                        const uint nbound,
                        const uint slot, const uint use_dt, const uint commit,
                        const uint n, const float4 tank, const float h, const float mass,
                        const float grad_scale, const uint lane_bits, const uint kstride,
                        __global const float* restrict pairs, const uint use_pairs)
{
    __local float4 red[SPH_WG];
    /* k: the slot's unknown; dk: the change to apply. */
    __global float* k = kb + (slot == EDDY_DFSPH_SLOT_DEN ? EDDY_DFSPH_K_DEN : EDDY_DFSPH_K_DIV) * kstride;
    __global const float* dk = kb + EDDY_DFSPH_K_DK * kstride;
    __global uint* state = ctl; /* the state words lead the control words */
    const uint done = state[slot + EDDY_DFSPH_ST_DONE];
#if SPH_UNIFORM_RETURN
    if (done) return; /* the whole launch (sph_common.cl) */
#endif
    SPH_LANE_ID(i, lane);
    const bool active = i < n && !done;
    float3 a = (float3)(0.0f);
    float dki = 0.0f;
    if (active) {
        const float3 p = pos[i].xyz;
        dki = dk[i];
        a = dfsph_pressure_sum(i, p, dki, dk, pos, nlist, nbcount, pairs, use_pairs,
                               (__global const float4*)(kb + EDDY_DFSPH_K_BND * kstride), nbound,
                               n, tank, h, mass, lane, lane_bits);
    }
    a = sph_lane_sum(red, (float4)(a, 0.0f), lane_bits).xyz;
    if (!active || lane != 0u) return;
    const float f = (use_dt ? clock[EDDY_SPH_CLOCK_DT] : 1.0f) * grad_scale;
    vel[i].xyz -= f * dfsph_gcorr(ctl, a);
    if (commit) k[i] += dki;
}

/* Phase "dfsph_dt" (one work-item): dt = velocity_cfl spacing / v with
 *     v = max(|v|max + |a|max dt_last, sqrt(g H)),
 * the largest speed the step can reach from the non-pressure forces
 * (sph_forces' maxima) or the speed of a gravity wave over the fluid's
 * depth, H its extent along gravity (sph_forces' maxima of y and of
 * tank height - y), clamped to [min_dt, max_dt]; no speed of sound.
 * Why sqrt(g H): the density solve starts each step from half of the last
 * step's pressure (EDDY_DFSPH_WARM_DENSITY) and must rebuild the other half,
 * up to rho0 g H / 2 at the bottom, from the compression it predicts over
 * dt; a pressure p needs a predicted compression of order p dt^2 / (rho0
 * dx^2) per Jacobi round, so a still column is only held while g H dt^2 /
 * dx^2 stays small. Measured (PoCL and H200, 2026-12-02, docs/PERFORMANCE.md):
 * still columns held at g H dt^2 / dx^2 = 0.20 and 0.39 and broke up at 0.78
 * (dx 2.5 mm, H 0.5 m, dt 1 ms) and 1.57 (H 1 m); with v >= sqrt(g H) the
 * ratio is at most velocity_cfl^2 = 0.16. A flowing fluid whose speed
 * exceeds sqrt(g H) (a dam break after its first instants) is not affected.
 * Advances the device clock (sph_clock_advance), and makes the gradient
 * renormalisation that this step's dfsph_density measured current
 * (EDDY_DFSPH_CTL_GRAD_NEXT -> _GRAD):
 * the divergence solve of a step applies the one of the step before, the
 * density solve its own. */
__kernel void sph_dfsph_dt(__global float* restrict clock,
                           __global uint* restrict counters,
                           __global uint* restrict ctl,
                           const float spacing, const float cfl, const float min_dt,
                           const float max_dt, const float gravity, const float tank_height)
{
    if (get_global_id(0) != 0) return;
    for (int k = 0; k < 6; ++k) ctl[EDDY_DFSPH_CTL_GRAD + k] = ctl[EDDY_DFSPH_CTL_GRAD_NEXT + k];
    const float a = sqrt(as_float(counters[EDDY_SPH_CNT_MAX_A2]));
    const float depth = as_float(counters[EDDY_SPH_CNT_MAX_Y]) +
                        as_float(counters[EDDY_SPH_CNT_MAX_DROP]) - tank_height;
    const float wave = gravity > 0.0f && depth > 0.0f ? sqrt(gravity * depth) : 0.0f;
    const float v = fmax(sqrt(as_float(counters[EDDY_SPH_CNT_MAX_V2])) + a * clock[EDDY_SPH_CLOCK_DT],
                         wave);
    float dt = v > 0.0f ? clamp(cfl * spacing / v, min_dt, max_dt) : max_dt;
    if (!(dt > 0.0f) || !isfinite(v)) dt = 0.0f; /* NaN: stop the clock */
    sph_clock_advance(clock, counters, dt);
}

/* Phase "predict": v* = v + dt (a - s C warm_acc), a the non-pressure
 * accelerations (sph_forces) and warm_acc the density solve's warm-start
 * pressure term that sph_dfsph_density summed in its walk (C: the
 * gradient renormalisation, current since sph_dfsph_dt). Per particle: no
 * neighbour walk. */
__kernel __attribute__((reqd_work_group_size(SPH_WG, 1, 1)))
void sph_dfsph_predict(__global float4* restrict vel,
                       __global const float4* restrict acc,
                       __global const float4* restrict warm_acc,
                       __global const uint* restrict ctl,
                       __global const float* restrict clock,
                       const uint n, const float grad_scale)
{
    const uint i = get_global_id(0);
    if (i >= n) return;
    const float dt = clock[EDDY_SPH_CLOCK_DT];
    vel[i].xyz += dt * (acc[i].xyz - grad_scale * dfsph_gcorr(ctl, warm_acc[i].xyz));
}

/* Phase "integrate" (DFSPH): x += dt v (the velocities are final), the walls
 * and escape counting of sph_integrate (sph_walls_after_move); the pressure
 * (dfsph_pressure) into rhop for the colour field. */
__kernel __attribute__((reqd_work_group_size(SPH_WG, 1, 1)))
void sph_dfsph_integrate(__global float4* restrict pos,
                         __global float4* restrict vel,
                         __global float2* restrict rhop,
                         __global const float* restrict kb,
                         __global const float* restrict clock,
                         __global uint* restrict counters,
                         const uint n, const float4 tank, const float restitution,
                         const uint kstride)
{
    const uint i = get_global_id(0);
    if (i >= n) return;
    __global const float* kdiv = kb + EDDY_DFSPH_K_DIV * kstride;
    __global const float* kden = kb + EDDY_DFSPH_K_DEN * kstride;
    const float dt = clock[EDDY_SPH_CLOCK_DT];
    float4 p = pos[i], v = vel[i];
    p.xyz += dt * v.xyz;
    sph_walls_after_move(&p, &v, tank, restitution, counters);
    pos[i] = p;
    vel[i] = v;
    rhop[i].y = dfsph_pressure(kden[i], kdiv[i], clock, rhop[i].x);
}

/* Phase "reorder_warm": the warm-start values follow their particles into the
 * new sorted order (the pipeline's reorder permutation). warm = 1 (the sort
 * that starts a step): the warm start is this fraction of the last step's k
 * and kv (EDDY_DFSPH_WARM_*); warm = 0 (a refresh for output between steps):
 * moved as they are, so that a refresh never alters the run. */
__kernel __attribute__((reqd_work_group_size(SPH_WG, 1, 1)))
void sph_dfsph_reorder(__global const uint* restrict order,
                       __global const float* restrict kb_in,
                       __global float* restrict kb_out,
                       const uint n, const uint kstride, const uint warm)
{
    const uint i = get_global_id(0);
    if (i >= n) return;
    const uint src = order[i];
    const uint div = EDDY_DFSPH_K_DIV * kstride, den = EDDY_DFSPH_K_DEN * kstride;
    kb_out[div + i] = warm ? EDDY_DFSPH_WARM_DIV * kb_in[div + src] : kb_in[div + src];
    kb_out[den + i] = warm ? EDDY_DFSPH_WARM_DENSITY * kb_in[den + src] : kb_in[den + src];
}
