/*
 * sph_probes.cl: phase "probes": pressure and level probes (issue 12),
 * sampled after a step from the sorted positions, the (rho, p) of the step
 * and the cell table (sim/sph/probes.hpp). One work-group of EDDY_PROBE_WG
 * work-items per probe; the values of one sample form one row of a device
 * ring buffer that the host reads back in batches, never per sample.
 *
 * Pressure probe at x: the Shepard-normalised kernel interpolation
 *     p(x) = sum_j V_j p_j W(x - x_j) / sum_j V_j W(x - x_j),   V_j = m / rho_j,
 * over the particles within h and their wall images (the mirror walls of
 * sph_common.cl: an image carries its particle's rho and p). Dividing by the
 * kernel sum makes it a weighted mean of the neighbours' pressures, so a
 * sensor on a wall face (half its support solid) reads the pressure there,
 * not half of it. A probe whose sum_j V_j W is below EDDY_PROBE_DRY_SUM
 * (1 % of the bulk's 1) reads 0: dry.
 *
 * Level probe at (x, z): the fluid fraction f(y) = sum_j V_j W(x - x_j)
 * (images included, so the floor does not halve it) is evaluated at S
 * samples y_k = k dy, k = 0 .. S-1, dy = tank height / (S - 1) <= dx / 4; the
 * level is the top of the water standing on the floor: the first sample k
 * going up with f_k < EDDY_PROBE_LEVEL_FRACTION (0.5), the crossing
 * interpolated linearly between y_k-1 and y_k. A jet or a sheet separated
 * from that water by air (a plunging breaker, water running along the lid)
 * does not count: it is not the free surface of the water at (x, z).
 * f_0 < 0.5: 0 (dry); wet up to the lid: the tank height.
 * Solids (obstacles, bodies) are neither water nor air: a sample inside one
 * or within `solid_margin` (h / 2) of its surface (where the fluid keeps its
 * clearance and the fraction dips) is passed over, so a gauge above a
 * submerged obstacle reads the free surface above it. The level is then the
 * top of the water below the first air sample: with only solid between
 * that sample and the floor (a gauge over a solid that pierces the
 * surface) it reads 0 (dry); over a floating body it reads the water under
 * the body.
 *
 * Cadence: with every_dt > 0 (--probe-dt) a sample is due when the device
 * clock reached next * every_dt (next from the state); otherwise (every K
 * steps) the host says so (`emit`). The state has two copies: each launch
 * reads copy `parity` and work-group 0 writes the other one, so all groups
 * see the same row index and nothing races.
 *
 * Window mean (pressure): the kernel runs after every step. A pressure probe
 * adds its value times the step's dt (the clock's) to its accumulator
 * acc[g] = (sum p dt, sum dt) at every launch, and a due sample writes the
 * dt-weighted mean over the steps since the previous sample, its own step
 * included, then empties the accumulator: what a sensor sampled with an
 * integration window of the sampling interval reads. Without it, DFSPH's
 * pressure, which pulses from step to step at the default tolerance (in a
 * still 1 m column from -39 to +198 % of rho g d at 0.6 m depth, with a
 * period of ~20 steps; docs/USAGE.md), aliases
 * into a sample every K steps as a steady offset. A window of one step (the
 * accumulator empty) writes the step's value itself, bit for bit. Level
 * probes sample the state at the due step only (a water height does not
 * pulse; the level costs a column of samples).
 */

/* Sum of W(x - x_j) / rho_j and W p_j / rho_j over particle j and its images
 * (scaled by 1 / (m sigma(h)): the ratio and the caller's scale undo it). */
inline void probe_add(const float3 x, const float3 q, const float2 rp, const uint mask,
                      const sph_walls_t w, const float h2, const float inv_h, float* den, float* num)
{
    const float r2 = sph_r2(x - q);
    if (r2 < h2 && rp.x > 0.0f) {
        float ws = sph_w_q(sqrt(r2) * inv_h);
        for (uint s = mask; s != 0u; s = (s - 1u) & mask) {
            const float g2 = sph_r2(x - sph_mirror(q, s, w));
            if (g2 < h2) ws += sph_w_q(sqrt(g2) * inv_h);
        }
        const float vw = ws / rp.x;
        *den += vw;
        *num += vw * rp.y;
    }
}

/* The particle range of row (cy, cz) of the 3 cells around cell c. */
inline uint2 probe_row(__global const uint2* restrict cells, const int4 c, const int r,
                       const int4 dims)
{
    const int y = c.y - 1 + r % 3, z = c.z - 1 + r / 3;
    uint2 out = (uint2)(0u, 0u);
    if (y >= 0 && y < dims.y && z >= 0 && z < dims.z) {
        const int row = dims.x * (y + dims.y * z);
        uint s = EDDY_SPH_EMPTY_CELL, e = 0u;
        for (int x = max(c.x - 1, 0); x <= min(c.x + 1, dims.x - 1); ++x) {
            const uint2 rr = cells[row + x];
            s = min(s, rr.x);
            e = max(e, rr.y);
        }
        if (s < e) out = (uint2)(s, e);
    }
    return out;
}

/* The fluid fraction sum_j V_j W at x, by one work-item. */
inline float probe_fraction(const float3 x, __global const float4* restrict pos,
                            __global const float2* restrict rhop,
                            __global const uint2* restrict cells, const int4 dims,
                            const float inv_cell, const float4 tank, const float h,
                            const float scale)
{
    sph_walls_t w;
    const uint mask = sph_walls(x, tank, h, &w);
    const int4 c = sph_cell(x, dims, inv_cell);
    const float h2 = h * h, inv_h = 1.0f / h;
    float den = 0.0f, num = 0.0f;
    for (int r = 0; r < 9; ++r) {
        const uint2 range = probe_row(cells, c, r, dims);
        for (uint j = range.x; j < range.y; ++j)
            probe_add(x, pos[j].xyz, rhop[j], mask, w, h2, inv_h, &den, &num);
    }
    return den * scale;
}

__kernel __attribute__((reqd_work_group_size(EDDY_PROBE_WG, 1, 1)))
void sph_probes(__global const float4* restrict pos,
                __global const float2* restrict rhop,
                __global const uint2* restrict cells,
                __global const float4* restrict probes,
                __global const float4* restrict solids,
                __global const float* restrict sdf,
                __global const float* restrict clock,
                __global uint* restrict state,
                __global float* restrict ring,
                __global float2* restrict acc,
                const uint nprobes, const uint ring_rows, const uint parity, const uint step,
                const uint emit, const float every_dt, const int4 dims, const float inv_cell, const float4 tank,
                const float h, const float scale, const float dy, const uint samples,
                const uint nsolids, const float solid_margin)
{
    __local float2 red[EDDY_PROBE_WG];
    __local int best[EDDY_PROBE_WG];
    const uint g = get_group_id(0);
    const uint lid = get_local_id(0);
    const uint in = parity * EDDY_PROBE_STATE_SIZE;
    const uint out = (1u - parity) * EDDY_PROBE_STATE_SIZE;
    const uint rows = state[in + EDDY_PROBE_ST_ROWS];
    const uint next = state[in + EDDY_PROBE_ST_NEXT];
    const float t_hi = clock[EDDY_SPH_CLOCK_T_HI], t_lo = clock[EDDY_SPH_CLOCK_T_LO];
    const float t = t_hi + t_lo;
    uint due = emit ? 1u : 0u, next_out = next;
    if (every_dt > 0.0f) {
        due = (t_hi - (float)next * every_dt) + t_lo >= 0.0f ? 1u : 0u;
        if (due) next_out = max(next + 1u, convert_uint(floor(t / every_dt)) + 1u);
    }
    const float4 pr = probes[min(g, nprobes - 1u)];
    const float3 x = pr.xyz;
    const uint level = (g < nprobes && pr.w > 0.5f) ? 1u : 0u;
    const uint work = (g < nprobes && (due || !level)) ? 1u : 0u;

    /* Pressure probe: the work-group's items share the candidates. */
    float den = 0.0f, num = 0.0f;
    if (work && !level) {
        sph_walls_t w;
        const uint mask = sph_walls(x, tank, h, &w);
        const int4 c = sph_cell(x, dims, inv_cell);
        const float h2 = h * h, inv_h = 1.0f / h;
        for (int r = 0; r < 9; ++r) {
            const uint2 range = probe_row(cells, c, r, dims);
            for (uint j = range.x + lid; j < range.y; j += EDDY_PROBE_WG)
                probe_add(x, pos[j].xyz, rhop[j], mask, w, h2, inv_h, &den, &num);
        }
    }
    /* Level probe: the items share the samples; the lowest dry one. */
    int top = (int)samples;
    if (work && level)
        for (uint k = lid; k < samples && (int)k < top; k += EDDY_PROBE_WG) {
            const float3 xs = (float3)(x.x, (float)k * dy, x.z);
            if (!sph_in_solids(solids, sdf, nsolids, xs, solid_margin) &&
                probe_fraction(xs, pos, rhop, cells, dims, inv_cell, tank, h, scale) <
                    EDDY_PROBE_LEVEL_FRACTION)
                top = (int)k;
        }
    /* Fixed-order tree reductions (the same sums on every run). */
    red[lid] = (float2)(den, num);
    best[lid] = top;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint s = EDDY_PROBE_WG / 2u; s > 0u; s >>= 1) {
        if (lid < s) {
            red[lid] += red[lid + s];
            best[lid] = min(best[lid], best[lid + s]);
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (lid == 0u) {
        if (g == 0u) {
            state[out + EDDY_PROBE_ST_ROWS] = rows + due;
            state[out + EDDY_PROBE_ST_NEXT] = next_out;
        }
        float value = 0.0f;
        if (work) {
            if (level) {
                /* best[0] = the lowest air sample; k = the highest sample below
                 * it that is not in a solid (water, or none: dry). */
                int k = best[0] - 1;
                while (k >= 0 && sph_in_solids(solids, sdf, nsolids,
                                               (float3)(x.x, (float)k * dy, x.z), solid_margin))
                    --k;
                if (k >= 0) {
                    value = (float)k * dy;
                    if ((uint)k + 1u < samples) {
                        const float3 x0 = (float3)(x.x, (float)k * dy, x.z);
                        const float3 x1 = (float3)(x.x, (float)(k + 1) * dy, x.z);
                        const float f0 =
                            probe_fraction(x0, pos, rhop, cells, dims, inv_cell, tank, h, scale);
                        const float f1 =
                            probe_fraction(x1, pos, rhop, cells, dims, inv_cell, tank, h, scale);
                        const float d = f0 - f1;
                        const float u = d > 0.0f ? (f0 - EDDY_PROBE_LEVEL_FRACTION) / d : 0.0f;
                        value += dy * clamp(u, 0.0f, 1.0f);
                    }
                }
            } else {
                const float2 s = red[0];
                value = s.x * scale >= EDDY_PROBE_DRY_SUM ? s.y / s.x : 0.0f;
                const float dt = clock[EDDY_SPH_CLOCK_DT];
                const float2 a = acc[g];
                if (due) {
                    if (a.y > 0.0f) value = (a.x + value * dt) / (a.y + dt);
                    acc[g] = (float2)(0.0f, 0.0f);
                } else {
                    acc[g] = a + (float2)(value * dt, dt);
                }
            }
        }
        if (work && due) {
            const size_t stride = EDDY_PROBE_ROW_HEAD + nprobes;
            const size_t row = (size_t)(rows % ring_rows) * stride;
            ring[row + EDDY_PROBE_ROW_HEAD + g] = value;
            if (g == 0u) {
                ring[row] = as_float(step);
                ring[row + 1] = t_hi;
                ring[row + 2] = t_lo;
            }
        }
    }
}
