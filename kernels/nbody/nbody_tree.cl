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
 *   tree_walk     one work-group per EDDY_TREE_WG consecutive bodies in curve
 *                 order walks the tree once for the whole group (Bonsai-style
 *                 group walk, Bedorf, Gaburov & Portegies Zwart 2012), builds
 *                 an interaction list in local memory and evaluates it
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
#define TW EDDY_TREE_WG
#ifndef TREE_STACK  /* entries of the walk's stack (host: -DTREE_STACK=...) */
#define TREE_STACK EDDY_TREE_STACK
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
                         __global uint* restrict counters)
{
    const long i = get_global_id(0);
    if (i >= n) return;
    spos[i] = pos[perm[i]];
    if (i == 0) parent[0] = NONE;
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

/* ---- walk --------------------------------------------------------------- */

/* TREE_EVAL(cnt) adds the pull of `cnt` list entries on the body at p
 * (to ax, ay, az): monopole with the
 * direct kernel's Plummer softening, a = m d / (|d|^2 + eps^2)^(3/2) with
 * d = com - p, plus for internal nodes the quadrupole term of the potential
 * phi = -m/r - d^T Q d / (2 r^5), i.e. a += -Q d / r^5 + 5/2 (d^T Q d) d / r^7,
 * with r^2 = |d|^2 + eps^2 (the same softened distance, as in Bonsai). */
/* (A macro, not a function: PoCL 3.1 returned NaN from this loop as a
 * function called after the walk's barriers, but not when written inline.) */
#define TREE_EVAL(cnt)                                                          \
    for (uint k_ = 0; k_ < (cnt); ++k_) {                                       \
        const float4 c_ = lcom[k_];                                             \
        const float dx = c_.x - p.x, dy = c_.y - p.y, dz = c_.z - p.z;          \
        const float r2 = fma(dx, dx, fma(dy, dy, fma(dz, dz, eps2)));           \
        const float inv = rsqrt(r2);                                            \
        const float inv2 = inv * inv;                                           \
        const float s = c_.w * inv * inv2;                                      \
        /* quadrupole: q1.w = 0 for leaves (Q = 0) zeroes it without a         \
         * branch; the products stay finite for r >= 1e-6 */                    \
        const float4 qa = lq0[k_], qb = lq1[k_];                                \
        const float qx = qa.x * dx + qa.w * dy + qb.x * dz;                     \
        const float qy = qa.w * dx + qa.y * dy + qb.y * dz;                     \
        const float qz = qb.x * dx + qb.y * dy + qa.z * dz;                     \
        const float inv5 = qb.w * (inv2 * inv2 * inv);                          \
        const float f = (2.5f * (dx * qx + dy * qy + dz * qz) * inv2) * inv5;   \
        ax = fma(dx, s, ax) + (f * dx - qx * inv5);                             \
        ay = fma(dy, s, ay) + (f * dy - qy * inv5);                             \
        az = fma(dz, s, az) + (f * dz - qz * inv5);                             \
    }

/* Phase "walk": work-group g takes the bodies g*TW .. g*TW+TW-1 in curve
 * order (spatially close), finds their bounding box, and walks the tree once
 * for all of them. Nodes to test sit on a stack in local memory; each round
 * pops up to TW of them, one per work-item, and tests the node against the
 * group's box: it is opened when the box comes closer to its centre of mass
 * than r_crit (so a node holding one of the group's bodies is always
 * opened), else it (or a leaf, i.e. a body) joins the interaction list in
 * local memory. Children and list slots are placed by a prefix sum, so the
 * order of summation is fixed (bit-identical reruns). When the list holds TW
 * or more entries every work-item adds them all to its own body.
 *
 * If a round could overflow the stack (TREE_STACK entries, host-chosen), the
 * nodes opened in it are summed body by body over their ranges instead
 * (exact, slower); stats[0] counts such nodes. Results go back to the input
 * order: acc[perm[i]] = G a, vel[perm[i]] += half_dt G a (as nbody_gravity). */
__kernel __attribute__((reqd_work_group_size(TW, 1, 1)))
void tree_walk(__global const float4* restrict spos,
               __global const uint* restrict perm,
               __global const int2* restrict children,
               __global const uint2* restrict range,
               __global const float4* restrict com,
               __global const float4* restrict q0,
               __global const float4* restrict q1,
               const uint n, const float G, const float eps2, const float half_dt,
               __global float4* restrict vel, __global float4* restrict acc,
               __global uint* restrict stats)
{
    __local int stack[TREE_STACK];
    const uint stackCap = TREE_STACK;
    __local float4 lcom[2 * TW], lq0[2 * TW], lq1[2 * TW];
    __local float4 tmin[TW], tmax[TW];
    __local uint scan[TW];
    __local int direct[TW];
    const uint lid = get_local_id(0);
    const uint first = get_group_id(0) * TW;
    const uint i = first + lid;
    const bool valid = i < n;
    const float4 p = spos[valid ? i : first];

    /* the group's bounding box */
    float4 gmin = (float4)(p.xyz, 0.0f), gmax = gmin;
    TREE_REDUCE_BOX(TW, lid, gmin, gmax, tmin, tmax);
    const float3 gc = 0.5f * (gmin.xyz + gmax.xyz), gh = 0.5f * (gmax.xyz - gmin.xyz);

    float ax = 0.0f, ay = 0.0f, az = 0.0f;
    uint size = 1, listCount = 0, fallbacks = 0;
    if (lid == 0) stack[0] = 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    while (size > 0) {
        const uint k = min(size, (uint)TW);
        const uint base = size - k;
        const bool overflow = size + k > stackCap;
        const int node = lid < k ? stack[base + lid] : -1;
        barrier(CLK_LOCAL_MEM_FENCE);
        uint push = 0, add = 0, dir = 0;
        if (node >= 0) {
            if ((uint)node >= n - 1) {
                add = 1;  /* leaf: one body */
            } else {
                const float3 c = com[node].xyz;
                const float3 dd = fmax(fabs(c - gc) - gh, (float3)(0.0f));
                if (dot(dd, dd) < q1[node].z) {
                    if (overflow) dir = 1;
                    else push = 2;
                } else {
                    add = 1;
                }
            }
        }
        /* inclusive prefix sum of the packed counts (Hillis-Steele) */
        const uint own = push | (add << 10) | (dir << 20);
        scan[lid] = own;
        barrier(CLK_LOCAL_MEM_FENCE);
        for (uint off = 1; off < TW; off <<= 1) {
            const uint t = lid >= off ? scan[lid - off] : 0u;
            barrier(CLK_LOCAL_MEM_FENCE);
            scan[lid] += t;
            barrier(CLK_LOCAL_MEM_FENCE);
        }
        const uint total = scan[TW - 1];
        const uint excl = scan[lid] - own;
        if (push) {
            const int2 ch = children[node];
            stack[base + (excl & 1023u)] = ch.y;
            stack[base + (excl & 1023u) + 1] = ch.x;
        }
        if (add) {
            const uint slot = listCount + ((excl >> 10) & 1023u);
            lcom[slot] = com[node];
            lq0[slot] = q0[node];
            lq1[slot] = q1[node];
        }
        if (dir) direct[excl >> 20] = node;
        barrier(CLK_LOCAL_MEM_FENCE);
        size = base + (total & 1023u);
        listCount += (total >> 10) & 1023u;
        const uint ndirect = total >> 20;
        fallbacks += ndirect;
        for (uint d = 0; d < ndirect; ++d) {
            const uint2 r = range[direct[d]];
            for (uint t = r.x; t <= r.y; t += TW) {
                const uint jj = t + lid;
                tmin[lid] = jj <= r.y ? spos[jj] : (float4)(0.0f);  /* mass 0: no pull */
                barrier(CLK_LOCAL_MEM_FENCE);
                for (uint m = 0; m < TW; ++m) {
                    const float4 q = tmin[m];
                    const float dx = q.x - p.x, dy = q.y - p.y, dz = q.z - p.z;
                    const float r2 = fma(dx, dx, fma(dy, dy, fma(dz, dz, eps2)));
                    const float inv = rsqrt(r2);
                    const float s = q.w * inv * inv * inv;
                    ax = fma(dx, s, ax);
                    ay = fma(dy, s, ay);
                    az = fma(dz, s, az);
                }
                barrier(CLK_LOCAL_MEM_FENCE);
            }
        }
        if (listCount >= TW) {
            TREE_EVAL(listCount);
            listCount = 0;
            barrier(CLK_LOCAL_MEM_FENCE);
        }
    }
    TREE_EVAL(listCount);
    const float3 a = (float3)(G * ax, G * ay, G * az);
    if (lid == 0 && fallbacks) atomic_add(&stats[0], fallbacks);
    if (valid) {
        const uint o = perm[i];
        acc[o] = (float4)(a, 0.0f);
        float4 v = vel[o];
        v.xyz += half_dt * a;
        vel[o] = v;
    }
}
