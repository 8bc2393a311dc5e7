// snapshot_edit.hpp: editing restart snapshots in tests (a hostile or older
// file made from a good one) and loading them for their error.
#pragma once

#include "factory.hpp"
#include "snapshot.hpp"
#include "test_util.hpp"

#include <string>

namespace eddy::test {

// The snapshot `good` with blob `name` holding `data` instead.
inline std::string withBlob(const Snapshot& good, const std::string& name, const std::string& data) {
  SnapshotWriter w;
  for (const auto& b : good.names()) {
    if (b == name) {
      w.addString(b, data);
    } else {
      const auto v = good.blob(b);
      w.add(b, v.data(), v.size());
    }
  }
  return w.bytes();
}

// The snapshot `good` without blob `name`.
inline std::string withoutBlob(const Snapshot& good, const std::string& name) {
  SnapshotWriter w;
  for (const auto& b : good.names()) {
    if (b == name) continue;
    const auto v = good.blob(b);
    w.add(b, v.data(), v.size());
  }
  return w.bytes();
}

// The error loading these snapshot bytes gives ("" when they load).
inline std::string loadError(const std::string& bytes) {
  try {
    loadSnapshot(context(), Snapshot::parse(bytes, "edited.snap"));
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace eddy::test
