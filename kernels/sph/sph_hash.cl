/* Phase "hash": the grid cell of each particle -> (key = linear cell index
 * x + X (y + Y z), value = particle index). A particle outside the grid (it
 * should never be: the integrator keeps everything in the tank) or with a
 * non-finite position is clamped into it and counted, never lost silently. */
__kernel __attribute__((reqd_work_group_size(SPH_WG, 1, 1)))
void sph_hash(__global const float4* restrict pos,
              __global uint* restrict keys,
              __global uint* restrict vals,
              __global uint* restrict counters,
              const uint n, const int4 dims, const float inv_cell)
{
    const uint i = get_global_id(0);
    if (i >= n) return;
    const float3 p = pos[i].xyz;
    int4 c = (int4)(0);
    bool outside = true;
    if (all(isfinite(p))) {
        c = (int4)(convert_int(floor(p.x * inv_cell)), convert_int(floor(p.y * inv_cell)),
                   convert_int(floor(p.z * inv_cell)), 0);
        outside = c.x < 0 || c.y < 0 || c.z < 0 || c.x >= dims.x || c.y >= dims.y || c.z >= dims.z;
        c = clamp(c, (int4)(0), dims - (int4)(1));
    }
    if (outside) atomic_inc(&counters[EDDY_SPH_CNT_OUT_OF_GRID]);
    keys[i] = (uint)c.x + (uint)dims.x * ((uint)c.y + (uint)dims.y * (uint)c.z);
    vals[i] = i;
}
