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
// any n; Bitonic: bitonic_sort_local where it fits (else radix_sort_local).
void checkSortPath(size_t n, unsigned bits, unsigned distinct, bool highBitsSet, unsigned seed,
                   SortPath path) {
  const bool local = path != SortPath::Passes;
  SCOPED_TRACE(path == SortPath::Passes       ? "three-kernel passes"
               : path == SortPath::RadixLocal ? "radix_sort_local"
                                              : "bitonic_sort_local");
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
  // One row per kernel phase, one launch of each per pass (one in all, local).
  prof.collect(true);
  ASSERT_EQ(prof.stats().size(), local ? 1u : 3u);
  for (const auto& s : prof.stats()) {
    EXPECT_EQ(s.count, local ? 1u : RadixSort::passes(bits)) << s.name;
    if (local) {
      EXPECT_EQ(s.name, bitonic ? "sort_bitonic" : "sort_local");
    }
  }
}

void checkSort(size_t n, unsigned bits, unsigned distinct, bool highBitsSet, unsigned seed) {
  for (SortPath path : {SortPath::Passes, SortPath::RadixLocal, SortPath::Bitonic})
    checkSortPath(n, bits, distinct, highBitsSet, seed, path);
}

}  // namespace

TEST(RadixSort, MatchesStableSortOnAwkwardSizes) {
  const unsigned seed = test::freshSeed();
  for (size_t n : {size_t(1), size_t(2), size_t(7), size_t(255), size_t(256), size_t(257),
                   size_t(1009), size_t(4099), size_t(8191), size_t(65537)})
    for (unsigned bits : {1u, 4u, 7u, 13u, 19u, 21u})
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

TEST(RadixSort, SmallInputsSortInOneLaunchByDefault) {
  // Up to EDDY_SORT_LOCAL_MAX keys the default is the one-launch path; above
  // it the three-kernel passes.
  auto& ctx = test::context();
  for (size_t n : {size_t(EDDY_SORT_LOCAL_MAX), size_t(EDDY_SORT_LOCAL_MAX) + 1}) {
    cl::Buffer kb(ctx.context(), CL_MEM_READ_WRITE, n * 4), vb(ctx.context(), CL_MEM_READ_WRITE, n * 4);
    cl::Buffer tk(ctx.context(), CL_MEM_READ_WRITE, n * 4), tv(ctx.context(), CL_MEM_READ_WRITE, n * 4);
    std::vector<cl_uint> keys(n);
    for (size_t i = 0; i < n; ++i) keys[i] = cl_uint((n - i) * 2654435761u);
    ctx.queue().enqueueWriteBuffer(kb, CL_TRUE, 0, n * 4, keys.data());
    ctx.queue().enqueueWriteBuffer(vb, CL_TRUE, 0, n * 4, keys.data());
    RadixSort sorter(ctx);
    Profiler prof;
    sorter.sort(kb, vb, tk, tv, n, 12, prof);
    prof.collect(true);
    std::vector<std::string> rows;
    for (const auto& s : prof.stats()) rows.push_back(s.name);
    if (n <= EDDY_SORT_LOCAL_MAX) {
      EXPECT_EQ(rows, std::vector<std::string>{sorter.bitonicFits(n, 12) ? "sort_bitonic" : "sort_local"});
      EXPECT_TRUE(sorter.bitonicFits(n, 12));  // 12 + 13 bits: every device with 32 KiB local memory
    } else {
      EXPECT_EQ(rows.size(), 3u);
    }
    std::vector<cl_uint> got(n);
    ctx.queue().enqueueReadBuffer(kb, CL_TRUE, 0, n * 4, got.data());
    EXPECT_TRUE(std::is_sorted(got.begin(), got.end(), [](cl_uint a, cl_uint b) {
      return (a & 0xfffu) < (b & 0xfffu);
    }));
  }
}
