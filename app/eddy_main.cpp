// eddy: the desktop app. Until the window lands it runs the headless demo:
// a short N-body run that prints progress and results.
#include "cli.hpp"

#include <iostream>

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty())
    args = {"run", "--sim", "nbody", "--scene", "plummer", "--n", "4096", "--steps", "200"};
  return eddy::cliMain(args, std::cout, std::cerr);
}
