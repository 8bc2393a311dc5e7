/* The device clock: dt of this step into clock[DT] for the integrator, added
 * to the time, and the maxima the forces left in counters reset for the next
 * step. Shared by sph_dt and sph_dfsph_dt (one work-item).
 * The time is a compensated float sum (Kahan 1965, "Further remarks on
 * reducing truncation errors", CACM 8(1):40) kept as t = hi + lo: lo holds
 * what the rounding of hi left out, with the sign every reader assumes
 * (the host's time, sph_probes.cl, sph_bodies.cl). Until 2026-12-04 it held
 * the negated remainder (Kahan's c), so hi + lo was off by twice the
 * remainder (up to 3e-8 s over a 3 000-step dam break). */
inline void sph_clock_advance(__global float* restrict clock, __global uint* restrict counters,
                              const float dt)
{
    clock[EDDY_SPH_CLOCK_DT] = dt;
    const float hi = clock[EDDY_SPH_CLOCK_T_HI], lo = clock[EDDY_SPH_CLOCK_T_LO];
    const float y = dt + lo;
    const float t = hi + y;
    clock[EDDY_SPH_CLOCK_T_LO] = y - (t - hi);
    clock[EDDY_SPH_CLOCK_T_HI] = t;
    counters[EDDY_SPH_CNT_MAX_A2] = 0u;
    counters[EDDY_SPH_CNT_MAX_V2] = 0u;
    counters[EDDY_SPH_CNT_MAX_Y] = 0u;
    counters[EDDY_SPH_CNT_MAX_DROP] = 0u;
}

/* Phase "dt" (one work-item): the adaptive time step from this step's maxima,
 *   dt = min(max_dt, cfl h / max_i(c_i + |v_i|), cfl sqrt(h / |a|max))
 * (Courant condition on the sound speed plus the force criterion of
 * Monaghan 1992 / Morris et al. 1997, with h the support radius; c_i the
 * Tait sound speed of particle i's density, at least c0: sph_forces leaves
 * max_i(c_i - c0 + |v_i|) in MAX_V2, a body its surface speed), advancing
 * the device clock. The host never waits for it; it reads the clock only for
 * diagnostics. */
__kernel void sph_dt(__global float* restrict clock,
                     __global uint* restrict counters,
                     const float h, const float c0, const float cfl, const float max_dt)
{
    if (get_global_id(0) != 0) return;
    const float a = sqrt(as_float(counters[EDDY_SPH_CNT_MAX_A2]));
    const float v = sqrt(as_float(counters[EDDY_SPH_CNT_MAX_V2]));
    float dt = fmin(max_dt, cfl * h / (c0 + v));
    if (a > 0.0f) dt = fmin(dt, cfl * sqrt(h / a));
    if (!(dt > 0.0f)) dt = 0.0f; /* NaN: stop the clock; the integrator counts the damage */
    sph_clock_advance(clock, counters, dt);
}

/* The walls after x += v dt: a particle that crossed a wall plane (moved
 * inwards by the clearance c = tank.w: 0 for WCSPH, EDDY_DFSPH_WALL_CLEARANCE
 * spacings for DFSPH) is mirrored back inside and its normal velocity
 * reversed and scaled by the restitution e (free slip along the wall); the
 * axes turned back this step go into v.w (sph_moved_v, sph_common.cl:
 * WCSPH's continuity equation does not integrate their normal velocity). Anything still outside the tank or
 * non-finite after that is put inside, stopped and counted in
 * counters[EDDY_SPH_CNT_ESCAPED]; a non-finite one also in
 * counters[EDDY_SPH_CNT_NONFINITE] (the finite check turns that into a
 * blow-up: a NaN is never only put back). Shared by sph_integrate and
 * sph_dfsph_integrate. */
inline float2 sph_wall_axis(float x, float v, const float len, const float e, const float c,
                            uint* restrict turned, const uint bit)
{
    if (x < c) { x = 2.0f * c - x; v = -e * v; *turned |= bit; }
    else if (x > len - c) { x = 2.0f * (len - c) - x; v = -e * v; *turned |= bit; }
    return (float2)(x, v);
}

inline void sph_walls_after_move(float4* restrict p, float4* restrict v, const float4 tank,
                                 const float restitution, __global uint* restrict counters)
{
    uint turned = 0u;
    const float2 wx = sph_wall_axis(p->x, v->x, tank.x, restitution, tank.w, &turned, 1u);
    const float2 wy = sph_wall_axis(p->y, v->y, tank.y, restitution, tank.w, &turned, 2u);
    const float2 wz = sph_wall_axis(p->z, v->z, tank.z, restitution, tank.w, &turned, 4u);
    p->x = wx.x; v->x = wx.y;
    p->y = wy.x; v->y = wy.y;
    p->z = wz.x; v->z = wz.y;
    v->w = (float)turned;
    const bool finite = all(isfinite(p->xyz)) && all(isfinite(v->xyz));
    const bool inside = p->x >= 0.0f && p->x <= tank.x && p->y >= 0.0f && p->y <= tank.y &&
                        p->z >= 0.0f && p->z <= tank.z;
    if (!finite || !inside) {
        atomic_inc(&counters[EDDY_SPH_CNT_ESCAPED]);
        if (!finite) atomic_inc(&counters[EDDY_SPH_CNT_NONFINITE]);
        p->xyz = isfinite(p->xyz) ? clamp(p->xyz, (float3)(0.0f), tank.xyz) : 0.5f * tank.xyz;
        v->xyz = (float3)(0.0f);
    }
}

/* Phase "integrate": semi-implicit (symplectic) Euler, v += a dt; x += v dt,
 * then the walls (sph_walls_after_move). */
__kernel __attribute__((reqd_work_group_size(SPH_WG, 1, 1)))
void sph_integrate(__global float4* restrict pos,
                   __global float4* restrict vel,
                   __global const float4* restrict acc,
                   __global const float* restrict clock,
                   __global uint* restrict counters,
                   const uint n, const float4 tank, const float restitution)
{
    const uint i = get_global_id(0);
    if (i >= n) return;
    const float dt = clock[EDDY_SPH_CLOCK_DT];
    float4 p = pos[i], v = vel[i];
    v.xyz += dt * acc[i].xyz;
    p.xyz += dt * v.xyz;
    sph_walls_after_move(&p, &v, tank, restitution, counters);
    pos[i] = p;
    vel[i] = v;
}
