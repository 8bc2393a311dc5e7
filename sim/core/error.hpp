// error.hpp: the one exception type of the core, without OpenCL, so that any
// header can throw it (parameters, configs, snapshots) without pulling in the
// OpenCL bindings.
#pragma once

#include <stdexcept>

namespace eddy {

// Every failure the core reports: a message meant for the user.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace eddy
