#include "radix_sort.hpp"

#include "eddy_shared.h"

#include <algorithm>
#include <cstdlib>
#include <string>
#include <utility>

namespace eddy {

namespace {

// Developer aid (docs/PERFORMANCE.md), as EDDY_SPH_LANES: EDDY_SORT_LOCAL_MAX=K
// sorts up to K keys in one launch of radix_sort_local where the bitonic
// network does not take them (0 = neither: always the radix passes), to
// measure the thresholds.
size_t localLimitFromEnv() {
  const char* env = std::getenv("EDDY_SORT_LOCAL_MAX");
  if (!env || !*env) return EDDY_SORT_LOCAL_MAX;
  char* end = nullptr;
  const unsigned long long v = std::strtoull(env, &end, 10);
  if (*end || *env == '-' || v > 0xffffffffull)
    throw Error("EDDY_SORT_LOCAL_MAX='" + std::string(env) + "': expected a key count 0..2^32-1");
  return size_t(v);
}

}  // namespace

RadixSort::RadixSort(Context& ctx)
    : ctx_(ctx), program_(ctx.buildProgram("radix_sort.cl")),
      // Developer aid: EDDY_SORT_BITONIC=0 keeps the small sorts on radix_sort_local.
      bitonic_(envSwitch("EDDY_SORT_BITONIC", true)),
      localLimit_(localLimitFromEnv()) {
  if (ctx.info().maxWorkGroup < EDDY_SORT_WG)
    throw Error("radix sort needs work-groups of " + std::to_string(EDDY_SORT_WG) +
                " items; the device allows " + std::to_string(ctx.info().maxWorkGroup));
  // The bitonic network's work-group: the largest power of two up to half a
  // chunk (one compare-exchange per item and step) that the kernel and device
  // allow; smaller groups stride over the words.
  if (ctx.info().localMem >= EDDY_SORT_CHUNK * sizeof(cl_uint)) {
    const size_t most = std::min<size_t>(
        {EDDY_SORT_CHUNK / 2, ctx.info().maxWorkGroup,
         bitonicChunks_.kernel().getWorkGroupInfo<CL_KERNEL_WORK_GROUP_SIZE>(ctx.device())});
    for (bitonicWg_ = 1; bitonicWg_ * 2 <= most;) bitonicWg_ *= 2;
  }
}

bool RadixSort::bitonicFits(size_t n, unsigned bits) const {
  if (!bitonic_ || bitonicWg_ == 0 || n > EDDY_SORT_BITONIC_MAX || localLimit_ == 0) return false;
  return bits + positionBits(n) <= 32;
}

unsigned RadixSort::positionBits(size_t n) {
  unsigned pbits = 0;
  while ((size_t(1) << pbits) < n) ++pbits;
  return pbits;
}

unsigned RadixSort::passes(unsigned bits) { return (bits + EDDY_RADIX_BITS - 1) / EDDY_RADIX_BITS; }

void RadixSort::layout(size_t n, size_t& groups, size_t& chunk) {
  const size_t tiles = std::max<size_t>(1, (n + EDDY_SORT_WG - 1) / EDDY_SORT_WG);
  const size_t tilesPerGroup = (tiles + EDDY_SORT_MAX_GROUPS - 1) / EDDY_SORT_MAX_GROUPS;
  chunk = tilesPerGroup * EDDY_SORT_WG;
  groups = std::max<size_t>(1, (n + chunk - 1) / chunk);
}

void RadixSort::sort(cl::Buffer& keys, cl::Buffer& vals, cl::Buffer& tmpKeys, cl::Buffer& tmpVals,
                     size_t n, unsigned bits, Profiler& prof) {
  if (bits == 0 || bits > 32) throw Error("radix sort: key bits must be 1..32");
  if (n == 0) return;
  if (n > 0xffffffffu) throw Error("radix sort: at most 2^32 - 1 keys");
  const cl_uint mask = bits == 32 ? 0xffffffffu : (cl_uint(1) << bits) - 1u;
  if (bitonicFits(n, bits)) {
    try {
      // One chunk of 2^pbits words (one launch, written straight to the
      // outputs), or chunks of EDDY_SORT_CHUNK merged by rank.
      const unsigned pbits = positionBits(n);
      const unsigned lsize = std::min(pbits, positionBits(EDDY_SORT_CHUNK));
      const size_t chunk = size_t(1) << lsize, chunks = (n + chunk - 1) / chunk;
      if (chunks > 1 && chunks * chunk > chunkWordsCap_) {
        chunkWords_ = ctx_.createBuffer(CL_MEM_READ_WRITE, sizeof(cl_uint) * chunks * chunk, "bitonic sort words");
        chunkWordsCap_ = chunks * chunk;
      }
      const cl::Buffer& words = chunks > 1 ? chunkWords_ : keys;  // not written with one chunk
      const cl::NDRange wg(bitonicWg_);
      prof.run("sort_bitonic", bitonicChunks_, EnqueueArgs(ctx_.launchQueue(), cl::NDRange(chunks * bitonicWg_), wg),
               keys, vals, tmpKeys, tmpVals, words, cl_uint(n), cl_uint(pbits), mask, cl_uint(lsize));
      if (chunks > 1) {
        prof.run("sort_merge", bitonicMerge_,
                 EnqueueArgs(ctx_.launchQueue(), cl::NDRange(roundUp(n, EDDY_SORT_WG)), cl::NDRange(EDDY_SORT_WG)),
                 words, keys, vals,
                 tmpKeys, tmpVals, cl_uint(n), cl_uint(pbits), cl_uint(lsize));
      }
    } catch (const cl::Error& e) {
      throw Error("bitonic sort of " + std::to_string(n) + " keys: " + describe(e));
    }
    std::swap(keys, tmpKeys);  // the result is in the temporaries
    std::swap(vals, tmpVals);
    return;
  }
  if (n <= localLimit_) {
    try {
      const cl::NDRange wg(EDDY_SORT_WG);
      prof.run("sort_local", local_, EnqueueArgs(ctx_.launchQueue(), wg, wg), keys, vals, tmpKeys,
               tmpVals, cl_uint(n), cl_uint(passes(bits)), mask);
    } catch (const cl::Error& e) {
      throw Error("radix sort of " + std::to_string(n) + " keys: " + describe(e));
    }
    if (passes(bits) % 2 == 1) {  // the result is in the temporaries
      std::swap(keys, tmpKeys);
      std::swap(vals, tmpVals);
    }
    return;
  }
  size_t groups = 0, chunk = 0;
  layout(n, groups, chunk);
  try {
    if (groups > histGroups_) {
      hist_ = ctx_.createBuffer(CL_MEM_READ_WRITE, sizeof(cl_uint) * EDDY_RADIX * groups, "radix sort histogram");
      histGroups_ = groups;
    }
    auto& q = ctx_.launchQueue();
    const cl::NDRange wg(EDDY_SORT_WG), global(groups * EDDY_SORT_WG);
    for (unsigned p = 0; p < passes(bits); ++p) {
      const cl_uint shift = p * EDDY_RADIX_BITS;
      prof.run("sort_histogram", histogram_, EnqueueArgs(q, global, wg), keys, hist_, cl_uint(n),
               shift, mask, cl_uint(chunk));
      prof.run("sort_scan", scan_, EnqueueArgs(q, wg, wg), hist_, cl_uint(EDDY_RADIX * groups));
      prof.run("sort_scatter", scatter_, EnqueueArgs(q, global, wg), keys, vals, tmpKeys, tmpVals,
               hist_, cl_uint(n), shift, mask, cl_uint(chunk));
      std::swap(keys, tmpKeys);
      std::swap(vals, tmpVals);
    }
  } catch (const cl::Error& e) {
    throw Error("radix sort of " + std::to_string(n) + " keys: " + describe(e));
  }
}

void RadixSort::sort64(const cl::Buffer& keys, cl::Buffer& perm, cl::Buffer& sortedKeys, size_t n,
                       unsigned bits, Profiler& prof) {
  if (bits == 0 || bits > 64) throw Error("radix sort: 64-bit key bits must be 1..64");
  if (n == 0) return;
  if (n > 0xffffffffu) throw Error("radix sort: at most 2^32 - 1 keys");
  try {
    if (n > wordsCap_) {
      words_ = ctx_.createBuffer(CL_MEM_READ_WRITE, sizeof(cl_uint) * n, "radix sort key words");
      wordsTmp_ = ctx_.createBuffer(CL_MEM_READ_WRITE, sizeof(cl_uint) * n, "radix sort key words");
      permTmp_ = ctx_.createBuffer(CL_MEM_READ_WRITE, sizeof(cl_uint) * n, "radix sort permutation");
      wordsCap_ = n;
    }
    auto& q = ctx_.launchQueue();
    const EnqueueArgs lin(q, cl::NDRange(roundUp(n, EDDY_SORT_WG)), cl::NDRange(EDDY_SORT_WG));
    prof.run("sort_split", split64_, lin, keys, words_, perm, cl_uint(n));
    sort(words_, perm, wordsTmp_, permTmp_, n, std::min(bits, 32u), prof);
    if (bits > 32) {
      prof.run("sort_gather", gatherHi_, lin, keys, perm, words_, cl_uint(n));
      sort(words_, perm, wordsTmp_, permTmp_, n, bits - 32, prof);
    }
    prof.run("sort_gather", gather64_, lin, keys, perm, sortedKeys, cl_uint(n));
  } catch (const cl::Error& e) {
    throw Error("radix sort of " + std::to_string(n) + " 64-bit keys: " + describe(e));
  }
}

}  // namespace eddy
