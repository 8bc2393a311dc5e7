/* The grid cell key of position p; counts a particle outside the grid. */
inline uint sph_cell_key(const float3 p, const int4 dims, const float inv_cell,
                         __global uint* restrict counters)
{
    int4 c = (int4)(0);
    bool outside = true;
    if (all(isfinite(p))) {
        c = (int4)(convert_int(floor(p.x * inv_cell)), convert_int(floor(p.y * inv_cell)),
                   convert_int(floor(p.z * inv_cell)), 0);
        outside = c.x < 0 || c.y < 0 || c.z < 0 || c.x >= dims.x || c.y >= dims.y || c.z >= dims.z;
        c = clamp(c, (int4)(0), dims - (int4)(1));
    }
    if (outside) atomic_inc(&counters[EDDY_SPH_CNT_OUT_OF_GRID]);
    return (uint)c.x + (uint)dims.x * ((uint)c.y + (uint)dims.y * (uint)c.z);
}

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
    keys[i] = sph_cell_key(pos[i].xyz, dims, inv_cell, counters);
    vals[i] = i;
}

/* Phase "hash" of the counting sort (sph_cells.cl, "Counting sort"): as
 * sph_hash, and one more particle in its cell's count (zero on entry). */
__kernel __attribute__((reqd_work_group_size(SPH_WG, 1, 1)))
void sph_hash_count(__global const float4* restrict pos,
                    __global uint* restrict keys,
                    __global uint* restrict vals,
                    __global uint* restrict counters,
                    __global uint* restrict count,
                    const uint n, const int4 dims, const float inv_cell)
{
    const uint i = get_global_id(0);
    if (i >= n) return;
    const uint k = sph_cell_key(pos[i].xyz, dims, inv_cell, counters);
    keys[i] = k;
    vals[i] = i;
    atomic_inc(&count[k]);
}
