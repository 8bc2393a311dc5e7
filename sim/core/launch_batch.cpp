#include "launch_batch.hpp"

#include <CL/cl_ext.h>

#include <algorithm>
#include <cstdlib>

namespace eddy {

// The entry points of cl_khr_command_buffer, found on the device's platform.
// Their parameters are the same in Debian 12's headers (the extension as of
// 2023, which PoCL 3.1's 0.9.0 matched in a test) and in the current
// specification, where a property type was renamed; other versions untried.
struct LaunchBatch::Fns {
  clCreateCommandBufferKHR_fn create = nullptr;
  clCommandNDRangeKernelKHR_fn ndrange = nullptr;
  clFinalizeCommandBufferKHR_fn finalize = nullptr;
  clEnqueueCommandBufferKHR_fn enqueue = nullptr;
  clReleaseCommandBufferKHR_fn release = nullptr;
  bool simultaneousFlag = false;  // create with CL_COMMAND_BUFFER_SIMULTANEOUS_USE_KHR
};

struct LaunchBatch::Recording {
  Run run;                      // what was recorded, compared launch by launch
  std::vector<cl::Kernel> own;  // one kernel object per command
  cl_command_buffer_khr cb = nullptr;
  const Fns* fns = nullptr;
  uint64_t lastUse = 0;
  ~Recording() {
    if (cb) fns->release(cb);
  }
};

namespace {

constexpr uint64_t kFnvPrime = 1099511628211ull;
inline void fnv(uint64_t& h, const void* p, size_t n) {
  const auto* c = static_cast<const unsigned char*>(p);
  for (size_t i = 0; i < n; ++i) {
    h ^= c[i];
    h *= kFnvPrime;
  }
}

// Recordings unused for this many flushes are dropped (their buffers and
// kernels released); at most kMaxRecordings are kept.
constexpr uint64_t kStaleFlushes = 4096;
constexpr size_t kMaxRecordings = 256;

}  // namespace

LaunchBatch::LaunchBatch(Context& ctx) : ctx_(ctx), queue_(ctx.launchQueue()) {
  ctx_.attach(this);
  const char* env = std::getenv("EDDY_COMMAND_BUFFERS");
  if (env && *env) forced_ = envSwitch("EDDY_COMMAND_BUFFERS", false) ? 1 : 0;
  try {
    const cl::Device dev = queue_.getInfo<CL_QUEUE_DEVICE>();
    if (!hasExtension(dev.getInfo<CL_DEVICE_EXTENSIONS>(), "cl_khr_command_buffer")) return;
    cl_device_command_buffer_capabilities_khr caps = 0;
    cl_command_queue_properties required = 0;
    if (clGetDeviceInfo(dev(), CL_DEVICE_COMMAND_BUFFER_CAPABILITIES_KHR, sizeof caps, &caps, nullptr) !=
            CL_SUCCESS ||
        clGetDeviceInfo(dev(), CL_DEVICE_COMMAND_BUFFER_REQUIRED_QUEUE_PROPERTIES_KHR, sizeof required,
                        &required, nullptr) != CL_SUCCESS)
      return;
    const auto props = queue_.getInfo<CL_QUEUE_PROPERTIES>();
    if ((props & required) != required) return;
    // The version: 0.9.5 and later let a pending command buffer be enqueued
    // again (the flag is gone); before, that needs the simultaneous-use flag.
    bool pendingOk = false;
    size_t size = 0;
    if (clGetDeviceInfo(dev(), 0x1060 /* CL_DEVICE_EXTENSIONS_WITH_VERSION */, 0, nullptr, &size) ==
            CL_SUCCESS &&
        size > 0) {
      struct NameVersion {
        cl_uint version;
        char name[64];
      };
      std::vector<NameVersion> nv(size / sizeof(NameVersion));
      if (clGetDeviceInfo(dev(), 0x1060, nv.size() * sizeof(NameVersion), nv.data(), nullptr) == CL_SUCCESS)
        for (const auto& v : nv)
          if (std::strncmp(v.name, "cl_khr_command_buffer", 64) == 0) {
            const cl_uint major = v.version >> 22, minor = (v.version >> 12) & 0x3ff,
                          patch = v.version & 0xfff;
            pendingOk = major > 0 || minor > 9 || (minor == 9 && patch >= 5);
          }
    }
    const bool simultaneous = (caps & CL_COMMAND_BUFFER_CAPABILITY_SIMULTANEOUS_USE_KHR) != 0;
    if (!pendingOk && !simultaneous) return;
    const cl_platform_id platform = dev.getInfo<CL_DEVICE_PLATFORM>();
    auto f = std::make_unique<Fns>();
    f->create = reinterpret_cast<clCreateCommandBufferKHR_fn>(
        clGetExtensionFunctionAddressForPlatform(platform, "clCreateCommandBufferKHR"));
    f->ndrange = reinterpret_cast<clCommandNDRangeKernelKHR_fn>(
        clGetExtensionFunctionAddressForPlatform(platform, "clCommandNDRangeKernelKHR"));
    f->finalize = reinterpret_cast<clFinalizeCommandBufferKHR_fn>(
        clGetExtensionFunctionAddressForPlatform(platform, "clFinalizeCommandBufferKHR"));
    f->enqueue = reinterpret_cast<clEnqueueCommandBufferKHR_fn>(
        clGetExtensionFunctionAddressForPlatform(platform, "clEnqueueCommandBufferKHR"));
    f->release = reinterpret_cast<clReleaseCommandBufferKHR_fn>(
        clGetExtensionFunctionAddressForPlatform(platform, "clReleaseCommandBufferKHR"));
    if (!f->create || !f->ndrange || !f->finalize || !f->enqueue || !f->release) return;
    f->simultaneousFlag = !pendingOk;
    fns_ = std::move(f);
  } catch (const cl::Error&) {
    fns_.reset();  // no command buffers: every launch goes straight to the queue
  }
  if (forced_ == 1) enabled_ = supported();
}

LaunchBatch::~LaunchBatch() { ctx_.detach(this); }

void LaunchBatch::setEnabled(bool on) {
  if (forced_ >= 0) on = forced_ == 1;
  if (!on && enabled_) flush();
  enabled_ = on && supported();
}

void LaunchBatch::close() {
  if (depth_ > 0) --depth_;
  if (depth_ == 0) flush();
}

void LaunchBatch::abandon() {
  cur_.clear();
  depth_ = 0;
}

void LaunchBatch::appendBytes(const void* p, size_t n) {
  const auto off = uint32_t(cur_.bytes.size());
  cur_.bytes.resize(off + n);
  std::memcpy(cur_.bytes.data() + off, p, n);
  cur_.args.push_back(Arg{off, uint32_t(n)});
}

cl_uint LaunchBatch::setRange(Launch& l, const EnqueueArgs& r) {
  const auto dims = cl_uint(r.global.dimensions());
  for (cl_uint d = 0; d < dims && d < 3; ++d) l.global[d] = r.global.get()[d];
  l.hasOffset = r.offset.dimensions() > 0;
  for (cl_uint d = 0; l.hasOffset && d < r.offset.dimensions() && d < 3; ++d) l.offset[d] = r.offset.get()[d];
  l.hasLocal = r.local.dimensions() > 0;
  for (cl_uint d = 0; l.hasLocal && d < r.local.dimensions() && d < 3; ++d) l.local[d] = r.local.get()[d];
  return dims;
}

void LaunchBatch::hashLaunch(const Launch& l) {
  uint64_t& h = cur_.hash;
  const cl_kernel k = l.kernel();
  fnv(h, &k, sizeof k);
  fnv(h, &l.dims, sizeof l.dims);
  fnv(h, l.global, sizeof l.global);
  fnv(h, l.offset, sizeof l.offset);
  fnv(h, l.local, sizeof l.local);
  const uint32_t nargs = l.argEnd - l.argBegin;
  fnv(h, &nargs, sizeof nargs);
  for (uint32_t a = l.argBegin; a < l.argEnd; ++a)
    fnv(h, cur_.bytes.data() + cur_.args[a].offset, cur_.args[a].size);
}

bool LaunchBatch::same(const Run& a, const Run& b) {
  if (a.launches.size() != b.launches.size() || a.args.size() != b.args.size() || a.bytes != b.bytes)
    return false;
  for (size_t i = 0; i < a.launches.size(); ++i) {
    const Launch &x = a.launches[i], &y = b.launches[i];
    if (x.kernel() != y.kernel() || x.dims != y.dims || x.argBegin != y.argBegin || x.argEnd != y.argEnd ||
        x.hasOffset != y.hasOffset || x.hasLocal != y.hasLocal ||
        std::memcmp(x.global, y.global, sizeof x.global) != 0 ||
        std::memcmp(x.offset, y.offset, sizeof x.offset) != 0 ||
        std::memcmp(x.local, y.local, sizeof x.local) != 0)
      return false;
  }
  for (size_t i = 0; i < a.args.size(); ++i)
    if (a.args[i].size != b.args[i].size || a.args[i].offset != b.args[i].offset) return false;
  return true;
}

namespace {
void setArgs(cl_kernel k, const std::vector<unsigned char>& bytes, const auto& args, uint32_t begin,
             uint32_t end) {
  for (uint32_t a = begin; a < end; ++a) {
    const cl_int err = clSetKernelArg(k, a - begin, args[a].size, bytes.data() + args[a].offset);
    if (err != CL_SUCCESS) throw cl::Error(err, "clSetKernelArg");
  }
}
}  // namespace

void LaunchBatch::enqueueDirect(const Run& run) {
  for (const Launch& l : run.launches) {
    setArgs(l.kernel(), run.bytes, run.args, l.argBegin, l.argEnd);
    const cl_int err =
        clEnqueueNDRangeKernel(queue_(), l.kernel(), l.dims, l.hasOffset ? l.offset : nullptr, l.global,
                               l.hasLocal ? l.local : nullptr, 0, nullptr, nullptr);
    if (err != CL_SUCCESS) throw cl::Error(err, "clEnqueueNDRangeKernel");
  }
  stats_.directLaunches += run.launches.size();
}

std::unique_ptr<LaunchBatch::Recording> LaunchBatch::record(const Run& run) {
  auto rec = std::make_unique<Recording>();
  rec->fns = fns_.get();
  cl_command_buffer_properties_khr props[] = {CL_COMMAND_BUFFER_FLAGS_KHR,
                                              CL_COMMAND_BUFFER_SIMULTANEOUS_USE_KHR, 0};
  cl_int err = CL_SUCCESS;
  cl_command_queue q = queue_();
  rec->cb = fns_->create(1, &q, fns_->simultaneousFlag ? props : nullptr, &err);
  if (err != CL_SUCCESS || !rec->cb) throw cl::Error(err, "clCreateCommandBufferKHR");
  cl_sync_point_khr last = 0;
  for (size_t i = 0; i < run.launches.size(); ++i) {
    const Launch& l = run.launches[i];
    const cl::Program program = l.kernel.getInfo<CL_KERNEL_PROGRAM>();
    std::string name = l.kernel.getInfo<CL_KERNEL_FUNCTION_NAME>();
    while (!name.empty() && name.back() == '\0') name.pop_back();
    rec->own.emplace_back(program, name.c_str());
    const cl_kernel k = rec->own.back()();
    setArgs(k, run.bytes, run.args, l.argBegin, l.argEnd);
    cl_sync_point_khr sp = 0;
    err = fns_->ndrange(rec->cb, nullptr, nullptr, k, l.dims, l.hasOffset ? l.offset : nullptr, l.global,
                        l.hasLocal ? l.local : nullptr, i ? 1 : 0, i ? &last : nullptr, &sp, nullptr);
    if (err != CL_SUCCESS) throw cl::Error(err, "clCommandNDRangeKernelKHR");
    last = sp;
  }
  err = fns_->finalize(rec->cb);
  if (err != CL_SUCCESS) throw cl::Error(err, "clFinalizeCommandBufferKHR");
  rec->run = run;
  rec->lastUse = flushes_;
  ++stats_.recordings;
  return rec;
}

void LaunchBatch::flush() {
  if (cur_.launches.empty()) return;  // nothing deferred (Context::queue() calls this often)
  ++flushes_;
  if (enabled_) {
    const auto range = cache_.equal_range(cur_.hash);
    for (auto it = range.first; it != range.second; ++it) {
      Recording& rec = *it->second;
      if (!same(rec.run, cur_)) continue;
      cl_command_queue q = queue_();
      const cl_int err = fns_->enqueue(1, &q, rec.cb, 0, nullptr, nullptr);
      if (err == CL_SUCCESS) {
        rec.lastUse = flushes_;
        ++stats_.replays;
        stats_.replayedLaunches += cur_.launches.size();
        cur_.clear();
        return;
      }
      // The device refused it (e.g. still pending where that is not allowed):
      // no more command buffers; the launches go one by one.
      enabled_ = false;
      break;
    }
  }
  enqueueDirect(cur_);
  if (enabled_) {
    // Recorded the second time the same run is seen: runs seen once (a solve
    // cut short, the first steps) cost no recording.
    auto [it, fresh] = seen_.try_emplace(cur_.hash, flushes_);
    if (!fresh) {
      try {
        cache_.emplace(cur_.hash, record(cur_));
      } catch (const cl::Error&) {
        enabled_ = false;  // the device cannot record this: launch directly from now on
      }
      seen_.erase(it);
    } else {
      it->second = flushes_;
    }
    if (flushes_ % 1024 == 0 || cache_.size() > kMaxRecordings) {
      for (auto c = cache_.begin(); c != cache_.end();)
        c = flushes_ - c->second->lastUse > kStaleFlushes ? cache_.erase(c) : std::next(c);
      while (cache_.size() > kMaxRecordings) {
        auto oldest = std::min_element(cache_.begin(), cache_.end(), [](const auto& a, const auto& b) {
          return a.second->lastUse < b.second->lastUse;
        });
        cache_.erase(oldest);
      }
      for (auto s = seen_.begin(); s != seen_.end();)
        s = flushes_ - s->second > kStaleFlushes ? seen_.erase(s) : std::next(s);
    }
  }
  cur_.clear();
}

}  // namespace eddy
