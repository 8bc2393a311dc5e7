#include "offscreen_egl.hpp"

#include "cl.hpp"  // eddy::Error

#include <glad/egl.h>
#include <glad/gl.h>

#include <cstring>
#include <string>
#include <vector>

namespace eddy {

namespace {

bool hasExtension(const char* list, const char* name) {
  if (!list) return false;
  const size_t n = std::strlen(name);
  for (const char* p = std::strstr(list, name); p; p = std::strstr(p + 1, name))
    if ((p == list || p[-1] == ' ') && (p[n] == ' ' || p[n] == '\0')) return true;
  return false;
}

std::string eglErrorText() {
  char b[32];
  std::snprintf(b, sizeof b, "EGL error 0x%04x", static_cast<unsigned>(eglGetError()));
  return b;
}

GLADapiproc glProc(const char* name) { return reinterpret_cast<GLADapiproc>(eglGetProcAddress(name)); }

}  // namespace

EglContext::EglContext() {
  if (!gladLoaderLoadEGL(EGL_NO_DISPLAY))
    throw Error("--offscreen: cannot load libEGL (Debian: libegl1 and a driver, e.g. libegl-mesa0)");
  const char* client = eglQueryString(EGL_NO_DISPLAY, EGL_EXTENSIONS);
  EGLDisplay dpy = EGL_NO_DISPLAY;
  std::string platform;
  EGLint major = 0, minor = 0;
  auto tryDisplay = [&](EGLDisplay d, const char* name) {
    if (d == EGL_NO_DISPLAY || dpy != EGL_NO_DISPLAY) return;
    if (eglInitialize(d, &major, &minor)) {
      dpy = d;
      platform = name;
    }
  };
  if (hasExtension(client, "EGL_MESA_platform_surfaceless") && eglGetPlatformDisplayEXT)
    tryDisplay(eglGetPlatformDisplayEXT(EGL_PLATFORM_SURFACELESS_MESA, EGL_DEFAULT_DISPLAY, nullptr),
               "surfaceless platform");
  if (dpy == EGL_NO_DISPLAY && hasExtension(client, "EGL_EXT_platform_device") && eglQueryDevicesEXT &&
      eglGetPlatformDisplayEXT) {
    EGLint count = 0;
    if (eglQueryDevicesEXT(0, nullptr, &count) && count > 0) {
      std::vector<EGLDeviceEXT> devices(static_cast<size_t>(count));
      eglQueryDevicesEXT(count, devices.data(), &count);
      for (EGLint i = 0; i < count && dpy == EGL_NO_DISPLAY; ++i)
        tryDisplay(eglGetPlatformDisplayEXT(EGL_PLATFORM_DEVICE_EXT, devices[size_t(i)], nullptr),
                   "EGL device");
    }
  }
  if (dpy == EGL_NO_DISPLAY) tryDisplay(eglGetDisplay(EGL_DEFAULT_DISPLAY), "default display");
  if (dpy == EGL_NO_DISPLAY) throw Error("--offscreen: no EGL display could be initialised (" + eglErrorText() + ")");
  display_ = dpy;
  gladLoaderLoadEGL(dpy);  // the display's extensions and version
  if (!eglBindAPI(EGL_OPENGL_API)) throw Error("--offscreen: EGL offers no desktop OpenGL (" + eglErrorText() + ")");

  const bool surfaceless = hasExtension(eglQueryString(dpy, EGL_EXTENSIONS), "EGL_KHR_surfaceless_context");
  const EGLint attribs[] = {EGL_SURFACE_TYPE, surfaceless ? 0 : EGL_PBUFFER_BIT,
                            EGL_RENDERABLE_TYPE, EGL_OPENGL_BIT,
                            EGL_RED_SIZE, 8, EGL_GREEN_SIZE, 8, EGL_BLUE_SIZE, 8,
                            EGL_NONE};
  EGLConfig config = nullptr;
  EGLint n = 0;
  if (!eglChooseConfig(dpy, attribs, &config, 1, &n) || n < 1)
    throw Error("--offscreen: no EGL configuration for OpenGL (" + eglErrorText() + ")");
  const EGLint ctxAttribs[] = {EGL_CONTEXT_MAJOR_VERSION, 3, EGL_CONTEXT_MINOR_VERSION, 3,
                               EGL_CONTEXT_OPENGL_PROFILE_MASK, EGL_CONTEXT_OPENGL_CORE_PROFILE_BIT,
                               EGL_NONE};
  EGLContext ctx = eglCreateContext(dpy, config, EGL_NO_CONTEXT, ctxAttribs);
  if (ctx == EGL_NO_CONTEXT)
    throw Error("--offscreen: cannot create an OpenGL 3.3 core context through EGL (" + eglErrorText() + ")");
  context_ = ctx;
  EGLSurface surf = EGL_NO_SURFACE;
  if (!surfaceless) {
    const EGLint pb[] = {EGL_WIDTH, 16, EGL_HEIGHT, 16, EGL_NONE};
    surf = eglCreatePbufferSurface(dpy, config, pb);
    if (surf == EGL_NO_SURFACE) throw Error("--offscreen: cannot create an EGL pbuffer (" + eglErrorText() + ")");
    surface_ = surf;
  }
  if (!eglMakeCurrent(dpy, surf, surf, ctx))
    throw Error("--offscreen: cannot make the EGL context current (" + eglErrorText() + ")");
  const int gl = gladLoadGL(glProc);
  if (!gl || GLAD_VERSION_MAJOR(gl) * 10 + GLAD_VERSION_MINOR(gl) < 33)
    throw Error("--offscreen: OpenGL 3.3 core is needed; the EGL driver offers " +
                (gl ? std::to_string(GLAD_VERSION_MAJOR(gl)) + "." + std::to_string(GLAD_VERSION_MINOR(gl))
                    : std::string("none")));
  what_ = "EGL " + std::to_string(major) + "." + std::to_string(minor) + ", " + platform +
          (surfaceless ? "" : " (pbuffer)");
  const char* vendor = eglQueryString(dpy, EGL_VENDOR);
  if (vendor) what_ += std::string(" (") + vendor + ")";
}

EglContext::~EglContext() {
  EGLDisplay dpy = display_;
  if (!dpy) return;
  eglMakeCurrent(dpy, EGL_NO_SURFACE, EGL_NO_SURFACE, EGL_NO_CONTEXT);
  if (surface_) eglDestroySurface(dpy, surface_);
  if (context_) eglDestroyContext(dpy, context_);
  eglTerminate(dpy);
  gladLoaderUnloadEGL();
}

}  // namespace eddy
