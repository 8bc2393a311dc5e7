// cl.hpp: the one place that configures the Khronos C++ bindings for eddy.
#pragma once

#define CL_HPP_ENABLE_EXCEPTIONS
#define CL_HPP_MINIMUM_OPENCL_VERSION 120
#define CL_HPP_TARGET_OPENCL_VERSION 120
#include <CL/opencl.hpp>

#include "error.hpp"

#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace eddy {

class LaunchBatch;

// "CL_OUT_OF_RESOURCES" for -5, "CL_UNKNOWN_ERROR(-1234)" for unknown codes.
std::string clErrorName(cl_int code);
// "clEnqueueNDRangeKernel: CL_OUT_OF_RESOURCES (-5)"
std::string describe(const cl::Error& e);

struct DeviceInfo {
  unsigned platformIndex = 0, deviceIndex = 0;
  std::string platformName, platformVersion, name, vendor, driverVersion, openclC;
  cl_device_type type = 0;
  unsigned computeUnits = 0;
  cl_ulong globalMem = 0, maxAlloc = 0, localMem = 0;
  size_t maxWorkGroup = 0;
  bool fp64 = false, glSharing = false;
  bool correctlyRoundedDivSqrt = false;  // CL_FP_CORRECTLY_ROUNDED_DIVIDE_SQRT offered
  std::string typeName() const;
};

// Every device of every platform. Throws eddy::Error (with the package to
// install) when no OpenCL platform exists at all.
std::vector<DeviceInfo> enumerateDevices();
// Whether the space-separated extension list (CL_DEVICE_EXTENSIONS) names `ext`.
bool hasExtension(const std::string& list, std::string_view ext);
std::string formatDeviceList(const std::vector<DeviceInfo>& devices);

// "gpu", "cpu", "P:D" (platform:device indices), or "" = first GPU, else first CPU,
// else the first device. Throws eddy::Error naming what was asked (as `flag`
// SPEC: --devices names its own items) and what exists.
DeviceInfo selectDevice(std::string_view spec, std::string_view flag = "--device");
// Whether `spec` is one of those forms (syntax only: the device may not exist),
// and the message for one that is not ("'foo': expected gpu, cpu or P:D ...").
bool isDeviceSpec(std::string_view spec);
std::string deviceSpecError(std::string_view spec);
// Several devices (multi-device N-body, --devices): "all" = every device of
// every platform, "gpu" / "cpu" = every device of that type, else a
// comma-separated list of selectDevice() specs ("0:0,0:1"). Throws eddy::Error
// for an unknown item, an empty item, no match, or a device listed twice.
std::vector<DeviceInfo> selectDevices(std::string_view spec);
// "P:D", the platform:device index pair the CLI and the profiler use.
std::string deviceTag(const DeviceInfo& d);

// A device with its context and one in-order, profiling-enabled queue.
class Context {
 public:
  explicit Context(std::string_view deviceSpec = {});
  explicit Context(const DeviceInfo& info);
  // With extra context properties (pairs, without the terminating 0 and without
  // CL_CONTEXT_PLATFORM, which is added): used by the desktop app to create the
  // context against its OpenGL context (cl_khr_gl_sharing).
  Context(const DeviceInfo& info, const std::vector<cl_context_properties>& properties);

  const DeviceInfo& info() const { return info_; }
  cl::Context& context() { return context_; }
  cl::Device& device() { return device_; }
  // The queue. Launches that a LaunchBatch on it has deferred
  // (launch_batch.hpp) are handed to the queue first, so whatever the caller
  // enqueues next (a read, a write, a launch of its own, a finish) comes
  // after them, as it would without the batch.
  cl::CommandQueue& queue() {
    if (!batches_.empty()) flushBatches();
    return queue_;
  }
  // The queue without that flush: only for the ranges of launches made
  // through Profiler::run / launch, which a batch may defer in order.
  cl::CommandQueue& launchQueue() { return queue_; }
  // A LaunchBatch on this queue registers itself (and leaves on destruction).
  void attach(LaunchBatch* batch) { batches_.push_back(batch); }
  void detach(LaunchBatch* batch);
  cl::Platform platform() const;

  // Builds a program from embedded sources (eddy_shared.h is prepended) with
  // the given -D options. With EDDY_KERNEL_DIR set, sources are read from that
  // folder instead (kernel development without a rebuild). On a build failure
  // throws eddy::Error holding the device's full build log.
  cl::Program buildProgram(std::string_view file, const std::string& options = {});
  // The same for several files concatenated in order (e.g. a common header of
  // device functions followed by the kernels that use it) into one program.
  cl::Program buildProgram(const std::vector<std::string>& files, const std::string& options = {});

  // Every device buffer of the core is created here, so the live device bytes
  // are counted (deviceMemoryInUse()); soak tests assert they do not grow.
  // Throws eddy::Error naming `what` on failure.
  cl::Buffer createBuffer(cl_mem_flags flags, size_t bytes, std::string_view what);

 private:
  DeviceInfo info_;
  cl::Device device_;
  cl::Context context_;
  cl::CommandQueue queue_;
  std::vector<LaunchBatch*> batches_;
  void flushBatches();
};

// Device memory held by buffers made with Context::createBuffer that the
// OpenCL implementation has not yet released (all contexts of the process).
struct DeviceMemoryInUse {
  long long bytes = 0, buffers = 0;
};
DeviceMemoryInUse deviceMemoryInUse();

// Source text of a kernel file: EDDY_KERNEL_DIR/<file> if that variable is set,
// else the copy embedded at build time. Throws if neither exists.
std::string kernelSource(std::string_view file);

// A cl_float4 from doubles (rounded to float).
inline cl_float4 makeFloat4(double x, double y, double z, double w = 0) {
  cl_float4 v;
  v.s[0] = float(x);
  v.s[1] = float(y);
  v.s[2] = float(z);
  v.s[3] = float(w);
  return v;
}

// Round n up to a multiple of m.
inline size_t roundUp(size_t n, size_t m) { return (n + m - 1) / m * m; }

// A developer switch from the environment: `name`=0 or 1, unset or empty =
// `fallback`; anything else throws eddy::Error naming the variable.
bool envSwitch(const char* name, bool fallback);


// The queue and ranges of one kernel launch. (cl::EnqueueArgs keeps its
// fields private to cl::KernelFunctor, so a launch without an event could not
// be made from it.) Same constructors as cl::EnqueueArgs.
struct EnqueueArgs {
  cl::CommandQueue queue;
  cl::NDRange offset, global, local;
  std::vector<cl::Event> wait;  // events the launch waits for (none: empty)
  EnqueueArgs(const cl::CommandQueue& q, const cl::NDRange& g) : queue(q), global(g) {}
  EnqueueArgs(const cl::CommandQueue& q, const cl::NDRange& g, const cl::NDRange& l)
      : queue(q), global(g), local(l) {}
  EnqueueArgs(const cl::CommandQueue& q, const cl::NDRange& o, const cl::NDRange& g,
              const cl::NDRange& l)
      : queue(q), offset(o), global(g), local(l) {}
  EnqueueArgs(const cl::CommandQueue& q, const cl::Event& e, const cl::NDRange& g,
              const cl::NDRange& l)
      : queue(q), global(g), local(l), wait{e} {}
  EnqueueArgs(const cl::CommandQueue& q, const std::vector<cl::Event>& w, const cl::NDRange& g,
              const cl::NDRange& l)
      : queue(q), global(g), local(l), wait(w) {}
};

// A type-safe kernel functor like cl::KernelFunctor (arguments typed and
// set in order at each launch), which can also launch WITHOUT creating an
// event: on NVIDIA's OpenCL an event on a profiling queue costs about 8 us of
// host time per launch, more than the launch itself (docs/PERFORMANCE.md,
// "Profiling events"), so Profiler::run samples them (profile_every).
template <class... Ts>
class KernelFunctor {
 public:
  explicit KernelFunctor(const cl::Kernel& kernel) : kernel_(kernel) {}
  KernelFunctor(const cl::Program& program, const std::string& name)
      : kernel_(program, name.c_str()) {}

  // Sets the arguments and enqueues; event == nullptr: no event is made.
  void enqueue(const EnqueueArgs& a, cl::Event* event, const Ts&... ts) {
    cl_uint index = 0;
    (kernel_.setArg(index++, ts), ...);
    a.queue.enqueueNDRangeKernel(kernel_, a.offset, a.global, a.local,
                                 a.wait.empty() ? nullptr : &a.wait, event);
  }
  cl::Event operator()(const EnqueueArgs& a, const Ts&... ts) {
    cl::Event event;
    enqueue(a, &event, ts...);
    return event;
  }
  cl::Kernel& kernel() { return kernel_; }
  cl::Kernel getKernel() const { return kernel_; }  // as cl::KernelFunctor

 private:
  cl::Kernel kernel_;
};

}  // namespace eddy
