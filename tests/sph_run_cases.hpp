// sph_run_cases.hpp: small SPH runs that a test makes twice, under two
// settings that must not change a bit (command buffers, the counting sort),
// and compares.
#pragma once

#include "factory.hpp"
#include "sph.hpp"
#include "test_util.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <functional>
#include <string>
#include <vector>

namespace eddy::test {

struct SphRunCase {
  const char* scene;
  const char* solver;
  double spacing;
  int steps;
};

// The dam break with both solvers and the wave tank (a moving piston body).
inline std::vector<SphRunCase> sphRunCases(int damSteps, int waveSteps) {
  return {{"dam_break", "dfsph", 0.008, damSteps},
          {"dam_break", "wcsph", 0.008, damSteps},
          {"wave_tank", "dfsph", 0.025, waveSteps}};
}

// Runs the case twice, `setup(sim, run)` before the first step and
// `check(sim, run)` after the last (run 0, then 1), and expects the same
// clock, positions and velocities.
inline void expectSphRunsBitIdentical(const SphRunCase& c, const std::function<void(SphSim&, int)>& setup,
                                      const std::function<void(SphSim&, int)>& check) {
  SCOPED_TRACE(std::string(c.scene) + " " + c.solver);
  SceneSpec spec;
  spec.sim = "sph";
  spec.scene = c.scene;
  Params params(sphParamDecl());
  params.set("spacing", c.spacing);
  if (std::string(c.scene) == "dam_break") params.set("depth", 0.032);
  params.setAssignment(std::string("solver=") + c.solver);
  std::vector<cl_float4> pos[2], vel[2];
  double t[2] = {0, 0};
  for (int run = 0; run < 2; ++run) {
    auto sim = makeSimulation(context(), spec, params);
    auto& s = dynamic_cast<SphSim&>(*sim);
    setup(s, run);
    for (int k = 0; k < c.steps; ++k) s.step();
    t[run] = s.syncTime();
    pos[run] = s.readPositions();
    vel[run] = s.readVelocities();
    check(s, run);
  }
  EXPECT_EQ(t[0], t[1]);
  ASSERT_EQ(pos[0].size(), pos[1].size());
  EXPECT_EQ(std::memcmp(pos[0].data(), pos[1].data(), pos[0].size() * sizeof(cl_float4)), 0);
  EXPECT_EQ(std::memcmp(vel[0].data(), vel[1].data(), vel[0].size() * sizeof(cl_float4)), 0);
}

}  // namespace eddy::test
