// Issue 15: the external buffer path (Vulkan-exported memory imported by
// OpenCL and OpenGL) in an offscreen EGL context. Where the path is possible
// (the H200 through the device tool: EDDY_TEST_DEVICE=gpu) it draws the same
// simulation through `external` and through the host copy, frame by frame,
// and compares the pixels; and a torn-frame test that shows it can fail:
// with the synchronisation switched off (ExternalSync::None) it must find
// torn frames, with it none. Where the path is not possible (PoCL, Mesa,
// no Vulkan driver: CI) those tests skip saying why, and the fallback and
// its messages are tested instead.
#include "buffer_setup.hpp"
#include "camera.hpp"
#include "factory.hpp"
#include "offscreen_egl.hpp"
#include "particle_buffers.hpp"
#include "renderer.hpp"
#include "test_util.hpp"
#include "vk_export.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <iostream>
#include <memory>

using namespace eddy;

namespace {

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

std::string testDevice() {
  const char* d = std::getenv("EDDY_TEST_DEVICE");
  return d && *d ? d : "cpu";
}

// The app under test: the build's, or EDDY_APP where the binary was carried
// elsewhere (the device tool's machine).
std::string app() {
  const char* a = std::getenv("EDDY_APP");
  return a && *a ? a : EDDY_APP;
}

double envReal(const char* name, double fallback) {
  const char* v = std::getenv(name);
  return v && *v ? std::strtod(v, nullptr) : fallback;
}

std::string glText(GLenum what) {
  const GLubyte* s = glGetString(what);
  return s ? reinterpret_cast<const char*>(s) : "(no current GL context)";
}

// One EGL context for the whole binary (null where EGL cannot give one).
EglContext* egl(std::string* why = nullptr) {
  static std::string error;
  static std::unique_ptr<EglContext> ctx = [] {
    try {
      return std::make_unique<EglContext>();
    } catch (const Error& e) {
      error = e.what();
      return std::unique_ptr<EglContext>();
    }
  }();
  if (why) *why = error;
  return ctx.get();
}

#define REQUIRE_EGL()                                              \
  do {                                                             \
    std::string why_;                                              \
    if (!egl(&why_)) GTEST_SKIP() << "no EGL context here: " << why_; \
  } while (0)

PathRequest forced(BufferPathRequest path, ExternalSync sync = ExternalSync::Semaphores) {
  PathRequest r;
  r.path = path;
  r.externalSync = sync;
  return r;
}

// The external path on the test device, or why not (empty setup).
BufferSetup externalSetup(ExternalSync sync, std::string& why) {
  try {
    return setUpBuffers(selectDevice(testDevice()), forced(BufferPathRequest::External, sync), nullptr, nullptr);
  } catch (const Error& e) {
    why = e.what();
    return {};
  }
}

// An offscreen target and a renderer drawing particle slots into it.
class Target {
 public:
  Target(int w, int h) : w_(w), h_(h) {
    glGenFramebuffers(1, &fbo_);
    glGenRenderbuffers(1, &color_);
    glGenRenderbuffers(1, &depth_);
    glBindRenderbuffer(GL_RENDERBUFFER, color_);
    glRenderbufferStorage(GL_RENDERBUFFER, GL_RGBA8, w, h);
    glBindRenderbuffer(GL_RENDERBUFFER, depth_);
    glRenderbufferStorage(GL_RENDERBUFFER, GL_DEPTH_COMPONENT24, w, h);
    glBindFramebuffer(GL_FRAMEBUFFER, fbo_);
    glFramebufferRenderbuffer(GL_FRAMEBUFFER, GL_COLOR_ATTACHMENT0, GL_RENDERBUFFER, color_);
    glFramebufferRenderbuffer(GL_FRAMEBUFFER, GL_DEPTH_ATTACHMENT, GL_RENDERBUFFER, depth_);
    checkGL("test framebuffer");
    renderer_ = std::make_unique<Renderer>();
  }
  ~Target() {
    renderer_.reset();
    glBindFramebuffer(GL_FRAMEBUFFER, 0);
    glDeleteFramebuffers(1, &fbo_);
    glDeleteRenderbuffers(1, &color_);
    glDeleteRenderbuffers(1, &depth_);
  }
  // Draws the slot the buffers hand out and returns the picture.
  std::vector<unsigned char> draw(ParticleBuffers& b, const Simulation& sim, const ViewSettings& vs) {
    ParticleDraw d = b.drawSlot();
    const Box box = *sim.domain();
    OrbitCamera cam;
    cam.fit(box, float(w_) / float(h_));
    d.radius = sim.particleRadius();
    d.bounds = box;
    glBindFramebuffer(GL_FRAMEBUFFER, fbo_);
    renderer_->clear(w_, h_);
    renderer_->drawParticles(d, cam.view(), cam.proj(float(w_) / float(h_)), h_, vs);
    b.afterDraw();
    std::vector<unsigned char> px(size_t(w_) * size_t(h_) * 4);
    glReadPixels(0, 0, w_, h_, GL_RGBA, GL_UNSIGNED_BYTE, px.data());
    checkGL("drawing a frame");
    return px;
  }

 private:
  int w_, h_;
  GLuint fbo_ = 0, color_ = 0, depth_ = 0;
  std::unique_ptr<Renderer> renderer_;
};

std::unique_ptr<Simulation> sph(Context& ctx, const std::string& scene, double spacing) {
  Params p(paramDecl("sph"));
  p.set("spacing", spacing);
  SceneSpec s;
  s.sim = "sph";
  s.scene = scene;
  return makeSimulation(ctx, s, p);
}

ViewSettings speedView(const Simulation& sim) {
  ViewSettings vs;
  vs.style = DrawStyle::Spheres;
  const auto f = sim.colorFields();
  vs.colorField = int(std::find(f.begin(), f.end(), "speed") - f.begin());
  vs.autoRange = false;
  vs.rangeLo = 0.f;
  vs.rangeHi = 0.5f;
  return vs;
}

size_t lit(const std::vector<unsigned char>& a, const std::vector<unsigned char>& background) {
  size_t n = 0;
  for (size_t i = 0; i < a.size(); i += 4) n += a[i] != background[i] || a[i + 1] != background[i + 1];
  return n;
}

// ---- facts and fallbacks: everywhere ----

TEST(ExternalProbes, ReportWhatIsOfferedWithoutThrowing) {
  REQUIRE_EGL();
  ExternalFacts f;
  Context ctx(selectDevice(testDevice()));
  probeClExternal(ctx.device(), ctx.platform(), f);
  probeGlExternal(f);
  probeVulkan(f);
  std::cout << "OpenCL " << ctx.info().name << " (" << f.clPlatformVersion << "): memory " << f.clMemory
            << ", 3.0 " << f.clCreateWithProperties << ", semaphores " << f.clSemaphore << ", uuid "
            << (f.clUuid ? uuidText(f.clDeviceUuid) : std::string("none")) << "\nOpenGL "
            << glText(GL_RENDERER) << ": memory " << f.glMemory << ", semaphores " << f.glSemaphore
            << ", driver " << uuidText(f.glDriverUuid) << ", devices";
  for (const Uuid& u : f.glDeviceUuids) std::cout << ' ' << uuidText(u);
  std::cout << "\nVulkan: " << (f.vulkanProblem.empty() ? "ok" : f.vulkanProblem)
            << "; GL context made current again after Vulkan calls: " << glContextRestores() << " times\n";
  EXPECT_NE(glGetString(GL_RENDERER), nullptr) << "the GL context is current after the Vulkan probe";
  for (const auto& v : f.vulkanDevices)
    std::cout << "  " << v.name << " device " << uuidText(v.deviceUuid) << " driver " << uuidText(v.driverUuid)
              << " memory fd " << v.memoryFd << " semaphore fd " << v.semaphoreFd << '\n';
  if (f.vulkanProblem.empty()) {
    EXPECT_FALSE(f.vulkanDevices.empty()) << "an instance with no device is a problem";
  }
  if (!f.glMemory) {
    EXPECT_TRUE(f.glDeviceUuids.empty());
  }
  if (!f.clUuid) {
    EXPECT_EQ(f.clDeviceUuid, Uuid{});
  }
}

TEST(ExternalSetup, AutomaticChoiceRunsAndSaysWhyTheOthersWereNot) {
  REQUIRE_EGL();
  BufferSetup s = setUpBuffers(selectDevice(testDevice()), PathRequest{}, nullptr, nullptr);
  ASSERT_TRUE(s.ctx);
  EXPECT_TRUE(s.choice.error.empty());
  EXPECT_TRUE(contains(s.choice.summary(), "gl_sharing: ")) << s.choice.summary();
  if (s.choice.path == BufferPath::External) {
    EXPECT_TRUE(s.interop) << "the external path comes with its set-up, self-tested";
  } else {
    EXPECT_FALSE(s.interop);
    EXPECT_TRUE(contains(s.choice.summary(), "external: ")) << s.choice.summary();
  }
  std::cout << bufferPathName(s.choice.path) << ": " << s.choice.summary() << '\n';
}

TEST(ExternalSetup, ForcedPathsThatAreNotPossibleAreClearErrors) {
  REQUIRE_EGL();
  const DeviceInfo dev = selectDevice(testDevice());
  try {
    setUpBuffers(dev, forced(BufferPathRequest::GLSharing), nullptr, nullptr);
    ADD_FAILURE() << "an EGL context has no GLX context: sharing cannot be forced";
  } catch (const Error& e) {
    EXPECT_TRUE(contains(e.what(), "--buffer-path gl_sharing is not possible: ")) << e.what();
  }
  std::string why;
  BufferSetup s = externalSetup(ExternalSync::Semaphores, why);
  if (s.ctx) {
    EXPECT_EQ(s.choice.path, BufferPath::External);
  } else {
    EXPECT_TRUE(contains(why, "--buffer-path external is not possible: ")) << why;
  }
  s = setUpBuffers(dev, forced(BufferPathRequest::Host), nullptr, nullptr);
  EXPECT_TRUE(s.choice.path == BufferPath::HostCopyPersistent || s.choice.path == BufferPath::HostCopySubData);
}

TEST(ExternalSetup, TheAppSaysWhichPathRunsAndRefusesImpossibleOnes) {
  REQUIRE_EGL();
  const std::string base = "--offscreen --sim nbody --scene plummer --n 1024 --frames 2 --device " + testDevice();
  test::Result r = test::run(app(), base + " --buffer-path host --stats");
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(contains(r.err, "asked for (--buffer-path host)")) << r.err;
  EXPECT_TRUE(contains(r.out, "buffers: host copy")) << r.out;
  EXPECT_TRUE(contains(r.out, "(asked for (--buffer-path host)")) << "--stats gives the reason too:\n" << r.out;
  r = test::run(app(), base + " --buffer-path gl_sharing --no-gl-sharing");
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_TRUE(contains(r.err, "--buffer-path gl_sharing contradicts --no-gl-sharing")) << r.err;
  r = test::run(app(), base + " --buffer-path zero_copy");
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_TRUE(contains(r.err, "'zero_copy' is not gl_sharing, external or host")) << r.err;
  r = test::run("EDDY_EXTERNAL_SYNC=sometimes " + app(), base);
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_TRUE(contains(r.err, "EDDY_EXTERNAL_SYNC='sometimes': expected semaphore, wait or none")) << r.err;
  r = test::run(app(), base + " --buffer-path external --stats");
  std::string why;
  if (externalSetup(ExternalSync::Semaphores, why).ctx) {
    EXPECT_EQ(r.code, 0) << r.err;
    EXPECT_TRUE(contains(r.out, "buffers: external memory")) << r.out;
  } else {
    EXPECT_EQ(r.code, 1) << r.err;
    EXPECT_TRUE(contains(r.err, "eddy: error: --buffer-path external is not possible: ")) << r.err;
  }
}

// ---- on a device where the external path is possible ----

// Draws `frames` frames of the dam break through `external` and the host
// copy (the app's normal one-frame latency) and counts the frames whose
// pixels differ.
TEST(ExternalFrames, PixelIdenticalToTheHostCopy) {
  REQUIRE_EGL();
  for (ExternalSync sync : {ExternalSync::Semaphores, ExternalSync::HostWait}) {
    std::string why;
    BufferSetup s = externalSetup(sync, why);
    if (!s.ctx) GTEST_SKIP() << why;
    SCOPED_TRACE(externalSyncName(sync));
    const double spacing = envReal("EDDY_EXTERNAL_TEST_SPACING", 0.0006);
    auto sim = sph(*s.ctx, "dam_break", spacing);
    ParticleBuffers ext(*s.ctx, BufferPath::External, false, s.interop.get());
    ParticleBuffers host(*s.ctx, glHasBufferStorage() ? BufferPath::HostCopyPersistent : BufferPath::HostCopySubData,
                         false);
    ext.reset(sim->capacity());
    host.reset(sim->capacity());
    Target t(800, 600);
    Profiler prof(64);
    const ViewSettings vs = speedView(*sim);
    const int frames = 30;
    int differ = 0;
    size_t minLit = SIZE_MAX;
    std::vector<unsigned char> background;
    for (int f = 0; f < frames; ++f) {
      for (int k = 0; k < 2; ++k) sim->step();
      ext.upload(*sim, vs.colorField, prof);
      host.upload(*sim, vs.colorField, prof);
      const auto a = t.draw(ext, *sim, vs);
      const auto b = t.draw(host, *sim, vs);
      if (background.empty()) {
        ParticleBuffers none(*s.ctx, BufferPath::HostCopySubData, false);
        background = t.draw(none, *sim, vs);  // nothing uploaded: the empty picture
      }
      minLit = std::min(minLit, lit(b, background));
      differ += a != b;
    }
    std::cout << externalSyncName(sync) << ": " << sim->size() << " particles, " << frames << " frames, "
              << differ << " differ from the host copy; at least " << minLit << " pixels lit\n";
    EXPECT_EQ(differ, 0) << "every frame through `external` must be pixel-identical to the host copy";
    EXPECT_GT(minLit, size_t(800 * 600 / 200)) << "the pictures compared are not empty";
  }
}

// The torn-frame test. Every frame draws its own upload at once (`fresh`:
// no frame of latency, so OpenGL wants the slot while OpenCL has just been
// given 8 steps and then the copy to do), and the uploads alternate between
// two different scenes every two frames, so a slot that OpenGL reads before
// OpenCL has written it holds a picture of the other scene (its content from
// two uploads ago). Without synchronisation this must show; with it, never.
TEST(ExternalFrames, TornFramesShowWithoutSynchronisationOnly) {
  REQUIRE_EGL();
  for (ExternalSync sync : {ExternalSync::Semaphores, ExternalSync::HostWait, ExternalSync::None}) {
    std::string why;
    BufferSetup s = externalSetup(sync, why);
    if (!s.ctx) GTEST_SKIP() << why;
    SCOPED_TRACE(externalSyncName(sync));
    const double spacing = envReal("EDDY_EXTERNAL_TEST_SPACING", 0.0006);
    std::unique_ptr<Simulation> sims[2] = {sph(*s.ctx, "dam_break", spacing),
                                           sph(*s.ctx, "double_dam_break", spacing)};
    const size_t capacity = std::max(sims[0]->capacity(), sims[1]->capacity());
    ParticleBuffers ext(*s.ctx, BufferPath::External, false, s.interop.get());
    ParticleBuffers host(*s.ctx, glHasBufferStorage() ? BufferPath::HostCopyPersistent : BufferPath::HostCopySubData,
                         false);
    ext.reset(capacity);
    host.reset(capacity);
    Target t(800, 600);
    Profiler prof(64);
    const int frames = 24;
    int torn = 0;
    for (int f = 0; f < frames; ++f) {
      Simulation& sim = *sims[(f / 2) % 2];
      // One colour: a colour field's `fresh` upload reads the field back at
      // once (for the legend), a host wait that would hide the race.
      ViewSettings vs = speedView(sim);
      vs.colorField = -1;
      for (int k = 0; k < 8; ++k) sim.step();
      ext.upload(sim, vs.colorField, prof, true);
      const auto a = t.draw(ext, sim, vs);  // drawn before the host copy waits for anything
      host.upload(sim, vs.colorField, prof, true);
      const auto b = t.draw(host, sim, vs);
      torn += a != b;
    }
    std::cout << externalSyncName(sync) << ": " << torn << " of " << frames << " frames torn\n";
    if (sync == ExternalSync::None) {
      EXPECT_GT(torn, 0) << "without synchronisation the test must see torn frames (else it cannot fail)";
    } else {
      EXPECT_EQ(torn, 0) << "a torn frame: OpenGL drew a slot OpenCL had not finished writing";
    }
  }
}

}  // namespace
