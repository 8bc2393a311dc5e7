// screenshot.hpp: the framebuffer to a PNG file (stb_image_write, Debian libstb-dev).
#pragma once

#include <string>

namespace eddy {

// Reads the back buffer, or the bound framebuffer object's colour, (fbWidth x fbHeight) and writes it as an RGB PNG,
// atomically (temporary file + rename). Throws eddy::Error naming the file.
void writeScreenshot(const std::string& path, int fbWidth, int fbHeight);

// Writes `rgb` (w x h, 3 bytes per pixel, rows top-down) as a PNG, atomically
// (temporary file + rename). Safe to call from any thread. Throws eddy::Error.
void writePng(const std::string& path, int w, int h, const unsigned char* rgb);

// Checks early that `path` can be written (creates and removes a temporary
// next to it). Throws eddy::Error naming the problem.
void checkWritable(const std::string& path);

}  // namespace eddy
