// nbody_tree.hpp: Barnes-Hut gravity with quadrupoles on the device
// (kernels/nbody_tree.cl): Morton keys, the radix sort, a Karras binary radix
// tree, bottom-up moments, groups of nearby bodies and a group walk, all
// rebuilt every evaluation with no host round trip. A self-contained component: it owns its buffers and
// kernels and is built once per simulation for a fixed number of bodies.
#pragma once

#include "cl.hpp"
#include "profiler.hpp"
#include "radix_sort.hpp"

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace eddy {

class NBodyTree {
 public:
  // For n bodies (>= 1). stackCap = entries of the walk's node stack in local
  // memory (0: EDDY_TREE_STACK, less if the device's local memory is smaller;
  // tests pass small values to exercise the overflow fallback). options: more
  // OpenCL compiler options (the reciprocal square root, NBodySim::rsqrtOptions;
  // -DTREE_W=.., -DTREE_NCRIT=.., -DTREE_NLEAF=.. for experiments). Throws
  // eddy::Error if the device cannot hold the tree or run the kernels.
  NBodyTree(Context& ctx, size_t n, unsigned stackCap = 0, const std::string& options = "");

  // Device bytes the tree needs for n bodies (on top of the simulation's).
  static size_t deviceBytes(size_t n);

  // a_i = G sum (monopole + quadrupole) over the accepted nodes of the tree of
  // the positions pos (float4 x, y, z, m; n of them, input order) with Plummer
  // softening eps2 and opening angle theta (0 < theta <= 1); writes acc[i] =
  // a_i and adds half_dt a_i to vel[i] (as the direct kernel nbody_gravity),
  // both in the input order. Phases: bounds, keys, sort_*, build, moments,
  // groups, walk (one profiler row each). Nothing waits.
  void computeAccelerations(const cl::Buffer& pos, float G, float eps2, float theta,
                            cl::Buffer& vel, cl::Buffer& acc, float halfDt, Profiler& prof);
  // The parts of computeAccelerations (tests inspect the tree in between).
  void build(const cl::Buffer& pos, float theta, Profiler& prof);
  void walk(float G, float eps2, cl::Buffer& vel, cl::Buffer& acc, float halfDt, Profiler& prof);
  // phi_i = -sum_{j != i} m_j / sqrt(r_ij^2 + eps2) (without G, as the direct
  // nbody_potential) from the same walk, for the diagnostics when N is too
  // large for the direct double sum: builds the tree of pos, walks it with
  // the potential build of the walk (compiled on first use; profiler rows of
  // the build and "tree_potential") and returns n floats in the input order.
  // Nothing waits.
  const cl::Buffer& potential(const cl::Buffer& pos, float eps2, float theta, Profiler& prof);

  size_t size() const { return n_; }
  unsigned stackCap() const { return stackCap_; }
  // Work-group size of the walk (from the compiled kernel).
  size_t walkWidth() const { return walkW_; }

  // Everything the last build() made, read back (blocking; tests only).
  struct Host {
    cl_float4 boxMin{}, boxMax{};   // .s[3]: scale (2^21 / side) and side
    std::vector<cl_ulong> keys;     // Morton keys of the input order
    std::vector<cl_ulong> sortedKeys;
    std::vector<cl_uint> perm;      // perm[i] = input index of the i-th body in curve order
    std::vector<cl_float4> spos;    // positions in curve order
    std::vector<cl_int2> children;  // n - 1 internal nodes
    std::vector<cl_uint2> range;    // bodies [first, last] of each internal node
    std::vector<cl_uint> parent;    // 2n - 1 nodes (internal 0..n-2, leaf j = n-1+j)
    std::vector<cl_float4> com, q0, q1, bmin, bmax;  // 2n - 1 nodes
    std::vector<cl_uint> groups;    // the walk's groups (node indices, unordered)
  };
  Host read();
  // Nodes summed body by body because the walk's stack was full (since
  // construction; blocking read).
  uint64_t fallbacks();
  // Groups of the last build (blocking read).
  size_t groupCount();

 private:
  using WalkKernel =
      KernelFunctor<cl::Buffer, cl::Buffer, cl::Buffer, cl::Buffer, cl::Buffer, cl::Buffer,
                        cl::Buffer, cl::Buffer, cl::Buffer, cl::Buffer, cl_uint, cl_float, cl_float,
                        cl_float, cl::Buffer, cl::Buffer, cl::Buffer, cl::Buffer>;
  std::array<cl_uint, 4> readStats();
  void launchWalk(WalkKernel& k, const char* row, float G, float eps2, float halfDt,
                  cl::Buffer& vel, cl::Buffer& acc, cl::Buffer& phi, Profiler& prof);

  Context& ctx_;
  size_t n_;
  unsigned stackCap_;
  std::string options_;
  cl::Program program_;
  RadixSort sort_;
  cl::Buffer partial_, box_, keys_, sortedKeys_, perm_, spos_, children_, range_, parent_,
      counters_, com_, q0_, q1_, bmin_, bmax_, groups_, stats_, phi_;
  size_t walkW_ = 0, walkGroups_ = 0;  // walk: work-group size, persistent work-groups
  KernelFunctor<cl::Buffer, cl_uint, cl::Buffer> bounds_{program_, "tree_bounds"};
  KernelFunctor<cl::Buffer, cl_uint, cl::Buffer, cl_uint, cl::Buffer, cl::Buffer> keysK_{
      program_, "tree_keys"};
  KernelFunctor<cl::Buffer, cl::Buffer, cl::Buffer, cl_uint, cl::Buffer, cl::Buffer,
                    cl::Buffer, cl::Buffer, cl::Buffer, cl::Buffer>
      buildK_{program_, "tree_build"};
  KernelFunctor<cl::Buffer, cl::Buffer, cl::Buffer, cl_uint, cl_float, cl::Buffer, cl::Buffer,
                    cl::Buffer, cl::Buffer, cl::Buffer, cl::Buffer>
      moments_{program_, "tree_moments"};
  KernelFunctor<cl::Buffer, cl::Buffer, cl_uint, cl::Buffer, cl::Buffer> groupsK_{
      program_, "tree_groups"};
  WalkKernel walk_{program_, "tree_walk"};
  // The potential build of the walk (TREE_PHI = 1), made on first use.
  cl::Program phiProgram_;
  std::unique_ptr<WalkKernel> phiWalk_;
};

}  // namespace eddy
