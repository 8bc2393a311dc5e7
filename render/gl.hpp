// gl.hpp: OpenGL through the glad loader generated at configure time.
#pragma once

#include <glad/gl.h>

#include <string>

namespace eddy {

// Throws eddy::Error "<what>: GL_INVALID_OPERATION" if glGetError reports one.
void checkGL(const char* what);
std::string glErrorName(GLenum e);
// Persistent mapping is possible: GL 4.4, or GL_ARB_buffer_storage (the loader
// is generated for 3.3 core plus extensions, so glBufferStorage comes from the
// extension), and the entry point was found.
bool glHasBufferStorage();

}  // namespace eddy
