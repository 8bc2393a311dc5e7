// bodies.hpp: rigid bodies in the SPH fluid (issue 12), kinematic and
// floating 6-DOF, on the device.
//
// A body's surface is a contiguous range of Akinci boundary particles (the
// boundary owns bpos/bvel/blocal/bforce, sim/sph/boundary.hpp); the bodies'
// ranges follow each other in body order. BodyKernels owns the bodies' state
// (EDDY_BODY_STRIDE float4 per body, layout in kernels/common/eddy_shared.h)
// and enqueues, per step, four phases of kernels/sph/sph_bodies.cl (one
// kernel and one profiler row each; nothing waits on the device):
//   body_reduce            F, T of the fluid on each body (+ gravity)
//   body_integrate         floating: semi-implicit Euler; kinematic: motion law
//   body_contact           tank walls and other bodies (correction + impulse)
//   body_update_particles  bpos/bvel of the bodies' boundary particles
// It works on any buffers, so its tests drive it without a fluid.
// Design: docs/ARCHITECTURE.md ("Rigid bodies").
#pragma once

#include "body_spec.hpp"
#include "cl.hpp"
#include "kernel_args.hpp"
#include "particles.hpp"
#include "profiler.hpp"

#include "eddy_shared.h"

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace eddy {

using BodyVec = std::array<double, 3>;
using BodyMat = std::array<double, 9>;   // row-major
using BodyQuat = std::array<double, 4>;  // (x, y, z, w), local -> world

// One body as the device holds it, in double (sim/sph/bodies.cpp encodes it).
struct RigidBody {
  BodyMotion motion = BodyMotion::Floating;
  unsigned shape = EDDY_BODY_SHAPE_OTHER;  // EDDY_BODY_SHAPE_*: body-body contact
  BodyVec shapeSize{0, 0, 0};  // box: half extents; sphere: radius; cylinder: radius, half height
  double mass = 1;
  BodyMat inertia{1, 0, 0, 0, 1, 0, 0, 0, 1};  // about the centroid, local axes (kg m^2)
  BodyVec centroidLocal{0, 0, 0};  // centroid in the frame of blocal (the shape's)
  double radius = 0;               // bounding radius of the boundary particles about the centroid
  BodyVec position{0, 0, 0};       // centroid, world
  BodyQuat orientation{0, 0, 0, 1};
  BodyVec velocity{0, 0, 0}, omega{0, 0, 0};
  PistonLaw piston;
  RotateLaw rotate;
  uint32_t first = 0, count = 0;  // boundary particles [first, first + count)
};

// A body's state read back from the device (double from the float state).
struct BodyState {
  BodyVec position{}, velocity{}, omega{}, angularMomentum{}, force{}, torque{};
  BodyQuat orientation{0, 0, 0, 1};
};

// ---- Host maths (double), shared with the tests' references ----------------
BodyQuat bodyQuatFromMatrix(const BodyMat& r);
BodyMat bodyMatrixFromQuat(const BodyQuat& q);
BodyQuat bodyQuatMul(const BodyQuat& a, const BodyQuat& b);
BodyVec bodyRotate(const BodyQuat& q, const BodyVec& v);
BodyQuat bodyAxisAngle(const BodyVec& unitAxis, double angle);
// Inverse of a symmetric positive definite 3x3; throws eddy::Error naming
// `what` when it is not.
BodyMat bodyInverseInertia(const BodyMat& inertia, const std::string& what);
// The kinematic pose at time t: centroid, orientation, velocity, omega.
struct BodyPose {
  BodyVec position{}, velocity{}, omega{};
  BodyQuat orientation{0, 0, 0, 1};
};
BodyPose bodyKinematicPose(const RigidBody& b, double t);

// Checks a body (mass > 0, inertia positive definite, a piston's period > 0,
// axes non-zero, finite values) and normalises its axes and orientation;
// throws eddy::Error naming body `index`.
RigidBody checkedBody(RigidBody b, size_t index);

// The body a spec declares, with its boundary particles `local` (the shape's
// frame, Shape::sample) at [first, first + local.size()) of the boundary:
// mass from the density or the mass (bodyMass), inertia and centroid from
// the shape, the pose from the spec, the bounding radius from the samples,
// the analytic contact shape of a box, sphere or cylinder.
RigidBody rigidBodyFromSpec(const BodySpec& spec, const Shape& shape,
                            const std::vector<Vec3d>& local, uint32_t first);

// The device record of a body (EDDY_BODY_STRIDE float4) and its info
// (first, count, motion, shape). Kinematic bodies start at their pose at t0.
std::vector<cl_float4> encodeBody(const RigidBody& b, double t0 = 0);
cl_uint4 bodyInfo(const RigidBody& b);
BodyState decodeBody(const cl_float4* record);

struct BodyReduceArgs {
  const cl::Buffer &state, &info, &bpos, &bforce;
  cl_float gravity;
  auto args() const { return std::tie(state, info, bpos, bforce, gravity); }
};
struct BodyIntegrateArgs {
  const cl::Buffer &state, &info, &clock, &counters;
  cl_uint n;
  auto args() const { return std::tie(state, info, clock, counters, n); }
};
struct BodyContactArgs {
  const cl::Buffer &in, &out, &info, &blocal, &counters;
  cl_uint n;
  cl_float4 tank;
  cl_float margin;
  const cl::Buffer &solids, &sdf;  // the static solids' records and SDF grids
  cl_uint nstatic;
  auto args() const {
    return std::tie(in, out, info, blocal, counters, n, tank, margin, solids, sdf, nstatic);
  }
};
struct BodyUpdateArgs {
  const cl::Buffer &state, &owner, &blocal, &bpos, &bvel, &solids;
  cl_uint first, count, solidFirst, n;
  auto args() const {
    return std::tie(state, owner, blocal, bpos, bvel, solids, first, count, solidFirst, n);
  }
};

// The boundary buffers and the fluid's clock/counters the bodies work on.
struct BodyBuffers {
  const cl::Buffer* bpos = nullptr;    // float4 world position, w = psi
  const cl::Buffer* bvel = nullptr;    // float4 world velocity
  const cl::Buffer* blocal = nullptr;  // float4 position in the body's shape frame
  const cl::Buffer* bforce = nullptr;  // float4 force of the fluid on the particle
  const cl::Buffer* clock = nullptr;   // EDDY_SPH_CLOCK_*: dt of the step, time after it
  const cl::Buffer* counters = nullptr;  // EDDY_SPH_CNT_*: the maxima for the next dt
  const cl::Buffer* solids = nullptr;    // solid records (EDDY_SOLID_*) or none
  size_t solidFirst = 0;                 // body 0's solid record = the static solids before it
  const cl::Buffer* sdf = nullptr;       // the solids' SDF grid values (with `solids`)
  std::array<double, 3> tank{};
};

class BodyKernels {
 public:
  // The bodies' boundary ranges must follow each other in body order
  // (bodies[b + 1].first = bodies[b].first + bodies[b].count). Uploads the
  // state (kinematic bodies at their pose at t0).
  BodyKernels(Context& ctx, Profiler& profiler, const std::vector<RigidBody>& bodies, double t0 = 0);
  BodyKernels(const BodyKernels&) = delete;
  BodyKernels& operator=(const BodyKernels&) = delete;

  size_t size() const { return bodies_.size(); }
  const std::vector<RigidBody>& bodies() const { return bodies_; }
  // The boundary particles of all bodies: [first, first + count).
  size_t firstParticle() const { return first_; }
  size_t particleCount() const { return count_; }

  // One step after the fluid's (bforce written for the pose in bpos):
  // reduce, integrate, contact, update particles.
  void step(const BodyBuffers& b, double gravity, double margin);
  // The phases one by one (tests).
  void runReduce(const cl::Buffer& bpos, const cl::Buffer& bforce, double gravity);
  void runIntegrate(const cl::Buffer& clock, const cl::Buffer& counters);
  // `solids` (with `sdf`): the records of which the first `nstatic` are the
  // static obstacles that b must not pass through either (none: nullptr).
  void runContact(const cl::Buffer& blocal, const cl::Buffer& counters,
                  const std::array<double, 3>& tank, double margin,
                  const cl::Buffer* solids = nullptr, const cl::Buffer* sdf = nullptr,
                  size_t nstatic = 0);
  // With `solids`, also body b's record solidFirst + b (pose for the guard).
  void runUpdateParticles(const cl::Buffer& blocal, const cl::Buffer& bpos, const cl::Buffer& bvel,
                          const cl::Buffer* solids = nullptr, size_t solidFirst = 0);

  // The current state buffer (EDDY_BODY_STRIDE float4 per body).
  const cl::Buffer& stateBuffer() const { return state_[cur_]; }
  // Read-backs / uploads (blocking; tests, output, snapshots).
  std::vector<cl_float4> readRaw();
  void writeRaw(const std::vector<cl_float4>& raw);
  std::vector<BodyState> read();

 private:
  Context& ctx_;
  Profiler& prof_;
  std::vector<RigidBody> bodies_;
  size_t first_ = 0, count_ = 0;
  cl::Program program_;
  cl::Buffer state_[2], info_, owner_;
  int cur_ = 0;
  KernelFunctorOf<BodyReduceArgs> reduce_{program_, "body_reduce"};
  KernelFunctorOf<BodyIntegrateArgs> integrate_{program_, "body_integrate"};
  KernelFunctorOf<BodyContactArgs> contact_{program_, "body_contact"};
  KernelFunctorOf<BodyUpdateArgs> update_{program_, "body_update_particles"};
};

// ---- The bodies of an SPH simulation -----------------------------------------

// Appends bodies to a scene: body b's solid (SphSolid body = b) after the
// setup's solids (static obstacles first), its spec in setup.bodies; with
// dropFluid the fluid particles within half a spacing of a body go (and
// more beside a part too thin for the boundary `inset`: dropInsideSolids).
void addSphBodies(SphSetup& setup, const std::vector<BodySpec>& bodies, bool dropFluid, double inset);

// The bodies of a setup on the boundary's particles: per step after the fluid
// (its boundary_force wrote bforce) reduce, integrate, contact and update,
// then the boundary's grid is rebuilt (moved()). Contact keeps the bodies'
// surfaces one fluid spacing from the tank walls and from each other.
class SphBodies {
 public:
  SphBodies(Context& ctx, Profiler& profiler, const SphSetup& setup, SphBoundary& boundary);
  size_t size() const { return kernels_->size(); }
  const std::vector<BodySpec>& specs() const { return specs_; }
  void step(SphParticles& p, double gravity);
  // The boundary particles and solid records from the current body state
  // (construction, restore); the boundary is rebuilt at its next update.
  void place();
  BodyKernels& kernels() { return *kernels_; }
  std::vector<BodyState> read() { return kernels_->read(); }

 private:
  SphBoundary& boundary_;
  std::vector<BodySpec> specs_;
  size_t solidFirst_ = 0;
  double margin_ = 0;
  std::unique_ptr<BodyKernels> kernels_;
};

}  // namespace eddy
