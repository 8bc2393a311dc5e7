#include "screenshot.hpp"

#include "cl.hpp"  // eddy::Error
#include "gl.hpp"
#include "io.hpp"  // AtomicFile: temporary + rename, special files in place

#include <stb_image_write.h>

#include <cstring>
#include <vector>

namespace eddy {

void checkWritable(const std::string& path) {
  const std::string why = outputFileProblem(path);
  if (!why.empty()) throw Error("cannot write screenshot '" + path + "': " + why);
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

// Atomic for regular files, in place for device nodes and FIFOs (AtomicFile).
void writePng(const std::string& path, int w, int h, const unsigned char* rgb) {
  try {
    AtomicFile file(path, true);
    auto sink = [](void* ctx, void* data, int size) {
      static_cast<std::ostream*>(ctx)->write(static_cast<const char*>(data), size);
    };
    if (!stbi_write_png_to_func(sink, &file.stream(), w, h, 3, rgb, w * 3))
      throw Error("PNG encoding failed");
    file.commit();
  } catch (const Error& e) {
    throw Error("cannot write '" + path + "': " + e.what());
  }
}

}  // namespace eddy
