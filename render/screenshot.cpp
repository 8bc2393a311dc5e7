#include "screenshot.hpp"

#include "cl.hpp"  // eddy::Error
#include "gl.hpp"

#include <stb_image_write.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <unistd.h>
#include <vector>

namespace eddy {

namespace {
std::string tempName(const std::string& path) {
  return path + ".tmp." + std::to_string(::getpid());
}
}  // namespace

void checkWritable(const std::string& path) {
  const std::string tmp = tempName(path);
  std::FILE* f = std::fopen(tmp.c_str(), "wb");
  if (!f) throw Error("cannot write screenshot '" + path + "': " + std::strerror(errno));
  std::fclose(f);
  std::remove(tmp.c_str());
}

void writeScreenshot(const std::string& path, int w, int h) {
  if (w <= 0 || h <= 0) throw Error("screenshot: the framebuffer is empty");
  std::vector<unsigned char> px(size_t(w) * size_t(h) * 3);
  glPixelStorei(GL_PACK_ALIGNMENT, 1);
  GLint fbo = 0;  // the window's back buffer, or an offscreen framebuffer's colour
  glGetIntegerv(GL_READ_FRAMEBUFFER_BINDING, &fbo);
  glReadBuffer(fbo ? GL_COLOR_ATTACHMENT0 : GL_BACK);
  glReadPixels(0, 0, w, h, GL_RGB, GL_UNSIGNED_BYTE, px.data());
  checkGL("reading the framebuffer");
  // OpenGL's rows run bottom-up; PNG's top-down.
  std::vector<unsigned char> flipped(px.size());
  const size_t row = size_t(w) * 3;
  for (int y = 0; y < h; ++y)
    std::memcpy(&flipped[size_t(y) * row], &px[size_t(h - 1 - y) * row], row);
  writePng(path, w, h, flipped.data());
}

void writePng(const std::string& path, int w, int h, const unsigned char* rgb) {
  const std::string tmp = tempName(path);
  if (!stbi_write_png(tmp.c_str(), w, h, 3, rgb, w * 3)) {
    std::remove(tmp.c_str());
    throw Error("cannot write '" + path + "'");
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const std::string why = std::strerror(errno);
    std::remove(tmp.c_str());
    throw Error("cannot write '" + path + "': " + why);
  }
}

}  // namespace eddy
