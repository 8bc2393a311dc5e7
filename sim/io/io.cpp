#include "io.hpp"

#include "cl.hpp"

#include <charconv>
#include <cstdio>
#include <unistd.h>

namespace eddy {

AtomicFile::AtomicFile(std::string path, bool binary)
    : path_(std::move(path)), tmp_(path_ + ".tmp." + std::to_string(::getpid())) {
  out_.open(tmp_, binary ? std::ios::binary | std::ios::trunc : std::ios::trunc);
  if (!out_) throw Error(path_ + ": cannot open for writing (temporary " + tmp_ + ")");
}

AtomicFile::~AtomicFile() {
  if (!committed_) {
    out_.close();
    std::remove(tmp_.c_str());
  }
}

void AtomicFile::commit() {
  out_.flush();
  const bool ok = static_cast<bool>(out_);
  out_.close();
  if (!ok || out_.fail()) {
    std::remove(tmp_.c_str());
    committed_ = true;
    throw Error(path_ + ": write failed (disk full?); the previous file, if any, is untouched");
  }
  if (std::rename(tmp_.c_str(), path_.c_str()) != 0) {
    std::remove(tmp_.c_str());
    committed_ = true;
    throw Error(path_ + ": cannot rename the finished temporary file into place");
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
