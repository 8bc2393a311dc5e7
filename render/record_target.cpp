#include "record_target.hpp"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <unistd.h>

namespace eddy {

bool isVideoTarget(const std::string& t) {
  const auto dot = t.find_last_of('.');
  if (dot == std::string::npos || t.find('/', dot) != std::string::npos) return false;
  std::string ext = t.substr(dot + 1);
  for (char& c : ext) c = char(std::tolower(static_cast<unsigned char>(c)));
  return ext == "mp4" || ext == "mkv" || ext == "mov" || ext == "webm";
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

}  // namespace eddy
