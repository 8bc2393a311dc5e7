#include "snapshot.hpp"

#include "io.hpp"

#include <array>
#include <bit>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sys/stat.h>

namespace eddy {

static_assert(std::endian::native == std::endian::little,
              "snapshots store particle arrays in little-endian byte order");

namespace {

const std::array<uint32_t, 256>& crcTable() {
  static const std::array<uint32_t, 256> table = [] {
    std::array<uint32_t, 256> t{};
    for (uint32_t i = 0; i < 256; ++i) {
      uint32_t c = i;
      for (int k = 0; k < 8; ++k) c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
      t[i] = c;
    }
    return t;
  }();
  return table;
}

void putU16(std::string& s, uint16_t v) {
  for (int i = 0; i < 2; ++i) s.push_back(char((v >> (8 * i)) & 0xff));
}
void putU32(std::string& s, uint32_t v) {
  for (int i = 0; i < 4; ++i) s.push_back(char((v >> (8 * i)) & 0xff));
}
void putU64(std::string& s, uint64_t v) {
  for (int i = 0; i < 8; ++i) s.push_back(char((v >> (8 * i)) & 0xff));
}
uint64_t getLE(std::string_view s, size_t at, int bytes) {
  uint64_t v = 0;
  for (int i = 0; i < bytes; ++i) v |= uint64_t(uint8_t(s[at + i])) << (8 * i);
  return v;
}

}  // namespace

uint32_t crc32(const void* data, size_t bytes, uint32_t crc) {
  const auto& t = crcTable();
  const auto* p = static_cast<const uint8_t*>(data);
  crc = ~crc;
  for (size_t i = 0; i < bytes; ++i) crc = t[(crc ^ p[i]) & 0xff] ^ (crc >> 8);
  return ~crc;
}

void SnapshotWriter::add(std::string_view name, const void* data, size_t bytes) {
  if (name.empty() || name.size() > 255)
    throw Error("snapshot blob name '" + std::string(name) + "' must be 1..255 characters");
  for (const auto& b : blobs_)
    if (b.name == name) throw Error("snapshot blob '" + std::string(name) + "' added twice");
  if (blobs_.size() >= kSnapshotMaxBlobs) throw Error("too many snapshot blobs");
  blobs_.push_back({std::string(name), std::string(static_cast<const char*>(data), bytes)});
}

void SnapshotWriter::addU64(std::string_view name, uint64_t v) {
  std::string s;
  putU64(s, v);
  add(name, s.data(), s.size());
}

void SnapshotWriter::addF64(std::string_view name, double v) {
  addU64(name, std::bit_cast<uint64_t>(v));
}

std::string SnapshotWriter::bytes() const {
  size_t total = kSnapshotHeaderBytes + 4;
  for (const auto& b : blobs_) total += 2 + b.name.size() + 8 + b.data.size();
  std::string s;
  s.reserve(total);
  s.append(kSnapshotMagic, sizeof kSnapshotMagic);
  putU32(s, kSnapshotVersion);
  putU32(s, uint32_t(blobs_.size()));
  putU64(s, total);
  for (const auto& b : blobs_) {
    putU16(s, uint16_t(b.name.size()));
    s += b.name;
    putU64(s, b.data.size());
    s += b.data;
  }
  putU32(s, crc32(s.data(), s.size()));
  return s;
}

void SnapshotWriter::write(const std::string& path) const {
  const std::string b = bytes();
  AtomicFile f(path, true);
  f.stream().write(b.data(), std::streamsize(b.size()));
  f.commit();
}

void Snapshot::fail(const std::string& why) const {
  throw Error(source_ + ": not a valid eddy snapshot: " + why);
}

Snapshot Snapshot::parse(std::string bytes, std::string source) {
  Snapshot s;
  s.source_ = std::move(source);
  const std::string_view d = bytes;
  if (d.size() < 8 || d.substr(0, 8) != std::string_view(kSnapshotMagic, 8))
    s.fail("wrong magic (expected the file to start with 'EDDYSNAP')");
  if (d.size() < 12)
    s.fail("truncated: " + std::to_string(d.size()) + " bytes, shorter than the header");
  const uint64_t version = getLE(d, 8, 4);
  if (version != kSnapshotVersion)
    s.fail("format version " + std::to_string(version) + ", this eddy reads version " +
           std::to_string(kSnapshotVersion));
  if (d.size() < kSnapshotHeaderBytes + 4)
    s.fail("truncated: " + std::to_string(d.size()) + " bytes, shorter than the header");
  const uint64_t count = getLE(d, 12, 4);
  const uint64_t size = getLE(d, 16, 8);
  if (size != d.size())
    s.fail("the header records " + std::to_string(size) + " bytes but the file has " +
           std::to_string(d.size()) + (size > d.size() ? " (truncated)" : ""));
  const uint32_t stored = uint32_t(getLE(d, d.size() - 4, 4));
  const uint32_t actual = crc32(d.data(), d.size() - 4);
#ifndef FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION
  // (Fuzzing builds skip only this test, so the fuzzer reaches the decoder.)
  if (stored != actual) s.fail("checksum mismatch (the file is corrupt)");
#else
  (void)stored;
  (void)actual;
#endif
  if (count > kSnapshotMaxBlobs) s.fail("absurd blob count " + std::to_string(count));
  const size_t end = d.size() - 4;
  size_t at = kSnapshotHeaderBytes;
  s.entries_.reserve(count);
  for (uint64_t i = 0; i < count; ++i) {
    if (end - at < 2) s.fail("blob " + std::to_string(i) + " runs past the end");
    const size_t nameLen = getLE(d, at, 2);
    at += 2;
    if (nameLen == 0 || end - at < nameLen + 8)
      s.fail("blob " + std::to_string(i) + " has a bad name or runs past the end");
    std::string name(d.substr(at, nameLen));
    at += nameLen;
    const uint64_t blobSize = getLE(d, at, 8);
    at += 8;
    if (blobSize > end - at)
      s.fail("blob '" + name + "' claims " + std::to_string(blobSize) + " bytes, only " +
             std::to_string(end - at) + " remain");
    if (s.has(name)) s.fail("blob '" + name + "' appears twice");
    s.entries_.push_back({std::move(name), at, size_t(blobSize)});
    at += blobSize;
  }
  if (at != end) s.fail(std::to_string(end - at) + " stray bytes after the last blob");
  s.data_ = std::move(bytes);
  return s;
}

Snapshot Snapshot::read(const std::string& path) {
  // The type first: opening a FIFO waits for a writer (forever), and a
  // device or folder is no snapshot either.
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0)
    throw Error(path + ": cannot open snapshot (" + std::strerror(errno) + ")");
  if (!S_ISREG(st.st_mode)) throw Error(path + ": not a regular file");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(path + ": cannot open snapshot");
  const uint64_t fileSize = uint64_t(st.st_size);
  // Header first: magic, version and the recorded size must agree with the
  // file before its body is read into memory.
  std::string head(std::min<uint64_t>(fileSize, kSnapshotHeaderBytes), '\0');
  in.read(head.data(), std::streamsize(head.size()));
  if (size_t(in.gcount()) != head.size()) throw Error(path + ": read error");
  if (head.size() == kSnapshotHeaderBytes && head.compare(0, 8, kSnapshotMagic, 8) == 0 &&
      getLE(head, 8, 4) == kSnapshotVersion && getLE(head, 16, 8) != fileSize) {
    const uint64_t recorded = getLE(head, 16, 8);
    throw Error(path + ": not a valid eddy snapshot: the header records " +
                std::to_string(recorded) + " bytes but the file has " +
                std::to_string(fileSize) + (recorded > fileSize ? " (truncated)" : ""));
  }
  if (head.size() < kSnapshotHeaderBytes || head.compare(0, 8, kSnapshotMagic, 8) != 0 ||
      getLE(head, 8, 4) != kSnapshotVersion)
    return parse(head, path);  // reports the magic / version / truncation problem
  std::string all(fileSize, '\0');
  std::memcpy(all.data(), head.data(), head.size());
  in.read(all.data() + head.size(), std::streamsize(fileSize - head.size()));
  if (uint64_t(in.gcount()) != fileSize - head.size()) throw Error(path + ": read error");
  return parse(std::move(all), path);
}

bool Snapshot::has(std::string_view name) const {
  for (const auto& e : entries_)
    if (e.name == name) return true;
  return false;
}

std::vector<std::string> Snapshot::names() const {
  std::vector<std::string> out;
  for (const auto& e : entries_) out.push_back(e.name);
  return out;
}

std::string_view Snapshot::blob(std::string_view name) const {
  for (const auto& e : entries_)
    if (e.name == name) return std::string_view(data_).substr(e.offset, e.size);
  fail("blob '" + std::string(name) + "' is missing");
}

uint64_t Snapshot::u64(std::string_view name) const {
  const auto b = blob(name);
  if (b.size() != 8) fail("blob '" + std::string(name) + "' is not 8 bytes");
  return getLE(b, 0, 8);
}

double Snapshot::f64(std::string_view name) const { return std::bit_cast<double>(u64(name)); }

}  // namespace eddy
