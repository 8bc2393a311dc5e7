/*
 * sph_common.cl: device functions shared by the SPH kernels (prepended to
 * them when an SPH program is built, after kernels/common/sph_kernel.h, the
 * smoothing kernel sph_w / sph_gradw shared with the host; see
 * sphProgramFiles in sim/sph/particles.hpp).
 *
 * Walls: the tank [0,L] x [0,H] x [0,D] has plane walls. A particle i closer
 * than h to a wall sees mirror images ("ghosts") of its neighbours across that
 * wall (Libersky et al. 1993, "High strain Lagrangian hydrodynamics", JCP
 * 109:67; Colagrossi & Landrini 2003, JCP 191:448): same mass, density and
 * pressure, the wall-normal velocity reversed (free slip). Per axis only the
 * nearer wall is mirrored; in a corner every combination of the near walls is
 * (up to 7 images). A ghost is never closer than its original, so ghosts are
 * looked for only among the real neighbours within h.
 *
 * Lanes: a neighbour-sum kernel may give each particle 2^lane_bits
 * work-items ("lanes", lane_bits a kernel argument, uniform): the
 * work-group then holds SPH_WG >> lane_bits particles, lane l walks the
 * neighbours l, l + lanes, l + 2 lanes, ... and the lanes' partial sums are
 * added in lane order through local memory (sph_lane_sum), the same order on
 * every run. At small N a particle's serial chain of ~40 dependent loads is
 * what a step waits for; lanes shorten it (docs/PERFORMANCE.md).
 *
 * Compile-time: SPH_WG (work-group size), SPH_NLIST (1 = neighbour list,
 * 0 = direct iteration over the 27 cells).
 */
#ifndef SPH_WG
#define SPH_WG EDDY_SPH_WG
#endif
#ifndef SPH_NLIST
#define SPH_NLIST 0
#endif

/* SPH_UNIFORM_RETURN (set by the host for GPU devices, DfsphKernels::
 * buildProgram): a kernel whose whole launch has nothing to do (DFSPH's
 * passes after the solve's done flag) returns at its first line, before its
 * barriers. Legal OpenCL (no work-item of the group reaches the barrier),
 * but PoCL 3.1 miscompiles a return before a barrier even when it is
 * uniform, so CPU devices walk through the barriers with nothing to add. */
#ifndef SPH_UNIFORM_RETURN
#define SPH_UNIFORM_RETURN 0
#endif

/* Squared distance, evaluated exactly as written (no FMA contraction), so the
 * CPU reference reproduces the neighbour test r^2 < h^2 bit for bit. */
inline float sph_r2(const float3 d)
{
#pragma OPENCL FP_CONTRACT OFF
    const float xx = d.x * d.x;
    const float yy = d.y * d.y;
    const float zz = d.z * d.z;
    return (xx + yy) + zz;
}

/* Cohesion spline C(r): sph_cohesion (kernels/common/sph_kernel.h). */

/* Tait equation of state (Monaghan 1994; Batchelor 1967), B = rho0 c0^2 / 7,
 * p = B ((rho/rho0)^7 - 1) evaluated as B expm1(7 log1p(e)) for accuracy near
 * rho0; clamped at 0 (a free surface takes no tension). */
inline float sph_pressure(const float rho, const float rho0, const float B)
{
    const float e = (rho - rho0) / rho0;
    return fmax(0.0f, B * expm1(7.0f * log1p(e)));
}

inline int4 sph_cell(const float3 p, const int4 dims, const float inv_cell)
{
    const int4 c = (int4)(convert_int(floor(p.x * inv_cell)), convert_int(floor(p.y * inv_cell)),
                          convert_int(floor(p.z * inv_cell)), 0);
    return clamp(c, (int4)(0), dims - (int4)(1));
}

/* The tank's walls within h of p, as mirror images (free-slip walls). Bit a
 * of the result (axis a = x, y, z) for the nearer wall of axis a (the one at
 * 0 at the middle), at w->w0.a (0 or tank.a); bit a + 3 for the other wall,
 * at w->w1.a, taken only across a tank thinner than h (a slab one or two
 * particle layers deep at smoothing_ratio 2.2), where every particle is
 * within h of both. A neighbour's images are the nonempty subsets s of the
 * mask (sph_mirror). With the nearer wall alone the image of a pair changed
 * walls as a particle crossed the middle of such a slab, and WCSPH's carried
 * density blew up in one layer (before 2026-12-07). A subset holding both
 * walls of an axis is no image (the reflection across both is a translation
 * by 2 tank.a, whose counterpart the other way a one-sided sum would miss):
 * sph_mirror puts it at infinity, beyond any h. Compiled in only where a tank
 * axis is thinner than h (SPH_THIN_WALLS, SphKernelConfig::thinWalls); other
 * tanks get the form below, the code they always had (taking both walls up
 * to 2h moved two hydrostatic tests of 4-layer slabs past their bounds, and
 * this form in every program cost DFSPH about 4.5 % at 101 306 particles on
 * an H100: docs/PERFORMANCE.md, session 39). */
#ifndef SPH_THIN_WALLS
#define SPH_THIN_WALLS 0
#endif
#if SPH_THIN_WALLS
typedef struct {
    float3 w0, w1;
} sph_walls_t;

inline uint sph_walls1(const float x, const float len, const float h, float* w0, float* w1)
{
    const bool low = x <= len - x;
    *w0 = low ? 0.0f : len;
    *w1 = low ? len : 0.0f;
    uint m = (low ? x : len - x) < h ? 1u : 0u;
    if (len < h && (low ? len - x : x) < h) m |= 8u;
    return m;
}

inline uint sph_walls(const float3 p, const float4 tank, const float h, sph_walls_t* w)
{
    float a0, a1, b0, b1, c0, c1;
    const uint m = sph_walls1(p.x, tank.x, h, &a0, &a1) | (sph_walls1(p.y, tank.y, h, &b0, &b1) << 1) |
                   (sph_walls1(p.z, tank.z, h, &c0, &c1) << 2);
    w->w0 = (float3)(a0, b0, c0);
    w->w1 = (float3)(a1, b1, c1);
    return m;
}

inline float sph_mirror1(const float q, const uint first, const uint second, const float w0, const float w1)
{
    return first ? (second ? INFINITY : 2.0f * w0 - q) : (second ? 2.0f * w1 - q : q);
}

inline float3 sph_mirror(const float3 q, const uint s, const sph_walls_t w)
{
    return (float3)(sph_mirror1(q.x, s & 1u, s & 8u, w.w0.x, w.w1.x),
                    sph_mirror1(q.y, s & 2u, s & 16u, w.w0.y, w.w1.y),
                    sph_mirror1(q.z, s & 4u, s & 32u, w.w0.z, w.w1.z));
}

#else
/* A tank at least h across every axis (SphKernelConfig::thinWalls off): the
 * nearer wall of each axis, at w.a (0 or tank.a), in bit a. */
typedef float3 sph_walls_t;

inline uint sph_walls(const float3 p, const float4 tank, const float h, float3* w)
{
    uint m = 0;
    float3 ww = (float3)(0.0f);
    if (p.x <= tank.x - p.x) { if (p.x < h) m |= 1u; } else { ww.x = tank.x; if (tank.x - p.x < h) m |= 1u; }
    if (p.y <= tank.y - p.y) { if (p.y < h) m |= 2u; } else { ww.y = tank.y; if (tank.y - p.y < h) m |= 2u; }
    if (p.z <= tank.z - p.z) { if (p.z < h) m |= 4u; } else { ww.z = tank.z; if (tank.z - p.z < h) m |= 4u; }
    *w = ww;
    return m;
}

inline float3 sph_mirror(const float3 q, const uint s, const float3 w)
{
    return (float3)((s & 1u) ? 2.0f * w.x - q.x : q.x, (s & 2u) ? 2.0f * w.y - q.y : q.y,
                    (s & 4u) ? 2.0f * w.z - q.z : q.z);
}

#endif

/* The velocity of image s: the normal component of each mirrored axis
 * reversed (bits a and a + 3 both name axis a; the second is thin-only, and
 * other tanks keep their plain test of bit a). */
inline float3 sph_mirror_v(const float3 v, const uint s)
{
#if SPH_THIN_WALLS
    const uint a = s | (s >> 3);
#else
    const uint a = s;
#endif
    return (float3)((a & 1u) ? -v.x : v.x, (a & 2u) ? -v.y : v.y, (a & 4u) ? -v.z : v.z);
}

/* The velocity a particle moved with, for WCSPH's continuity equation
 * (sph_continuity.cl): v.xyz with the normal component zeroed on each axis a
 * wall turned the particle back on in its last step (bit a of v.w, written by
 * sph_walls_after_move, sph_integrate.cl). Such a particle did not move along
 * that normal at its stored velocity (the reversed one): it went out, was
 * mirrored back, and ended within |v| dt of where it was. Integrating the
 * reversed velocity made a particle that pressure holds against a wall
 * compress every step without moving: the stored velocity of a particle
 * pushed at a wall settles at -e a dt / (1 + e), pointing inwards, so
 * next to a solid or to fluid at rest its carried density rose step after
 * step (a lone particle in a slot one spacing wide between an obstacle and a
 * wall: 1.1 -> 14 rho0, then a blow-up; with restitution 0 it stayed at 1.13). */
inline float3 sph_moved_v(const float4 v)
{
    const uint t = (uint)clamp(v.w, 0.0f, 7.0f);
    return (float3)((t & 1u) ? 0.0f : v.x, (t & 2u) ? 0.0f : v.y, (t & 4u) ? 0.0f : v.z);
}

/* The particle i and lane of this work-item (see "Lanes" above); kernels
 * using lanes have an argument `const uint lane_bits`. */
#define SPH_LANE_ID(i, lane)                                                    \
    const uint lane = get_local_id(0) & ((1u << lane_bits) - 1u);               \
    const uint i = get_group_id(0) * (SPH_WG >> lane_bits) + (get_local_id(0) >> lane_bits)

/* The sum of x over the lanes of this work-item's particle, added in lane
 * order, for lane 0 (the other lanes get their own x back). Every work-item
 * of the group must call it (barriers, also with one lane: PoCL mishandles a
 * return before a barrier even when it is uniform); red holds SPH_WG entries. */
inline float4 sph_lane_sum(__local float4* red, const float4 x, const uint lane_bits)
{
    const uint lid = get_local_id(0);
    const uint lanes = 1u << lane_bits;
    barrier(CLK_LOCAL_MEM_FENCE); /* red may still be read by an earlier sum */
    red[lid] = x;
    barrier(CLK_LOCAL_MEM_FENCE);
    float4 s = x;
    if ((lid & (lanes - 1u)) == 0u)
        for (uint l = 1; l < lanes; ++l) s += red[lid + l];
    return s;
}

/* Cell loop: j runs over every particle of the 3 x 3 x 3 cells around p in the
 * cell table `table` ((start, end) per cell of a sorted array; each row of 3
 * cells is one contiguous range), starting at `first` and stepping by `step`
 * (a lane's share). Kernels using it have arguments dims and inv_cell. The
 * fluid's cells mode and the boundary particles' grid share it. */
#define SPH_ROWS_BEGIN(table, p)  /* s_, e_: the range of each row of 3 cells */ \
        const int4 c_ = sph_cell(p, dims, inv_cell);                            \
        const int x0_ = max(c_.x - 1, 0), x1_ = min(c_.x + 1, dims.x - 1);      \
        for (int z_ = max(c_.z - 1, 0); z_ <= min(c_.z + 1, dims.z - 1); ++z_)  \
        for (int y_ = max(c_.y - 1, 0); y_ <= min(c_.y + 1, dims.y - 1); ++y_) { \
            SPH_ROW_RANGE_(table, x0_, x1_)
/* s_, e_: the sorted range of the cells x0 .. x1 of row (y_, z_). */
#define SPH_ROW_RANGE_(table, x0, x1)                                          \
            const int row_ = dims.x * (y_ + dims.y * z_);                       \
            uint s_ = EDDY_SPH_EMPTY_CELL, e_ = 0u;                             \
            for (int x_ = (x0); x_ <= (x1); ++x_) {                             \
                const uint2 r_ = table[row_ + x_];                              \
                s_ = min(s_, r_.x);                                             \
                e_ = max(e_, r_.y);                                             \
            }
#define SPH_CELLS_BEGIN(table, p, j, first, step)                              \
    {                                                                           \
        SPH_ROWS_BEGIN(table, p)                                                \
            for (uint j = s_ + (first); j < e_; j += (step)) {
#define SPH_CELLS_END }}}

/* Neighbour loop: j runs over every particle in the 3 x 3 x 3 cells around p
 * (cells mode, SPH_CELLS_BEGIN) or over the neighbour list of i (list mode);
 * each lane takes every (1 << lane_bits)-th one. Kernels using it have
 * arguments named cells, nlist, nbcount, n, dims, inv_cell, lane_bits and a
 * `lane` (SPH_LANE_ID).
 * Prefetch (list mode): each round loads the lane's next list entry (the
 * last one again at the end: an index always inside the list) before the
 * body gathers x_j, so that the load of the entry and the gathers it leads
 * to overlap instead of waiting one after the other. The same sums in the
 * same order. Measured (H100, docs/PERFORMANCE.md, session 41): the DFSPH
 * solve passes 6-7 % faster at 101 306 particles and 12-17 % at 1M, the
 * other list walks 5-8 %; entries two rounds ahead gained nothing more. */
#if SPH_NLIST
#define SPH_NEIGHBOURS_BEGIN(i, p)                                              \
    {                                                                           \
        const uint nb_cnt_ = nbcount[i];                                        \
        const uint step_ = 1u << lane_bits;                                     \
        const uint last_ = nb_cnt_ != 0u ? nb_cnt_ - 1u : 0u;                   \
        uint jn_ = nlist[EDDY_SPH_LIST_SLOT(min(lane, last_), (i), n)];         \
        for (uint k_ = lane; k_ < nb_cnt_; k_ += step_) {                       \
            const uint j = jn_;                                                 \
            jn_ = nlist[EDDY_SPH_LIST_SLOT(min(k_ + step_, last_), (i), n)];
#define SPH_NEIGHBOURS_END }}
#else
#define SPH_NEIGHBOURS_BEGIN(i, p) SPH_CELLS_BEGIN(cells, p, j, lane, 1u << lane_bits)
#define SPH_NEIGHBOURS_END SPH_CELLS_END
#endif

/* The rows of cells that can hold a particle within h of p: as
 * SPH_ROWS_BEGIN, but a row (y_, z_) is left out when its cells' box is at
 * least h away from p across y and z, and the row's end cells x - 1 and
 * x + 1 are left out when they are that far across x, y and z together. In
 * units of cells (u = p inv_cell, the coordinates whose floor gives the cell:
 * sph_cell), the box of cell k along an axis is [k, k + 1), so its distance
 * from u, for the cell k = c - 1, c, c + 1 next to u's own cell c, is
 * u - c, 0, c + 1 - u (the faces p's cell shares with them; an edge cell of the
 * grid also holds the particles clamped into it from beyond the grid, which
 * are farther still). Which cells a sphere of radius h reaches, for cells of
 * side h:
 *
 *     z_, y_ -1   0  +1          (a cut at x = c: the 9 rows; # walked,
 *        -1   .   #   .           . walked when p sits within h of that
 *         0   #   #   #           edge, on average 79 % of the time; each
 *        +1   .   #   .           row's end cells likewise, 52 % for a corner)
 *
 * so a walk visits on average 20.6 of the 27 cells' volume (geometry: the
 * volume of the cells a sphere of radius h reaches, not a count). A cell is
 * only left out when the bound exceeds h by a margin that covers the
 * rounding of u and of the distance test (1e-4 h + 1e-6 |u|_1, about 8 ulps):
 * the hits, and their order, are those of the full walk. Only the
 * "neighbours" phase uses it (it runs on the positions the cells were made
 * from), and only at one lane per particle: with lanes the phase was no
 * faster (perhaps because the particles of a warp skip different rows; not
 * measured), and WCSPH's fused builds (sph_density, sph_continuity) were
 * slower with it (H100, docs/PERFORMANCE.md, session 43). Kernels using it
 * have arguments dims, inv_cell and h. */
#define SPH_NEAR_ROWS_BEGIN(table, p)                                          \
        const float3 u_ = (p) * inv_cell;                                       \
        const int4 c_ = sph_cell(p, dims, inv_cell);                            \
        const float3 lo_ = u_ - convert_float3(c_.xyz);  /* to cell c - 1 */   \
        const float3 hi_ = convert_float3(c_.xyz + 1) - u_; /* to c + 1 */     \
        const float rh_ = h * inv_cell * 1.0001f +                              \
                          1e-6f * (fabs(u_.x) + fabs(u_.y) + fabs(u_.z) + 1.0f); \
        const float rh2_ = rh_ * rh_;                                           \
        for (int z_ = max(c_.z - 1, 0); z_ <= min(c_.z + 1, dims.z - 1); ++z_)  \
        for (int y_ = max(c_.y - 1, 0); y_ <= min(c_.y + 1, dims.y - 1); ++y_) { \
            const float dz_ = z_ < c_.z ? lo_.z : (z_ > c_.z ? hi_.z : 0.0f);   \
            const float dy_ = y_ < c_.y ? lo_.y : (y_ > c_.y ? hi_.y : 0.0f);   \
            const float rem_ = rh2_ - (dy_ * dy_ + dz_ * dz_);                  \
            if (rem_ <= 0.0f) continue;                                         \
            const int x0_ = c_.x > 0 && lo_.x * lo_.x < rem_ ? c_.x - 1 : c_.x; \
            const int x1_ = c_.x < dims.x - 1 && hi_.x * hi_.x < rem_ ? c_.x + 1 : c_.x; \
            SPH_ROW_RANGE_(table, x0_, x1_)

/* The candidates of p: every particle j in the 3 x 3 x 3 cells around p (each
 * row of 3 cells one contiguous range of the sorted arrays), dealt round-robin
 * over the `lanes` lanes of a particle in one running order (rows one after
 * the other), so that every lane gets the same share. SPH_CANDIDATES1_BEGIN:
 * one lane, only the cells within h (SPH_NEAR_ROWS_BEGIN; sph_neighbours).
 * Kernels using them have arguments cells, dims, inv_cell (and h). */
#define SPH_CANDIDATES_BEGIN(p, lane, lanes) SPH_CANDIDATES_ROWS_BEGIN(SPH_ROWS_BEGIN, p, lane, lanes)
#define SPH_CANDIDATES1_BEGIN(p) SPH_CANDIDATES_ROWS_BEGIN(SPH_NEAR_ROWS_BEGIN, p, 0u, 1u)
#define SPH_CANDIDATES_ROWS_BEGIN(ROWS, p, lane, lanes)                         \
    {                                                                           \
        uint phase_ = 0u; /* candidates dealt so far, mod lanes */              \
        ROWS(cells, p)                                                          \
            if (e_ <= s_) continue;                                             \
            for (uint j = s_ + (((lane) - phase_) & ((lanes) - 1u)); j < e_; j += (lanes)) {
#define SPH_CANDIDATES_END(lanes)                                               \
            }                                                                   \
            phase_ = (phase_ + (e_ - s_)) & ((lanes) - 1u);                     \
        }                                                                       \
    }

/* Fused list (list mode, build_list = 1): the first density kernel of a
 * step (sph_density or sph_continuity; sim/sph/particles.hpp, update())
 * builds the neighbour list while it sums, instead of a "neighbours" phase
 * before it. It walks the candidates of sph_neighbours (SPH_CANDIDATES_BEGIN)
 * and stores every j with |x_i - x_j|^2 < h^2 exactly as that phase does
 * (same slots, nbcount, overflow count), so the kernels after it walk the
 * same list; VISIT(j) sees each j it stores, in the order stored: the sums
 * are those of the list, also when it overflows (the neighbours past the
 * capacity are left out of both, as the kernels after it leave them out).
 * The list's loads of x_j, done once for the build and again for the sum,
 * are done once.
 *
 *     cells of p (3 x 3 x 3) --walk--> j: r^2 < h^2 and k < cap ? --+--> nlist[slot(k, i)] = j
 *                                                                  +--> VISIT(j): the kernel's sums
 *
 * build_list = 0 (cells mode always): VISIT(j) for each j of the list (or
 * of the cells), SPH_NEIGHBOURS_BEGIN. With lanes (2^lane_bits > 1) a lane's
 * first slot is the hits of the lanes before it: sph_list_slots counts them
 * in a walk of its own and adds them up in local memory, as sph_neighbours
 * does. The host fuses where it pays (SphParticles::fuseList,
 * sim/sph/particles.hpp). Kernels using it have the arguments pos, cells,
 * nlist (writable), nbcount, counters, n,
 * dims, inv_cell, h, list_cap, count_overflow, build_list and lane_bits,
 * and a `lane`. count_overflow = 0: a build whose list another build of the
 * same step replaces (WCSPH's summation start of the carried density) leaves
 * the overflow count alone, so that each step's list counts once. */

/* This lane's first list slot, and in *total the particle's hits over all its
 * lanes (1 lane: 0, the walk itself counts). Every work-item of the group
 * must call it (barriers); `count`: the work-item has a particle whose list
 * it builds with lanes. */
inline uint sph_list_slots(__local uint* red, __global const float4* restrict pos,
                           __global const uint2* restrict cells, const float3 p,
                           const bool count, const int4 dims, const float inv_cell,
                           const float h, const uint lane, const uint lane_bits,
                           uint* total)
{
    const uint lanes = 1u << lane_bits;
    const float h2 = h * h;
    uint cnt = 0u;
    if (count && lane_bits != 0u) {
        SPH_CANDIDATES_BEGIN(p, lane, lanes)
            if (sph_r2(p - pos[j].xyz) < h2) ++cnt;
        SPH_CANDIDATES_END(lanes)
    }
    const uint lid = get_local_id(0), first = lid & ~(lanes - 1u);
    barrier(CLK_LOCAL_MEM_FENCE);
    red[lid] = cnt;
    barrier(CLK_LOCAL_MEM_FENCE);
    uint k = 0u, t = 0u;
    for (uint l = 0; l < lanes; ++l) {
        const uint c = red[first + l];
        if (l < lane) k += c;
        t += c;
    }
    *total = t;
    return k;
}

#if SPH_NLIST
/* At the kernel's top level, before its `if (i < n)`: this lane's slot
 * (list_k_) and the particle's total (list_total_). */
#define SPH_FIRST_PREPARE(i)                                                    \
    __local uint list_red_[SPH_WG];                                             \
    uint list_total_ = 0u;                                                      \
    uint list_k_ = sph_list_slots(list_red_, pos, cells,                        \
                                  (i) < n ? pos[i].xyz : (float3)(0.0f),         \
                                  (i) < n && build_list != 0u, dims, inv_cell, h, \
                                  lane, lane_bits, &list_total_)
/* Inside `if (i < n)`: VISIT(j) for every neighbour candidate j of i at p.
 * The walk at one lane is its own copy with constant lane and stride (the
 * compiler drops the dealing arithmetic: the neighbours kernel did the same,
 * and written with the lane count as a variable it took 6-10 % longer on the
 * H200). */
#define SPH_FIRST_BUILD(i, p, lane_, lanes_, VISIT)                             \
        SPH_CANDIDATES_BEGIN(p, lane_, lanes_)                                  \
            if (sph_r2((p) - pos[j].xyz) < h * h) {                             \
                if (list_k_ < list_cap) {                                       \
                    nlist[EDDY_SPH_LIST_SLOT(list_k_, (i), n)] = j;             \
                    VISIT(j);                                                   \
                }                                                               \
                ++list_k_;                                                      \
            }                                                                   \
        SPH_CANDIDATES_END(lanes_)
#define SPH_FIRST_NEIGHBOURS(i, p, VISIT)                                       \
    if (build_list != 0u && lane_bits == 0u) {                                  \
        SPH_FIRST_BUILD(i, p, 0u, 1u, VISIT)                                    \
    } else if (build_list != 0u) {                                              \
        SPH_FIRST_BUILD(i, p, lane, 1u << lane_bits, VISIT)                     \
    } else {                                                                    \
        SPH_NEIGHBOURS_BEGIN(i, p)                                              \
            VISIT(j);                                                           \
        SPH_NEIGHBOURS_END                                                      \
    }
/* Lane 0, after the sums: the list's length and overflow, as sph_neighbours. */
#define SPH_FIRST_FINISH(i)                                                     \
    if (build_list != 0u) {                                                     \
        const uint t_ = lane_bits != 0u ? list_total_ : list_k_;                \
        nbcount[i] = min(t_, list_cap);                                         \
        if (t_ > list_cap && count_overflow != 0u)                             \
            atomic_add(&counters[EDDY_SPH_CNT_OVERFLOW], t_ - list_cap);        \
    }
#else
#define SPH_FIRST_PREPARE(i)
#define SPH_FIRST_NEIGHBOURS(i, p, VISIT)                                       \
    SPH_NEIGHBOURS_BEGIN(i, p)                                                  \
        VISIT(j);                                                               \
    SPH_NEIGHBOURS_END
#define SPH_FIRST_FINISH(i)
#endif

/* Boundary particles (Akinci, Ihmsen, Akinci, Solenthaler & Teschner 2012,
 * "Versatile rigid-fluid coupling for incompressible SPH", ACM TOG 31(4):62):
 * the one loop over the boundary neighbours of a fluid particle at p, shared
 * by every fluid kernel (density, forces, DFSPH's sums). The boundary
 * particles are sorted by the fluid's cells (sim/sph/boundary.hpp): bpos[b]
 * = (x_b, psi_b) with psi_b = rho0 V_b (eq. 4), bvel[b] = (v_b, 0); bcells
 * is their cell table. BODY sees bj (sorted boundary index), bp = bpos[bj],
 * bd = p - x_b and br2 = |bd|^2 < h^2; this lane's share. Kernels using it
 * have arguments bpos, bcells, nbound, dims, inv_cell, h, lane_bits and a
 * `lane`. Without boundary particles (nbound = 0) it costs one uniform
 * branch. */
#define SPH_BOUNDARY_BEGIN(p)                                                   \
    if (nbound != 0u) {                                                         \
        SPH_CELLS_BEGIN(bcells, p, bj, lane, 1u << lane_bits)                   \
            const float4 bp = bpos[bj];                                         \
            const float3 bd = (p) - bp.xyz;                                     \
            const float br2 = sph_r2(bd);                                       \
            if (br2 < h * h) {
#define SPH_BOUNDARY_END }                                                      \
        SPH_CELLS_END                                                           \
    }

/* c a for the symmetric 3 x 3 matrix c = (xx, yy, zz, xy, xz, yz) (DFSPH's
 * gradient renormalisation, EDDY_DFSPH_CTL_GRAD). */
inline float3 sph_sym3_apply(__global const float* restrict c, const float3 a)
{
    return (float3)(c[0] * a.x + c[3] * a.y + c[4] * a.z,
                    c[3] * a.x + c[1] * a.y + c[5] * a.z,
                    c[4] * a.x + c[5] * a.y + c[2] * a.z);
}

/* The solids' signed distances: sph_solid.cl (built after this file). */
