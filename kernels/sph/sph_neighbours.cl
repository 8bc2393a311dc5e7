/* Phase "neighbours" (list mode, where the solver's first density kernel
 * does not build the list itself: sph_common.cl, "Fused list"): every j
 * with |x_i - x_j|^2 < h^2 (i itself included), stored column-major
 * nlist[k * n + i] so that the k-th entries of consecutive particles are
 * adjacent in memory. Entries beyond the
 * capacity are not stored but counted in counters[EDDY_SPH_CNT_OVERFLOW].
 * With 2^lane_bits > 1 lanes per particle (sph_common.cl, "Lanes") each lane
 * counts its hits, the lanes' counts give each lane its first slot (lane
 * order), and a second walk stores them. */
__kernel __attribute__((reqd_work_group_size(SPH_WG, 1, 1)))
void sph_neighbours(__global const float4* restrict pos,
                    __global const uint2* restrict cells,
                    __global uint* restrict nlist,
                    __global uint* restrict nbcount,
                    __global uint* restrict counters,
                    const uint n, const int4 dims, const float inv_cell,
                    const float h, const uint cap, const uint lane_bits)
{
    __local uint red[SPH_WG];
    SPH_LANE_ID(i, lane);
    const uint lanes = 1u << lane_bits;
    const float h2 = h * h;
    const float3 p = i < n ? pos[i].xyz : (float3)(0.0f);
    uint total = 0u, cnt = 0u;
    /* One lane: one walk storing as it goes. More: a walk counting, then
     * (after the barrier, which every work-item reaches: PoCL) a walk storing
     * from the slot the lanes before this one leave free. */
    if (i < n) {
        if (lane_bits == 0u) {
            SPH_CANDIDATES_BEGIN(p, 0u, 1u)
                if (sph_r2(p - pos[j].xyz) < h2) {
                    if (cnt < cap) nlist[(size_t)cnt * n + i] = j;
                    ++cnt;
                }
            SPH_CANDIDATES_END(1u)
        } else {
            SPH_CANDIDATES_BEGIN(p, lane, lanes)
                if (sph_r2(p - pos[j].xyz) < h2) ++cnt;
            SPH_CANDIDATES_END(lanes)
        }
    }
    const uint lid = get_local_id(0), first = lid & ~(lanes - 1u);
    red[lid] = cnt;
    barrier(CLK_LOCAL_MEM_FENCE);
    uint k = 0u;
    for (uint l = 0; l < lanes; ++l) {
        const uint c = red[first + l];
        if (l < lane) k += c;
        total += c;
    }
    if (i < n && lane_bits != 0u) {
        SPH_CANDIDATES_BEGIN(p, lane, lanes)
            if (sph_r2(p - pos[j].xyz) < h2) {
                if (k < cap) nlist[(size_t)k * n + i] = j;
                ++k;
            }
        SPH_CANDIDATES_END(lanes)
    }
    if (i >= n || lane != 0u) return;
    nbcount[i] = min(total, cap);
    if (total > cap) atomic_add(&counters[EDDY_SPH_CNT_OVERFLOW], total - cap);
}
