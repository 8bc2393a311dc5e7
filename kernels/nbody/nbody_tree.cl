/*
 * nbody_tree.cl: Barnes-Hut gravity with quadrupoles, built and walked on the
 * device every step (sim/nbody_tree.cpp drives it; one kernel = one phase).
 *
 *   tree_bounds   partial bounding boxes of the positions (grid-stride, one
 *                 box per work-group)
 *   tree_keys     every group folds the partial boxes into the box (no host
 *                 round trip), then 63-bit Morton keys (21 bits per axis) of
 *                 the positions quantised in the cube of the box's largest side
 *   (sort)        RadixSort::sort64: keys sorted with the body index as payload
 *   tree_build    positions gathered into curve order; a binary radix tree
 *                 over the sorted keys (Karras 2012), one internal node per
 *                 work-item
 *   tree_moments  bottom-up: mass, centre of mass, traceless quadrupole,
 *                 bounds and opening radius of every node (Karras 2012 sec. 4:
 *                 one work-item per leaf climbs, an atomic counter per node
 *                 lets only the second child to finish compute the parent)
 *   tree_groups   the walk's groups: the largest nodes with at most
 *                 TREE_NCRIT bodies
 *   tree_walk     one walk per group (Bonsai-style group walk, Bedorf,
 *                 Gaburov & Portegies Zwart 2012): interaction lists of nodes
 *                 and bodies in local memory, evaluated by the whole
 *                 work-group
 *
 * Node numbering: internal nodes 0 .. n-2 (node 0 is the root), leaf j (the
 * j-th body in curve order) is node n-1+j; with n = 1 the root is the leaf.
 *
 * Why a binary radix tree, not an octree: Karras' construction makes every
 * internal node independently from the sorted keys in O(1) expected work, with
 * no level-by-level passes, no atomics and no allocation, for any key
 * distribution (equal keys are split by index, so the depth stays <= 64 +
 * log2 n even when all bodies sit in one quantisation cell). Its nodes have
 * tight bounds of their actual bodies (not of a Morton cell), which the safe
 * opening criterion below needs anyway. The price, twice as many nodes to
 * test as an octree of the same bodies, is paid in parallel by the group walk.
 *
 * The key quantisation only orders the bodies and shapes the hierarchy: the
 * moments, bounds and opening radii come from the actual float positions, so
 * coordinates spanning 1e-6 .. 1e6 lose no accuracy (bodies closer than a
 * cell share a key and are split by index), only walk efficiency.
 */
/* Compile-time knobs (the host passes -D; defaults in eddy_shared.h):
 *   TREE_W      work-group size of the walk
 *   TREE_NCRIT  most bodies in a group (a multiple of TREE_W: each item holds
 *               TREE_BPI = TREE_NCRIT / TREE_W of them)
 *   TREE_NLEAF  an opened node with at most this many bodies hands them to
 *               the walk's body list instead of opening its children
 *   TREE_STACK  entries of the walk's node stack
 *   TREE_PHI    1: the walk computes the potential instead of the forces */
#ifndef TREE_W
#define TREE_W EDDY_TREE_W
#endif
#ifndef TREE_NCRIT
#define TREE_NCRIT EDDY_TREE_NCRIT
#endif
#ifndef TREE_NLEAF
#define TREE_NLEAF EDDY_TREE_NLEAF
#endif
#ifndef TREE_STACK
#define TREE_STACK EDDY_TREE_STACK
#endif
#ifndef TREE_PHI
#define TREE_PHI 0
#endif
#define TREE_BPI (TREE_NCRIT / TREE_W)
#if TREE_BPI * TREE_W != TREE_NCRIT || TREE_BPI < 1
#error "TREE_NCRIT must be a positive multiple of TREE_W"
#endif
#define NONE EDDY_TREE_NONE
#define AXIS_MAX ((1u << EDDY_TREE_AXIS_BITS) - 1u)

/* ---- bounds ------------------------------------------------------------ */

/* Reduces (mn, mx) over the work-group through lmin/lmax (group size WG). */
#define TREE_REDUCE_BOX(WG, lid, mn, mx, lmin, lmax)                    \
    do {                                                                \
        lmin[lid] = mn;                                                 \
        lmax[lid] = mx;                                                 \
        barrier(CLK_LOCAL_MEM_FENCE);                                   \
        for (uint s_ = (WG) / 2; s_ > 0; s_ >>= 1) {                    \
            if (lid < s_) {                                             \
                lmin[lid] = fmin(lmin[lid], lmin[lid + s_]);            \
                lmax[lid] = fmax(lmax[lid], lmax[lid + s_]);            \
            }                                                           \
            barrier(CLK_LOCAL_MEM_FENCE);                               \
        }                                                               \
        mn = lmin[0];                                                   \
        mx = lmax[0];                                                   \
        barrier(CLK_LOCAL_MEM_FENCE);                                   \
    } while (0)

/* Phase "bounds": partial[2g], partial[2g+1] = min and max of the positions
 * this group saw (w = 0). fmin/fmax skip NaN coordinates. */
__kernel __attribute__((reqd_work_group_size(EDDY_TREE_BOUNDS_WG, 1, 1)))
void tree_bounds(__global const float4* restrict pos, const uint n,
                 __global float4* restrict partial)
{
    __local float4 lmin[EDDY_TREE_BOUNDS_WG], lmax[EDDY_TREE_BOUNDS_WG];
    const uint lid = get_local_id(0);
    float4 mn = (float4)(INFINITY), mx = (float4)(-INFINITY);
    for (uint i = get_global_id(0); i < n; i += get_global_size(0)) {
        float4 p = pos[i];
        p.w = 0.0f;
        mn = fmin(mn, p);
        mx = fmax(mx, p);
    }
    TREE_REDUCE_BOX(EDDY_TREE_BOUNDS_WG, lid, mn, mx, lmin, lmax);
    if (lid == 0) {
        partial[2 * get_group_id(0)] = mn;
        partial[2 * get_group_id(0) + 1] = mx;
    }
}

/* Spreads the low 21 bits of x to every third bit (bit k -> bit 3k). */
static inline ulong tree_spread21(ulong x)
{
    x &= 0x1fffffUL;
    x = (x | (x << 32)) & 0x1f00000000ffffUL;
    x = (x | (x << 16)) & 0x1f0000ff0000ffUL;
    x = (x | (x << 8)) & 0x100f00f00f00f00fUL;
    x = (x | (x << 4)) & 0x10c30c30c30c30c3UL;
    x = (x | (x << 2)) & 0x1249249249249249UL;
    return x;
}

/* Cell index along one axis: floor((x - lo) * scale) clamped to 0 .. 2^21-1;
 * NaN goes to cell 0 (the health check reports non-finite bodies). */
static inline ulong tree_cell(const float x, const float lo, const float scale)
{
    const float c = (x - lo) * scale;
    return (ulong)(uint)(c >= 0.0f ? fmin(c, (float)AXIS_MAX) : 0.0f);
}

/* Phase "keys": box from the partial boxes, Morton keys. box[0] = (min, scale),
 * box[1] = (max, side) are written for inspection (tests). The cube's side is
 * the largest extent; scale = 2^21 / side, or 0 when the extent is 0 or not
 * finite (every body in one cell: the tree then splits by index). */
__kernel __attribute__((reqd_work_group_size(EDDY_TREE_BOUNDS_WG, 1, 1)))
void tree_keys(__global const float4* restrict pos, const uint n,
               __global const float4* restrict partial, const uint groups,
               __global ulong* restrict keys, __global float4* restrict box)
{
    __local float4 lmin[EDDY_TREE_BOUNDS_WG], lmax[EDDY_TREE_BOUNDS_WG];
    const uint lid = get_local_id(0);
    float4 mn = (float4)(INFINITY), mx = (float4)(-INFINITY);
    for (uint g = lid; g < groups; g += EDDY_TREE_BOUNDS_WG) {
        mn = fmin(mn, partial[2 * g]);
        mx = fmax(mx, partial[2 * g + 1]);
    }
    TREE_REDUCE_BOX(EDDY_TREE_BOUNDS_WG, lid, mn, mx, lmin, lmax);
    const float side = fmax(mx.x - mn.x, fmax(mx.y - mn.y, mx.z - mn.z));
    float scale = (float)(1u << EDDY_TREE_AXIS_BITS) / side;
    if (!(side > 0.0f) || !isfinite(scale)) scale = 0.0f;
    if (get_global_id(0) == 0) {
        box[0] = (float4)(mn.xyz, scale);
        box[1] = (float4)(mx.xyz, side);
    }
    const uint i = get_global_id(0);
    if (i >= n) return;
    const float4 p = pos[i];
    keys[i] = (tree_spread21(tree_cell(p.x, mn.x, scale)) << 2) |
              (tree_spread21(tree_cell(p.y, mn.y, scale)) << 1) |
              tree_spread21(tree_cell(p.z, mn.z, scale));
}

/* ---- hierarchy ---------------------------------------------------------- */

/* Length of the common prefix of sorted keys i and j, with the index as a
 * tie-break for equal keys (Karras 2012, sec. 4); -1 outside 0 .. n-1. */
static inline int tree_delta(__global const ulong* restrict keys, const long n,
                             const long i, const long j)
{
    if (j < 0 || j >= n) return -1;
    const ulong a = keys[i], b = keys[j];
    if (a != b) return (int)clz(a ^ b);
    return 64 + (int)clz((uint)i ^ (uint)j);
}

/* Phase "build": spos[i] = pos[perm[i]] (curve order), and internal node i of
 * the binary radix tree: the range of sorted bodies it covers, its split and
 * children (Karras 2012, "Maximizing parallelism in the construction of BVHs,
 * octrees and k-d trees", HPG 2012, Fig. 4), the children's parent link, and
 * its moments counter reset to 0. */
__kernel void tree_build(__global const ulong* restrict keys,
                         __global const uint* restrict perm,
                         __global const float4* restrict pos, const uint n,
                         __global float4* restrict spos,
                         __global int2* restrict children,
                         __global uint2* restrict range,
                         __global uint* restrict parent,
                         __global uint* restrict counters,
                         __global uint* restrict stats)
{
    const long i = get_global_id(0);
    if (i >= n) return;
    spos[i] = pos[perm[i]];
    if (i == 0) {
        parent[0] = NONE;
        stats[1] = 0;  /* tree_groups counts the groups from here */
    }
    if (i >= (long)n - 1) return;
    const long nn = n;
    /* direction of the range: towards the neighbour with the longer prefix */
    const int d = tree_delta(keys, nn, i, i + 1) > tree_delta(keys, nn, i, i - 1) ? 1 : -1;
    const int dmin = tree_delta(keys, nn, i, i - d);
    long lmax = 2;
    while (tree_delta(keys, nn, i, i + lmax * d) > dmin) lmax <<= 1;
    long l = 0;
    for (long t = lmax >> 1; t >= 1; t >>= 1)
        if (tree_delta(keys, nn, i, i + (l + t) * d) > dmin) l += t;
    const long j = i + l * d;
    const long first = min(i, j), last = max(i, j);
    /* split: the last body sharing more than the node's common prefix with
     * the first one (binary search) */
    const int common = tree_delta(keys, nn, first, last);
    long split = first, step = last - first;
    do {
        step = (step + 1) >> 1;
        const long s = split + step;
        if (s < last && tree_delta(keys, nn, first, s) > common) split = s;
    } while (step > 1);
    const int left = split == first ? (int)(nn - 1 + split) : (int)split;
    const int right = split + 1 == last ? (int)(nn + split) : (int)(split + 1);
    children[i] = (int2)(left, right);
    range[i] = (uint2)((uint)first, (uint)last);
    parent[left] = (uint)i;
    parent[right] = (uint)i;
    counters[i] = 0;
}

/* ---- moments ------------------------------------------------------------ */

/* Phase "moments": per node, com = (centre of mass, mass); q0 = (Qxx, Qyy,
 * Qzz, Qxy), q1 = (Qxz, Qyz, r_crit^2, 1 for internal nodes / 0 for leaves)
 * with the traceless quadrupole about the centre of mass
 *     Q = sum_k m_k (3 d_k d_k^T - |d_k|^2 I),  d_k = x_k - com,
 * combined from the children by the parallel-axis rule; bmin/bmax the bounds
 * of the node's bodies. The opening radius is r_crit = b_max / theta with
 * b_max the largest distance from the centre of mass to a corner of the
 * bounds (Barnes 1994, "A modified tree code: don't laugh, it runs", the
 * "bmax" criterion; Salmon & Warren 1994): every point of the node's box is
 * within b_max <= r_crit of its centre of mass, so a body inside it always
 * opens the node. Shared data is read and written through volatile pointers,
 * and a global fence orders each node's writes before its parent's counter
 * (Karras 2012, sec. 4: the second child to arrive goes on, the first stops).
 */
__kernel void tree_moments(__global const float4* restrict spos,
                           __global const uint* restrict parent,
                           __global const int2* restrict children, const uint n,
                           const float invTheta2,
                           __global volatile float4* com,
                           __global volatile float4* q0,
                           __global volatile float4* q1,
                           __global volatile float4* bmin,
                           __global volatile float4* bmax,
                           __global volatile uint* counters)
{
    const uint j = get_global_id(0);
    if (j >= n) return;
    const uint leaf = n - 1 + j;
    const float4 p = spos[j];
    com[leaf] = p;
    q0[leaf] = (float4)(0.0f);
    q1[leaf] = (float4)(0.0f);
    bmin[leaf] = (float4)(p.xyz, 0.0f);
    bmax[leaf] = (float4)(p.xyz, 0.0f);
    uint node = parent[leaf];
    while (node != NONE) {
        mem_fence(CLK_GLOBAL_MEM_FENCE);
        if (atomic_inc(&counters[node]) == 0) return;  /* the sibling is not done */
        mem_fence(CLK_GLOBAL_MEM_FENCE);
        const int2 ch = children[node];
        const float4 a = com[ch.x], b = com[ch.y];
        const float m = a.w + b.w;
        const float3 c = m > 0.0f ? (a.w * a.xyz + b.w * b.xyz) / m : 0.5f * (a.xyz + b.xyz);
        const float4 qa0 = q0[ch.x], qa1 = q1[ch.x], qb0 = q0[ch.y], qb1 = q1[ch.y];
        const float3 da = a.xyz - c, db = b.xyz - c;
        const float ra = dot(da, da), rb = dot(db, db);
        float4 Q0, Q1;
        Q0.x = qa0.x + qb0.x + a.w * (3.0f * da.x * da.x - ra) + b.w * (3.0f * db.x * db.x - rb);
        Q0.y = qa0.y + qb0.y + a.w * (3.0f * da.y * da.y - ra) + b.w * (3.0f * db.y * db.y - rb);
        Q0.z = qa0.z + qb0.z + a.w * (3.0f * da.z * da.z - ra) + b.w * (3.0f * db.z * db.z - rb);
        Q0.w = qa0.w + qb0.w + 3.0f * (a.w * da.x * da.y + b.w * db.x * db.y);
        Q1.x = qa1.x + qb1.x + 3.0f * (a.w * da.x * da.z + b.w * db.x * db.z);
        Q1.y = qa1.y + qb1.y + 3.0f * (a.w * da.y * da.z + b.w * db.y * db.z);
        const float4 lo = fmin(bmin[ch.x], bmin[ch.y]), hi = fmax(bmax[ch.x], bmax[ch.y]);
        const float3 e = fmax(c - lo.xyz, hi.xyz - c);
        Q1.z = dot(e, e) * invTheta2;
        Q1.w = 1.0f;
        com[node] = (float4)(c, m);
        q0[node] = Q0;
        q1[node] = Q1;
        bmin[node] = lo;
        bmax[node] = hi;
        node = parent[node];
    }
}

/* ---- groups ------------------------------------------------------------- */

/* Phase "groups": the walk's groups are the largest nodes with at most
 * TREE_NCRIT bodies (a node qualifies when its parent has more, or it is the
 * root), so every body is in exactly one group, and a group's bodies are
 * consecutive on the curve and share a Morton prefix: a spatially tight box
 * (Bedorf, Gaburov & Portegies Zwart 2012, sec. 3.3, groups from tree cells
 * with at most N_crit bodies). groups[0 .. stats[1]) lists them; the order of
 * the atomic appends varies, what a group computes does not. Also resets the
 * walk's queue head stats[2] (stats[1] was reset by tree_build). */
__kernel void tree_groups(__global const uint2* restrict range,
                          __global const uint* restrict parent, const uint n,
                          __global uint* restrict groups,
                          __global volatile uint* restrict stats)
{
    const uint v = get_global_id(0);
    if (v == 0) stats[2] = 0;
    if (v >= 2u * n - 1u) return;
    const uint count = v >= n - 1 ? 1u : range[v].y - range[v].x + 1u;
    if (count > TREE_NCRIT) return;
    const uint p = parent[v];
    if (p != NONE && range[p].y - range[p].x + 1u <= TREE_NCRIT) return;
    groups[atomic_inc(&stats[1])] = v;
}

/* ---- walk --------------------------------------------------------------- */

/* The walk's force terms, on the TREE_BPI bodies of this work-item at
 * (px, py, pz): accelerations (ax, ay, az) as raw sums without G and, in the
 * potential build (TREE_PHI = 1), phi = -sum m / r.
 *
 * TREE_CELL(c, qa, qb): an accepted node, centre of mass and mass c,
 * traceless quadrupole qa = (Qxx, Qyy, Qzz, Qxy), qb = (Qxz, Qyz, ..): the
 * monopole with the direct kernel's Plummer softening, a = m d / r^3 with
 * d = com - x, r^2 = |d|^2 + eps^2, plus the quadrupole term of the potential
 * phi = -m/r - d^T Q d / (2 r^5), i.e. a += -Q d / r^5 + 5/2 (d^T Q d) d / r^7
 * (the same softened r, as in Bonsai).
 * TREE_BODY(q, j): body j (on the curve) at q = (x, y, z, m), the monopole
 * alone.
 * (Macros, not functions: PoCL 3.1 returned NaN from such a loop written as a
 * function called after the walk's barriers.) */
#if TREE_PHI
#define TREE_PHI_CELL(b) phi[b] -= fma(c_.w, inv, 0.5f * dqd * inv5);
/* j: the source's index on the curve; a body does not count itself */
#define TREE_PHI_BODY(b, j) if ((j) != mine[b]) phi[b] = fma(-q_.w, inv, phi[b]);
#define TREE_PHI_INDEX(k, j) tidx[k] = (j);
#else
#define TREE_PHI_CELL(b)
#define TREE_PHI_BODY(b, j)
#define TREE_PHI_INDEX(k, j)
#endif
#define TREE_CELL(c, qa, qb)                                                    \
    do {                                                                        \
        const float4 c_ = (c), qa_ = (qa), qb_ = (qb);                          \
        _Pragma("unroll")                                                       \
        for (int b = 0; b < TREE_BPI; ++b) {                                    \
            const float dx = c_.x - px[b], dy = c_.y - py[b], dz = c_.z - pz[b]; \
            const float r2 = fma(dx, dx, fma(dy, dy, fma(dz, dz, eps2)));       \
            const float inv = NBODY_RSQRT(r2);                                  \
            const float inv2 = inv * inv;                                       \
            const float qx = fma(qa_.x, dx, fma(qa_.w, dy, qb_.x * dz));        \
            const float qy = fma(qa_.w, dx, fma(qa_.y, dy, qb_.y * dz));        \
            const float qz = fma(qb_.x, dx, fma(qb_.y, dy, qa_.z * dz));        \
            const float inv5 = inv2 * inv2 * inv;                               \
            const float dqd = fma(dx, qx, fma(dy, qy, dz * qz));                \
            const float f = fma(2.5f * dqd * inv2, inv5, c_.w * inv * inv2);    \
            ax[b] = fma(dx, f, fma(-qx, inv5, ax[b]));                          \
            ay[b] = fma(dy, f, fma(-qy, inv5, ay[b]));                          \
            az[b] = fma(dz, f, fma(-qz, inv5, az[b]));                          \
            TREE_PHI_CELL(b)                                                    \
        }                                                                       \
    } while (0)
#define TREE_BODY(q, j)                                                         \
    do {                                                                        \
        const float4 q_ = (q);                                                  \
        _Pragma("unroll")                                                       \
        for (int b = 0; b < TREE_BPI; ++b) {                                    \
            const float dx = q_.x - px[b], dy = q_.y - py[b], dz = q_.z - pz[b]; \
            const float r2 = fma(dx, dx, fma(dy, dy, fma(dz, dz, eps2)));       \
            const float inv = NBODY_RSQRT(r2);                                  \
            const float s = q_.w * inv * inv * inv;                             \
            ax[b] = fma(dx, s, ax[b]);                                          \
            ay[b] = fma(dy, s, ay[b]);                                          \
            az[b] = fma(dz, s, az[b]);                                          \
            TREE_PHI_BODY(b, j)                                                 \
        }                                                                       \
    } while (0)

/* The accepted nodes clist[from .. from+cnt) (cnt <= TREE_W), loaded into
 * local memory by one work-item each, then summed by every work-item. */
#define TREE_CELLS(from, cnt)                                                   \
    do {                                                                        \
        if (lid < (cnt)) {                                                      \
            const int c_ = clist[(from) + lid];                                 \
            tile[lid] = com[c_];                                                \
            tile[TREE_W + lid] = q0[c_];                                        \
            tile[2 * TREE_W + lid] = q1[c_];                                    \
        }                                                                       \
        barrier(CLK_LOCAL_MEM_FENCE);                                           \
        for (uint k_ = 0; k_ < (cnt); ++k_)                                     \
            TREE_CELL(tile[k_], tile[TREE_W + k_], tile[2 * TREE_W + k_]);      \
        barrier(CLK_LOCAL_MEM_FENCE);                                           \
    } while (0)
/* The bodies blist[from .. from+cnt) (cnt <= TREE_W), likewise. */
#define TREE_BODIES(from, cnt)                                                  \
    do {                                                                        \
        if (lid < (cnt)) {                                                      \
            const uint j_ = blist[(from) + lid];                                \
            tile[lid] = spos[j_];                                               \
            TREE_PHI_INDEX(lid, j_)                                             \
        }                                                                       \
        barrier(CLK_LOCAL_MEM_FENCE);                                           \
        for (uint k_ = 0; k_ < (cnt); ++k_) TREE_BODY(tile[k_], tidx[k_]);      \
        barrier(CLK_LOCAL_MEM_FENCE);                                           \
    } while (0)

/* Phase "walk" (and "tree_potential" in the TREE_PHI = 1 build).
 *
 * Persistent work-groups of TREE_W items take groups from the queue
 * (stats[2], an atomic counter) until all stats[1] groups are done; a group's
 * result depends only on the group, never on which work-group ran it or when,
 * so reruns are bit-identical. Item l holds the group's bodies first + l +
 * b * TREE_W, b < TREE_BPI (TREE_NCRIT = TREE_W * TREE_BPI bodies at most).
 *
 * One walk per group (Bonsai-style, Bedorf et al. 2012): a stack of node
 * indices in local memory; each round pops up to TREE_W nodes, one per item,
 * and tests it against the group's box (the node's bounds): a node is opened
 * when the box comes closer to its centre of mass than r_crit = b_max / theta
 * (tree_moments), so a node holding one of the group's bodies is always
 * opened. An opened node with at most TREE_NLEAF bodies adds its bodies to the
 * body list, a larger one pushes its children; a leaf adds its body; an
 * accepted node joins the cell list. A scan of the packed counts places the
 * entries, so the order of summation is fixed. Whenever a list holds TREE_W
 * entries they are loaded into local memory and every item sums them for its
 * bodies (cells: monopole + quadrupole; bodies: monopole).
 *
 * If a round could overflow the stack (TREE_STACK entries, host-chosen), the
 * nodes it opens are summed body by body over their ranges instead (exact,
 * slower); stats[0] counts such nodes. Results go back to the input order:
 * acc[perm[i]] = G a, vel[perm[i]] += half_dt G a (as nbody_gravity); the
 * potential build writes phiOut[perm[i]] = -sum_{j != i} m_j / r_ij (without
 * G, as nbody_potential) and leaves acc and vel alone. */
__kernel __attribute__((reqd_work_group_size(TREE_W, 1, 1)))
void tree_walk(__global const float4* restrict spos,
               __global const uint* restrict perm,
               __global const int2* restrict children,
               __global const uint2* restrict range,
               __global const float4* restrict com,
               __global const float4* restrict q0,
               __global const float4* restrict q1,
               __global const float4* restrict bmin,
               __global const float4* restrict bmax,
               __global const uint* restrict groups,
               const uint n, const float G, const float eps2, const float half_dt,
               __global float4* restrict vel, __global float4* restrict acc,
               __global float* restrict phiOut,
               __global volatile uint* restrict stats)
{
    __local int stack[TREE_STACK];
    __local int clist[2 * TREE_W];
    __local uint blist[TREE_W * (TREE_NLEAF + 1)];
    __local ulong scan[2 * TREE_W];
    __local float4 tile[3 * TREE_W];
    __local int direct[TREE_W];
    __local uint next;
#if TREE_PHI
    __local uint tidx[TREE_W];
#endif
    const uint lid = get_local_id(0);
    const uint ngroups = stats[1];
    uint fallbacks = 0;
    for (;;) {
        if (lid == 0) next = atomic_inc(&stats[2]);
        barrier(CLK_LOCAL_MEM_FENCE);
        const uint g = next;
        barrier(CLK_LOCAL_MEM_FENCE);
        if (g >= ngroups) break;
        const uint gnode = groups[g];
        uint first, last;
        if (gnode >= n - 1) {
            first = last = gnode - (n - 1);
        } else {
            const uint2 r = range[gnode];
            first = r.x;
            last = r.y;
        }
        const float3 lo = bmin[gnode].xyz, hi = bmax[gnode].xyz;
        const float3 gc = 0.5f * (lo + hi), gh = 0.5f * (hi - lo);

        float px[TREE_BPI], py[TREE_BPI], pz[TREE_BPI];
        float ax[TREE_BPI], ay[TREE_BPI], az[TREE_BPI];
#if TREE_PHI
        float phi[TREE_BPI];
        uint mine[TREE_BPI];
#endif
#pragma unroll
        for (int b = 0; b < TREE_BPI; ++b) {
            const uint i = first + lid + (uint)b * TREE_W;
            const float4 p = spos[i <= last ? i : first];
            px[b] = p.x; py[b] = p.y; pz[b] = p.z;
            ax[b] = 0.0f; ay[b] = 0.0f; az[b] = 0.0f;
#if TREE_PHI
            phi[b] = 0.0f;
            mine[b] = i;
#endif
        }

        uint size = 1, ccount = 0, bcount = 0;
        if (lid == 0) stack[0] = 0;
        barrier(CLK_LOCAL_MEM_FENCE);
        while (size > 0) {
            const uint k = min(size, (uint)TREE_W);
            const uint base = size - k;
            const bool overflow = size + k > TREE_STACK;
            const int node = lid < k ? stack[base + lid] : -1;
            uint push = 0, cell = 0, nb = 0, dir = 0, bfirst = 0;
            if (node >= 0) {
                if ((uint)node >= n - 1) {
                    nb = 1;  /* a leaf: one body */
                    bfirst = (uint)node - (n - 1);
                } else {
                    const float3 c = com[node].xyz;
                    const float3 dd = fmax(fabs(c - gc) - gh, (float3)(0.0f));
                    /* <=: a point-like node (b_max = 0) holding a group body opens too */
                    if (dot(dd, dd) <= q1[node].z) {
                        const uint2 r = range[node];
                        if (r.y - r.x < TREE_NLEAF) {
                            nb = r.y - r.x + 1;
                            bfirst = r.x;
                        } else if (overflow) {
                            dir = 1;
                        } else {
                            push = 2;
                        }
                    } else {
                        cell = 1;
                    }
                }
            }
            /* inclusive scan of the packed counts (16 bits each), double
             * buffered: one barrier per step */
            const ulong own = (ulong)push | ((ulong)cell << 16) | ((ulong)nb << 32) |
                              ((ulong)dir << 48);
            scan[lid] = own;
            barrier(CLK_LOCAL_MEM_FENCE);
            uint pin = 0;
            for (uint off = 1; off < TREE_W; off <<= 1) {
                const ulong v = scan[pin + lid] + (lid >= off ? scan[pin + lid - off] : 0ul);
                pin ^= TREE_W;
                scan[pin + lid] = v;
                barrier(CLK_LOCAL_MEM_FENCE);
            }
            const ulong tot = scan[pin + TREE_W - 1];
            const ulong ex = scan[pin + lid] - own;
            if (push) {
                const int2 ch = children[node];
                const uint at = base + (uint)(ex & 0xffffu);
                stack[at] = ch.y;
                stack[at + 1] = ch.x;
            }
            if (cell) clist[ccount + (uint)((ex >> 16) & 0xffffu)] = node;
            if (nb) {
                const uint at = bcount + (uint)((ex >> 32) & 0xffffu);
                for (uint q = 0; q < nb; ++q) blist[at + q] = bfirst + q;
            }
            if (dir) direct[(uint)(ex >> 48)] = node;
            barrier(CLK_LOCAL_MEM_FENCE);
            size = base + (uint)(tot & 0xffffu);
            ccount += (uint)((tot >> 16) & 0xffffu);
            bcount += (uint)((tot >> 32) & 0xffffu);
            const uint ndirect = (uint)(tot >> 48);
            fallbacks += ndirect;
            for (uint d = 0; d < ndirect; ++d) {
                const uint2 r = range[direct[d]];
                for (uint t = r.x; t <= r.y; t += TREE_W) {
                    const uint jj = t + lid;
                    tile[lid] = jj <= r.y ? spos[jj] : (float4)(0.0f);  /* mass 0: no pull */
                    barrier(CLK_LOCAL_MEM_FENCE);
                    for (uint m = 0; m < TREE_W; ++m) TREE_BODY(tile[m], t + m);
                    barrier(CLK_LOCAL_MEM_FENCE);
                }
            }
            while (ccount >= TREE_W) {
                ccount -= TREE_W;
                TREE_CELLS(ccount, TREE_W);
            }
            while (bcount >= TREE_W) {
                bcount -= TREE_W;
                TREE_BODIES(bcount, TREE_W);
            }
        }
        if (ccount) TREE_CELLS(0, ccount);
        if (bcount) TREE_BODIES(0, bcount);

#pragma unroll
        for (int b = 0; b < TREE_BPI; ++b) {
            const uint i = first + lid + (uint)b * TREE_W;
            if (i <= last) {
                const uint o = perm[i];
#if TREE_PHI
                phiOut[o] = phi[b];
#else
                const float3 a = (float3)(G * ax[b], G * ay[b], G * az[b]);
                acc[o] = (float4)(a, 0.0f);
                float4 v = vel[o];
                v.xyz += half_dt * a;
                vel[o] = v;
#endif
            }
        }
    }
    if (lid == 0 && fallbacks) atomic_add(&stats[0], fallbacks);
}
