#include "gui_app.hpp"

#include "buffer_setup.hpp"
#include "camera.hpp"
#include "controller.hpp"
#include "defaults.hpp"
#include "gl.hpp"
#include "gl_sharing.hpp"
#include "gpu_timer.hpp"
#include "io.hpp"
#include "mouse_input.hpp"
#include "colormap.hpp"
#include "native_handles.hpp"
#include "offscreen_egl.hpp"
#include "panel.hpp"
#include "particle_buffers.hpp"
#include "recorder.hpp"
#include "renderer.hpp"
#include "screenshot.hpp"
#include "view_defaults.hpp"

#define GLFW_INCLUDE_NONE
#include <GLFW/glfw3.h>
#include <imgui.h>
#include <imgui_impl_glfw.h>
#include <imgui_impl_opengl3.h>

#include <algorithm>
#include <csignal>
#include <chrono>
#include <cmath>
#include <limits>
#include <cstdlib>
#include <ctime>
#include <iomanip>
#include <iostream>
#include <memory>

namespace eddy {

bool displayAvailable() {
  for (const char* v : {"DISPLAY", "WAYLAND_DISPLAY"})
    if (const char* s = std::getenv(v); s && *s) return true;
  return false;
}

namespace {

using Clock = std::chrono::steady_clock;
std::string gGlfwError;
// Set by SIGINT / SIGTERM: the frame loop ends after the current frame and a
// recording is finished (queue drained, files complete) before exit.
volatile std::sig_atomic_t gInterrupted = 0;

double ms(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

// Running means of the frame-time split, for the panel and --stats.
struct FrameTimes {
  double simulate = 0, transfer = 0, draw = 0, frame = 0, wait = 0, sync = 0;
  void mix(const FrameTimes& f, double a) {
    sync += a * (f.sync - sync);
    simulate += a * (f.simulate - simulate);
    transfer += a * (f.transfer - transfer);
    draw += a * (f.draw - draw);
    frame += a * (f.frame - frame);
    wait += a * (f.wait - wait);
  }
};

class App {
 public:
  App(const GuiOptions& o, GLFWwindow* w, std::ostream& out, std::ostream& err)
      : o_(o), win_(w), out_(out), err_(err) {}
  ~App();
  int run();

  void onKey(int key, int action, int mods);
  void onScroll(double dy) {
    if (!ImGui::GetIO().WantCaptureMouse) scroll_ += float(dy);
  }

 private:
  void setup();
  void handleMouse(float frameDt);
  void fitView();
  void updateColorRange(bool reset);
  void takeScreenshot(const std::string& path, int fbw, int fbh);
  void startRecording(const RecordOptions& r);
  bool stopRecording();  // false if the recording failed
  void applyViewDefaults();
  void updateSolids(bool current);
  std::vector<glm::vec3> probeMarkers() const;
  void updateShift();
  float sceneSize() const;
  // The window's sizes, or --size for --offscreen (no window: win_ is null).
  void framebufferSize(int& w, int& h) const {
    if (win_) glfwGetFramebufferSize(win_, &w, &h);
    else w = o_.width, h = o_.height;
  }
  void windowSize(int& w, int& h) const {
    if (win_) glfwGetWindowSize(win_, &w, &h);
    else w = o_.width, h = o_.height;
  }
  double now() const { return std::chrono::duration<double>(Clock::now() - born_).count(); }

  GuiOptions o_;
  GLFWwindow* win_;  // null with --offscreen
  Clock::time_point born_ = Clock::now();
  GLuint offFbo_ = 0, offColor_ = 0, offDepth_ = 0;  // --offscreen: the frame's target
  std::ostream& out_;
  std::ostream& err_;
  bool imguiReady_ = false;

  std::unique_ptr<Context> ctx_;
  PathChoice choice_;
  std::unique_ptr<ExternalInterop> interop_;  // the external buffer path's Vulkan/CL/GL set-up
  std::unique_ptr<Controller> ctl_;
  std::unique_ptr<ParticleBuffers> bufs_;
  std::unique_ptr<Renderer> renderer_;
  std::unique_ptr<Recorder> recorder_;
  double recordSimStart_ = 0;
  bool recordFailed_ = false;
  // --overwrite: the earlier recording's frames are removed just before the
  // first frame is captured, once a frame has been drawn (a start that fails,
  // such as a framebuffer too large, leaves them).
  bool overwritePending_ = false;
  Panel panel_;
  ViewSettings view_;
  OrbitCamera cam_;
  Profiler frameProf_{64};
  std::string lastKind_;

  Box sceneBox_{{-1, -1, -1}, {1, 1, 1}};
  float autoRadius_ = 0.01f, meanMass_ = 1.f, freeAspect_ = 1.f;
  bool needFit_ = true, resetRange_ = true, screenshotKey_ = false;
  int lastField_ = -2;
  bool lastLog_ = false;

  // mouse
  MouseInput mouse_;
  float scroll_ = 0;

  // timing
  GpuTimer gpuTimer_;  // every render pass (GL_TIME_ELAPSED ring, never waited for)
  FrameTimes smooth_;
  double fps_ = 0, stepsPerSec_ = 0;
  std::string status_;
  double statusUntil_ = 0;
  std::string lastError_, lastNotice_;

  // Solids (issue 12): the boundary particles read from the device into a
  // GL buffer, once per simulation (static obstacles) or, while bodies
  // move, with a non-blocking read per frame (drawn when it has completed).
  GLuint solidVbo_ = 0;
  size_t solidCount_ = 0;
  std::vector<cl_float4> solidHost_;
  cl::Event solidRead_;
  bool solidPending_ = false;
  uint64_t solidGen_ = ~0ull;
};

App::~App() {
  recorder_.reset();  // finishes the files (its pixel buffers need the GL context)
  // Order: GL/CL buffers, then the simulation, then the CL context; ImGui
  // and the renderer while the GL context is still current.
  bufs_.reset();
  interop_.reset();
  if (solidPending_) {
    try {
      solidRead_.wait();  // its host buffer must outlive the read
    } catch (const cl::Error&) {
      // teardown
    }
  }
  if (solidVbo_) glDeleteBuffers(1, &solidVbo_);
  ctl_.reset();
  ctx_.reset();
  renderer_.reset();
  if (offFbo_) {
    glBindFramebuffer(GL_FRAMEBUFFER, 0);
    glDeleteFramebuffers(1, &offFbo_);
    glDeleteRenderbuffers(1, &offColor_);
    glDeleteRenderbuffers(1, &offDepth_);
  }
  if (imguiReady_) {
    ImGui_ImplOpenGL3_Shutdown();
    ImGui_ImplGlfw_Shutdown();
    ImGui::DestroyContext();
  }
}

void App::onKey(int key, int action, int /*mods*/) {
  if (action != GLFW_PRESS && !(action == GLFW_REPEAT && key == GLFW_KEY_S)) return;
  if (imguiReady_ && ImGui::GetIO().WantCaptureKeyboard) return;
  if (!ctl_) return;
  if (!ctl_->hasSim() && key != GLFW_KEY_H && key != GLFW_KEY_F1 && key != GLFW_KEY_ESCAPE) return;
  switch (key) {
    case GLFW_KEY_SPACE: ctl_->paused = !ctl_->paused; break;
    case GLFW_KEY_S: ctl_->stepOnce(); break;
    case GLFW_KEY_R: ctl_->reset(); break;
    case GLFW_KEY_C: {
      const int n = int(ctl_->sim().colorFields().size());
      view_.colorField = view_.colorField + 1 >= n ? -1 : view_.colorField + 1;
      break;
    }
    case GLFW_KEY_H: view_.showPanel = !view_.showPanel; break;
    case GLFW_KEY_F: needFit_ = true; break;
    case GLFW_KEY_P: screenshotKey_ = true; break;
    case GLFW_KEY_B: ctl_->dropBlock(); break;
    case GLFW_KEY_F1: view_.showHelp = !view_.showHelp; break;
    case GLFW_KEY_ESCAPE: glfwSetWindowShouldClose(win_, GLFW_TRUE); break;
    default: break;
  }
}

void App::updateSolids(bool current) {
  if (!ctl_->hasSim()) {
    solidCount_ = 0;
    return;
  }
  Simulation& sim = ctl_->sim();
  const cl::Buffer* buf = sim.solidPoints();
  const size_t n = buf ? sim.solidPointCount() : 0;
  const bool fresh = ctl_->generation() != solidGen_;
  if (fresh && solidPending_) {  // a read of the previous simulation's buffer
    solidRead_.wait();
    solidPending_ = false;
  }
  solidGen_ = ctl_->generation();
  if (n == 0) {
    solidCount_ = 0;
    return;
  }
  if (!solidVbo_) glGenBuffers(1, &solidVbo_);
  auto upload = [&] {
    glBindBuffer(GL_ARRAY_BUFFER, solidVbo_);
    glBufferData(GL_ARRAY_BUFFER, GLsizeiptr(solidHost_.size() * sizeof(cl_float4)), solidHost_.data(),
                 GL_STREAM_DRAW);
    glBindBuffer(GL_ARRAY_BUFFER, 0);
    solidCount_ = solidHost_.size();
  };
  if (solidPending_ && solidRead_.getInfo<CL_EVENT_COMMAND_EXECUTION_STATUS>() == CL_COMPLETE) {
    solidPending_ = false;
    upload();
  }
  if (current && sim.solidsMove() && !fresh) {
    // A batch capture's frame: the bodies where this frame's steps left them
    // (a blocking read after them), not where an earlier frame's read saw them.
    if (solidPending_) solidRead_.wait();
    solidPending_ = false;
    solidHost_.resize(n);
    ctx_->queue().enqueueReadBuffer(*buf, CL_TRUE, 0, n * sizeof(cl_float4), solidHost_.data());
    upload();
  } else if (fresh) {  // a new simulation: one blocking read (on a rebuild or an edit only)
    solidHost_.resize(n);
    ctx_->queue().enqueueReadBuffer(*buf, CL_TRUE, 0, n * sizeof(cl_float4), solidHost_.data());
    upload();
  } else if (sim.solidsMove() && !solidPending_) {
    solidHost_.resize(n);
    ctx_->queue().enqueueReadBuffer(*buf, CL_FALSE, 0, n * sizeof(cl_float4), solidHost_.data(),
                                    nullptr, &solidRead_);
    solidPending_ = true;
  }
}

// Probe markers: a pressure probe is a small 3-D cross at its point; a level
// probe a vertical line at (x, z) through the tank with a tick at the
// level it reads now.
std::vector<glm::vec3> App::probeMarkers() const {
  std::vector<glm::vec3> v;
  if (!ctl_->hasSim()) return v;
  const ProbeHistory& h = ctl_->probeHistory();
  const auto dom = ctl_->sim().domain();
  const float a = 3.f * autoRadius_;
  for (size_t i = 0; i < h.probes().size(); ++i) {
    const ProbeSpec& p = h.probes()[i];
    const glm::vec3 c(float(p.x), float(p.y), float(p.z));
    if (p.kind == ProbeSpec::Kind::Pressure) {
      for (int k = 0; k < 3; ++k) {
        glm::vec3 e(0.f);
        e[k] = a;
        v.push_back(c - e);
        v.push_back(c + e);
      }
    } else {
      const float top = dom ? dom->hi[1] : 1.f, bottom = dom ? dom->lo[1] : 0.f;
      v.emplace_back(c.x, bottom, c.z);
      v.emplace_back(c.x, top, c.z);
      if (h.hasValue()) {
        const float y = float(h.latest(i));
        v.emplace_back(c.x - a, y, c.z);
        v.emplace_back(c.x + a, y, c.z);
        v.emplace_back(c.x, y, c.z - a);
        v.emplace_back(c.x, y, c.z + a);
      }
    }
  }
  return v;
}

void App::applyViewDefaults() {
  const ViewSettings d = defaultViewFor(ctl_->sim().kind());
  const bool panel = view_.showPanel, help = view_.showHelp, vsync = view_.vsync;
  view_ = d;
  view_.showPanel = panel;
  view_.showHelp = help;
  view_.vsync = vsync;
  lastKind_ = ctl_->sim().kind();
}

void App::setup() {
  // ---- OpenCL context and buffer path: gl_sharing, external memory, host copy ----
  const DeviceInfo dev = selectDevice(o_.device);
  PathRequest request;
  request.path = o_.bufferPath;
  request.sharingAllowed = o_.glSharing;
  request.persistentAllowed = o_.persistentMap;
  request.externalSync = externalSyncFromEnvironment();
  void* glx = win_ ? nativeGlxContext(win_) : nullptr;
  BufferSetup buffers = setUpBuffers(dev, request, glx, win_ ? nativeX11Display() : nullptr);
  ctx_ = std::move(buffers.ctx);
  choice_ = buffers.choice;
  interop_ = std::move(buffers.interop);

  // ---- simulation, buffers, renderer ----
  // A failed build or load does not end the app: the panel shows the error.
  ctl_ = std::make_unique<Controller>(*ctx_, o_.spec, guiParams(o_), o_.loadPath);
  ctl_->substeps = o_.substeps;
  ctl_->setRealtime(startsRealtime(o_));
  ctl_->setSpeed(o_.speed);
  ctl_->paused = o_.paused;
  // A --load asked for on the command line that fails ends the app (exit 1),
  // instead of running another scene; a Load from the panel keeps the running one.
  if (!ctl_->startLoadError().empty()) throw Error("--load: " + ctl_->startLoadError());
  // Probes: the scene's built-in ones and --probe / the config's (a probe of
  // the command line outside the tank is a usage error, as in eddy-cli).
  ctl_->setProbes(o_.probes);
  if (!ctl_->appProbeError().empty()) throw GuiUsageError("--probe " + ctl_->appProbeError());
  if (!o_.loadPath.empty()) {
    panel_.setSnapshotPath(o_.loadPath);
    if (ctl_->hasSim() && ctl_->error().empty()) {
      // --set / config values on top of the snapshot's, as eddy-cli run --load does;
      // a value that only a rebuild uses (e.g. seed) would discard the loaded state.
      std::vector<std::pair<std::string, double>> changes = o_.configParams;
      const Params p = guiParams(o_);
      for (const auto& a : o_.sets) {
        const std::string k = a.substr(0, a.find('='));
        changes.emplace_back(k, p.get(k));
      }
      for (const auto& [k, v] : changes) {
        const ParamDesc* d = ctl_->editParams().find(k);
        if (d && d->rebuild) err_ << "eddy: " << loadIgnoresNote(k) << '\n';
        else ctl_->setParam(k, v);
      }
    }
  }
  bufs_ = std::make_unique<ParticleBuffers>(*ctx_, choice_.path, choice_.clGlEvent, interop_.get());
  if (ctl_->hasSim()) bufs_->reset(ctl_->sim().capacity());
  renderer_ = std::make_unique<Renderer>();
  renderer_->setTimer(&gpuTimer_);

  if (ctl_->hasSim()) applyViewDefaults();
  view_.showPanel = !o_.hidePanel;
  view_.vsync = o_.vsync < 0 ? o_.frames == 0 : o_.vsync == 1;
  if (!o_.style.empty())
    for (int i = 0; i < 3; ++i)
      if (o_.style == kDrawStyleNames[i]) view_.style = DrawStyle(i);
  if (!o_.surfaceView.empty())
    for (int i = 0; i < 4; ++i)
      if (o_.surfaceView == kSurfaceViewNames[i]) view_.surface.view = SurfaceView(i);
  if (o_.foam) view_.surface.foam = true;
  if (o_.cameraGiven) {
    cam_.yaw = o_.cameraYaw * 3.14159265f / 180.f;
    cam_.pitch = o_.cameraPitch * 3.14159265f / 180.f;
  }
  if (!o_.color.empty() && ctl_->hasSim()) {
    const auto f = ctl_->sim().colorFields();
    const auto it = std::find(f.begin(), f.end(), o_.color);
    if (o_.color == "none") view_.colorField = -1;
    else if (it == f.end()) {
      const std::string known = joinNames(f);
      throw GuiUsageError("--color '" + o_.color + "': " + ctl_->sim().kind() +
                  " offers " + (known.empty() ? "no fields" : known) + " (or none)");
    } else view_.colorField = int(it - f.begin());
  }
  if (!win_) {
    // --offscreen: every frame is drawn into this framebuffer (RGBA8 + depth),
    // within the driver's size limits (named, not an incomplete framebuffer).
    GLint maxRb = 0, maxTex = 0, maxView[2] = {0, 0};
    glGetIntegerv(GL_MAX_RENDERBUFFER_SIZE, &maxRb);
    glGetIntegerv(GL_MAX_TEXTURE_SIZE, &maxTex);
    glGetIntegerv(GL_MAX_VIEWPORT_DIMS, maxView);
    const GLint limit = std::min({maxRb, maxTex, maxView[0], maxView[1]});
    if (limit > 0 && (o_.width > limit || o_.height > limit))
      throw GuiUsageError("--size " + std::to_string(o_.width) + "x" + std::to_string(o_.height) +
                          ": larger than this OpenGL driver draws, " + std::to_string(limit) +
                          " pixels a side");
    glGenFramebuffers(1, &offFbo_);
    glGenRenderbuffers(1, &offColor_);
    glGenRenderbuffers(1, &offDepth_);
    glBindRenderbuffer(GL_RENDERBUFFER, offColor_);
    glRenderbufferStorage(GL_RENDERBUFFER, GL_RGBA8, o_.width, o_.height);
    glBindRenderbuffer(GL_RENDERBUFFER, offDepth_);
    glRenderbufferStorage(GL_RENDERBUFFER, GL_DEPTH_COMPONENT24, o_.width, o_.height);
    glBindFramebuffer(GL_FRAMEBUFFER, offFbo_);
    glFramebufferRenderbuffer(GL_FRAMEBUFFER, GL_COLOR_ATTACHMENT0, GL_RENDERBUFFER, offColor_);
    glFramebufferRenderbuffer(GL_FRAMEBUFFER, GL_DEPTH_ATTACHMENT, GL_RENDERBUFFER, offDepth_);
    if (glCheckFramebufferStatus(GL_FRAMEBUFFER) != GL_FRAMEBUFFER_COMPLETE)
      throw Error("--offscreen: the " + std::to_string(o_.width) + "x" + std::to_string(o_.height) +
                  " framebuffer is incomplete");
    checkGL("offscreen framebuffer");
    return;  // no window: no panel, no input
  }
  glfwSwapInterval(view_.vsync ? 1 : 0);

  // ---- ImGui ----
  IMGUI_CHECKVERSION();
  ImGui::CreateContext();
  ImGuiIO& io = ImGui::GetIO();
  io.IniFilename = nullptr;
  ImGui::StyleColorsDark();
  ImGuiStyle& st = ImGui::GetStyle();
  st.WindowRounding = 6.f;
  st.FrameRounding = 3.f;
  st.GrabRounding = 3.f;
  float xs = 1.f, ys = 1.f;
  glfwGetWindowContentScale(win_, &xs, &ys);
  if (xs > 1.05f) {  // HiDPI
    st.ScaleAllSizes(xs);
    io.FontGlobalScale = xs;
  }
  ImGui_ImplGlfw_InitForOpenGL(win_, true);  // chains to the callbacks installed before
  ImGui_ImplOpenGL3_Init("#version 330 core");
  imguiReady_ = true;
  checkGL("setup");
}

void App::updateShift() {
  // The view centres on the part of the window the panel leaves free.
  int ww = 1, wh = 1;
  windowSize(ww, wh);
  const float covered = view_.showPanel ? Panel::coveredWidth(float(ww)) : 0.f;
  const float freeW = std::max(float(ww) - covered, 1.f);
  cam_.shiftX = freeW / float(std::max(ww, 1)) - 1.f;
  freeAspect_ = freeW / float(std::max(wh, 1));
}

float App::sceneSize() const {
  const float dx = sceneBox_.hi[0] - sceneBox_.lo[0], dy = sceneBox_.hi[1] - sceneBox_.lo[1],
              dz = sceneBox_.hi[2] - sceneBox_.lo[2];
  return std::max(std::sqrt(dx * dx + dy * dy + dz * dz), 1e-6f);
}

void App::fitView() {
  Simulation& sim = ctl_->sim();
  const size_t n = sim.size();
  const float* p = bufs_->hostPositions();
  std::vector<float> tmp;
  if (!p || bufs_->hostCount() < n) {  // sharing path: one blocking read, on demand only
    tmp.resize(n * 4);
    ctx_->queue().enqueueReadBuffer(sim.positionBuffer(), CL_TRUE, 0, n * 4 * sizeof(float), tmp.data());
    p = tmp.data();
  }
  const auto dom = sim.domain();
  const Box particles = robustBounds(p, n, 0.02f);
  sceneBox_ = dom ? *dom : particles;
  updateShift();
  cam_.fit(sceneBox_, freeAspect_);
  // Radius: the simulation's, else from the particles' spacing (N-body).
  const float r = sim.particleRadius();
  if (r > 0) {
    autoRadius_ = r;
  } else {
    const float dx = particles.hi[0] - particles.lo[0], dy = particles.hi[1] - particles.lo[1],
                dz = particles.hi[2] - particles.lo[2];
    const float vol = std::max(dx * dy * dz, 1e-12f);
    autoRadius_ = 0.9f * std::cbrt(vol / float(std::max<size_t>(n, 1)));
  }
  double m = 0;
  const size_t stride = std::max<size_t>(1, n / 4096);
  size_t k = 0;
  for (size_t i = 0; i < n; i += stride, ++k) m += p[4 * i + 3];
  meanMass_ = k && m > 0 ? float(m / double(k)) : 1.f;
  needFit_ = false;
}

void App::updateColorRange(bool reset) {
  if (!view_.autoRange) return;
  const float* c = bufs_->hostColors();
  if (!c) return;
  const auto r = robustRange(c, bufs_->hostCount(), view_.logScale);
  const float a = reset ? 1.f : 0.1f;
  view_.rangeLo += a * (r[0] - view_.rangeLo);
  view_.rangeHi += a * (r[1] - view_.rangeHi);
}

void App::handleMouse(float frameDt) {
  const ImGuiIO& io = ImGui::GetIO();
  PointerState p;
  glfwGetCursorPos(win_, &p.x, &p.y);
  glfwGetWindowSize(win_, &p.width, &p.height);
  p.left = glfwGetMouseButton(win_, GLFW_MOUSE_BUTTON_LEFT) == GLFW_PRESS;
  p.right = glfwGetMouseButton(win_, GLFW_MOUSE_BUTTON_RIGHT) == GLFW_PRESS;
  p.middle = glfwGetMouseButton(win_, GLFW_MOUSE_BUTTON_MIDDLE) == GLFW_PRESS;
  p.ctrl = glfwGetKey(win_, GLFW_KEY_LEFT_CONTROL) == GLFW_PRESS ||
           glfwGetKey(win_, GLFW_KEY_RIGHT_CONTROL) == GLFW_PRESS;
  p.shift = glfwGetKey(win_, GLFW_KEY_LEFT_SHIFT) == GLFW_PRESS ||
            glfwGetKey(win_, GLFW_KEY_RIGHT_SHIFT) == GLFW_PRESS;
  p.overPanel = io.WantCaptureMouse;
  mouse_.update(p, now(), frameDt, panel_, view_, sceneSize(), *ctl_, cam_);
  if (scroll_ != 0 && !io.WantCaptureMouse) cam_.zoom(scroll_);
  scroll_ = 0;
}

void App::takeScreenshot(const std::string& path, int fbw, int fbh) {
  writeScreenshot(path, fbw, fbh);
  status_ = "saved " + path;
  statusUntil_ = now() + 3;
  err_ << "eddy: screenshot " << path << '\n';
}

void App::startRecording(const RecordOptions& r) {
  recorder_ = std::make_unique<Recorder>(r);
  // The device clock itself (time() is the last read-back, a few steps old).
  recordSimStart_ = ctl_->hasSim() ? ctl_->sim().syncTime() : 0.0;
  err_ << "eddy: recording to " << r.target << (r.every > 1 ? " (every " + std::to_string(r.every) + " frames)" : "")
       << '\n';
}

bool App::stopRecording() {
  if (!recorder_) return true;
  bool ok = true;
  try {
    recorder_->finish();
  } catch (const Error& e) {
    err_ << "eddy: error: recording: " << e.what() << '\n';
    ok = false;
  }
  const RecordOptions& r = recorder_->options();
  const double video = double(recorder_->framesWritten()) / r.fps;
  const double simulated = (ctl_->hasSim() ? ctl_->sim().syncTime() : 0.0) - recordSimStart_;
  err_ << "eddy: recorded " << recorder_->framesWritten() << " frames to " << r.target;
  if (isVideoTarget(r.target)) err_ << " (" << video << " s of video at " << r.fps << " fps)";
  err_ << "; simulated time " << simulated << " s";
  // Real time: the video's length x speed, less what the first frames (one
  // step each until dt and a step's device cost are known) have not made up
  // yet and what frames the compute budget capped did not advance (none in a
  // batch recording). Said, not hidden.
  if (ctl_->hasSim() && ctl_->realtime() && recorder_->framesWritten() > 0) {
    const double want = video * ctl_->speed();
    if (simulated < 0.99 * want)
      err_ << " (" << want << " s of video x speed asked for; " << (want - simulated)
           << " s short: the first frames run one step each until the time step and a step's device "
              "cost are known, and are made up at most 25 % fast; a device behind its compute budget falls "
              "short)";
  }
  err_ << '\n';
  status_ = "recorded " + std::to_string(recorder_->framesWritten()) + " frames to " + r.target;
  statusUntil_ = now() + 4;
  recorder_.reset();
  return ok;
}

int App::run() {
  if (win_) {
    glfwSetWindowUserPointer(win_, this);
    glfwSetKeyCallback(win_, [](GLFWwindow* w, int key, int, int action, int mods) {
      static_cast<App*>(glfwGetWindowUserPointer(w))->onKey(key, action, mods);
    });
    glfwSetScrollCallback(win_, [](GLFWwindow* w, double, double dy) {
      static_cast<App*>(glfwGetWindowUserPointer(w))->onScroll(dy);
    });
  }
  setup();
  if (!o_.screenshot.empty()) checkWritable(o_.screenshot);
  overwritePending_ = o_.overwrite;  // the parser refused a non-empty folder without it
  if (!o_.record.empty()) startRecording({o_.record, o_.recordEvery, o_.recordFps});
  // A batch recording in real time (--frames N --record --realtime): each
  // frame is its share of the video, and no one waits for it to be drawn, so
  // its steps are not capped by the interactive compute budget: the video
  // plays in real time (x speed) on any device, however long it takes to make.
  const bool batchRealtimeRecording = !o_.record.empty() && o_.frames > 0 && ctl_->realtime();
  if (batchRealtimeRecording && recorder_) {
    ctl_->pacer().setBudget(std::numeric_limits<double>::infinity());
    // A video frame of more than the pacer's stall limit (below 10 video
    // frames per second) is still owed in full: its wall time is not a stall.
    ctl_->pacer().setMaxFrameTime(std::max(recorder_->options().drawnFrameSeconds(), 0.1));
  }
  err_ << "eddy: " << ctx_->info().name << ", " << bufferPathName(choice_.path) << " ("
       << choice_.summary() << "), GL " << reinterpret_cast<const char*>(glGetString(GL_VERSION))
       << '\n';
  if (batchRealtimeRecording)
    err_ << "eddy: stepping: real time at " << ctl_->speed() << "x of the video (each frame runs the steps "
         << "its share of the video asks for; a batch recording has no compute budget)\n";
  else if (ctl_->realtime())
    err_ << "eddy: stepping: real time at " << ctl_->speed() << "x (as many steps a frame as its wall "
         << "time asks for, within a " << ctl_->pacer().budget() * 1e3 << " ms compute budget)\n";
  else
    err_ << "eddy: stepping: fixed, " << ctl_->substeps << " step" << (ctl_->substeps == 1 ? "" : "s")
         << " per frame" << (o_.substepsGiven ? "" : " (--frames with --screenshot/--record; --realtime paces them)")
         << (o_.speedGiven ? "; --speed " + std::to_string(o_.speed).substr(0, 4) +
                                 " applies once the panel's real time switch is on"
                           : std::string())
         << '\n';

  uint64_t frame = 0;
  auto last = Clock::now();
  const auto start = last;
  bool vsync = view_.vsync;
  FrameTimes total;
  uint64_t measured = 0, stepsTotal = 0;
  uint64_t limitedFrames = 0;  // --stats: frames the compute budget capped (real-time mode)
  double simAtWarmup = 0;
  double secAcc = 0;
  uint64_t secFrames = 0, secSteps = 0;
  const uint64_t warmup = std::min<uint64_t>(5, o_.frames / 4);

  bool interrupted = false;
  while (!win_ || !glfwWindowShouldClose(win_)) {
    if (gInterrupted) {
      err_ << "eddy: interrupted\n";
      interrupted = true;
      break;
    }
    const auto t0 = Clock::now();
    const float frameDt = float(ms(last, t0) * 1e-3);
    last = t0;
    if (win_) glfwPollEvents();
    if (win_) {
      int w = 0, h = 0;
      glfwGetFramebufferSize(win_, &w, &h);
      if (w <= 0 || h <= 0) {  // minimised: nothing to draw, the simulation waits
        glfwWaitEventsTimeout(0.1);
        continue;
      }
    }
    if (imguiReady_) handleMouse(frameDt);

    // ---- simulate: this frame's changes at the step boundary, then its steps ----
    // While recording, a drawn frame is 1/(K F) s of the video (every K-th
    // frame kept, F frames per second): real-time pacing advances simulated
    // time by that x speed instead of the frame's wall time, so the video
    // plays in real time (x speed) whatever the drawing rate. A device that
    // cannot fill it within the frame's budget shows as "behind" in the panel.
    double paceSeconds = double(frameDt);
    if (recorder_) paceSeconds = recorder_->options().drawnFrameSeconds();
    const FrameReport rep = ctl_->frame(frameProf_, paceSeconds);
    const bool live = ctl_->hasSim();
    // A batch capture (--frames N with --record, or the last frame with
    // --screenshot) draws the state after this frame's steps: the frame waits
    // for them instead of drawing last frame's upload (the interactive
    // pipelining, one frame behind), so frame k of the capture shows k x
    // substeps steps and the screenshot the state after all N frames.
    const bool capture = o_.frames > 0 && (recorder_ || (frame + 1 >= o_.frames && !o_.screenshot.empty()));
    if (rep.rebuilt && live) {
      bufs_->reset(ctl_->sim().capacity());
      if (ctl_->sim().kind() != lastKind_) applyViewDefaults();
      resetRange_ = true;
      if (!rep.solidsEdited) needFit_ = true;  // an edit of the solids keeps the view
    }
    try {
      updateSolids(capture);
    } catch (const cl::Error& e) {
      err_ << "eddy: reading the solids failed: " << describe(e) << '\n';
      solidCount_ = 0;
    }
    if (ctl_->error() != lastError_) {  // every failure also goes to stderr, once
      lastError_ = ctl_->error();
      if (!lastError_.empty()) err_ << "eddy: " << lastError_ << '\n';
    }
    if (ctl_->notice() != lastNotice_) {
      lastNotice_ = ctl_->notice();
      if (!lastNotice_.empty()) err_ << "eddy: " << lastNotice_ << '\n';
    }
    stepsTotal += rep.steps;
    secSteps += rep.steps;

    // ---- transfer: enqueue the copy into the slot GL is not drawing ----
    ParticleDraw d{};
    if (live) {
      if (view_.colorField >= int(ctl_->sim().colorFields().size())) view_.colorField = -1;
      if (view_.style == DrawStyle::Surface && view_.surface.foam) {  // foam reads the speed
        const auto f = ctl_->sim().colorFields();
        const auto it = std::find(f.begin(), f.end(), "speed");
        if (it != f.end()) view_.colorField = int(it - f.begin());
        view_.logScale = false;
      }
      // A new colour field (key C, panel): draw this frame's upload, whose
      // values are of the new field, and take the legend's range from them;
      // last frame's slot holds the old field's values (or none).
      const bool newField = view_.colorField != lastField_ && lastField_ != -2 && !rep.rebuilt;
      bufs_->upload(ctl_->sim(), view_.colorField, frameProf_, newField, capture);
      d = bufs_->drawSlot();
      if (needFit_) fitView();
      if (view_.colorField != lastField_ || view_.logScale != lastLog_) resetRange_ = true;
      lastField_ = view_.colorField;
      lastLog_ = view_.logScale;
      updateColorRange(resetRange_);
      resetRange_ = false;
    }

    // ---- draw ----
    int fbw = 1, fbh = 1;
    framebufferSize(fbw, fbh);
    if (offFbo_) glBindFramebuffer(GL_FRAMEBUFFER, offFbo_);
    FrameTimes ft;
    gpuTimer_.beginFrame();
    ft.draw = gpuTimer_.passes().lastFrameMs();  // a frame of kRing ago, read when available
    renderer_->clear(fbw, fbh);
    const float aspect = float(fbw) / float(std::max(fbh, 1));
    updateShift();
    const glm::mat4 view = cam_.view(), proj = cam_.proj(aspect);
    d.radius = autoRadius_;
    d.massScale = meanMass_;
    d.bounds = sceneBox_;
    const auto dom = live ? ctl_->sim().domain() : std::nullopt;
    const bool surface = view_.style == DrawStyle::Surface;
    const bool passAlone = surface && view_.surface.view != SurfaceView::Final;
    if (live && surface && dom && !passAlone) renderer_->drawTank(*dom, view, proj);
    const glm::vec4 boxColor(0.75f, 0.8f, 0.9f, 0.55f);
    if (live && view_.showBox && dom && !surface) renderer_->drawBox(*dom, proj * view, boxColor);
    // Solids: grey boundary particles (a third of the fluid's spacing apart),
    // those inside the tank (not the ones continuing a solid through its walls).
    auto drawSolids = [&](const char* pass) {
      renderer_->drawSolidPoints(solidVbo_, solidCount_, 0.45f * autoRadius_, glm::vec3(0.62f, 0.62f, 0.6f),
                                 view, proj, fbh, pass, dom ? &*dom : nullptr);
    };
    // Surface style: the solids are part of the scene the water refracts
    // (drawn before it, like the tank), so a submerged solid shows through the
    // water; drawn again after the water, depth-tested against its surface,
    // for the parts in front of the water (which would otherwise be tinted).
    if (live && surface && !passAlone) drawSolids("solids");
    if (live) renderer_->drawParticles(d, view, proj, fbh, view_);
    if (live && !passAlone) drawSolids(surface ? "solids (front)" : "solids");
    // The surface writes the water's depth: the box's edges behind it are hidden.
    if (live && view_.showBox && dom && surface && !passAlone) renderer_->drawBox(*dom, proj * view, boxColor);
    if (live && !passAlone) renderer_->drawLines(probeMarkers(), proj * view, glm::vec4(1.f, 0.75f, 0.2f, 0.95f));
    if (live) bufs_->afterDraw();
    // The recording holds the scene without the panel.
    if (recorder_) {
      try {
        if (overwritePending_) {
          overwritePending_ = false;
          const size_t removed = removeOldRecording(o_.record);
          if (removed)
            err_ << "eddy: --overwrite: removed " << removed << " frames of an earlier recording from "
                 << o_.record << '\n';
        }
        recorder_->frame(fbw, fbh);
      } catch (const Error& e) {
        err_ << "eddy: error: recording: " << e.what() << '\n';
        recordFailed_ = true;
        stopRecording();
      }
    }

    // ---- panel (none with --offscreen) ----
    if (imguiReady_) {
      ImGui_ImplOpenGL3_NewFrame();
      ImGui_ImplGlfw_NewFrame();
      ImGui::NewFrame();
      PanelStats ps;
      ps.device = ctx_->info().name + " (" + ctx_->info().platformName + ")";
      ps.bufferPath = bufferPathName(choice_.path) + ": " + choice_.summary();
      ps.fps = fps_;
      ps.stepsPerSec = stepsPerSec_;
      ps.simulateMs = smooth_.simulate;
      ps.transferMs = smooth_.transfer;
      ps.drawMs = smooth_.draw;
      ps.frameMs = smooth_.frame;
      ps.waitMs = smooth_.wait;
      ps.frameProfiler = &frameProf_;
      ps.renderPasses = gpuTimer_.passes().stats();
      ps.recording = recorder_ != nullptr;
      if (recorder_) {
        ps.recordSeconds = recorder_->elapsedSeconds();
        ps.recordFrames = recorder_->framesCaptured();
        ps.recordTarget = recorder_->options().target;
      }
      // Without a simulation (start-up failure) the panel is always shown: it
      // holds the error, the build log and Retry.
      if (view_.showPanel || !live) panel_.draw(*ctl_, view_, ps);
      if (live && view_.style != DrawStyle::Surface) panel_.drawLegend(ctl_->sim(), view_);  // water has no colour field
      panel_.drawHelp(view_);
      if (!status_.empty() && now() < statusUntil_) {
        ImGui::SetNextWindowPos(ImVec2(12, 12));
        ImGui::SetNextWindowBgAlpha(0.6f);
        ImGui::Begin("status", nullptr, ImGuiWindowFlags_NoDecoration | ImGuiWindowFlags_AlwaysAutoResize |
                                            ImGuiWindowFlags_NoSavedSettings | ImGuiWindowFlags_NoInputs);
        ImGui::TextUnformatted(status_.c_str());
        ImGui::End();
      }
      ImGui::Render();
      {
        GpuPass pass(&gpuTimer_, "panel");
        ImGui_ImplOpenGL3_RenderDrawData(ImGui::GetDrawData());
      }
    }
    gpuTimer_.endFrame();
    if (panel_.fitRequested) needFit_ = true;
    panel_.fitRequested = false;
    if (panel_.recordRequested) {
      panel_.recordRequested = false;
      if (recorder_) {
        stopRecording();
      } else {
        char name[64];
        const std::time_t wall = std::time(nullptr);
        std::strftime(name, sizeof name, "eddy-record-%Y%m%d-%H%M%S", std::localtime(&wall));
        try {
          // a new folder: a second recording within the second gets "-2"
          startRecording({freshPath(name), 1, 60});
        } catch (const Error& e) {
          status_ = e.what();
          statusUntil_ = now() + 5;
        }
      }
    }
    if (view_.vsync != vsync && win_) {
      vsync = view_.vsync;
      glfwSwapInterval(vsync ? 1 : 0);
    }

    ++frame;
    const bool lastFrame = o_.frames && frame >= o_.frames;
    if (screenshotKey_ || panel_.screenshotRequested) {
      char name[64];
      const std::time_t wall = std::time(nullptr);
      std::strftime(name, sizeof name, "eddy-%Y%m%d-%H%M%S", std::localtime(&wall));
      try {
        takeScreenshot(freshPath(name, ".png"), fbw, fbh);  // never over an earlier one
      } catch (const Error& e) {
        status_ = e.what();
        statusUntil_ = now() + 5;
      }
      screenshotKey_ = panel_.screenshotRequested = false;
    }
    if (lastFrame && !o_.screenshot.empty()) takeScreenshot(o_.screenshot, fbw, fbh);
    if (win_) glfwSwapBuffers(win_);
    else glFlush();

    // ---- timing: only from completed events and queries ----
    frameProf_.collect(false);
    if (live) ctl_->sim().profiler().collect(false);
    const auto t1 = Clock::now();
    ft.frame = ms(t0, t1);
    ft.wait = bufs_->waitMs();
    ft.sync = bufs_->syncMs();
    ft.simulate = live ? rep.steps * ctl_->sim().profiler().meanStepMs() : 0.0;
    for (const auto& s : frameProf_.stats())
      if (s.name != "push") ft.transfer += s.lastMs;
    const double a = frame < 3 ? 1.0 : 0.05;
    if (ft.draw == 0) ft.draw = smooth_.draw;
    smooth_.mix(ft, a);
    secAcc += ft.frame * 1e-3;
    ++secFrames;
    if (secAcc >= 0.5) {
      fps_ = double(secFrames) / secAcc;
      stepsPerSec_ = double(secSteps) / secAcc;
      secAcc = 0;
      secFrames = secSteps = 0;
    }
    if (o_.stats && frame == warmup && live) {
      ctl_->sim().profiler().reset();
      frameProf_.reset();
      gpuTimer_.passes().reset();
      total = FrameTimes{};
      measured = 0;
      stepsTotal = 0;
      limitedFrames = 0;
      simAtWarmup = ctl_->sim().syncTime();  // --stats only: one read of the device clock
    }
    if (o_.stats && frame > warmup) {
      total.frame += ft.frame;
      limitedFrames += rep.plan.limited;
      total.draw += ft.draw;
      total.wait += ft.wait;
      total.sync += ft.sync;
      ++measured;
    }
    if (lastFrame) break;
  }

  if (!stopRecording()) recordFailed_ = true;
  if (interrupted) return 130;
  if (!ctl_->hasSim()) {
    err_ << "eddy: error: closed without a running simulation (see the error above)\n";
    return 1;
  }
  if (o_.stats && measured > 0) {
    ctx_->queue().finish();
    ctl_->sim().profiler().collect(true);
    frameProf_.collect(true);
    double sim = 0, transfer = 0;
    for (const auto& s : ctl_->sim().profiler().stats()) sim += s.totalMs;
    sim = ctl_->sim().profiler().allStepsMs(sim);  // sampled steps (profile_every) to all
    for (const auto& s : frameProf_.stats())
      if (s.name != "push") transfer += s.totalMs;
    const double f = double(measured);
    out_ << std::fixed << std::setprecision(3) << "eddy stats: " << ctl_->spec().sim << " "
         << ctl_->spec().scene << ", N = " << ctl_->sim().size() << ", " << measured
         << " frames, " << stepsTotal << " steps ("
         << (ctl_->realtime() ? "real time" : std::to_string(ctl_->substeps) + " per frame") << ")\n"
         << "  measured: frames " << warmup + 1 << " to " << frame << " of " << frame
         << " (the first " << warmup << " are warm-up: kernel compilation, first transfers)\n"
         << "  device: " << ctx_->info().name << "\n  buffers: " << bufferPathName(choice_.path)
         << " (" << choice_.summary() << ")"
         << "\n  per frame (ms): frame " << total.frame / f << "  simulate " << sim / f
         << "  transfer " << transfer / f << "  draw " << total.draw / f << "  host-wait "
         << total.wait / f << "  sync " << total.sync / f << "\n";
    // The transfer's parts (device time of each copy / kernel, OpenCL events).
    out_ << "  transfer (device ms per frame):";
    for (const auto& s : frameProf_.stats())
      if (s.name != "push") out_ << "  " << s.name << " " << s.totalMs / f;
    out_ << "\n";
    // GPU time of each render pass (timer queries), mean over the frames read back.
    out_ << "  render passes (GPU ms, mean of " << gpuTimer_.passes().frames() << " frames):";
    for (const auto& st : gpuTimer_.passes().stats()) out_ << "  " << st.name << " " << st.meanMs;
    out_ << "\n";
    if (ctl_->realtime()) {
      // Simulated time over the measured frames' wall time (their frame times).
      const double simulated = ctl_->sim().syncTime() - simAtWarmup;
      out_ << std::defaultfloat << std::setprecision(3) << "  real time: speed " << ctl_->speed() << "x, reached "
           << (total.frame > 0 ? simulated / (total.frame * 1e-3) : 0.0) << "x real time ("
           << simulated << " simulated s in " << total.frame * 1e-3 << " s); ";
      if (batchRealtimeRecording)
        out_ << "no compute budget (a batch recording)\n";
      else
        out_ << "the compute budget (" << ctl_->pacer().budget() * 1e3 << " ms) capped " << limitedFrames
             << " of " << measured << " frames\n";
    }
  }
  (void)start;
  return recordFailed_ ? 1 : 0;
}

}  // namespace

namespace {
int runApp(const GuiOptions& o, GLFWwindow* w, std::ostream& out, std::ostream& err) {
  try {
    App app(o, w, out, err);
    return app.run();
  } catch (const GuiUsageError& e) {
    err << "eddy: error: " << e.what() << "\n(see 'eddy --help')\n";
    return 2;
  } catch (const Error& e) {
    err << "eddy: error: " << e.what() << '\n';
  } catch (const cl::Error& e) {
    err << "eddy: OpenCL error: " << describe(e) << '\n';
  } catch (const std::exception& e) {
    err << "eddy: error: " << e.what() << '\n';
  }
  return 1;
}

int runOffscreen(const GuiOptions& o, std::ostream& out, std::ostream& err) {
  gInterrupted = 0;
  struct sigaction sa {}, oldInt {}, oldTerm {};
  sa.sa_handler = [](int) { gInterrupted = 1; };
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, &oldInt);
  sigaction(SIGTERM, &sa, &oldTerm);
  int rc = 1;
  try {
    EglContext egl;
    err << "eddy: offscreen, " << egl.description() << '\n';
    rc = runApp(o, nullptr, out, err);
  } catch (const Error& e) {
    err << "eddy: error: " << e.what() << '\n';
  }
  sigaction(SIGINT, &oldInt, nullptr);
  sigaction(SIGTERM, &oldTerm, nullptr);
  return rc;
}
}  // namespace

int runGui(const GuiOptions& o, std::ostream& out, std::ostream& err) {
  if (o.offscreen) return runOffscreen(o, out, err);
  glfwSetErrorCallback([](int code, const char* what) {
    gGlfwError = std::string(what ? what : "") + " (GLFW error " + std::to_string(code) + ")";
  });
  if (!glfwInit()) return kNoDisplay;
  gInterrupted = 0;
  struct sigaction sa {}, oldInt {}, oldTerm {};
  sa.sa_handler = [](int) { gInterrupted = 1; };
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, &oldInt);
  sigaction(SIGTERM, &sa, &oldTerm);
  glfwWindowHint(GLFW_CONTEXT_VERSION_MAJOR, 3);
  glfwWindowHint(GLFW_CONTEXT_VERSION_MINOR, 3);
  glfwWindowHint(GLFW_OPENGL_PROFILE, GLFW_OPENGL_CORE_PROFILE);
  glfwWindowHint(GLFW_OPENGL_FORWARD_COMPAT, GLFW_TRUE);
  glfwWindowHint(GLFW_SCALE_TO_MONITOR, GLFW_TRUE);
  const std::string title = "eddy - " + o.spec.sim + " / " + o.spec.scene;
  GLFWwindow* w = glfwCreateWindow(o.width, o.height, title.c_str(), nullptr, nullptr);
  if (!w) {
    err << "eddy: error: cannot open an OpenGL 3.3 core window: " << gGlfwError << '\n';
    glfwTerminate();
    return 1;
  }
  glfwMakeContextCurrent(w);
  int rc = 1;
  const int version = gladLoadGL(glfwGetProcAddress);
  if (!version || GLAD_VERSION_MAJOR(version) * 10 + GLAD_VERSION_MINOR(version) < 33) {
    err << "eddy: error: OpenGL 3.3 core is needed; the driver offers "
        << (version ? std::to_string(GLAD_VERSION_MAJOR(version)) + "." +
                          std::to_string(GLAD_VERSION_MINOR(version))
                    : std::string("none"))
        << '\n';
  } else {
    rc = runApp(o, w, out, err);
  }
  glfwDestroyWindow(w);
  glfwTerminate();
  sigaction(SIGINT, &oldInt, nullptr);
  sigaction(SIGTERM, &oldTerm, nullptr);
  return rc;
}

}  // namespace eddy
