#include "vtk.hpp"

#include "cl.hpp"
#include "io.hpp"

#include <bit>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <sstream>

namespace eddy {

static_assert(std::endian::native == std::endian::little, "VTK files are written little-endian");

namespace {

std::string xmlEscape(const std::string& s) {
  std::string o;
  for (const char c : s) {
    switch (c) {
      case '&': o += "&amp;"; break;
      case '<': o += "&lt;"; break;
      case '>': o += "&gt;"; break;
      case '"': o += "&quot;"; break;
      case '\'': o += "&apos;"; break;
      default: o += c;
    }
  }
  return o;
}

struct Block {
  const void* data;
  uint64_t bytes;
};

}  // namespace

void writeVtp(const std::string& path, const ParticleState& f) {
  const size_t n = f.size();
  if (f.positions.size() != 3 * n) throw Error(path + ": positions are not x,y,z triples");
  if (n > 0x7fffffffu) throw Error(path + ": too many points for a .vtp (limit 2^31 - 1)");
  for (const auto& a : f.arrays)
    if (a.components == 0 || a.values.size() != size_t(a.components) * n)
      throw Error(path + ": point array '" + a.name + "' has " + std::to_string(a.values.size()) +
                  " values for " + std::to_string(n) + " points");
  std::vector<int32_t> connectivity(n), offsets(n);
  for (size_t i = 0; i < n; ++i) {
    connectivity[i] = int32_t(i);
    offsets[i] = int32_t(i + 1);
  }

  std::vector<Block> blocks;
  uint64_t offset = 0;
  auto appended = [&](const void* data, uint64_t bytes) {
    const uint64_t at = offset;
    blocks.push_back({data, bytes});
    offset += sizeof(uint64_t) + bytes;
    return at;
  };

  std::ostringstream x;
  x << "<?xml version=\"1.0\"?>\n"
    << "<VTKFile type=\"PolyData\" version=\"1.0\" byte_order=\"LittleEndian\" "
       "header_type=\"UInt64\">\n"
    << "  <PolyData>\n"
    << "    <FieldData>\n"
    << "      <DataArray type=\"Float64\" Name=\"TimeValue\" NumberOfTuples=\"1\" "
       "format=\"ascii\">"
    << formatNumber(f.time) << "</DataArray>\n"
    << "      <DataArray type=\"UInt64\" Name=\"Step\" NumberOfTuples=\"1\" format=\"ascii\">"
    << f.step << "</DataArray>\n"
    << "    </FieldData>\n"
    << "    <Piece NumberOfPoints=\"" << n << "\" NumberOfVerts=\"" << n
    << "\" NumberOfLines=\"0\" NumberOfStrips=\"0\" NumberOfPolys=\"0\">\n";
  x << "      <PointData";
  for (const auto& a : f.arrays)
    if (a.components == 3) {
      x << " Vectors=\"" << xmlEscape(a.name) << "\"";
      break;
    }
  for (const auto& a : f.arrays)
    if (a.components == 1) {
      x << " Scalars=\"" << xmlEscape(a.name) << "\"";
      break;
    }
  x << ">\n";
  for (const auto& a : f.arrays)
    x << "        <DataArray type=\"Float32\" Name=\"" << xmlEscape(a.name)
      << "\" NumberOfComponents=\"" << a.components << "\" format=\"appended\" offset=\""
      << appended(a.values.data(), a.values.size() * sizeof(float)) << "\"/>\n";
  x << "      </PointData>\n"
    << "      <Points>\n"
    << "        <DataArray type=\"Float32\" Name=\"Points\" NumberOfComponents=\"3\" "
       "format=\"appended\" offset=\""
    << appended(f.positions.data(), f.positions.size() * sizeof(float)) << "\"/>\n"
    << "      </Points>\n"
    << "      <Verts>\n"
    << "        <DataArray type=\"Int32\" Name=\"connectivity\" format=\"appended\" offset=\""
    << appended(connectivity.data(), n * sizeof(int32_t)) << "\"/>\n"
    << "        <DataArray type=\"Int32\" Name=\"offsets\" format=\"appended\" offset=\""
    << appended(offsets.data(), n * sizeof(int32_t)) << "\"/>\n"
    << "      </Verts>\n"
    << "    </Piece>\n"
    << "  </PolyData>\n"
    << "  <AppendedData encoding=\"raw\">\n   _";

  AtomicFile file(path, true);
  auto& out = file.stream();
  const std::string head = x.str();
  out.write(head.data(), std::streamsize(head.size()));
  for (const auto& b : blocks) {
    out.write(reinterpret_cast<const char*>(&b.bytes), sizeof b.bytes);
    out.write(static_cast<const char*>(b.data), std::streamsize(b.bytes));
  }
  out << "\n  </AppendedData>\n</VTKFile>\n";
  file.commit();
}

bool isExportFrameName(const std::string& name) { return isNumberedName(name, "step_", ".vtp"); }

size_t removeOldExport(const std::string& dir, const std::string& name) {
  return removeFilesIn(
      dir, [&name](const std::string& f) { return f == name || isExportFrameName(f); }, "the export folder");
}

VtkSeries::VtkSeries(std::string dir, std::string name) : dir_(std::move(dir)) {
  std::error_code ec;
  std::filesystem::create_directories(dir_, ec);
  if (ec || !std::filesystem::is_directory(dir_))
    throw Error(dir_ + ": cannot create the export folder" + (ec ? " (" + ec.message() + ")" : ""));
  pvd_ = (std::filesystem::path(dir_) / name).string();
}

void VtkSeries::add(const ParticleState& frame) {
  char file[64];
  std::snprintf(file, sizeof file, "step_%09llu.vtp", frame.step);
  writeVtp((std::filesystem::path(dir_) / file).string(), frame);
  bool replaced = false;
  for (size_t i = 0; i < steps_.size(); ++i)
    if (steps_[i] == frame.step) {
      entries_[i] = {frame.time, file};
      replaced = true;
    }
  if (!replaced) {
    steps_.push_back(frame.step);
    entries_.emplace_back(frame.time, file);
  }
  AtomicFile pvd(pvd_);
  auto& o = pvd.stream();
  o << "<?xml version=\"1.0\"?>\n"
    << "<VTKFile type=\"Collection\" version=\"1.0\" byte_order=\"LittleEndian\">\n"
    << "  <Collection>\n";
  for (const auto& [t, f] : entries_)
    o << "    <DataSet timestep=\"" << formatNumber(t) << "\" group=\"\" part=\"0\" file=\""
      << xmlEscape(f) << "\"/>\n";
  o << "  </Collection>\n</VTKFile>\n";
  pvd.commit();
}

}  // namespace eddy
