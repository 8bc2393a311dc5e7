// buffer_path.hpp: how particle data reaches the vertex buffers (GL-free).
#pragma once

#include <string>

namespace eddy {

enum class BufferPath { HostCopyPersistent, HostCopySubData, GLSharing };

inline std::string bufferPathName(BufferPath p) {
  switch (p) {
    case BufferPath::HostCopyPersistent: return "host copy (persistent mapped VBO)";
    case BufferPath::HostCopySubData: return "host copy (glBufferSubData)";
    case BufferPath::GLSharing: return "cl_khr_gl_sharing (shared VBO)";
  }
  return "?";
}

}  // namespace eddy
