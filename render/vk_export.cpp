#include "vk_export.hpp"

#include "error.hpp"

#define VK_NO_PROTOTYPES
#include <vulkan/vulkan.h>

#include <dlfcn.h>
#include <unistd.h>

#include <cstring>
#include <initializer_list>
#include <vector>

namespace eddy {

namespace {

std::string vkResultName(VkResult r) {
  switch (r) {
#define EDDY_VK_CASE(x) \
  case x: return #x;
    EDDY_VK_CASE(VK_ERROR_OUT_OF_HOST_MEMORY)
    EDDY_VK_CASE(VK_ERROR_OUT_OF_DEVICE_MEMORY)
    EDDY_VK_CASE(VK_ERROR_INITIALIZATION_FAILED)
    EDDY_VK_CASE(VK_ERROR_DEVICE_LOST)
    EDDY_VK_CASE(VK_ERROR_LAYER_NOT_PRESENT)
    EDDY_VK_CASE(VK_ERROR_EXTENSION_NOT_PRESENT)
    EDDY_VK_CASE(VK_ERROR_FEATURE_NOT_PRESENT)
    EDDY_VK_CASE(VK_ERROR_INCOMPATIBLE_DRIVER)
    EDDY_VK_CASE(VK_ERROR_TOO_MANY_OBJECTS)
    EDDY_VK_CASE(VK_ERROR_INVALID_EXTERNAL_HANDLE)
    EDDY_VK_CASE(VK_ERROR_OUT_OF_POOL_MEMORY)
#undef EDDY_VK_CASE
    default: return "VkResult " + std::to_string(int(r));
  }
}

// NVIDIA's Vulkan driver leaves the calling thread without its current
// OpenGL context (seen on the H200, driver 580: after vkCreateInstance through
// the loader, EGL's current context was gone and every later GL call did
// nothing). Every Vulkan call here is therefore made under this guard: it
// notes the thread's current EGL or GLX context (through the libraries the
// process has already loaded: glad's EGL loader, GLFW's GLX) and makes it
// current again afterwards where it was lost.
class KeepGlContext {
 public:
  KeepGlContext() {
    if (Egl& e = egl(); e.ok) {
      api_ = e.queryApi();
      eglCtx_ = e.getContext();
      if (eglCtx_) {
        eglDpy_ = e.getDisplay();
        eglDraw_ = e.getSurface(0x3059);  // EGL_DRAW
        eglRead_ = e.getSurface(0x305A);  // EGL_READ
      }
    }
    if (Glx& g = glx(); g.ok) {
      glxCtx_ = g.getContext();
      if (glxCtx_) {
        glxDpy_ = g.getDisplay();
        glxDraw_ = g.getDrawable();
        glxRead_ = g.getReadDrawable();
      }
    }
  }
  ~KeepGlContext() {
    if (eglCtx_) {
      Egl& e = egl();
      if (e.queryApi() != api_) e.bindApi(api_);
      if (e.getContext() != eglCtx_) {
        e.makeCurrent(eglDpy_, eglDraw_, eglRead_, eglCtx_);
        ++restores;
      }
    }
    if (glxCtx_) {
      Glx& g = glx();
      if (g.getContext() != glxCtx_) {
        g.makeCurrent(glxDpy_, glxDraw_, glxRead_, glxCtx_);
        ++restores;
      }
    }
  }
  KeepGlContext(const KeepGlContext&) = delete;
  KeepGlContext& operator=(const KeepGlContext&) = delete;
  static inline size_t restores = 0;

 private:
  static void* loaded(std::initializer_list<const char*> names) {
    for (const char* n : names)
      if (void* h = dlopen(n, RTLD_LAZY | RTLD_NOLOAD)) return h;
    return nullptr;
  }
  struct Egl {
    bool ok = false;
    void* (*getContext)() = nullptr;
    void* (*getDisplay)() = nullptr;
    void* (*getSurface)(int) = nullptr;
    unsigned (*makeCurrent)(void*, void*, void*, void*) = nullptr;
    unsigned (*queryApi)() = nullptr;
    unsigned (*bindApi)(unsigned) = nullptr;
  };
  struct Glx {
    bool ok = false;
    void* (*getContext)() = nullptr;
    void* (*getDisplay)() = nullptr;
    unsigned long (*getDrawable)() = nullptr;
    unsigned long (*getReadDrawable)() = nullptr;
    int (*makeCurrent)(void*, unsigned long, unsigned long, void*) = nullptr;
  };
  template <class F>
  static void sym(void* h, F& f, const char* name) {
    f = reinterpret_cast<F>(dlsym(h, name));
  }
  static Egl& egl() {
    static Egl e = [] {
      Egl x;
      if (void* h = loaded({"libEGL.so.1", "libEGL.so"})) {
        sym(h, x.getContext, "eglGetCurrentContext");
        sym(h, x.getDisplay, "eglGetCurrentDisplay");
        sym(h, x.getSurface, "eglGetCurrentSurface");
        sym(h, x.makeCurrent, "eglMakeCurrent");
        sym(h, x.queryApi, "eglQueryAPI");
        sym(h, x.bindApi, "eglBindAPI");
        x.ok = x.getContext && x.getDisplay && x.getSurface && x.makeCurrent && x.queryApi && x.bindApi;
      }
      return x;
    }();
    return e;
  }
  static Glx& glx() {
    static Glx g = [] {
      Glx x;
      if (void* h = loaded({"libGLX.so.0", "libGL.so.1", "libGL.so"})) {
        sym(h, x.getContext, "glXGetCurrentContext");
        sym(h, x.getDisplay, "glXGetCurrentDisplay");
        sym(h, x.getDrawable, "glXGetCurrentDrawable");
        sym(h, x.getReadDrawable, "glXGetCurrentReadDrawable");
        sym(h, x.makeCurrent, "glXMakeContextCurrent");
        x.ok = x.getContext && x.getDisplay && x.getDrawable && x.getReadDrawable && x.makeCurrent;
      }
      return x;
    }();
    return g;
  }

  unsigned api_ = 0;
  void *eglCtx_ = nullptr, *eglDpy_ = nullptr, *eglDraw_ = nullptr, *eglRead_ = nullptr;
  void *glxCtx_ = nullptr, *glxDpy_ = nullptr;
  unsigned long glxDraw_ = 0, glxRead_ = 0;
};

void check(VkResult r, const char* what) {
  if (r != VK_SUCCESS) throw Error(std::string(what) + " failed: " + vkResultName(r));
}

// The loader, opened once per process and never closed (closing a Vulkan
// loader while a driver has registered exit handlers is not safe).
PFN_vkGetInstanceProcAddr loaderEntry(std::string& problem) {
  static void* lib = dlopen("libvulkan.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    problem = "no Vulkan loader (libvulkan.so.1; Debian: libvulkan1 and a driver)";
    return nullptr;
  }
  auto gipa = reinterpret_cast<PFN_vkGetInstanceProcAddr>(dlsym(lib, "vkGetInstanceProcAddr"));
  if (!gipa) problem = "libvulkan.so.1 has no vkGetInstanceProcAddr";
  return gipa;
}

// An instance of Vulkan 1.1 and the instance-level entry points eddy uses.
struct Instance {
  PFN_vkGetInstanceProcAddr gipa = nullptr;
  VkInstance inst = VK_NULL_HANDLE;
  PFN_vkDestroyInstance destroyInstance = nullptr;
  PFN_vkEnumeratePhysicalDevices enumeratePhysicalDevices = nullptr;
  PFN_vkGetPhysicalDeviceProperties2 getProperties2 = nullptr;
  PFN_vkEnumerateDeviceExtensionProperties enumerateDeviceExtensions = nullptr;
  PFN_vkGetPhysicalDeviceQueueFamilyProperties getQueueFamilies = nullptr;
  PFN_vkGetPhysicalDeviceMemoryProperties getMemoryProperties = nullptr;
  PFN_vkGetPhysicalDeviceExternalBufferProperties getExternalBufferProperties = nullptr;
  PFN_vkGetPhysicalDeviceExternalSemaphoreProperties getExternalSemaphoreProperties = nullptr;
  PFN_vkCreateDevice createDevice = nullptr;
  PFN_vkGetDeviceProcAddr getDeviceProcAddr = nullptr;

  // Throws eddy::Error with the reason (no loader, no 1.1, no instance).
  Instance() {
    std::string problem;
    gipa = loaderEntry(problem);
    if (!gipa) throw Error(problem);
    auto version = reinterpret_cast<PFN_vkEnumerateInstanceVersion>(
        gipa(VK_NULL_HANDLE, "vkEnumerateInstanceVersion"));
    uint32_t v = VK_API_VERSION_1_0;
    if (!version || version(&v) != VK_SUCCESS || v < VK_API_VERSION_1_1)
      throw Error("the Vulkan loader offers only Vulkan 1.0 (1.1 is needed for external memory)");
    auto create = reinterpret_cast<PFN_vkCreateInstance>(gipa(VK_NULL_HANDLE, "vkCreateInstance"));
    if (!create) throw Error("libvulkan.so.1 has no vkCreateInstance");
    VkApplicationInfo app{};
    app.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO;
    app.pApplicationName = "eddy";
    app.apiVersion = VK_API_VERSION_1_1;
    VkInstanceCreateInfo ci{};
    ci.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO;
    ci.pApplicationInfo = &app;
    check(create(&ci, nullptr, &inst), "vkCreateInstance");
    load(destroyInstance, "vkDestroyInstance");
    load(enumeratePhysicalDevices, "vkEnumeratePhysicalDevices");
    load(getProperties2, "vkGetPhysicalDeviceProperties2");
    load(enumerateDeviceExtensions, "vkEnumerateDeviceExtensionProperties");
    load(getQueueFamilies, "vkGetPhysicalDeviceQueueFamilyProperties");
    load(getMemoryProperties, "vkGetPhysicalDeviceMemoryProperties");
    load(getExternalBufferProperties, "vkGetPhysicalDeviceExternalBufferProperties");
    load(getExternalSemaphoreProperties, "vkGetPhysicalDeviceExternalSemaphoreProperties");
    load(createDevice, "vkCreateDevice");
    load(getDeviceProcAddr, "vkGetDeviceProcAddr");
  }
  ~Instance() {
    if (inst && destroyInstance) destroyInstance(inst, nullptr);
  }
  Instance(const Instance&) = delete;
  Instance& operator=(const Instance&) = delete;

  template <class F>
  void load(F& f, const char* name) {
    f = reinterpret_cast<F>(gipa(inst, name));
    if (!f) {
      if (destroyInstance) destroyInstance(inst, nullptr);
      inst = VK_NULL_HANDLE;
      throw Error(std::string("the Vulkan instance has no ") + name);
    }
  }

  std::vector<VkPhysicalDevice> devices() const {
    uint32_t n = 0;
    check(enumeratePhysicalDevices(inst, &n, nullptr), "vkEnumeratePhysicalDevices");
    std::vector<VkPhysicalDevice> d(n);
    if (n) check(enumeratePhysicalDevices(inst, &n, d.data()), "vkEnumeratePhysicalDevices");
    d.resize(n);
    return d;
  }

  bool hasExtension(VkPhysicalDevice pd, const char* name) const {
    uint32_t n = 0;
    if (enumerateDeviceExtensions(pd, nullptr, &n, nullptr) != VK_SUCCESS) return false;
    std::vector<VkExtensionProperties> e(n);
    if (enumerateDeviceExtensions(pd, nullptr, &n, e.data()) != VK_SUCCESS) return false;
    for (uint32_t i = 0; i < n; ++i)
      if (std::strcmp(e[i].extensionName, name) == 0) return true;
    return false;
  }

  VulkanDeviceFacts facts(VkPhysicalDevice pd) const {
    VkPhysicalDeviceIDProperties id{};
    id.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_ID_PROPERTIES;
    VkPhysicalDeviceProperties2 p{};
    p.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2;
    p.pNext = &id;
    getProperties2(pd, &p);
    VulkanDeviceFacts f;
    f.name = p.properties.deviceName;
    std::memcpy(f.deviceUuid.data(), id.deviceUUID, f.deviceUuid.size());
    std::memcpy(f.driverUuid.data(), id.driverUUID, f.driverUuid.size());
    if (hasExtension(pd, VK_KHR_EXTERNAL_MEMORY_FD_EXTENSION_NAME)) {
      VkPhysicalDeviceExternalBufferInfo bi{};
      bi.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_EXTERNAL_BUFFER_INFO;
      bi.usage = kUsage;
      bi.handleType = VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT;
      VkExternalBufferProperties bp{};
      bp.sType = VK_STRUCTURE_TYPE_EXTERNAL_BUFFER_PROPERTIES;
      getExternalBufferProperties(pd, &bi, &bp);
      f.memoryFd = (bp.externalMemoryProperties.externalMemoryFeatures &
                    VK_EXTERNAL_MEMORY_FEATURE_EXPORTABLE_BIT) != 0;
    }
    if (hasExtension(pd, VK_KHR_EXTERNAL_SEMAPHORE_FD_EXTENSION_NAME)) {
      VkPhysicalDeviceExternalSemaphoreInfo si{};
      si.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_EXTERNAL_SEMAPHORE_INFO;
      si.handleType = VK_EXTERNAL_SEMAPHORE_HANDLE_TYPE_OPAQUE_FD_BIT;
      VkExternalSemaphoreProperties sp{};
      sp.sType = VK_STRUCTURE_TYPE_EXTERNAL_SEMAPHORE_PROPERTIES;
      getExternalSemaphoreProperties(pd, &si, &sp);
      f.semaphoreFd =
          (sp.externalSemaphoreFeatures & VK_EXTERNAL_SEMAPHORE_FEATURE_EXPORTABLE_BIT) != 0;
    }
    return f;
  }

  static constexpr VkBufferUsageFlags kUsage =
      VK_BUFFER_USAGE_VERTEX_BUFFER_BIT | VK_BUFFER_USAGE_STORAGE_BUFFER_BIT |
      VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT;
};

}  // namespace

size_t glContextRestores() { return KeepGlContext::restores; }

void probeVulkan(ExternalFacts& facts) {
  KeepGlContext keep;
  facts.vulkanDevices.clear();
  facts.vulkanProblem.clear();
  try {
    Instance in;
    for (VkPhysicalDevice pd : in.devices()) facts.vulkanDevices.push_back(in.facts(pd));
    if (facts.vulkanDevices.empty()) facts.vulkanProblem = "no Vulkan device (no driver for the loader)";
  } catch (const Error& e) {
    facts.vulkanProblem = e.what();
  }
}

struct VulkanExporter::Impl {
  Instance in;
  VkPhysicalDevice pd = VK_NULL_HANDLE;
  VkDevice dev = VK_NULL_HANDLE;
  std::string name;
  bool semaphores = false;
  VkPhysicalDeviceMemoryProperties mem{};
  PFN_vkDestroyDevice destroyDevice = nullptr;
  PFN_vkCreateBuffer createBuffer = nullptr;
  PFN_vkDestroyBuffer destroyBuffer = nullptr;
  PFN_vkGetBufferMemoryRequirements2 getBufferRequirements2 = nullptr;
  PFN_vkAllocateMemory allocateMemory = nullptr;
  PFN_vkFreeMemory freeMemory = nullptr;
  PFN_vkBindBufferMemory bindBufferMemory = nullptr;
  PFN_vkGetMemoryFdKHR getMemoryFd = nullptr;
  PFN_vkCreateSemaphore createSemaphore = nullptr;
  PFN_vkDestroySemaphore destroySemaphore = nullptr;
  PFN_vkGetSemaphoreFdKHR getSemaphoreFd = nullptr;
  bool dedicatedOnly = false;

  ~Impl() {
    if (dev && destroyDevice) destroyDevice(dev, nullptr);
  }
  template <class F>
  void load(F& f, const char* name) {
    f = reinterpret_cast<F>(in.getDeviceProcAddr(dev, name));
    if (!f) throw Error(std::string("the Vulkan device has no ") + name);
  }
};

VulkanExporter::VulkanExporter(const Uuid& deviceUuid) {
  KeepGlContext keep;
  try {
    open(deviceUuid);
  } catch (...) {
    impl_.reset();  // while the guard still holds the GL context
    throw;
  }
}

void VulkanExporter::open(const Uuid& deviceUuid) {
  impl_ = std::make_unique<Impl>();
  Impl& m = *impl_;
  VulkanDeviceFacts facts;
  for (VkPhysicalDevice pd : m.in.devices()) {
    const VulkanDeviceFacts f = m.in.facts(pd);
    if (f.deviceUuid == deviceUuid) {
      m.pd = pd;
      facts = f;
      break;
    }
  }
  if (!m.pd) throw Error("no Vulkan device has the UUID " + uuidText(deviceUuid));
  if (!facts.memoryFd) throw Error("Vulkan " + facts.name + " cannot export memory as an opaque fd");
  m.name = facts.name;
  m.semaphores = facts.semaphoreFd;
  {
    VkPhysicalDeviceExternalBufferInfo bi{};
    bi.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_EXTERNAL_BUFFER_INFO;
    bi.usage = Instance::kUsage;
    bi.handleType = VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT;
    VkExternalBufferProperties bp{};
    bp.sType = VK_STRUCTURE_TYPE_EXTERNAL_BUFFER_PROPERTIES;
    m.in.getExternalBufferProperties(m.pd, &bi, &bp);
    m.dedicatedOnly = (bp.externalMemoryProperties.externalMemoryFeatures &
                       VK_EXTERNAL_MEMORY_FEATURE_DEDICATED_ONLY_BIT) != 0;
  }
  m.in.getMemoryProperties(m.pd, &m.mem);

  // One queue is required to create a device; nothing is ever submitted to it.
  const float priority = 1.f;
  VkDeviceQueueCreateInfo q{};
  q.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO;
  q.queueFamilyIndex = 0;
  q.queueCount = 1;
  q.pQueuePriorities = &priority;
  std::vector<const char*> ext{VK_KHR_EXTERNAL_MEMORY_FD_EXTENSION_NAME};
  if (m.semaphores) ext.push_back(VK_KHR_EXTERNAL_SEMAPHORE_FD_EXTENSION_NAME);
  VkDeviceCreateInfo ci{};
  ci.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO;
  ci.queueCreateInfoCount = 1;
  ci.pQueueCreateInfos = &q;
  ci.enabledExtensionCount = uint32_t(ext.size());
  ci.ppEnabledExtensionNames = ext.data();
  check(m.in.createDevice(m.pd, &ci, nullptr, &m.dev), "vkCreateDevice");
  m.load(m.destroyDevice, "vkDestroyDevice");
  m.load(m.createBuffer, "vkCreateBuffer");
  m.load(m.destroyBuffer, "vkDestroyBuffer");
  m.load(m.getBufferRequirements2, "vkGetBufferMemoryRequirements2");
  m.load(m.allocateMemory, "vkAllocateMemory");
  m.load(m.freeMemory, "vkFreeMemory");
  m.load(m.bindBufferMemory, "vkBindBufferMemory");
  m.load(m.getMemoryFd, "vkGetMemoryFdKHR");
  m.load(m.createSemaphore, "vkCreateSemaphore");
  m.load(m.destroySemaphore, "vkDestroySemaphore");
  if (m.semaphores) m.load(m.getSemaphoreFd, "vkGetSemaphoreFdKHR");
}

VulkanExporter::~VulkanExporter() {
  KeepGlContext keep;
  impl_.reset();
}

const std::string& VulkanExporter::deviceName() const { return impl_->name; }
bool VulkanExporter::canExportSemaphores() const { return impl_->semaphores; }

VulkanExporter::Memory VulkanExporter::allocate(size_t bytes) {
  KeepGlContext keep;
  Impl& m = *impl_;
  Memory out;
  VkExternalMemoryBufferCreateInfo ext{};
  ext.sType = VK_STRUCTURE_TYPE_EXTERNAL_MEMORY_BUFFER_CREATE_INFO;
  ext.handleTypes = VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT;
  VkBufferCreateInfo bi{};
  bi.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO;
  bi.pNext = &ext;
  bi.size = VkDeviceSize(bytes);
  bi.usage = Instance::kUsage;
  bi.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
  VkBuffer buf = VK_NULL_HANDLE;
  check(m.createBuffer(m.dev, &bi, nullptr, &buf), "vkCreateBuffer");

  VkMemoryDedicatedRequirements dr{};
  dr.sType = VK_STRUCTURE_TYPE_MEMORY_DEDICATED_REQUIREMENTS;
  VkMemoryRequirements2 req{};
  req.sType = VK_STRUCTURE_TYPE_MEMORY_REQUIREMENTS_2;
  req.pNext = &dr;
  VkBufferMemoryRequirementsInfo2 ri{};
  ri.sType = VK_STRUCTURE_TYPE_BUFFER_MEMORY_REQUIREMENTS_INFO_2;
  ri.buffer = buf;
  m.getBufferRequirements2(m.dev, &ri, &req);
  const bool dedicated = m.dedicatedOnly || dr.requiresDedicatedAllocation;

  uint32_t type = UINT32_MAX;
  for (uint32_t i = 0; i < m.mem.memoryTypeCount && type == UINT32_MAX; ++i)
    if ((req.memoryRequirements.memoryTypeBits & (1u << i)) &&
        (m.mem.memoryTypes[i].propertyFlags & VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT))
      type = i;
  if (type == UINT32_MAX) {
    m.destroyBuffer(m.dev, buf, nullptr);
    throw Error("Vulkan " + m.name + " has no device-local memory type for an exportable buffer");
  }
  VkExportMemoryAllocateInfo ex{};
  ex.sType = VK_STRUCTURE_TYPE_EXPORT_MEMORY_ALLOCATE_INFO;
  ex.handleTypes = VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT;
  VkMemoryDedicatedAllocateInfo da{};
  da.sType = VK_STRUCTURE_TYPE_MEMORY_DEDICATED_ALLOCATE_INFO;
  da.buffer = buf;
  if (dedicated) ex.pNext = &da;
  VkMemoryAllocateInfo ai{};
  ai.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO;
  ai.pNext = &ex;
  ai.allocationSize = req.memoryRequirements.size;
  ai.memoryTypeIndex = type;
  VkDeviceMemory mem = VK_NULL_HANDLE;
  const VkResult r = m.allocateMemory(m.dev, &ai, nullptr, &mem);
  if (r != VK_SUCCESS) {
    m.destroyBuffer(m.dev, buf, nullptr);
    throw Error("vkAllocateMemory of " + std::to_string(ai.allocationSize) +
                " exportable bytes failed: " + vkResultName(r));
  }
  if (const VkResult b = m.bindBufferMemory(m.dev, buf, mem, 0); b != VK_SUCCESS) {
    m.freeMemory(m.dev, mem, nullptr);
    m.destroyBuffer(m.dev, buf, nullptr);
    check(b, "vkBindBufferMemory");
  }
  out.memory = reinterpret_cast<void*>(mem);
  out.buffer = reinterpret_cast<void*>(buf);
  out.size = size_t(ai.allocationSize);
  out.dedicated = dedicated;
  return out;
}

void VulkanExporter::free(Memory& mm) {
  KeepGlContext keep;
  Impl& m = *impl_;
  if (mm.buffer) m.destroyBuffer(m.dev, reinterpret_cast<VkBuffer>(mm.buffer), nullptr);
  if (mm.memory) m.freeMemory(m.dev, reinterpret_cast<VkDeviceMemory>(mm.memory), nullptr);
  mm = Memory{};
}

int VulkanExporter::exportFd(const Memory& mm) {
  KeepGlContext keep;
  VkMemoryGetFdInfoKHR gi{};
  gi.sType = VK_STRUCTURE_TYPE_MEMORY_GET_FD_INFO_KHR;
  gi.memory = reinterpret_cast<VkDeviceMemory>(mm.memory);
  gi.handleType = VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT;
  int fd = -1;
  check(impl_->getMemoryFd(impl_->dev, &gi, &fd), "vkGetMemoryFdKHR");
  return fd;
}

void* VulkanExporter::createSemaphore() {
  KeepGlContext keep;
  Impl& m = *impl_;
  if (!m.semaphores) throw Error("Vulkan " + m.name + " cannot export semaphores as an opaque fd");
  VkExportSemaphoreCreateInfo ex{};
  ex.sType = VK_STRUCTURE_TYPE_EXPORT_SEMAPHORE_CREATE_INFO;
  ex.handleTypes = VK_EXTERNAL_SEMAPHORE_HANDLE_TYPE_OPAQUE_FD_BIT;
  VkSemaphoreCreateInfo ci{};
  ci.sType = VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO;
  ci.pNext = &ex;
  VkSemaphore s = VK_NULL_HANDLE;
  check(m.createSemaphore(m.dev, &ci, nullptr, &s), "vkCreateSemaphore");
  return reinterpret_cast<void*>(s);
}

void VulkanExporter::destroySemaphore(void* s) {
  KeepGlContext keep;
  if (s) impl_->destroySemaphore(impl_->dev, reinterpret_cast<VkSemaphore>(s), nullptr);
}

int VulkanExporter::exportSemaphoreFd(void* s) {
  KeepGlContext keep;
  VkSemaphoreGetFdInfoKHR gi{};
  gi.sType = VK_STRUCTURE_TYPE_SEMAPHORE_GET_FD_INFO_KHR;
  gi.semaphore = reinterpret_cast<VkSemaphore>(s);
  gi.handleType = VK_EXTERNAL_SEMAPHORE_HANDLE_TYPE_OPAQUE_FD_BIT;
  int fd = -1;
  check(impl_->getSemaphoreFd(impl_->dev, &gi, &fd), "vkGetSemaphoreFdKHR");
  return fd;
}

}  // namespace eddy
