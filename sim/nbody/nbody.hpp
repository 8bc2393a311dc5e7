// nbody.hpp: gravitational N-body, all pairs on the device, KDK leapfrog.
#pragma once

#include "simulation.hpp"
#include "interact.hpp"
#include "nbody_tree.hpp"

#include <array>
#include <cstdint>
#include <memory>
#include <iosfwd>
#include <string>
#include <vector>

namespace eddy {

struct Body {
  double x = 0, y = 0, z = 0, vx = 0, vy = 0, vz = 0, m = 0;
};

// Declared N-body parameters: dt, G, softening, seed.
const std::vector<ParamDesc>& nbodyParamDecl();
// Scene names accepted by makeNBodyScene.
const std::vector<std::string>& nbodySceneNames();

// Seeded, reproducible initial conditions (model units), in balance for the
// gravitational constant G (built for G = 1, velocities scaled by sqrt(G)):
//  plummer  - Plummer sphere, Aarseth-Henon-Wielen (1974) sampling, Henon units
//  galaxies - two disk galaxies with bulges on a collision course
//  collapse - cold uniform sphere of radius 1
std::vector<Body> makeNBodyScene(std::string_view scene, size_t n, uint64_t seed, double G = 1.0);

// The exact device state of an N-body run as stored in a restart snapshot.
struct NBodyState {
  std::vector<cl_float4> pos;  // x, y, z, mass
  std::vector<cl_float4> vel;  // vx, vy, vz, 0
  std::vector<cl_float4> acc;  // a(x) of pos: drives the next opening kick
};
class Snapshot;
// Decodes and checks the N-body blobs of a snapshot holding `count` bodies
// (sizes, finite values, positive masses). Host only; throws eddy::Error.
NBodyState decodeNBodyState(const Snapshot& snap, size_t count);

// Reads a CSV with header x,y,z,vx,vy,vz,m. Throws eddy::Error naming the file
// and line for anything malformed (missing/extra columns, non-numbers,
// non-finite values, negative mass, no bodies).
std::vector<Body> readBodiesCsv(const std::string& path);
// The same from a stream; `source` names it in messages. Lines longer than
// kMaxCsvLine characters are rejected (no unbounded line buffer).
inline constexpr size_t kMaxCsvLine = 4096;
std::vector<Body> parseBodiesCsv(std::istream& in, const std::string& source);

// The N-body parameters as the kernels see them, reloaded from Params at a
// step boundary (shared by the one- and the multi-device simulation).
struct NBodyKernelParams {
  float G = 1, eps2 = 0, dt = 0;
  float theta = 0.5f;  // opening angle of the tree method
  double dtExact = 0;  // dt as given, for the simulated clock
  unsigned long long seen = ~0ull;
  // The bodies' largest mass and their total (setMasses), for the check of
  // the force's range in sync().
  double massMax = 0, massSum = 0;
  void setMasses(const std::vector<cl_float4>& pos);  // mass in w
  // Reloads if the parameters changed since the last call; returns true when
  // G or the softening changed after the first load (stored accelerations are
  // then stale and must be recomputed). Throws Error when the forces would
  // leave float's range (nbodyForceRangeProblem).
  bool sync(const Params& p);
};

// Why gravity cannot be computed in float with these bodies, G and softening
// eps ("" = it can). The kernels evaluate m_j / (r^2 + eps^2)^(3/2) for every
// pair, the body's own included (r = 0: a zero force only while m / eps^3
// stays finite, else inf x 0 = NaN), and an acceleration up to about
// G sum(m) / eps^2; both must stay within float's range.
std::string nbodyForceRangeProblem(double G, double eps, double massMax, double massSum);

// How the single-device N-body computes gravity: all pairs (nbody_gravity),
// the Barnes-Hut tree (NBodyTree), or chosen by N and device (resolve()).
enum class NBodyMethod { Direct, Tree, Auto };
const char* methodName(NBodyMethod m);

struct NBodyKernelConfig {
  NBodyMethod method = NBodyMethod::Direct;  // see NBodyMethod
  unsigned treeStack = 0;   // tree walk's stack entries (0 = default; tests)
  // Tree method: from this many bodies on, the diagnostics take the potential
  // from the tree walk (NBodyTree::potential, float, with the tree's error)
  // instead of the direct O(N^2) double sum; 0 = treePotentialDefault(device).
  size_t treePotentialMin = 0;
  unsigned wg = 256;        // work-group size = tile length
  unsigned bpi = 1;         // bodies per work-item
  bool nativeRsqrt = true;  // fast rsqrt in the force loop (on NVIDIA: PTX rsqrt.approx.ftz)
  unsigned unroll = 8;      // unroll factor of the tile loop (0 = full)
  // Slices of the sources summed by separate work-groups and then added by
  // nbody_gravity_reduce (1 = the plain kernel; more fills a GPU at small N).
  unsigned split = 1;
  std::string extraOptions; // more OpenCL compiler options (direct and tree programs)

  // The layout for n bodies on this device (docs/PERFORMANCE.md): on GPUs the
  // tile x bodies-per-item and source split that fill the device (the most
  // resident work-items, larger tiles first); on CPUs 256 x 1, no split.
  static NBodyKernelConfig automatic(const DeviceInfo& device, size_t n);
  // Source slices of `split` requested for n bodies with tiles of wg, as
  // launched: at most one slice per tile of sources (>= 1).
  static unsigned slices(size_t n, unsigned wg, unsigned split);
  // Direct or Tree for n bodies on this device: `method` itself unless Auto,
  // which takes the tree from the measured crossover N on (treeCrossover).
  NBodyMethod resolve(const DeviceInfo& device, size_t n) const;
  static size_t treeCrossover(const DeviceInfo& device);
  static size_t treePotentialDefault(const DeviceInfo& device);
};

struct NBodyDiagnostics {
  double kinetic = 0, potential = 0, total = 0;
  std::array<double, 3> momentum{}, angularMomentum{};
  double virialRatio = 0;  // 2K/|W|
};

// Relative change of "total" (the energy) between two rows of
// nbodyDiagColumns(); none when the first total is 0.
std::optional<double> nbodyEnergyDrift(const std::vector<double>& firstRow,
                                       const std::vector<double>& lastRow);

class NBodySim : public Simulation {
 public:
  NBodySim(Context& ctx, const Params& params, const std::vector<Body>& bodies,
           NBodyKernelConfig cfg = {});
  // Resumes the exact state of a snapshot (no force evaluation).
  NBodySim(Context& ctx, const Params& params, const NBodyState& state,
           NBodyKernelConfig cfg = {});
  // Throws eddy::Error naming the limit if n bodies cannot fit the device
  // (with the tree's buffers when `tree`).
  static void checkFits(const DeviceInfo& info, size_t n, bool tree = false);
  // The method in use (Auto resolved at construction).
  NBodyMethod method() const { return tree_ ? NBodyMethod::Tree : NBodyMethod::Direct; }
  NBodyTree* tree() { return tree_.get(); }

  std::string kind() const override { return "nbody"; }
  // With the tree: its float arithmetic overflows far out (docs/USAGE.md).
  std::string blowUpHint() const override;
  size_t size() const override { return n_; }
  void step() override;
  // The host's clock is exact; dt is the parameter the next step uses.
  ClockSample clockSample() override { return {steps_, time_, params_.get("dt")}; }

  std::vector<std::string> diagColumns() const override;
  std::vector<double> diagRow() override;
  std::vector<std::string> stateColumns() const override;
  std::vector<std::vector<double>> stateRows() override;
  const cl::Buffer& positionBuffer() const override { return pos_[cur_]; }
  ParticleState particleState() override;
  std::vector<const cl::Buffer*> finiteCheckBuffers() const override;
  void saveState(SnapshotWriter& out) override;

  // Front-end hooks: colour by speed or mass; push bodies at the cursor ray.
  std::vector<std::string> colorFields() const override { return {"speed", "mass"}; }
  cl::Event writeColorField(size_t index, const cl::Buffer& out) override;
  bool supportsPush() const override { return true; }
  cl::Event push(const Ray& ray, float radius, const Vec3f& dv) override;

  // Recomputes accelerations from the current positions (no kick).
  void computeAccelerations();
  std::vector<cl_float4> readPositions();
  std::vector<cl_float4> readVelocities();
  std::vector<cl_float4> readAccelerations();
  // Double-precision diagnostics (potential with the force's softening).
  NBodyDiagnostics diagnostics();
  std::optional<double> conservedDrift(const std::vector<double>& firstRow,
                                       const std::vector<double>& lastRow) const override {
    return nbodyEnergyDrift(firstRow, lastRow);
  }
  std::optional<double> virialRatio() override { return diagnostics().virialRatio; }
  const NBodyKernelConfig& kernelConfig() const { return cfg_; }
  // Checks the configuration against the device and builds kernels/nbody.cl
  // with it (also used by the multi-device sim, one program per device).
  static cl::Program buildProgram(Context& ctx, const NBodyKernelConfig& cfg);
  // Compiler options that select the force loops' reciprocal square root
  // (kernels/nbody/nbody_common.cl) on this device.
  static std::string rsqrtOptions(const DeviceInfo& device, bool native);

 private:
  NBodySim(Context& ctx, const Params& params, size_t n, NBodyKernelConfig cfg);
  void upload(const std::vector<cl_float4>& pos, const std::vector<cl_float4>& vel);
  void syncParams();
  // Direct or tree from now on; true when that changed which one runs.
  bool useMethod(NBodyMethod m);
  std::unique_ptr<NBodyTree> makeTree();
  int methodParam_ = -1;  // the `method` parameter as last synced (-1: not yet)
  void gravity(int posIndex, float halfDt);
  InteractKernels& interact();

  size_t n_;
  NBodyKernelConfig cfg_;
  cl::Program program_;
  cl::Buffer pos_[2], vel_, acc_, phi_, partial_;  // partial_: split > 1 only
  std::unique_ptr<InteractKernels> interact_;  // built on first use
  std::unique_ptr<NBodyTree> tree_;            // method == Tree only
  int cur_ = 0;
  NBodyKernelParams kp_;  // G, eps^2, dt as the kernels see them
  KernelFunctor<cl::Buffer, cl::Buffer, cl::Buffer, cl_uint, cl_float, cl_float, cl_float>
      gravity_{program_, "nbody_gravity"};
  KernelFunctor<cl::Buffer, cl::Buffer, cl_uint, cl_float, cl_uint> gravitySplit_{
      program_, "nbody_gravity_split"};
  KernelFunctor<cl::Buffer, cl::Buffer, cl::Buffer, cl_uint, cl_uint, cl_float, cl_float>
      gravityReduce_{program_, "nbody_gravity_reduce"};
  KernelFunctor<cl::Buffer, cl::Buffer, cl::Buffer, cl::Buffer, cl_uint, cl_float> drift_{
      program_, "nbody_drift"};
  KernelFunctor<cl::Buffer, cl::Buffer, cl_uint, cl_float> potential_{program_,
                                                                          "nbody_potential"};
};

// Shared by the single- and multi-device sims: diagnostics from positions,
// velocities and per-body potentials phi_i = -sum_j m_j / sqrt(r^2 + eps^2)
// (without G), summed in double; the diagnostics CSV row; the state rows.
NBodyDiagnostics nbodyDiagnostics(const std::vector<cl_float4>& pos,
                                  const std::vector<cl_float4>& vel,
                                  const std::vector<double>& phi, double G);
std::vector<double> nbodyDiagRow(uint64_t steps, double time, const NBodyDiagnostics& d);
std::vector<std::string> nbodyDiagColumns();
std::vector<std::string> nbodyStateColumns();
std::vector<std::vector<double>> nbodyStateRows(const std::vector<cl_float4>& pos,
                                                const std::vector<cl_float4>& vel);

}  // namespace eddy
