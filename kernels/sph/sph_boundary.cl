/*
 * sph_boundary.cl: boundary particles of solids (Akinci, Ihmsen, Akinci,
 * Solenthaler & Teschner 2012, "Versatile rigid-fluid coupling for
 * incompressible SPH", ACM TOG 31(4):62) and the penetration guard. Built
 * after sph_common.cl, sph_hash.cl and sph_cells.cl (the boundary grid reuses
 * sph_hash, the radix sort, sph_cells_clear and sph_cells on its own buffers;
 * sim/sph/boundary.hpp).
 *
 * Buffers: bpos/bvel/bforce in declaration order (contiguous per solid), the
 * sorted copies bspos/bsvel in the fluid's cell order (what the fluid kernels
 * read through SPH_BOUNDARY_BEGIN), `order` the source index of each sorted
 * slot. The grid and psi are rebuilt only when a solid moved.
 */

/* Phase "boundary_reorder": the sorted copies, gathered by the sort's order
 * (psi is filled in by boundary_psi). */
__kernel __attribute__((reqd_work_group_size(SPH_WG, 1, 1)))
void sph_boundary_reorder(__global const uint* restrict order,
                          __global const float4* restrict bpos,
                          __global const float4* restrict bvel,
                          __global float4* restrict bspos_tmp,
                          __global float4* restrict bsvel,
                          const uint nbound)
{
    const uint s = get_global_id(0);
    if (s >= nbound) return;
    const uint b = order[s];
    bspos_tmp[s] = bpos[b];
    bsvel[s] = bvel[b];
}

/* Phase "boundary_psi": the volume of each boundary particle from its
 * boundary neighbours (all solids, self included), Akinci et al. 2012 eq. 4
 * with the half-space scale c = EDDY_SPH_BOUNDARY_VOLUME_SCALE (eddy_shared.h):
 *     psi_b = c rho0 / sum_k W_bk
 * into the sorted copy (w) and into bpos (w) in declaration order. Reads the
 * positions from bspos_tmp, so no work-item reads what another writes. */
__kernel __attribute__((reqd_work_group_size(SPH_WG, 1, 1)))
void sph_boundary_psi(__global const float4* restrict bspos_tmp,
                      __global const uint2* restrict bcells,
                      __global const uint* restrict order,
                      __global float4* restrict bspos,
                      __global float4* restrict bpos,
                      const uint nbound, const int4 dims, const float inv_cell,
                      const float h, const float rho0)
{
    const uint s = get_global_id(0);
    if (s >= nbound) return;
    const float3 p = bspos_tmp[s].xyz;
    const float inv_h = 1.0f / h;
    float sum = 0.0f;
    SPH_CELLS_BEGIN(bcells, p, k, 0u, 1u)
        const float r2 = sph_r2(p - bspos_tmp[k].xyz);
        if (r2 < h * h) sum += sph_w_q(sqrt(r2) * inv_h);
    SPH_CELLS_END
    /* sum >= W(0) > 0: self; the half-space scale: eddy_shared.h */
    const float psi = EDDY_SPH_BOUNDARY_VOLUME_SCALE * rho0 / (sph_w_sigma(h) * sum);
    bspos[s] = (float4)(p, psi);
    bpos[order[s]].w = psi;
}

/* Phase "boundary_force": the force the fluid exerts on each boundary
 * particle b, gathered over its fluid neighbours i (one work-item per
 * boundary particle, declaration order, no atomics): minus the boundary
 * terms of the fluid's acceleration (sph_forces.cl; Akinci et al. 2012
 * eqs. 10 and 11), times the fluid mass:
 *     F_b = sum_i m psi_b (f s k_i + Pi_ib) grad_i W_ib
 * with k_i = p_i / rho_i^2 (WCSPH, mode EDDY_BOUNDARY_FORCE_WCSPH: rhop) or
 * k_i = kden_i + kdiv_i / dt (DFSPH, mode _DFSPH: the rows of kb, see
 * EDDY_DFSPH_K_*, the pressures both solves
 * applied this step, the divergence solve's unknown holding dt, so the
 * force is the step's pressure impulse on the fluid divided by dt, run
 * before the positions move). Pi_ib is the friction term of sph_forces with
 * alpha_b (Monaghan form, approaching pairs only). DFSPH's pressure term
 * gets the solver's gradient renormalisation C (ctl, EDDY_DFSPH_CTL_GRAD;
 * sph_dfsph.cl, dfsph_gradient_measure), as the fluid's side does; WCSPH
 * passes any buffer as ctl (unread). */
__kernel __attribute__((reqd_work_group_size(SPH_WG, 1, 1)))
void sph_boundary_force(__global const float4* restrict bpos,
                        __global const float4* restrict bvel,
                        __global float4* restrict bforce,
                        __global const float4* restrict pos,
                        __global const float4* restrict vel,
                        __global const float2* restrict rhop,
                        __global const float* restrict kb,
                        __global const uint* restrict ctl,
                        __global const float* restrict clock,
                        __global const uint2* restrict cells,
                        const uint mode, const uint nbound,
                        const int4 dims, const float inv_cell, const float h,
                        const float mass, const float c0, const float alpha_b,
                        const float grad_scale, const uint kstride)
{
    __global const float* kdiv = kb + EDDY_DFSPH_K_DIV * kstride;
    __global const float* kden = kb + EDDY_DFSPH_K_DEN * kstride;
    const uint b = get_global_id(0);
    if (b >= nbound) return;
    const float4 bp = bpos[b];
    const float3 p = bp.xyz, vb = bvel[b].xyz;
    const float inv_h = 1.0f / h, hs = 0.5f * h, eta2 = 0.01f * hs * hs;
    const float dt = clock[EDDY_SPH_CLOCK_DT];
    const float inv_dt = dt > 0.0f ? 1.0f / dt : 0.0f;
    float3 f = (float3)(0.0f), fp = (float3)(0.0f);
    SPH_CELLS_BEGIN(cells, p, i, 0u, 1u)
        const float3 d = pos[i].xyz - p; /* x_i - x_b */
        const float r2 = sph_r2(d);
        if (r2 < h * h) {
            const float2 di = rhop[i];
            const float k = mode == EDDY_BOUNDARY_FORCE_DFSPH ? kden[i] + kdiv[i] * inv_dt
                                                               : di.y / (di.x * di.x);
            const float vr = dot(vel[i].xyz - vb, d);
            const float pi_ib = vr < 0.0f ? -(alpha_b * c0 * hs / di.x) * vr / (r2 + eta2) : 0.0f;
            const float gw = sph_gradw_q(sqrt(r2) * inv_h);
            if (mode == EDDY_BOUNDARY_FORCE_DFSPH) {
                fp += (EDDY_SPH_BOUNDARY_PRESSURE_FACTOR * grad_scale * k * gw) * d;
                f += (pi_ib * gw) * d;
            } else {
                f += ((EDDY_SPH_BOUNDARY_PRESSURE_FACTOR * grad_scale * k + pi_ib) * gw) * d;
            }
        }
    SPH_CELLS_END
    if (mode == EDDY_BOUNDARY_FORCE_DFSPH) {
        /* the reaction of DFSPH's renormalised pressure acceleration (ctl:
         * the solver's control words, EDDY_DFSPH_CTL_GRAD) */
        f += sph_sym3_apply((__global const float*)(ctl + EDDY_DFSPH_CTL_GRAD), fp);
    }
    bforce[b] = (float4)((mass * bp.w * sph_gradw_coef(h)) * f, 0.0f);
}

/* The unit outward normal in the world of a solid's local SDF gradient gl
 * (R gl / |gl|; the record holds R's rows); false where gl vanishes. */
inline bool sph_solid_normal(__global const float4* restrict solid, float3 gl, float3* nw)
{
    const float gn = length(gl);
    if (!(gn > 0.0f)) return false;
    gl /= gn;
    *nw = (float3)(dot(solid[EDDY_SOLID_ROT].xyz, gl), dot(solid[EDDY_SOLID_ROT + 1].xyz, gl),
                   dot(solid[EDDY_SOLID_ROT + 2].xyz, gl));
    return true;
}

/* The normal component (along nw) of velocity v at p relative to the solid's
 * surface there (v_s + omega x r). */
inline float sph_solid_normal_speed(__global const float4* restrict solid, const float3 p,
                                    const float3 v, const float3 nw)
{
    const float3 vs = solid[EDDY_SOLID_VEL].xyz +
                      cross(solid[EDDY_SOLID_OMEGA].xyz, p - solid[EDDY_SOLID_POS].xyz);
    return dot(v - vs, nw);
}

/* The guard's rule for one solid, given the particle's distance `dist` to
 * its surface and the outward unit normal nw (world) there: with v_n the
 * particle's normal velocity relative to the solid (v_s + omega x r),
 *  - closer than the clearance, and either `band` set, or inside
 *    (dist < 0), or about to cross the surface within dt (dist + dt v_n <
 *    0): put back along nw to dist = clearance, the inward part of v_n
 *    removed (as the tank walls do at their clearance,
 *    sph_walls_after_move);
 *  - farther, but about to cross the surface within dt, and `speculative`
 *    set: v_n limited to -(dist - clearance) / dt, so that at this
 *    velocity it arrives at the clearance (a speculative contact: only an
 *    impact too fast for the pressure to stop within a step, faster than
 *    dist / dt, is touched).
 * Whether it changed p or v. */
inline bool sph_guard_rule(float3* p, float3* v, const float dist, const float3 nw,
                           __global const float4* restrict solid, const float clearance,
                           const float dt, const bool band, const bool speculative)
{
    const float vn = sph_solid_normal_speed(solid, *p, *v, nw);
    const bool crossing = dist + dt * vn < 0.0f;
    if (dist < clearance) {
        if (!(band || dist < 0.0f || crossing)) return false;
        *p += (clearance - dist) * nw;
        const float vn1 = sph_solid_normal_speed(solid, *p, *v, nw); /* at the new point */
        if (vn1 < 0.0f) *v -= vn1 * nw;
        return true;
    }
    if (!(speculative && crossing)) return false;
    *v += ((clearance - dist) / dt - vn) * nw; /* dt > 0 here */
    return true;
}

/* The contact rule before a move (sph_boundary_contact): the particle at p
 * with velocity v, at distance dist from the solid's surface along the unit
 * outward normal nw (world), would cross the surface within dt at its
 * velocity relative to the solid's surface point there:
 * dist + dt v_n < 0, v_n = (v - v_s) . nw. Then v_n becomes
 * (min(dist, clearance) - dist) / dt: from farther out than the clearance it
 * arrives at the clearance; from within it (the band) it does not move
 * further in (v_n = 0); nothing is ever pushed out (the guard does that).
 * The tangential velocity is kept. For a convex solid's exact SDF the
 * distance along the straight move is a convex function of time, so it
 * stays >= its tangent dist + t v_n: after x += dt v the particle is at
 * least min(dist, clearance) outside, up to rounding. Whether it changed v. */
inline bool sph_contact_rule(const float3 p, float3* v, const float dist, const float3 nw,
                             __global const float4* restrict solid, const float clearance,
                             const float dt)
{
    const float vn = sph_solid_normal_speed(solid, p, *v, nw);
    if (!(dist + dt * vn < 0.0f)) return false;
    *v += ((fmin(dist, clearance) - dist) / dt - vn) * nw;
    return true;
}

/* ---- Culling the solids per work-group (sph_boundary_contact, _guard) ----
 * Every particle against every solid made 100 floating bodies cost +30 %
 * (DFSPH) and +95 % (WCSPH) per step in wave_tank (H200, 990K particles,
 * docs/PERFORMANCE.md, session 22): the loop was bound by reading each
 * solid's record per particle (a per-particle bounding-sphere test before
 * the rules made it dearer). The particles are in grid-cell order, so
 * SPH_CULL_SPAN consecutive ones (by default the work-group's) lie in a few
 * cells of a row; the group takes the box of each span, tests the boxes
 * against the solids once, SPH_WG solids at a time (one per work-item), and
 * each particle then visits only the solids that passed for its span and
 * pass the same test at its own position and speed (sph_particle_may_act):
 *
 *      solids  s = base + 0 .. base + SPH_WG - 1          (one chunk)
 *      item    lid tests solid base + lid against each span's box
 *      mask    span 0: [w0][w1][w2][w3]   bit k set: solid base + k
 *              span 1: [w0][w1][w2][w3]   may act on a particle of
 *              ...                        that span
 *      items   walk their span's set bits in ascending order (as the
 *              full loop does)
 *
 * A solid is passed over only when no rule can act on any particle of the
 * span: farther from the span's box than its bounding sphere (about its
 * local origin, holding its shape and its SDF grid's box, outside which the
 * grid reads nothing) plus twice the clearance plus what a particle closes
 * in dt at the span's largest speed plus the solid's surface speed there
 * (|v_s| + |omega| times the farthest point of the box). Every rule needs a
 * distance below the clearance or below dt v_n, and the exact distance is
 * at least |p - c| - R, so the result is bit for bit the full loop's
 * (SphBoundaryKernels.CullingChangesNothingAgainstVisitingEverySolid). A
 * particle that one solid has moved or slowed may then be anywhere near and
 * faster than the box says: from that solid on it tests every solid of the
 * rest at its own position and speed (the bound holds at any p and v).
 * cull = 0 visits them all (the host's choice for a handful of solids, and
 * tests); cull = 1 reads each solid's sphere and speeds from cull_data
 * (sph_boundary_cull). SPH_CULLED_SOLIDS_BEGIN is the loop both kernels
 * run. */
#ifndef SPH_CULL_SPAN /* a build option may set it (EDDY_CL_OPTIONS: measuring, tests) */
/* The whole group: on the H200 (wave_tank, 100 bodies, session 23) spans of
 * 32 made the guard and the contact about 10 % dearer than one box of 128
 * (their extra tests cost more than the fewer visits saved). */
#define SPH_CULL_SPAN SPH_WG
#endif
#define SPH_CULL_SPANS (SPH_WG / SPH_CULL_SPAN)
#define SPH_CULL_WORDS ((SPH_WG + 31) / 32)
#if SPH_WG % SPH_CULL_SPAN != 0 || SPH_CULL_SPAN % 32 != 0 || SPH_CULL_SPANS > 32
#error "SPH_CULL_SPAN: a multiple of 32 that divides SPH_WG"
#endif

/* The box of each span's particle positions (xyz of lo, hi) and their
 * largest speed (hi.w), left in lo[k * SPH_CULL_SPAN], hi[k * ...] for span
 * k; work-items past n (active false) take no part. Every work-item of the
 * group calls it (barriers). */
inline void sph_span_boxes(const bool active, const float3 p, const float speed,
                           __local float4* restrict lo, __local float4* restrict hi)
{
    const uint lid = get_local_id(0);
    lo[lid] = active ? (float4)(p, 0.0f) : (float4)(INFINITY);
    hi[lid] = active ? (float4)(p, speed) : (float4)(-INFINITY);
    for (uint span = SPH_CULL_SPAN / 2; span > 0; span >>= 1) {
        barrier(CLK_LOCAL_MEM_FENCE);
        if ((lid & (SPH_CULL_SPAN - 1)) < span) {
            lo[lid] = fmin(lo[lid], lo[lid + span]);
            hi[lid] = fmax(hi[lid], hi[lid + span]);
        }
    }
    /* sph_cull_chunk's barriers come before the boxes are read */
}

/* What the culling needs of a solid (see above): its centre (xyz) and
 * bounding radius R (w), the bound of its surface speed |v_s| + |omega| r
 * as (|v_s|, |omega|). */
typedef struct {
    float4 sphere;
    float2 speed;
} sph_cull_solid;

/* Phase "boundary_cull" (when a solid moved; sim/sph/boundary.cpp): each
 * solid's culling data, compact (cull[s]: sphere, cull[nsolids + s]:
 * speeds), so that a work-group's SPH_WG work-items read SPH_WG solids in
 * a few coalesced loads instead of one scattered record each (the record
 * reads were most of the culled guard's and contact's time: H200,
 * wave_tank, 100 bodies, docs/PERFORMANCE.md, session 23). */
__kernel void sph_boundary_cull(__global const float4* restrict solids,
                                __global float4* restrict cull, const uint nsolids)
{
    const uint s = get_global_id(0);
    if (s >= nsolids) return;
    __global const float4* solid = solids + (size_t)s * EDDY_SOLID_STRIDE;
    const float4 o = solid[EDDY_SOLID_SDF];
    const uint4 g = as_uint4(solid[EDDY_SOLID_GRID]);
    const float3 top = o.xyz + o.w * (convert_float3(g.xyz) - 1.0f);
    const float R = fmax(length(fmax(fabs(o.xyz), fabs(top))),
                         length(solid[EDDY_SOLID_SHAPE].xyz)); /* the grid's box; the primitive */
    cull[s] = (float4)(solid[EDDY_SOLID_POS].xyz, R);
    cull[nsolids + s] = (float4)(length(solid[EDDY_SOLID_VEL].xyz),
                                 length(solid[EDDY_SOLID_OMEGA].xyz), 0.0f, 0.0f);
}

/* Solid s's entry of the compact copy that sph_boundary_cull writes. */
inline sph_cull_solid sph_cull_solid_at(__global const float4* restrict cull_data, const uint s,
                                        const uint nsolids)
{
    sph_cull_solid sc;
    sc.sphere = cull_data[s];
    sc.speed = cull_data[nsolids + s].xy;
    return sc;
}

/* Whether a rule of the guard or the contact may act on a particle in the
 * box [lo, hi] moving at most at `speed`, within dt, against the solid
 * (see above). False only when that is certain: NaNs keep the solid. */
inline bool sph_solid_may_act(const sph_cull_solid sc, const float3 lo, const float3 hi,
                              const float speed, const float clearance, const float dt)
{
    const float3 c = sc.sphere.xyz;
    const float R = sc.sphere.w;
    const float near = length(fmax(fmax(lo - c, c - hi), (float3)(0.0f)));
    const float far = length(fmax(fabs(lo - c), fabs(hi - c)));
    const float reach = 2.0f * clearance + 1e-4f * (R + far) +
                        fmax(dt, 0.0f) * (speed + sc.speed.x + sc.speed.y * far);
    return !(near - R > reach);
}

/* Sets, for each span k, mask[k * SPH_CULL_WORDS + ...]'s bit j for the
 * solids base + j (j < SPH_WG) that may act on the span's box (all of them
 * with cull = 0). Each work-item reads one solid's culling data
 * (sph_boundary_cull) and tests it against every span (the spans' boxes:
 * broadcast reads of local memory), then sets its bits. Every work-item of
 * the group calls it (barriers). */
inline void sph_cull_chunk(__global const float4* restrict cull_data, const uint base,
                           const uint nsolids, __local const float4* restrict lo,
                           __local const float4* restrict hi, const float clearance,
                           const float dt, const uint cull, __local uint* restrict mask)
{
    const uint lid = get_local_id(0);
    barrier(CLK_LOCAL_MEM_FENCE); /* the last chunk's mask is read; the boxes are done */
    if (lid < SPH_CULL_SPANS * SPH_CULL_WORDS) mask[lid] = 0u;
    barrier(CLK_LOCAL_MEM_FENCE);
    const uint s = base + lid;
    uint spans = 0u; /* bit k: span k */
    if (s < nsolids) {
        if (cull) {
            const sph_cull_solid sc = sph_cull_solid_at(cull_data, s, nsolids);
            for (uint k = 0; k < SPH_CULL_SPANS; ++k) {
                const float4 l = lo[k * SPH_CULL_SPAN], h = hi[k * SPH_CULL_SPAN];
                if (sph_solid_may_act(sc, l.xyz, h.xyz, h.w, clearance, dt)) spans |= 1u << k;
            }
        } else {
            spans = (1u << SPH_CULL_SPANS) - 1u;
        }
    }
    const uint word = lid >> 5, bit = 1u << (lid & 31u);
    for (uint k = 0; k < SPH_CULL_SPANS; ++k)
        if (spans & (1u << k)) atomic_or(&mask[k * SPH_CULL_WORDS + word], bit);
    barrier(CLK_LOCAL_MEM_FENCE);
}

/* The same test for one particle at its current p and v (the rules depend
 * on nothing else of it), before its visit of solid s: a candidate of the
 * span may lie beyond this particle's reach, and after a solid moved or
 * slowed it the particle tests every later solid this way. */
inline bool sph_particle_may_act(__global const float4* restrict cull_data, const uint s,
                                 const uint nsolids, const float3 p, const float3 v,
                                 const float clearance, const float dt)
{
    return sph_solid_may_act(sph_cull_solid_at(cull_data, s, nsolids), p, p, length(v), clearance,
                             dt);
}

/* The first set bit of a span's mask (SPH_CULL_WORDS words) at k or after
 * it; SPH_WG when none. */
inline uint sph_cull_next(__local const uint* restrict mask, uint k)
{
    for (uint w = k >> 5; w < SPH_CULL_WORDS; ++w, k = w << 5) {
        const uint m = mask[w] & (0xffffffffu << (k & 31u));
        if (m) return (w << 5) + (31u - clz(m & (0u - m)));
    }
    return SPH_WG;
}

/* The culled loop over the solids of sph_boundary_contact and _guard: BODY
 * sees `solid` (its record), in ascending order, for every solid the
 * culling keeps for this particle; `touched` (the kernel's flag that a
 * rule changed the particle) turns the span's mask off for the rest. The
 * kernels have arguments solids, cull_data, nsolids, clearance, cull and
 * locals lo, hi, mask (after sph_span_boxes), active, p, v and dt. */
#define SPH_CULLED_SOLIDS_BEGIN(touched)                                        \
    {                                                                           \
        __local const uint* my_mask_ =                                         \
            mask + (get_local_id(0) / SPH_CULL_SPAN) * SPH_CULL_WORDS;          \
        for (uint base_ = 0; base_ < nsolids; base_ += SPH_WG) {                \
            sph_cull_chunk(cull_data, base_, nsolids, lo, hi, clearance, dt, cull, mask); \
            const uint top_ = active ? min(nsolids - base_, (uint)SPH_WG) : 0u; \
            for (uint k_ = 0; k_ < top_; ++k_) {                                \
                if (!(touched) && (k_ = sph_cull_next(my_mask_, k_)) >= top_) break; \
                if (cull && !sph_particle_may_act(cull_data, base_ + k_, nsolids, p, v, \
                                                  clearance, dt))               \
                    continue;                                                   \
                __global const float4* solid =                                  \
                    solids + (size_t)(base_ + k_) * EDDY_SOLID_STRIDE;
#define SPH_CULLED_SOLIDS_END }}}

/* Phase "boundary_contact" (before the move, after the last velocity
 * change of the step; the clock holds this step's dt): the speculative
 * contact of sph_contact_rule against every solid, by a box's, sphere's or
 * cylinder's exact SDF (sph_solid_exact_sdf), a mesh's trilinear grid.
 * with_acc = 0 (DFSPH: the velocities are final, x += dt v follows):
 * changes vel. with_acc = 1 (WCSPH: v += dt a; x += dt v follows): the
 * rule sees v + dt a and its change goes into acc (divided by dt), so the
 * integration reaches the same velocity. Without it the guard after the
 * move could only catch a particle already inside (and count it): the
 * step's pressure solve may still push a particle that the guard slowed
 * the step before. Only a particle about to cross a surface within the
 * step is touched; fluid at rest or moving along a surface is not. */
__kernel __attribute__((reqd_work_group_size(SPH_WG, 1, 1)))
void sph_boundary_contact(__global const float4* restrict pos,
                          __global float4* restrict vel,
                          __global float4* restrict acc,
                          __global const float4* restrict solids,
                          __global const float* restrict sdf,
                          __global const float* restrict clock,
                          __global const float4* restrict cull_data,
                          const uint nsolids, const uint n, const float clearance,
                          const uint with_acc, const uint cull)
{
    __local float4 lo[SPH_WG], hi[SPH_WG];
    __local uint mask[SPH_CULL_SPANS * SPH_CULL_WORDS];
    const float dt = clock[EDDY_SPH_CLOCK_DT];
    const uint i = get_global_id(0);
    /* no return before the barriers: a whole group alike, but PoCL's
     * work-item loops want every item at each barrier */
    const bool active = i < n && dt > 0.0f;
    const float3 p = active ? pos[i].xyz : (float3)(0.0f);
    const float3 v0 = !active ? (float3)(0.0f) : with_acc ? vel[i].xyz + dt * acc[i].xyz : vel[i].xyz;
    if (cull) sph_span_boxes(active, p, length(v0), lo, hi);
    float3 v = v0;
    bool changed = false;
    SPH_CULLED_SOLIDS_BEGIN(changed)
        const float3 l = sph_solid_local(solid, p);
        float dist;
        float3 gl, nw;
        if (!sph_solid_exact_sdf(solid, l, &dist, &gl) && !sph_solid_sdf(solid, sdf, l, &dist, &gl))
            continue;
        if (!sph_solid_normal(solid, gl, &nw)) continue;
        changed |= sph_contact_rule(p, &v, dist, nw, solid, clearance, dt);
    SPH_CULLED_SOLIDS_END
    if (!changed) return;
    if (with_acc)
        acc[i].xyz += (v - v0) / dt;
    else
        vel[i].xyz = v;
}

/* Phase "boundary_guard" (after integration): keeps the fluid outside every
 * solid's geometric surface, in the solid's local frame at its current
 * pose, by sph_guard_rule with two distances:
 *  - a box's, sphere's or cylinder's exact SDF (sph_solid_exact_sdf), which
 *    the grid overestimates at edges (never underestimates: these solids
 *    are convex): the rule without the band (only a particle inside, or
 *    about to cross within dt, dt this step's from the clock), first;
 *  - the trilinear SDF grid (sph_solid_sdf; every solid, meshes only have
 *    it): the rule with the band, so that any particle closer than the
 *    clearance is put back to it, and for a mesh the speculative contact.
 *    For a primitive this only acts where the exact rule did not (on a
 *    face's flat part the two distances agree).
 * Fluid at rest near an edge (about 0.1 dx off it, the boundary particles'
 * corner lying 0.99 dx in at boundary_inset 0.7 dx) is left where the grid
 * leaves it: pushing all of it to the exact clearance lowered a coarse
 * still tank's pressures by up to 18 % (session 17, docs/PERFORMANCE.md).
 * A particle found INSIDE a solid (exact distance < 0 where known, the
 * grid's otherwise: through the surface in one step) is counted in
 * counters[PENETRATIONS]; one inside several solids counts once. The
 * boundary particles lie boundary_inset below the surface
 * (sim/sph/boundary.hpp), so the band 0 <= dist < clearance is fluid
 * pressed against the solid, not through it. A moved particle stays in the
 * tank within its wall clearance (tank.xyz the size, tank.w the solver's
 * clearance, as sph_walls_after_move): one caught between a solid and a
 * wall (under a body resting on the floor) is left at the wall, in the
 * band, where the pressure squeezes it out sideways, instead of being
 * pushed through the wall and mirrored back into the solid at the next
 * step. */
__kernel __attribute__((reqd_work_group_size(SPH_WG, 1, 1)))
void sph_boundary_guard(__global float4* restrict pos,
                        __global float4* restrict vel,
                        __global uint* restrict counters,
                        __global const float4* restrict solids,
                        __global const float* restrict sdf,
                        __global const float* restrict clock,
                        __global const float4* restrict cull_data,
                        const uint nsolids, const uint n, const float clearance,
                        const float4 tank, const uint cull)
{
    __local float4 lo[SPH_WG], hi[SPH_WG];
    __local uint mask[SPH_CULL_SPANS * SPH_CULL_WORDS];
    const uint i = get_global_id(0);
    const bool active = i < n;
    float3 p = active ? pos[i].xyz : (float3)(0.0f);
    float3 v = active ? vel[i].xyz : (float3)(0.0f);
    const float dt = clock[EDDY_SPH_CLOCK_DT];
    if (cull) sph_span_boxes(active, p, length(v), lo, hi);
    bool moved = false, inside = false;
    SPH_CULLED_SOLIDS_BEGIN(moved)
        float dist;
        float3 gl, nw;
        const bool exact = sph_solid_exact_sdf(solid, sph_solid_local(solid, p), &dist, &gl);
        if (exact) {
            if (dist < 0.0f) inside = true;
            if (sph_solid_normal(solid, gl, &nw))
                moved |= sph_guard_rule(&p, &v, dist, nw, solid, clearance, dt, false, true);
            /* At the clearance or farther (p not moved: the rule moves
             * only within it) the grid cannot act on a primitive: it
             * reads no less than the exact distance (convex), its band
             * rule needs less than the clearance and its speculative
             * rule is the exact one's. Its 8 reads saved. */
            if (dist >= clearance) continue;
        }
        if (!sph_solid_sdf(solid, sdf, sph_solid_local(solid, p), &dist, &gl)) continue;
        if (!sph_solid_normal(solid, gl, &nw)) continue;
        if (!exact && dist < 0.0f) inside = true;
        moved |= sph_guard_rule(&p, &v, dist, nw, solid, clearance, dt, true, !exact);
    SPH_CULLED_SOLIDS_END
    if (inside) atomic_inc(&counters[EDDY_SPH_CNT_PENETRATIONS]);
    if (moved) {
        pos[i].xyz = clamp(p, (float3)(tank.w), tank.xyz - (float3)(tank.w));
        vel[i].xyz = v;
    }
}
