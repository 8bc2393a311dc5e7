// Stand-alone reproducer of the PoCL 3.1 (Debian 12) abort that
// MultiNBodySim's per-device build option avoids (sim/nbody/nbody_multi.cpp,
// tests/test_nbody_multi.cpp: MultiNBody.EveryDeviceBuildsItsOwnProgram).
//
// PoCL keeps one process-wide cache of loaded kernel binaries. An entry is
// looked up by kernel hash, local size, grid width and global-offset kind, but
// released by kernel hash and local size only: three identical CPU devices
// running one kernel at once over grids of 64, 128 and 192 items make three
// entries, and the releases all hit the newest one, which aborts with
// "pocl_release_dlhandle_cache: Assertion `found->ref_count > 0' failed".
// A build option per device gives each its own hash, and the abort goes.
//
//   g++ -O1 scripts/dev/pocl-dlhandle-repro.cpp -o /tmp/repro -lOpenCL
//   POCL_DEVICES="pthread pthread pthread" POCL_MAX_PTHREAD_COUNT=8 /tmp/repro       # aborts
//   POCL_DEVICES="pthread pthread pthread" POCL_MAX_PTHREAD_COUNT=8 /tmp/repro salt  # ok
//
// Measured 2026-12-03 on the 2-core development machine: 4 of 4 runs aborted
// without the option, 4 of 4 passed with it. Not part of the test suite (it
// kills its process by design).
#define CL_HPP_TARGET_OPENCL_VERSION 300
#define CL_HPP_ENABLE_EXCEPTIONS
#include <CL/opencl.hpp>

#include <chrono>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

int main(int argc, char** argv) {
  const bool salt = argc > 1;
  std::vector<cl::Platform> platforms;
  cl::Platform::get(&platforms);
  std::vector<cl::Device> devs;
  for (auto& p : platforms)
    if (p.getInfo<CL_PLATFORM_NAME>().find("Portable") != std::string::npos)
      p.getDevices(CL_DEVICE_TYPE_CPU, &devs);
  if (devs.size() < 3) {
    std::fprintf(stderr, "need 3 PoCL CPU devices (POCL_DEVICES=\"pthread pthread pthread\")\n");
    return 2;
  }
  const char* src =
      "kernel void spin(global float* o, uint n) {"
      "  float a = get_global_id(0);"
      "  for (uint i = 0; i < n; ++i) a = a * 0.999999f + 1.0f;"
      "  o[get_global_id(0)] = a; }";
  std::vector<cl::Context> ctx;
  std::vector<cl::CommandQueue> q;
  std::vector<cl::Kernel> k;
  std::vector<cl::Buffer> buf;
  for (size_t d = 0; d < 3; ++d) {
    ctx.emplace_back(devs[d]);
    q.emplace_back(ctx[d], devs[d]);
    cl::Program p(ctx[d], src);
    p.build(salt ? ("-DSLOT=" + std::to_string(d)).c_str() : "");
    k.emplace_back(p, "spin");
    buf.emplace_back(ctx[d], CL_MEM_READ_WRITE, 256 * sizeof(float));
  }
  for (size_t d = 0; d < 3; ++d) {  // grids of 64, 128, 192: three cache entries
    k[d].setArg(0, buf[d]);
    k[d].setArg(1, cl_uint(20000000));
    q[d].enqueueNDRangeKernel(k[d], cl::NullRange, cl::NDRange(64 * (d + 1)), cl::NDRange(64));
    q[d].flush();
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
  }
  for (auto& qq : q) qq.finish();
  std::printf("ok\n");
  return 0;
}
