#include "record_target.hpp"

#include "error.hpp"
#include "io.hpp"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <unistd.h>
#include <vector>

namespace eddy {

namespace {
// The extension after the last dot of the last path element, lower case ("" if none).
std::string extensionOf(const std::string& t) {
  const auto dot = t.find_last_of('.');
  if (dot == std::string::npos || t.find('/', dot) != std::string::npos) return "";
  std::string ext = t.substr(dot + 1);
  for (char& c : ext) c = char(std::tolower(static_cast<unsigned char>(c)));
  return ext;
}
}  // namespace

bool isVideoTarget(const std::string& t) {
  const std::string ext = extensionOf(t);
  return ext == "mp4" || ext == "mkv" || ext == "mov" || ext == "webm";
}

std::string fileLikeExtension(const std::string& t) {
  static const char* const kFileLike[] = {"png", "jpg", "jpeg", "bmp", "gif", "tif", "tiff", "ppm",
                                          "pgm", "webp", "exr", "avi", "m4v", "mpg", "mpeg",
                                          "ogv", "wmv", "flv", "y4m"};
  const std::string ext = extensionOf(t);
  for (const char* e : kFileLike)
    if (ext == e) return ext;
  return "";
}

std::string findOnPath(const std::string& name) {
  const char* path = std::getenv("PATH");
  if (!path) return "";
  std::string p = path;
  size_t start = 0;
  while (start <= p.size()) {
    const size_t end = std::min(p.find(':', start), p.size());
    const std::string dir = end > start ? p.substr(start, end - start) : ".";
    const std::string full = dir + "/" + name;
    if (::access(full.c_str(), X_OK) == 0 && !std::filesystem::is_directory(full)) return full;
    start = end + 1;
  }
  return "";
}

std::string framePath(const std::string& dir, uint64_t index) {
  char name[32];
  std::snprintf(name, sizeof name, "frame_%06llu.png", static_cast<unsigned long long>(index));
  return dir + "/" + name;
}

bool isRecordFrameName(const std::string& name) { return isNumberedName(name, "frame_", ".png"); }

size_t removeOldRecording(const std::string& dir) {
  return removeFilesIn(dir, isRecordFrameName, "the recording folder");
}

}  // namespace eddy
