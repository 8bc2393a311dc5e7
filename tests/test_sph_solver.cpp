// The SPH solver boundary (sim/sph/solver.hpp): a toy solver, gravity only
// and no pressure, built through the SphSolver interface and run by SphSim
// through the same particle pipeline (hash, sort, reorder, cells, neighbour
// list, dt, integrate) as wcsph. Free fall must then follow v = -g t and
// y = y0 - g dt^2 n(n+1)/2 exactly (g and dt are powers of two, so every
// value is exact in float), and the pipeline's neighbour list must be what a
// brute-force search finds.
#include "sph.hpp"
#include "reference/sph_reference.hpp"
#include "test_util.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>

using namespace eddy;

namespace {

class FreeFallSolver : public SphSolver {
 public:
  FreeFallSolver(Context& ctx, SphParticles& p) : ctx_(ctx) {
    rhop_ = ctx.createBuffer(CL_MEM_READ_WRITE, p.capacity() * sizeof(cl_float2), "toy rhop");
    acc_ = ctx.createBuffer(CL_MEM_READ_WRITE, p.capacity() * sizeof(cl_float4), "toy acc");
  }
  std::string name() const override { return "free_fall"; }
  void computeDensity(SphParticles& p, const SphPhysics& phys) override {
    cl_float2 v;
    v.s[0] = float(phys.rho0);
    v.s[1] = 0;
    ctx_.queue().enqueueFillBuffer(rhop_, v, 0, p.size() * sizeof(cl_float2));
  }
  void computeAccelerations(SphParticles& p, const SphPhysics& phys) override {
    ctx_.queue().enqueueFillBuffer(acc_, makeFloat4(0, -phys.gravity, 0, 0), 0,
                                   p.size() * sizeof(cl_float4));
    // The pipeline's neighbour data of this step, as a solver sees it.
    const size_t n = p.size(), cap = p.config().listCapacity;
    positions.resize(n);
    counts.resize(n);
    list.resize(n * EDDY_SPH_LIST_ROUNDUP(cap));
    auto& q = ctx_.queue();
    q.enqueueReadBuffer(p.positions(), CL_TRUE, 0, n * sizeof(cl_float4), positions.data());
    q.enqueueReadBuffer(p.neighbourCounts(), CL_TRUE, 0, n * sizeof(cl_uint), counts.data());
    q.enqueueReadBuffer(p.neighbourList(), CL_TRUE, 0, list.size() * sizeof(cl_uint), list.data());
    listCapacity = cap;
    ++calls;
  }
  const cl::Buffer& densityPressure() const override { return rhop_; }
  const cl::Buffer& accelerations() const override { return acc_; }

  std::vector<cl_float4> positions;
  std::vector<cl_uint> counts, list;
  size_t listCapacity = 0;
  int calls = 0;

 private:
  Context& ctx_;
  cl::Buffer rhop_, acc_;
};

}  // namespace

TEST(SphSolver, ToyFreeFallThroughThePipeline) {
  const unsigned seed = test::freshSeed();
  SCOPED_TRACE("EDDY_TEST_SEED=" + std::to_string(seed));
  std::mt19937 rng(seed);
  // An awkward count (5 x 3 x 7 = 105) of particles on a dyadic lattice,
  // shuffled so that the sort has work to do.
  const double dx = 1.0 / 64;
  SphSetup setup;
  setup.tank = {2, 2, 2};
  setup.spacing = dx;
  for (int i = 0; i < 5; ++i)
    for (int j = 0; j < 3; ++j)
      for (int k = 0; k < 7; ++k)
        setup.particles.push_back({0.5 + i * dx, 1.5 + j * dx, 0.5 + k * dx, 0, 0, 0});
  std::shuffle(setup.particles.begin(), setup.particles.end(), rng);
  const size_t n = setup.particles.size();

  Params params(sphParamDecl());
  params.set("gravity", 8);
  params.set("max_dt", 1.0 / 128);  // the toy sets no maxima: dt = max_dt
  FreeFallSolver* toy = nullptr;
  SphSim sim(test::context(), params, setup, SphKernelConfig{},
             [&](Context& ctx, SphParticles& p, const SphKernelConfig&) {
               auto s = std::make_unique<FreeFallSolver>(ctx, p);
               toy = s.get();
               return s;
             });
  ASSERT_NE(toy, nullptr);
  EXPECT_EQ(sim.solver().name(), "free_fall");

  const int steps = 2 + int(rng() % 31);  // 2 .. 32: the block stays in the air
  for (int s = 0; s < steps; ++s) sim.step();
  EXPECT_EQ(toy->calls, steps);

  const double g = 8, dt = 1.0 / 128, t = steps * dt;
  EXPECT_EQ(sim.syncTime(), t);
  const auto pos = sim.readPositions();
  const auto vel = sim.readVelocities();
  const auto ids = sim.readIds();
  const double drop = g * dt * dt * steps * (steps + 1) / 2;
  for (size_t i = 0; i < n; ++i) {
    const auto& p0 = setup.particles[ids[i]];
    EXPECT_EQ(vel[i].s[0], 0.f);
    EXPECT_EQ(vel[i].s[1], float(-g * t)) << "particle " << ids[i];
    EXPECT_EQ(vel[i].s[2], 0.f);
    EXPECT_EQ(pos[i].s[0], float(p0.x));
    EXPECT_EQ(pos[i].s[1], float(p0.y - drop)) << "particle " << ids[i];
    EXPECT_EQ(pos[i].s[2], float(p0.z));
  }
  EXPECT_EQ(sim.readCounters().escaped, 0u);

  // The neighbour list the toy read in its last step: exactly the particles
  // within h (brute force, the kernels' float test), each once.
  const float h = float(sim.physics().h);
  ASSERT_EQ(toy->positions.size(), n);
  for (size_t i = 0; i < n; ++i) {
    std::vector<cl_uint> want, got;
    for (size_t j = 0; j < n; ++j)
      if (sphIsNeighbour(toy->positions[i], toy->positions[j], h)) want.push_back(cl_uint(j));
    ASSERT_EQ(toy->counts[i], want.size()) << "particle slot " << i;
    for (size_t k = 0; k < toy->counts[i]; ++k) got.push_back(toy->list[EDDY_SPH_LIST_SLOT(k, i, n)]);
    std::sort(got.begin(), got.end());
    EXPECT_EQ(got, want) << "particle slot " << i;
  }
}

TEST(SphSolver, SolverParameterIsAnEnumOfTheRegisteredSolvers) {
  Params params(sphParamDecl());
  const ParamDesc* d = params.find("solver");
  ASSERT_NE(d, nullptr);
  EXPECT_TRUE(d->isEnum());
  EXPECT_EQ(d->choices, sphSolverNames());
  EXPECT_EQ(params.getChoice("solver"), "wcsph");
  params.setAssignment("solver=wcsph");
  EXPECT_EQ(params.getChoice("solver"), "wcsph");
  try {
    params.setAssignment("solver=nope");
    FAIL() << "a bad choice was accepted";
  } catch (const ParamError& e) {
    EXPECT_NE(std::string(e.what()).find("choices: wcsph"), std::string::npos) << e.what();
  }
}
