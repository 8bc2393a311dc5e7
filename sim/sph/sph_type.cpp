// sph_type.cpp: the SPH simulation's record in the simulation-type registry
// (sim/core/registry.hpp).
#include "sph_type.hpp"

#include "io.hpp"
#include "registry.hpp"
#include "snapshot.hpp"
#include "sph.hpp"

namespace eddy {

void registerSphType() {
  SimulationType t;
  t.name = "sph";
  t.params = &sphParamDecl;
  t.scenes = [] { return sphSceneNames(); };
  t.defaultCount = 0;  // the count follows from the scene
  t.countParam = "spacing";
  t.countExample = "spacing=0.002";
  t.takesObstacles = true;
  t.appDefault = true;
  t.appScene = "dam_break";
  // The headless demo: a whole dam break (the column collapses, the surge
  // crosses the tank and climbs the far wall) in about a second; on a GPU the
  // app's 6612 particles, on a CPU device (PoCL) 1624 (spacing 4 mm, the
  // default slab's 4 particles deep) so that it ends in well under a minute.
  t.demoUntil = 1.0;
  t.demoCpuSets = {"spacing=0.004", "depth=0.016"};
  t.checkSpec = [](const SceneSpec& spec) {
    if (!spec.icPath.empty()) throw Error("SPH: initial-conditions files are not supported");
    if (spec.n)
      throw Error("SPH: the particle count follows from the scene; set spacing instead of --n");
  };
  t.checkParams = [](const Params& params) { sphCheckParams(params); };
  t.checkScene = [](const SceneSpec& spec, const Params& params) {
    const std::string scene = spec.scene.empty() ? sphSceneNames().front() : spec.scene;
    sphCheckScene(scene, params, spec.obstacles, spec.bodies);
  };
  t.unusedParams = [](const std::string& scene) {
    return sphSceneUnusedParams(scene.empty() ? sphSceneNames().front() : scene);
  };
  t.make = [](Context& ctx, const SceneSpec& spec,
              const Params& params) -> std::unique_ptr<Simulation> {
    const std::string scene = spec.scene.empty() ? sphSceneNames().front() : spec.scene;
    // Count first: a scene too large for the limits is refused before its
    // particles take host memory (spacing=0.0001 would be 52 million).
    auto setup = makeSphScene(scene, params, spec.obstacles, [&](const SphSceneSize& size) {
      SphSim::checkFits(ctx.info(), size.count, size.tank, size.spacing, params);
    });
    addSphBodies(setup, spec.bodies, true, sphBoundaryInset(params, setup.spacing));  // --body, config "bodies"
    return std::make_unique<SphSim>(ctx, params, setup);
  };
  t.load = [](Context& ctx, const Params& params, uint64_t count,
              const Snapshot& snap) -> std::unique_ptr<Simulation> {
    SphState st = decodeSphState(snap, count);
    // The particles' spacing is the parameter's (a rebuild-only parameter:
    // no front end changes it on a running simulation); a snapshot where
    // they differ was edited, and the mass, h and grid would not match.
    if (params.get("spacing") != st.setup.spacing)
      snap.fail("sph/spacing " + formatNumber(st.setup.spacing) + " m is not the parameter spacing (" +
                formatNumber(params.get("spacing")) + " m) the particles were made with");
    SphKernelConfig cfg;
    cfg.capacity = st.capacity;  // the saved headroom (0: from capacity_factor)
    auto sph = std::make_unique<SphSim>(ctx, params, st.setup, cfg);
    sph->restoreState(st);
    return sph;
  };
  t.snapshotInputs = &sphSnapshotMeshFiles;
  registerSimulationType(std::move(t));
}

}  // namespace eddy
