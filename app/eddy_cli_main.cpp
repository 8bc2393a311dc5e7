// eddy-cli: the headless binary. Links the core and OpenCL only.
#include "cli.hpp"

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <iostream>

int main(int argc, char** argv) {
  // A reader that closes the pipe (`eddy-cli run ... | head`) makes a write
  // fail instead of killing the process: the run ends as it would (files
  // written) and the failure is reported below.
  std::signal(SIGPIPE, SIG_IGN);
  std::vector<std::string> args(argv + 1, argv + argc);
  int rc = eddy::cliMain(args, std::cout, std::cerr);
  // Results printed to a full disk or a closed pipe are lost: not a success.
  errno = 0;
  std::cout.flush();
  const bool failed = !std::cout || std::fflush(stdout) != 0 || std::ferror(stdout);
  if (failed) {
    const int e = errno;
    std::cerr << "eddy-cli: error: writing the standard output failed"
              << (e ? std::string(": ") + std::strerror(e) : std::string()) << '\n';
    if (rc == 0) rc = 1;
  }
  return rc;
}
