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
// True for the name (no folder) of a recorded frame: frame_ + digits + .png.
bool isRecordFrameName(const std::string& name);
// Removes an earlier recording's frames (frame_*.png, nothing else) from
// `dir` (--overwrite); returns how many. Throws eddy::Error naming a file that
// cannot be removed.
size_t removeOldRecording(const std::string& dir);
// When `target` is not a video but its name ends like an image or another
// video format (.png, .jpg, .avi, ...): the extension without the dot, which
// --record would otherwise take as a folder's name; else "".
std::string fileLikeExtension(const std::string& target);

}  // namespace eddy
