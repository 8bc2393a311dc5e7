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

Runner addDevices(Options&) {  // no options
  return [](std::ostream& out, std::ostream&) {
    out << formatDeviceList(enumerateDevices());
    return 0;
  };
}


}  // namespace eddy::cli
