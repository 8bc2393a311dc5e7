// Device radix sort (kernels/radix_sort.cl) against std::stable_sort: the
// sorted keys, the permutation (values = original index) and hence stability.
#include "radix_sort.hpp"
#include "test_util.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <random>

using namespace eddy;

namespace {

// Sorts n random keys (bits wide, or with `distinct` different values to make
// many ties) on the device; checks against a stable CPU sort of (key & mask).
void checkSort(size_t n, unsigned bits, unsigned distinct, bool highBitsSet, unsigned seed) {
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
  // One row per kernel phase, one launch of each per pass.
  prof.collect(true);
  for (const auto& s : prof.stats()) EXPECT_EQ(s.count, RadixSort::passes(bits)) << s.name;
}

}  // namespace

TEST(RadixSort, MatchesStableSortOnAwkwardSizes) {
  const unsigned seed = test::freshSeed();
  for (size_t n : {size_t(1), size_t(2), size_t(7), size_t(255), size_t(256), size_t(257),
                   size_t(1009), size_t(4099), size_t(65537)})
    for (unsigned bits : {1u, 4u, 7u, 13u, 21u})
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
}

TEST(RadixSort, LargeInputUsesManyGroupsAndTiles) {
  // > EDDY_SORT_MAX_GROUPS * EDDY_SORT_WG keys: each group walks several tiles.
  checkSort(300007, 20, 0, false, test::freshSeed());
}
