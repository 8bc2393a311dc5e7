#include "surface_renderer.hpp"

#include "renderer.hpp"  // ParticleDraw

#include <glm/gtc/matrix_inverse.hpp>
#include <glm/gtc/type_ptr.hpp>

#include <algorithm>
#include <cmath>
#include <vector>

namespace eddy {

namespace {
// Light direction (world space, towards the light) shared by tank and water.
const glm::vec3 kLightWorld = glm::normalize(glm::vec3(0.35f, 0.85f, 0.4f));
}  // namespace

SurfaceRenderer::SurfaceRenderer()
    : depth_("particles.vert", "surface_depth.frag"),
      thickness_("particles.vert", "surface_thickness.frag"),
      smooth_("background.vert", "surface_smooth.frag"),
      normals_("background.vert", "surface_normals.frag"),
      shade_("background.vert", "surface_shade.frag"),
      tank_("surface_tank.vert", "surface_tank.frag"),
      foam_("particles.vert", "surface_foam.frag") {
  glGenVertexArrays(1, &particleVao_);
  glGenVertexArrays(1, &emptyVao_);
  glGenVertexArrays(1, &tankVao_);
  glGenBuffers(1, &tankVbo_);
  live_ += 4;
  glBindVertexArray(tankVao_);
  glBindBuffer(GL_ARRAY_BUFFER, tankVbo_);
  glBufferData(GL_ARRAY_BUFFER, 5 * 6 * 6 * sizeof(float), nullptr, GL_DYNAMIC_DRAW);
  glEnableVertexAttribArray(0);
  glVertexAttribPointer(0, 3, GL_FLOAT, GL_FALSE, 6 * sizeof(float), nullptr);
  glEnableVertexAttribArray(1);
  glVertexAttribPointer(1, 3, GL_FLOAT, GL_FALSE, 6 * sizeof(float),
                        reinterpret_cast<const void*>(3 * sizeof(float)));
  glBindVertexArray(0);
  checkGL("surface renderer setup");
}

SurfaceRenderer::~SurfaceRenderer() {
  releaseTargets();
  glDeleteBuffers(1, &tankVbo_);
  glDeleteVertexArrays(1, &tankVao_);
  glDeleteVertexArrays(1, &emptyVao_);
  glDeleteVertexArrays(1, &particleVao_);
  live_ -= 4;
}

GLuint SurfaceRenderer::newTexture(GLenum internal, GLenum format, GLenum type, int w, int h, bool linear) {
  GLuint t = 0;
  glGenTextures(1, &t);
  ++live_;
  glBindTexture(GL_TEXTURE_2D, t);
  glTexImage2D(GL_TEXTURE_2D, 0, GLint(internal), w, h, 0, format, type, nullptr);
  const GLint filter = linear ? GL_LINEAR : GL_NEAREST;
  glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, filter);
  glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MAG_FILTER, filter);
  glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_S, GL_CLAMP_TO_EDGE);
  glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_T, GL_CLAMP_TO_EDGE);
  return t;
}

GLuint SurfaceRenderer::newFbo(GLuint colorTex, GLuint depthRb) {
  GLuint f = 0;
  glGenFramebuffers(1, &f);
  ++live_;
  glBindFramebuffer(GL_FRAMEBUFFER, f);
  glFramebufferTexture2D(GL_FRAMEBUFFER, GL_COLOR_ATTACHMENT0, GL_TEXTURE_2D, colorTex, 0);
  if (depthRb) glFramebufferRenderbuffer(GL_FRAMEBUFFER, GL_DEPTH_ATTACHMENT, GL_RENDERBUFFER, depthRb);
  const GLenum status = glCheckFramebufferStatus(GL_FRAMEBUFFER);
  if (status != GL_FRAMEBUFFER_COMPLETE) {
    glBindFramebuffer(GL_FRAMEBUFFER, 0);
    throw Error("a surface-style framebuffer is incomplete (status 0x" +
                [&] { char b[16]; std::snprintf(b, sizeof b, "%x", status); return std::string(b); }() + ")");
  }
  return f;
}

void SurfaceRenderer::releaseTargets() {
  auto delTex = [&](GLuint& t) {
    if (t) { glDeleteTextures(1, &t); t = 0; --live_; }
  };
  auto delFbo = [&](GLuint& f) {
    if (f) { glDeleteFramebuffers(1, &f); f = 0; --live_; }
  };
  delFbo(depthFbo_);
  delFbo(smoothFbo_[0]);
  delFbo(smoothFbo_[1]);
  delFbo(normalFbo_);
  delFbo(thickFbo_);
  delTex(sceneTex_);
  delTex(sceneDepthTex_);
  delTex(depthTex_);
  delTex(smoothTex_[0]);
  delTex(smoothTex_[1]);
  delTex(normalTex_);
  delTex(thickTex_);
  if (depthRb_) {
    glDeleteRenderbuffers(1, &depthRb_);
    depthRb_ = 0;
    --live_;
  }
  w_ = h_ = 0;
}

void SurfaceRenderer::ensureTargets(int w, int h) {
  if (w == w_ && h == h_ && depthFbo_) return;
  releaseTargets();
  GLint prevFbo = 0;
  glGetIntegerv(GL_FRAMEBUFFER_BINDING, &prevFbo);
  sceneTex_ = newTexture(GL_RGBA8, GL_RGBA, GL_UNSIGNED_BYTE, w, h, true);  // sampled offset (refraction)
  // The scene's window depth (tank, solids): the thickness leaves out water behind it.
  sceneDepthTex_ = newTexture(GL_DEPTH_COMPONENT24, GL_DEPTH_COMPONENT, GL_UNSIGNED_INT, w, h);
  depthTex_ = newTexture(GL_R32F, GL_RED, GL_FLOAT, w, h);
  smoothTex_[0] = newTexture(GL_R32F, GL_RED, GL_FLOAT, w, h);
  smoothTex_[1] = newTexture(GL_R32F, GL_RED, GL_FLOAT, w, h);
  normalTex_ = newTexture(GL_RGBA16F, GL_RGBA, GL_FLOAT, w, h);
  // Thickness is a smooth sum (sprites spread 2x): half resolution, sampled
  // filtered by the shade pass, costs a quarter of the blending.
  thickW_ = (w + 1) / 2;
  thickH_ = (h + 1) / 2;
  thickTex_ = newTexture(GL_R16F, GL_RED, GL_FLOAT, thickW_, thickH_, true);
  glGenRenderbuffers(1, &depthRb_);
  ++live_;
  glBindRenderbuffer(GL_RENDERBUFFER, depthRb_);
  glRenderbufferStorage(GL_RENDERBUFFER, GL_DEPTH_COMPONENT24, w, h);
  try {
    depthFbo_ = newFbo(depthTex_, depthRb_);
    smoothFbo_[0] = newFbo(smoothTex_[0], 0);
    smoothFbo_[1] = newFbo(smoothTex_[1], 0);
    normalFbo_ = newFbo(normalTex_, 0);
    thickFbo_ = newFbo(thickTex_, 0);
  } catch (const Error& e) {
    // Most likely memory: about 33 bytes a pixel over the targets above
    // (16384 x 16384 asks for 8448 MiB, 8.25 GiB). Named with the size, which is the cure.
    releaseTargets();
    glBindFramebuffer(GL_FRAMEBUFFER, GLuint(prevFbo));
    const double mib = 33.0 * double(w) * double(h) / (1024.0 * 1024.0);
    char b[64];
    std::snprintf(b, sizeof b, "%.0f", mib);
    throw Error(std::string(e.what()) + " at " + std::to_string(w) + "x" + std::to_string(h) +
                " pixels: the surface style's targets need about " + b +
                " MiB of GPU memory, more than the OpenGL driver could give; a smaller --size or window "
                "(or another --style) draws");
  }
  glBindFramebuffer(GL_FRAMEBUFFER, GLuint(prevFbo));
  w_ = w;
  h_ = h;
  checkGL("surface targets");
}

void SurfaceRenderer::drawTank(const Box& b, const glm::mat4& view, const glm::mat4& proj,
                               GpuTimer* timer) {
  GpuPass pass(timer, "tank");
  const glm::vec3 lo(b.lo[0], b.lo[1], b.lo[2]), hi(b.hi[0], b.hi[1], b.hi[2]);
  const glm::vec3 eye = glm::vec3(glm::inverse(view)[3]);
  std::vector<float> v;
  // A face: 4 corners (counter-clockwise seen from inside) and the inward normal.
  auto face = [&](glm::vec3 a, glm::vec3 bb, glm::vec3 c, glm::vec3 d, glm::vec3 n) {
    if (glm::dot(n, eye - a) <= 0.f) return;  // seen from outside: the near glass, not drawn
    for (const glm::vec3& p : {a, bb, c, a, c, d}) v.insert(v.end(), {p.x, p.y, p.z, n.x, n.y, n.z});
  };
  const float x0 = lo.x, y0 = lo.y, z0 = lo.z, x1 = hi.x, y1 = hi.y, z1 = hi.z;
  face({x0, y0, z0}, {x1, y0, z0}, {x1, y0, z1}, {x0, y0, z1}, {0, 1, 0});   // floor
  face({x0, y0, z0}, {x0, y1, z0}, {x0, y1, z1}, {x0, y0, z1}, {1, 0, 0});   // x = lo
  face({x1, y0, z0}, {x1, y1, z0}, {x1, y1, z1}, {x1, y0, z1}, {-1, 0, 0});  // x = hi
  face({x0, y0, z0}, {x1, y0, z0}, {x1, y1, z0}, {x0, y1, z0}, {0, 0, 1});   // z = lo
  face({x0, y0, z1}, {x1, y0, z1}, {x1, y1, z1}, {x0, y1, z1}, {0, 0, -1});  // z = hi
  if (v.empty()) return;
  const float extent = std::max({x1 - x0, y1 - y0, z1 - z0});
  tank_.use();
  const glm::mat4 mvp = proj * view;
  glUniformMatrix4fv(tank_.loc("uMVP"), 1, GL_FALSE, glm::value_ptr(mvp));
  glUniform1f(tank_.loc("uTile"), std::max(extent / 16.f, 1e-6f));
  glUniform3f(tank_.loc("uLightDir"), kLightWorld.x, kLightWorld.y, kLightWorld.z);
  glUniform3f(tank_.loc("uTileColor"), 0.86f, 0.9f, 0.92f);
  glBindVertexArray(tankVao_);
  glBindBuffer(GL_ARRAY_BUFFER, tankVbo_);
  glBufferSubData(GL_ARRAY_BUFFER, 0, GLsizeiptr(v.size() * sizeof(float)), v.data());
  glEnable(GL_DEPTH_TEST);
  glDepthFunc(GL_LESS);
  glDisable(GL_BLEND);
  glDrawArrays(GL_TRIANGLES, 0, GLsizei(v.size() / 6));
  glBindVertexArray(0);
}

void SurfaceRenderer::draw(const ParticleDraw& d, const glm::mat4& view, const glm::mat4& proj,
                           int w, int h, const Box& bounds, const SurfaceSettings& s, GpuTimer* timer,
                           std::array<float, 2> fieldRange) {
  const glm::vec3 size(bounds.hi[0] - bounds.lo[0], bounds.hi[1] - bounds.lo[1], bounds.hi[2] - bounds.lo[2]);
  // Absorption is given per the bounds' smallest side (a thin slab's depth, a
  // tank's height): the same setting tints a quasi-2D slab and a deep tank alike.
  const float sceneSize = std::max(std::min({size.x, size.y, size.z}), 1e-9f);
  if (d.count == 0 || d.posVbo == 0 || w <= 0 || h <= 0) return;
  ensureTargets(w, h);
  GLint target = 0;
  glGetIntegerv(GL_DRAW_FRAMEBUFFER_BINDING, &target);
  const float radius = d.radius;
  const float pxPerUnit = 0.5f * float(h) * proj[1][1];  // pixels per world unit at eye depth 1
  const glm::mat4 invProj = glm::inverse(proj);
  // Eye depths of the bounds' corners: the depth view's range, and the
  // largest particle on screen (at the nearest corner) for the hole search.
  float zn = 1e30f, zf = 0.f;
  for (int c = 0; c < 8; ++c) {
    const glm::vec4 p(bounds.lo[0] + (c & 1 ? size.x : 0.f), bounds.lo[1] + (c & 2 ? size.y : 0.f),
                      bounds.lo[2] + (c & 4 ? size.z : 0.f), 1.f);
    const float z = -(view * p).z;
    zn = std::min(zn, z);
    zf = std::max(zf, z);
  }
  const float nearest = std::max(zn, 1e-6f);
  const int holeMaxPx = int(std::clamp(std::ceil(2.f * radius * pxPerUnit / nearest) + 1.f, 1.f, 32.f));

  {  // what the water refracts: the window's colour so far
    GpuPass pass(timer, "copy");
    glBindFramebuffer(GL_READ_FRAMEBUFFER, GLuint(target));
    if (target == 0) glReadBuffer(GL_BACK);
    glActiveTexture(GL_TEXTURE0);
    glBindTexture(GL_TEXTURE_2D, sceneTex_);
    glCopyTexSubImage2D(GL_TEXTURE_2D, 0, 0, 0, 0, 0, w, h);
    glBindTexture(GL_TEXTURE_2D, sceneDepthTex_);  // a depth texture: from the depth buffer
    glCopyTexSubImage2D(GL_TEXTURE_2D, 0, 0, 0, 0, 0, w, h);
  }

  // Particles: positions (w ignored), no colour field.
  glBindVertexArray(particleVao_);
  glBindBuffer(GL_ARRAY_BUFFER, d.posVbo);
  glEnableVertexAttribArray(0);
  glVertexAttribPointer(0, 4, GL_FLOAT, GL_FALSE, 0, nullptr);
  glDisableVertexAttribArray(1);
  glVertexAttrib1f(1, 0.f);
  glEnable(GL_PROGRAM_POINT_SIZE);
  // The thickness pass leaves out the water behind the opaque scene (behind
  // a solid): texture unit 1. (The depth pass keeps it: cut out there, the
  // surface's edges around a solid would catch highlights.)
  glActiveTexture(GL_TEXTURE1);
  glBindTexture(GL_TEXTURE_2D, sceneDepthTex_);
  glActiveTexture(GL_TEXTURE0);
  auto spriteUniforms = [&](const ShaderProgram& p) {
    p.use();
    glUniform1i(p.loc("uSceneDepth"), 1);
    glUniformMatrix4fv(p.loc("uView"), 1, GL_FALSE, glm::value_ptr(view));
    glUniformMatrix4fv(p.loc("uProj"), 1, GL_FALSE, glm::value_ptr(proj));
    glUniform1f(p.loc("uRadius"), radius);
    glUniform1f(p.loc("uViewportH"), float(h));
    glUniform1f(p.loc("uMassScale"), 0.f);
    glUniform1i(p.loc("uHasField"), 0);
  };
  glViewport(0, 0, w, h);

  {
    GpuPass pass(timer, "depth");
    glBindFramebuffer(GL_FRAMEBUFFER, depthFbo_);
    glClearColor(0, 0, 0, 0);
    glClearDepth(1.0);
    glDepthMask(GL_TRUE);
    glClear(GL_COLOR_BUFFER_BIT | GL_DEPTH_BUFFER_BIT);
    glEnable(GL_DEPTH_TEST);
    glDepthFunc(GL_LESS);
    glDisable(GL_BLEND);
    spriteUniforms(depth_);
    glDrawArrays(GL_POINTS, 0, GLsizei(d.count));
  }
  glDisable(GL_DEPTH_TEST);
  glBindVertexArray(emptyVao_);

  // The smoothing and normal passes only run over the bounds' screen
  // rectangle (plus the filter's reach): outside it there is no fluid. Their
  // targets are cleared whole first, so nothing stale is left outside.
  int sx0 = 0, sy0 = 0, sx1 = w, sy1 = h;
  {
    bool behind = false;
    float x0 = 1e30f, y0 = 1e30f, x1 = -1e30f, y1 = -1e30f;
    for (int c = 0; c < 8; ++c) {
      const glm::vec4 p(bounds.lo[0] + (c & 1 ? size.x : 0.f), bounds.lo[1] + (c & 2 ? size.y : 0.f),
                        bounds.lo[2] + (c & 4 ? size.z : 0.f), 1.f);
      const glm::vec4 clip = proj * view * p;
      if (clip.w <= 1e-6f) {
        behind = true;
        break;
      }
      const float px = (clip.x / clip.w * 0.5f + 0.5f) * float(w), py = (clip.y / clip.w * 0.5f + 0.5f) * float(h);
      x0 = std::min(x0, px);
      y0 = std::min(y0, py);
      x1 = std::max(x1, px);
      y1 = std::max(y1, py);
    }
    if (!behind) {
      const float pad = 2.f * 32.f + 2.f;  // filter reach (uMaxPx), both directions, + rounding
      sx0 = int(std::clamp(std::floor(x0 - pad), 0.f, float(w)));
      sy0 = int(std::clamp(std::floor(y0 - pad), 0.f, float(h)));
      sx1 = int(std::clamp(std::ceil(x1 + pad), 0.f, float(w)));
      sy1 = int(std::clamp(std::ceil(y1 + pad), 0.f, float(h)));
    }
  }
  for (GLuint f : {smoothFbo_[0], smoothFbo_[1], normalFbo_}) {
    glBindFramebuffer(GL_FRAMEBUFFER, f);
    glClearColor(0, 0, 0, 0);
    glClear(GL_COLOR_BUFFER_BIT);
  }
  glEnable(GL_SCISSOR_TEST);
  glScissor(sx0, sy0, std::max(sx1 - sx0, 0), std::max(sy1 - sy0, 0));

  GLuint smoothed = depthTex_;
  {
    GpuPass pass(timer, "smooth");
    smooth_.use();
    glUniform1i(smooth_.loc("uDepth"), 0);
    glUniform1f(smooth_.loc("uPxPerUnit"), pxPerUnit);
    glUniform1f(smooth_.loc("uRadius"), radius);
    glUniform1f(smooth_.loc("uFilterRadii"), s.smoothing);
    glUniform1f(smooth_.loc("uThreshold"), 2.f);
    glUniform1i(smooth_.loc("uMaxPx"), 32);
    glUniform1i(smooth_.loc("uHoleMaxPx"), holeMaxPx);
    glUniform1f(smooth_.loc("uSlope"), 3.f);  // surfaces up to ~72 degrees from face-on
    const int iterations = std::clamp(s.iterations, 0, 8);
    for (int it = 0; it < iterations; ++it)
      for (int dir = 0; dir < 2; ++dir) {
        const int dst = smoothed == smoothTex_[0] ? 1 : 0;
        glBindFramebuffer(GL_FRAMEBUFFER, smoothFbo_[dst]);
        glActiveTexture(GL_TEXTURE0);
        glBindTexture(GL_TEXTURE_2D, smoothed);
        glUniform2i(smooth_.loc("uDir"), dir == 0 ? 1 : 0, dir == 0 ? 0 : 1);
        glDrawArrays(GL_TRIANGLES, 0, 3);
        smoothed = smoothTex_[dst];
      }
  }
  {
    GpuPass pass(timer, "normals");
    glBindFramebuffer(GL_FRAMEBUFFER, normalFbo_);
    normals_.use();
    glActiveTexture(GL_TEXTURE0);
    glBindTexture(GL_TEXTURE_2D, smoothed);
    glUniform1i(normals_.loc("uDepth"), 0);
    glUniformMatrix4fv(normals_.loc("uInvProj"), 1, GL_FALSE, glm::value_ptr(invProj));
    glDrawArrays(GL_TRIANGLES, 0, 3);
  }
  glDisable(GL_SCISSOR_TEST);
  {
    GpuPass pass(timer, "thickness");
    glBindFramebuffer(GL_FRAMEBUFFER, thickFbo_);
    glClearColor(0, 0, 0, 0);
    glClear(GL_COLOR_BUFFER_BIT);
    glEnable(GL_BLEND);
    glBlendFunc(GL_ONE, GL_ONE);
    glBindVertexArray(particleVao_);
    glViewport(0, 0, thickW_, thickH_);
    spriteUniforms(thickness_);
    glUniform1f(thickness_.loc("uViewportH"), float(thickH_));
    const float spread = 2.f;
    glUniform1f(thickness_.loc("uRadius"), radius * spread);
    glUniform1f(thickness_.loc("uSpread"), spread);
    glDrawArrays(GL_POINTS, 0, GLsizei(d.count));
    glDisable(GL_BLEND);
    glBindVertexArray(emptyVao_);
    glViewport(0, 0, w, h);
  }
  {
    GpuPass pass(timer, "shade");
    glBindFramebuffer(GL_FRAMEBUFFER, GLuint(target));
    shade_.use();
    const GLuint tex[4] = {sceneTex_, smoothed, normalTex_, thickTex_};
    const char* names[4] = {"uScene", "uDepth", "uNormals", "uThickness"};
    for (int i = 0; i < 4; ++i) {
      glActiveTexture(GLenum(GL_TEXTURE0 + i));
      glBindTexture(GL_TEXTURE_2D, tex[i]);
      glUniform1i(shade_.loc(names[i]), i);
    }
    glActiveTexture(GL_TEXTURE0);
    glUniformMatrix4fv(shade_.loc("uProj"), 1, GL_FALSE, glm::value_ptr(proj));
    glUniformMatrix4fv(shade_.loc("uInvProj"), 1, GL_FALSE, glm::value_ptr(invProj));
    const glm::mat3 viewToWorld = glm::transpose(glm::mat3(view));
    glUniformMatrix3fv(shade_.loc("uViewToWorld"), 1, GL_FALSE, glm::value_ptr(viewToWorld));
    glUniform3f(shade_.loc("uWaterColor"), s.waterColor[0], s.waterColor[1], s.waterColor[2]);
    glUniform1f(shade_.loc("uAbsorption"), s.absorption / sceneSize);
    glUniform1f(shade_.loc("uRefraction"), s.refraction);
    glUniform1f(shade_.loc("uRadius"), radius);
    const glm::vec3 light = glm::normalize(glm::mat3(view) * kLightWorld);
    glUniform3f(shade_.loc("uLightDir"), light.x, light.y, light.z);
    // Depth view: white at the nearest corner of the bounds, dark at the farthest.
    glUniform2f(shade_.loc("uDepthRange"), std::max(zn, 0.f), zf);
    glUniform1f(shade_.loc("uThicknessScale"), 2.f / sceneSize);
    glUniform1i(shade_.loc("uMode"), int(s.view));
    glEnable(GL_DEPTH_TEST);
    glDepthFunc(GL_ALWAYS);
    glDepthMask(GL_TRUE);
    glDrawArrays(GL_TRIANGLES, 0, 3);
    glDepthFunc(GL_LESS);
  }
  if (s.foam && d.colorVbo && s.view == SurfaceView::Final) {
    GpuPass pass(timer, "foam");
    glBindVertexArray(particleVao_);
    spriteUniforms(foam_);
    glUniform1f(foam_.loc("uRadius"), 0.8f * radius);
    glUniform1i(foam_.loc("uHasField"), 1);
    glUniform1i(foam_.loc("uLogField"), 0);
    glUniform2f(foam_.loc("uRange"), fieldRange[0], fieldRange[1]);
    glUniform1f(foam_.loc("uThreshold"), s.foamThreshold);
    glBindBuffer(GL_ARRAY_BUFFER, d.colorVbo);
    glEnableVertexAttribArray(1);
    glVertexAttribPointer(1, 1, GL_FLOAT, GL_FALSE, 0, nullptr);
    glEnable(GL_DEPTH_TEST);
    glDepthFunc(GL_LEQUAL);
    glDepthMask(GL_FALSE);
    glEnable(GL_BLEND);
    glBlendFunc(GL_SRC_ALPHA, GL_ONE_MINUS_SRC_ALPHA);
    glDrawArrays(GL_POINTS, 0, GLsizei(d.count));
    glDisable(GL_BLEND);
    glDepthMask(GL_TRUE);
    glDepthFunc(GL_LESS);
    glDisableVertexAttribArray(1);
  }
  glBindVertexArray(0);
  glActiveTexture(GL_TEXTURE0);
}

}  // namespace eddy
