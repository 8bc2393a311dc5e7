// error.hpp: the one exception type of the core, without OpenCL, so that any
// header can throw it (parameters, configs, snapshots) without pulling in the
// OpenCL bindings.
#pragma once

#include <stdexcept>
#include <string>

namespace eddy {

// Every failure the core reports: a message meant for the user. A NUL in the
// message (a JSON string's \u0000 quoted back: a scene name, a probe name)
// is kept visible as \x00: what() is a C string, and the message used to end
// there, losing the rest ("unknown sph scene 'dam" and no list of scenes).
class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& what) : std::runtime_error(visibleNul(what)) {}
  explicit Error(const char* what) : std::runtime_error(what) {}

 private:
  static std::string visibleNul(std::string s) {
    for (size_t i = s.find('\0'); i != std::string::npos; i = s.find('\0', i + 4)) s.replace(i, 1, "\\x00");
    return s;
  }
};

}  // namespace eddy
