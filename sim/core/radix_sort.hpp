// radix_sort.hpp: stable device radix sort of (uint key, uint value) pairs
// (kernels/radix_sort.cl), used by the SPH grid; never goes through the host.
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
  // in `prof` as sort_histogram, sort_scan, sort_scatter. Nothing waits.
  void sort(cl::Buffer& keys, cl::Buffer& vals, cl::Buffer& tmpKeys, cl::Buffer& tmpVals,
            size_t n, unsigned bits, Profiler& prof);

  static unsigned passes(unsigned bits);
  // Work-groups and keys per group (a multiple of EDDY_SORT_WG) for n keys.
  static void layout(size_t n, size_t& groups, size_t& chunk);

 private:
  Context& ctx_;
  cl::Program program_;
  cl::Buffer hist_;
  size_t histGroups_ = 0;
  cl::KernelFunctor<cl::Buffer, cl::Buffer, cl_uint, cl_uint, cl_uint, cl_uint> histogram_{
      program_, "radix_histogram"};
  cl::KernelFunctor<cl::Buffer, cl_uint> scan_{program_, "radix_scan"};
  cl::KernelFunctor<cl::Buffer, cl::Buffer, cl::Buffer, cl::Buffer, cl::Buffer, cl_uint, cl_uint,
                    cl_uint, cl_uint>
      scatter_{program_, "radix_scatter"};
};

}  // namespace eddy
