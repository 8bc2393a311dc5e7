/* Phase "reorder": gather positions, velocities and particle ids into sorted
 * order (double-buffered: the sorted copies go to the other buffer set). */
__kernel __attribute__((reqd_work_group_size(SPH_WG, 1, 1)))
void sph_reorder(__global const uint* restrict order,
                 __global const float4* restrict pos_in,
                 __global const float4* restrict vel_in,
                 __global const uint* restrict id_in,
                 __global float4* restrict pos_out,
                 __global float4* restrict vel_out,
                 __global uint* restrict id_out,
                 const uint n)
{
    const uint i = get_global_id(0);
    if (i >= n) return;
    const uint src = order[i];
    pos_out[i] = pos_in[src];
    vel_out[i] = vel_in[src];
    id_out[i] = id_in[src];
}
