// solid_edit.cpp: editSphSolids and SphSim's solid hooks (solid_edit.hpp).
#include "solid_edit.hpp"

#include "snapshot.hpp"

#include <algorithm>
#include <numeric>

namespace eddy {

namespace {

bool sameShape(const ShapeSpec& a, const ShapeSpec& b) {
  return a.kind == b.kind && a.size == b.size && a.file == b.file && a.scale == b.scale &&
         a.pose.position == b.pose.position && a.pose.rotationDeg == b.pose.rotationDeg;
}

// The obstacles of `obstacles` that are not among the static solids of `solids`.
std::vector<ShapeSpec> newObstacles(const std::vector<SphSolid>& solids,
                                    const std::vector<ShapeSpec>& obstacles) {
  std::vector<ShapeSpec> fresh;
  for (const ShapeSpec& o : obstacles) {
    bool old = false;
    for (const SphSolid& s : solids) old = old || (s.body < 0 && sameShape(s.spec, o));
    if (!old) fresh.push_back(o);
  }
  return fresh;
}

// Keeps the elements i of `v` with keep[i] (v empty: stays empty).
template <class T>
void keepOnly(std::vector<T>& v, const std::vector<char>& keep) {
  if (v.empty()) return;
  size_t k = 0;
  for (size_t i = 0; i < v.size(); ++i)
    if (keep[i]) v[k++] = v[i];
  v.resize(k);
}

}  // namespace

size_t editSphSolids(SphState& st, const std::vector<ShapeSpec>& obstacles,
                     const std::vector<BodySpec>& addBodies, double clearance, double inset) {
  const size_t n = st.pos.size();
  // The solids that may enclose fluid: obstacles not there before, and the new bodies.
  std::vector<SphSolid> fresh;
  for (const ShapeSpec& o : newObstacles(st.setup.solids, obstacles)) fresh.push_back({o, -1});
  for (const BodySpec& b : addBodies) fresh.push_back({b.shape, 0});
  // Which particles stay (makeShape throws for a bad shape: nothing changed yet).
  std::vector<char> keep(n, 1);
  size_t removed = 0;
  if (!fresh.empty()) {
    // dropInsideSolids keeps the particles outside; each carries its slot in vx.
    std::vector<SphParticle> all(n), kept;
    for (size_t i = 0; i < n; ++i)
      all[i] = SphParticle{st.pos[i].s[0], st.pos[i].s[1], st.pos[i].s[2], double(i), 0, 0};
    dropInsideSolids(fresh, clearance, inset, all, kept);
    std::fill(keep.begin(), keep.end(), 0);
    for (const SphParticle& p : kept) keep[size_t(p.vx)] = 1;
    removed = n - kept.size();
  }
  if (removed == n)
    throw Error("the solids would leave no fluid (all " + std::to_string(n) +
                " particles are inside them)");
  // The solids: obstacles, the old bodies' (in body order), the new bodies'.
  std::vector<SphSolid> solids;
  for (const ShapeSpec& o : obstacles) solids.push_back({o, -1});
  for (const SphSolid& s : st.setup.solids)
    if (s.body >= 0) solids.push_back(s);
  st.setup.solids = std::move(solids);
  // Rebuilt from the files as they are now (an edit, not a restart): their
  // content is not held to the running simulation's.
  st.setup.meshHashes.clear();
  addSphBodies(st.setup, addBodies, false, 0);
  if (removed == 0) return 0;
  // Every per-particle array (slot order), and the ids renumbered 0 .. n'-1.
  keepOnly(st.pos, keep);
  keepOnly(st.vel, keep);
  keepOnly(st.ids, keep);
  keepOnly(st.kdiv, keep);
  keepOnly(st.kden, keep);
  keepOnly(st.rho, keep);
  keepOnly(st.setup.particles, keep);
  std::vector<cl_uint> order(st.ids.size());
  std::iota(order.begin(), order.end(), 0u);
  std::sort(order.begin(), order.end(), [&](cl_uint a, cl_uint b) { return st.ids[a] < st.ids[b]; });
  for (size_t r = 0; r < order.size(); ++r) st.ids[order[r]] = cl_uint(r);
  return removed;
}

const cl::Buffer* SphSim::solidPoints() const {
  return particles_->boundary().size() ? &particles_->boundary().positions() : nullptr;
}

size_t SphSim::solidPointCount() const { return particles_->boundary().size(); }

std::vector<ShapeSpec> SphSim::obstacles() const {
  std::vector<ShapeSpec> v;
  for (const SphSolid& s : solids_)
    if (s.body < 0) v.push_back(s.spec);
  return v;
}

std::unique_ptr<Simulation> SphSim::withSolids(const std::vector<ShapeSpec>& obstacles,
                                               const std::vector<BodySpec>& addBodies) {
  // The solids new to this simulation pass the checks a scene's pass when it
  // is built (inside the tank, a floating body thick enough; throws
  // SolidSpecError): a body dropped from the app's panel or an obstacle moved
  // there, checked when it arrives, not at the next rebuild.
  sphCheckSolids(tank_, spacing_, newObstacles(solids_, obstacles), addBodies);
  // A body dropped in starts clear of the obstacles and the other new
  // bodies (the bodies already moving are where the device has them).
  sphCheckBodyClearance(spacing_, obstacles, addBodies);
  // The exact state, as a restart snapshot holds it (in memory).
  SnapshotWriter w;
  saveState(w);
  SphState st = decodeSphState(Snapshot::parse(w.bytes(), "the running simulation"), n_);
  st.setup.probes = builtinProbes_;
  editSphSolids(st, obstacles, addBodies, 0.5 * spacing_, sphBoundaryInset(params_, spacing_));
  SphKernelConfig cfg = cfg_;
  cfg.capacity = std::max(cap_, st.pos.size());
  auto sim = std::make_unique<SphSim>(ctx_, params_, st.setup, cfg);
  if (sim->bodies()) {
    // The new bodies' records as built (at rest at their pose), the old ones' as they were.
    std::vector<cl_float4> raw = sim->bodies()->kernels().readRaw();
    std::copy(st.bodies.begin(), st.bodies.end(), raw.begin());
    st.bodies = std::move(raw);
  }
  sim->restoreState(st);
  sim->restoreClock(steps_, time_);
  return sim;
}

}  // namespace eddy
