#include "wcsph_continuity.hpp"

#include <algorithm>
#include <limits>

namespace eddy {

WcsphContinuity::WcsphContinuity(Context& ctx, const cl::Program& program, size_t capacity)
    : ctx_(ctx),
      cap_(std::max<size_t>(capacity, 1)),
      continuity_(program, "sph_continuity"),
      reorder_(program, "sph_continuity_reorder") {
  const size_t f = cap_ * sizeof(cl_float);
  for (auto& b : rho_) b = ctx.createBuffer(CL_MEM_READ_WRITE, f, "WCSPH carried density");
  drho_ = ctx.createBuffer(CL_MEM_READ_WRITE, f, "WCSPH density rate");
}

// rho[next][i] = rho[cur][order[i]] for order[i] < firstNew, else the
// summation density in rhop (raised to rho0, capped at phys.startDensityCap); cur = next.
void WcsphContinuity::carry(SphParticles& p, const cl::Buffer& rhop, size_t firstNew,
                            const SphPhysics& phys) {
  const int next = 1 - cur_;
  const SphContinuityReorderArgs a{.order = p.order(),
                                   .rhoIn = rho_[cur_],
                                   .rhop = rhop,
                                   .rhoOut = rho_[next],
                                   .n = p.count(),
                                   .firstNew = cl_uint(firstNew),
                                   .rho0 = cl_float(phys.rho0),
                                   // only where solids are (without them the summation
                                   // start is consistent with the positions, a jittered
                                   // lattice included)
                                   .rhoMax = p.boundary().view().count > 0
                                                 ? cl_float(phys.startDensityCap)
                                                 : std::numeric_limits<cl_float>::max()};
  try {
    p.profiler().launch("continuity_reorder", reorder_, p.launch(), a);
  } catch (const cl::Error& e) {
    throw Error("WCSPH continuity reorder kernel: " + describe(e));
  }
  cur_ = next;
  if (firstNew == 0) pending_ = false;  // all afresh: nothing to advance
  carried_ = p.size();
}

void WcsphContinuity::reorder(SphParticles& p, const cl::Buffer& rhop, const SphPhysics& phys,
                              const std::function<void()>& summation) {
  if (carried_ == 0) return;  // nothing carried: prepare() starts afresh
  if (carried_ < p.size()) summation();  // new particles start from it
  carry(p, rhop, std::min(carried_, p.size()), phys);
}

void WcsphContinuity::prepare(SphParticles& p, const cl::Buffer& rhop, const SphPhysics& phys,
                              const std::function<void()>& summation) {
  if (carried_ == p.size()) return;
  summation();
  carry(p, rhop, 0, phys);
}

void WcsphContinuity::continuity(SphParticles& p, const SphPhysics& phys, const cl::Buffer& rhop) {
  const int next = 1 - cur_;
  const SphBoundaryView bv = p.boundary().view();
  const SphContinuityArgs a{.pos = p.positions(),
                            .vel = p.velocities(),
                            .rho = rho_[cur_],
                            .cells = p.cells(),
                            .nlist = p.neighbourList(),
                            .nbcount = p.neighbourCounts(),
                            .counters = p.counters(),
                            .rhop = rhop,
                            .drho = drho_,
                            .rhoOut = rho_[next],
                            .clock = p.clock(),
                            .bpos = *bv.pos,
                            .bvel = *bv.vel,
                            .bcells = *bv.cells,
                            .nbound = bv.count,
                            .n = p.count(),
                            .dims = p.dims4(),
                            .invCell = p.invCell(),
                            .tank = p.tank4(),
                            .h = cl_float(phys.h),
                            .mass = cl_float(phys.mass),
                            .rho0 = cl_float(phys.rho0),
                            .B = cl_float(phys.B),
                            .c0 = cl_float(phys.c0),
                            .delta = cl_float(phys.densityDiffusion),
                            .gravity = cl_float(phys.gravity),
                            .advance = cl_uint(pending_ ? 1 : 0),
                            .listCap = p.listCapacity(),
                            .countOverflow = 1,
                            .buildList = cl_uint(p.fuseList() ? 1 : 0),
                            .laneBits = p.laneBits()};
  try {
    p.profiler().launch("continuity", continuity_, p.laneLaunch(), a);
  } catch (const cl::Error& e) {
    throw Error("WCSPH continuity kernel: " + describe(e));
  }
  cur_ = next;
  pending_ = false;
}

std::vector<cl_float> WcsphContinuity::read(size_t n) {
  std::vector<cl_float> out(carried_ == n ? n : 0);
  if (!out.empty())
    ctx_.queue().enqueueReadBuffer(rho_[cur_], CL_TRUE, 0, n * sizeof(cl_float), out.data());
  return out;
}

std::vector<cl_float> WcsphContinuity::readRate(size_t n) {
  std::vector<cl_float> out(std::min(n, cap_));
  if (!out.empty())
    ctx_.queue().enqueueReadBuffer(drho_, CL_TRUE, 0, out.size() * sizeof(cl_float), out.data());
  return out;
}

void WcsphContinuity::write(const std::vector<cl_float>& rho, size_t n, bool pending) {
  if (rho.size() != n || n == 0 || n > cap_) {
    carried_ = 0;
    pending_ = false;
    return;
  }
  ctx_.queue().enqueueWriteBuffer(rho_[cur_], CL_TRUE, 0, n * sizeof(cl_float), rho.data());
  carried_ = n;
  pending_ = pending;
}

}  // namespace eddy
