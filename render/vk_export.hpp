// vk_export.hpp: Vulkan, used only to allocate device memory and binary
// semaphores that OpenCL and OpenGL import as opaque file descriptors (the
// external buffer path; neither of them can export memory). The Vulkan
// loader (libvulkan.so.1) is opened at run time, so a machine without it
// still runs (the app takes another path). Nothing is ever submitted to a
// Vulkan queue.
#pragma once

#include "buffer_path.hpp"

#include <cstddef>
#include <memory>
#include <string>

namespace eddy {

// Fills facts.vulkanProblem ("" when the loader opened and an instance of
// Vulkan 1.1 was created) and facts.vulkanDevices (UUIDs, export support).
// Never throws.
void probeVulkan(ExternalFacts& facts);

// How often a Vulkan call here left the thread without its current OpenGL
// context and the context was made current again (NVIDIA's driver does).
size_t glContextRestores();

class VulkanExporter {
 public:
  // A logical device on the physical device with this UUID (with
  // VK_KHR_external_memory_fd, and VK_KHR_external_semaphore_fd where
  // offered). Throws eddy::Error naming the step that failed.
  explicit VulkanExporter(const Uuid& deviceUuid);
  ~VulkanExporter();
  VulkanExporter(const VulkanExporter&) = delete;
  VulkanExporter& operator=(const VulkanExporter&) = delete;

  const std::string& deviceName() const;
  bool canExportSemaphores() const;

  // Device-local memory for a buffer of `bytes`, exportable as an opaque fd.
  struct Memory {
    void* memory = nullptr;  // VkDeviceMemory
    void* buffer = nullptr;  // VkBuffer bound to it (gives the size and alignment rules)
    size_t size = 0;         // the allocation's size (what importers are told)
    bool dedicated = false;  // a dedicated allocation (GL must be told: GL_DEDICATED_MEMORY_OBJECT_EXT)
  };
  Memory allocate(size_t bytes);
  void free(Memory& m);
  // A new file descriptor for the memory's payload; the caller owns it
  // until an import takes it over (each importer needs its own).
  int exportFd(const Memory& m);

  // A binary semaphore exportable as an opaque fd.
  void* createSemaphore();  // VkSemaphore
  void destroySemaphore(void* semaphore);
  int exportSemaphoreFd(void* semaphore);

 private:
  void open(const Uuid& deviceUuid);
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace eddy
