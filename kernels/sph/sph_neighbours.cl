/* Phase "neighbours" (list mode, where the solver's first density kernel
 * does not build the list itself: sph_common.cl, "Fused list"): every j
 * with |x_i - x_j|^2 < h^2 (i itself included), stored at
 * nlist[EDDY_SPH_LIST_SLOT(k, i, n)] (eddy_shared.h: column-major in pairs
 * of entries, so that the k-th entries of consecutive particles lie close
 * in memory). Entries beyond the
 * capacity are not stored but counted in counters[EDDY_SPH_CNT_OVERFLOW].
 * At one lane the walk leaves out the cells that cannot hold a neighbour
 * (SPH_CANDIDATES1_BEGIN, sph_common.cl: 14 % less time at 1M particles on an
 * H100, session 43).
 * With 2^lane_bits > 1 lanes per particle (sph_common.cl, "Lanes") each lane
 * counts its hits and keeps its first SPH_NB_STAGE (24) of them in local memory
 * (stage[m][work-item]); the lanes' counts give each lane its first slot
 * (lane order), and each lane copies its staged hits there. Only a lane with
 * more hits than that walks its candidates a second time, for the rest (until
 * session 42 every lane did: this phase took 85 us at 101 306 particles on
 * the H200 then, 64 us now). The same list, slot for slot. 24 hits a
 * lane (12 KB of local memory a work-group): at the default support a
 * particle has about 45 neighbours, 11 a lane with 4 lanes and 22 with 2. */
#ifndef SPH_NB_STAGE
#define SPH_NB_STAGE 24
#endif
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
    __local uint stage[(SPH_NB_STAGE > 0 ? SPH_NB_STAGE : 1) * SPH_WG]; /* 0: never staged */
    SPH_LANE_ID(i, lane);
    const uint lid = get_local_id(0);
    const uint lanes = 1u << lane_bits;
    const float h2 = h * h;
    const float3 p = i < n ? pos[i].xyz : (float3)(0.0f);
    uint total = 0u, cnt = 0u;
    /* One lane: one walk storing as it goes. More: a walk counting and
     * staging, then (after the barrier, which every work-item reaches: PoCL)
     * the stores from the slot the lanes before this one leave free. */
    if (i < n) {
        if (lane_bits == 0u) {
            SPH_CANDIDATES1_BEGIN(p) /* only the cells within h */
                if (sph_r2(p - pos[j].xyz) < h2) {
                    if (cnt < cap) nlist[EDDY_SPH_LIST_SLOT(cnt, i, n)] = j;
                    ++cnt;
                }
            SPH_CANDIDATES_END(1u)
        } else {
            SPH_CANDIDATES_BEGIN(p, lane, lanes)
                if (sph_r2(p - pos[j].xyz) < h2) {
                    if (cnt < SPH_NB_STAGE) stage[cnt * SPH_WG + lid] = j;
                    ++cnt;
                }
            SPH_CANDIDATES_END(lanes)
        }
    }
    const uint first = lid & ~(lanes - 1u);
    red[lid] = cnt;
    barrier(CLK_LOCAL_MEM_FENCE);
    uint k = 0u;
    for (uint l = 0; l < lanes; ++l) {
        const uint c = red[first + l];
        if (l < lane) k += c;
        total += c;
    }
    if (i < n && lane_bits != 0u) {
        /* Only this work-item wrote its column of stage: no barrier needed. */
        const uint staged = min(cnt, (uint)SPH_NB_STAGE);
        for (uint m = 0; m < staged && k + m < cap; ++m)
            nlist[EDDY_SPH_LIST_SLOT(k + m, i, n)] = stage[m * SPH_WG + lid];
        if (cnt > SPH_NB_STAGE) { /* the hits past the stage: walk again */
            uint m = 0u;
            SPH_CANDIDATES_BEGIN(p, lane, lanes)
                if (sph_r2(p - pos[j].xyz) < h2) {
                    if (m >= SPH_NB_STAGE && k + m < cap) nlist[EDDY_SPH_LIST_SLOT(k + m, i, n)] = j;
                    ++m;
                }
            SPH_CANDIDATES_END(lanes)
        }
    }
    if (i >= n || lane != 0u) return;
    nbcount[i] = min(total, cap);
    if (total > cap) atomic_add(&counters[EDDY_SPH_CNT_OVERFLOW], total - cap);
}
