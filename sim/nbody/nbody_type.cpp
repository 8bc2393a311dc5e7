// nbody_type.cpp: the N-body simulation's record in the simulation-type
// registry (sim/core/registry.hpp).
#include "nbody_type.hpp"

#include "nbody.hpp"
#include "nbody_multi.hpp"
#include "registry.hpp"

namespace eddy {

namespace {
constexpr size_t kDefaultBodies = 16384;

std::vector<Body> bodiesOf(const SceneSpec& spec, const Params& params) {
  const size_t n = spec.n ? spec.n : kDefaultBodies;
  return spec.icPath.empty()
             ? makeNBodyScene(spec.scene.empty() ? nbodySceneNames().front() : spec.scene, n,
                              uint64_t(params.getInt("seed")))
             : readBodiesCsv(spec.icPath);
}
// The device's kernel layout for n bodies with the declared force method.
NBodyKernelConfig configFor(const Context& ctx, size_t n, const Params& params) {
  NBodyKernelConfig cfg = NBodyKernelConfig::automatic(ctx.info(), n);
  cfg.method = NBodyMethod(params.getInt("method"));  // declared in the same order
  return cfg;
}

void refuseTreeOnSeveralDevices(const Params& params) {
  if (NBodyMethod(params.getInt("method")) == NBodyMethod::Tree)
    throw Error("method = tree runs on one device; the multi-device N-body (--devices) is "
                "direct only: use --device, or method = direct / auto (auto uses direct there)");
}
}  // namespace

void registerNBodyType() {
  SimulationType t;
  t.name = "nbody";
  t.params = &nbodyParamDecl;
  t.scenes = [] { return nbodySceneNames(); };
  t.defaultCount = kDefaultBodies;
  t.takesIcFile = true;
  t.appCpuCount = 2048;  // a CPU device draws a smooth picture with this many
  t.demoCount = 4096;
  t.appGlow = true;
  t.checkSpec = [](const SceneSpec& spec) {
    if (!spec.bodies.empty()) throw Error("N-body: rigid bodies (--body) need --sim sph");
  };
  t.make = [](Context& ctx, const SceneSpec& spec, const Params& params)
      -> std::unique_ptr<Simulation> {
    if (spec.icPath.empty())  // before building the scene
      NBodySim::checkFits(ctx.info(), spec.n ? spec.n : kDefaultBodies);
    const std::vector<Body> bodies = bodiesOf(spec, params);
    return std::make_unique<NBodySim>(ctx, params, bodies, configFor(ctx, bodies.size(), params));
  };
  t.makeMulti = [](const std::vector<Context*>& devices, const SceneSpec& spec,
                   const Params& params,
                   const MultiNBodyOptions& opts) -> std::unique_ptr<Simulation> {
    refuseTreeOnSeveralDevices(params);
    if (spec.icPath.empty()) checkMultiNBodyMemory(devices, spec.n ? spec.n : kDefaultBodies);
    return std::make_unique<MultiNBodySim>(devices, params, bodiesOf(spec, params), opts);
  };
  t.load = [](Context& ctx, const Params& params, uint64_t count,
              const Snapshot& snap) -> std::unique_ptr<Simulation> {
    NBodySim::checkFits(ctx.info(), count);
    // The layout a new run of this size picks on this device (and the method
    // as declared): the summation order of the run that was saved, so that
    // the restart is bit-identical on a GPU too (the default 256 x 1 layout
    // a restore used before summed in another order there: PoCL, where the
    // automatic layout is that default, could not tell).
    return std::make_unique<NBodySim>(ctx, params, decodeNBodyState(snap, count),
                                      configFor(ctx, size_t(count), params));
  };
  registerSimulationType(std::move(t));
}

}  // namespace eddy
