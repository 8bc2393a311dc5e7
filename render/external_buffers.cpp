#include "external_buffers.hpp"

#include <dlfcn.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <sstream>

namespace eddy {

namespace {

using CreateBufferWithProperties = cl_mem(CL_API_CALL*)(cl_context, const cl_properties*, cl_mem_flags,
                                                         size_t, void*, cl_int*);

bool hasToken(const std::string& list, const char* name) {
  std::istringstream s(list);
  std::string t;
  while (s >> t)
    if (t == name) return true;
  return false;
}

// clCreateBufferWithProperties is core OpenCL 3.0, not an extension: it comes
// from the ICD loader (the headers here target 1.2, so it is looked up).
CreateBufferWithProperties createBufferEntry() {
  return reinterpret_cast<CreateBufferWithProperties>(dlsym(RTLD_DEFAULT, "clCreateBufferWithProperties"));
}

// "OpenCL 3.0 CUDA 13.0.0" -> 30
int platformVersion(const std::string& v) {
  int major = 0, minor = 0;
  if (std::sscanf(v.c_str(), "OpenCL %d.%d", &major, &minor) != 2) return 0;
  return major * 10 + minor;
}

// A list-valued cl_uint query (handle types). nullopt-like: ok=false when the
// query fails (the extension may list them only at the platform level).
std::vector<cl_uint> uintList(cl_int (*query)(void*, cl_uint, size_t, void*, size_t*), void* obj,
                              cl_uint what, bool& ok) {
  size_t bytes = 0;
  ok = query(obj, what, 0, nullptr, &bytes) == CL_SUCCESS;
  std::vector<cl_uint> v(bytes / sizeof(cl_uint));
  if (ok && !v.empty()) ok = query(obj, what, bytes, v.data(), nullptr) == CL_SUCCESS;
  return v;
}

cl_int deviceQuery(void* d, cl_uint what, size_t n, void* out, size_t* ret) {
  return clGetDeviceInfo(static_cast<cl_device_id>(d), what, n, out, ret);
}
cl_int platformQuery(void* p, cl_uint what, size_t n, void* out, size_t* ret) {
  return clGetPlatformInfo(static_cast<cl_platform_id>(p), what, n, out, ret);
}

// The handle type is importable: listed by the device or, where the device
// query is not answered, by the platform; with neither answering, the
// extension string is taken at its word.
bool importable(cl_device_id d, cl_platform_id p, cl_uint deviceQ, cl_uint platformQ, cl_uint type) {
  bool okD = false, okP = false;
  const auto dl = uintList(deviceQuery, d, deviceQ, okD);
  if (okD && !dl.empty()) return std::find(dl.begin(), dl.end(), type) != dl.end();
  const auto pl = uintList(platformQuery, p, platformQ, okP);
  if (okP && !pl.empty()) return std::find(pl.begin(), pl.end(), type) != pl.end();
  return true;
}

template <class F>
F extensionEntry(cl_platform_id p, const char* name) {
  return reinterpret_cast<F>(clGetExtensionFunctionAddressForPlatform(p, name));
}

clReleaseSemaphoreKHR_fn releaseSemaphoreEntry(cl_platform_id p) {
  // Renamed in the extension's final version (clReleaseSemaphoreObjectKHR before).
  auto f = extensionEntry<clReleaseSemaphoreKHR_fn>(p, "clReleaseSemaphoreKHR");
  return f ? f : extensionEntry<clReleaseSemaphoreKHR_fn>(p, "clReleaseSemaphoreObjectKHR");
}

void clCheck(cl_int err, const std::string& what) {
  if (err != CL_SUCCESS) throw Error(what + " failed: " + clErrorName(err));
}

}  // namespace

void probeClExternal(const cl::Device& device, const cl::Platform& platform, ExternalFacts& f) {
  try {
    const std::string ext = device.getInfo<CL_DEVICE_EXTENSIONS>();
    const cl_device_id d = device();
    const cl_platform_id p = platform();
    f.clPlatformVersion = platform.getInfo<CL_PLATFORM_VERSION>();
    f.clCreateWithProperties = platformVersion(f.clPlatformVersion) >= 30 && createBufferEntry() != nullptr;
    f.clMemory = hasToken(ext, "cl_khr_external_memory") && hasToken(ext, "cl_khr_external_memory_opaque_fd") &&
                 importable(d, p, CL_DEVICE_EXTERNAL_MEMORY_IMPORT_HANDLE_TYPES_KHR,
                            CL_PLATFORM_EXTERNAL_MEMORY_IMPORT_HANDLE_TYPES_KHR,
                            CL_EXTERNAL_MEMORY_HANDLE_OPAQUE_FD_KHR);
    f.clUuid = false;
    if (hasToken(ext, "cl_khr_device_uuid"))
      f.clUuid = clGetDeviceInfo(d, CL_DEVICE_UUID_KHR, f.clDeviceUuid.size(), f.clDeviceUuid.data(),
                                 nullptr) == CL_SUCCESS;
    f.clSemaphore =
        hasToken(ext, "cl_khr_external_semaphore") && hasToken(ext, "cl_khr_external_semaphore_opaque_fd") &&
        importable(d, p, CL_DEVICE_SEMAPHORE_IMPORT_HANDLE_TYPES_KHR, CL_PLATFORM_SEMAPHORE_IMPORT_HANDLE_TYPES_KHR,
                   CL_SEMAPHORE_HANDLE_OPAQUE_FD_KHR) &&
        extensionEntry<clCreateSemaphoreWithPropertiesKHR_fn>(p, "clCreateSemaphoreWithPropertiesKHR") &&
        extensionEntry<clEnqueueWaitSemaphoresKHR_fn>(p, "clEnqueueWaitSemaphoresKHR") &&
        extensionEntry<clEnqueueSignalSemaphoresKHR_fn>(p, "clEnqueueSignalSemaphoresKHR") &&
        releaseSemaphoreEntry(p);
  } catch (const cl::Error&) {
    f.clMemory = f.clSemaphore = f.clUuid = false;
  }
}

void probeGlExternal(ExternalFacts& f) {
  f.glMemory = GLAD_GL_EXT_memory_object && GLAD_GL_EXT_memory_object_fd && glCreateMemoryObjectsEXT &&
               glImportMemoryFdEXT && glBufferStorageMemEXT && glGetUnsignedBytevEXT &&
               glGetUnsignedBytei_vEXT;
  f.glSemaphore = GLAD_GL_EXT_semaphore && GLAD_GL_EXT_semaphore_fd && glGenSemaphoresEXT &&
                  glImportSemaphoreFdEXT && glWaitSemaphoreEXT && glSignalSemaphoreEXT;
  f.glDeviceUuids.clear();
  f.glDriverUuid = Uuid{};
  if (!f.glMemory) return;
  GLint n = 0;
  glGetIntegerv(GL_NUM_DEVICE_UUIDS_EXT, &n);
  for (GLint i = 0; i < n; ++i) {
    Uuid u{};
    glGetUnsignedBytei_vEXT(GL_DEVICE_UUID_EXT, GLuint(i), u.data());
    f.glDeviceUuids.push_back(u);
  }
  glGetUnsignedBytevEXT(GL_DRIVER_UUID_EXT, f.glDriverUuid.data());
  while (glGetError() != GL_NO_ERROR) {
  }
}

ExternalInterop::ExternalInterop(Context& ctx, const Uuid& deviceUuid, ExternalSync sync)
    : ctx_(ctx), sync_(sync) {
  const cl_platform_id p = ctx.platform()();
  createBuffer_ = createBufferEntry();
  if (!createBuffer_) throw Error("the OpenCL ICD loader has no clCreateBufferWithProperties (OpenCL 3.0)");
  acquire_ = extensionEntry<clEnqueueAcquireExternalMemObjectsKHR_fn>(p, "clEnqueueAcquireExternalMemObjectsKHR");
  release_ = extensionEntry<clEnqueueReleaseExternalMemObjectsKHR_fn>(p, "clEnqueueReleaseExternalMemObjectsKHR");
  if (sync_ == ExternalSync::Semaphores) {
    createSemaphore_ =
        extensionEntry<clCreateSemaphoreWithPropertiesKHR_fn>(p, "clCreateSemaphoreWithPropertiesKHR");
    waitSemaphores_ = extensionEntry<clEnqueueWaitSemaphoresKHR_fn>(p, "clEnqueueWaitSemaphoresKHR");
    signalSemaphores_ = extensionEntry<clEnqueueSignalSemaphoresKHR_fn>(p, "clEnqueueSignalSemaphoresKHR");
    releaseSemaphore_ = releaseSemaphoreEntry(p);
    if (!createSemaphore_ || !waitSemaphores_ || !signalSemaphores_ || !releaseSemaphore_)
      throw Error("the OpenCL platform lacks the cl_khr_external_semaphore entry points");
  }
  vk_ = std::make_unique<VulkanExporter>(deviceUuid);
  if (sync_ == ExternalSync::Semaphores && !vk_->canExportSemaphores())
    throw Error("Vulkan " + vk_->deviceName() + " cannot export semaphores");
}

ExternalInterop::~ExternalInterop() = default;

ExternalInterop::Buffer::~Buffer() {
  cl_ = cl::Buffer();  // OpenCL's import first
  if (gl_) glDeleteBuffers(1, &gl_);
  if (glMemory_) glDeleteMemoryObjectsEXT(1, &glMemory_);
  x_.vk_->free(vk_);
}

ExternalInterop::Semaphore::~Semaphore() {
  if (cl_) x_.releaseSemaphore_(cl_);
  if (gl_) glDeleteSemaphoresEXT(1, &gl_);
  x_.vk_->destroySemaphore(vk_);
}

std::unique_ptr<ExternalInterop::Buffer> ExternalInterop::makeBuffer(size_t bytes) {
  std::unique_ptr<Buffer> b(new Buffer(*this));
  b->bytes_ = bytes;
  b->vk_ = vk_->allocate(bytes);
  // OpenGL: a memory object from one fd (the import owns it from then on).
  while (glGetError() != GL_NO_ERROR) {
  }
  glCreateMemoryObjectsEXT(1, &b->glMemory_);
  if (b->vk_.dedicated) {
    const GLint yes = GL_TRUE;
    glMemoryObjectParameterivEXT(b->glMemory_, GL_DEDICATED_MEMORY_OBJECT_EXT, &yes);
  }
  int fd = vk_->exportFd(b->vk_);
  glImportMemoryFdEXT(b->glMemory_, GLuint64(b->vk_.size), GL_HANDLE_TYPE_OPAQUE_FD_EXT, fd);
  if (const GLenum e = glGetError(); e != GL_NO_ERROR) {
    close(fd);  // not taken over
    throw Error("glImportMemoryFdEXT of " + std::to_string(b->vk_.size) + " bytes: " + glErrorName(e));
  }
  glGenBuffers(1, &b->gl_);
  glBindBuffer(GL_ARRAY_BUFFER, b->gl_);
  glBufferStorageMemEXT(GL_ARRAY_BUFFER, GLsizeiptr(bytes), b->glMemory_, 0);
  glBindBuffer(GL_ARRAY_BUFFER, 0);
  checkGL("glBufferStorageMemEXT (a vertex buffer in imported memory)");
  // OpenCL: a buffer on the context's device from a second fd.
  fd = vk_->exportFd(b->vk_);
  const cl_device_id dev = ctx_.device()();
  const cl_properties props[] = {
      cl_properties(CL_EXTERNAL_MEMORY_HANDLE_OPAQUE_FD_KHR), cl_properties(fd),
      cl_properties(CL_DEVICE_HANDLE_LIST_KHR), reinterpret_cast<cl_properties>(dev),
      cl_properties(CL_DEVICE_HANDLE_LIST_END_KHR), 0};
  cl_int err = CL_SUCCESS;
  cl_mem m = createBuffer_(ctx_.context()(), props, CL_MEM_READ_WRITE, bytes, nullptr, &err);
  if (err != CL_SUCCESS || !m) {
    close(fd);
    throw Error("clCreateBufferWithProperties (importing " + std::to_string(bytes) + " bytes): " +
                clErrorName(err));
  }
  b->cl_ = cl::Buffer(m, false);  // takes over the reference
  return b;
}

std::unique_ptr<ExternalInterop::Semaphore> ExternalInterop::makeSemaphore() {
  std::unique_ptr<Semaphore> s(new Semaphore(*this));
  s->vk_ = vk_->createSemaphore();
  int fd = vk_->exportSemaphoreFd(s->vk_);
  while (glGetError() != GL_NO_ERROR) {
  }
  glGenSemaphoresEXT(1, &s->gl_);
  glImportSemaphoreFdEXT(s->gl_, GL_HANDLE_TYPE_OPAQUE_FD_EXT, fd);
  if (const GLenum e = glGetError(); e != GL_NO_ERROR) {
    close(fd);
    throw Error("glImportSemaphoreFdEXT: " + glErrorName(e));
  }
  fd = vk_->exportSemaphoreFd(s->vk_);
  using P = cl_semaphore_properties_khr;
  const P dev = reinterpret_cast<P>(ctx_.device()());
  // The property lists tried, in order: NVIDIA's driver 580 answered the
  // one with a device list (CL_DEVICE_HANDLE_LIST_KHR, as for the memory)
  // with CL_INVALID_PROPERTY. Without one the semaphore belongs to every
  // device of the context: here, the one.
  const std::vector<std::vector<P>> tries = {
      {P(CL_SEMAPHORE_TYPE_KHR), P(CL_SEMAPHORE_TYPE_BINARY_KHR), P(CL_SEMAPHORE_HANDLE_OPAQUE_FD_KHR), P(fd), 0},
      {P(CL_SEMAPHORE_TYPE_KHR), P(CL_SEMAPHORE_TYPE_BINARY_KHR), P(CL_SEMAPHORE_HANDLE_OPAQUE_FD_KHR), P(fd),
       P(CL_DEVICE_HANDLE_LIST_KHR), dev, P(CL_DEVICE_HANDLE_LIST_END_KHR), 0},
      {P(CL_SEMAPHORE_HANDLE_OPAQUE_FD_KHR), P(fd), 0}};
  std::string errors;
  for (const auto& props : tries) {
    cl_int err = CL_SUCCESS;
    s->cl_ = createSemaphore_(ctx_.context()(), props.data(), &err);
    if (err == CL_SUCCESS && s->cl_) return s;
    s->cl_ = nullptr;
    errors += (errors.empty() ? "" : ", ") + clErrorName(err);
  }
  close(fd);
  throw Error("clCreateSemaphoreWithPropertiesKHR (importing a semaphore): " + errors);
}

void ExternalInterop::acquire(const std::vector<cl_mem>& mems) {
  if (!acquire_) return;
  clCheck(acquire_(ctx_.queue()(), cl_uint(mems.size()), mems.data(), 0, nullptr, nullptr),
          "clEnqueueAcquireExternalMemObjectsKHR");
}

void ExternalInterop::release(const std::vector<cl_mem>& mems, cl::Event* done) {
  cl_event e = nullptr;
  if (release_) {
    clCheck(release_(ctx_.queue()(), cl_uint(mems.size()), mems.data(), 0, nullptr, done ? &e : nullptr),
            "clEnqueueReleaseExternalMemObjectsKHR");
  } else if (done) {
    clCheck(clEnqueueMarkerWithWaitList(ctx_.queue()(), 0, nullptr, &e), "clEnqueueMarkerWithWaitList");
  }
  if (done) *done = cl::Event(e, false);
}

void ExternalInterop::signal(Semaphore& s) {
  clCheck(signalSemaphores_(ctx_.queue()(), 1, &s.cl_, nullptr, 0, nullptr, nullptr),
          "clEnqueueSignalSemaphoresKHR");
}

void ExternalInterop::wait(Semaphore& s) {
  clCheck(waitSemaphores_(ctx_.queue()(), 1, &s.cl_, nullptr, 0, nullptr, nullptr),
          "clEnqueueWaitSemaphoresKHR");
}

void ExternalInterop::glWait(Semaphore& s, const std::vector<GLuint>& buffers) {
  glWaitSemaphoreEXT(s.gl_, GLuint(buffers.size()), buffers.data(), 0, nullptr, nullptr);
}

void ExternalInterop::glSignal(Semaphore& s, const std::vector<GLuint>& buffers) {
  glSignalSemaphoreEXT(s.gl_, GLuint(buffers.size()), buffers.data(), 0, nullptr, nullptr);
}

void ExternalInterop::selfTest() {
  const size_t n = 4099;  // a prime: not a multiple of any page or alignment
  std::vector<float> pattern(n), seen(n, 0.f);
  for (size_t i = 0; i < n; ++i) pattern[i] = float(i) * 0.37f - 11.f;
  auto b = makeBuffer(n * sizeof(float));
  std::unique_ptr<Semaphore> sem;
  if (sync_ == ExternalSync::Semaphores) sem = makeSemaphore();
  auto& q = ctx_.queue();
  const std::vector<cl_mem> mems{b->cl()()};
  cl::Event done;
  try {
    acquire(mems);
    q.enqueueWriteBuffer(b->cl(), CL_TRUE, 0, n * sizeof(float), pattern.data());
    release(mems, &done);
    if (sem) signal(*sem);
    q.flush();
    if (sem) glWait(*sem, {b->gl()});
    else done.wait();
  } catch (const cl::Error& e) {
    throw Error("OpenCL writing the shared memory: " + describe(e));
  }
  glBindBuffer(GL_COPY_READ_BUFFER, b->gl());
  glGetBufferSubData(GL_COPY_READ_BUFFER, 0, GLsizeiptr(n * sizeof(float)), seen.data());
  glBindBuffer(GL_COPY_READ_BUFFER, 0);
  checkGL("reading the shared memory back through OpenGL");
  q.finish();
  glFinish();
  for (size_t i = 0; i < n; ++i)
    if (seen[i] != pattern[i])
      throw Error("OpenGL does not see what OpenCL wrote into the shared memory (float " + std::to_string(i) +
                  ": wrote " + std::to_string(pattern[i]) + ", read " + std::to_string(seen[i]) + ")");
}

}  // namespace eddy
