// libFuzzer target: the config file reader (sim/config.cpp). Any input either
// parses or is refused with eddy::Error; a config that parses must survive a
// save/parse round trip unchanged.
#include "config.hpp"

#include <cstdint>
#include <cstdlib>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  eddy::RunConfig c;
  try {
    c = eddy::parseConfig(text, "fuzz.json");
  } catch (const eddy::Error&) {
    return 0;
  }
  const std::string again = eddy::configToJson(c);
  const eddy::RunConfig d = eddy::parseConfig(again, "round-trip.json");  // must not throw
  if (eddy::configToJson(d) != again) std::abort();
  return 0;
}
