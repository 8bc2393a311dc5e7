#include "shader.hpp"

#include "cl.hpp"  // eddy::Error

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace eddy::shaders {
std::string_view source(std::string_view name);  // embedded_shaders.cpp (generated)
}

namespace eddy {

std::string glErrorName(GLenum e) {
  switch (e) {
    case GL_INVALID_ENUM: return "GL_INVALID_ENUM";
    case GL_INVALID_VALUE: return "GL_INVALID_VALUE";
    case GL_INVALID_OPERATION: return "GL_INVALID_OPERATION";
    case GL_INVALID_FRAMEBUFFER_OPERATION: return "GL_INVALID_FRAMEBUFFER_OPERATION";
    case GL_OUT_OF_MEMORY: return "GL_OUT_OF_MEMORY";
    default: return "GL error 0x" + [&] {
      std::ostringstream s;
      s << std::hex << e;
      return s.str();
    }();
  }
}

void checkGL(const char* what) {
  const GLenum e = glGetError();
  if (e != GL_NO_ERROR) throw Error(std::string(what) + ": " + glErrorName(e));
}

bool glHasBufferStorage() {
  GLint major = 0, minor = 0;
  glGetIntegerv(GL_MAJOR_VERSION, &major);
  glGetIntegerv(GL_MINOR_VERSION, &minor);
  return (major * 10 + minor >= 44 || GLAD_GL_ARB_buffer_storage) && glBufferStorage != nullptr;
}

std::string shaderSource(std::string_view file) {
  if (const char* dir = std::getenv("EDDY_SHADER_DIR"); dir && *dir) {
    std::ifstream in(std::string(dir) + "/" + std::string(file), std::ios::binary);
    if (in) {
      std::ostringstream s;
      s << in.rdbuf();
      return s.str();
    }
  }
  const auto s = shaders::source(file);
  if (s.empty()) throw Error("shader '" + std::string(file) + "' is not embedded");
  return std::string(s);
}

namespace {
GLuint compile(GLenum type, std::string_view file) {
  const std::string src = shaderSource(file);
  GLuint s = glCreateShader(type);
  const char* p = src.c_str();
  glShaderSource(s, 1, &p, nullptr);
  glCompileShader(s);
  GLint ok = 0;
  glGetShaderiv(s, GL_COMPILE_STATUS, &ok);
  if (!ok) {
    GLint len = 0;
    glGetShaderiv(s, GL_INFO_LOG_LENGTH, &len);
    std::vector<char> log(size_t(std::max(len, 1)));
    glGetShaderInfoLog(s, len, nullptr, log.data());
    glDeleteShader(s);
    throw Error("compiling shader " + std::string(file) + ":\n" + log.data());
  }
  return s;
}
}  // namespace

ShaderProgram::ShaderProgram(std::string_view vertFile, std::string_view fragFile) {
  const GLuint v = compile(GL_VERTEX_SHADER, vertFile);
  GLuint f = 0;
  try {
    f = compile(GL_FRAGMENT_SHADER, fragFile);
  } catch (...) {
    glDeleteShader(v);
    throw;
  }
  id_ = glCreateProgram();
  glAttachShader(id_, v);
  glAttachShader(id_, f);
  glLinkProgram(id_);
  glDeleteShader(v);
  glDeleteShader(f);
  GLint ok = 0;
  glGetProgramiv(id_, GL_LINK_STATUS, &ok);
  if (!ok) {
    GLint len = 0;
    glGetProgramiv(id_, GL_INFO_LOG_LENGTH, &len);
    std::vector<char> log(size_t(std::max(len, 1)));
    glGetProgramInfoLog(id_, len, nullptr, log.data());
    glDeleteProgram(id_);
    id_ = 0;
    throw Error("linking " + std::string(vertFile) + " + " + std::string(fragFile) + ":\n" +
                log.data());
  }
}

ShaderProgram::~ShaderProgram() {
  if (id_) glDeleteProgram(id_);
}

ShaderProgram& ShaderProgram::operator=(ShaderProgram&& o) noexcept {
  if (this != &o) {
    if (id_) glDeleteProgram(id_);
    id_ = o.id_;
    o.id_ = 0;
  }
  return *this;
}

}  // namespace eddy
