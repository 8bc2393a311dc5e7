// buffer_setup.hpp: the app's choice of a particle buffer path and its
// set-up, the same for a window (GLFW) and --offscreen (EGL): probes what
// OpenCL, OpenGL and Vulkan offer, chooses (app/gl_sharing.hpp), opens the
// OpenCL context and, for the external path, the Vulkan exporter, which
// must pass a self-test (OpenCL writes, OpenGL reads back the same bytes);
// where a step fails the next path is taken, or, for a path forced with
// --buffer-path, eddy::Error says why.
#pragma once

#include "external_buffers.hpp"
#include "gl_sharing.hpp"

#include <memory>

namespace eddy {

struct BufferSetup {
  std::unique_ptr<Context> ctx;
  PathChoice choice;
  std::unique_ptr<ExternalInterop> interop;  // the external path only
};

// Needs the current GL context. `glxContext`/`x11Display`: the window's (null
// with --offscreen, or where the context is not GLX).
BufferSetup setUpBuffers(const DeviceInfo& device, const PathRequest& request, void* glxContext,
                         void* x11Display);

// EDDY_EXTERNAL_SYNC: unset, "" or "wait" (host waits: the default),
// "semaphore" (exported semaphores where offered), "none" (no ordering: the
// torn-frame test's failing mode). Throws eddy::Error for anything else.
ExternalSync externalSyncFromEnvironment();

}  // namespace eddy
