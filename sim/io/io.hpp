// io.hpp: files eddy writes. Every regular file is written to
// "<path>.tmp.<pid>" and renamed over <path> on commit(), so a crash mid-write
// never destroys the previous file. A symbolic link is followed first: its
// target is written (the temporary goes next to the target) and the link
// stays. A path that is a device node, a FIFO or a socket (/dev/null, a named
// pipe) is written in place instead: renaming over it would replace the node
// with a regular file. A path naming one of this process's descriptors
// (/dev/stdout, /dev/stderr, /proc/self/fd/N, /dev/fd/N) is written through
// that descriptor, whatever it is open on (a terminal, a pipe, a file).
#pragma once

#include "number_text.hpp"  // formatNumber, formatSignificant (for io.hpp users)

#include <ext/stdio_filebuf.h>  // libstdc++: a stream over a file descriptor

#include <fstream>
#include <functional>
#include <memory>
#include <ostream>
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

  std::ostream& stream() { return out_; }
  // Flushes, checks for write errors and renames into place. Throws eddy::Error.
  void commit();
  const std::string& path() const { return path_; }
  // True where the path is a device node, FIFO, socket or descriptor written in place.
  bool inPlace() const { return tmp_.empty(); }

 private:
  bool closeBuffer();  // false on a write error
  std::string path_;    // as given
  std::string target_;  // path_ with its symbolic links followed
  std::string tmp_;     // empty: written in place
  std::filebuf file_;
  std::unique_ptr<__gnu_cxx::stdio_filebuf<char>> fdBuf_;  // a descriptor of this process
  std::ostream out_{nullptr};
  bool committed_ = false;
};

// Where writing `path` goes: symbolic links followed (at most 40), stopping
// at a path that names one of this process's descriptors (fd >= 0 then).
struct OutputTarget {
  std::string path;
  int fd = -1;
};
OutputTarget resolveOutput(const std::string& path);

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

// The first of stem + ext, stem + "-2" + ext, stem + "-3" + ext, ... at
// which nothing exists (not even a broken symbolic link): a name of the
// app's own choosing (eddy-<time>.png, eddy-record-<time>) that writes over
// nothing, also when two are taken in the same second. Throws eddy::Error
// after 10 000 names.
std::string freshPath(const std::string& stem, const std::string& ext = "");
// Whether `name` is `prefix`, one or more digits, `suffix`: a numbered
// frame of a series (step_000000100.vtp, frame_000001.png).
bool isNumberedName(std::string_view name, std::string_view prefix, std::string_view suffix);
// Removes the files in folder `dir` (not in its subfolders, no folder) whose
// name `match` accepts: an earlier series before a new one is written there
// (--overwrite). Returns how many; nothing when `dir` is no folder. Throws
// eddy::Error naming `what` ("the export folder") when it cannot, and before
// removing anything when a folder there has a name `match` accepts.
size_t removeFilesIn(const std::string& dir, const std::function<bool(const std::string&)>& match,
                     const std::string& what);
// Text from a file or the user, fit to quote in a message: control
// characters, NUL and bytes that are not UTF-8 as \xNN (valid UTF-8 kept),
// cut to about maxChars characters with "..." after it.
std::string printable(std::string_view s, size_t maxChars = 80);
// Writes a CSV header and rows atomically.
void writeCsv(const std::string& path, const std::vector<std::string>& header,
              const std::vector<std::vector<double>>& rows);
// "a,b,c"
std::string joinCsv(const std::vector<std::string>& cells);
std::string joinCsv(const std::vector<double>& cells);

}  // namespace eddy
