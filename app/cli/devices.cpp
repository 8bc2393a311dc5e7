// devices.cpp: eddy-cli devices.
#include "cli_common.hpp"

#include "config.hpp"
#include "factory.hpp"
#include "io.hpp"
#include "nbody.hpp"
#include "nbody_multi.hpp"
#include "session.hpp"
#include "snapshot.hpp"
#include "sph.hpp"
#include "vtk.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <csignal>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <sstream>

namespace eddy::cli {

Runner addDevices(Options& o) {
  auto asJson = std::make_shared<bool>(false);
  addJsonOption(o, *asJson);
  return [asJson](std::ostream& out, std::ostream&) {
    const std::vector<DeviceInfo> devices = enumerateDevices();
    if (!*asJson) {
      out << formatDeviceList(devices);
      return 0;
    }
    // One object per device: run's "device" keys and the rest of the list.
    json a = json::array();
    for (const DeviceInfo& d : devices) {
      json j = deviceJson(d);
      j["platform_version"] = d.platformVersion;
      j["vendor"] = d.vendor;
      j["opencl_c"] = d.openclC;
      j["max_alloc_bytes"] = d.maxAlloc;
      j["local_mem_bytes"] = d.localMem;
      j["max_work_group"] = d.maxWorkGroup;
      j["fp64"] = d.fp64;
      a.push_back(std::move(j));
    }
    out << json{{"devices", a}}.dump(2) << '\n';
    return 0;
  };
}


}  // namespace eddy::cli
