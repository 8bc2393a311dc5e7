#include "nbody_tree.hpp"

#include "eddy_shared.h"

#include <algorithm>
#include <string>

namespace eddy {

namespace {
// Static local memory of tree_walk (lcom, lq0, lq1, tmin, tmax, scan, direct)
// plus a margin for the implementation's own use.
constexpr size_t kWalkLocalBytes =
    (3 * 2 * EDDY_TREE_WG + 2 * EDDY_TREE_WG) * 16 + 2 * EDDY_TREE_WG * 4 + 1024;

unsigned chooseStack(const DeviceInfo& info, unsigned requested) {
  if (info.localMem < kWalkLocalBytes + 4 * 64)
    throw Error("N-body tree: the device has " + std::to_string(info.localMem) +
                " bytes of local memory; the tree walk needs at least " +
                std::to_string(kWalkLocalBytes + 4 * 64));
  const size_t fit = (info.localMem - kWalkLocalBytes) / sizeof(cl_int);
  const size_t want = requested ? requested : EDDY_TREE_STACK;
  return unsigned(std::min(fit, want));
}
}  // namespace

size_t NBodyTree::deviceBytes(size_t n) {
  const size_t nodes = 2 * n - 1, internal = std::max<size_t>(1, n - 1);
  // keys, sorted keys, permutation, curve-ordered positions, sort scratch (3 words)
  const size_t perBody = 8 + 8 + 4 + 16 + 3 * 4;
  // parent, com, q0, q1, bmin, bmax
  const size_t perNode = 4 + 5 * 16;
  // children, range, counter
  const size_t perInternal = 8 + 8 + 4;
  return n * perBody + nodes * perNode + internal * perInternal;
}

NBodyTree::NBodyTree(Context& ctx, size_t n, unsigned stackCap)
    : ctx_(ctx),
      n_(n),
      stackCap_(chooseStack(ctx.info(), stackCap)),
      program_(ctx.buildProgram("nbody_tree.cl", "-DTREE_STACK=" + std::to_string(stackCap_))),
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
  stats_ = buf(sizeof(cl_uint) * 4, "tree statistics");
  try {
    const cl_uint zero[4] = {0, 0, 0, 0};
    ctx.queue().enqueueWriteBuffer(stats_, CL_TRUE, 0, sizeof zero, zero);
  } catch (const cl::Error& e) {
    throw Error("N-body tree setup: " + describe(e));
  }
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
    prof.record("bounds", bounds_(cl::EnqueueArgs(q, cl::NDRange(groups * EDDY_TREE_BOUNDS_WG), bwg),
                                  pos, n, partial_));
    const cl::NDRange lin(roundUp(n_, EDDY_TREE_BOUNDS_WG));
    prof.record("keys", keysK_(cl::EnqueueArgs(q, lin, bwg), pos, n, partial_, cl_uint(groups),
                               keys_, box_));
    sort_.sort64(keys_, perm_, sortedKeys_, n_, EDDY_TREE_KEY_BITS, prof);
    const cl::NDRange lwg(EDDY_LINEAR_WG), lglob(roundUp(n_, EDDY_LINEAR_WG));
    prof.record("build", buildK_(cl::EnqueueArgs(q, lglob, lwg), sortedKeys_, perm_, pos, n, spos_,
                                 children_, range_, parent_, counters_));
    prof.record("moments", moments_(cl::EnqueueArgs(q, lglob, lwg), spos_, parent_, children_, n,
                                    1.0f / (theta * theta), com_, q0_, q1_, bmin_, bmax_,
                                    counters_));
  } catch (const cl::Error& e) {
    throw Error("N-body tree build: " + describe(e));
  }
}

void NBodyTree::walk(float G, float eps2, cl::Buffer& vel, cl::Buffer& acc, float halfDt,
                     Profiler& prof) {
  try {
    const size_t groups = (n_ + EDDY_TREE_WG - 1) / EDDY_TREE_WG;
    prof.record("walk", walk_(cl::EnqueueArgs(ctx_.queue(), cl::NDRange(groups * EDDY_TREE_WG),
                                              cl::NDRange(EDDY_TREE_WG)),
                              spos_, perm_, children_, range_, com_, q0_, q1_, cl_uint(n_), G, eps2,
                              halfDt, vel, acc, stats_));
  } catch (const cl::Error& e) {
    throw Error("N-body tree walk: " + describe(e));
  }
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
  } catch (const cl::Error& e) {
    throw Error("N-body tree read-back: " + describe(e));
  }
  return h;
}

uint64_t NBodyTree::fallbacks() {
  cl_uint v[4] = {0, 0, 0, 0};
  try {
    ctx_.queue().enqueueReadBuffer(stats_, CL_TRUE, 0, sizeof v, v);
  } catch (const cl::Error& e) {
    throw Error("N-body tree read-back: " + describe(e));
  }
  return v[0];
}

}  // namespace eddy
