// gl_sharing.hpp: choosing how particle data reaches OpenGL, and creating the
// OpenCL context against the GL context where cl_khr_gl_sharing allows it.
// Uses OpenCL only (the GL handles come in as opaque pointers), so the choice
// and the fallbacks are unit-tested without a window.
#pragma once

#include "buffer_path.hpp"
#include "cl.hpp"

#include <memory>
#include <string>
#include <vector>

namespace eddy {

struct PathChoice {
  BufferPath path = BufferPath::HostCopySubData;
  bool clGlEvent = false;  // cl_khr_gl_event: implicit GL/CL synchronisation
  std::string reason;      // why this path (shown in the panel)
};

// Whole-token match in a space-separated extension list.
bool hasExtensionToken(const std::string& list, const std::string& name);

// The decision, from facts only:
//  sharing is used when allowed (no --no-gl-sharing), the device lists
//  cl_khr_gl_sharing and a GLX context exists; otherwise a host copy, through
//  a persistently mapped buffer where GL offers buffer storage (4.4 / ARB).
PathChoice choosePath(bool sharingAllowed, const DeviceInfo& dev, const std::string& devExtensions,
                      bool haveGlxContext, bool glBufferStorage, bool persistentAllowed = true);

// Context properties for a GLX context (without CL_CONTEXT_PLATFORM and the
// terminating 0, which Context adds): {CL_GL_CONTEXT_KHR, ctx, CL_GLX_DISPLAY_KHR, dpy}.
std::vector<cl_context_properties> glxSharingProperties(void* glxContext, void* x11Display);

struct OpenedContext {
  std::unique_ptr<Context> ctx;
  PathChoice choice;
};

// Opens the OpenCL context for `dev`. When `choice` asks for sharing: checks
// through clGetGLContextInfoKHR that `dev` can share with the GL context and
// creates the context with the GLX properties; on any failure falls back to a
// plain context and a host copy, with the reason in choice.reason.
OpenedContext openContext(const DeviceInfo& dev, PathChoice choice, void* glxContext,
                          void* x11Display, bool glBufferStorage);

}  // namespace eddy
