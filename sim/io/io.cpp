#include "io.hpp"

#include "cl.hpp"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fcntl.h>
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
    if (e == ENOENT) {
      // A folder that exists but takes no new files (/proc) also answers ENOENT.
      std::error_code ec;
      const auto folder = std::filesystem::absolute(path, ec).parent_path();
      why += !ec && std::filesystem::is_directory(folder, ec)
                 ? " (no new file can be created in '" + folder.string() + "')"
                 : " (its folder does not exist)";
    } else if (e == ENOTDIR) {
      why += " (a part of the path is not a folder)";
    }
    return why;
  }
  std::fclose(f);
  std::remove(tmp.c_str());
  return "";
}

// "/proc/self/fd/N", "/proc/thread-self/fd/N", "/proc/<this pid>/fd/N" or
// "/dev/fd/N": N, else -1. Such a path names this process's open descriptor
// (/dev/stdout is a symbolic link to /proc/self/fd/1).
int descriptorOf(const std::string& path) {
  std::string rest;
  for (const std::string& prefix : {std::string("/proc/self/fd/"), std::string("/proc/thread-self/fd/"),
                                   "/proc/" + std::to_string(::getpid()) + "/fd/", std::string("/dev/fd/")})
    if (path.rfind(prefix, 0) == 0) {
      rest = path.substr(prefix.size());
      if (rest.empty() || rest.size() > 9 ||
          !std::all_of(rest.begin(), rest.end(), [](char c) { return c >= '0' && c <= '9'; }))
        return -1;
      return std::stoi(rest);
    }
  return -1;
}

}  // namespace

OutputTarget resolveOutput(const std::string& path) {
  OutputTarget t{path, -1};
  for (int hops = 0; hops < 40; ++hops) {
    if ((t.fd = descriptorOf(t.path)) >= 0) return t;
    struct stat st{};
    if (::lstat(t.path.c_str(), &st) != 0 || !S_ISLNK(st.st_mode)) return t;
    std::vector<char> buf(4096);
    const ssize_t n = ::readlink(t.path.c_str(), buf.data(), buf.size() - 1);
    if (n <= 0) return t;
    const std::string target(buf.data(), size_t(n));
    if (target[0] == '/') {
      t.path = target;
    } else {
      const size_t slash = t.path.rfind('/');
      t.path = slash == std::string::npos ? target : t.path.substr(0, slash + 1) + target;
    }
  }
  return t;  // a loop of links: opening it reports ELOOP
}

bool isSpecialFile(const std::string& path) {
  struct stat st{};
  return ::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode);
}

std::string outputFileProblem(const std::string& given) {
  if (given.empty()) return "the path is empty";
  // A symbolic link is written through: its target is what must work.
  const OutputTarget t = resolveOutput(given);
  if (t.fd >= 0) {
    const int flags = ::fcntl(t.fd, F_GETFL);
    if (flags < 0) return std::string(std::strerror(EBADF)) + " (descriptor " + std::to_string(t.fd) + " is not open)";
    if ((flags & O_ACCMODE) == O_RDONLY)
      return std::string(std::strerror(EBADF)) + " (descriptor " + std::to_string(t.fd) + " is open read-only)";
    return "";
  }
  const std::string& path = t.path;
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
    const fs::path child = p;
    p = p.parent_path();
    if (::stat(p.c_str(), &st) == 0) {
      if (!S_ISDIR(st.st_mode))
        return std::string(std::strerror(ENOTDIR)) + " ('" + p.string() + "' is a file)";
      if (::access(p.c_str(), W_OK | X_OK) != 0)
        return std::string(std::strerror(errno)) + " (cannot create a folder in '" + p.string() + "')";
      // Permission bits are not the whole story (/proc, a read-only mount
      // for root): create the first missing folder and take it away again.
      if (::mkdir(child.c_str(), 0777) != 0) {
        if (errno == EEXIST) return "";  // made meanwhile: the export will find it
        return std::string(std::strerror(errno)) + " (cannot create a folder in '" + p.string() + "')";
      }
      ::rmdir(child.c_str());
      return "";
    }
  }
  return "";
}

AtomicFile::AtomicFile(std::string path, bool binary) : path_(std::move(path)) {
  const auto mode = binary ? std::ios::binary | std::ios::trunc : std::ios::trunc;
  const OutputTarget t = resolveOutput(path_);
  if (t.fd >= 0) {
    // This process's own descriptor (/dev/stdout, /proc/self/fd/N): written
    // through a duplicate of it, sharing its file offset (reopening the path
    // would start a second offset at 0, or truncate the file behind it).
    const int fd = ::fcntl(t.fd, F_DUPFD_CLOEXEC, 3);
    if (fd < 0) throw Error(path_ + ": cannot write to descriptor " + std::to_string(t.fd) + ": " + std::strerror(errno));
    fdBuf_ = std::make_unique<__gnu_cxx::stdio_filebuf<char>>(fd, std::ios::out | (binary ? std::ios::binary : std::ios::openmode{}));
    if (!fdBuf_->is_open()) {
      ::close(fd);
      throw Error(path_ + ": cannot write to descriptor " + std::to_string(t.fd));
    }
    out_.rdbuf(fdBuf_.get());
    return;
  }
  target_ = t.path;  // a symbolic link is written through to the file it names
  out_.rdbuf(&file_);
  if (isSpecialFile(target_)) {
    // A device node, FIFO or socket: written in place (a rename would replace it).
    if (!file_.open(target_, mode | std::ios::out))
      throw Error(path_ + ": cannot open for writing: " + std::strerror(errno));
    return;
  }
  tmp_ = tempName(target_);
  if (!file_.open(tmp_, mode | std::ios::out))
    throw Error(path_ + ": cannot open for writing (temporary " + tmp_ + "): " + std::strerror(errno));
}

AtomicFile::~AtomicFile() {
  if (!committed_) {
    closeBuffer();
    if (!tmp_.empty()) std::remove(tmp_.c_str());
  }
}

bool AtomicFile::closeBuffer() {
  if (fdBuf_) return fdBuf_->close() != nullptr;
  return file_.close() != nullptr;
}

void AtomicFile::commit() {
  errno = 0;
  out_.flush();
  bool ok = static_cast<bool>(out_);
  if (!closeBuffer()) ok = false;
  if (!ok) {
    const int e = errno;  // the failed write's reason, where the library kept it
    if (!tmp_.empty()) std::remove(tmp_.c_str());
    committed_ = true;
    const std::string why = e ? std::string(": ") + std::strerror(e) : std::string(tmp_.empty() ? "" : " (disk full?)");
    throw Error(path_ + ": write failed" + why +
                (tmp_.empty() ? "" : "; the previous file, if any, is untouched"));
  }
  // The replacement keeps the replaced file's permission bits (and, where
  // this process may, its owner): a new file gets the umask's.
  struct stat old {};
  if (!tmp_.empty() && ::stat(target_.c_str(), &old) == 0 && S_ISREG(old.st_mode)) {
    if (::chmod(tmp_.c_str(), old.st_mode & 07777) != 0) {
      const std::string why = std::strerror(errno);
      std::remove(tmp_.c_str());
      committed_ = true;
      throw Error(path_ + ": cannot give the new file the old one's permissions: " + why +
                  "; the previous file is untouched");
    }
    if (::chown(tmp_.c_str(), old.st_uid, old.st_gid) != 0) {
      // not the owner's to give (not root): the new file is this user's
    }
  }
  if (!tmp_.empty() && std::rename(tmp_.c_str(), target_.c_str()) != 0) {
    const std::string why = std::strerror(errno);
    std::remove(tmp_.c_str());
    committed_ = true;
    throw Error(path_ + ": cannot rename the finished temporary file into place: " + why);
  }
  committed_ = true;
}

std::string freshPath(const std::string& stem, const std::string& ext) {
  namespace fs = std::filesystem;
  for (int k = 1; k <= 10000; ++k) {
    const std::string p = stem + (k == 1 ? std::string() : "-" + std::to_string(k)) + ext;
    std::error_code ec;
    const fs::file_status st = fs::symlink_status(p, ec);
    if (st.type() == fs::file_type::not_found) return p;
  }
  throw Error("no free name like " + printable(stem + ext) + " (10 000 taken)");
}

bool isNumberedName(std::string_view name, std::string_view prefix, std::string_view suffix) {
  if (name.size() <= prefix.size() + suffix.size() || name.substr(0, prefix.size()) != prefix ||
      name.substr(name.size() - suffix.size()) != suffix)
    return false;
  const std::string_view digits = name.substr(prefix.size(), name.size() - prefix.size() - suffix.size());
  return std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; });
}

size_t removeFilesIn(const std::string& dir, const std::function<bool(const std::string&)>& match,
                     const std::string& what) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return 0;
  std::vector<fs::path> old;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    if (!match(e.path().filename().string())) continue;
    // A folder with a file's name: the run could not write that file later,
    // after stepping and after the others had gone. Refused before anything goes.
    if (e.is_directory(ec))
      throw Error(e.path().string() + ": a folder where " + what + " keeps a file of that name; remove or "
                  "rename it (nothing was removed)");
    old.push_back(e.path());
  }
  if (ec) throw Error(dir + ": cannot list " + what + " (" + ec.message() + ")");
  for (const auto& p : old)
    if (!fs::remove(p, ec) && ec) throw Error(p.string() + ": cannot remove it from " + what + " (" + ec.message() + ")");
  return old.size();
}

std::string printable(std::string_view s, size_t maxChars) {
  static const char* kHex = "0123456789abcdef";
  std::string out;
  size_t chars = 0;
  for (size_t i = 0; i < s.size();) {
    if (chars >= maxChars) {
      out += "...";
      break;
    }
    const auto c = static_cast<unsigned char>(s[i]);
    // The length of a valid UTF-8 sequence starting here (0: not one).
    size_t len = 0;
    if (c >= 0x20 && c < 0x7f) len = 1;
    else if (c >= 0xc2 && c <= 0xdf) len = 2;
    else if (c >= 0xe0 && c <= 0xef) len = 3;
    else if (c >= 0xf0 && c <= 0xf4) len = 4;
    if (len > 1) {
      if (i + len > s.size()) len = 0;
      for (size_t k = 1; len && k < len; ++k)
        if ((static_cast<unsigned char>(s[i + k]) & 0xc0) != 0x80) len = 0;
      if (len == 3) {  // no overlong forms, no surrogates
        const auto c1 = static_cast<unsigned char>(s[i + 1]);
        if ((c == 0xe0 && c1 < 0xa0) || (c == 0xed && c1 >= 0xa0)) len = 0;
      } else if (len == 4) {  // no overlong forms, nothing past U+10FFFF
        const auto c1 = static_cast<unsigned char>(s[i + 1]);
        if ((c == 0xf0 && c1 < 0x90) || (c == 0xf4 && c1 >= 0x90)) len = 0;
      }
    }
    // Valid but invisible or reordering: C1 controls, the soft hyphen,
    // zero-width characters and direction marks, line and paragraph
    // separators, bidi embeddings, overrides and isolates, the byte order
    // mark. Shown as \uXXXX: a second BOM before a header read as nothing,
    // and a bidi override could make a name in a message read as another.
    if (len >= 2) {
      uint32_t cp = c & (len == 2 ? 0x1f : len == 3 ? 0x0f : 0x07);
      for (size_t k = 1; k < len; ++k) cp = (cp << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3f);
      const bool hidden = (cp >= 0x80 && cp <= 0x9f) || cp == 0xad || (cp >= 0x200b && cp <= 0x200f) ||
                          (cp >= 0x2028 && cp <= 0x202e) || (cp >= 0x2060 && cp <= 0x2069) || cp == 0xfeff;
      if (hidden) {
        out += "\\u";
        for (int shift = 12; shift >= 0; shift -= 4) out += kHex[(cp >> shift) & 15];
        i += len;
        ++chars;
        continue;
      }
    }
    if (len == 0) {
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 15];
      ++i;
    } else {
      out.append(s.substr(i, len));
      i += len;
    }
    ++chars;
  }
  return out;
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
