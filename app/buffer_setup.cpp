#include "buffer_setup.hpp"

#include "vk_export.hpp"

#include <cstdlib>

namespace eddy {

ExternalSync externalSyncFromEnvironment() {
  const char* v = std::getenv("EDDY_EXTERNAL_SYNC");
  const std::string s = v ? v : "";
  if (s.empty() || s == "wait") return ExternalSync::HostWait;
  if (s == "semaphore") return ExternalSync::Semaphores;
  if (s == "none") return ExternalSync::None;
  throw Error("EDDY_EXTERNAL_SYNC='" + s + "': expected semaphore, wait or none");
}

BufferSetup setUpBuffers(const DeviceInfo& device, const PathRequest& request, void* glxContext,
                         void* x11Display) {
  PathFacts facts;
  facts.device = device;
  try {
    Context probe(device);  // a plain context: the device's and platform's facts
    facts.deviceExtensions = probe.device().getInfo<CL_DEVICE_EXTENSIONS>();
    if (request.path == BufferPathRequest::Auto || request.path == BufferPathRequest::External) {
      ExternalFacts& e = facts.external;
      e.probed = true;
      probeClExternal(probe.device(), probe.platform(), e);
      probeGlExternal(e);
      // The Vulkan loader is opened only where OpenCL and OpenGL could use it.
      if (e.clMemory && e.glMemory) probeVulkan(e);
    }
  } catch (const cl::Error& e) {
    throw Error("querying " + device.name + ": " + describe(e));
  }
  facts.haveGlxContext = glxContext != nullptr;
  facts.glBufferStorage = glHasBufferStorage();

  PathChoice choice = choosePath(request, facts);
  if (!choice.error.empty()) throw Error(choice.error);
  OpenedContext opened = openContext(request, facts, choice, glxContext, x11Display);
  BufferSetup out;
  out.ctx = std::move(opened.ctx);
  out.choice = opened.choice;
  if (out.choice.path == BufferPath::External) {
    try {
      out.interop = std::make_unique<ExternalInterop>(*out.ctx, out.choice.externalDevice, out.choice.sync);
      out.interop->selfTest();
    } catch (const Error& e) {
      out.interop.reset();
      facts.externalFailure = e.what();
      out.choice = choosePath(request, facts);
      if (!out.choice.error.empty()) throw Error(out.choice.error);
    } catch (const cl::Error& e) {
      out.interop.reset();
      facts.externalFailure = describe(e);
      out.choice = choosePath(request, facts);
      if (!out.choice.error.empty()) throw Error(out.choice.error);
    }
  }
  return out;
}

}  // namespace eddy
