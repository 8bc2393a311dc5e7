#include "bodies.hpp"

#include "error.hpp"
#include "sph.hpp"
#include "io.hpp"

#include <algorithm>
#include <cmath>

namespace eddy {

namespace {

double dot3(const BodyVec& a, const BodyVec& b) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }
BodyVec cross3(const BodyVec& a, const BodyVec& b) {
  return {a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]};
}
BodyVec add3(const BodyVec& a, const BodyVec& b) { return {a[0] + b[0], a[1] + b[1], a[2] + b[2]}; }
BodyVec sub3(const BodyVec& a, const BodyVec& b) { return {a[0] - b[0], a[1] - b[1], a[2] - b[2]}; }
BodyVec scale3(const BodyVec& a, double s) { return {a[0] * s, a[1] * s, a[2] * s}; }
BodyVec mul3(const BodyMat& m, const BodyVec& v) {
  return {m[0] * v[0] + m[1] * v[1] + m[2] * v[2], m[3] * v[0] + m[4] * v[1] + m[5] * v[2],
          m[6] * v[0] + m[7] * v[1] + m[8] * v[2]};
}
bool finite3(const BodyVec& v) {
  return std::isfinite(v[0]) && std::isfinite(v[1]) && std::isfinite(v[2]);
}
cl_float4 f4(double x, double y, double z, double w = 0) { return makeFloat4(x, y, z, w); }
cl_float4 f4(const BodyVec& v, double w = 0) { return makeFloat4(v[0], v[1], v[2], w); }
cl_float4 q4(const BodyQuat& q) { return makeFloat4(q[0], q[1], q[2], q[3]); }
BodyVec v3(const cl_float4& v) { return {v.s[0], v.s[1], v.s[2]}; }

}  // namespace

BodyQuat bodyQuatFromMatrix(const BodyMat& r) {
  // Shepperd's method: the largest of w, x, y, z first (no cancellation).
  const double tr = r[0] + r[4] + r[8];
  BodyQuat q;
  if (tr > 0) {
    const double s = 2.0 * std::sqrt(tr + 1.0);
    q = {(r[7] - r[5]) / s, (r[2] - r[6]) / s, (r[3] - r[1]) / s, 0.25 * s};
  } else if (r[0] > r[4] && r[0] > r[8]) {
    const double s = 2.0 * std::sqrt(1.0 + r[0] - r[4] - r[8]);
    q = {0.25 * s, (r[1] + r[3]) / s, (r[2] + r[6]) / s, (r[7] - r[5]) / s};
  } else if (r[4] > r[8]) {
    const double s = 2.0 * std::sqrt(1.0 + r[4] - r[0] - r[8]);
    q = {(r[1] + r[3]) / s, 0.25 * s, (r[5] + r[7]) / s, (r[2] - r[6]) / s};
  } else {
    const double s = 2.0 * std::sqrt(1.0 + r[8] - r[0] - r[4]);
    q = {(r[2] + r[6]) / s, (r[5] + r[7]) / s, 0.25 * s, (r[3] - r[1]) / s};
  }
  const double n = std::sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
  for (double& c : q) c /= n;
  if (q[3] < 0)
    for (double& c : q) c = -c;
  return q;
}

BodyMat bodyMatrixFromQuat(const BodyQuat& q) {
  const double x = q[0], y = q[1], z = q[2], w = q[3];
  return {1 - 2 * (y * y + z * z), 2 * (x * y - z * w),     2 * (x * z + y * w),
          2 * (x * y + z * w),     1 - 2 * (x * x + z * z), 2 * (y * z - x * w),
          2 * (x * z - y * w),     2 * (y * z + x * w),     1 - 2 * (x * x + y * y)};
}

BodyQuat bodyQuatMul(const BodyQuat& a, const BodyQuat& b) {
  const BodyVec av{a[0], a[1], a[2]}, bv{b[0], b[1], b[2]};
  const BodyVec v = add3(add3(scale3(bv, a[3]), scale3(av, b[3])), cross3(av, bv));
  return {v[0], v[1], v[2], a[3] * b[3] - dot3(av, bv)};
}

BodyVec bodyRotate(const BodyQuat& q, const BodyVec& v) {
  const BodyVec u{q[0], q[1], q[2]};
  const BodyVec t = scale3(cross3(u, v), 2.0);
  return add3(add3(v, scale3(t, q[3])), cross3(u, t));
}

BodyQuat bodyAxisAngle(const BodyVec& a, double angle) {
  const double s = std::sin(0.5 * angle);
  return {a[0] * s, a[1] * s, a[2] * s, std::cos(0.5 * angle)};
}

BodyMat bodyInverseInertia(const BodyMat& m, const std::string& what) {
  for (double v : m)
    if (!std::isfinite(v)) throw Error(what + ": the inertia tensor is not finite");
  if (std::abs(m[1] - m[3]) > 1e-9 * std::abs(m[0] + m[4] + m[8]) ||
      std::abs(m[2] - m[6]) > 1e-9 * std::abs(m[0] + m[4] + m[8]) ||
      std::abs(m[5] - m[7]) > 1e-9 * std::abs(m[0] + m[4] + m[8]))
    throw Error(what + ": the inertia tensor is not symmetric");
  // Positive definite: the leading minors (Sylvester).
  const double m1 = m[0], m2 = m[0] * m[4] - m[1] * m[3];
  const double det = m[0] * (m[4] * m[8] - m[5] * m[7]) - m[1] * (m[3] * m[8] - m[5] * m[6]) +
                     m[2] * (m[3] * m[7] - m[4] * m[6]);
  if (!(m1 > 0) || !(m2 > 0) || !(det > 0))
    throw Error(what + ": the inertia tensor is not positive definite");
  const double id = 1.0 / det;
  return {(m[4] * m[8] - m[5] * m[7]) * id, (m[2] * m[7] - m[1] * m[8]) * id,
          (m[1] * m[5] - m[2] * m[4]) * id, (m[5] * m[6] - m[3] * m[8]) * id,
          (m[0] * m[8] - m[2] * m[6]) * id, (m[2] * m[3] - m[0] * m[5]) * id,
          (m[3] * m[7] - m[4] * m[6]) * id, (m[1] * m[6] - m[0] * m[7]) * id,
          (m[0] * m[4] - m[1] * m[3]) * id};
}

BodyPose bodyKinematicPose(const RigidBody& b, double t) {
  BodyPose p;
  p.position = b.position;
  p.orientation = b.orientation;
  p.velocity = b.velocity;
  p.omega = b.omega;
  if (b.motion == BodyMotion::Piston) {
    const double k = 2.0 * M_PI / b.piston.period;
    const double s = k * t + b.piston.phase;
    p.position = add3(b.position, scale3(b.piston.axis, b.piston.amplitude * std::sin(s)));
    p.velocity = scale3(b.piston.axis, b.piston.amplitude * k * std::cos(s));
    p.omega = {0, 0, 0};
  } else if (b.motion == BodyMotion::Rotate) {
    const BodyQuat qa = bodyAxisAngle(b.rotate.axis, b.rotate.speed * t);
    p.orientation = bodyQuatMul(qa, b.orientation);
    p.position = add3(b.rotate.point, bodyRotate(qa, sub3(b.position, b.rotate.point)));
    p.omega = scale3(b.rotate.axis, b.rotate.speed);
    p.velocity = cross3(p.omega, sub3(p.position, b.rotate.point));
  }
  return p;
}

RigidBody checkedBody(RigidBody b, size_t index) {
  const std::string what = "body " + std::to_string(index);
  if (!std::isfinite(b.mass) || !(b.mass > 0))
    throw Error(what + ": the mass must be finite and > 0 (got " + formatNumber(b.mass) + ")");
  bodyInverseInertia(b.inertia, what);
  if (!finite3(b.position) || !finite3(b.velocity) || !finite3(b.omega) ||
      !finite3(b.centroidLocal) || !finite3(b.shapeSize) || !std::isfinite(b.radius) ||
      b.radius < 0)
    throw Error(what + ": non-finite position, velocity, size or radius");
  double qn = 0;
  for (double c : b.orientation) qn += c * c;
  if (!std::isfinite(qn) || !(qn > 0)) throw Error(what + ": the orientation is not a rotation");
  for (double& c : b.orientation) c /= std::sqrt(qn);
  auto unit = [&](BodyVec& a, const char* name) {
    // The geometry's unitDirection (any length: 1e-310 and 1e308 too; this
    // lambda's own copy multiplied by an overflowing 1 / 1e-310 and gave NaN).
    a = unitDirection(a);
    if (a == BodyVec{0, 0, 0})
      throw Error(what + ": the " + std::string(name) + " axis must be a non-zero vector");
  };
  if (b.motion == BodyMotion::Piston) {
    unit(b.piston.axis, "piston");
    if (!std::isfinite(b.piston.period) || !(b.piston.period > 0))
      throw Error(what + ": the piston period must be finite and > 0 (got " +
                  formatNumber(b.piston.period) + " s)");
    if (!std::isfinite(b.piston.amplitude) || !std::isfinite(b.piston.phase))
      throw Error(what + ": the piston amplitude and phase must be finite");
  } else if (b.motion == BodyMotion::Rotate) {
    unit(b.rotate.axis, "rotation");
    if (!finite3(b.rotate.point) || !std::isfinite(b.rotate.speed))
      throw Error(what + ": the rotation point and speed must be finite");
  }
  return b;
}

RigidBody rigidBodyFromSpec(const BodySpec& spec, const Shape& shape,
                            const std::vector<Vec3d>& local, uint32_t first) {
  RigidBody b;
  b.motion = spec.motion;
  const double volume = shape.volume();
  if (!(volume > 0)) throw Error("body: the shape has no volume");
  b.mass = bodyMass(spec, volume);
  b.inertia = shape.inertia(b.mass / volume);
  b.centroidLocal = shape.centroid();
  const Mat3d r = rotationMatrix(spec.shape.pose.rotationDeg);
  b.position = add3(spec.shape.pose.position, mul3(r, b.centroidLocal));
  b.orientation = bodyQuatFromMatrix(r);
  for (const Vec3d& p : local) b.radius = std::max(b.radius, std::sqrt(dot3(sub3(p, b.centroidLocal), sub3(p, b.centroidLocal))));
  const Vec3d& sz = spec.shape.size;
  switch (spec.shape.kind) {
    case ShapeKind::Box:
      b.shape = EDDY_BODY_SHAPE_BOX;
      b.shapeSize = {0.5 * sz[0], 0.5 * sz[1], 0.5 * sz[2]};
      break;
    case ShapeKind::Sphere:
      b.shape = EDDY_BODY_SHAPE_SPHERE;
      b.shapeSize = {0.5 * sz[0], 0, 0};
      break;
    case ShapeKind::Cylinder:
      b.shape = EDDY_BODY_SHAPE_CYLINDER;
      b.shapeSize = {0.5 * sz[0], 0.5 * sz[1], 0};
      break;
    default:
      b.shape = EDDY_BODY_SHAPE_OTHER;
      break;
  }
  b.piston = spec.piston;
  b.rotate = spec.rotate;
  b.first = first;
  b.count = uint32_t(local.size());
  return b;
}

std::vector<cl_float4> encodeBody(const RigidBody& b, double t0) {
  std::vector<cl_float4> r(EDDY_BODY_STRIDE, f4(0, 0, 0, 0));
  const bool floating = b.motion == BodyMotion::Floating;
  const BodyMat inv = bodyInverseInertia(b.inertia, "body");
  BodyPose p;
  if (floating) {
    p.position = b.position;
    p.orientation = b.orientation;
    p.velocity = b.velocity;
    p.omega = b.omega;
  } else {
    p = bodyKinematicPose(b, t0);
  }
  // L = R I R^T omega (floating bodies carry L)
  const BodyQuat qc{-p.orientation[0], -p.orientation[1], -p.orientation[2], p.orientation[3]};
  const BodyVec L =
      floating ? bodyRotate(p.orientation, mul3(b.inertia, bodyRotate(qc, p.omega))) : BodyVec{0, 0, 0};
  r[EDDY_BODY_POS] = f4(p.position, floating ? 1.0 / b.mass : 0.0);
  r[EDDY_BODY_QUAT] = q4(p.orientation);
  r[EDDY_BODY_VEL] = f4(p.velocity, b.mass);
  r[EDDY_BODY_OMEGA] = f4(p.omega, b.radius);
  r[EDDY_BODY_ANGMOM] = f4(L);
  r[EDDY_BODY_INERTIA_D] = f4(b.inertia[0], b.inertia[4], b.inertia[8]);
  r[EDDY_BODY_INERTIA_O] = f4(b.inertia[1], b.inertia[2], b.inertia[5]);
  r[EDDY_BODY_INVI_D] = f4(inv[0], inv[4], inv[8]);
  r[EDDY_BODY_INVI_O] = f4(inv[1], inv[2], inv[5]);
  r[EDDY_BODY_SHAPE] = f4(b.shapeSize);
  r[EDDY_BODY_CENTROID] = f4(b.centroidLocal);
  if (b.motion == BodyMotion::Piston) {
    r[EDDY_BODY_M0] = f4(b.position, b.piston.amplitude);
    r[EDDY_BODY_M1] = f4(b.piston.axis, b.piston.period);
    r[EDDY_BODY_M2] = f4(0, 0, 0, b.piston.phase);
  } else if (b.motion == BodyMotion::Rotate) {
    r[EDDY_BODY_M0] = f4(b.position, b.rotate.speed);
    r[EDDY_BODY_M1] = f4(b.rotate.axis, 1.0);
    r[EDDY_BODY_M2] = f4(b.rotate.point, 0.0);
  }
  r[EDDY_BODY_M3] = q4(b.orientation);
  return r;
}

cl_uint4 bodyInfo(const RigidBody& b) {
  cl_uint4 v;
  v.s[0] = b.first;
  v.s[1] = b.count;
  v.s[2] = cl_uint(b.motion);
  v.s[3] = b.shape;
  return v;
}

BodyState decodeBody(const cl_float4* r) {
  BodyState s;
  s.position = v3(r[EDDY_BODY_POS]);
  const cl_float4& q = r[EDDY_BODY_QUAT];
  s.orientation = {q.s[0], q.s[1], q.s[2], q.s[3]};
  s.velocity = v3(r[EDDY_BODY_VEL]);
  s.omega = v3(r[EDDY_BODY_OMEGA]);
  s.angularMomentum = v3(r[EDDY_BODY_ANGMOM]);
  s.force = v3(r[EDDY_BODY_FORCE]);
  s.torque = v3(r[EDDY_BODY_TORQUE]);
  return s;
}

BodyKernels::BodyKernels(Context& ctx, Profiler& profiler, const std::vector<RigidBody>& bodies,
                         double t0)
    : ctx_(ctx), prof_(profiler), program_(ctx.buildProgram(std::vector<std::string>{"sph_solid.cl", "sph_bodies.cl"})) {
  if (bodies.empty()) throw Error("bodies: no body to simulate");
  if (ctx.info().maxWorkGroup < EDDY_BODY_WG)
    throw Error("rigid bodies need work-groups of " + std::to_string(EDDY_BODY_WG) + " items; " +
                ctx.info().name + " allows " + std::to_string(ctx.info().maxWorkGroup));
  bodies_.reserve(bodies.size());
  for (size_t b = 0; b < bodies.size(); ++b) bodies_.push_back(checkedBody(bodies[b], b));
  first_ = bodies_.front().first;
  std::vector<cl_float4> raw;
  std::vector<cl_uint4> info;
  std::vector<cl_uint> owner;
  size_t next = first_;
  for (size_t b = 0; b < bodies_.size(); ++b) {
    const RigidBody& rb = bodies_[b];
    if (rb.first != next)
      throw Error("bodies: body " + std::to_string(b) + "'s boundary particles start at " +
                  std::to_string(rb.first) + ", not right after the previous body's (" +
                  std::to_string(next) + ")");
    next += rb.count;
    const auto rec = encodeBody(rb, t0);
    raw.insert(raw.end(), rec.begin(), rec.end());
    info.push_back(bodyInfo(rb));
    owner.insert(owner.end(), rb.count, cl_uint(b));
  }
  count_ = next - first_;
  if (next > 0xffffffffu) throw Error("bodies: too many boundary particles");
  try {
    auto& q = ctx.queue();
    const size_t bytes = raw.size() * sizeof(cl_float4);
    for (auto& s : state_) s = ctx.createBuffer(CL_MEM_READ_WRITE, bytes, "body state");
    info_ = ctx.createBuffer(CL_MEM_READ_ONLY, info.size() * sizeof(cl_uint4), "body info");
    owner_ = ctx.createBuffer(CL_MEM_READ_ONLY, std::max<size_t>(owner.size(), 1) * sizeof(cl_uint),
                              "body owner");
    q.enqueueWriteBuffer(state_[0], CL_TRUE, 0, bytes, raw.data());
    q.enqueueWriteBuffer(state_[1], CL_TRUE, 0, bytes, raw.data());
    q.enqueueWriteBuffer(info_, CL_TRUE, 0, info.size() * sizeof(cl_uint4), info.data());
    if (!owner.empty())
      q.enqueueWriteBuffer(owner_, CL_TRUE, 0, owner.size() * sizeof(cl_uint), owner.data());
  } catch (const cl::Error& e) {
    throw Error("bodies setup: " + describe(e));
  }
}

void BodyKernels::runReduce(const cl::Buffer& bpos, const cl::Buffer& bforce, double gravity) {
  try {
    const EnqueueArgs range(ctx_.queue(), cl::NDRange(bodies_.size() * EDDY_BODY_WG),
                            cl::NDRange(EDDY_BODY_WG));
    prof_.launch("body_reduce", reduce_, range,
                 BodyReduceArgs{state_[cur_], info_, bpos, bforce, cl_float(gravity)});
  } catch (const cl::Error& e) {
    throw Error("body_reduce kernel: " + describe(e));
  }
}

void BodyKernels::runIntegrate(const cl::Buffer& clock, const cl::Buffer& counters) {
  try {
    const EnqueueArgs range(ctx_.queue(), cl::NDRange(roundUp(bodies_.size(), EDDY_BODY_WG)),
                            cl::NDRange(EDDY_BODY_WG));
    prof_.launch("body_integrate", integrate_, range,
                 BodyIntegrateArgs{state_[cur_], info_, clock, counters, cl_uint(bodies_.size())});
  } catch (const cl::Error& e) {
    throw Error("body_integrate kernel: " + describe(e));
  }
}

void BodyKernels::runContact(const cl::Buffer& blocal, const cl::Buffer& counters,
                             const std::array<double, 3>& tank, double margin, const cl::Buffer* solids,
                             const cl::Buffer* sdf, size_t nstatic) {
  const int next = 1 - cur_;
  if (!solids || !sdf) nstatic = 0;
  try {
    const EnqueueArgs range(ctx_.queue(), cl::NDRange(bodies_.size() * EDDY_BODY_WG),
                            cl::NDRange(EDDY_BODY_WG));
    prof_.launch(
        "body_contact", contact_, range,
        BodyContactArgs{state_[cur_], state_[next], info_, blocal, counters,
                        cl_uint(bodies_.size()), f4(tank[0], tank[1], tank[2]), cl_float(margin),
                        nstatic ? *solids : info_, nstatic ? *sdf : info_, cl_uint(nstatic)});
  } catch (const cl::Error& e) {
    throw Error("body_contact kernel: " + describe(e));
  }
  cur_ = next;
}

void BodyKernels::runUpdateParticles(const cl::Buffer& blocal, const cl::Buffer& bpos,
                                     const cl::Buffer& bvel, const cl::Buffer* solids,
                                     size_t solidFirst) {
  const size_t items = std::max(count_, bodies_.size());
  try {
    const EnqueueArgs range(ctx_.queue(), cl::NDRange(roundUp(items, EDDY_BODY_WG)),
                            cl::NDRange(EDDY_BODY_WG));
    prof_.launch("body_update_particles", update_, range,
                 BodyUpdateArgs{state_[cur_], owner_, blocal, bpos, bvel, solids ? *solids : owner_,
                                cl_uint(first_), cl_uint(count_),
                                solids ? cl_uint(solidFirst) : cl_uint(0xffffffffu),
                                cl_uint(bodies_.size())});
  } catch (const cl::Error& e) {
    throw Error("body_update_particles kernel: " + describe(e));
  }
}

void BodyKernels::step(const BodyBuffers& b, double gravity, double margin) {
  runReduce(*b.bpos, *b.bforce, gravity);
  runIntegrate(*b.clock, *b.counters);
  runContact(*b.blocal, *b.counters, b.tank, margin, b.solids, b.sdf, b.solidFirst);
  runUpdateParticles(*b.blocal, *b.bpos, *b.bvel, b.solids, b.solidFirst);
}

std::vector<cl_float4> BodyKernels::readRaw() {
  std::vector<cl_float4> raw(bodies_.size() * EDDY_BODY_STRIDE);
  ctx_.queue().enqueueReadBuffer(state_[cur_], CL_TRUE, 0, raw.size() * sizeof(cl_float4), raw.data());
  return raw;
}

void BodyKernels::writeRaw(const std::vector<cl_float4>& raw) {
  if (raw.size() != bodies_.size() * EDDY_BODY_STRIDE)
    throw Error("bodies: the state holds " + std::to_string(raw.size()) + " values, expected " +
                std::to_string(bodies_.size() * EDDY_BODY_STRIDE));
  ctx_.queue().enqueueWriteBuffer(state_[cur_], CL_TRUE, 0, raw.size() * sizeof(cl_float4), raw.data());
}

std::vector<BodyState> BodyKernels::read() {
  const auto raw = readRaw();
  std::vector<BodyState> out;
  for (size_t b = 0; b < bodies_.size(); ++b) out.push_back(decodeBody(&raw[b * EDDY_BODY_STRIDE]));
  return out;
}

namespace {
// Spacing between a body's geometric surface and a wall or another body's
// surface: one fluid spacing. That is room for the fluid caught in the gap
// at its rest distances, about 0.5 dx off a mirror wall (its image one
// spacing away) and 0.4 dx off a solid's surface (boundary particles inset
// boundary_inset 0.7 dx), so it is not squeezed. Measured (DFSPH, PoCL,
// dx = 1 cm, a 2000 kg/m^3 box resting on the floor for 0.5 s,
// SphBodies.HeavyBoxSinksToTheFloorAndStaysDfsph):
//   - boundary particles on the surface (no inset), 0.5 dx: the last fluid
//     layer under the sinking box was squeezed into a gap thinner than the
//     particles and threw the box out of the water at 10 m/s;
//   - inset 0.7, 0.5 dx: the two guard bands (EDDY_SOLID_CLEARANCE, the wall
//     clearance, 0.25 dx each) met in a plane at the floor's clearance, where
//     a particle's own wall image adds ~30 % to its density; the next solve
//     shot it up into the box at 0.5-1 m/s and the guard put it back there:
//     585 penetrations in 0.8 s at max_dt 4 ms, 24 at 2 ms, 0 at 1 ms;
//   - 0.75 dx: 3 at 4 ms; 1 dx: 0-1 at 4 ms (three roundings), 0 at 1 and
//     2 ms, and 0 for a sinking ball.
// A body with less room than that to both walls of an axis (one spanning a
// thin slab's depth) is centred between them (body_contact).
constexpr double kBodyContactMargin = 1.0;
}  // namespace

void addSphBodies(SphSetup& setup, const std::vector<BodySpec>& bodies, bool dropFluid, double inset) {
  if (bodies.empty()) return;
  std::vector<SphSolid> solids;
  for (const BodySpec& b : bodies) {
    const int index = int(setup.bodies.size());
    setup.bodies.push_back(b);
    setup.solids.push_back({b.shape, index});
    solids.push_back({b.shape, index});
  }
  if (dropFluid) {
    std::vector<SphParticle> kept;
    dropInsideSolids(solids, 0.5 * setup.spacing, inset, setup.particles, kept);
    setup.particles = std::move(kept);
  }
}

SphBodies::SphBodies(Context& ctx, Profiler& profiler, const SphSetup& setup, SphBoundary& boundary)
    : boundary_(boundary), specs_(setup.bodies) {
  if (specs_.empty()) throw Error("bodies: the setup has none");
  if (setup.solids.size() < specs_.size() || boundary.solidCount() != setup.solids.size())
    throw Error("bodies: the boundary does not hold the bodies' solids");
  solidFirst_ = setup.solids.size() - specs_.size();
  // The contact distance counts from the geometric surface; the boundary
  // particles that body_contact tests lie the solid's inset below it
  // (sampleSolid), so the kernel's margin is the distance plus the inset.
  double inset = 0;
  for (size_t b = 0; b < specs_.size(); ++b)
    inset = std::max(inset, boundary.solids()[solidFirst_ + b].inset);
  margin_ = kBodyContactMargin * setup.spacing + inset;
  std::vector<RigidBody> bodies;
  for (size_t b = 0; b < specs_.size(); ++b) {
    const size_t s = solidFirst_ + b;
    if (setup.solids[s].body != int(b))
      throw Error("bodies: solid " + std::to_string(s) + " is not body " + std::to_string(b) +
                  " (bodies must follow the static obstacles, in order)");
    const auto shape = makeShape(specs_[b].shape);
    const auto range = boundary.range(s);
    RigidBody rb = rigidBodyFromSpec(specs_[b], *shape, boundary.solids()[s].local, uint32_t(range.first));
    // The bounding radius of the geometric shape (the samples lie inset).
    rb.radius += boundary.solids()[s].inset;
    if (rb.count != range.second) throw Error("bodies: body " + std::to_string(b) + "'s boundary range");
    bodies.push_back(rb);
  }
  kernels_ = std::make_unique<BodyKernels>(ctx, profiler, bodies);
  place();
}

void SphBodies::place() {
  kernels_->runUpdateParticles(boundary_.localPositions(), boundary_.positions(),
                               boundary_.velocities(), &boundary_.solidRecords(), solidFirst_);
  boundary_.moved();
}

void SphBodies::step(SphParticles& p, double gravity) {
  BodyBuffers b;
  b.bpos = &boundary_.positions();
  b.bvel = &boundary_.velocities();
  b.blocal = &boundary_.localPositions();
  b.bforce = &boundary_.forces();
  b.clock = &p.clock();
  b.counters = &p.counters();
  b.solids = &boundary_.solidRecords();
  b.solidFirst = solidFirst_;
  b.sdf = &boundary_.sdfValues();
  b.tank = p.tank();
  kernels_->step(b, gravity, margin_);
  boundary_.moved();
}

}  // namespace eddy
