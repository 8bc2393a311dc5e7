// cli.hpp: the headless command line (eddy-cli), also used by eddy's
// fallback when no display exists.
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

namespace eddy {

// Runs one eddy-cli command line; returns the process exit code
// (0 ok, 1 runtime failure, 2 usage error). Never calls exit().
int cliMain(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

}  // namespace eddy
