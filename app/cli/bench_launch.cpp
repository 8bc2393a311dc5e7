// bench launch: what one kernel launch costs the host on this device's
// OpenCL driver, with and without a profiling event (why SPH samples its
// profiling: the `profile_every` parameter, docs/PERFORMANCE.md).
#include "cli_common.hpp"
#include "kernel_args.hpp"
#include "profiler.hpp"

#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdio>
#include <optional>
#include <vector>

namespace eddy::cli {

namespace {

struct LaunchArgs {
  unsigned long long n = 6656, launches = 4000;
  std::string device;
  bool asJson = false;
};

// Trivial kernels: one with 2 arguments, one with 12 (an SPH kernel has
// 10-30) and one with 16 buffer arguments (what a launch costs grows with
// its buffers: DFSPH's rate kernel has 15), each adding to one float per
// work-item.
const char* kSource = R"(
__kernel void launch2(__global float* a, uint n) {
  const uint i = get_global_id(0);
  if (i < n) a[i] += 1.0f;
}
__kernel void launch12(__global float* a, __global const float* b, __global const float* c,
                       __global const float* d, uint n, float x1, float x2, float x3, int4 dims,
                       float x4, uint x5, uint x6) {
  const uint i = get_global_id(0);
  if (i < n) a[i] += x1 + x2 * b[0] * c[0] * d[0] * 0.0f;
}
__kernel void launch16(__global float* a, __global const float* b1, __global const float* b2,
                       __global const float* b3, __global const float* b4, __global const float* b5,
                       __global const float* b6, __global const float* b7, __global const float* b8,
                       __global const float* b9, __global const float* b10, __global const float* b11,
                       __global const float* b12, __global const float* b13, __global const float* b14,
                       __global const float* b15, uint n) {
  const uint i = get_global_id(0);
  if (i < n)
    a[i] += (b1[0] + b2[0] + b3[0] + b4[0] + b5[0] + b6[0] + b7[0] + b8[0] + b9[0] + b10[0] +
             b11[0] + b12[0] + b13[0] + b14[0] + b15[0]) * 0.0f + 1.0f;
}
)";

int benchLaunch(const LaunchArgs& a, std::ostream& out) {
  Context ctx(a.device);
  cl::Program program(ctx.context(), kSource);
  try {
    program.build({ctx.device()});
  } catch (const cl::Error& e) {
    throw Error("bench launch: kernel build failed: " + describe(e));
  }
  KernelFunctor<cl::Buffer, cl_uint> k2(program, "launch2");
  KernelFunctor<cl::Buffer, cl::Buffer, cl::Buffer, cl::Buffer, cl_uint, cl_float, cl_float,
                cl_float, cl_int4, cl_float, cl_uint, cl_uint>
      k12(program, "launch12");
  KernelFunctor<cl::Buffer, cl::Buffer, cl::Buffer, cl::Buffer, cl::Buffer, cl::Buffer, cl::Buffer,
                cl::Buffer, cl::Buffer, cl::Buffer, cl::Buffer, cl::Buffer, cl::Buffer, cl::Buffer,
                cl::Buffer, cl::Buffer, cl_uint>
      k16(program, "launch16");
  const cl_uint n = cl_uint(a.n);
  cl::Buffer buf = ctx.createBuffer(CL_MEM_READ_WRITE, size_t(n) * sizeof(cl_float), "bench launch");
  cl::Buffer one = ctx.createBuffer(CL_MEM_READ_WRITE, sizeof(cl_float), "bench launch");
  const cl_float zero = 0.0f;
  ctx.queue().enqueueFillBuffer(buf, zero, 0, size_t(n) * sizeof(cl_float));
  ctx.queue().enqueueFillBuffer(one, zero, 0, sizeof(cl_float));
  const EnqueueArgs range(ctx.queue(), cl::NDRange((size_t(n) + 127) / 128 * 128), cl::NDRange(128));
  const cl_int4 dims{{1, 2, 3, 0}};

  // The 16 buffers: a distinct one each, as a real kernel's.
  std::vector<cl::Buffer> bufs;
  for (int i = 0; i < 15; ++i) {
    bufs.push_back(ctx.createBuffer(CL_MEM_READ_WRITE, sizeof(cl_float), "bench launch"));
    ctx.queue().enqueueFillBuffer(bufs.back(), zero, 0, sizeof(cl_float));
  }
  struct Case {
    const char* name;
    int args;        // 2, 12 or 17 (16 buffers and n)
    uint64_t every;  // profile one launch in `every` (0: no profiler, no event)
  };
  const Case cases[] = {{"2 args, no event", 2, 0},
                        {"2 args, event (Profiler, every launch)", 2, 1},
                        {"2 args, event on 1 launch in 8", 2, 8},
                        {"12 args, no event", 12, 0},
                        {"12 args, event (Profiler, every launch)", 12, 1},
                        {"12 args, event on 1 launch in 8", 12, 8},
                        {"16 buffers + n, no event", 17, 0}};
  json rows = json::array();
  if (!a.asJson)
    out << "device: " << ctx.info().name << " (" << ctx.info().platformName << ", driver "
        << ctx.info().driverVersion << "), " << a.launches << " launches of " << n
        << " work-items\n"
        << "case                                       host us/launch  wall us/launch  device "
           "us/launch\n";
  using Clock = std::chrono::steady_clock;
  for (const Case& c : cases) {
    Profiler prof;
    prof.setSampleEvery(c.every ? c.every : 1);
    ctx.queue().finish();
    const auto t0 = Clock::now();
    for (unsigned long long i = 0; i < a.launches; ++i) {
      if (c.every == 0) {
        if (c.args == 17)
          k16.enqueue(range, nullptr, buf, bufs[0], bufs[1], bufs[2], bufs[3], bufs[4], bufs[5], bufs[6],
                      bufs[7], bufs[8], bufs[9], bufs[10], bufs[11], bufs[12], bufs[13], bufs[14], n);
        else if (c.args == 12)
          k12.enqueue(range, nullptr, buf, one, one, one, n, 1.0f, 1.0f, 1.0f, dims, 1.0f, 1u, 1u);
        else
          k2.enqueue(range, nullptr, buf, n);
      } else {
        if (c.args == 12)
          prof.run("launch12", k12, range, buf, one, one, one, n, 1.0f, 1.0f, 1.0f, dims, 1.0f,
                   1u, 1u);
        else  // 2 (the 16-buffer case is timed without events only)
          prof.run("launch2", k2, range, buf, n);
        prof.endStep();
        prof.collect(false);  // as a simulation step does (Simulation::throttle)
        if (prof.pending() > 256) {
          ctx.queue().flush();
          prof.drainTo(128);
        }
      }
    }
    const auto t1 = Clock::now();
    ctx.queue().finish();
    const auto t2 = Clock::now();
    prof.collect(true);
    std::optional<double> deviceUs;  // none: the case's launches have no event (not measured, not 0)
    for (const auto& s : prof.stats())
      if (s.count) deviceUs = s.totalMs * 1e3 / double(s.count);
    const double L = double(a.launches);
    const double hostUs = std::chrono::duration<double, std::micro>(t1 - t0).count() / L;
    const double wallUs = std::chrono::duration<double, std::micro>(t2 - t0).count() / L;
    rows.push_back({{"case", c.name},
                    {"args", c.args},
                    {"profile_every", c.every},
                    {"host_us_per_launch", hostUs},
                    {"wall_us_per_launch", wallUs},
                    {"device_us_per_launch", deviceUs ? json(*deviceUs) : json(nullptr)}});
    if (!a.asJson) {
      char line[160];
      char device[32] = "              n/a";
      if (deviceUs) std::snprintf(device, sizeof device, "%17.2f", *deviceUs);
      std::snprintf(line, sizeof line, "%-42s %14.2f  %14.2f  %s\n", c.name, hostUs, wallUs, device);
      out << line;
    }
  }
  if (a.asJson)
    out << json{{"device", deviceJson(ctx.info())}, {"n", a.n}, {"launches", a.launches},
                {"launch", rows}}
               .dump(2)
        << '\n';
  return 0;
}

}  // namespace

Runner addBenchLaunch(Options& o) {
  auto a = std::make_shared<LaunchArgs>();
  o.count("--n", a->n, 1, 1ull << 28, "N", "work-items per launch (default 6656)");
  o.count("--launches", a->launches, 1, 10000000, "L", "launches per case (default 4000)");
  addDeviceOption(o, a->device, true);
  addJsonOption(o, a->asJson);
  return [a](std::ostream& out, std::ostream&) { return benchLaunch(*a, out); };
}

}  // namespace eddy::cli
