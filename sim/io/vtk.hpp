// vtk.hpp: ParaView / VTK export of particle frames.
//
// Each frame is a VTK XML PolyData file (.vtp, "binary appended raw": a UInt64
// byte count before each array, little-endian): the particles as Points, one
// vertex cell per particle (so ParaView draws them), and every PointArray of
// the frame as point data. A .pvd collection lists the frames with their
// simulated times, so ParaView opens the whole run as a time series. Every
// file is written atomically; the .pvd is rewritten after each frame, so it is
// valid even if the run stops half-way.
#pragma once

#include "particle_state.hpp"

#include <string>
#include <utility>
#include <vector>

namespace eddy {

// Writes one frame. Throws eddy::Error on a bad frame or a write failure.
void writeVtp(const std::string& path, const ParticleState& frame);

// True if `name` is a frame file eddy's export writes: step_<digits>.vtp.
bool isExportFrameName(const std::string& name);
// Removes what an earlier export left in DIR: its step_<digits>.vtp frames and
// DIR/<name>; nothing else. Returns the number of files removed. Throws
// eddy::Error naming a file that cannot be removed.
size_t removeOldExport(const std::string& dir, const std::string& name = "eddy.pvd");

// The frames of one run: DIR/step_<step>.vtp and DIR/<name> (default eddy.pvd).
class VtkSeries {
 public:
  // Creates DIR if needed.
  explicit VtkSeries(std::string dir, std::string name = "eddy.pvd");
  // Writes the frame's .vtp and rewrites the .pvd. A frame of a step already
  // written replaces that entry.
  void add(const ParticleState& frame);
  const std::string& pvdPath() const { return pvd_; }
  size_t frames() const { return entries_.size(); }

 private:
  std::string dir_, pvd_;
  std::vector<std::pair<double, std::string>> entries_;  // time, file name
  std::vector<unsigned long long> steps_;
};

}  // namespace eddy
