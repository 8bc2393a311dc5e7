// snapshot.hpp: the versioned binary container of restart snapshots.
//
// Generic: a snapshot is a list of named blobs; simulations add their own
// (Simulation::saveState) next to the generic ones (sim/factory.cpp). Layout,
// all integers little-endian:
//
//   offset 0   8 bytes  magic "EDDYSNAP"
//          8   u32      format version (kSnapshotVersion)
//         12   u32      number of blobs
//         16   u64      total file size in bytes, trailer included
//         24   blobs:   u16 name length (1..255), name bytes, u64 size, data
//   size - 4   u32      CRC-32 (IEEE 802.3) of bytes [0, size - 4)
//
// The reader checks magic, version, the recorded size against the real file
// size, every blob's bounds and the checksum before anything is decoded, so a
// truncated, corrupt or lying file is rejected before any large allocation.
#pragma once

#include "error.hpp"

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

namespace eddy {

inline constexpr char kSnapshotMagic[8] = {'E', 'D', 'D', 'Y', 'S', 'N', 'A', 'P'};
inline constexpr uint32_t kSnapshotVersion = 1;
inline constexpr uint32_t kSnapshotMaxBlobs = 65536;
inline constexpr size_t kSnapshotHeaderBytes = 24;

// CRC-32 (IEEE 802.3, reflected polynomial 0xEDB88320), as zlib's crc32().
uint32_t crc32(const void* data, size_t bytes, uint32_t crc = 0);

class SnapshotWriter {
 public:
  void add(std::string_view name, const void* data, size_t bytes);
  void addString(std::string_view name, std::string_view text) {
    add(name, text.data(), text.size());
  }
  void addU64(std::string_view name, uint64_t v);
  void addF64(std::string_view name, double v);
  template <class T>
  void addArray(std::string_view name, const std::vector<T>& v) {
    add(name, v.data(), v.size() * sizeof(T));
  }
  // The complete file contents.
  std::string bytes() const;
  // Writes the file atomically (temporary + rename).
  void write(const std::string& path) const;

 private:
  struct Blob {
    std::string name, data;
  };
  std::vector<Blob> blobs_;
};

class Snapshot {
 public:
  // Validates the container; `source` names it in messages (a path).
  static Snapshot parse(std::string bytes, std::string source);
  // Reads and validates a file (header and size checked before the body is read).
  static Snapshot read(const std::string& path);

  const std::string& source() const { return source_; }
  bool has(std::string_view name) const;
  std::vector<std::string> names() const;
  // Each throws eddy::Error naming the file and the blob when it is missing or
  // of the wrong size.
  std::string_view blob(std::string_view name) const;
  std::string string(std::string_view name) const { return std::string(blob(name)); }
  uint64_t u64(std::string_view name) const;
  double f64(std::string_view name) const;
  template <class T>
  std::vector<T> array(std::string_view name, size_t count) const {
    const std::string_view b = blob(name);
    if (count > b.size() / sizeof(T) || b.size() != count * sizeof(T))
      fail("blob '" + std::string(name) + "' holds " + std::to_string(b.size()) +
           " bytes, expected " + std::to_string(count) + " x " + std::to_string(sizeof(T)));
    std::vector<T> out(count);
    if (count) std::memcpy(out.data(), b.data(), b.size());
    return out;
  }
  [[noreturn]] void fail(const std::string& why) const;

 private:
  struct Entry {
    std::string name;
    size_t offset, size;
  };
  std::string data_, source_;
  std::vector<Entry> entries_;
};

}  // namespace eddy
