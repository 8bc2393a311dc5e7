#include "cl.hpp"

#include "launch_batch.hpp"

#include <algorithm>
#include <cstdio>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <sstream>

namespace eddy::kernels {
std::string_view source(std::string_view name);
}

namespace eddy {

bool hasExtension(const std::string& list, std::string_view ext) {
  std::istringstream in(list);
  std::string word;
  while (in >> word)
    if (word == ext) return true;
  return false;
}

std::string clErrorName(cl_int code) {
  switch (code) {
#define EDDY_CASE(c) case c: return #c;
    EDDY_CASE(CL_SUCCESS)
    EDDY_CASE(CL_DEVICE_NOT_FOUND)
    EDDY_CASE(CL_DEVICE_NOT_AVAILABLE)
    EDDY_CASE(CL_COMPILER_NOT_AVAILABLE)
    EDDY_CASE(CL_MEM_OBJECT_ALLOCATION_FAILURE)
    EDDY_CASE(CL_OUT_OF_RESOURCES)
    EDDY_CASE(CL_OUT_OF_HOST_MEMORY)
    EDDY_CASE(CL_PROFILING_INFO_NOT_AVAILABLE)
    EDDY_CASE(CL_MEM_COPY_OVERLAP)
    EDDY_CASE(CL_IMAGE_FORMAT_MISMATCH)
    EDDY_CASE(CL_IMAGE_FORMAT_NOT_SUPPORTED)
    EDDY_CASE(CL_BUILD_PROGRAM_FAILURE)
    EDDY_CASE(CL_MAP_FAILURE)
    EDDY_CASE(CL_MISALIGNED_SUB_BUFFER_OFFSET)
    EDDY_CASE(CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST)
    EDDY_CASE(CL_COMPILE_PROGRAM_FAILURE)
    EDDY_CASE(CL_LINKER_NOT_AVAILABLE)
    EDDY_CASE(CL_LINK_PROGRAM_FAILURE)
    EDDY_CASE(CL_DEVICE_PARTITION_FAILED)
    EDDY_CASE(CL_KERNEL_ARG_INFO_NOT_AVAILABLE)
    EDDY_CASE(CL_INVALID_VALUE)
    EDDY_CASE(CL_INVALID_DEVICE_TYPE)
    EDDY_CASE(CL_INVALID_PLATFORM)
    EDDY_CASE(CL_INVALID_DEVICE)
    EDDY_CASE(CL_INVALID_CONTEXT)
    EDDY_CASE(CL_INVALID_QUEUE_PROPERTIES)
    EDDY_CASE(CL_INVALID_COMMAND_QUEUE)
    EDDY_CASE(CL_INVALID_HOST_PTR)
    EDDY_CASE(CL_INVALID_MEM_OBJECT)
    EDDY_CASE(CL_INVALID_IMAGE_FORMAT_DESCRIPTOR)
    EDDY_CASE(CL_INVALID_IMAGE_SIZE)
    EDDY_CASE(CL_INVALID_SAMPLER)
    EDDY_CASE(CL_INVALID_BINARY)
    EDDY_CASE(CL_INVALID_BUILD_OPTIONS)
    EDDY_CASE(CL_INVALID_PROGRAM)
    EDDY_CASE(CL_INVALID_PROGRAM_EXECUTABLE)
    EDDY_CASE(CL_INVALID_KERNEL_NAME)
    EDDY_CASE(CL_INVALID_KERNEL_DEFINITION)
    EDDY_CASE(CL_INVALID_KERNEL)
    EDDY_CASE(CL_INVALID_ARG_INDEX)
    EDDY_CASE(CL_INVALID_ARG_VALUE)
    EDDY_CASE(CL_INVALID_ARG_SIZE)
    EDDY_CASE(CL_INVALID_KERNEL_ARGS)
    EDDY_CASE(CL_INVALID_WORK_DIMENSION)
    EDDY_CASE(CL_INVALID_WORK_GROUP_SIZE)
    EDDY_CASE(CL_INVALID_WORK_ITEM_SIZE)
    EDDY_CASE(CL_INVALID_GLOBAL_OFFSET)
    EDDY_CASE(CL_INVALID_EVENT_WAIT_LIST)
    EDDY_CASE(CL_INVALID_EVENT)
    EDDY_CASE(CL_INVALID_OPERATION)
    EDDY_CASE(CL_INVALID_GL_OBJECT)
    EDDY_CASE(CL_INVALID_BUFFER_SIZE)
    EDDY_CASE(CL_INVALID_MIP_LEVEL)
    EDDY_CASE(CL_INVALID_GLOBAL_WORK_SIZE)
    EDDY_CASE(CL_INVALID_PROPERTY)
    EDDY_CASE(CL_INVALID_IMAGE_DESCRIPTOR)
    EDDY_CASE(CL_INVALID_COMPILER_OPTIONS)
    EDDY_CASE(CL_INVALID_LINKER_OPTIONS)
    EDDY_CASE(CL_INVALID_DEVICE_PARTITION_COUNT)
#undef EDDY_CASE
    case -1001: return "CL_PLATFORM_NOT_FOUND_KHR";
    default: return "CL_UNKNOWN_ERROR(" + std::to_string(code) + ")";
  }
}

bool envSwitch(const char* name, bool fallback) {
  const char* env = std::getenv(name);
  if (!env || !*env) return fallback;
  const std::string v(env);
  if (v != "0" && v != "1") throw Error(std::string(name) + "='" + v + "': expected 0 or 1");
  return v == "1";
}

std::string describe(const cl::Error& e) {
  return std::string(e.what()) + " failed: " + clErrorName(e.err()) + " (" +
         std::to_string(e.err()) + ")";
}

std::string DeviceInfo::typeName() const {
  if (type & CL_DEVICE_TYPE_GPU) return "GPU";
  if (type & CL_DEVICE_TYPE_CPU) return "CPU";
  if (type & CL_DEVICE_TYPE_ACCELERATOR) return "accelerator";
  return "other";
}

namespace {

const char* kNoPlatform =
    "no OpenCL platform found. Install an OpenCL driver: on Debian "
    "'apt-get install pocl-opencl-icd' gives a CPU device; for a GPU install "
    "your vendor's ICD (e.g. nvidia-opencl-icd, mesa-opencl-icd, intel-opencl-icd).";

std::vector<cl::Platform> platforms() {
  std::vector<cl::Platform> ps;
  try {
    cl::Platform::get(&ps);
  } catch (const cl::Error& e) {
    if (e.err() == -1001 || e.err() == CL_PLATFORM_NOT_FOUND_KHR) throw Error(kNoPlatform);
    throw Error("listing OpenCL platforms: " + describe(e));
  }
  if (ps.empty()) throw Error(kNoPlatform);
  return ps;
}


DeviceInfo describeDevice(const cl::Platform& p, const cl::Device& d, unsigned pi, unsigned di) {
  DeviceInfo info;
  info.platformIndex = pi;
  info.deviceIndex = di;
  info.platformName = p.getInfo<CL_PLATFORM_NAME>();
  info.platformVersion = p.getInfo<CL_PLATFORM_VERSION>();
  info.name = d.getInfo<CL_DEVICE_NAME>();
  info.vendor = d.getInfo<CL_DEVICE_VENDOR>();
  info.driverVersion = d.getInfo<CL_DRIVER_VERSION>();
  info.openclC = d.getInfo<CL_DEVICE_OPENCL_C_VERSION>();
  info.type = d.getInfo<CL_DEVICE_TYPE>();
  info.computeUnits = d.getInfo<CL_DEVICE_MAX_COMPUTE_UNITS>();
  info.globalMem = d.getInfo<CL_DEVICE_GLOBAL_MEM_SIZE>();
  info.maxAlloc = d.getInfo<CL_DEVICE_MAX_MEM_ALLOC_SIZE>();
  info.localMem = d.getInfo<CL_DEVICE_LOCAL_MEM_SIZE>();
  info.maxWorkGroup = d.getInfo<CL_DEVICE_MAX_WORK_GROUP_SIZE>();
  const std::string ext = d.getInfo<CL_DEVICE_EXTENSIONS>();
  info.fp64 = hasExtension(ext, "cl_khr_fp64");
  info.correctlyRoundedDivSqrt =
      (d.getInfo<CL_DEVICE_SINGLE_FP_CONFIG>() & CL_FP_CORRECTLY_ROUNDED_DIVIDE_SQRT) != 0;
  info.glSharing = hasExtension(ext, "cl_khr_gl_sharing");
  // Trim the trailing NULs some drivers leave in info strings.
  for (std::string* s : {&info.platformName, &info.platformVersion, &info.name, &info.vendor,
                         &info.driverVersion, &info.openclC})
    while (!s->empty() && (s->back() == '\0' || s->back() == ' ')) s->pop_back();
  return info;
}

cl::Device deviceAt(unsigned pi, unsigned di) {
  auto ps = platforms();
  std::vector<cl::Device> ds;
  ps.at(pi).getDevices(CL_DEVICE_TYPE_ALL, &ds);
  return ds.at(di);
}

}  // namespace

std::vector<DeviceInfo> enumerateDevices() {
  std::vector<DeviceInfo> out;
  const auto ps = platforms();
  for (unsigned pi = 0; pi < ps.size(); ++pi) {
    std::vector<cl::Device> ds;
    try {
      ps[pi].getDevices(CL_DEVICE_TYPE_ALL, &ds);
    } catch (const cl::Error&) {
      continue;  // a platform without devices (CL_DEVICE_NOT_FOUND) is not an error
    }
    for (unsigned di = 0; di < ds.size(); ++di) out.push_back(describeDevice(ps[pi], ds[di], pi, di));
  }
  return out;
}

std::string formatDeviceList(const std::vector<DeviceInfo>& devices) {
  std::ostringstream o;
  int lastPlatform = -1;
  for (const auto& d : devices) {
    if (static_cast<int>(d.platformIndex) != lastPlatform) {
      o << "Platform " << d.platformIndex << ": " << d.platformName << " (" << d.platformVersion
        << ")\n";
      lastPlatform = static_cast<int>(d.platformIndex);
    }
    o << "  " << d.platformIndex << ':' << d.deviceIndex << "  " << d.typeName() << "  " << d.name
      << "\n        compute units " << d.computeUnits << ", global memory "
      << (d.globalMem >> 20) << " MiB (max allocation " << (d.maxAlloc >> 20)
      << " MiB), local memory " << (d.localMem >> 10) << " KiB, max work-group "
      << d.maxWorkGroup << "\n        " << d.openclC << ", driver " << d.driverVersion
      << ", fp64 " << (d.fp64 ? "yes" : "no") << ", cl_khr_gl_sharing "
      << (d.glSharing ? "yes" : "no") << '\n';
  }
  if (devices.empty()) o << "OpenCL platforms exist but offer no device.\n";
  return o.str();
}

namespace {
bool isIndex(std::string_view s) {
  return !s.empty() && s.size() < 6 && s.find_first_not_of("0123456789") == std::string_view::npos;
}
}  // namespace

bool isDeviceSpec(std::string_view spec) {
  if (spec.empty() || spec == "default" || spec == "gpu" || spec == "cpu") return true;
  const auto colon = spec.find(':');
  return colon != std::string_view::npos && isIndex(spec.substr(0, colon)) &&
         isIndex(spec.substr(colon + 1));
}

std::string deviceSpecError(std::string_view spec) {
  return "'" + std::string(spec) +
         "': expected gpu, cpu or P:D (platform:device indices, see 'eddy-cli devices')";
}

DeviceInfo selectDevice(std::string_view spec, std::string_view flag) {
  const std::string named = std::string(flag) + " " + std::string(spec);
  // Syntax first: a malformed spec is the same error with or without devices.
  if (!isDeviceSpec(spec)) throw Error(std::string(flag) + " " + deviceSpecError(spec));
  const auto all = enumerateDevices();
  if (all.empty()) throw Error("no OpenCL device found (platforms exist but offer no device)");
  auto firstOf = [&](cl_device_type t) -> const DeviceInfo* {
    for (const auto& d : all)
      if (d.type & t) return &d;
    return nullptr;
  };
  if (spec.empty() || spec == "default") {
    if (auto d = firstOf(CL_DEVICE_TYPE_GPU)) return *d;
    if (auto d = firstOf(CL_DEVICE_TYPE_CPU)) return *d;
    return all.front();
  }
  if (spec == "gpu" || spec == "cpu") {
    const auto t = spec == "gpu" ? CL_DEVICE_TYPE_GPU : CL_DEVICE_TYPE_CPU;
    if (auto d = firstOf(t)) return *d;
    throw Error(named + ": no " + std::string(spec) +
                " device found; available:\n" + formatDeviceList(all));
  }
  const auto colon = spec.find(':');
  const unsigned pi = unsigned(std::stoul(std::string(spec.substr(0, colon)))),
                 di = unsigned(std::stoul(std::string(spec.substr(colon + 1))));
  for (const auto& dev : all)
    if (dev.platformIndex == pi && dev.deviceIndex == di) return dev;
  throw Error(named + ": no such platform:device; available:\n" +
              formatDeviceList(all));
}

std::string deviceTag(const DeviceInfo& d) {
  return std::to_string(d.platformIndex) + ":" + std::to_string(d.deviceIndex);
}

std::vector<DeviceInfo> selectDevices(std::string_view spec) {
  const std::string what = "--devices '" + std::string(spec) + "'";
  if (spec == "all" || spec == "gpu" || spec == "cpu") {
    const auto all = enumerateDevices();
    std::vector<DeviceInfo> out;
    for (const auto& d : all)
      if (spec == "all" || (d.type & (spec == "gpu" ? CL_DEVICE_TYPE_GPU : CL_DEVICE_TYPE_CPU)))
        out.push_back(d);
    if (out.empty())
      throw Error(what + ": no matching device; available:\n" + formatDeviceList(all));
    return out;
  }
  std::vector<DeviceInfo> out;
  size_t start = 0;
  for (;;) {
    const size_t comma = spec.find(',', start);
    const std::string_view item =
        spec.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start);
    if (item.empty())
      throw Error(what + ": empty item; expected all, gpu, cpu or a list like 0:0,0:1");
    DeviceInfo d = selectDevice(item, "--devices");
    for (const auto& o : out)
      if (o.platformIndex == d.platformIndex && o.deviceIndex == d.deviceIndex)
        throw Error(what + ": device " + deviceTag(d) + " (" + d.name + ") is listed twice");
    out.push_back(std::move(d));
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return out;
}

Context::Context(std::string_view deviceSpec) : Context(selectDevice(deviceSpec)) {}

Context::Context(const DeviceInfo& info) : Context(info, {}) {}

Context::Context(const DeviceInfo& info, const std::vector<cl_context_properties>& properties)
    : info_(info) {
  try {
    device_ = deviceAt(info.platformIndex, info.deviceIndex);
    if (properties.empty()) {
      context_ = cl::Context(device_);
    } else {
      std::vector<cl_context_properties> props = properties;
      props.push_back(CL_CONTEXT_PLATFORM);
      props.push_back(reinterpret_cast<cl_context_properties>(device_.getInfo<CL_DEVICE_PLATFORM>()));
      props.push_back(0);
      context_ = cl::Context(device_, props.data());
    }
    queue_ = cl::CommandQueue(context_, device_, CL_QUEUE_PROFILING_ENABLE);
  } catch (const cl::Error& e) {
    throw Error("opening OpenCL device '" + info.name + "': " + describe(e));
  }
}

cl::Platform Context::platform() const {
  return cl::Platform(device_.getInfo<CL_DEVICE_PLATFORM>(), true);
}

namespace {
std::atomic<long long> gLiveBytes{0}, gLiveBuffers{0};
// Called by the OpenCL implementation when a buffer's last reference is gone.
void CL_CALLBACK onBufferReleased(cl_mem, void* bytes) {
  gLiveBytes -= static_cast<long long>(reinterpret_cast<uintptr_t>(bytes));
  --gLiveBuffers;
}
}  // namespace

DeviceMemoryInUse deviceMemoryInUse() { return {gLiveBytes.load(), gLiveBuffers.load()}; }

cl::Buffer Context::createBuffer(cl_mem_flags flags, size_t bytes, std::string_view what) {
  try {
    cl::Buffer b(context_, flags, bytes);
    b.setDestructorCallback(onBufferReleased,
                            reinterpret_cast<void*>(static_cast<uintptr_t>(bytes)));
    gLiveBytes += static_cast<long long>(bytes);
    ++gLiveBuffers;
    return b;
  } catch (const cl::Error& e) {
    throw Error("allocating " + std::to_string(bytes) + " bytes of device memory for " +
                std::string(what) + " on " + info_.name + ": " + describe(e));
  }
}

std::string kernelSource(std::string_view file) {
  if (const char* dir = std::getenv("EDDY_KERNEL_DIR"); dir && *dir) {
    const std::string path = std::string(dir) + "/" + std::string(file);
    std::ifstream in(path, std::ios::binary);
    if (in) {
      std::ostringstream s;
      s << in.rdbuf();
      return s.str();
    }
    // fall through to the embedded copy when the override folder lacks this file
  }
  const auto s = kernels::source(file);
  if (s.empty()) throw Error("kernel source '" + std::string(file) + "' is not embedded");
  return std::string(s);
}

cl::Program Context::buildProgram(std::string_view file, const std::string& options) {
  return buildProgram(std::vector<std::string>{std::string(file)}, options);
}

cl::Program Context::buildProgram(const std::vector<std::string>& files,
                                  const std::string& options) {
  std::string src = kernelSource("eddy_shared.h");
  std::string file;
  for (const auto& f : files) {
    src += "\n#line 1 \"" + f + "\"\n" + kernelSource(f);
    file += (file.empty() ? "" : "+") + f;
  }
  cl::Program program(context_, src);
  std::string opts = "-cl-std=CL1.2 " + options;
  if (info_.fp64) opts += " -DEDDY_FP64";
  // Developer aid: EDDY_CL_OPTIONS is appended to every program's options.
  if (const char* extra = std::getenv("EDDY_CL_OPTIONS"); extra && *extra) opts += std::string(" ") + extra;
  try {
    program.build(std::vector<cl::Device>{device_}, opts.c_str());
  } catch (const cl::BuildError& e) {
    std::string log;
    for (const auto& [dev, l] : e.getBuildLog())
      log += "--- build log for " + dev.getInfo<CL_DEVICE_NAME>() + ":\n" + l + "\n";
    throw Error("building kernel program '" + file + "' (options: " + opts +
                ") failed: " + clErrorName(e.err()) + "\n" + log);
  } catch (const cl::Error& e) {
    std::string log;
    try {
      log = program.getBuildInfo<CL_PROGRAM_BUILD_LOG>(device_);
    } catch (const cl::Error&) {
    }
    throw Error("building kernel program '" + file + "': " + describe(e) + "\n" + log);
  }
  // Developer aids: EDDY_BUILD_LOG=1 prints the (successful) build log, e.g.
  // with -cl-nv-verbose register counts; EDDY_DUMP_BINARIES=DIR writes the
  // device binary (PTX on NVIDIA) of every program built.
  if (const char* v = std::getenv("EDDY_BUILD_LOG"); v && *v == '1') {
    std::fprintf(stderr, "--- build log for %s (%s):\n%s\n", std::string(file).c_str(), opts.c_str(),
                 program.getBuildInfo<CL_PROGRAM_BUILD_LOG>(device_).c_str());
  }
  if (const char* dir = std::getenv("EDDY_DUMP_BINARIES"); dir && *dir) {
    const auto binaries = program.getInfo<CL_PROGRAM_BINARIES>();
    static int counter = 0;
    for (const auto& bin : binaries) {
      std::ofstream f(std::string(dir) + "/" + std::string(file) + "." + std::to_string(counter++) +
                      ".bin", std::ios::binary);
      f.write(reinterpret_cast<const char*>(bin.data()), std::streamsize(bin.size()));
    }
  }
  return program;
}

void Context::detach(LaunchBatch* batch) {
  batches_.erase(std::remove(batches_.begin(), batches_.end(), batch), batches_.end());
}

void Context::flushBatches() {
  for (LaunchBatch* b : batches_) b->flush();
}

}  // namespace eddy
