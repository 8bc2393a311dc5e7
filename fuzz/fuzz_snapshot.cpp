// libFuzzer target: the snapshot reader (sim/snapshot.cpp) and the decoding of
// its generic and N-body parts (sim/factory.cpp, sim/nbody.cpp), all host-side
// code that runs before a loaded snapshot touches the device. Fuzzing builds
// skip only the checksum comparison so that mutated files reach the decoder.
#include "factory.hpp"
#include "nbody.hpp"
#include "sph.hpp"
#include "snapshot.hpp"

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    const auto snap = eddy::Snapshot::parse(
        std::string(reinterpret_cast<const char*>(data), size), "fuzz.snap");
    const auto h = eddy::readSnapshotHeader(snap);
    if (h.count == 0 || h.count > 0x7fffffffu || !std::isfinite(h.time)) std::abort();
    if (h.spec.sim == "nbody") {
      const auto s = eddy::decodeNBodyState(snap, h.count);
      if (s.pos.size() != h.count || s.vel.size() != h.count || s.acc.size() != h.count)
        std::abort();
    } else if (h.spec.sim == "sph") {
      const auto s = eddy::decodeSphState(snap, h.count);
      if (s.pos.size() != h.count || s.ids.size() != h.count) std::abort();
    }
  } catch (const eddy::Error&) {
  }
  return 0;
}
