#include "native_handles.hpp"

#define GLFW_INCLUDE_NONE
#include <GLFW/glfw3.h>
#define GLFW_EXPOSE_NATIVE_X11
#define GLFW_EXPOSE_NATIVE_GLX
#include <GLFW/glfw3native.h>

namespace eddy {

void* nativeGlxContext(GLFWwindow* window) {
  return reinterpret_cast<void*>(glfwGetGLXContext(window));
}

void* nativeX11Display() { return reinterpret_cast<void*>(glfwGetX11Display()); }

}  // namespace eddy
