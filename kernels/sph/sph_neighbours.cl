/* Phase "neighbours" (list mode only): every j with |x_i - x_j|^2 < h^2 (i
 * itself included), stored column-major nlist[k * n + i] so that the k-th
 * entries of consecutive particles are adjacent in memory. Entries beyond the
 * capacity are not stored but counted in counters[EDDY_SPH_CNT_OVERFLOW]. */
__kernel __attribute__((reqd_work_group_size(SPH_WG, 1, 1)))
void sph_neighbours(__global const float4* restrict pos,
                    __global const uint2* restrict cells,
                    __global uint* restrict nlist,
                    __global uint* restrict nbcount,
                    __global uint* restrict counters,
                    const uint n, const int4 dims, const float inv_cell,
                    const float h, const uint cap)
{
    const uint i = get_global_id(0);
    if (i >= n) return;
    const float3 p = pos[i].xyz;
    const float h2 = h * h;
    uint cnt = 0;
    {
        const int4 c_ = sph_cell(p, dims, inv_cell);
        const int x0_ = max(c_.x - 1, 0), x1_ = min(c_.x + 1, dims.x - 1);
        for (int z_ = max(c_.z - 1, 0); z_ <= min(c_.z + 1, dims.z - 1); ++z_)
        for (int y_ = max(c_.y - 1, 0); y_ <= min(c_.y + 1, dims.y - 1); ++y_) {
            const int row_ = dims.x * (y_ + dims.y * z_);
            uint s_ = EDDY_SPH_EMPTY_CELL, e_ = 0u;
            for (int x_ = x0_; x_ <= x1_; ++x_) {
                const uint2 r_ = cells[row_ + x_];
                s_ = min(s_, r_.x);
                e_ = max(e_, r_.y);
            }
            for (uint j = s_; j < e_; ++j) {
                if (sph_r2(p - pos[j].xyz) < h2) {
                    if (cnt < cap) nlist[(size_t)cnt * n + i] = j;
                    ++cnt;
                }
            }
        }
    }
    nbcount[i] = min(cnt, cap);
    if (cnt > cap) atomic_add(&counters[EDDY_SPH_CNT_OVERFLOW], cnt - cap);
}
