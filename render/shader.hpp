// shader.hpp: GLSL programs from the sources embedded at build time (shaders/).
#pragma once

#include "gl.hpp"

#include <string_view>

namespace eddy {

// Source of an embedded shader file; EDDY_SHADER_DIR overrides it from disk
// (shader development without a rebuild). Throws if neither exists.
std::string shaderSource(std::string_view file);

class ShaderProgram {
 public:
  ShaderProgram() = default;
  // Compiles and links; throws eddy::Error with the compiler or linker log.
  ShaderProgram(std::string_view vertFile, std::string_view fragFile);
  ~ShaderProgram();
  ShaderProgram(ShaderProgram&& o) noexcept : id_(o.id_) { o.id_ = 0; }
  ShaderProgram& operator=(ShaderProgram&& o) noexcept;
  ShaderProgram(const ShaderProgram&) = delete;
  ShaderProgram& operator=(const ShaderProgram&) = delete;

  GLuint id() const { return id_; }
  void use() const { glUseProgram(id_); }
  GLint loc(const char* name) const { return glGetUniformLocation(id_, name); }

 private:
  GLuint id_ = 0;
};

}  // namespace eddy
