/* Rigid bodies (issue 12): kinematic and floating 6-DOF bodies whose surface
 * is a contiguous range of Akinci boundary particles (sim/sph/bodies.hpp).
 * State layout: EDDY_BODY_* in eddy_shared.h, quaternions (x, y, z, w).
 * Per step (each one kernel, one profiler row, nothing waits in between):
 *   body_reduce            force and torque of the fluid on each body
 *   body_integrate         floating: semi-implicit Euler; kinematic: motion law
 *   body_contact           walls, obstacles and other bodies: position correction, impulse
 *   body_update_particles  boundary positions / velocities from the new pose */

#define BODY_WG EDDY_BODY_WG
#define BODY_AT(s, b, f) (s)[(size_t)(b) * EDDY_BODY_STRIDE + (f)]

/* ---- quaternions and the inertia tensor --------------------------------- */
inline float4 body_qmul(const float4 a, const float4 b)
{
    return (float4)(a.w * b.xyz + b.w * a.xyz + cross(a.xyz, b.xyz), a.w * b.w - dot(a.xyz, b.xyz));
}
inline float3 body_rotate(const float4 q, const float3 v)
{
    const float3 t = 2.0f * cross(q.xyz, v);
    return v + q.w * t + cross(q.xyz, t);
}
inline float3 body_rotate_inv(const float4 q, const float3 v)
{
    return body_rotate((float4)(-q.xyz, q.w), v);
}
/* The rotation by `angle` about the unit `axis`. */
inline float4 body_axis_angle(const float3 axis, const float angle)
{
    return (float4)(axis * sin(0.5f * angle), cos(0.5f * angle));
}
/* Symmetric 3x3 [d.x o.x o.y; o.x d.y o.z; o.y o.z d.z] times v. */
inline float3 body_sym_mul(const float4 d, const float4 o, const float3 v)
{
    return (float3)(d.x * v.x + o.x * v.y + o.y * v.z,
                    o.x * v.x + d.y * v.y + o.z * v.z,
                    o.y * v.x + o.z * v.y + d.z * v.z);
}
/* I_world^-1 v = R I_local^-1 R^T v. */
inline float3 body_inv_inertia(__global const float4* s, const uint b, const float4 q, const float3 v)
{
    return body_rotate(q, body_sym_mul(BODY_AT(s, b, EDDY_BODY_INVI_D), BODY_AT(s, b, EDDY_BODY_INVI_O),
                                       body_rotate_inv(q, v)));
}

/* ---- work-group reductions (fixed tree: the same sum on every run) ------- */
inline float4 body_group_sum(__local float4* red, const float4 x)
{
    const uint lid = get_local_id(0);
    barrier(CLK_LOCAL_MEM_FENCE); /* the last use of red is over */
    red[lid] = x;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint off = BODY_WG / 2; off > 0; off >>= 1) {
        if (lid < off) red[lid] += red[lid + off];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    return red[0];
}
inline float4 body_group_max(__local float4* red, const float4 x)
{
    const uint lid = get_local_id(0);
    barrier(CLK_LOCAL_MEM_FENCE);
    red[lid] = x;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint off = BODY_WG / 2; off > 0; off >>= 1) {
        if (lid < off) red[lid] = fmax(red[lid], red[lid + off]);
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    return red[0];
}

/* Phase "body_reduce" (one work-group per body): the force and the torque
 * about the centroid that the fluid exerts on body b,
 *   F_b = sum_k f_k (+ m g, floating),  T_b = sum_k (x_k - c_b) x f_k,
 * k over the body's boundary particles [first, first + count) (bforce from
 * the boundary kernel, bpos at the pose the fluid saw). Each work-item adds
 * k = lid, lid + WG, ... in order, then a fixed tree in local memory: the
 * result does not depend on scheduling. */
__kernel __attribute__((reqd_work_group_size(BODY_WG, 1, 1)))
void body_reduce(__global float4* restrict state,
                 __global const uint4* restrict info,
                 __global const float4* restrict bpos,
                 __global const float4* restrict bforce,
                 const float gravity)
{
    __local float4 red[BODY_WG];
    const uint b = get_group_id(0), lid = get_local_id(0);
    const uint4 in = info[b];
    const float3 c = BODY_AT(state, b, EDDY_BODY_POS).xyz;
    float3 f = (float3)(0.0f), t = (float3)(0.0f);
    for (uint k = lid; k < in.y; k += BODY_WG) {
        const float3 fk = bforce[in.x + k].xyz;
        f += fk;
        t += cross(bpos[in.x + k].xyz - c, fk);
    }
    f = body_group_sum(red, (float4)(f, 0.0f)).xyz;
    t = body_group_sum(red, (float4)(t, 0.0f)).xyz;
    if (lid == 0) {
        if (in.z == EDDY_BODY_FLOATING) f.y -= BODY_AT(state, b, EDDY_BODY_VEL).w * gravity;
        BODY_AT(state, b, EDDY_BODY_FORCE) = (float4)(f, 0.0f);
        BODY_AT(state, b, EDDY_BODY_TORQUE) = (float4)(t, 0.0f);
    }
}

/* Phase "body_integrate" (one work-item per body), over the dt of the fluid
 * step just taken (clock[DT]), to the time after it (clock T_HI + T_LO).
 * Floating: semi-implicit Euler on the momenta,
 *   v += dt F / m;  c += dt v;  L += dt T;  omega = R I^-1 R^T L;
 *   q = rot(omega dt) q (exact rotation about omega, renormalised);
 * then omega = R' I^-1 R'^T L with the new orientation. Carrying L instead
 * of omega keeps torque-free angular momentum exact (the gyroscopic term
 * omega x I omega needs no explicit evaluation). The largest body
 * acceleration |F/m|^2 joins the fluid's in counters (time step).
 * Kinematic: pose and velocities from the motion law at the new time. */
__kernel void body_integrate(__global float4* restrict state,
                             __global const uint4* restrict info,
                             __global const float* restrict clock,
                             __global uint* restrict counters,
                             const uint nbodies)
{
    const uint b = get_global_id(0);
    if (b >= nbodies) return;
    const float dt = clock[EDDY_SPH_CLOCK_DT];
    const float thi = clock[EDDY_SPH_CLOCK_T_HI], tlo = clock[EDDY_SPH_CLOCK_T_LO];
    const uint kind = info[b].z;
    float4 pos = BODY_AT(state, b, EDDY_BODY_POS), q = BODY_AT(state, b, EDDY_BODY_QUAT);
    float4 vel = BODY_AT(state, b, EDDY_BODY_VEL), om = BODY_AT(state, b, EDDY_BODY_OMEGA);
    float4 L = BODY_AT(state, b, EDDY_BODY_ANGMOM);
    if (kind == EDDY_BODY_FLOATING) {
        const float3 a = BODY_AT(state, b, EDDY_BODY_FORCE).xyz * pos.w;
        vel.xyz += dt * a;
        pos.xyz += dt * vel.xyz;
        L.xyz += dt * BODY_AT(state, b, EDDY_BODY_TORQUE).xyz;
        const float3 w = body_inv_inertia(state, b, q, L.xyz);
        const float wn = length(w);
        if (wn > 0.0f) q = body_qmul(body_axis_angle(w / wn, wn * dt), q);
        q = normalize(q);
        om.xyz = body_inv_inertia(state, b, q, L.xyz);
        float a2 = dot(a, a);
        if (!isfinite(a2)) a2 = INFINITY;
        atomic_max(&counters[EDDY_SPH_CNT_MAX_A2], as_uint(a2));
    } else {
        const float4 m0 = BODY_AT(state, b, EDDY_BODY_M0), m1 = BODY_AT(state, b, EDDY_BODY_M1);
        const float4 m2 = BODY_AT(state, b, EDDY_BODY_M2), q0 = BODY_AT(state, b, EDDY_BODY_M3);
        if (kind == EDDY_BODY_PISTON) {
            /* x(t) = x0 + A sin(2 pi t / T + phase) along the axis */
            const float k = 2.0f * M_PI_F / m1.w;
            const float s = k * thi + k * tlo + m2.w;
            pos.xyz = m0.xyz + (m0.w * sin(s)) * m1.xyz;
            vel.xyz = (m0.w * k * cos(s)) * m1.xyz;
            q = q0;
            om.xyz = (float3)(0.0f);
        } else {
            /* rotation by omega t about the axis through the point */
            const float ang = m0.w * thi + m0.w * tlo;
            const float4 qa = body_axis_angle(m1.xyz, ang);
            q = normalize(body_qmul(qa, q0));
            pos.xyz = m2.xyz + body_rotate(qa, m0.xyz - m2.xyz);
            om.xyz = m0.w * m1.xyz;
            vel.xyz = cross(om.xyz, pos.xyz - m2.xyz);
        }
    }
    BODY_AT(state, b, EDDY_BODY_POS) = pos;
    BODY_AT(state, b, EDDY_BODY_QUAT) = q;
    BODY_AT(state, b, EDDY_BODY_VEL) = vel;
    BODY_AT(state, b, EDDY_BODY_OMEGA) = om;
    BODY_AT(state, b, EDDY_BODY_ANGMOM) = L;
}

/* Signed distance of the shape of body j (its own frame, analytic for the
 * primitives, the bounding sphere about the centroid otherwise). */
inline float body_sdf_local(const uint shape, const float4 size, const float3 centroid, const float radius,
                            const float3 p)
{
    if (shape == EDDY_BODY_SHAPE_BOX) {
        const float3 d = fabs(p) - size.xyz;
        return length(fmax(d, (float3)(0.0f))) + fmin(fmax(d.x, fmax(d.y, d.z)), 0.0f);
    }
    if (shape == EDDY_BODY_SHAPE_SPHERE) return length(p) - size.x;
    if (shape == EDDY_BODY_SHAPE_CYLINDER) {
        const float2 d = (float2)(length(p.xz) - size.x, fabs(p.y) - size.y);
        return fmin(fmax(d.x, d.y), 0.0f) + length(fmax(d, (float2)(0.0f)));
    }
    return length(p - centroid) - radius;
}

/* The correction of one contact of body b (lid 0 only; pb = b's pose before
 * any correction of this step, pos/vel/L/om its running state): move out
 * along n by share * depth, then remove share of the approaching normal
 * velocity of the contact point x relative to the partner's velocity
 * `vother` there, by an impulse J = -v_n / (1/m + n.(I^-1 (r x n) x r))
 * (no bounce, no friction). */
inline void body_apply_contact(__global const float4* s, const uint b, const float4 pb,
                               const float4 q, const float3 n, const float3 x,
                               const float3 vother, const float depth, const float share,
                               float4* pos, float4* vel, float4* L, float4* om)
{
    const float invm = pb.w;
    const float3 r = x - pb.xyz;
    pos->xyz += (share * depth) * n;
    const float vn = dot(vel->xyz + cross(om->xyz, r) - vother, n);
    if (vn < 0.0f) {
        const float3 rn = cross(r, n);
        const float kk = invm + dot(rn, body_inv_inertia(s, b, q, rn));
        const float jn = -share * vn / kk;
        vel->xyz += (jn * invm) * n;
        L->xyz += jn * rn;
        om->xyz = body_inv_inertia(s, b, q, L->xyz);
    }
}

/* Phase "body_contact" (one work-group per body; reads the state `in`,
 * writes the whole record of b to `out`, so every group sees the others'
 * integrated, uncorrected poses). Keeps floating bodies inside the tank and
 * out of each other, simply and robustly: every boundary particle x of b at
 * b's new pose is tested
 *   - against each body j whose bounding sphere overlaps b's: penetration
 *     d = margin - sdf_j(x) (j's shape in its frame at its new pose), normal
 *     grad sdf_j; one contact per partner with the d-weighted mean normal
 *     (the line of centres where that points into j: deep overlap),
 *     point and partner velocity, and the deepest d; b takes half of the
 *     correction and of the impulse when j floats too (j does the other
 *     half), all of it when j is kinematic;
 *   - against each static solid (obstacle) near b, as against a kinematic
 *     body at rest (below);
 *   - then against the six tank planes (hard: last): d = margin - distance,
 *     one contact per plane at the d-weighted mean point.
 * A contact's depth discounts the corrections already applied (the largest
 * signed d of all particles minus the correction along its normal).
 * Kinematic bodies are never corrected. The largest surface speed
 * (|v| + |omega| R)^2 of every body joins the fluid's in counters. */
__kernel __attribute__((reqd_work_group_size(BODY_WG, 1, 1)))
void body_contact(__global const float4* restrict in,
                  __global float4* restrict out,
                  __global const uint4* restrict info,
                  __global const float4* restrict blocal,
                  __global uint* restrict counters,
                  const uint nbodies, const float4 tank, const float margin,
                  __global const float4* restrict solids,
                  __global const float* restrict sdf,
                  const uint nstatic)
{
    __local float4 red[BODY_WG];
    __local uint near[BODY_WG];
    __local uint nnear;
    const uint b = get_group_id(0), lid = get_local_id(0);
    const uint4 inf = info[b];
    const bool floating = inf.z == EDDY_BODY_FLOATING;
    const uint count = floating ? inf.y : 0u;
    const float4 pb = BODY_AT(in, b, EDDY_BODY_POS), qb = BODY_AT(in, b, EDDY_BODY_QUAT);
    const float3 clb = BODY_AT(in, b, EDDY_BODY_CENTROID).xyz;
    const float rb = BODY_AT(in, b, EDDY_BODY_OMEGA).w;
    /* b's running state (lid 0 applies the contacts to it) */
    float4 pos = pb, vel = BODY_AT(in, b, EDDY_BODY_VEL), om = BODY_AT(in, b, EDDY_BODY_OMEGA);
    float4 L = BODY_AT(in, b, EDDY_BODY_ANGMOM);

    /* Other bodies, a work-group's worth of candidates at a time. */
    for (uint base = 0; base < nbodies; base += BODY_WG) {
        const uint jc = base + lid;
        uint hit = 0u;
        if (floating && jc < nbodies && jc != b) {
            const float3 dc = BODY_AT(in, jc, EDDY_BODY_POS).xyz - pb.xyz;
            const float reach = rb + BODY_AT(in, jc, EDDY_BODY_OMEGA).w + margin;
            hit = dot(dc, dc) < reach * reach ? 1u : 0u;
        }
        barrier(CLK_LOCAL_MEM_FENCE); /* the last chunk's list is no longer read */
        near[lid] = hit;
        barrier(CLK_LOCAL_MEM_FENCE);
        if (lid == 0) {
            uint m = 0;
            for (uint i = 0; i < BODY_WG; ++i)
                if (near[i]) near[m++] = base + i;
            nnear = m;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        const uint nn = nnear;
        for (uint e = 0; e < nn; ++e) {
            const uint j = near[e];
            const float4 pj = BODY_AT(in, j, EDDY_BODY_POS), qj = BODY_AT(in, j, EDDY_BODY_QUAT);
            const float3 clj = BODY_AT(in, j, EDDY_BODY_CENTROID).xyz;
            const float4 sz = BODY_AT(in, j, EDDY_BODY_SHAPE);
            const float4 omj = BODY_AT(in, j, EDDY_BODY_OMEGA);
            const float3 vj = BODY_AT(in, j, EDDY_BODY_VEL).xyz;
            const uint shj = info[j].w;
            const float rj = omj.w, e2 = 1e-3f * rj;
            /* sum d n (xyz) and d (w), sum d x, sum d v_j; the largest signed d */
            float4 sn = (float4)(0.0f), sx = (float4)(0.0f), sv = (float4)(0.0f);
            float dm = -INFINITY;
            for (uint k = lid; k < count; k += BODY_WG) {
                const float3 x = pb.xyz + body_rotate(qb, blocal[inf.x + k].xyz - clb);
                const float3 lx = clj + body_rotate_inv(qj, x - pj.xyz);
                const float d = margin - body_sdf_local(shj, sz, clj, rj, lx);
                dm = fmax(dm, d);
                if (d > 0.0f) {
                    /* outward normal of j: central differences of its sdf */
                    const float3 g = (float3)(
                        body_sdf_local(shj, sz, clj, rj, lx + (float3)(e2, 0.0f, 0.0f)) -
                            body_sdf_local(shj, sz, clj, rj, lx - (float3)(e2, 0.0f, 0.0f)),
                        body_sdf_local(shj, sz, clj, rj, lx + (float3)(0.0f, e2, 0.0f)) -
                            body_sdf_local(shj, sz, clj, rj, lx - (float3)(0.0f, e2, 0.0f)),
                        body_sdf_local(shj, sz, clj, rj, lx + (float3)(0.0f, 0.0f, e2)) -
                            body_sdf_local(shj, sz, clj, rj, lx - (float3)(0.0f, 0.0f, e2)));
                    const float gl = length(g);
                    if (gl > 0.0f) {
                        sn += (float4)(d * body_rotate(qj, g / gl), d);
                        sx += (float4)(d * x, 0.0f);
                        sv += (float4)(d * (vj + cross(omj.xyz, x - pj.xyz)), 0.0f);
                    }
                }
            }
            sn = body_group_sum(red, sn);
            sx = body_group_sum(red, sx);
            sv = body_group_sum(red, sv);
            dm = body_group_max(red, (float4)(dm)).x;
            const float nl = length(sn.xyz);
            if (lid == 0 && sn.w > 0.0f && nl > 0.0f) {
                /* Deep in (the surface normals point towards j's centre):
                 * out along the line of centres instead. */
                float3 n = sn.xyz / nl;
                const float3 dc = pb.xyz - pj.xyz;
                if (dot(n, dc) < 0.0f)
                    n = dot(dc, dc) > 0.0f ? normalize(dc) : (float3)(b > j ? 1.0f : -1.0f, 0.0f, 0.0f);
                const float depth = dm - dot(pos.xyz - pb.xyz, n);
                const float share = info[j].z == EDDY_BODY_FLOATING ? 0.5f : 1.0f;
                if (depth > 0.0f)
                    body_apply_contact(in, b, pb, qb, n, sx.xyz / sn.w, sv.xyz / sn.w, depth, share,
                                       &pos, &vel, &L, &om);
            }
        }
    }

    /* Static solids (the obstacles: solid records 0 .. nstatic - 1, sph_solid.cl),
     * each as a kinematic body at rest: penetration d = margin - sdf_s(x)
     * with a box's, sphere's or cylinder's exact distance, a mesh's grid
     * (outside its grid: no contact), the d-weighted mean normal and point,
     * all of the correction and impulse on b. A solid farther from b's
     * centre than b's bounding radius + margin (exact distance) is skipped;
     * the test is the same for the whole work-group (its barriers). */
    for (uint si = 0; floating && si < nstatic; ++si) {
        __global const float4* solid = solids + (size_t)si * EDDY_SOLID_STRIDE;
        float dc;
        float3 gc;
        if (sph_solid_exact_sdf(solid, sph_solid_local(solid, pb.xyz), &dc, &gc) && dc > rb + margin)
            continue;
        float4 sn = (float4)(0.0f), sx = (float4)(0.0f);
        float dm = -INFINITY;
        for (uint k = lid; k < count; k += BODY_WG) {
            const float3 x = pb.xyz + body_rotate(qb, blocal[inf.x + k].xyz - clb);
            const float3 l = sph_solid_local(solid, x);
            float dist;
            float3 gl;
            if (!sph_solid_exact_sdf(solid, l, &dist, &gl) && !sph_solid_sdf(solid, sdf, l, &dist, &gl))
                continue;
            const float d = margin - dist, gn = length(gl);
            dm = fmax(dm, d);
            if (d > 0.0f && gn > 0.0f) {
                const float3 nl = gl / gn; /* local outward normal -> world (R's rows) */
                const float3 nw = (float3)(dot(solid[EDDY_SOLID_ROT].xyz, nl),
                                           dot(solid[EDDY_SOLID_ROT + 1].xyz, nl),
                                           dot(solid[EDDY_SOLID_ROT + 2].xyz, nl));
                sn += (float4)(d * nw, d);
                sx += (float4)(d * x, 0.0f);
            }
        }
        sn = body_group_sum(red, sn);
        sx = body_group_sum(red, sx);
        dm = body_group_max(red, (float4)(dm)).x;
        const float nl = length(sn.xyz);
        if (lid == 0 && sn.w > 0.0f && nl > 0.0f) {
            const float3 n = sn.xyz / nl;
            const float depth = dm - dot(pos.xyz - pb.xyz, n);
            if (depth > 0.0f)
                body_apply_contact(in, b, pb, qb, n, sx.xyz / sn.w, (float3)(0.0f), depth, 1.0f, &pos,
                                   &vel, &L, &om);
        }
    }

    /* Walls: per plane (x0, x1, y0, y1, z0, z1) sum of d x (xyz) and d (w)
     * over the penetrating particles, and the largest signed d of all. */
    float4 ws[6];
    float dmax[6];
    for (int k = 0; k < 6; ++k) { ws[k] = (float4)(0.0f); dmax[k] = -INFINITY; }
    for (uint k = lid; k < count; k += BODY_WG) {
        const float3 x = pb.xyz + body_rotate(qb, blocal[inf.x + k].xyz - clb);
        const float d[6] = {margin - x.x, x.x - (tank.x - margin), margin - x.y,
                            x.y - (tank.y - margin), margin - x.z, x.z - (tank.z - margin)};
        for (int p = 0; p < 6; ++p) {
            dmax[p] = fmax(dmax[p], d[p]);
            if (d[p] > 0.0f) ws[p] += (float4)(d[p] * x, d[p]);
        }
    }
    for (int p = 0; p < 6; ++p) ws[p] = body_group_sum(red, ws[p]);
    const float4 m03 = body_group_max(red, (float4)(dmax[0], dmax[1], dmax[2], dmax[3]));
    const float4 m45 = body_group_max(red, (float4)(dmax[4], dmax[5], 0.0f, 0.0f));

    if (lid == 0) {
        if (floating) {
            const float dm[6] = {m03.x, m03.y, m03.z, m03.w, m45.x, m45.y};
            /* Per axis, its two planes: the low one, then the high one. A
             * body too wide for the clearance on both sides (a body spanning
             * a thin slab's depth: d_lo + d_hi > 0, no position satisfies
             * both) is centred between them instead: pushed out of one wall
             * by d it would go through the other. */
            for (int a = 0; a < 3; ++a) {
                float3 n = (float3)(0.0f);
                if (a == 0) n.x = 1.0f; else if (a == 1) n.y = 1.0f; else n.z = 1.0f;
                const int lo = 2 * a, hi = 2 * a + 1;
                /* the penetrating particles' mean point; none before the
                 * corrections so far: the bounding sphere's point nearest the wall */
                const float3 xl = ws[lo].w > 0.0f ? ws[lo].xyz / ws[lo].w : pb.xyz - rb * n;
                const float3 xh = ws[hi].w > 0.0f ? ws[hi].xyz / ws[hi].w : pb.xyz + rb * n;
                const float dl = dm[lo] - dot(pos.xyz - pb.xyz, n);
                const float dh0 = dm[hi] + dot(pos.xyz - pb.xyz, n);
                if (dl + dh0 > 0.0f && (dl > 0.0f || dh0 > 0.0f)) {
                    const float s = 0.5f * (dl - dh0);  /* equal overlaps on both sides */
                    if (s > 0.0f)
                        body_apply_contact(in, b, pb, qb, n, xl, (float3)(0.0f), s, 1.0f, &pos, &vel, &L, &om);
                    else if (s < 0.0f)
                        body_apply_contact(in, b, pb, qb, -n, xh, (float3)(0.0f), -s, 1.0f, &pos, &vel, &L, &om);
                    continue;
                }
                if (dl > 0.0f)
                    body_apply_contact(in, b, pb, qb, n, xl, (float3)(0.0f), dl, 1.0f, &pos, &vel, &L, &om);
                const float dh = dm[hi] + dot(pos.xyz - pb.xyz, n);
                if (dh > 0.0f)
                    body_apply_contact(in, b, pb, qb, -n, xh, (float3)(0.0f), dh, 1.0f, &pos, &vel, &L, &om);
            }
        }
        for (uint f = 0; f < EDDY_BODY_STRIDE; ++f) BODY_AT(out, b, f) = BODY_AT(in, b, f);
        BODY_AT(out, b, EDDY_BODY_POS) = pos;
        BODY_AT(out, b, EDDY_BODY_VEL) = vel;
        BODY_AT(out, b, EDDY_BODY_OMEGA) = om;
        BODY_AT(out, b, EDDY_BODY_ANGMOM) = L;
        const float sp = length(vel.xyz) + length(om.xyz) * rb;
        float s2 = sp * sp;
        if (!isfinite(s2)) s2 = INFINITY;
        atomic_max(&counters[EDDY_SPH_CNT_MAX_V2], as_uint(s2));
    }
}

/* Phase "body_update_particles" (one work-item per boundary particle of the
 * bodies, [first, first + count) of the boundary buffers; body[k] its body):
 *   r = R (blocal - centroid_local);  bpos.xyz = c + r;  bvel = v + omega x r
 * (bpos.w, the particle's volume psi, is kept: the boundary recomputes it).
 * Work-item b < nbodies also writes body b's solid record (solid_first + b,
 * EDDY_SOLID_*: the pose of the shape's origin, the rows of R, the velocity
 * of the origin, omega) for the penetration guard; solid_first =
 * 0xffffffff: no records. */
__kernel void body_update_particles(__global const float4* restrict state,
                                    __global const uint* restrict body,
                                    __global const float4* restrict blocal,
                                    __global float4* restrict bpos,
                                    __global float4* restrict bvel,
                                    __global float4* restrict solids,
                                    const uint first, const uint count,
                                    const uint solid_first, const uint nbodies)
{
    const uint k = get_global_id(0);
    if (k < nbodies && solid_first != 0xffffffffu) {
        const float4 q = BODY_AT(state, k, EDDY_BODY_QUAT);
        const float3 c = BODY_AT(state, k, EDDY_BODY_POS).xyz;
        const float3 w = BODY_AT(state, k, EDDY_BODY_OMEGA).xyz;
        const float3 o = c - body_rotate(q, BODY_AT(state, k, EDDY_BODY_CENTROID).xyz);
        __global float4* rec = solids + (size_t)(solid_first + k) * EDDY_SOLID_STRIDE;
        const float x = q.x, y = q.y, z = q.z, qw = q.w;
        rec[EDDY_SOLID_POS] = (float4)(o, 0.0f);
        rec[EDDY_SOLID_ROT] = (float4)(1.0f - 2.0f * (y * y + z * z), 2.0f * (x * y - z * qw), 2.0f * (x * z + y * qw), 0.0f);
        rec[EDDY_SOLID_ROT + 1] = (float4)(2.0f * (x * y + z * qw), 1.0f - 2.0f * (x * x + z * z), 2.0f * (y * z - x * qw), 0.0f);
        rec[EDDY_SOLID_ROT + 2] = (float4)(2.0f * (x * z - y * qw), 2.0f * (y * z + x * qw), 1.0f - 2.0f * (x * x + y * y), 0.0f);
        rec[EDDY_SOLID_VEL] = (float4)(BODY_AT(state, k, EDDY_BODY_VEL).xyz + cross(w, o - c), 0.0f);
        rec[EDDY_SOLID_OMEGA] = (float4)(w, 0.0f);
    }
    if (k >= count) return;
    const uint i = first + k, b = body[k];
    const float3 r = body_rotate(BODY_AT(state, b, EDDY_BODY_QUAT),
                                 blocal[i].xyz - BODY_AT(state, b, EDDY_BODY_CENTROID).xyz);
    bpos[i] = (float4)(BODY_AT(state, b, EDDY_BODY_POS).xyz + r, bpos[i].w);
    bvel[i] = (float4)(BODY_AT(state, b, EDDY_BODY_VEL).xyz + cross(BODY_AT(state, b, EDDY_BODY_OMEGA).xyz, r), 0.0f);
}
