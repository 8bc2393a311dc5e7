/* Phase "cells_clear": mark every cell empty, (start, end) = (EMPTY, 0). */
__kernel __attribute__((reqd_work_group_size(SPH_WG, 1, 1)))
void sph_cells_clear(__global uint* restrict cells, const uint num_cells)
{
    const uint c = get_global_id(0);
    if (c >= num_cells) return;
    cells[2 * c] = EDDY_SPH_EMPTY_CELL;
    cells[2 * c + 1] = 0u;
}

/* Phase "cells": start (first sorted index) and end (one past the last) of
 * every non-empty cell, from the sorted keys. */
__kernel __attribute__((reqd_work_group_size(SPH_WG, 1, 1)))
void sph_cells(__global const uint* restrict keys,
               __global uint* restrict cells,
               const uint n)
{
    const uint i = get_global_id(0);
    if (i >= n) return;
    const uint k = keys[i];
    if (i == 0 || keys[i - 1] != k) cells[2 * k] = i;
    if (i == n - 1 || keys[i + 1] != k) cells[2 * k + 1] = i + 1;
}

/* ---- Counting sort (SphParticles::runSort where the bitonic network does not
 * fit): the particles sorted by cell key, stably, and the cell table, from the
 * per-cell counts of sph_hash_count, in four launches whatever the key bits
 * (the radix sort takes three a 4-bit digit, and two more for the table):
 *
 *   count  [2 0 0 3 1 0 ...]      cells in tiles of EDDY_SPH_CELL_TILE
 *            \___tile 0___/ \__ tile 1 ...
 *   cell_sums:  sums[g] = the particles in tile g
 *   cell_table: start = sums of the tiles before + scan within the tile
 *            cells  [(0,2) E (2,2)... ]  (E: (EMPTY, 0), as sph_cells)
 *            count  [0   0  2 ...]      now each non-empty cell's next free slot
 *   cell_scatter: particle i -> slot atomic_inc(count[key_i]) of its cell
 *            (an order within the cell that depends on the device's timing)
 *   cell_rank:   each slot's final place: its cell's start + how many in
 *            the cell have a smaller particle index (the stable order, the
 *            radix sort's result bit for bit); the cell's first slot sets the
 *            count back to zero for the next step.
 *
 * The rank walks its cell: O(n c) for cells of c particles (about 8 in a
 * fluid at rest), as the neighbour walk that follows. */

/* Phase "cell_sums": the particles of each tile of EDDY_SPH_CELL_TILE cells. */
__kernel __attribute__((reqd_work_group_size(SPH_WG, 1, 1)))
void sph_cell_sums(__global const uint* restrict count,
                   __global uint* restrict sums,
                   const uint num_cells)
{
    __local uint red[SPH_WG];
    const uint lid = get_local_id(0), g = get_group_id(0);
    const uint base = g * EDDY_SPH_CELL_TILE;
    uint s = 0u;
    for (uint k = lid; k < EDDY_SPH_CELL_TILE; k += SPH_WG)
        if (base + k < num_cells) s += count[base + k];
    red[lid] = s;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint w = SPH_WG / 2; w > 0; w >>= 1) {
        if (lid < w) red[lid] += red[lid + w];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (lid == 0) sums[g] = red[0];
}

/* Phase "cell_table": (start, end) of every cell of tile g, and each
 * non-empty cell's count replaced by its start (the scatter's cursor). */
__kernel __attribute__((reqd_work_group_size(SPH_WG, 1, 1)))
void sph_cell_table(__global uint* restrict count,
                    __global const uint* restrict sums,
                    __global uint2* restrict cells,
                    const uint num_cells)
{
    __local uint tile[EDDY_SPH_CELL_TILE];
    __local uint red[SPH_WG];
    const uint lid = get_local_id(0), g = get_group_id(0);
    const uint base = g * EDDY_SPH_CELL_TILE;
    /* The particles in the tiles before this one. */
    uint before = 0u;
    for (uint k = lid; k < g; k += SPH_WG) before += sums[k];
    red[lid] = before;
    for (uint k = lid; k < EDDY_SPH_CELL_TILE; k += SPH_WG)
        tile[k] = base + k < num_cells ? count[base + k] : 0u;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint w = SPH_WG / 2; w > 0; w >>= 1) {
        if (lid < w) red[lid] += red[lid + w];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    const uint offset = red[0];
    barrier(CLK_LOCAL_MEM_FENCE);
    /* This item's run of EDDY_SPH_CELL_TILE / SPH_WG cells, then an
     * exclusive scan of the runs' totals (Hillis-Steele in red). */
    const uint per = EDDY_SPH_CELL_TILE / SPH_WG, first = lid * per;
    uint total = 0u;
    for (uint k = 0; k < per; ++k) total += tile[first + k];
    red[lid] = total;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint w = 1; w < SPH_WG; w <<= 1) {
        const uint add = lid >= w ? red[lid - w] : 0u;
        barrier(CLK_LOCAL_MEM_FENCE);
        red[lid] += add;
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    uint start = offset + red[lid] - total;
    for (uint k = 0; k < per; ++k) {
        const uint c = base + first + k;
        if (c >= num_cells) break;
        const uint m = tile[first + k];
        cells[c] = m ? (uint2)(start, start + m) : (uint2)(EDDY_SPH_EMPTY_CELL, 0u);
        if (m) count[c] = start;
        start += m;
    }
}

/* Phase "cell_scatter": particle i (key keys[i]) to a free slot of its cell. */
__kernel __attribute__((reqd_work_group_size(SPH_WG, 1, 1)))
void sph_cell_scatter(__global const uint* restrict keys,
                      __global uint* restrict count,
                      __global uint* restrict tmp_keys,
                      __global uint* restrict tmp_vals,
                      const uint n)
{
    const uint i = get_global_id(0);
    if (i >= n) return;
    const uint k = keys[i];
    const uint slot = atomic_inc(&count[k]);
    tmp_keys[slot] = k;
    tmp_vals[slot] = i;
}

/* Phase "cell_rank": slot s to its stable place in its cell (see above). */
__kernel __attribute__((reqd_work_group_size(SPH_WG, 1, 1)))
void sph_cell_rank(__global const uint* restrict tmp_keys,
                   __global const uint* restrict tmp_vals,
                   __global const uint2* restrict cells,
                   __global uint* restrict count,
                   __global uint* restrict keys,
                   __global uint* restrict vals,
                   const uint n)
{
    const uint s = get_global_id(0);
    if (s >= n) return;
    const uint k = tmp_keys[s], v = tmp_vals[s];
    const uint2 range = cells[k];
    uint r = 0u;
    for (uint t = range.x; t < range.y; ++t) r += tmp_vals[t] < v;
    keys[range.x + r] = k;
    vals[range.x + r] = v;
    if (s == range.x) count[k] = 0u;
}
