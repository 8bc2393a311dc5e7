#include "io.hpp"

#include "cl.hpp"

#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <sys/stat.h>
#include <unistd.h>

namespace eddy {

namespace {

std::string tempName(const std::string& path) {
  return path + ".tmp." + std::to_string(::getpid());
}

// "" if a temporary file next to `path` can be created (and removes it), else why not.
std::string probeTemporary(const std::string& path) {
  const std::string tmp = tempName(path);
  std::FILE* f = std::fopen(tmp.c_str(), "wb");
  if (!f) {
    const int e = errno;
    std::string why = std::strerror(e);
    if (e == ENOENT) why += " (its folder does not exist)";
    else if (e == ENOTDIR) why += " (a part of the path is not a folder)";
    return why;
  }
  std::fclose(f);
  std::remove(tmp.c_str());
  return "";
}

}  // namespace

bool isSpecialFile(const std::string& path) {
  struct stat st{};
  return ::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode);
}

std::string outputFileProblem(const std::string& path) {
  if (path.empty()) return "the path is empty";
  struct stat st{};
  if (::stat(path.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode)) return std::string(std::strerror(EISDIR)) + " (a folder, not a file)";
    if (!S_ISREG(st.st_mode))
      return ::access(path.c_str(), W_OK) == 0 ? "" : std::strerror(errno);
  } else if (errno != ENOENT) {
    const int e = errno;
    return std::string(std::strerror(e)) +
           (e == ENOTDIR ? " (a part of the path is not a folder)" : "");
  }
  if (path.back() == '/') return std::string(std::strerror(EISDIR)) + " (the path ends in '/')";
  return probeTemporary(path);
}

std::string outputFolderProblem(const std::string& path) {
  namespace fs = std::filesystem;
  if (path.empty()) return "the path is empty";
  struct stat st{};
  if (::stat(path.c_str(), &st) == 0) {
    if (!S_ISDIR(st.st_mode)) return std::string(std::strerror(ENOTDIR)) + " (a file, not a folder)";
    return probeTemporary((fs::path(path) / "eddy.pvd").string());
  }
  if (errno != ENOENT) return std::strerror(errno);
  // Missing: it is created with its parents; the nearest existing ancestor decides.
  fs::path p = fs::absolute(fs::path(path)).lexically_normal();
  while (p.has_parent_path() && p != p.parent_path()) {
    p = p.parent_path();
    if (::stat(p.c_str(), &st) == 0) {
      if (!S_ISDIR(st.st_mode))
        return std::string(std::strerror(ENOTDIR)) + " ('" + p.string() + "' is a file)";
      if (::access(p.c_str(), W_OK | X_OK) != 0)
        return std::string(std::strerror(errno)) + " (cannot create a folder in '" + p.string() + "')";
      return "";
    }
  }
  return "";
}

AtomicFile::AtomicFile(std::string path, bool binary) : path_(std::move(path)) {
  const auto mode = binary ? std::ios::binary | std::ios::trunc : std::ios::trunc;
  if (isSpecialFile(path_)) {
    // A device node, FIFO or socket: written in place (a rename would replace it).
    out_.open(path_, mode | std::ios::out);
    if (!out_) throw Error(path_ + ": cannot open for writing: " + std::strerror(errno));
    return;
  }
  tmp_ = tempName(path_);
  out_.open(tmp_, mode);
  if (!out_)
    throw Error(path_ + ": cannot open for writing (temporary " + tmp_ + "): " + std::strerror(errno));
}

AtomicFile::~AtomicFile() {
  if (!committed_) {
    out_.close();
    if (!tmp_.empty()) std::remove(tmp_.c_str());
  }
}

void AtomicFile::commit() {
  out_.flush();
  const bool ok = static_cast<bool>(out_);
  out_.close();
  if (!ok || out_.fail()) {
    if (!tmp_.empty()) std::remove(tmp_.c_str());
    committed_ = true;
    throw Error(path_ + (tmp_.empty() ? ": write failed"
                                      : ": write failed (disk full?); the previous file, if any, "
                                        "is untouched"));
  }
  if (!tmp_.empty() && std::rename(tmp_.c_str(), path_.c_str()) != 0) {
    const std::string why = std::strerror(errno);
    std::remove(tmp_.c_str());
    committed_ = true;
    throw Error(path_ + ": cannot rename the finished temporary file into place: " + why);
  }
  committed_ = true;
}

std::string formatNumber(double v) {
  char buf[64];
  const auto [ptr, ec] = std::to_chars(buf, buf + sizeof buf, v);
  return ec == std::errc() ? std::string(buf, ptr) : std::string("nan");
}

std::string joinCsv(const std::vector<std::string>& cells) {
  std::string s;
  for (size_t i = 0; i < cells.size(); ++i) s += (i ? "," : "") + cells[i];
  return s;
}

std::string joinCsv(const std::vector<double>& cells) {
  std::string s;
  for (size_t i = 0; i < cells.size(); ++i) s += (i ? "," : "") + formatNumber(cells[i]);
  return s;
}

void writeCsv(const std::string& path, const std::vector<std::string>& header,
              const std::vector<std::vector<double>>& rows) {
  AtomicFile f(path);
  f.stream() << joinCsv(header) << '\n';
  for (const auto& r : rows) f.stream() << joinCsv(r) << '\n';
  f.commit();
}

}  // namespace eddy
