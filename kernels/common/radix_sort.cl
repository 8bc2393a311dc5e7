/*
 * radix_sort.cl: stable least-significant-digit radix sort of (key, value)
 * pairs of 32-bit unsigned integers, EDDY_RADIX_BITS bits per pass.
 *
 * The classic three-kernel pass (Blelloch 1990 "Prefix sums and their
 * applications"; Satish, Harris & Garland 2009 "Designing efficient sorting
 * algorithms for manycore GPUs"; the radix sort of the OpenCL programming
 * guides): work-group g owns the contiguous chunk [g*chunk, (g+1)*chunk).
 *
 *   radix_histogram: counts of each digit in each chunk, stored digit-major:
 *                    hist[d * groups + g]
 *   radix_scan:      one work-group turns hist into its exclusive prefix sum
 *                    (tiles staged in local memory),
 *                    so hist[d * groups + g] is where chunk g's first key with
 *                    digit d goes (all smaller digits, and digit d of earlier
 *                    chunks, come before it)
 *   radix_scatter:   each chunk is walked tile by tile in order; inside a tile
 *                    a work-item's rank among the tile's keys of its digit is
 *                    a prefix sum over work-items of a one-hot digit vector
 *                    (16 lanes of ushort, one scan for all digits). Keys are
 *                    written to offset[d] + rank: equal digits keep their
 *                    input order, so the sort is stable.
 *
 * Only the key bits [shift, shift + EDDY_RADIX_BITS) of (key & mask) are looked
 * at in a pass; the host runs ceil(bits / EDDY_RADIX_BITS) passes for the bits
 * the keys use, mask = the low `bits` bits (the rest of a key is ignored).
 */
#if EDDY_RADIX != 16
#error "radix_scatter's one-hot vector assumes 16 digits (EDDY_RADIX_BITS = 4)"
#endif
#define SORT_WG EDDY_SORT_WG

/* Exclusive prefix sum over the work-group of each item's value s (Hillis-Steele
 * in sums[SORT_WG]); every item of the group must call it (barriers). */
inline uint radix_group_exclusive_scan(__local uint* sums, const uint s)
{
    const uint lid = get_local_id(0);
    sums[lid] = s;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint off = 1; off < SORT_WG; off <<= 1) {
        const uint t = lid >= off ? sums[lid - off] : 0u;
        barrier(CLK_LOCAL_MEM_FENCE);
        sums[lid] += t;
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    return sums[lid] - s;
}

__kernel __attribute__((reqd_work_group_size(SORT_WG, 1, 1)))
void radix_histogram(__global const uint* restrict keys,
                     __global uint* restrict hist,
                     const uint n, const uint shift, const uint mask, const uint chunk)
{
    __local uint part[EDDY_RADIX * SORT_WG];
    __local uint sum16[SORT_WG];
    const uint lid = get_local_id(0), g = get_group_id(0), groups = get_num_groups(0);
    const uint begin = g * chunk, end = min(begin + chunk, n);

    /* Each work-item counts its strided keys in registers: no atomics. */
    uint c[EDDY_RADIX];
#pragma unroll
    for (int d = 0; d < EDDY_RADIX; ++d) c[d] = 0;
    for (uint i = begin + lid; i < end; i += SORT_WG) {
        const uint d = ((keys[i] & mask) >> shift) & (EDDY_RADIX - 1);
#pragma unroll
        for (int k = 0; k < EDDY_RADIX; ++k) c[k] += (d == (uint)k);
    }
#pragma unroll
    for (int d = 0; d < EDDY_RADIX; ++d) part[d * SORT_WG + lid] = c[d];
    barrier(CLK_LOCAL_MEM_FENCE);

    /* 256 items reduce 16 digits x 256 counts: item t sums 16 entries of digit t/16. */
    const uint d = lid / (SORT_WG / EDDY_RADIX), piece = lid % (SORT_WG / EDDY_RADIX);
    const uint len = SORT_WG / (SORT_WG / EDDY_RADIX);
    uint s = 0;
    for (uint k = 0; k < len; ++k) s += part[d * SORT_WG + piece * len + k];
    sum16[lid] = s;
    barrier(CLK_LOCAL_MEM_FENCE);
    if (lid < EDDY_RADIX) {
        uint t = 0;
        for (uint k = 0; k < SORT_WG / EDDY_RADIX; ++k) t += sum16[lid * (SORT_WG / EDDY_RADIX) + k];
        hist[lid * groups + g] = t;
    }
}

/* Exclusive prefix sum of hist[0 .. count) in place, by ONE work-group, in
 * tiles of SORT_WG x SCAN_PER_ITEM entries staged in local memory:
 *
 *   hist  | tile 0 (4096 entries) | tile 1 | ...     coalesced loads: item l
 *           reads entries l, l + 256, l + 512, ... of the tile
 *   local | item 0: 16 | item 1: 16 | ... |         item l sums ITS 16 entries,
 *           the 256 sums are scanned (Hillis-Steele), plus the carry of the
 *           tiles before; item l rewrites its 16 entries; coalesced stores
 *
 * Entry e of a tile sits at e + e / 16 in local memory, so that the items'
 * runs of 16 start 17 words apart: no bank conflicts when each walks its own.
 * (Before: each item summed a contiguous segment of hist straight from global
 * memory, 56 uncoalesced loads in a chain at 881 groups, 676 500 keys: 22 us
 * a pass on the H200, against 10 us now.) */
#define SCAN_PER_ITEM 16
#define SCAN_TILE (SORT_WG * SCAN_PER_ITEM)
__kernel __attribute__((reqd_work_group_size(SORT_WG, 1, 1)))
void radix_scan(__global uint* restrict hist, const uint count)
{
    __local uint tile[SCAN_TILE + SORT_WG];
    __local uint sums[SORT_WG];
    const uint lid = get_local_id(0);
    uint carry = 0u;
    for (uint base = 0; base < count; base += SCAN_TILE) {
        for (uint k = 0; k < SCAN_PER_ITEM; ++k) {
            const uint e = k * SORT_WG + lid;
            tile[e + e / SCAN_PER_ITEM] = base + e < count ? hist[base + e] : 0u;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        const uint mine = lid * (SCAN_PER_ITEM + 1);
        uint s = 0u;
        for (uint k = 0; k < SCAN_PER_ITEM; ++k) s += tile[mine + k];
        uint run = carry + radix_group_exclusive_scan(sums, s);
        const uint total = sums[SORT_WG - 1];  /* inclusive after the scan's last barrier */
        for (uint k = 0; k < SCAN_PER_ITEM; ++k) {
            const uint v = tile[mine + k];
            tile[mine + k] = run;
            run += v;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        for (uint k = 0; k < SCAN_PER_ITEM; ++k) {
            const uint e = k * SORT_WG + lid;
            if (base + e < count) hist[base + e] = tile[e + e / SCAN_PER_ITEM];
        }
        carry += total;
        barrier(CLK_LOCAL_MEM_FENCE); /* tile and sums are rewritten by the next tile */
    }
}

__kernel __attribute__((reqd_work_group_size(SORT_WG, 1, 1)))
void radix_scatter(__global const uint* restrict keys_in,
                   __global const uint* restrict vals_in,
                   __global uint* restrict keys_out,
                   __global uint* restrict vals_out,
                   __global const uint* restrict hist,
                   const uint n, const uint shift, const uint mask, const uint chunk)
{
    __local ushort16 scan[SORT_WG];
    __local uint offset[EDDY_RADIX];
    const uint lid = get_local_id(0), g = get_group_id(0), groups = get_num_groups(0);
    const uint begin = g * chunk, end = min(begin + chunk, n);
    const ushort16 lanes = (ushort16)(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
    if (lid < EDDY_RADIX) offset[lid] = hist[lid * groups + g];
    barrier(CLK_LOCAL_MEM_FENCE);

    for (uint tile = begin; tile < end; tile += SORT_WG) {
        const uint i = tile + lid;
        const bool valid = i < end;
        const uint key = valid ? keys_in[i] : 0u;
        const uint val = valid ? vals_in[i] : 0u;
        const uint d = ((key & mask) >> shift) & (EDDY_RADIX - 1);
        /* one-hot digit vector (all zero for padding items) */
        const ushort16 onehot =
            valid ? (as_ushort16((ushort16)((ushort)d) == lanes) & (ushort16)(1)) : (ushort16)(0);
        scan[lid] = onehot;
        barrier(CLK_LOCAL_MEM_FENCE);
        for (uint off = 1; off < SORT_WG; off <<= 1) {
            const ushort16 t = lid >= off ? scan[lid - off] : (ushort16)(0);
            barrier(CLK_LOCAL_MEM_FENCE);
            scan[lid] += t;
            barrier(CLK_LOCAL_MEM_FENCE);
        }
        if (valid) {
            /* inclusive count of digit d up to me, minus me = stable rank */
            const uint rank = (uint)((__local const ushort*)&scan[lid])[d] - 1u;
            const uint dst = offset[d] + rank;
            keys_out[dst] = key;
            vals_out[dst] = val;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        if (lid < EDDY_RADIX) offset[lid] += (uint)((__local const ushort*)&scan[SORT_WG - 1])[lid];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
}

/*
 * radix_sort_local: the whole sort of n <= EDDY_SORT_LOCAL_MAX pairs in ONE
 * launch of ONE work-group (small N, where the three launches per pass of the
 * kernels above cost more than their work: a step of the app's 6 612-particle
 * scene spent 12 of its ~55 launches sorting). Every pass, with the keys
 * ping-ponging between (keys, vals) and (tmp_keys, tmp_vals) in global memory:
 *
 *   item t owns the contiguous run [t c, (t + 1) c), c = ceil(n / SORT_WG)
 *
 *     keys    | run 0 | run 1 | ... | run 255 |
 *     counts  part[d * SORT_WG + t] = keys of digit d in run t
 *     scan    exclusive prefix sum of part in that (digit-major) order:
 *             where run t's first key of digit d goes
 *     scatter item t walks its run in order, writing each key to its
 *             digit's running offset: stable (runs in order, keys in order)
 *
 * then a work-group barrier with a global fence makes the pass's writes
 * visible to the next pass's reads (same work-group). Same digits, masks and
 * pass count as the three-kernel sort, so the result is identical.
 */
__kernel __attribute__((reqd_work_group_size(SORT_WG, 1, 1)))
void radix_sort_local(__global uint* restrict keys, __global uint* restrict vals,
                      __global uint* restrict tmp_keys, __global uint* restrict tmp_vals,
                      const uint n, const uint passes, const uint mask)
{
    __local uint part[EDDY_RADIX * SORT_WG];
    __local uint sums[SORT_WG];
    const uint lid = get_local_id(0);
    const uint c = (n + SORT_WG - 1) / SORT_WG;
    const uint begin = min(lid * c, n), end = min(begin + c, n);
    for (uint p = 0; p < passes; ++p) {
        __global const uint* kin = (p & 1u) ? tmp_keys : keys;
        __global const uint* vin = (p & 1u) ? tmp_vals : vals;
        __global uint* kout = (p & 1u) ? keys : tmp_keys;
        __global uint* vout = (p & 1u) ? vals : tmp_vals;
        const uint shift = p * EDDY_RADIX_BITS;
        uint cnt[EDDY_RADIX];
        for (int d = 0; d < EDDY_RADIX; ++d) cnt[d] = 0u;
        for (uint i = begin; i < end; ++i) ++cnt[((kin[i] & mask) >> shift) & (EDDY_RADIX - 1)];
        for (int d = 0; d < EDDY_RADIX; ++d) part[d * SORT_WG + lid] = cnt[d];
        barrier(CLK_LOCAL_MEM_FENCE);
        /* exclusive scan of part (EDDY_RADIX entries per item, in order) */
        uint s = 0;
        for (uint k = 0; k < EDDY_RADIX; ++k) s += part[lid * EDDY_RADIX + k];
        uint run = radix_group_exclusive_scan(sums, s);
        for (uint k = 0; k < EDDY_RADIX; ++k) {
            const uint v = part[lid * EDDY_RADIX + k];
            part[lid * EDDY_RADIX + k] = run;
            run += v;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        uint off[EDDY_RADIX];
        for (int d = 0; d < EDDY_RADIX; ++d) off[d] = part[d * SORT_WG + lid];
        for (uint i = begin; i < end; ++i) {
            const uint key = kin[i];
            const uint d = ((key & mask) >> shift) & (EDDY_RADIX - 1);
            const uint dst = off[d]++;
            kout[dst] = key;
            vout[dst] = vin[i];
        }
        /* the writes of this pass before anyone reads them (next pass), and
         * part free again */
        barrier(CLK_GLOBAL_MEM_FENCE | CLK_LOCAL_MEM_FENCE);
    }
}

/*
 * bitonic_sort_chunks + bitonic_merge_chunks: the same stable sort of
 * n <= EDDY_SORT_BITONIC_MAX pairs, when a key's sorted bits and its position
 * fit one word (bits + pbits <= 32, pbits = ceil(log2 n)). Each key becomes
 * the word
 *
 *     w = (key & mask) << pbits | position        (padding: 0xffffffff)
 *
 * All words differ, so sorting them is a total order whose ties in
 * (key & mask) fall in position order: exactly the stable sort (the radix
 * sort's result, bit for bit).
 *
 * bitonic_sort_chunks: one work-group per chunk of P = 2^lsize words (P <=
 * EDDY_SORT_CHUNK) sorts it in local memory with Batcher's bitonic network
 * (Batcher 1968, "Sorting networks and their applications"):
 *
 *   for k = 2, 4, ..., P            (bitonic runs of k become sorted runs)
 *     for j = k/2, k/4, ..., 1      (compare-exchange at distance j)
 *       pair (i, i + j), i's bit j clear: ascending where i's bit k is clear
 *
 *   P = 8:  k=2  [0 1][2 3][4 5][6 7]    up down up down
 *           k=4  [0 2][1 3] [4 6][5 7],  then distance 1
 *           k=8  distance 4, 2, 1 over all eight: sorted
 *
 * log2 P (log2 P + 1) / 2 steps of P/2 compare-exchanges, a barrier after
 * each. One chunk (n <= P, the host takes P = 2^pbits): the group writes
 * out_keys[t] = keys[position of w_t] (the whole key, ignored bits included)
 * and out_vals likewise, and the sort is done in one launch. Several chunks
 * (P = EDDY_SORT_CHUNK): each writes its sorted words to `words`, in
 * parallel on as many compute units, and
 *
 * bitonic_merge_chunks puts each real word where it belongs: its rank is its
 * index in its own chunk plus, for every other chunk, the number of that
 * chunk's real words below it (a binary search; the words are distinct).
 *
 *   chunks   [1 4 9 | 2 3 8 | 5 6 7]      word 4: index 1 + (1 below in
 *   ranks     0 3 8   1 2 7   4 5 6        chunk 2: 2 and 3 -> 2) + 0 = 3
 *
 * That is two launches, where the one work-group of one compute unit that
 * sorted all 8 192 words of the app's scene took 0.09 ms on the H200.
 * Any work-group size (a power of two: the items stride over the words).
 */
__kernel void bitonic_sort_chunks(__global const uint* restrict keys,
                                  __global const uint* restrict vals,
                                  __global uint* restrict out_keys,
                                  __global uint* restrict out_vals,
                                  __global uint* restrict words,
                                  const uint n, const uint pbits, const uint mask,
                                  const uint lsize)
{
    __local uint w[EDDY_SORT_CHUNK];
    const uint lid = get_local_id(0), wg = get_local_size(0);
    const uint P = 1u << lsize, base = get_group_id(0) * P;
    for (uint t = lid; t < P; t += wg) {
        const uint g = base + t;
        w[t] = g < n ? ((keys[g] & mask) << pbits) | g : 0xffffffffu;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint k = 2u; k <= P; k <<= 1)
        for (uint j = k >> 1; j > 0u; j >>= 1) {
            for (uint t = lid; t < P / 2u; t += wg) {
                const uint i = ((t & ~(j - 1u)) << 1) | (t & (j - 1u));
                const uint a = w[i], b = w[i + j];
                if ((a > b) == ((i & k) == 0u)) {
                    w[i] = b;
                    w[i + j] = a;
                }
            }
            barrier(CLK_LOCAL_MEM_FENCE);
        }
    if (get_num_groups(0) == 1u) {
        const uint pmask = (1u << pbits) - 1u;
        for (uint t = lid; t < n; t += wg) {
            const uint src = w[t] & pmask;
            out_keys[t] = keys[src];
            out_vals[t] = vals[src];
        }
    } else {
        for (uint t = lid; t < P; t += wg) words[base + t] = w[t];
    }
}

__kernel void bitonic_merge_chunks(__global const uint* restrict words,
                                   __global const uint* restrict keys,
                                   __global const uint* restrict vals,
                                   __global uint* restrict out_keys,
                                   __global uint* restrict out_vals,
                                   const uint n, const uint pbits, const uint lsize)
{
    const uint g = get_global_id(0);
    if (g >= n) return;
    const uint P = 1u << lsize, own = g >> lsize, chunks = (n + P - 1u) >> lsize;
    const uint w = words[g];
    uint rank = g & (P - 1u);
    for (uint c = 0; c < chunks; ++c) {
        if (c == own) continue;
        __global const uint* run = words + (size_t)c * P;
        uint lo = 0, len = min(P, n - c * P); /* the real words of chunk c */
        while (len > 0u) {                    /* lo = how many of them are < w */
            const uint mid = len >> 1;
            if (run[lo + mid] < w) {
                lo += mid + 1u;
                len -= mid + 1u;
            } else {
                len = mid;
            }
        }
        rank += lo;
    }
    const uint src = w & ((1u << pbits) - 1u);
    out_keys[rank] = keys[src];
    out_vals[rank] = vals[src];
}

/*
 * 64-bit keys (RadixSort::sort64): an LSD radix sort may sort by the low word
 * first and then, stably, by the high word. These kernels only move words
 * around the unchanged 32-bit passes above:
 *   radix_split64:  lo[i] = low word of keys[i], perm[i] = i
 *   radix_gather_hi: hi[i] = high word of keys[perm[i]] (keys in the order of
 *                    the first sort, ready for the second)
 *   radix_gather64:  out[i] = keys[perm[i]] (the sorted 64-bit keys)
 */
__kernel void radix_split64(__global const ulong* restrict keys, __global uint* restrict lo,
                            __global uint* restrict perm, const uint n)
{
    const uint i = get_global_id(0);
    if (i >= n) return;
    lo[i] = (uint)keys[i];
    perm[i] = i;
}

__kernel void radix_gather_hi(__global const ulong* restrict keys,
                              __global const uint* restrict perm,
                              __global uint* restrict hi, const uint n)
{
    const uint i = get_global_id(0);
    if (i >= n) return;
    hi[i] = (uint)(keys[perm[i]] >> 32);
}

__kernel void radix_gather64(__global const ulong* restrict keys,
                             __global const uint* restrict perm,
                             __global ulong* restrict out, const uint n)
{
    const uint i = get_global_id(0);
    if (i >= n) return;
    out[i] = keys[perm[i]];
}
