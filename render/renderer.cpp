#include "renderer.hpp"

#include "colormap.hpp"
#include "surface_renderer.hpp"

#include <glm/gtc/type_ptr.hpp>

#include <vector>

namespace eddy {

Renderer::Renderer()
    : sphere_("particles.vert", "sphere.frag"),
      glow_("particles.vert", "glow.frag"),
      lines_("lines.vert", "lines.frag"),
      background_("background.vert", "background.frag"),
      tonemap_("background.vert", "tonemap.frag") {
  glGenVertexArrays(1, &particleVao_);
  glGenVertexArrays(1, &boxVao_);
  glGenVertexArrays(1, &emptyVao_);
  glGenBuffers(1, &boxVbo_);
  glBindVertexArray(boxVao_);
  glBindBuffer(GL_ARRAY_BUFFER, boxVbo_);
  glBufferData(GL_ARRAY_BUFFER, 24 * 3 * sizeof(float), nullptr, GL_DYNAMIC_DRAW);
  glEnableVertexAttribArray(0);
  glVertexAttribPointer(0, 3, GL_FLOAT, GL_FALSE, 0, nullptr);
  glBindVertexArray(0);
  glGenTextures(1, &colormapTex_);
  glBindTexture(GL_TEXTURE_2D, colormapTex_);
  glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, GL_LINEAR);
  glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MAG_FILTER, GL_LINEAR);
  glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_S, GL_CLAMP_TO_EDGE);
  glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_T, GL_CLAMP_TO_EDGE);
  useColormap(0);
  checkGL("renderer setup");
}

Renderer::~Renderer() {
  surface_.reset();
  if (hdrFbo_) glDeleteFramebuffers(1, &hdrFbo_);
  if (hdrTex_) glDeleteTextures(1, &hdrTex_);
  glDeleteTextures(1, &colormapTex_);
  glDeleteBuffers(1, &boxVbo_);
  if (lineVbo_) glDeleteBuffers(1, &lineVbo_);
  if (lineVao_) glDeleteVertexArrays(1, &lineVao_);
  glDeleteVertexArrays(1, &particleVao_);
  glDeleteVertexArrays(1, &boxVao_);
  glDeleteVertexArrays(1, &emptyVao_);
}

void Renderer::useColormap(int index) {
  if (index == colormapLoaded_) return;
  const auto& tab = colormapTable(size_t(std::max(index, 0)));
  glBindTexture(GL_TEXTURE_2D, colormapTex_);
  glTexImage2D(GL_TEXTURE_2D, 0, GL_RGB32F, GLsizei(tab.size()), 1, 0, GL_RGB, GL_FLOAT,
               tab.data());
  colormapLoaded_ = index;
}

void Renderer::ensureHdrTarget(int w, int h) {
  if (hdrFbo_ && w == hdrW_ && h == hdrH_) return;
  GLint prev = 0;
  glGetIntegerv(GL_FRAMEBUFFER_BINDING, &prev);
  if (!hdrFbo_) {
    glGenFramebuffers(1, &hdrFbo_);
    glGenTextures(1, &hdrTex_);
  }
  glBindTexture(GL_TEXTURE_2D, hdrTex_);
  glTexImage2D(GL_TEXTURE_2D, 0, GL_RGBA16F, w, h, 0, GL_RGBA, GL_FLOAT, nullptr);
  glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, GL_NEAREST);
  glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MAG_FILTER, GL_NEAREST);
  glBindFramebuffer(GL_FRAMEBUFFER, hdrFbo_);
  glFramebufferTexture2D(GL_FRAMEBUFFER, GL_COLOR_ATTACHMENT0, GL_TEXTURE_2D, hdrTex_, 0);
  const GLenum status = glCheckFramebufferStatus(GL_FRAMEBUFFER);
  glBindFramebuffer(GL_FRAMEBUFFER, GLuint(prev));
  if (status != GL_FRAMEBUFFER_COMPLETE) throw Error("the glow framebuffer is incomplete");
  hdrW_ = w;
  hdrH_ = h;
}

size_t Renderer::surfaceObjects() const { return surface_ ? surface_->liveObjects() : 0; }

void Renderer::drawTank(const Box& b, const glm::mat4& view, const glm::mat4& proj) {
  if (!surface_) surface_ = std::make_unique<SurfaceRenderer>();
  surface_->drawTank(b, view, proj, timer_);
}

void Renderer::clear(int w, int h) {
  GpuPass pass(timer_, "background");
  fbW_ = w;
  fbH_ = h;
  glViewport(0, 0, w, h);
  glDisable(GL_DEPTH_TEST);
  glDepthMask(GL_TRUE);
  glClearColor(0, 0, 0, 1);
  glClear(GL_COLOR_BUFFER_BIT | GL_DEPTH_BUFFER_BIT);
  background_.use();
  glUniform3f(background_.loc("uTop"), 0.16f, 0.18f, 0.23f);
  glUniform3f(background_.loc("uBottom"), 0.035f, 0.04f, 0.055f);
  glBindVertexArray(emptyVao_);
  glDrawArrays(GL_TRIANGLES, 0, 3);
}

void Renderer::bindPoints(const ShaderProgram& p, const PointLook& look, const glm::mat4& view,
                          const glm::mat4& proj, int fbHeight) {
  p.use();
  useColormap(look.colormap);
  glActiveTexture(GL_TEXTURE0);
  glBindTexture(GL_TEXTURE_2D, colormapTex_);
  glUniform1i(p.loc("uColormap"), 0);
  glUniformMatrix4fv(p.loc("uView"), 1, GL_FALSE, glm::value_ptr(view));
  glUniformMatrix4fv(p.loc("uProj"), 1, GL_FALSE, glm::value_ptr(proj));
  glUniform1f(p.loc("uRadius"), look.radius);
  glUniform1f(p.loc("uViewportH"), float(fbHeight));
  glUniform1f(p.loc("uMassScale"), look.massScale);
  glUniform2f(p.loc("uRange"), look.rangeLo, look.rangeHi);
  glUniform1i(p.loc("uLogField"), look.logField ? 1 : 0);
  glUniform1i(p.loc("uHasField"), look.colorVbo ? 1 : 0);
  glUniform3f(p.loc("uColor"), look.color.r, look.color.g, look.color.b);
  if (&p == &sphere_) {  // shaded spheres (the glow program has no light)
    const glm::vec3 light = glm::normalize(glm::vec3(0.45f, 0.7f, 0.55f));
    glUniform3f(p.loc("uLightDir"), light.x, light.y, light.z);
  }
  glBindVertexArray(particleVao_);
  glBindBuffer(GL_ARRAY_BUFFER, look.posVbo);
  glEnableVertexAttribArray(0);
  glVertexAttribPointer(0, 4, GL_FLOAT, GL_FALSE, 0, nullptr);
  if (look.colorVbo) {
    glBindBuffer(GL_ARRAY_BUFFER, look.colorVbo);
    glEnableVertexAttribArray(1);
    glVertexAttribPointer(1, 1, GL_FLOAT, GL_FALSE, 0, nullptr);
  } else {
    glDisableVertexAttribArray(1);
    glVertexAttrib1f(1, 0.f);
  }
  glEnable(GL_PROGRAM_POINT_SIZE);
}

void Renderer::drawParticles(const ParticleDraw& d, const glm::mat4& view, const glm::mat4& proj,
                             int fbHeight, const ViewSettings& s) {
  if (d.count == 0 || d.posVbo == 0) return;
  if (s.style == DrawStyle::Surface) {
    if (!surface_) surface_ = std::make_unique<SurfaceRenderer>();
    ParticleDraw scaled = d;
    scaled.radius = d.radius * s.radiusScale;
    surface_->draw(scaled, view, proj, fbW_, fbH_, d.bounds, s.surface, timer_, {s.rangeLo, s.rangeHi});
    return;
  }
  if (surface_) surface_->releaseTargets();  // another style: the surface targets go
  GpuPass pass(timer_, s.style == DrawStyle::Glow ? "glow" : "spheres");
  const bool glow = s.style == DrawStyle::Glow;
  const ShaderProgram& p = glow ? glow_ : sphere_;
  PointLook look;
  look.posVbo = d.posVbo;
  look.colorVbo = s.colorField >= 0 ? d.colorVbo : 0;
  look.colormap = s.colormap;
  look.radius = d.radius * s.radiusScale;
  look.massScale = s.sizeByMass ? d.massScale : 0.f;
  look.rangeLo = s.rangeLo;
  look.rangeHi = s.rangeHi;
  look.logField = s.logScale;
  look.color = glow ? glm::vec3(1.f, 0.75f, 0.45f) : glm::vec3(0.25f, 0.55f, 0.95f);
  bindPoints(p, look, view, proj, fbHeight);
  if (glow) glUniform1f(p.loc("uGlow"), s.glow);
  GLint target = 0;  // the window, or the caller's framebuffer (offscreen, tests)
  glGetIntegerv(GL_DRAW_FRAMEBUFFER_BINDING, &target);
  if (glow) {
    // Sum the light in a float target, then tone-map it over the background.
    ensureHdrTarget(fbW_, fbH_);
    glBindFramebuffer(GL_FRAMEBUFFER, hdrFbo_);
    glClearColor(0, 0, 0, 0);
    glClear(GL_COLOR_BUFFER_BIT);
    glDisable(GL_DEPTH_TEST);
    glEnable(GL_BLEND);
    glBlendFunc(GL_ONE, GL_ONE);
  } else {
    glEnable(GL_DEPTH_TEST);
    glDepthFunc(GL_LESS);
    glDisable(GL_BLEND);
  }
  glDrawArrays(GL_POINTS, 0, GLsizei(d.count));
  if (glow) {
    glBindFramebuffer(GL_FRAMEBUFFER, GLuint(target));
    tonemap_.use();
    glActiveTexture(GL_TEXTURE0);
    glBindTexture(GL_TEXTURE_2D, hdrTex_);
    glUniform1i(tonemap_.loc("uHdr"), 0);
    glBindVertexArray(emptyVao_);
    glDrawArrays(GL_TRIANGLES, 0, 3);  // additive over the background
  }
  glDisable(GL_BLEND);
  glBindVertexArray(0);
}

void Renderer::drawBox(const Box& b, const glm::mat4& viewProj, const glm::vec4& color) {
  const float x0 = b.lo[0], y0 = b.lo[1], z0 = b.lo[2], x1 = b.hi[0], y1 = b.hi[1], z1 = b.hi[2];
  const float v[24][3] = {
      {x0, y0, z0}, {x1, y0, z0}, {x1, y0, z0}, {x1, y1, z0}, {x1, y1, z0}, {x0, y1, z0},
      {x0, y1, z0}, {x0, y0, z0}, {x0, y0, z1}, {x1, y0, z1}, {x1, y0, z1}, {x1, y1, z1},
      {x1, y1, z1}, {x0, y1, z1}, {x0, y1, z1}, {x0, y0, z1}, {x0, y0, z0}, {x0, y0, z1},
      {x1, y0, z0}, {x1, y0, z1}, {x1, y1, z0}, {x1, y1, z1}, {x0, y1, z0}, {x0, y1, z1}};
  GpuPass pass(timer_, "box");
  lines_.use();
  glUniformMatrix4fv(lines_.loc("uMVP"), 1, GL_FALSE, glm::value_ptr(viewProj));
  glUniform4f(lines_.loc("uColor"), color.r, color.g, color.b, color.a);
  glBindVertexArray(boxVao_);
  glBindBuffer(GL_ARRAY_BUFFER, boxVbo_);
  glBufferSubData(GL_ARRAY_BUFFER, 0, sizeof v, v);
  glEnable(GL_DEPTH_TEST);
  glEnable(GL_BLEND);
  glBlendFunc(GL_SRC_ALPHA, GL_ONE_MINUS_SRC_ALPHA);
  glDrawArrays(GL_LINES, 0, 24);
  glDisable(GL_BLEND);
  glBindVertexArray(0);
}

void Renderer::drawSolidPoints(GLuint vbo, size_t count, float radius, const glm::vec3& color,
                               const glm::mat4& view, const glm::mat4& proj, int fbHeight,
                               const char* passName, const Box* clip) {
  if (count == 0 || vbo == 0) return;
  GpuPass pass(timer_, passName);
  PointLook look;
  look.posVbo = vbo;
  look.radius = radius;
  look.color = color;
  bindPoints(sphere_, look, view, proj, fbHeight);
  if (clip) {
    const glm::mat4 viewToWorld = glm::inverse(view);
    glUniformMatrix4fv(sphere_.loc("uViewToWorld"), 1, GL_FALSE, glm::value_ptr(viewToWorld));
    glUniform3f(sphere_.loc("uClipLo"), clip->lo[0], clip->lo[1], clip->lo[2]);
    glUniform3f(sphere_.loc("uClipHi"), clip->hi[0], clip->hi[1], clip->hi[2]);
    glUniform1i(sphere_.loc("uClip"), 1);
  }
  glEnable(GL_DEPTH_TEST);
  glDepthFunc(GL_LESS);
  glDisable(GL_BLEND);
  glDrawArrays(GL_POINTS, 0, GLsizei(count));
  glUniform1i(sphere_.loc("uClip"), 0);  // the fluid's spheres share the program
  glBindVertexArray(0);
}

void Renderer::drawLines(const std::vector<glm::vec3>& segments, const glm::mat4& viewProj,
                         const glm::vec4& color) {
  if (segments.empty()) return;
  if (!lineVao_) {
    glGenVertexArrays(1, &lineVao_);
    glGenBuffers(1, &lineVbo_);
    glBindVertexArray(lineVao_);
    glBindBuffer(GL_ARRAY_BUFFER, lineVbo_);
    glEnableVertexAttribArray(0);
    glVertexAttribPointer(0, 3, GL_FLOAT, GL_FALSE, 0, nullptr);
  }
  GpuPass pass(timer_, "markers");
  lines_.use();
  glUniformMatrix4fv(lines_.loc("uMVP"), 1, GL_FALSE, glm::value_ptr(viewProj));
  glUniform4f(lines_.loc("uColor"), color.r, color.g, color.b, color.a);
  glBindVertexArray(lineVao_);
  glBindBuffer(GL_ARRAY_BUFFER, lineVbo_);
  const GLsizeiptr bytes = GLsizeiptr(segments.size() * sizeof(glm::vec3));
  if (segments.size() > lineCapacity_) {
    glBufferData(GL_ARRAY_BUFFER, bytes, segments.data(), GL_DYNAMIC_DRAW);
    lineCapacity_ = segments.size();
  } else {
    glBufferSubData(GL_ARRAY_BUFFER, 0, bytes, segments.data());
  }
  glDisable(GL_DEPTH_TEST);  // markers show through the water
  glEnable(GL_BLEND);
  glBlendFunc(GL_SRC_ALPHA, GL_ONE_MINUS_SRC_ALPHA);
  glDrawArrays(GL_LINES, 0, GLsizei(segments.size()));
  glDisable(GL_BLEND);
  glBindVertexArray(0);
}

}  // namespace eddy
