// record_target.hpp: what `--record TARGET` names, GL-free (the options
// parser checks it before any window opens).
#pragma once

#include <cstdint>
#include <string>

namespace eddy {

// True when `target` names a video file (.mp4, .mkv, .mov, .webm) rather than a directory.
bool isVideoTarget(const std::string& target);
// Full path of an executable found on PATH, or "" when there is none.
std::string findOnPath(const std::string& name);
// Name of the PNG file of recorded frame `index` in `dir`: dir/frame_000042.png.
std::string framePath(const std::string& dir, uint64_t index);

}  // namespace eddy
