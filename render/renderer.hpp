// renderer.hpp: draws particles (sphere impostors or additive glow), the
// domain box and the background. Needs a current OpenGL 3.3 core context.
#pragma once

#include "camera.hpp"
#include "gl.hpp"
#include "gpu_timer.hpp"
#include "shader.hpp"
#include "view_settings.hpp"

#include <glm/glm.hpp>

#include <memory>
#include <vector>

namespace eddy {

struct ParticleDraw {
  GLuint posVbo = 0;    // float4 per particle
  GLuint colorVbo = 0;  // float per particle, 0 = none
  size_t count = 0;
  float radius = 0.01f;    // world radius
  float massScale = 0.f;   // > 0 with size-by-mass: the mass drawn at `radius`
  Box bounds{{-1, -1, -1}, {1, 1, 1}};  // the tank, else the particles' (surface style)
};

class SurfaceRenderer;

class Renderer {
 public:
  Renderer();
  ~Renderer();
  Renderer(const Renderer&) = delete;
  Renderer& operator=(const Renderer&) = delete;

  // Viewport and background gradient.
  void clear(int fbWidth, int fbHeight);
  void drawParticles(const ParticleDraw& d, const glm::mat4& view, const glm::mat4& proj,
                     int fbHeight, const ViewSettings& s);
  void drawBox(const Box& b, const glm::mat4& viewProj, const glm::vec4& color);
  // Surface style: the tank's floor and inner walls, drawn before the particles.
  void drawTank(const Box& b, const glm::mat4& view, const glm::mat4& proj);
  // Solids (issue 12): their surface points (float4 xyz per point in `vbo`)
  // as shaded spheres of one colour and world radius `radius`, depth-tested;
  // timed as the render pass `pass`. With `clip` (the tank) only what lies
  // inside that box is drawn: the boundary particles that continue a solid
  // through the wall it rests on (there for the physics) are not.
  void drawSolidPoints(GLuint vbo, size_t count, float radius, const glm::vec3& color,
                       const glm::mat4& view, const glm::mat4& proj, int fbHeight,
                       const char* pass = "solids", const Box* clip = nullptr);
  // Line segments (pairs of points) of one colour over everything (probe markers).
  void drawLines(const std::vector<glm::vec3>& segments, const glm::mat4& viewProj,
                 const glm::vec4& color);
  // Times every pass from now on (null: none). The timer outlives the renderer's use of it.
  void setTimer(GpuTimer* t) { timer_ = t; }
  // GL objects held by the surface style's renderer (0 before its first use).
  size_t surfaceObjects() const;
  const SurfaceRenderer* surface() const { return surface_.get(); }

 private:
  void useColormap(int index);
  void ensureHdrTarget(int w, int h);
  // The point programs' (sphere_, glow_) uniforms and the particle VAO: the
  // fluid (drawParticles) and the solids' points (drawSolidPoints) alike.
  struct PointLook {
    GLuint posVbo = 0;    // float4 per point
    GLuint colorVbo = 0;  // float per point (the colour field), 0 = none: `color`
    int colormap = 0;
    float radius = 0.01f, massScale = 0.f, rangeLo = 0.f, rangeHi = 1.f;
    bool logField = false;
    glm::vec3 color{1.f};
  };
  void bindPoints(const ShaderProgram& p, const PointLook& look, const glm::mat4& view,
                  const glm::mat4& proj, int fbHeight);

  ShaderProgram sphere_, glow_, lines_, background_, tonemap_;
  GLuint hdrFbo_ = 0, hdrTex_ = 0;
  int hdrW_ = 0, hdrH_ = 0, fbW_ = 0, fbH_ = 0;
  GLuint particleVao_ = 0, boxVao_ = 0, boxVbo_ = 0, emptyVao_ = 0, colormapTex_ = 0;
  GLuint lineVao_ = 0, lineVbo_ = 0;
  size_t lineCapacity_ = 0;  // points lineVbo_ holds
  int colormapLoaded_ = -1;
  std::unique_ptr<SurfaceRenderer> surface_;  // created on the first surface draw
  GpuTimer* timer_ = nullptr;
};

}  // namespace eddy
