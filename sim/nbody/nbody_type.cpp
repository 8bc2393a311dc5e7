// nbody_type.cpp: the N-body simulation's record in the simulation-type
// registry (sim/core/registry.hpp).
#include "nbody_type.hpp"

#include "nbody.hpp"
#include "nbody_multi.hpp"
#include "number_text.hpp"
#include "registry.hpp"

#include <limits>

namespace eddy {

namespace {
constexpr size_t kDefaultBodies = 16384;

std::vector<Body> bodiesOf(const SceneSpec& spec, const Params& params) {
  const size_t n = spec.n ? spec.n : kDefaultBodies;
  return spec.icPath.empty()
             ? makeNBodyScene(spec.scene.empty() ? nbodySceneNames().front() : spec.scene, n,
                              uint64_t(params.getInt("seed")), params.get("G"))
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
  // G in float (the kernels' precision): a G that is 0 there, or subnormal,
  // gave no gravity or forces off by up to 100 % (1e-50: every acceleration
  // 0, the run quietly one without gravity).
  t.checkParams = [](const Params& params) {
    const double G = params.get("G");
    const double least = double(std::numeric_limits<float>::min());
    if (G > 0 && !(G >= least))
      throw Error("G = " + formatNumber(G) + " is below single precision's normal range (" +
                  formatSignificant(least, 3) +
                  "; the forces are computed in float, where it would be 0 or lose its digits): give "
                  "G = 0 for no gravity, or a G of at least " + formatSignificant(least, 3));
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
