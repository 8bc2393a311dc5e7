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
