/* The candidates of p: every particle j in the 3 x 3 x 3 cells around p (each
 * row of 3 cells one contiguous range of the sorted arrays), dealt round-robin
 * over the `lanes` lanes of a particle in one running order (rows one after
 * the other), so that every lane gets the same share. */
#define SPH_CANDIDATES_BEGIN(p, lane, lanes)                                    \
    {                                                                           \
        const int4 c_ = sph_cell(p, dims, inv_cell);                            \
        const int x0_ = max(c_.x - 1, 0), x1_ = min(c_.x + 1, dims.x - 1);      \
        uint phase_ = 0u; /* candidates dealt so far, mod lanes */              \
        for (int z_ = max(c_.z - 1, 0); z_ <= min(c_.z + 1, dims.z - 1); ++z_)  \
        for (int y_ = max(c_.y - 1, 0); y_ <= min(c_.y + 1, dims.y - 1); ++y_) { \
            const int row_ = dims.x * (y_ + dims.y * z_);                       \
            uint s_ = EDDY_SPH_EMPTY_CELL, e_ = 0u;                             \
            for (int x_ = x0_; x_ <= x1_; ++x_) {                               \
                const uint2 r_ = cells[row_ + x_];                              \
                s_ = min(s_, r_.x);                                             \
                e_ = max(e_, r_.y);                                             \
            }                                                                   \
            if (e_ <= s_) continue;                                             \
            for (uint j = s_ + (((lane) - phase_) & ((lanes) - 1u)); j < e_; j += (lanes)) {
#define SPH_CANDIDATES_END(lanes)                                               \
            }                                                                   \
            phase_ = (phase_ + (e_ - s_)) & ((lanes) - 1u);                     \
        }                                                                       \
    }

/* Phase "neighbours" (list mode only): every j with |x_i - x_j|^2 < h^2 (i
 * itself included), stored column-major nlist[k * n + i] so that the k-th
 * entries of consecutive particles are adjacent in memory. Entries beyond the
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
