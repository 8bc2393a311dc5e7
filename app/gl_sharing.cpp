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

namespace {

const char* requestName(BufferPathRequest r) {
  switch (r) {
    case BufferPathRequest::GLSharing: return "gl_sharing";
    case BufferPathRequest::External: return "external";
    case BufferPathRequest::Host: return "host";
    case BufferPathRequest::Auto: break;
  }
  return "auto";
}

// The Vulkan device with the OpenCL device's UUID, or null.
const VulkanDeviceFacts* matchingVulkanDevice(const ExternalFacts& e) {
  for (const auto& v : e.vulkanDevices)
    if (v.deviceUuid == e.clDeviceUuid) return &v;
  return nullptr;
}

// Why the external path must synchronise by host waits ("" = semaphores offered).
std::string semaphoreProblem(const PathFacts& f, const VulkanDeviceFacts& vk) {
  if (!f.external.clSemaphore) return f.device.name + " does not offer cl_khr_external_semaphore_opaque_fd";
  if (!f.external.glSemaphore) return "OpenGL does not offer GL_EXT_semaphore_fd";
  if (!vk.semaphoreFd) return "Vulkan " + vk.name + " cannot export semaphores as an opaque fd";
  return "";
}

}  // namespace

std::string PathChoice::summary() const {
  std::string s = reason;
  if (!notTaken.empty()) {
    s += "; not taken: ";
    for (size_t i = 0; i < notTaken.size(); ++i) s += (i ? "; " : "") + notTaken[i];
  }
  return s;
}

std::string sharingProblem(const PathRequest& r, const PathFacts& f) {
  if (r.path == BufferPathRequest::Host || r.path == BufferPathRequest::External)
    return std::string("not asked for (--buffer-path ") + requestName(r.path) + ")";
  if (!r.sharingAllowed) return "GL sharing switched off (--no-gl-sharing)";
  if (!f.device.glSharing) return f.device.name + " does not offer cl_khr_gl_sharing";
  if (!f.haveGlxContext) return "no GLX context to share with (only GLX is supported)";
  if (!f.sharingFailure.empty()) return "GL sharing unavailable (" + f.sharingFailure + ")";
  return "";
}

std::string externalProblem(const PathRequest& r, const PathFacts& f) {
  if (r.path == BufferPathRequest::Host || r.path == BufferPathRequest::GLSharing)
    return std::string("not asked for (--buffer-path ") + requestName(r.path) + ")";
  const ExternalFacts& e = f.external;
  if (!e.probed) return "not probed";
  const std::string& dev = f.device.name;
  if (!e.clMemory) return dev + " does not offer cl_khr_external_memory_opaque_fd";
  if (!e.clCreateWithProperties)
    return "clCreateBufferWithProperties needs an OpenCL 3.0 platform and ICD loader (the platform is '" +
           e.clPlatformVersion + "')";
  if (!e.clUuid) return dev + " does not offer cl_khr_device_uuid (the device match cannot be checked)";
  if (!e.glMemory) return "OpenGL does not offer GL_EXT_memory_object_fd";
  if (!e.vulkanProblem.empty()) return "Vulkan: " + e.vulkanProblem;
  const VulkanDeviceFacts* vk = matchingVulkanDevice(e);
  if (!vk)
    return "no Vulkan device has the UUID of " + dev + " (" + uuidText(e.clDeviceUuid) + "; " +
           std::to_string(e.vulkanDevices.size()) + " Vulkan device(s))";
  if (!vk->memoryFd) return "Vulkan " + vk->name + " cannot export vertex buffers as an opaque fd";
  bool glOnDevice = false;
  for (const Uuid& u : e.glDeviceUuids) glOnDevice = glOnDevice || u == e.clDeviceUuid;
  if (!glOnDevice)
    return "the OpenGL context is not on " + dev + " (no GL device UUID equals " +
           uuidText(e.clDeviceUuid) + ")";
  if (e.glDriverUuid != vk->driverUuid)
    return "OpenGL and Vulkan are different drivers (GL driver UUID " + uuidText(e.glDriverUuid) +
           ", Vulkan " + uuidText(vk->driverUuid) + ")";
  if (!f.externalFailure.empty()) return "set-up failed (" + f.externalFailure + ")";
  return "";
}

PathChoice choosePath(const PathRequest& r, const PathFacts& f) {
  PathChoice c;
  const bool persistent = f.glBufferStorage && r.persistentAllowed;
  const BufferPath host = persistent ? BufferPath::HostCopyPersistent : BufferPath::HostCopySubData;
  const std::string hostNote =
      persistent ? "" : (f.glBufferStorage ? " (persistent mapping switched off)" : " (no GL 4.4 buffer storage)");
  const std::string sharing = sharingProblem(r, f);
  const std::string external = externalProblem(r, f);

  if (r.path == BufferPathRequest::GLSharing && !sharing.empty())
    c.error = "--buffer-path gl_sharing is not possible: " + sharing;
  if (r.path == BufferPathRequest::External && !external.empty())
    c.error = "--buffer-path external is not possible: " + external;

  if (sharing.empty()) {
    c.path = BufferPath::GLSharing;
    c.clGlEvent = hasExtensionToken(f.deviceExtensions, "cl_khr_gl_event");
    c.reason = c.clGlEvent ? "cl_khr_gl_sharing with cl_khr_gl_event (implicit sync)"
                           : "cl_khr_gl_sharing (glFinish / release-event sync)";
    return c;  // the first choice: nothing else was considered
  }
  if (r.path != BufferPathRequest::Host) c.notTaken.push_back("gl_sharing: " + sharing);
  if (external.empty()) {
    const VulkanDeviceFacts& vk = *matchingVulkanDevice(f.external);
    c.path = BufferPath::External;
    c.externalDevice = vk.deviceUuid;
    c.vulkanDevice = vk.name;
    std::string sync;
    if (r.externalSync == ExternalSync::None) {
      c.sync = ExternalSync::None;
      sync = "NO synchronisation (EDDY_EXTERNAL_SYNC=none: the torn-frame test's failing mode)";
    } else if (r.externalSync == ExternalSync::HostWait) {
      c.sync = ExternalSync::HostWait;
      sync = "host waits (the default; EDDY_EXTERNAL_SYNC=semaphore for exported semaphores)";
    } else if (const std::string why = semaphoreProblem(f, vk); !why.empty()) {
      c.sync = ExternalSync::HostWait;
      sync = "host waits, since " + why;
    } else {
      c.sync = ExternalSync::Semaphores;
      sync = "exported semaphores";
    }
    c.reason = "external memory exported by Vulkan (" + vk.name + ", device " +
               uuidText(vk.deviceUuid) + "), " + sync;
    return c;
  }
  if (r.path != BufferPathRequest::Host && r.path != BufferPathRequest::GLSharing)
    c.notTaken.push_back("external: " + external);
  c.path = host;
  c.reason = (r.path == BufferPathRequest::Host ? "asked for (--buffer-path host)"
                                                : std::string("no zero-copy path")) + hostNote;
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

OpenedContext openContext(const PathRequest& request, PathFacts& facts, PathChoice choice,
                          void* glxContext, void* x11Display) {
  OpenedContext out;
  const DeviceInfo& dev = facts.device;
  if (choice.path == BufferPath::GLSharing) {
    std::string failure;
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
      failure = e.what();
    } catch (const cl::Error& e) {
      failure = describe(e);
    }
    facts.sharingFailure = failure;
    choice = choosePath(request, facts);
    if (!choice.error.empty()) throw Error(choice.error);
  }
  out.ctx = std::make_unique<Context>(dev);
  out.choice = choice;
  return out;
}

}  // namespace eddy
