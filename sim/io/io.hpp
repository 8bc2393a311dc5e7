// io.hpp: files eddy writes. Every regular file is written to
// "<path>.tmp.<pid>" and renamed over <path> on commit(), so a crash mid-write
// never destroys the previous file. A path that is a device node, a FIFO or a
// socket (/dev/null, /dev/stdout, a named pipe) is written in place instead:
// renaming over it would replace the node with a regular file.
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
  // True where the path is a device node, FIFO or socket written in place.
  bool inPlace() const { return tmp_.empty(); }

 private:
  std::string path_, tmp_;  // tmp_ empty: written in place
  std::ofstream out_;
  bool committed_ = false;
};

// True if `path` exists and is neither a regular file nor a folder (a device
// node such as /dev/null, a FIFO, a socket); follows symbolic links.
bool isSpecialFile(const std::string& path);

// Checks before a run that `path` can be written as an output file the way
// AtomicFile writes it: not empty, not a folder, its folder exists and takes a
// temporary file (a special file: writable). Returns "" if fine, else the
// reason (strerror text and what it means), for the caller to name the flag.
std::string outputFileProblem(const std::string& path);
// The same for an output folder (created if missing, with its parents): not
// empty, not a file, the nearest existing ancestor a writable folder.
std::string outputFolderProblem(const std::string& path);

// Shortest text that reads back as the same double.
std::string formatNumber(double v);
// Writes a CSV header and rows atomically.
void writeCsv(const std::string& path, const std::vector<std::string>& header,
              const std::vector<std::vector<double>>& rows);
// "a,b,c"
std::string joinCsv(const std::vector<std::string>& cells);
std::string joinCsv(const std::vector<double>& cells);

}  // namespace eddy
