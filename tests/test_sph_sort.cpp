// Device radix sort (kernels/radix_sort.cl) against std::stable_sort: the
// sorted keys, the permutation (values = original index) and hence stability.
#include "eddy_shared.h"
#include "radix_sort.hpp"
#include "test_util.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <random>
#include <string>

using namespace eddy;

namespace {

// The three ways sort() may take.
enum class SortPath { Passes, RadixLocal, Bitonic };

// Sorts n random keys (bits wide, or with `distinct` different values to make
// many ties) on the device; checks against a stable CPU sort of (key & mask).
// Passes: the three-kernel passes for any n; RadixLocal: radix_sort_local for
// any n; Bitonic: the bitonic network where it fits (else radix_sort_local):
// one launch up to EDDY_SORT_CHUNK keys, chunks and their merge above.
void checkSortPath(size_t n, unsigned bits, unsigned distinct, bool highBitsSet, unsigned seed,
                   SortPath path) {
  const bool local = path != SortPath::Passes;
  SCOPED_TRACE(path == SortPath::Passes       ? "three-kernel passes"
               : path == SortPath::RadixLocal ? "radix_sort_local"
                                              : "bitonic network");
  auto& ctx = test::context();
  std::mt19937 rng(seed);
  const uint32_t mask = bits == 32 ? 0xffffffffu : (1u << bits) - 1u;
  std::vector<cl_uint> pool(distinct ? distinct : 1);
  for (auto& p : pool) p = rng() & mask;
  std::vector<cl_uint> keys(n), vals(n);
  for (size_t i = 0; i < n; ++i) {
    cl_uint k = distinct ? pool[rng() % distinct] : (rng() & mask);
    if (highBitsSet && bits < 32) k |= rng() & ~mask;  // bits the sort must ignore
    keys[i] = k;
    vals[i] = cl_uint(i);
  }
  cl::Buffer kb(ctx.context(), CL_MEM_READ_WRITE, n * 4), vb(ctx.context(), CL_MEM_READ_WRITE, n * 4);
  cl::Buffer tk(ctx.context(), CL_MEM_READ_WRITE, n * 4), tv(ctx.context(), CL_MEM_READ_WRITE, n * 4);
  ctx.queue().enqueueWriteBuffer(kb, CL_TRUE, 0, n * 4, keys.data());
  ctx.queue().enqueueWriteBuffer(vb, CL_TRUE, 0, n * 4, vals.data());
  RadixSort sorter(ctx);
  sorter.setLocalLimit(local ? n : 0);
  sorter.setBitonic(path == SortPath::Bitonic);
  const bool bitonic = sorter.bitonicFits(n, bits);
  if (path == SortPath::Bitonic && n <= EDDY_SORT_BITONIC_MAX) {
    unsigned pbits = 0;
    while ((size_t(1) << pbits) < n) ++pbits;
    EXPECT_EQ(bitonic, bits + pbits <= 32) << "n=" << n << " bits=" << bits;
  }
  Profiler prof;
  sorter.sort(kb, vb, tk, tv, n, bits, prof);
  std::vector<cl_uint> gotK(n), gotV(n);
  ctx.queue().enqueueReadBuffer(kb, CL_TRUE, 0, n * 4, gotK.data());
  ctx.queue().enqueueReadBuffer(vb, CL_TRUE, 0, n * 4, gotV.data());

  std::vector<cl_uint> perm(n);
  std::iota(perm.begin(), perm.end(), 0u);
  std::stable_sort(perm.begin(), perm.end(),
                   [&](cl_uint a, cl_uint b) { return (keys[a] & mask) < (keys[b] & mask); });
  size_t badK = 0, badV = 0;
  for (size_t i = 0; i < n; ++i) {
    badK += gotK[i] != keys[perm[i]];
    badV += gotV[i] != perm[i];
  }
  EXPECT_EQ(badK, 0u) << "n=" << n << " bits=" << bits << " distinct=" << distinct
                      << " seed=" << seed;
  EXPECT_EQ(badV, 0u) << "permutation/stability differs: n=" << n << " bits=" << bits
                      << " distinct=" << distinct << " seed=" << seed;
  // One row per kernel phase, one launch of each per pass (one in all,
  // local; the bitonic chunks and their merge, one launch each).
  prof.collect(true);
  std::vector<std::string> rows;
  for (const auto& s : prof.stats()) {
    rows.push_back(s.name);
    EXPECT_EQ(s.count, local ? 1u : RadixSort::passes(bits)) << s.name;
  }
  if (!local)
    EXPECT_EQ(rows, (std::vector<std::string>{"sort_histogram", "sort_scan", "sort_scatter"}));
  else if (!bitonic)
    EXPECT_EQ(rows, std::vector<std::string>{"sort_local"});
  else if (n <= EDDY_SORT_CHUNK)
    EXPECT_EQ(rows, std::vector<std::string>{"sort_bitonic"});
  else
    EXPECT_EQ(rows, (std::vector<std::string>{"sort_bitonic", "sort_merge"}));
}

void checkSort(size_t n, unsigned bits, unsigned distinct, bool highBitsSet, unsigned seed) {
  for (SortPath path : {SortPath::Passes, SortPath::RadixLocal, SortPath::Bitonic})
    checkSortPath(n, bits, distinct, highBitsSet, seed, path);
}

}  // namespace

TEST(RadixSort, MatchesStableSortOnAwkwardSizes) {
  const unsigned seed = test::freshSeed();
  // Bitonic: one chunk up to 1024, then 2, 5, 8 and 16 chunks, the last
  // chunk partial or full; 19 and 21 bits do not fit beside 14 position bits.
  for (size_t n : {size_t(1), size_t(2), size_t(7), size_t(255), size_t(256), size_t(257),
                   size_t(1009), size_t(1024), size_t(1025), size_t(4099), size_t(8191),
                   size_t(8192), size_t(16381), size_t(16384), size_t(65537)})
    for (unsigned bits : {1u, 4u, 7u, 13u, 18u, 19u, 21u})
      checkSort(n, bits, 0, false, seed + unsigned(n) * 31 + bits);
}

TEST(RadixSort, IsStableWithManyEqualKeys) {
  const unsigned seed = test::freshSeed();
  for (size_t n : {size_t(1000), size_t(70001)})
    for (unsigned distinct : {1u, 3u, 50u}) checkSort(n, 16, distinct, false, seed + distinct);
}

TEST(RadixSort, SortsOnlyTheRequestedBits) {
  const unsigned seed = test::freshSeed();
  checkSort(5003, 9, 0, true, seed);   // high bits random, ignored: ties keep input order
  checkSort(3001, 32, 0, false, seed + 1);
  checkSort(4096, 20, 0, true, seed + 2);  // bitonic: 20 + 12 bits, one word exactly
  checkSort(4096, 20, 3, true, seed + 3);  // ... with ties
}

TEST(RadixSort, LargeInputUsesManyGroupsAndTiles) {
  // > EDDY_SORT_MAX_GROUPS * EDDY_SORT_WG keys: each group walks several tiles.
  checkSortPath(300007, 20, 0, false, test::freshSeed(), SortPath::Passes);
}

TEST(RadixSort, SmallInputsTakeTheSmallPathsByDefault) {
  // By default: the bitonic network up to EDDY_SORT_BITONIC_MAX keys where
  // the key bits and the position fit a word (one launch up to a chunk, the
  // chunks and their merge above); else radix_sort_local up to
  // EDDY_SORT_LOCAL_MAX keys; else the three-kernel passes.
  struct Case {
    size_t n;
    unsigned bits;
    std::vector<std::string> rows;
  };
  const std::vector<std::string> passes{"sort_histogram", "sort_scan", "sort_scatter"},
      chunks{"sort_bitonic", "sort_merge"};
  const std::vector<Case> cases{
      {EDDY_SORT_CHUNK, 12, {"sort_bitonic"}},
      {EDDY_SORT_CHUNK + 1, 12, chunks},
      {EDDY_SORT_LOCAL_MAX + 1, 12, chunks},
      {EDDY_SORT_BITONIC_MAX, 12, chunks},  // 12 + 14 bits
      {EDDY_SORT_BITONIC_MAX + 1, 12, passes},
      {EDDY_SORT_LOCAL_MAX, 20, {"sort_local"}},  // 20 + 13 bits: no word
      {EDDY_SORT_LOCAL_MAX + 1, 20, passes},
  };
  auto& ctx = test::context();
  for (const Case& c : cases) {
    const size_t n = c.n;
    SCOPED_TRACE("n = " + std::to_string(n) + ", bits = " + std::to_string(c.bits));
    cl::Buffer kb(ctx.context(), CL_MEM_READ_WRITE, n * 4), vb(ctx.context(), CL_MEM_READ_WRITE, n * 4);
    cl::Buffer tk(ctx.context(), CL_MEM_READ_WRITE, n * 4), tv(ctx.context(), CL_MEM_READ_WRITE, n * 4);
    std::vector<cl_uint> keys(n);
    for (size_t i = 0; i < n; ++i) keys[i] = cl_uint((n - i) * 2654435761u);
    ctx.queue().enqueueWriteBuffer(kb, CL_TRUE, 0, n * 4, keys.data());
    ctx.queue().enqueueWriteBuffer(vb, CL_TRUE, 0, n * 4, keys.data());
    RadixSort sorter(ctx);
    Profiler prof;
    sorter.sort(kb, vb, tk, tv, n, c.bits, prof);
    prof.collect(true);
    std::vector<std::string> rows;
    for (const auto& s : prof.stats()) rows.push_back(s.name);
    EXPECT_EQ(rows, c.rows);
    const cl_uint mask = (1u << c.bits) - 1u;
    std::vector<cl_uint> got(n);
    ctx.queue().enqueueReadBuffer(kb, CL_TRUE, 0, n * 4, got.data());
    EXPECT_TRUE(std::is_sorted(got.begin(), got.end(),
                               [&](cl_uint a, cl_uint b) { return (a & mask) < (b & mask); }));
  }
}
