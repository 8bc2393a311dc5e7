/* Phase "forces": acceleration of every particle,
 *   a_i = - sum_j m (p_i/rho_i^2 + p_j/rho_j^2 + Pi_ij) grad_i W_ij     (Monaghan 1992)
 *         - gamma sum_j m K_ij C(r_ij) r_ij / r_ij                      (Akinci et al. 2013)
 *         + g
 * with Monaghan's artificial viscosity (J.J. Monaghan 1992, "Smoothed particle
 * hydrodynamics", ARA&A 30:543, eq. 4.2):
 *   Pi_ij = -alpha c0 mu_ij / rho_bar,  mu_ij = hs v_ij.r_ij / (r_ij^2 + 0.01 hs^2)
 *   when v_ij.r_ij < 0 (approaching), else 0;  hs = h/2 the smoothing length.
 * The pressure term is divided by the lattice gradient normalisation
 * gamma_L = -sum_k V x_k,x dW/dx (k over the initial cubic lattice; 0.977 at
 * h = 2.2 dx), a constant computed on the host like the mass calibration, so
 * that the discrete pressure gradient is exact on the initial lattice
 * (the hydrostatic pressure is otherwise too high by 1/gamma_L).
 * Every pair term is antisymmetric in (i, j): momentum is conserved pairwise.
 * Wall images contribute pressure and viscosity (not cohesion).
 * Boundary particles b (Akinci et al. 2012, SPH_BOUNDARY_BEGIN) add
 *   - sum_b psi_b (f p_i/rho_i^2 + Pi_ib) grad_i W_ib
 * (eq. 10 with pressure mirroring, f = EDDY_SPH_BOUNDARY_PRESSURE_FACTOR, psi with
 * its half-space scale, eddy_shared.h, and
 * the friction of eq. 11: Pi_ib as Pi_ij with alpha_b = boundary_viscosity,
 * rho_b = rho_i and v_b the boundary particle's velocity).
 * The work-group maxima of |a|^2 and of the signal speed squared, and of y and
 * tank height - y (the fluid's extent along gravity), go into counters (atomic
 * max of the float bits, valid for non-negative floats) for the time-step
 * kernels. The signal speed is |v_i| plus, with c_sound > 0 (WCSPH: c0), the
 * local sound speed's excess over c0: Tait's c_i = c0 (rho_i/rho0)^3 (c^2 =
 * dp/drho of p = rho0 c0^2/7 ((rho/rho0)^7 - 1)), taken as c0 below rho0, so
 * that sph_dt's cfl h / (c0 + max) is the Courant condition on max_i (c_i +
 * |v_i|) (Monaghan 1992, sec. 10): a particle squeezed to 1.25 rho0 carries
 * sound twice as fast as c0, and a step sized for c0 then amplifies its
 * compression (a one-layer slot between an obstacle and a wall went from
 * 1.25 to 4.4 rho0 and blew up). DFSPH passes 0: its time step has no sound.
 * 2^lane_bits work-items per particle (sph_common.cl, "Lanes"). */
__kernel __attribute__((reqd_work_group_size(SPH_WG, 1, 1)))
void sph_forces(__global const float4* restrict pos,
                __global const float4* restrict vel,
                __global const float2* restrict rhop,
                __global const uint2* restrict cells,
                __global const uint* restrict nlist,
                __global uint* restrict nbcount,
                __global float4* restrict acc,
                __global uint* restrict counters,
                __global const float4* restrict bpos,
                __global const float4* restrict bvel,
                __global const uint2* restrict bcells,
                const uint nbound, const float alpha_b,
                const uint n, const int4 dims, const float inv_cell, const float4 tank,
                const float h, const float mass, const float c0, const float alpha,
                const float gravity, const float gamma, const float rho0,
                const float grad_scale, const float c_sound, const uint lane_bits)
{
    __local float red_a[SPH_WG], red_v[SPH_WG], red_y[SPH_WG], red_d[SPH_WG];
    __local float4 red[SPH_WG];
    const uint lid = get_local_id(0);
    SPH_LANE_ID(i, lane);
    const bool valid = i < n;
    float3 a = (float3)(0.0f);
    float3 v = (float3)(0.0f);
    if (valid) {
        const float3 p = pos[i].xyz;
        v = vel[i].xyz;
        const float2 di = rhop[i];
        const float pri = grad_scale * di.y / (di.x * di.x);
        const float h2 = h * h, hs = 0.5f * h, eta2 = 0.01f * hs * hs;
        const float inv_h = 1.0f / h, gc = mass * sph_gradw_coef(h);
        sph_walls_t w;
        const uint mask = sph_walls(p, tank, h, &w);
        SPH_NEIGHBOURS_BEGIN(i, p)
            const float3 q = pos[j].xyz;
            const float3 d = p - q;
            const float r2 = sph_r2(d);
            if (r2 < h2) {
                const float3 vj = vel[j].xyz;
                const float2 dj = rhop[j];
                const float prj = grad_scale * dj.y / (dj.x * dj.x);
                const float cvis = alpha * c0 * hs * 2.0f / (di.x + dj.x);
                {
                    const float vr = dot(v - vj, d);
                    const float pi_ij = vr < 0.0f ? -cvis * vr / (r2 + eta2) : 0.0f;
                    a -= ((pri + prj + pi_ij) * gc * sph_gradw_q(sqrt(r2) * inv_h)) * d;
                    if (gamma > 0.0f && r2 > 0.0f) {
                        const float r = sqrt(r2);
                        const float kij = 2.0f * rho0 / (di.x + dj.x);
                        a -= (gamma * mass * kij * sph_cohesion(r, h) / r) * d;
                    }
                }
                for (uint s = mask; s != 0u; s = (s - 1u) & mask) {
                    const float3 dg = p - sph_mirror(q, s, w);
                    const float g2 = sph_r2(dg);
                    if (g2 < h2) {
                        const float vr = dot(v - sph_mirror_v(vj, s), dg);
                        const float pi_ij = vr < 0.0f ? -cvis * vr / (g2 + eta2) : 0.0f;
                        a -= ((pri + prj + pi_ij) * gc * sph_gradw_q(sqrt(g2) * inv_h)) * dg;
                    }
                }
            }
        SPH_NEIGHBOURS_END
        const float cvis_b = alpha_b * c0 * hs / di.x, gcu = sph_gradw_coef(h);
        SPH_BOUNDARY_BEGIN(p)
            const float vr = dot(v - bvel[bj].xyz, bd);
            const float pi_ib = vr < 0.0f ? -cvis_b * vr / (br2 + eta2) : 0.0f;
            a -= (bp.w * (EDDY_SPH_BOUNDARY_PRESSURE_FACTOR * pri + pi_ib) * gcu *
                  sph_gradw_q(sqrt(br2) * inv_h)) * bd;
        SPH_BOUNDARY_END
    }
    a = sph_lane_sum(red, (float4)(a, 0.0f), lane_bits).xyz;
    float a2 = 0.0f, v2 = 0.0f, y = 0.0f, drop = 0.0f;
    if (valid && lane == 0u) {
        y = clamp(pos[i].y, 0.0f, tank.y); /* NaN: clamp gives one of the bounds */
        if (!isfinite(y)) y = 0.0f;
        drop = tank.y - y;
        a.y -= gravity;
        acc[i] = (float4)(a, 0.0f);
        a2 = dot(a, a);
        const float r = fmax(rhop[i].x / rho0, 1.0f);
        const float sig = length(v) + c_sound * (r * r * r - 1.0f);
        v2 = sig * sig;
        if (!isfinite(a2)) a2 = INFINITY;
        if (!isfinite(v2)) v2 = INFINITY;
    }
    red_a[lid] = a2;
    red_v[lid] = v2;
    red_y[lid] = y;
    red_d[lid] = drop;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint off = SPH_WG / 2; off > 0; off >>= 1) {
        if (lid < off) {
            red_a[lid] = fmax(red_a[lid], red_a[lid + off]);
            red_v[lid] = fmax(red_v[lid], red_v[lid + off]);
            red_y[lid] = fmax(red_y[lid], red_y[lid + off]);
            red_d[lid] = fmax(red_d[lid], red_d[lid + off]);
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (lid == 0) {
        atomic_max(&counters[EDDY_SPH_CNT_MAX_A2], as_uint(red_a[0]));
        atomic_max(&counters[EDDY_SPH_CNT_MAX_V2], as_uint(red_v[0]));
        atomic_max(&counters[EDDY_SPH_CNT_MAX_Y], as_uint(red_y[0]));
        atomic_max(&counters[EDDY_SPH_CNT_MAX_DROP], as_uint(red_d[0]));
    }
}
