// xvfb.hpp: a private X server (Xvfb, Mesa llvmpipe for GL) for the GUI tests.
// Started with -displayfd so it picks a free display number itself: tests and
// other builds running at the same time never collide.
#pragma once

#include <csignal>
#include <cstdlib>
#include <poll.h>
#include <string>
#include <sys/wait.h>
#include <unistd.h>

namespace eddy::test {

class Xvfb {
 public:
  // Starts the server; on failure display() is empty and error() says why.
  Xvfb() {
    int fds[2];
    if (pipe(fds) != 0) {
      error_ = "pipe() failed";
      return;
    }
    pid_ = fork();
    if (pid_ == 0) {
      close(fds[0]);
      const std::string fd = std::to_string(fds[1]);
      if (freopen("/dev/null", "w", stdout) == nullptr) _exit(126);
      if (freopen("/dev/null", "w", stderr) == nullptr) _exit(126);
      execlp("Xvfb", "Xvfb", "-displayfd", fd.c_str(), "-screen", "0", "1600x1200x24",
             "-nolisten", "tcp", "-noreset", static_cast<char*>(nullptr));
      _exit(127);
    }
    close(fds[1]);
    if (pid_ < 0) {
      close(fds[0]);
      error_ = "fork() failed";
      return;
    }
    std::string num;
    pollfd p{fds[0], POLLIN, 0};
    while (poll(&p, 1, 30000) > 0) {
      char ch = 0;
      if (read(fds[0], &ch, 1) != 1 || ch == '\n') break;
      num += ch;
    }
    close(fds[0]);
    if (num.empty()) {
      error_ = "Xvfb did not start (is the 'xvfb' package installed? scripts/install-deps.sh)";
      stop();
      return;
    }
    display_ = ":" + num;
  }
  ~Xvfb() { stop(); }
  Xvfb(const Xvfb&) = delete;
  Xvfb& operator=(const Xvfb&) = delete;

  const std::string& display() const { return display_; }
  const std::string& error() const { return error_; }

 private:
  void stop() {
    if (pid_ > 0) {
      kill(pid_, SIGTERM);
      int status = 0;
      waitpid(pid_, &status, 0);
      pid_ = -1;
    }
  }
  pid_t pid_ = -1;
  std::string display_, error_;
};

}  // namespace eddy::test
