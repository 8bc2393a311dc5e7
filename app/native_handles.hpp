// native_handles.hpp: the window's GLX context and X display as opaque
// pointers (for cl_khr_gl_sharing). Kept in its own translation unit so the
// X11/GLX headers never meet the glad loader's.
#pragma once

struct GLFWwindow;

namespace eddy {

// nullptr when the window's context is not a GLX context (e.g. Wayland/EGL).
void* nativeGlxContext(GLFWwindow* window);
void* nativeX11Display();

}  // namespace eddy
