// offscreen_egl.hpp: an OpenGL 3.3 core context without a window or X server
// (eddy --offscreen), through EGL: Mesa's surfaceless platform, else an EGL
// device (EGL_EXT_platform_device: NVIDIA's headless driver), else the
// default display. libEGL is opened at run time by glad's loader.
#pragma once

#include <string>

namespace eddy {

class EglContext {
 public:
  // Creates the context, makes it current and loads the GL functions.
  // Throws eddy::Error saying which step failed.
  EglContext();
  ~EglContext();
  EglContext(const EglContext&) = delete;
  EglContext& operator=(const EglContext&) = delete;

  // e.g. "EGL 1.5, surfaceless platform (Mesa)"
  const std::string& description() const { return what_; }

 private:
  void* display_ = nullptr;
  void* context_ = nullptr;
  void* surface_ = nullptr;  // a 16 x 16 pbuffer where surfaceless contexts are not offered
  std::string what_;
};

}  // namespace eddy
