// buffer_path.hpp: how particle data reaches the vertex buffers, and the facts
// the choice of a path is made from (GL-free, Vulkan-free: the choice is
// unit-tested without a GPU).
#pragma once

#include <array>
#include <string>
#include <vector>

namespace eddy {

enum class BufferPath { HostCopyPersistent, HostCopySubData, GLSharing, External };

inline std::string bufferPathName(BufferPath p) {
  switch (p) {
    case BufferPath::HostCopyPersistent: return "host copy (persistent mapped VBO)";
    case BufferPath::HostCopySubData: return "host copy (glBufferSubData)";
    case BufferPath::GLSharing: return "cl_khr_gl_sharing (shared VBO)";
    case BufferPath::External: return "external memory (Vulkan-exported VBO, imported by OpenCL and OpenGL)";
  }
  return "?";
}

// How the external path orders OpenCL's writes and OpenGL's reads of a slot.
enum class ExternalSync {
  Semaphores,  // exported binary semaphores: CL signals "ready", GL waits; GL signals "free", CL waits
  HostWait,    // the host waits: the slot's CL events before GL draws, a GL fence before CL writes
  None,        // no ordering at all: only for the torn-frame test (EDDY_EXTERNAL_SYNC=none)
};

inline const char* externalSyncName(ExternalSync s) {
  switch (s) {
    case ExternalSync::Semaphores: return "semaphores";
    case ExternalSync::HostWait: return "host waits";
    case ExternalSync::None: return "NO synchronisation";
  }
  return "?";
}

// A device or driver UUID (cl_khr_device_uuid, GL_EXT_memory_object,
// VkPhysicalDeviceIDProperties: 16 bytes each).
using Uuid = std::array<unsigned char, 16>;
inline std::string uuidText(const Uuid& u) {  // 8-4-4-4-12 hex digits
  static const char* hex = "0123456789abcdef";
  std::string s;
  for (size_t i = 0; i < u.size(); ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) s += '-';
    s += hex[u[i] >> 4];
    s += hex[u[i] & 15];
  }
  return s;
}

struct VulkanDeviceFacts {
  std::string name;
  Uuid deviceUuid{}, driverUuid{};
  bool memoryFd = false;     // VK_KHR_external_memory_fd; vertex buffers exportable as an opaque fd
  bool semaphoreFd = false;  // VK_KHR_external_semaphore_fd; binary semaphores exportable as an opaque fd
};

// What the external path needs, each piece found or not. Filled by the
// probes (render/external_buffers.hpp, render/vk_export.hpp); `probed` false
// means nobody looked (the path was not asked for).
struct ExternalFacts {
  bool probed = false;
  // OpenCL, the chosen device and its platform.
  bool clMemory = false;   // cl_khr_external_memory + _opaque_fd, opaque fd among the import types
  bool clCreateWithProperties = false;  // OpenCL 3.0 platform and clCreateBufferWithProperties in the loader
  std::string clPlatformVersion;        // "OpenCL 3.0 CUDA ..."
  bool clUuid = false;     // cl_khr_device_uuid
  Uuid clDeviceUuid{};
  bool clSemaphore = false;  // cl_khr_external_semaphore + _opaque_fd, opaque fd importable, entry points found
  // OpenGL, the current context.
  bool glMemory = false;     // GL_EXT_memory_object + GL_EXT_memory_object_fd
  bool glSemaphore = false;  // GL_EXT_semaphore + GL_EXT_semaphore_fd
  std::vector<Uuid> glDeviceUuids;  // GL_DEVICE_UUID_EXT (one per device the context runs on)
  Uuid glDriverUuid{};              // GL_DRIVER_UUID_EXT
  // Vulkan.
  std::string vulkanProblem;  // empty: loader found and an instance created
  std::vector<VulkanDeviceFacts> vulkanDevices;
};

// --buffer-path: automatic, or one path forced.
enum class BufferPathRequest { Auto, GLSharing, External, Host };

}  // namespace eddy
