/* Phase "density": rho_i = sum_j m W(|x_i - x_j|) over the real neighbours
 * (self included) and their wall images, plus sum_b psi_b W(|x_i - x_b|) over
 * the boundary particles (Akinci et al. 2012, eq. 6); Tait pressure. In cells mode the
 * number of real neighbours within h (self included) is written to nbcount;
 * with build_list it builds the neighbour list (sph_common.cl, "Fused list").
 * 2^lane_bits work-items per particle (sph_common.cl, "Lanes"). */
__kernel __attribute__((reqd_work_group_size(SPH_WG, 1, 1)))
void sph_density(__global const float4* restrict pos,
                 __global const uint2* restrict cells,
                 __global uint* restrict nlist,
                 __global uint* restrict nbcount,
                 __global uint* restrict counters,
                 __global float2* restrict rhop,
                 __global const float4* restrict bpos,
                 __global const uint2* restrict bcells,
                 const uint nbound,
                 const uint n, const int4 dims, const float inv_cell, const float4 tank,
                 const float h, const float mass, const float rho0, const float B,
                 const uint list_cap, const uint count_overflow, const uint build_list,
                 const uint lane_bits)
{
    __local float4 red[SPH_WG];
    SPH_LANE_ID(i, lane);
    SPH_FIRST_PREPARE(i);
    float sum = 0.0f, bsum = 0.0f;
    uint cnt = 0;
    if (i < n) {
        const float3 p = pos[i].xyz;
        const float h2 = h * h;
        sph_walls_t w;
        const uint mask = sph_walls(p, tank, h, &w);
        const float inv_h = 1.0f / h;
#define SPH_DENSITY_VISIT(j)                                                    \
        {                                                                       \
            const float3 q = pos[j].xyz;                                        \
            const float r2 = sph_r2(p - q);                                     \
            if (r2 < h2) {                                                      \
                ++cnt;                                                          \
                sum += sph_w_q(sqrt(r2) * inv_h);                               \
                for (uint s = mask; s != 0u; s = (s - 1u) & mask) {             \
                    const float g2 = sph_r2(p - sph_mirror(q, s, w));           \
                    if (g2 < h2) sum += sph_w_q(sqrt(g2) * inv_h);              \
                }                                                               \
            }                                                                   \
        }
        SPH_FIRST_NEIGHBOURS(i, p, SPH_DENSITY_VISIT)
        SPH_BOUNDARY_BEGIN(p)
            bsum += bp.w * sph_w_q(sqrt(br2) * inv_h);
        SPH_BOUNDARY_END
    }
    const float4 t = sph_lane_sum(red, (float4)(sum, (float)cnt, bsum, 0.0f), lane_bits);
    if (i >= n || lane != 0u) return;
    const float rho = mass * sph_w_sigma(h) * t.x + sph_w_sigma(h) * t.z;
    rhop[i] = (float2)(rho, sph_pressure(rho, rho0, B));
    SPH_FIRST_FINISH(i);
#if !SPH_NLIST
    nbcount[i] = (uint)t.y;
#endif
}
