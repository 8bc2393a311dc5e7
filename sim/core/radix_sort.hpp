// radix_sort.hpp: stable device radix sort of (uint key, uint value) pairs
// (kernels/radix_sort.cl), used by the SPH grid, and of 64-bit keys with their
// permutation (the N-body tree's Morton keys); never goes through the host.
#pragma once

#include "cl.hpp"
#include "profiler.hpp"

namespace eddy {

class RadixSort {
 public:
  explicit RadixSort(Context& ctx);

  // Sorts the first n pairs of keys/vals stably by the low `bits` key bits
  // (1..32), in ceil(bits / EDDY_RADIX_BITS) passes of histogram, scan and
  // scatter, ping-ponging with tmpKeys/tmpVals (n entries each). On return
  // `keys`/`vals` hold the sorted pairs: after an odd number of passes the
  // handles are swapped with the temporaries (no copy). Launches are recorded
  // in `prof` as sort_histogram, sort_scan, sort_scatter (sort_local for the
  // one-launch path at small n, see setLocalLimit). Nothing waits.
  void sort(cl::Buffer& keys, cl::Buffer& vals, cl::Buffer& tmpKeys, cl::Buffer& tmpVals,
            size_t n, unsigned bits, Profiler& prof);

  // 64-bit keys: sorts keys[0 .. n) (cl_ulong, unchanged) stably by their
  // low `bits` bits (1..64). On return `perm` holds the permutation (perm[i] =
  // the index in `keys` of the i-th smallest key) and `sortedKeys` the keys in
  // that order. The low word is sorted first, then stably the high word (LSD
  // order), by the same 32-bit passes as sort(); two gathers move the words.
  // Scratch buffers are owned here and grown as needed. Launches are recorded
  // as sort(), plus sort_split, sort_gather.
  void sort64(const cl::Buffer& keys, cl::Buffer& perm, cl::Buffer& sortedKeys, size_t n,
              unsigned bits, Profiler& prof);

  // Where bitonicFits(), sort() runs the bitonic network: one launch up to
  // EDDY_SORT_CHUNK keys, else one work-group per chunk and a merge (rows
  // sort_bitonic, sort_merge). Else, up to this many keys, one launch of one
  // work-group (radix_sort_local, row sort_local); default
  // EDDY_SORT_LOCAL_MAX; 0 = neither small path, always the radix passes
  // (tests check every path on any size).
  void setLocalLimit(size_t n) { localLimit_ = n; }

  static unsigned passes(unsigned bits);
  // Bits of a position in n keys: ceil(log2 n) (0 for n <= 1).
  static unsigned positionBits(size_t n);
  // Whether n keys of `bits` sorted bits go through the bitonic network: n
  // within EDDY_SORT_BITONIC_MAX, a local limit above 0, the key bits and the
  // position in one word, and the device's local memory holds a chunk.
  bool bitonicFits(size_t n, unsigned bits) const;
  // Developer aid and tests: false keeps the small-sort path on radix_sort_local.
  void setBitonic(bool on) { bitonic_ = on; }
  // Work-groups and keys per group (a multiple of EDDY_SORT_WG) for n keys.
  static void layout(size_t n, size_t& groups, size_t& chunk);

 private:
  Context& ctx_;
  cl::Program program_;
  cl::Buffer hist_;
  size_t histGroups_ = 0;
  KernelFunctor<cl::Buffer, cl::Buffer, cl_uint, cl_uint, cl_uint, cl_uint> histogram_{
      program_, "radix_histogram"};
  KernelFunctor<cl::Buffer, cl_uint> scan_{program_, "radix_scan"};
  KernelFunctor<cl::Buffer, cl::Buffer, cl::Buffer, cl::Buffer, cl::Buffer, cl_uint, cl_uint,
                    cl_uint, cl_uint>
      scatter_{program_, "radix_scatter"};
  KernelFunctor<cl::Buffer, cl::Buffer, cl::Buffer, cl_uint> split64_{program_,
                                                                          "radix_split64"};
  KernelFunctor<cl::Buffer, cl::Buffer, cl::Buffer, cl_uint> gatherHi_{program_,
                                                                           "radix_gather_hi"};
  KernelFunctor<cl::Buffer, cl::Buffer, cl::Buffer, cl_uint> gather64_{program_,
                                                                           "radix_gather64"};
  KernelFunctor<cl::Buffer, cl::Buffer, cl::Buffer, cl::Buffer, cl_uint, cl_uint, cl_uint>
      local_{program_, "radix_sort_local"};
  KernelFunctor<cl::Buffer, cl::Buffer, cl::Buffer, cl::Buffer, cl::Buffer, cl_uint, cl_uint, cl_uint,
                cl_uint>
      bitonicChunks_{program_, "bitonic_sort_chunks"};
  KernelFunctor<cl::Buffer, cl::Buffer, cl::Buffer, cl::Buffer, cl::Buffer, cl_uint, cl_uint, cl_uint>
      bitonicMerge_{program_, "bitonic_merge_chunks"};
  size_t bitonicWg_ = 0;  // work-group size of bitonic_sort_chunks (0: not usable here)
  cl::Buffer chunkWords_;  // the sorted chunks before their merge
  size_t chunkWordsCap_ = 0;
  bool bitonic_ = true;
  size_t localLimit_;
  cl::Buffer words_, wordsTmp_, permTmp_;  // sort64 scratch, n entries each
  size_t wordsCap_ = 0;
};

}  // namespace eddy
