#include "gl_sharing.hpp"

#include <CL/cl_gl.h>

#include <sstream>

namespace eddy {

bool hasExtensionToken(const std::string& list, const std::string& name) {
  std::istringstream s(list);
  std::string tok;
  while (s >> tok)
    if (tok == name) return true;
  return false;
}

PathChoice choosePath(bool sharingAllowed, const DeviceInfo& dev, const std::string& devExtensions,
                      bool haveGlxContext, bool glBufferStorage, bool persistentAllowed) {
  PathChoice c;
  const bool persistent = glBufferStorage && persistentAllowed;
  c.path = persistent ? BufferPath::HostCopyPersistent : BufferPath::HostCopySubData;
  const std::string copy = persistent ? "" : (glBufferStorage ? " (persistent mapping switched off)"
                                                               : " (no GL 4.4 buffer storage)");
  if (!sharingAllowed) {
    c.reason = "GL sharing switched off (--no-gl-sharing)" + copy;
  } else if (!dev.glSharing) {
    c.reason = dev.name + " does not offer cl_khr_gl_sharing" + copy;
  } else if (!haveGlxContext) {
    c.reason = "no GLX context to share with (only GLX is supported)" + copy;
  } else {
    c.path = BufferPath::GLSharing;
    c.clGlEvent = hasExtensionToken(devExtensions, "cl_khr_gl_event");
    c.reason = c.clGlEvent ? "cl_khr_gl_sharing with cl_khr_gl_event (implicit sync)"
                           : "cl_khr_gl_sharing (glFinish / release-event sync)";
  }
  return c;
}

std::vector<cl_context_properties> glxSharingProperties(void* glxContext, void* x11Display) {
  return {CL_GL_CONTEXT_KHR, reinterpret_cast<cl_context_properties>(glxContext),
          CL_GLX_DISPLAY_KHR, reinterpret_cast<cl_context_properties>(x11Display)};
}

namespace {

// The devices that can share with the GL context (cl_khr_gl_sharing 9.6.5).
// Throws eddy::Error naming what is missing.
std::vector<cl_device_id> devicesForGlContext(cl_platform_id platform,
                                              std::vector<cl_context_properties> props) {
  using Fn = cl_int(CL_API_CALL*)(const cl_context_properties*, cl_gl_context_info, size_t, void*,
                                  size_t*);
  auto fn = reinterpret_cast<Fn>(
      clGetExtensionFunctionAddressForPlatform(platform, "clGetGLContextInfoKHR"));
  if (!fn) throw Error("the platform offers no clGetGLContextInfoKHR");
  props.push_back(CL_CONTEXT_PLATFORM);
  props.push_back(reinterpret_cast<cl_context_properties>(platform));
  props.push_back(0);
  size_t bytes = 0;
  cl_int err = fn(props.data(), CL_DEVICES_FOR_GL_CONTEXT_KHR, 0, nullptr, &bytes);
  if (err != CL_SUCCESS)
    throw Error("clGetGLContextInfoKHR(CL_DEVICES_FOR_GL_CONTEXT_KHR): " + clErrorName(err));
  std::vector<cl_device_id> ids(bytes / sizeof(cl_device_id));
  if (!ids.empty()) {
    err = fn(props.data(), CL_DEVICES_FOR_GL_CONTEXT_KHR, bytes, ids.data(), nullptr);
    if (err != CL_SUCCESS)
      throw Error("clGetGLContextInfoKHR(CL_DEVICES_FOR_GL_CONTEXT_KHR): " + clErrorName(err));
  }
  return ids;
}

}  // namespace

OpenedContext openContext(const DeviceInfo& dev, PathChoice choice, void* glxContext,
                          void* x11Display, bool glBufferStorage) {
  OpenedContext out;
  if (choice.path == BufferPath::GLSharing) {
    try {
      const auto props = glxSharingProperties(glxContext, x11Display);
      // Which device does the GL context run on? Sharing needs this one.
      Context probe(dev);  // plain context: to get the platform and device ids
      const cl_device_id want = probe.device()();
      const auto ids = devicesForGlContext(probe.platform()(), props);
      bool found = false;
      for (auto id : ids) found = found || id == want;
      if (!found) throw Error("the OpenGL context is not on " + dev.name);
      out.ctx = std::make_unique<Context>(dev, props);
      out.choice = choice;
      return out;
    } catch (const Error& e) {
      choice.path = glBufferStorage ? BufferPath::HostCopyPersistent : BufferPath::HostCopySubData;
      choice.clGlEvent = false;
      choice.reason = std::string("GL sharing unavailable (") + e.what() + "), host copy";
    } catch (const cl::Error& e) {
      choice.path = glBufferStorage ? BufferPath::HostCopyPersistent : BufferPath::HostCopySubData;
      choice.clGlEvent = false;
      choice.reason = "GL sharing unavailable (" + describe(e) + "), host copy";
    }
  }
  out.ctx = std::make_unique<Context>(dev);
  out.choice = choice;
  return out;
}

}  // namespace eddy
