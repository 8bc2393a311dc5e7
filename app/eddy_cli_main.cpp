// eddy-cli: the headless binary. Links the core and OpenCL only.
#include "cli.hpp"

#include <iostream>

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  return eddy::cliMain(args, std::cout, std::cerr);
}
