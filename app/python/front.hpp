// front.hpp: the Python module's front end without Python (app/python/).
//
// What eddy-cli run does with its flags, done for keyword arguments: check the
// simulation, scene, count and device, apply parameter values, open the
// device (the core's choice: a GPU, else a CPU device), build the scene or
// restore a snapshot, run a Session, read the state back, write snapshots
// and ParaView frames. module.cpp only converts between Python and these
// calls, releases the GIL and checks for signals.
//
// Errors: what eddy-cli reports as a usage error (exit 2) is an
// ArgumentError here (Python: ValueError), parameter errors are the core's
// ParamError (ValueError), everything else the core's eddy::Error
// (eddy.Error) and BlowUpError (eddy.BlowUpError).
#pragma once

#include "config.hpp"
#include "factory.hpp"
#include "params.hpp"
#include "session.hpp"
#include "simulation.hpp"
#include "vtk.hpp"

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace eddy::python {

// An argument the caller got wrong: eddy-cli's usage errors (Python: ValueError).
class ArgumentError : public Error {
 public:
  using Error::Error;
};

// A parameter value as Python gave it, before it is checked against the
// declaration (module.cpp fills it from the Python object).
struct ParamValue {
  enum class Kind { Number, Bool, Text, Other } kind = Kind::Number;
  double number = 0;
  bool boolean = false;
  std::string text;      // Kind::Text: the string; Kind::Other: the Python type's name
};

// The value `v` means for parameter `key` of `params` (not set): a string as
// --set key=TEXT reads it (an enum's choice, true/false, a number), a bool for
// a bool parameter, a number for a number or bool parameter. Throws ParamError
// with the CLI's message (unknown key and the known ones, range, choices) or,
// for a value of the wrong type, one naming the type expected.
double paramValue(const Params& params, const std::string& key, const ParamValue& v);

// What eddy.Simulation(...) was given.
struct BuildArgs {
  std::string sim;                 // "" = the default simulation (the first registered)
  std::string scene;               // "" = the simulation's default scene
  std::optional<long long> n;      // particle count (types with a default count)
  std::string ic;                  // initial-conditions CSV (types that take one)
  std::string device;              // "" = a GPU, else a CPU device (as eddy-cli)
  std::vector<std::pair<std::string, ParamValue>> params;
  std::vector<ShapeSpec> obstacles;  // static obstacles (--obstacle, config "obstacles")
  std::vector<BodySpec> bodies;      // rigid bodies (--body, config "bodies")
  std::vector<ProbeSpec> probes;     // probes after the scene's own (--probe, config "probes")
  std::optional<unsigned long long> probeEvery;  // a sample every K steps (default 10) ...
  std::optional<double> probeDt;                 // ... or at every multiple of T seconds
};

// The device as eddy-cli run --json and devices --json describe it.
struct DeviceFields {
  std::vector<std::pair<std::string, std::string>> text;  // platform, name, type, driver, index
  unsigned computeUnits = 0;
  unsigned long long globalMemBytes = 0;
  bool glSharing = false;
};
DeviceFields deviceFields(const DeviceInfo& d);

class Front {
 public:
  // eddy.Simulation(...): checked like eddy-cli run's flags, then built.
  static std::unique_ptr<Front> build(const BuildArgs& args);
  // eddy.Simulation.from_config(path or text): the config's simulation
  // (sim, scene, n, ic, device, params); `device` overrides the config's.
  // The run keys (steps, until, outputs) are kept for config().
  static std::unique_ptr<Front> fromConfig(const RunConfig& config, const std::string& device);
  // eddy.Simulation.load(path): a restart snapshot, bit-identical on the same device.
  // `probes` (with its cadence) are sampled from the start, as for build().
  static std::unique_ptr<Front> load(const std::string& path, const std::string& device,
                                     const std::vector<ProbeSpec>& probes = {},
                                     std::optional<unsigned long long> probeEvery = {},
                                     std::optional<double> probeDt = {});

  ~Front();
  Front(const Front&) = delete;
  Front& operator=(const Front&) = delete;

  Simulation& sim() { return *sim_; }
  const SceneSpec& spec() const { return spec_; }
  // The scene as eddy-cli reports it ("ic:FILE" for initial conditions).
  std::string sceneName() const;
  const std::optional<RunConfig>& config() const { return config_; }

  // Steps through a Session: `steps` steps, or until the simulated time
  // reaches `until`; the NaN/inf check every `checkEvery` steps and once at
  // the end (BlowUpError). `stop` is asked before every step (a signal);
  // returns true when it stopped the run (at a step boundary).
  bool advance(uint64_t steps, std::optional<double> until, uint64_t checkEvery,
               const std::function<bool()>& stop);

  // A live parameter change: takes effect at the next step. One that only
  // building a scene reads (rebuild) cannot change a running simulation:
  // ArgumentError, unless it is the current value.
  void setParam(const std::string& key, double value);

  // Positions and every per-particle field, in particle order (as --out).
  ParticleState state() { return sim_->particleState(); }
  // The diagnostics row (the --diag CSV's columns) at the current step.
  std::vector<std::pair<std::string, double>> diagnostics();

  // The probes sampled (the scene's built-ins, then the caller's; none:
  // empty) and every sample since the simulation was made, in order:
  // waits for the samples still on the device first.
  const std::vector<ProbeSpec>& probes() const { return probes_; }
  const std::vector<ProbeRow>& probeRows();

  // --save: the path checked as eddy-cli checks it, then the snapshot.
  void save(const std::string& path);
  // One ParaView frame of the current step into DIR (DIR/step_<step>.vtp and
  // DIR/eddy.pvd); later calls with the same DIR extend the series. A DIR
  // that holds other files on the first call is refused unless `overwrite`
  // (which removes an earlier export's frames and eddy.pvd first), as
  // eddy-cli run --export does. Returns the .pvd's path.
  std::string exportVtk(const std::string& dir, bool overwrite);

 private:
  Front() = default;
  std::unique_ptr<Context> ctx_;     // declared first: destroyed after the simulation
  std::unique_ptr<Simulation> sim_;
  SceneSpec spec_;
  std::optional<RunConfig> config_;
  std::map<std::string, std::unique_ptr<VtkSeries>> series_;  // by export folder
  std::vector<ProbeSpec> probes_;
  std::vector<ProbeRow> probeRows_;
  bool checked_ = false;  // the state checked before the first step (advance)
  // Checks and starts the probes (the scene's when `builtins`, then `extra`)
  // at the cadence; nothing when there are none. ArgumentError for a problem.
  void startProbes(const std::vector<ProbeSpec>& extra, bool builtins,
                   std::optional<unsigned long long> every, std::optional<double> dt);
};

}  // namespace eddy::python
