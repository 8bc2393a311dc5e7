/*
 * sph_continuity.cl: WCSPH density from the continuity equation with
 * density diffusion (delta-SPH), used when density_diffusion delta > 0
 * (sim/sph/wcsph.{hpp,cpp}; delta = 0 keeps the summation density of
 * sph_density.cl).
 *
 * Phase "continuity": the density rho_i is carried between steps (buffer
 * rho, slot order) and changes at the rate
 *
 *   D rho_i / Dt = sum_j m (v_i - v_j) . grad_i W_ij
 *                + delta hs c0 sum_j psi_ij . grad_i W_ij V_j ,
 *   psi_ij = 2 (rho_ji^T - rho_ji^H) (r_j - r_i) / |r_ij|^2 ,  V_j = m / rho_j,
 *
 * the delta-SPH diffusion term of Molteni & Colagrossi (2009, "A simple
 * procedure to improve the pressure evaluation in hydrodynamic context using
 * the SPH", Comput. Phys. Commun. 180:861, eq. 8) in the dynamic-density
 * form of Fourtakas et al. (2019, "Local uniform stencil (LUST) boundary
 * condition for arbitrary 3-D boundaries in parallel smoothed particle
 * hydrodynamics (SPH) models", Computers & Fluids 190:346, eqs. 11-12):
 * only the departure from hydrostatics diffuses,
 *
 *   rho_ji^T = rho_j - rho_i ,
 *   rho_ji^H = rho0 ((1 + rho0 g (y_i - y_j) / B)^(1/7) - 1)   (Tait, B = rho0 c0^2 / 7),
 *
 * so a hydrostatic tank has no diffusion flux (Molteni & Colagrossi's plain
 * rho_j - rho_i would diffuse the hydrostatic density gradient and pull the
 * column's pressure off rho g d). hs = h / 2 is the smoothing length (h the
 * support radius), as in the artificial viscosity of sph_forces.cl. With
 * grad_i W_ij = G(r) r_ij (sph_kernel.h), psi_ij . grad_i W_ij =
 * -2 (rho_ji^T - rho_ji^H) G(r): the |r_ij|^2 cancels, no division per pair.
 *
 * Walls: the mirror images of sph_common.cl carry their original's density
 * and mass, the wall-normal velocity reversed. In the continuity sum a wall
 * image is a neighbour like any other (its reversed velocity makes a particle
 * approaching the wall compress). In the diffusion sum the image of j also
 * takes j's hydrostatic density, i.e. rho_ji^H uses the original's height
 * y_j, not the image's: the image's departure from hydrostatics is j's, so
 * near the floor the hydrostatic state still gives no flux. As the mirrored
 * field is symmetric about the wall, the term of (i, image of j) and the term
 * of (j, image of i) are equal and opposite: the wall is a no-flux (Neumann)
 * boundary for the diffusion, no density leaks through it.
 *
 * Boundary particles b (Akinci et al. 2012, SPH_BOUNDARY_BEGIN) add
 *
 *   sum_b psi_b (v_i - v_b) . grad_i W_ib ,
 *
 * the time derivative of their part sum_b psi_b W_ib of the summation density
 * (sph_density.cl, Akinci eq. 6; psi_b = bpos.w, v_b = bvel): fluid
 * approaching a solid compresses as the summation density would say. The
 * diffusion term is fluid-fluid only (Fourtakas et al. 2019 apply it between
 * fluid particles): a solid neither gives nor takes density by diffusion.
 *
 * Velocities: each particle's as it moved (sph_moved_v, sph_common.cl): the
 * normal component on an axis a wall turned it back on in the last step
 * counts as 0 (its stored, reversed velocity is not how it moved).
 *
 * Time integration: with `advance` (the first density phase after a step)
 * rho_out_i = rho_i + dt D rho_i / Dt, with the dt of that step (the device
 * clock) and the rate of the positions and velocities it produced: rho is
 * advanced like x += dt v(new) of semi-implicit Euler, after the velocities
 * (explicit Euler in both rho and v would amplify every acoustic mode by
 * sqrt(1 + (omega dt)^2) per step), and never below
 * EDDY_SPH_CARRIED_DENSITY_FLOOR rho0 (spray's carried density falls without
 * bound and made the diffusion weight m / rho_j singular; eddy_shared.h);
 * without `advance` (a density refresh for output, or the first step)
 * rho_out_i = rho_i. The phase writes rho_out,
 * rhop_i = (rho_out_i, p(rho_out_i)) (Tait, sph_pressure) for the forces, the
 * rate into drho (tests), and in cells mode the real neighbour count (self
 * included) into nbcount, as sph_density does; with build_list it builds
 * the neighbour list (sph_common.cl, "Fused list").
 * 2^lane_bits work-items per particle (sph_common.cl, "Lanes").
 */
/* (1 + x)^(1/7) - 1, the hydrostatic density difference over rho0. For
 * |x| < 1/16 (always, in practice: x = 7 g dy / c0^2 with |dy| < h, about
 * 1e-3) the binomial series to x^5, truncated at |c6| x^6 < 1.2e-7 of the
 * result (c6 = -0.0169): five FMAs instead of a log1p and an expm1 per pair;
 * else expm1(log1p(x) / 7). */
inline float sph_root7m1(const float x)
{
    if (fabs(x) >= 0.0625f) return expm1(log1p(x) / 7.0f);
    return x * (1.0f / 7.0f + x * (-3.0f / 49.0f + x * (13.0f / 343.0f + x * (-65.0f / 2401.0f +
                x * (351.0f / 16807.0f)))));
}

__kernel __attribute__((reqd_work_group_size(SPH_WG, 1, 1)))
void sph_continuity(__global const float4* restrict pos,
                    __global const float4* restrict vel,
                    __global const float* restrict rho,
                    __global const uint2* restrict cells,
                    __global uint* restrict nlist,
                    __global uint* restrict nbcount,
                    __global uint* restrict counters,
                    __global float2* restrict rhop,
                    __global float* restrict drho,
                    __global float* restrict rho_out,
                    __global const float* restrict clock,
                    __global const float4* restrict bpos,
                    __global const float4* restrict bvel,
                    __global const uint2* restrict bcells,
                    const uint nbound,
                    const uint n, const int4 dims, const float inv_cell, const float4 tank,
                    const float h, const float mass, const float rho0, const float B,
                    const float c0, const float delta, const float gravity,
                    const uint advance, const uint list_cap, const uint count_overflow,
                    const uint build_list, const uint lane_bits)
{
    __local float4 red[SPH_WG];
    SPH_LANE_ID(i, lane);
    SPH_FIRST_PREPARE(i);
    float cont = 0.0f, diff = 0.0f, bcont = 0.0f;
    uint cnt = 0;
    float rhoi = 0.0f;
    if (i < n) {
        const float3 p = pos[i].xyz;
        const float3 v = sph_moved_v(vel[i]);
        rhoi = rho[i];
        const float h2 = h * h, inv_h = 1.0f / h;
        const float kh = rho0 * gravity / B; /* 7 g / c0^2 */
        sph_walls_t w;
        const uint mask = sph_walls(p, tank, h, &w);
        /* (rho_ji^T - rho_ji^H) / rho_j (dyn): the dynamic density difference
         * times V_j / m */
#define SPH_CONTINUITY_VISIT(j)                                                 \
        {                                                                       \
            const float3 q = pos[j].xyz;                                        \
            const float3 d = p - q;                                             \
            const float r2 = sph_r2(d);                                         \
            if (r2 < h2) {                                                      \
                ++cnt;                                                          \
                const float3 vj = sph_moved_v(vel[j]);                          \
                const float rhoj = rho[j];                                      \
                const float dyn = ((rhoj - rhoi) - rho0 * sph_root7m1(kh * d.y)) / rhoj; \
                const float g = sph_gradw_q(sqrt(r2) * inv_h);                  \
                cont += g * dot(v - vj, d);                                     \
                diff += g * dyn;                                                \
                for (uint s = mask; s != 0u; s = (s - 1u) & mask) {             \
                    const float3 dg = p - sph_mirror(q, s, w);                  \
                    const float g2 = sph_r2(dg);                                \
                    if (g2 < h2) {                                              \
                        const float gg = sph_gradw_q(sqrt(g2) * inv_h);         \
                        cont += gg * dot(v - sph_mirror_v(vj, s), dg);          \
                        diff += gg * dyn;                                       \
                    }                                                           \
                }                                                               \
            }                                                                   \
        }
        SPH_FIRST_NEIGHBOURS(i, p, SPH_CONTINUITY_VISIT)
        SPH_BOUNDARY_BEGIN(p)
            bcont += bp.w * sph_gradw_q(sqrt(br2) * inv_h) * dot(v - bvel[bj].xyz, bd);
        SPH_BOUNDARY_END
    }
    const float4 t = sph_lane_sum(red, (float4)(cont, diff, (float)cnt, bcont), lane_bits);
    if (i >= n || lane != 0u) return;
    /* sum m G (v_i - v_j).r_ij  -  2 delta hs c0 sum m G dyn  +  sum psi_b G (v_i - v_b).r_ib,
     * 2 hs = h */
    const float rate = sph_gradw_coef(h) * (mass * (t.x - delta * h * c0 * t.y) + t.w);
    const float r = advance ? fmax(rhoi + clock[EDDY_SPH_CLOCK_DT] * rate,
                                   EDDY_SPH_CARRIED_DENSITY_FLOOR * rho0)
                            : rhoi;
    drho[i] = rate;
    rho_out[i] = r;
    rhop[i] = (float2)(r, sph_pressure(r, rho0, B));
    SPH_FIRST_FINISH(i);
#if !SPH_NLIST
    nbcount[i] = (uint)t.z;
#endif
}

/* Phase "continuity_reorder": the carried density follows its particle into
 * the new sorted order (the pipeline's reorder permutation), rho_out[i] =
 * rho_in[order[i]]. A particle without a carried density yet (source slot
 * >= first_new: a block just dropped in; first_new = 0: the start of a run,
 * a switch from summation) starts from the summation density the caller has
 * just put into rhop (sph_density, this slot order), raised to rho0: in the
 * bulk that is the hydrostatic Tait state the scenes set up, at a free
 * surface (where the summation lacks neighbours) rest density. With solids
 * present it is capped at rho_max, the Tait density of the scene's deepest
 * hydrostatic pressure (SphPhysics::startDensityCap; without solids the host
 * passes FLT_MAX: a jittered lattice's summation is consistent with its
 * positions and capping it left the column's pressure noisier than the
 * summation's, 2.2e-2 -> 9.2e-2 rho0 g H): next to a solid the summation counts the
 * boundary sheet (Akinci's psi weighs a fluid half-space) on top of fluid
 * placed half a spacing off it, up to ~1.2 rho0 (p ~ 3e5 Pa at c0 = 31 m/s).
 * The summation density relaxes that with the positions; a carried density
 * started there keeps it: the start exploded (the submerged-box tank's water
 * jumped from 0.98 to 1.18 m within 0.1 s) and the diffusion spread the
 * excess into the bulk for good (the column settled 7 % taller, its pressure
 * +10 .. +24 % of rho g d). Capped, the same tank starts at rest (top
 * 0.973 .. 0.976 m over 1.4 s). */
__kernel __attribute__((reqd_work_group_size(SPH_WG, 1, 1)))
void sph_continuity_reorder(__global const uint* restrict order,
                            __global const float* restrict rho_in,
                            __global const float2* restrict rhop,
                            __global float* restrict rho_out,
                            const uint n, const uint first_new, const float rho0,
                            const float rho_max)
{
    const uint i = get_global_id(0);
    if (i >= n) return;
    const uint src = first_new > 0u ? order[i] : 0u;
    rho_out[i] = src < first_new ? rho_in[src] : clamp(rhop[i].x, rho0, fmax(rho_max, rho0));
}
