#include "nbody.hpp"

#include "eddy_shared.h"
#include "snapshot.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>

namespace eddy {

const std::vector<ParamDesc>& nbodyParamDecl() {
  static const std::vector<ParamDesc> decl = {
      {"dt", "Time step", "Integration", "model time", 1e-6, 1.0, 1e-3,
       "Fixed step of the kick-drift-kick leapfrog (symplectic, second order).", false, false,
       true},
      {"G", "Gravitational constant", "Physics", "model units", 0.0, 100.0, 1.0,
       "Newton's constant in model units (Henon units: G = M = 1, E = -1/4).", false, false,
       false},
      {"softening", "Softening length", "Physics", "model length", 1e-6, 10.0, 0.01,
       "Plummer softening eps: forces and potential use 1/sqrt(r^2 + eps^2).", false, false,
       true},
      {"seed", "Random seed", "Scene", "", 0, 4294967295.0, 1,
       "Seed of the scene's random sampling; the same seed gives the same bodies.", true, true,
       false},
      {"energy_warning", "Energy drift warning", "Diagnostics", "", 0.0, 1e6, 0.01,
       "eddy-cli run warns (stderr, and \"warnings\" in --json) when the total energy's relative "
       "change |E_end - E_start| / |E_start| over the run exceeds this; the energies are the "
       "first and last diagnostics rows (start and end of the run, no extra read-backs). "
       "0 = off. The run still succeeds: a large drift usually means dt is too large or the "
       "softening too small.",
       false, false, false},
      enumParam("method", "Force method", "Tree", {"direct", "tree", "auto"}, 2,
                "How gravity is summed. direct: all pairs (exact, O(N^2)); tree: Barnes-Hut "
                "tree walk with quadrupoles built on the device every step (O(N log N), "
                "error set by theta); auto: the tree from the measured crossover N on this "
                "kind of device (docs/PERFORMANCE.md), else direct. Changes take effect at the "
                "next step.",
                false),
      {"theta", "Opening angle", "Tree", "", 0.2, 1.0, 0.5,
       "Barnes-Hut opening angle of the tree method: a node of size b_max is opened when the "
       "bodies come closer than b_max / theta to its centre of mass. Smaller is more accurate "
       "and slower.",
       false, false, false},
  };
  return decl;
}

namespace {
using eddy::makeFloat4;
cl_float4 f4(double x, double y, double z, double w) { return makeFloat4(x, y, z, w); }
}  // namespace

unsigned NBodyKernelConfig::slices(size_t n, unsigned wg, unsigned split) {
  const size_t tiles = std::max<size_t>(1, (n + wg - 1) / wg);
  const size_t s = std::clamp<size_t>(split, 1, tiles);
  // slices of whole tiles: s slices of ceil(tiles / s) tiles leave no slice empty
  const size_t per = (tiles + s - 1) / s;
  return unsigned((tiles + per - 1) / per);
}

NBodyKernelConfig NBodyKernelConfig::automatic(const DeviceInfo& device, size_t n) {
  NBodyKernelConfig cfg;
  if (!(device.type & CL_DEVICE_TYPE_GPU)) return cfg;  // CPUs: 256 x 1
  // The force loop keeps about 1024 work-items resident per compute unit (64
  // registers each at 512 x 2 on the H200: docs/PERFORMANCE.md, "N-body
  // gravity"). Each layout gets the source split that brings its groups
  // closest to filling that (a slice at least one tile long). The first
  // layout, largest tiles first, that fills >= 90 % of it wins, else the one
  // that fills most. At large N this is 512 x 2 without a split, the layout
  // measured fastest there.
  const size_t target = size_t(device.computeUnits) * 1024;
  const std::pair<unsigned, unsigned> layouts[] = {{512, 2}, {256, 2}, {256, 1}, {128, 1}, {64, 1}};
  size_t best = 0;
  for (const auto& [wg, bpi] : layouts) {
    if (wg > device.maxWorkGroup) continue;
    const size_t blocks = (n + size_t(wg) * bpi - 1) / (size_t(wg) * bpi);
    const size_t want = std::max<size_t>(1, target / wg / blocks);
    const unsigned split = slices(n, wg, unsigned(std::min<size_t>(want, 1u << 16)));
    const size_t busy = std::min<size_t>(wg, (n + bpi - 1) / bpi);  // items with a body, per group
    const size_t filled = std::min(blocks * split, std::max<size_t>(1, target / wg)) * busy;
    if (filled > best) {
      best = filled;
      cfg.wg = wg;
      cfg.bpi = bpi;
      cfg.split = split;
    }
    if (10 * filled >= 9 * target) break;
  }
  return cfg;
}

const char* methodName(NBodyMethod m) {
  switch (m) {
    case NBodyMethod::Direct: return "direct";
    case NBodyMethod::Tree: return "tree";
    case NBodyMethod::Auto: return "auto";
  }
  return "?";
}

size_t NBodyKernelConfig::treeCrossover(const DeviceInfo& device) {
  // Measured step-time crossovers of direct and tree (docs/PERFORMANCE.md):
  // PoCL on 2 cores and the H200.
  return (device.type & CL_DEVICE_TYPE_GPU) ? EDDY_TREE_AUTO_MIN_GPU : EDDY_TREE_AUTO_MIN_CPU;
}

size_t NBodyKernelConfig::treePotentialDefault(const DeviceInfo& device) {
  return (device.type & CL_DEVICE_TYPE_GPU) ? EDDY_TREE_PHI_MIN_GPU : EDDY_TREE_PHI_MIN_CPU;
}

NBodyMethod NBodyKernelConfig::resolve(const DeviceInfo& device, size_t n) const {
  if (method != NBodyMethod::Auto) return method;
  return n >= treeCrossover(device) ? NBodyMethod::Tree : NBodyMethod::Direct;
}

static bool isNvidia(const DeviceInfo& d) {
  return d.platformName.find("NVIDIA") != std::string::npos ||
         d.vendor.find("NVIDIA") != std::string::npos;
}

std::string NBodySim::rsqrtOptions(const DeviceInfo& device, bool native) {
  if (!native) return "";
  // Faster than native_rsqrt on NVIDIA (docs/PERFORMANCE.md, "What moved it").
  return isNvidia(device) ? "-DEDDY_NATIVE_RSQRT -DNBODY_PTX_RSQRT" : "-DEDDY_NATIVE_RSQRT";
}

cl::Program NBodySim::buildProgram(Context& ctx, const NBodyKernelConfig& cfg) {
  if (cfg.wg == 0 || (cfg.wg & (cfg.wg - 1)) || cfg.wg > ctx.info().maxWorkGroup)
    throw Error("N-body: work-group size " + std::to_string(cfg.wg) +
                " must be a power of two <= " + std::to_string(ctx.info().maxWorkGroup));
  if (cfg.bpi == 0 || cfg.bpi > 16) throw Error("N-body: bodies per work-item must be 1..16");
  // A CPU device (PoCL) runs a work-group's items in loops on one worker
  // thread and keeps the per-item arrays that live across the tile barriers
  // (6 floats a body: nbody.cl's px..az) on that thread's stack: 4096 x 8
  // bodies (768 KiB) overflowed it there (a segfault inside the kernel),
  // 4096 x 7 did not. Half of what ran is the limit.
  constexpr size_t kCpuBodiesPerGroup = 16384;
  if ((ctx.info().type & CL_DEVICE_TYPE_CPU) && size_t(cfg.wg) * cfg.bpi > kCpuBodiesPerGroup)
    throw Error("N-body: work-group size " + std::to_string(cfg.wg) + " x " + std::to_string(cfg.bpi) +
                " bodies per work-item = " + std::to_string(size_t(cfg.wg) * cfg.bpi) +
                " bodies a work-group; a CPU device keeps their private arrays on a worker thread's "
                "stack: at most " + std::to_string(kCpuBodiesPerGroup));
  if (cfg.unroll > 1024) throw Error("N-body: unroll factor must be 0 (full) .. 1024");
  if (cfg.split == 0 || cfg.split > 65536)
    throw Error("N-body: the source split must be 1 .. 65536, got " + std::to_string(cfg.split));
  std::string opts = "-DNBODY_WG=" + std::to_string(cfg.wg) +
                     " -DNBODY_BPI=" + std::to_string(cfg.bpi) +
                     " -DNBODY_UNROLL=" + std::to_string(cfg.unroll) + " " + cfg.extraOptions +
                     " " + rsqrtOptions(ctx.info(), cfg.nativeRsqrt);
  return ctx.buildProgram(std::vector<std::string>{"nbody_common.cl", "nbody.cl"}, opts);
}

std::string NBodySim::blowUpHint() const {
  // Measured (PoCL, 2 000 bodies in [-1, 1]^3 and one far out): fine at
  // 7e19 model units; non-finite at 1e20 for about 3 layouts in 4, at 1e21
  // for 39 in 40, at 1e22 always; direct summation is fine there.
  if (!tree_) return "";
  return "with method=tree, coordinates of about 1e20 model units or more overflow the tree's float "
         "arithmetic: try --set method=direct";
}

void NBodySim::checkFits(const DeviceInfo& info, size_t n, bool tree) {
  if (n == 0) throw Error("N-body: no bodies");
  if (n > 0x7fffffffu)
    throw Error("N-body: " + std::to_string(n) + " bodies are too many (limit 2^31 - 1)");
  const size_t vecBytes = n * sizeof(cl_float4);
  const size_t phiBytes = n * (info.fp64 ? sizeof(double) : sizeof(float));
  checkDeviceMemory(info, 4 * vecBytes + phiBytes + (tree ? NBodyTree::deviceBytes(n) : 0),
                    std::max(vecBytes, tree ? 2 * n * sizeof(cl_float4) : 0),
                    std::to_string(n) + " bodies" + (tree ? " with the tree" : ""),
                    n * (sizeof(Body) + 2 * sizeof(cl_float4)));  // the host's scene and its upload copies
}

NBodySim::NBodySim(Context& ctx, const Params& params, size_t n, NBodyKernelConfig cfg)
    : Simulation(ctx, nbodyParamDecl()), n_(n), cfg_(cfg), program_(buildProgram(ctx, cfg)) {
  params_ = params;
  const bool tree = cfg_.resolve(ctx.info(), n_) == NBodyMethod::Tree;
  checkFits(ctx.info(), n_, tree);
  if (tree) tree_ = makeTree();
  const size_t vecBytes = n_ * sizeof(cl_float4);
  const size_t phiBytes = n_ * (ctx.info().fp64 ? sizeof(double) : sizeof(float));
  pos_[0] = ctx.createBuffer(CL_MEM_READ_WRITE, vecBytes, "N-body positions");
  pos_[1] = ctx.createBuffer(CL_MEM_READ_WRITE, vecBytes, "N-body positions");
  vel_ = ctx.createBuffer(CL_MEM_READ_WRITE, vecBytes, "N-body velocities");
  acc_ = ctx.createBuffer(CL_MEM_READ_WRITE, vecBytes, "N-body accelerations");
  phi_ = ctx.createBuffer(CL_MEM_READ_WRITE, phiBytes, "N-body potentials");
  if (const unsigned s = NBodyKernelConfig::slices(n_, cfg_.wg, cfg_.split); s > 1)
    partial_ = ctx.createBuffer(CL_MEM_READ_WRITE, size_t(s) * vecBytes, "N-body partial sums");
}

void NBodySim::upload(const std::vector<cl_float4>& p, const std::vector<cl_float4>& v) {
  const size_t vecBytes = n_ * sizeof(cl_float4);
  try {
    auto& q = ctx_.queue();
    q.enqueueWriteBuffer(pos_[0], CL_TRUE, 0, vecBytes, p.data());
    q.enqueueWriteBuffer(pos_[1], CL_TRUE, 0, vecBytes, p.data());
    q.enqueueWriteBuffer(vel_, CL_TRUE, 0, vecBytes, v.data());
  } catch (const cl::Error& e) {
    throw Error("N-body setup: " + describe(e));
  }
}

NBodySim::NBodySim(Context& ctx, const Params& params, const std::vector<Body>& bodies,
                   NBodyKernelConfig cfg)
    : NBodySim(ctx, params, bodies.size(), cfg) {
  std::vector<cl_float4> p(n_), v(n_);
  for (size_t i = 0; i < n_; ++i) {
    const Body& b = bodies[i];
    p[i] = f4(b.x, b.y, b.z, b.m);
    v[i] = f4(b.vx, b.vy, b.vz, 0);
  }
  upload(p, v);
  kp_.setMasses(p);
  syncParams();
  computeAccelerations();
}

NBodySim::NBodySim(Context& ctx, const Params& params, const NBodyState& state,
                   NBodyKernelConfig cfg)
    : NBodySim(ctx, params, state.pos.size(), cfg) {
  if (state.vel.size() != n_ || state.acc.size() != n_)
    throw Error("N-body: snapshot arrays of different lengths");
  upload(state.pos, state.vel);
  kp_.setMasses(state.pos);
  try {
    ctx.queue().enqueueWriteBuffer(acc_, CL_TRUE, 0, n_ * sizeof(cl_float4), state.acc.data());
  } catch (const cl::Error& e) {
    throw Error("N-body setup: " + describe(e));
  }
  syncParams();
}

void NBodyKernelParams::setMasses(const std::vector<cl_float4>& pos) {
  massMax = massSum = 0;
  for (const auto& b : pos) {
    massMax = std::max(massMax, double(b.s[3]));
    massSum += double(b.s[3]);
  }
}

std::string nbodyForceRangeProblem(double G, double eps, double massMax, double massSum) {
  // A margin of 2^10 below FLT_MAX for the sums and the kernels' rounding.
  const double limit = double(std::numeric_limits<float>::max()) / 1024;
  const double self = massMax / (eps * eps * eps), acc = G * massSum / (eps * eps);
  if (!(self < limit) || !(acc < limit)) {
    std::ostringstream m;
    m << "the forces leave single precision's range: bodies of mass up to " << massMax << " (total " << massSum
      << ") with softening " << eps << " and G " << G << " give m / eps^3 = " << self
      << " and G M / eps^2 = " << acc << ", beyond " << limit
      << " (the simulation computes in float, whose largest value is 3.4e38): raise the softening or "
         "scale the masses down";
    return m.str();
  }
  return "";
}

bool NBodyKernelParams::sync(const Params& p) {
  if (p.version() == seen) return false;
  if (massMax > 0)
    if (const std::string why = nbodyForceRangeProblem(p.get("G"), p.get("softening"), massMax, massSum);
        !why.empty())
      throw Error(why);
  const float newG = float(p.get("G"));
  const double eps = p.get("softening");
  const float newEps2 = float(eps * eps);
  const bool forceChanged = seen != ~0ull && (newG != G || newEps2 != eps2);
  G = newG;
  eps2 = newEps2;
  dtExact = p.get("dt");
  dt = float(dtExact);
  if (p.find("theta")) theta = float(p.get("theta"));
  seen = p.version();
  return forceChanged;
}

void NBodySim::syncParams() {
  // A change of the declared `method` switches direct <-> tree at this step
  // boundary (the value at construction is the one the kernel config got).
  bool switched = false;
  if (const ParamDesc* d = params_.find("method"); d && d->isEnum()) {
    const int m = int(params_.getInt("method"));
    if (methodParam_ >= 0 && m != methodParam_) switched = useMethod(NBodyMethod(m));
    methodParam_ = m;
  }
  // The stored a(x_n) drives the next opening kick: keep it consistent (with
  // the tree it also depends on theta).
  const float theta = kp_.theta;
  if (kp_.sync(params_) || switched || (tree_ && kp_.theta != theta)) computeAccelerations();
}

bool NBodySim::useMethod(NBodyMethod m) {
  cfg_.method = m;
  const bool want = cfg_.resolve(ctx_.info(), n_) == NBodyMethod::Tree;
  if (want == bool(tree_)) return false;
  if (want) {
    checkFits(ctx_.info(), n_, true);
    tree_ = makeTree();
  } else {
    tree_.reset();
  }
  return true;
}

std::unique_ptr<NBodyTree> NBodySim::makeTree() {
  return std::make_unique<NBodyTree>(
      ctx_, n_, cfg_.treeStack,
      rsqrtOptions(ctx_.info(), cfg_.nativeRsqrt) + " " + cfg_.extraOptions);
}

void NBodySim::computeAccelerations() { gravity(cur_, 0.0f); }

// a(x) of pos_[posIndex] into acc_, and v += a halfDt: all pairs or the tree.
void NBodySim::gravity(int posIndex, float halfDt) {
  if (tree_) {
    tree_->computeAccelerations(pos_[posIndex], kp_.G, kp_.eps2, kp_.theta, vel_, acc_, halfDt,
                                profiler_);
    return;
  }
  const size_t groups = (n_ + size_t(cfg_.wg) * cfg_.bpi - 1) / (size_t(cfg_.wg) * cfg_.bpi);
  const unsigned slices = NBodyKernelConfig::slices(n_, cfg_.wg, cfg_.split);
  try {
    auto& q = ctx_.queue();
    if (slices > 1) {
      // A slice is a whole number of tiles (NBodyKernelConfig::slices).
      const size_t tiles = (n_ + cfg_.wg - 1) / cfg_.wg;
      const cl_uint slice = cl_uint(((tiles + slices - 1) / slices) * cfg_.wg);
      profiler_.record("gravity",
                       gravitySplit_(EnqueueArgs(q, cl::NDRange(groups * cfg_.wg, slices),
                                                     cl::NDRange(cfg_.wg, 1)),
                                     pos_[posIndex], partial_, cl_uint(n_), kp_.eps2, slice));
      profiler_.record("gravity_reduce",
                       gravityReduce_(EnqueueArgs(q, cl::NDRange(roundUp(n_, EDDY_LINEAR_WG)),
                                                      cl::NDRange(EDDY_LINEAR_WG)),
                                      partial_, vel_, acc_, cl_uint(n_), cl_uint(slices), kp_.G,
                                      halfDt));
      return;
    }
    cl::Event e = gravity_(EnqueueArgs(q, cl::NDRange(groups * cfg_.wg), cl::NDRange(cfg_.wg)),
                           pos_[posIndex], vel_, acc_, cl_uint(n_), kp_.G, kp_.eps2, halfDt);
    profiler_.record("gravity", e);
  } catch (const cl::Error& e) {
    throw Error("N-body gravity kernel: " + describe(e));
  }
}

void NBodySim::step() {
  syncParams();
  const int next = 1 - cur_;
  try {
    auto& q = ctx_.queue();
    cl::Event e1 = drift_(EnqueueArgs(q, cl::NDRange(roundUp(n_, EDDY_LINEAR_WG)),
                                          cl::NDRange(EDDY_LINEAR_WG)),
                          pos_[cur_], pos_[next], vel_, acc_, cl_uint(n_), kp_.dt);
    profiler_.record("drift", e1);
    gravity(next, 0.5f * kp_.dt);
  } catch (const cl::Error& e) {
    throw Error("N-body step " + std::to_string(steps_) + ": " + describe(e));
  } catch (const Error& e) {
    throw Error("N-body step " + std::to_string(steps_) + ": " + e.what());
  }
  cur_ = next;
  time_ += kp_.dtExact;
  ++steps_;
  profiler_.endStep();
  throttle();
}

InteractKernels& NBodySim::interact() {
  if (!interact_) interact_ = std::make_unique<InteractKernels>(ctx_);
  return *interact_;
}

cl::Event NBodySim::writeColorField(size_t index, const cl::Buffer& out) {
  if (index == 0) return interact().speed(vel_, out, n_);
  if (index == 1) return interact().componentW(pos_[cur_], out, n_);
  return Simulation::writeColorField(index, out);
}

cl::Event NBodySim::push(const Ray& ray, float radius, const Vec3f& dv) {
  return interact().push(pos_[cur_], vel_, n_, ray, radius, dv);
}

static std::vector<cl_float4> readBuffer4(cl::CommandQueue& q, const cl::Buffer& b, size_t n) {
  std::vector<cl_float4> out(n);
  q.enqueueReadBuffer(b, CL_TRUE, 0, n * sizeof(cl_float4), out.data());
  return out;
}

std::vector<cl_float4> NBodySim::readPositions() { return readBuffer4(ctx_.queue(), pos_[cur_], n_); }
std::vector<cl_float4> NBodySim::readVelocities() { return readBuffer4(ctx_.queue(), vel_, n_); }
std::vector<cl_float4> NBodySim::readAccelerations() { return readBuffer4(ctx_.queue(), acc_, n_); }

NBodyDiagnostics NBodySim::diagnostics() {
  // G and the softening as they are now: a change since the last step (--set
  // on a --load, the panel) would otherwise give the first row, and the
  // energy drift measured from it, the old ones until the next step.
  syncParams();
  const auto p = readPositions();
  const auto v = readVelocities();
  std::vector<double> phi(n_);
  try {
    auto& q = ctx_.queue();
    const size_t treeFrom = cfg_.treePotentialMin ? cfg_.treePotentialMin
                                                  : NBodyKernelConfig::treePotentialDefault(ctx_.info());
    if (tree_ && n_ >= treeFrom) {
      // Too many bodies for the direct double sum: the tree's potential.
      const cl::Buffer& b = tree_->potential(pos_[cur_], kp_.eps2, kp_.theta, profiler_);
      std::vector<float> f(n_);
      q.enqueueReadBuffer(b, CL_TRUE, 0, n_ * sizeof(float), f.data());
      for (size_t i = 0; i < n_; ++i) phi[i] = f[i];
      return nbodyDiagnostics(p, v, phi, double(kp_.G));
    }
    cl::Event e = potential_(EnqueueArgs(q, cl::NDRange(roundUp(n_, EDDY_LINEAR_WG)),
                                             cl::NDRange(EDDY_LINEAR_WG)),
                             pos_[cur_], phi_, cl_uint(n_), kp_.eps2);
    profiler_.record("potential", e);
    if (ctx_.info().fp64) {
      q.enqueueReadBuffer(phi_, CL_TRUE, 0, n_ * sizeof(double), phi.data());
    } else {
      std::vector<float> f(n_);
      q.enqueueReadBuffer(phi_, CL_TRUE, 0, n_ * sizeof(float), f.data());
      for (size_t i = 0; i < n_; ++i) phi[i] = f[i];
    }
  } catch (const cl::Error& e) {
    throw Error("N-body diagnostics: " + describe(e));
  }
  return nbodyDiagnostics(p, v, phi, double(kp_.G));
}

NBodyDiagnostics nbodyDiagnostics(const std::vector<cl_float4>& p, const std::vector<cl_float4>& v,
                                  const std::vector<double>& phi, double G) {
  NBodyDiagnostics d;
  double W = 0;
  for (size_t i = 0; i < p.size(); ++i) {
    const double m = p[i].s[3];
    const double x = p[i].s[0], y = p[i].s[1], z = p[i].s[2];
    const double vx = v[i].s[0], vy = v[i].s[1], vz = v[i].s[2];
    d.kinetic += 0.5 * m * (vx * vx + vy * vy + vz * vz);
    W += 0.5 * m * phi[i];
    d.momentum[0] += m * vx;
    d.momentum[1] += m * vy;
    d.momentum[2] += m * vz;
    d.angularMomentum[0] += m * (y * vz - z * vy);
    d.angularMomentum[1] += m * (z * vx - x * vz);
    d.angularMomentum[2] += m * (x * vy - y * vx);
  }
  d.potential = G * W;
  d.total = d.kinetic + d.potential;
  d.virialRatio = d.potential != 0 ? 2 * d.kinetic / std::fabs(d.potential) : 0;
  return d;
}

std::vector<std::string> nbodyDiagColumns() {
  return {"step", "time", "kinetic", "potential", "total", "px", "py", "pz", "lx", "ly", "lz"};
}

std::vector<double> nbodyDiagRow(uint64_t steps, double time, const NBodyDiagnostics& d) {
  return {double(steps),          time,
          d.kinetic,              d.potential,
          d.total,                d.momentum[0],
          d.momentum[1],          d.momentum[2],
          d.angularMomentum[0],   d.angularMomentum[1],
          d.angularMomentum[2]};
}

std::vector<std::string> nbodyStateColumns() { return {"x", "y", "z", "vx", "vy", "vz", "m"}; }

std::vector<std::vector<double>> nbodyStateRows(const std::vector<cl_float4>& p,
                                                const std::vector<cl_float4>& v) {
  std::vector<std::vector<double>> rows(p.size());
  for (size_t i = 0; i < p.size(); ++i)
    rows[i] = {p[i].s[0], p[i].s[1], p[i].s[2], v[i].s[0], v[i].s[1], v[i].s[2], p[i].s[3]};
  return rows;
}

std::vector<std::string> NBodySim::diagColumns() const { return nbodyDiagColumns(); }

std::optional<double> nbodyEnergyDrift(const std::vector<double>& firstRow,
                                       const std::vector<double>& lastRow) {
  const auto columns = nbodyDiagColumns();
  std::optional<double> dE;
  for (size_t i = 0; i < columns.size() && i < firstRow.size() && i < lastRow.size(); ++i)
    if (columns[i] == "total" && firstRow[i] != 0)
      dE = (lastRow[i] - firstRow[i]) / std::fabs(firstRow[i]);
  return dE;
}

std::vector<double> NBodySim::diagRow() { return nbodyDiagRow(steps_, time_, diagnostics()); }

std::vector<std::string> NBodySim::stateColumns() const { return nbodyStateColumns(); }

std::vector<std::vector<double>> NBodySim::stateRows() {
  return nbodyStateRows(readPositions(), readVelocities());
}

std::vector<const cl::Buffer*> NBodySim::finiteCheckBuffers() const {
  return {&pos_[cur_], &vel_};
}

ParticleState NBodySim::particleState() {
  const auto p = readPositions();
  const auto v = readVelocities();
  ParticleState f;
  f.time = time_;
  f.step = steps_;
  f.positions.resize(3 * n_);
  PointArray vel{"velocity", 3, std::vector<float>(3 * n_)};
  PointArray mass{"mass", 1, std::vector<float>(n_)};
  for (size_t i = 0; i < n_; ++i) {
    for (int k = 0; k < 3; ++k) {
      f.positions[3 * i + k] = p[i].s[k];
      vel.values[3 * i + k] = v[i].s[k];
    }
    mass.values[i] = p[i].s[3];
  }
  f.arrays.push_back(std::move(vel));
  f.arrays.push_back(std::move(mass));
  return f;
}

void NBodySim::saveState(SnapshotWriter& out) {
  out.addArray("nbody/pos", readPositions());
  out.addArray("nbody/vel", readVelocities());
  out.addArray("nbody/acc", readAccelerations());
}

NBodyState decodeNBodyState(const Snapshot& snap, size_t count) {
  if (count == 0 || count > 0x7fffffffu)
    snap.fail("body count " + std::to_string(count) + " is outside [1, 2^31 - 1]");
  NBodyState s;
  // array() checks each blob's size against the count before allocating.
  s.pos = snap.array<cl_float4>("nbody/pos", count);
  s.vel = snap.array<cl_float4>("nbody/vel", count);
  s.acc = snap.array<cl_float4>("nbody/acc", count);
  for (size_t i = 0; i < count; ++i) {
    for (int k = 0; k < 4; ++k)
      if (!std::isfinite(s.pos[i].s[k]) || !std::isfinite(s.vel[i].s[k]) ||
          !std::isfinite(s.acc[i].s[k]))
        snap.fail("body " + std::to_string(i) + " has a non-finite value");
    if (!(s.pos[i].s[3] > 0)) snap.fail("body " + std::to_string(i) + " has a mass <= 0");
  }
  return s;
}

}  // namespace eddy
