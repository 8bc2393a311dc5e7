// io.hpp: files eddy writes. Every file is written to "<path>.tmp.<pid>" and
// renamed over <path> on commit(), so a crash mid-write never destroys the
// previous file.
#pragma once

#include <fstream>
#include <string>
#include <string_view>
#include <vector>

namespace eddy {

class AtomicFile {
 public:
  explicit AtomicFile(std::string path, bool binary = false);
  ~AtomicFile();  // removes the temporary file unless committed
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  std::ofstream& stream() { return out_; }
  // Flushes, checks for write errors and renames into place. Throws eddy::Error.
  void commit();
  const std::string& path() const { return path_; }

 private:
  std::string path_, tmp_;
  std::ofstream out_;
  bool committed_ = false;
};

// Shortest text that reads back as the same double.
std::string formatNumber(double v);
// Writes a CSV header and rows atomically.
void writeCsv(const std::string& path, const std::vector<std::string>& header,
              const std::vector<std::vector<double>>& rows);
// "a,b,c"
std::string joinCsv(const std::vector<std::string>& cells);
std::string joinCsv(const std::vector<double>& cells);

}  // namespace eddy
