// The desktop app's file outputs (issue 9, part A): `--screenshot` into a
// device node or a FIFO is written in place, the node stays what it is, and
// no temporary is left; a regular file is still written atomically.
#include "test_util.hpp"
#include "xvfb.hpp"

#include <gtest/gtest.h>

#include <fcntl.h>
#include <filesystem>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>

using namespace eddy;
namespace fs = std::filesystem;

namespace {

mode_t typeOf(const std::string& path) {
  struct stat st{};
  return ::stat(path.c_str(), &st) == 0 ? (st.st_mode & S_IFMT) : 0;
}

bool noTemporaries(const std::string& dir) {
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().filename().string().find(".tmp.") != std::string::npos) return false;
  return true;
}

}  // namespace

TEST(AppOutputs, ScreenshotIntoADeviceOrAFifoIsWrittenInPlace) {
  test::Xvfb server;
  ASSERT_FALSE(server.display().empty()) << server.error();
  setenv("DISPLAY", server.display().c_str(), 1);
  unsetenv("WAYLAND_DISPLAY");
  const std::string common = "--sim nbody --n 256 --frames 2 --size 160x100 --hide-panel --screenshot ";

  ASSERT_EQ(typeOf("/dev/null"), mode_t(S_IFCHR));
  auto r = test::run(EDDY_APP, common + "/dev/null");
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(typeOf("/dev/null"), mode_t(S_IFCHR)) << "/dev/null was replaced";
  EXPECT_TRUE(noTemporaries("/dev"));

  const std::string dir = test::tempDir() + "/app-fifo";
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string fifo = dir + "/shot.png";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  std::string png;
  std::thread reader([&] { png = test::slurp(fifo); });
  r = test::run(EDDY_APP, common + fifo);
  // If the app never opened the FIFO, open and close its writing end so that
  // the reader sees the end of the file instead of waiting for ever.
  const int fd = ::open(fifo.c_str(), O_WRONLY | O_NONBLOCK);
  if (fd >= 0) ::close(fd);
  reader.join();
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(png.substr(0, 8), std::string("\x89PNG\r\n\x1a\n", 8)) << "not a PNG through the FIFO";
  EXPECT_EQ(typeOf(fifo), mode_t(S_IFIFO)) << "the FIFO was replaced by a regular file";
  EXPECT_TRUE(noTemporaries(dir));
}
