// surface_renderer.hpp: screen-space fluid surface (the `surface` drawing
// style): van der Laan, Green & Sainz 2009 ("Screen space fluid rendering with
// curvature flow"), Green GDC 2010, with the narrow-range depth filter of
// Truong & Yuksel 2018. Passes (each timed as one row of the render profiler):
//
//   tank       floor + inner walls (pool tiles) into the window, over the background
//   copy       the window's colour so far (tank, and the solids the app drew
//              after it) -> sceneTex (what refraction shows), its depth -> sceneDepthTex
//   depth      sphere sprites -> depthTex (R32F eye depth) + depthRb (depth test)
//   smooth     narrow-range filter, x then y, `iterations` times: smoothTex[0] <-> [1]
//   normals    smoothed depth -> normalTex (RGBA16F view-space normal)
//   thickness  additive chord lengths -> thickTex (R16F, half resolution); the
//              particles whose centre lies behind sceneDepthTex left out
//   shade      Fresnel reflection + Beer-Lambert refraction + highlight -> the window
//   foam       (optional) fast particles as soft white sprites -> the window
//
// The textures follow the window size (recreated on a resize) and are
// released when another style is drawn; liveObjects() counts every GL object
// this class holds, for the leak tests. Needs a current OpenGL 3.3 context.
#pragma once

#include "gpu_timer.hpp"
#include "shader.hpp"
#include "simulation.hpp"  // Box
#include "view_settings.hpp"

#include <glm/glm.hpp>

#include <array>

namespace eddy {

struct ParticleDraw;

class SurfaceRenderer {
 public:
  SurfaceRenderer();
  ~SurfaceRenderer();
  SurfaceRenderer(const SurfaceRenderer&) = delete;
  SurfaceRenderer& operator=(const SurfaceRenderer&) = delete;

  // The tank's floor and inner walls (those facing the camera from inside),
  // into the bound framebuffer with depth test. Part of the scene that the
  // water refracts.
  void drawTank(const Box& tank, const glm::mat4& view, const glm::mat4& proj, GpuTimer* timer);
  // The fluid, composited over what the bound framebuffer (w x h) holds.
  // `bounds` (the tank, else the particles' bounds): its largest extent is
  // the length the absorption is given per; its depth range is what the
  // depth view shows from white to dark.
  // Foam (s.foam) needs d.colorVbo to hold the speed, mapped to [0, 1] by `fieldRange`.
  void draw(const ParticleDraw& d, const glm::mat4& view, const glm::mat4& proj, int w, int h,
            const Box& bounds, const SurfaceSettings& s, GpuTimer* timer,
            std::array<float, 2> fieldRange = {0.f, 1.f});
  // Frees the size-dependent targets (another style is being drawn).
  void releaseTargets();

  // GL objects (textures, framebuffers, renderbuffers, buffers, vertex
  // arrays) this renderer holds now; shader programs not included.
  size_t liveObjects() const { return live_; }
  int targetWidth() const { return w_; }
  int targetHeight() const { return h_; }

 private:
  void ensureTargets(int w, int h);
  GLuint newTexture(GLenum internal, GLenum format, GLenum type, int w, int h, bool linear = false);
  GLuint newFbo(GLuint colorTex, GLuint depthRb);

  ShaderProgram depth_, thickness_, smooth_, normals_, shade_, tank_, foam_;
  GLuint particleVao_ = 0, emptyVao_ = 0, tankVao_ = 0, tankVbo_ = 0;
  // Size-dependent targets.
  GLuint sceneTex_ = 0, sceneDepthTex_ = 0, depthTex_ = 0, depthRb_ = 0, depthFbo_ = 0;
  GLuint smoothTex_[2] = {0, 0}, smoothFbo_[2] = {0, 0};
  GLuint normalTex_ = 0, normalFbo_ = 0, thickTex_ = 0, thickFbo_ = 0;
  int thickW_ = 0, thickH_ = 0;  // the thickness target's size (half the window's)
  int w_ = 0, h_ = 0;
  size_t live_ = 0;
};

}  // namespace eddy
