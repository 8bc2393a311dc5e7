#include "simulation.hpp"

#include <atomic>

namespace eddy {

namespace {
std::atomic<int> gLive{0};
}

Simulation::Simulation(Context& ctx, const std::vector<ParamDesc>& decl) : ctx_(ctx), params_(decl) {
  ++gLive;
}
Simulation::~Simulation() { --gLive; }
int Simulation::liveCount() { return gLive.load(); }

cl::Event Simulation::writeColorField(size_t index, const cl::Buffer&) {
  throw Error(kind() + ": no colour field #" + std::to_string(index));
}

cl::Event Simulation::push(const Ray&, float, const Vec3f&) {
  throw Error(kind() + ": pushing particles is not offered");
}

void Simulation::addBlock(const Box&) {
  throw Error(kind() + ": adding a block of particles is not offered");
}

void Simulation::throttle(size_t maxPending) {
  profiler_.collect(false);
  if (profiler_.pending() > maxPending) {
    ctx_.queue().flush();
    profiler_.drainTo(maxPending / 2);
  }
}

void checkDeviceMemory(const DeviceInfo& info, size_t bytes, size_t largest, std::string_view what) {
  auto mib = [](double b) { return std::to_string(static_cast<long long>(b / (1 << 20))) + " MiB"; };
  if (largest > info.maxAlloc)
    throw Error(std::string(what) + " needs a buffer of " + mib(largest) +
                ", more than the device's largest allocation (CL_DEVICE_MAX_MEM_ALLOC_SIZE = " +
                mib(info.maxAlloc) + ") on " + info.name);
  if (bytes > info.globalMem * 0.9)
    throw Error(std::string(what) + " needs " + mib(bytes) +
                " of device memory; the device has " + mib(info.globalMem) +
                " (CL_DEVICE_GLOBAL_MEM_SIZE) on " + info.name);
}

}  // namespace eddy
