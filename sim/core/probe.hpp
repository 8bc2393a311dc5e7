// probe.hpp: measurement probes (issue 12), what every front end sees of them.
//
// A probe is a named sensor sampled on the device after a step:
//   pressure:NAME:x,y,z   the fluid pressure at a point (Pa)
//   level:NAME:x,z        the free-surface height above (x, z) (m)
// Simulations that have probes (SPH: sim/sph/probes.hpp, which states the
// interpolation) sample them at a cadence and hand each sample to a sink as a
// ProbeRow; ProbeCsv writes the rows as `step,time,NAME,...`.
#pragma once

#include <cstdint>
#include <functional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

namespace eddy {

struct ProbeSpec {
  enum class Kind { Pressure, Level };
  Kind kind = Kind::Pressure;
  std::string name;
  double x = 0, y = 0, z = 0;  // level: y unused (0)
};

// "pressure" / "level".
std::string_view probeKindName(ProbeSpec::Kind k);
// Parses "pressure:NAME:x,y,z" or "level:NAME:x,z". Throws eddy::Error with a
// message naming what is wrong (kind, name, coordinates); the caller adds
// where the text came from.
ProbeSpec parseProbeSpec(std::string_view text);
// The text parseProbeSpec reads back as the same probe.
std::string probeSpecText(const ProbeSpec& p);
// Names: 1 to 64 characters, letters, digits, '_', '-', '.'; not "step" or
// "time" (CSV columns). Returns "" if fine, else the reason.
std::string probeNameProblem(std::string_view name);
// Throws eddy::Error naming the first name given twice.
void checkProbeNames(const std::vector<ProbeSpec>& probes);
// Throws eddy::Error when a probe lies outside the box [0, tank] (on a face
// is inside: a wall sensor sits on the wall). Level probes: x and z only.
void checkProbesInside(const std::vector<ProbeSpec>& probes, const double tank[3]);

// When probes are sampled: every `every` steps, or (dt > 0) at the first
// step whose simulated time reaches each multiple of dt. A sample of the
// starting state is always taken first. `deliverEvery`: samples (with dt
// > 0: steps) between two (non-blocking) read-backs of the samples; 0 = the simulation's
// own choice (SPH: half its device ring, 128: files); a live plot (the app)
// asks for a few, so that it lags by a few samples.
struct ProbeCadence {
  uint64_t every = 10;
  double dt = 0;
  unsigned deliverEvery = 0;
};

// Whether two cadences sample the same steps (dt decides when either has one).
bool sameProbeCadence(const ProbeCadence& a, const ProbeCadence& b);
// Whether two probes are the same sensor: kind, name and place.
bool sameProbe(const ProbeSpec& a, const ProbeSpec& b);

struct ProbeRow {
  uint64_t step = 0;
  double time = 0;
  std::vector<double> values;  // one per probe, in declaration order
};
using ProbeSink = std::function<void(const ProbeRow&)>;

// The probe CSV: header `step,time,NAME,...` then one row per sample (values
// as the device computed them, float, written exactly).
class ProbeCsv {
 public:
  ProbeCsv(std::ostream& out, const std::vector<ProbeSpec>& probes);
  void write(const ProbeRow& row);
  uint64_t rows() const { return rows_; }

 private:
  std::ostream& out_;
  uint64_t rows_ = 0;
};

}  // namespace eddy
