// gl_sharing.hpp: choosing how particle data reaches OpenGL (cl_khr_gl_sharing,
// external memory, host copy), and creating the OpenCL context against the
// GL context where cl_khr_gl_sharing allows it. Uses OpenCL only (the GL
// handles come in as opaque pointers, the GL and Vulkan facts as plain data),
// so the choice and the fallbacks are unit-tested without a window or a GPU.
#pragma once

#include "buffer_path.hpp"
#include "cl.hpp"

#include <memory>
#include <string>
#include <vector>

namespace eddy {

// What the user asked for.
struct PathRequest {
  BufferPathRequest path = BufferPathRequest::Auto;  // --buffer-path
  bool sharingAllowed = true;                        // --no-gl-sharing
  bool persistentAllowed = true;                     // --no-persistent-map
  // External path: Semaphores = exported semaphores where OpenCL, OpenGL and
  // Vulkan all offer them, else host waits; HostWait (the default: the app
  // hung on the H200 with semaphores, docs/PERFORMANCE.md) and None (the
  // torn-frame test's failing mode) are taken as asked (EDDY_EXTERNAL_SYNC).
  ExternalSync externalSync = ExternalSync::HostWait;
};

// What the machine offers.
struct PathFacts {
  DeviceInfo device;
  std::string deviceExtensions;  // CL_DEVICE_EXTENSIONS
  bool haveGlxContext = false;
  bool glBufferStorage = false;  // GL 4.4 / ARB_buffer_storage
  std::string sharingFailure;    // cl_khr_gl_sharing was tried and failed: why
  ExternalFacts external;        // probed where the external path may be taken
  std::string externalFailure;   // the external set-up was tried and failed: why
};

struct PathChoice {
  BufferPath path = BufferPath::HostCopySubData;
  bool clGlEvent = false;  // cl_khr_gl_event: implicit GL/CL synchronisation
  ExternalSync sync = ExternalSync::Semaphores;  // External: how CL writes and GL reads are ordered
  Uuid externalDevice{};   // External: the device UUID OpenCL, OpenGL and Vulkan share
  std::string vulkanDevice;  // External: its Vulkan name
  std::string reason;      // why this path
  std::vector<std::string> notTaken;  // why each other zero-copy path was not taken ("gl_sharing: ...")
  // A path forced with --buffer-path that is not possible: the message
  // (path and reason are then those of the fallback and must not be used).
  std::string error;
  // reason + "; not taken: " + notTaken (the start-up line, the panel, --stats)
  std::string summary() const;
};

// Whole-token match in a space-separated extension list.
bool hasExtensionToken(const std::string& list, const std::string& name);

// The decision, from facts only. Order: cl_khr_gl_sharing when allowed and
// offered with a GLX context; else external memory when OpenCL, OpenGL and
// Vulkan all offer their pieces on the same device (device UUIDs equal, the
// GL and Vulkan driver UUIDs equal); else a host copy, through a
// persistently mapped buffer where GL offers buffer storage. The external
// path synchronises with exported semaphores where all three APIs offer
// them, else by host waits. A forced path that is not possible sets `error`.
PathChoice choosePath(const PathRequest& request, const PathFacts& facts);

// Why `facts` rule out each zero-copy path ("" = possible).
std::string sharingProblem(const PathRequest& request, const PathFacts& facts);
std::string externalProblem(const PathRequest& request, const PathFacts& facts);

// Context properties for a GLX context (without CL_CONTEXT_PLATFORM and the
// terminating 0, which Context adds): {CL_GL_CONTEXT_KHR, ctx, CL_GLX_DISPLAY_KHR, dpy}.
std::vector<cl_context_properties> glxSharingProperties(void* glxContext, void* x11Display);

struct OpenedContext {
  std::unique_ptr<Context> ctx;
  PathChoice choice;
};

// Opens the OpenCL context for facts.device. When `choice` is sharing: checks
// through clGetGLContextInfoKHR that the device can share with the GL context
// and creates the context with the GLX properties; on any failure sets
// facts.sharingFailure and chooses again (the next path, or the host copy) on
// a plain context. Throws eddy::Error when sharing was forced
// (--buffer-path gl_sharing) and fails.
OpenedContext openContext(const PathRequest& request, PathFacts& facts, PathChoice choice,
                          void* glxContext, void* x11Display);

}  // namespace eddy
