#include "nbody_tree.hpp"

#include "eddy_shared.h"

#include <algorithm>
#include <array>
#include <string>

namespace eddy {

namespace {
// Local memory of tree_walk without its stack (clist, blist, scan, tile,
// direct, next; kernels/nbody/nbody_tree.cl) at the default sizes, plus a
// margin for the implementation's own use.
constexpr size_t kWalkLocalBytes = 2 * EDDY_TREE_W * 4 + EDDY_TREE_W * (EDDY_TREE_NLEAF + 1) * 4 +
                                   2 * EDDY_TREE_W * 8 + 3 * EDDY_TREE_W * 16 + EDDY_TREE_W * 4 +
                                   4 + 1024;

unsigned chooseStack(const DeviceInfo& info, unsigned requested) {
  if (info.localMem < kWalkLocalBytes + 4 * 2 * EDDY_TREE_W)
    throw Error("N-body tree: the device has " + std::to_string(info.localMem) +
                " bytes of local memory; the tree walk needs at least " +
                std::to_string(kWalkLocalBytes + 4 * 2 * EDDY_TREE_W));
  const size_t fit = (info.localMem - kWalkLocalBytes) / sizeof(cl_int);
  const size_t want = requested ? requested : EDDY_TREE_STACK;
  return unsigned(std::min(fit, want));
}
}  // namespace

size_t NBodyTree::deviceBytes(size_t n) {
  const size_t nodes = 2 * n - 1, internal = std::max<size_t>(1, n - 1);
  // keys, sorted keys, permutation, curve-ordered positions, sort scratch (3
  // words), groups, potential
  const size_t perBody = 8 + 8 + 4 + 16 + 3 * 4 + 4 + 4;
  // parent, com, q0, q1, bmin, bmax
  const size_t perNode = 4 + 5 * 16;
  // children, range, counter
  const size_t perInternal = 8 + 8 + 4;
  return n * perBody + nodes * perNode + internal * perInternal;
}

NBodyTree::NBodyTree(Context& ctx, size_t n, unsigned stackCap, const std::string& options)
    : ctx_(ctx),
      n_(n),
      stackCap_(chooseStack(ctx.info(), stackCap)),
      options_("-DTREE_STACK=" + std::to_string(stackCap_) + " " + options),
      program_(ctx.buildProgram(std::vector<std::string>{"nbody_common.cl", "nbody_tree.cl"}, options_)),
      sort_(ctx) {
  if (n == 0) throw Error("N-body tree: no bodies");
  if (n > 0x7fffffffu) throw Error("N-body tree: at most 2^31 - 1 bodies");
  if (ctx.info().maxWorkGroup < EDDY_TREE_BOUNDS_WG)
    throw Error("N-body tree: needs work-groups of " + std::to_string(EDDY_TREE_BOUNDS_WG) +
                " items; the device allows " + std::to_string(ctx.info().maxWorkGroup));
  const size_t nodes = 2 * n - 1, internal = std::max<size_t>(1, n - 1);
  auto buf = [&](size_t bytes, const char* what) {
    return ctx.createBuffer(CL_MEM_READ_WRITE, bytes, what);
  };
  partial_ = buf(2 * EDDY_TREE_BOUNDS_GROUPS * sizeof(cl_float4), "tree partial boxes");
  box_ = buf(2 * sizeof(cl_float4), "tree box");
  keys_ = buf(n * sizeof(cl_ulong), "tree keys");
  sortedKeys_ = buf(n * sizeof(cl_ulong), "tree sorted keys");
  perm_ = buf(n * sizeof(cl_uint), "tree permutation");
  spos_ = buf(n * sizeof(cl_float4), "tree positions in curve order");
  children_ = buf(internal * sizeof(cl_int2), "tree children");
  range_ = buf(internal * sizeof(cl_uint2), "tree ranges");
  counters_ = buf(internal * sizeof(cl_uint), "tree counters");
  parent_ = buf(nodes * sizeof(cl_uint), "tree parents");
  com_ = buf(nodes * sizeof(cl_float4), "tree centres of mass");
  q0_ = buf(nodes * sizeof(cl_float4), "tree quadrupoles");
  q1_ = buf(nodes * sizeof(cl_float4), "tree quadrupoles");
  bmin_ = buf(nodes * sizeof(cl_float4), "tree bounds");
  bmax_ = buf(nodes * sizeof(cl_float4), "tree bounds");
  groups_ = buf(n * sizeof(cl_uint), "tree groups");
  // [0] nodes summed body by body (since construction), [1] groups of the
  // last build, [2] the walk's queue head
  stats_ = buf(sizeof(cl_uint) * 4, "tree statistics");
  try {
    const cl_uint zero[4] = {0, 0, 0, 0};
    ctx.queue().enqueueWriteBuffer(stats_, CL_TRUE, 0, sizeof zero, zero);
    // The walk's work-group size is compiled in (reqd_work_group_size).
    const auto wg = walk_.getKernel().getWorkGroupInfo<CL_KERNEL_COMPILE_WORK_GROUP_SIZE>(
        ctx.device());
    walkW_ = wg[0];
  } catch (const cl::Error& e) {
    throw Error("N-body tree setup: " + describe(e));
  }
  if (walkW_ == 0 || walkW_ > ctx.info().maxWorkGroup)
    throw Error("N-body tree: the walk needs work-groups of " + std::to_string(walkW_) +
                " items; the device allows " + std::to_string(ctx.info().maxWorkGroup));
  // Persistent work-groups that take the groups from a queue: enough to fill
  // every compute unit (the surplus finds the queue empty and ends at once).
  const size_t perUnit = (ctx.info().type & CL_DEVICE_TYPE_GPU) ? 32 : 4;
  walkGroups_ = std::max<size_t>(1, std::min(n, size_t(ctx.info().computeUnits) * perUnit));
}

void NBodyTree::build(const cl::Buffer& pos, float theta, Profiler& prof) {
  if (!(theta > 0.0f && theta <= 1.0f))
    throw Error("N-body tree: theta must be in (0, 1], got " + std::to_string(theta));
  const cl_uint n = cl_uint(n_);
  try {
    auto& q = ctx_.queue();
    const size_t groups =
        std::min<size_t>(EDDY_TREE_BOUNDS_GROUPS,
                         (n_ + EDDY_TREE_BOUNDS_WG - 1) / EDDY_TREE_BOUNDS_WG);
    const cl::NDRange bwg(EDDY_TREE_BOUNDS_WG);
    prof.record("bounds", bounds_(EnqueueArgs(q, cl::NDRange(groups * EDDY_TREE_BOUNDS_WG), bwg),
                                  pos, n, partial_));
    const cl::NDRange lin(roundUp(n_, EDDY_TREE_BOUNDS_WG));
    prof.record("keys", keysK_(EnqueueArgs(q, lin, bwg), pos, n, partial_, cl_uint(groups),
                               keys_, box_));
    sort_.sort64(keys_, perm_, sortedKeys_, n_, EDDY_TREE_KEY_BITS, prof);
    const cl::NDRange lwg(EDDY_LINEAR_WG), lglob(roundUp(n_, EDDY_LINEAR_WG));
    prof.record("build", buildK_(EnqueueArgs(q, lglob, lwg), sortedKeys_, perm_, pos, n, spos_,
                                 children_, range_, parent_, counters_, stats_));
    prof.record("moments", moments_(EnqueueArgs(q, lglob, lwg), spos_, parent_, children_, n,
                                    1.0f / (theta * theta), com_, q0_, q1_, bmin_, bmax_,
                                    counters_));
    const cl::NDRange nglob(roundUp(2 * n_ - 1, EDDY_LINEAR_WG));
    prof.record("groups", groupsK_(EnqueueArgs(q, nglob, lwg), range_, parent_, n, groups_,
                                   stats_));
  } catch (const cl::Error& e) {
    throw Error("N-body tree build: " + describe(e));
  }
}

void NBodyTree::launchWalk(WalkKernel& k, const char* row, float G, float eps2, float halfDt,
                           cl::Buffer& vel, cl::Buffer& acc, cl::Buffer& phi, Profiler& prof) {
  try {
    prof.record(row, k(EnqueueArgs(ctx_.queue(), cl::NDRange(walkGroups_ * walkW_),
                                       cl::NDRange(walkW_)),
                       spos_, perm_, children_, range_, com_, q0_, q1_, bmin_, bmax_, groups_,
                       cl_uint(n_), G, eps2, halfDt, vel, acc, phi, stats_));
  } catch (const cl::Error& e) {
    throw Error(std::string("N-body tree ") + row + ": " + describe(e));
  }
}

void NBodyTree::walk(float G, float eps2, cl::Buffer& vel, cl::Buffer& acc, float halfDt,
                     Profiler& prof) {
  // The force build never touches phi: any buffer will do.
  launchWalk(walk_, "walk", G, eps2, halfDt, vel, acc, stats_, prof);
}

const cl::Buffer& NBodyTree::potential(const cl::Buffer& pos, float eps2, float theta,
                                       Profiler& prof) {
  if (!phiWalk_) {
    phiProgram_ = ctx_.buildProgram(std::vector<std::string>{"nbody_common.cl", "nbody_tree.cl"},
                                    options_ + " -DTREE_PHI=1");
    phi_ = ctx_.createBuffer(CL_MEM_READ_WRITE, n_ * sizeof(cl_float), "tree potential");
    phiWalk_ = std::make_unique<WalkKernel>(phiProgram_, "tree_walk");
  }
  build(pos, theta, prof);
  // The potential build never touches vel and acc: any buffers will do.
  launchWalk(*phiWalk_, "tree_potential", 1.0f, eps2, 0.0f, spos_, spos_, phi_, prof);
  return phi_;
}

void NBodyTree::computeAccelerations(const cl::Buffer& pos, float G, float eps2, float theta,
                                     cl::Buffer& vel, cl::Buffer& acc, float halfDt,
                                     Profiler& prof) {
  build(pos, theta, prof);
  walk(G, eps2, vel, acc, halfDt, prof);
}

NBodyTree::Host NBodyTree::read() {
  Host h;
  const size_t n = n_, nodes = 2 * n - 1, internal = n - 1;
  try {
    auto& q = ctx_.queue();
    auto get = [&](const cl::Buffer& b, auto& v, size_t count) {
      v.resize(count);
      if (count) q.enqueueReadBuffer(b, CL_TRUE, 0, count * sizeof(v[0]), v.data());
    };
    cl_float4 box[2];
    q.enqueueReadBuffer(box_, CL_TRUE, 0, sizeof box, box);
    h.boxMin = box[0];
    h.boxMax = box[1];
    get(keys_, h.keys, n);
    get(sortedKeys_, h.sortedKeys, n);
    get(perm_, h.perm, n);
    get(spos_, h.spos, n);
    get(children_, h.children, internal);
    get(range_, h.range, internal);
    get(parent_, h.parent, nodes);
    get(com_, h.com, nodes);
    get(q0_, h.q0, nodes);
    get(q1_, h.q1, nodes);
    get(bmin_, h.bmin, nodes);
    get(bmax_, h.bmax, nodes);
    cl_uint stats[4];
    q.enqueueReadBuffer(stats_, CL_TRUE, 0, sizeof stats, stats);
    get(groups_, h.groups, std::min<size_t>(stats[1], n));
  } catch (const cl::Error& e) {
    throw Error("N-body tree read-back: " + describe(e));
  }
  return h;
}

std::array<cl_uint, 4> NBodyTree::readStats() {
  std::array<cl_uint, 4> v{};
  try {
    ctx_.queue().enqueueReadBuffer(stats_, CL_TRUE, 0, sizeof(cl_uint) * v.size(), v.data());
  } catch (const cl::Error& e) {
    throw Error("N-body tree read-back: " + describe(e));
  }
  return v;
}

uint64_t NBodyTree::fallbacks() { return readStats()[0]; }

size_t NBodyTree::groupCount() { return readStats()[1]; }

}  // namespace eddy
