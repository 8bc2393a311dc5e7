// external_buffers.hpp: the external buffer path. Vulkan allocates device
// memory and binary semaphores exportable as opaque fds (render/vk_export);
// OpenCL imports them (cl_khr_external_memory_opaque_fd:
// clCreateBufferWithProperties; cl_khr_external_semaphore_opaque_fd) and
// OpenGL too (GL_EXT_memory_object_fd: glImportMemoryFdEXT +
// glBufferStorageMemEXT; GL_EXT_semaphore_fd), so the simulation's OpenCL
// queue writes the very vertex buffers OpenGL draws. The OpenCL extension
// entry points come through clGetExtensionFunctionAddressForPlatform,
// clCreateBufferWithProperties (OpenCL 3.0) from the ICD loader at run time.
#pragma once

#include "buffer_path.hpp"
#include "cl.hpp"
#include "gl.hpp"
#include "vk_export.hpp"

#include <CL/cl_ext.h>

#include <memory>
#include <string>
#include <vector>

namespace eddy {

// The OpenCL pieces of `facts` (clMemory, clCreateWithProperties,
// clPlatformVersion, clUuid, clDeviceUuid, clSemaphore). Never throws.
void probeClExternal(const cl::Device& device, const cl::Platform& platform, ExternalFacts& facts);
// The OpenGL pieces (glMemory, glSemaphore, the UUIDs), from the current
// context. Never throws.
void probeGlExternal(ExternalFacts& facts);

class ExternalInterop {
 public:
  // Needs the current GL context (the one that will draw) and `ctx` on the
  // device whose UUID is `deviceUuid` (choosePath checked that OpenCL,
  // OpenGL and Vulkan agree on it). Throws eddy::Error naming what failed.
  ExternalInterop(Context& ctx, const Uuid& deviceUuid, ExternalSync sync);
  ~ExternalInterop();
  ExternalInterop(const ExternalInterop&) = delete;
  ExternalInterop& operator=(const ExternalInterop&) = delete;

  ExternalSync sync() const { return sync_; }
  Context& context() { return ctx_; }

  // One buffer of device memory, seen by OpenCL and OpenGL. Freed in the
  // order OpenCL, OpenGL, Vulkan; the interop must outlive it.
  class Buffer {
   public:
    ~Buffer();
    Buffer(const Buffer&) = delete;
    Buffer& operator=(const Buffer&) = delete;
    GLuint gl() const { return gl_; }
    const cl::Buffer& cl() const { return cl_; }
    size_t bytes() const { return bytes_; }

   private:
    friend class ExternalInterop;
    explicit Buffer(ExternalInterop& x) : x_(x) {}
    ExternalInterop& x_;
    VulkanExporter::Memory vk_;
    GLuint glMemory_ = 0, gl_ = 0;
    cl::Buffer cl_;
    size_t bytes_ = 0;
  };
  // A binary semaphore seen by OpenCL and OpenGL.
  class Semaphore {
   public:
    ~Semaphore();
    Semaphore(const Semaphore&) = delete;
    Semaphore& operator=(const Semaphore&) = delete;

   private:
    friend class ExternalInterop;
    explicit Semaphore(ExternalInterop& x) : x_(x) {}
    ExternalInterop& x_;
    void* vk_ = nullptr;
    GLuint gl_ = 0;
    cl_semaphore_khr cl_ = nullptr;
  };

  std::unique_ptr<Buffer> makeBuffer(size_t bytes);
  std::unique_ptr<Semaphore> makeSemaphore();

  // OpenCL side, on the context's queue (non-blocking).
  void acquire(const std::vector<cl_mem>& mems);  // where cl_khr_external_memory offers it
  void release(const std::vector<cl_mem>& mems, cl::Event* done);
  void signal(Semaphore& s);
  void wait(Semaphore& s);
  // OpenGL side: the GPU waits for / signals the semaphore; the listed
  // buffers are the ones whose contents change hands.
  void glWait(Semaphore& s, const std::vector<GLuint>& buffers);
  void glSignal(Semaphore& s, const std::vector<GLuint>& buffers);

  // OpenCL writes a pattern into a new buffer, OpenGL reads it back, in the
  // order the frames use (signal + wait, or a host wait): throws Error if a
  // byte differs (e.g. the two APIs are on different devices after all).
  void selfTest();

 private:
  Context& ctx_;
  ExternalSync sync_;
  std::unique_ptr<VulkanExporter> vk_;
  cl_mem (CL_API_CALL* createBuffer_)(cl_context, const cl_properties*, cl_mem_flags, size_t,
                                      void*, cl_int*) = nullptr;
  clEnqueueAcquireExternalMemObjectsKHR_fn acquire_ = nullptr;
  clEnqueueReleaseExternalMemObjectsKHR_fn release_ = nullptr;
  clCreateSemaphoreWithPropertiesKHR_fn createSemaphore_ = nullptr;
  clEnqueueWaitSemaphoresKHR_fn waitSemaphores_ = nullptr;
  clEnqueueSignalSemaphoresKHR_fn signalSemaphores_ = nullptr;
  clReleaseSemaphoreKHR_fn releaseSemaphore_ = nullptr;
};

}  // namespace eddy
