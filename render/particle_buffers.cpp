#include "particle_buffers.hpp"

#include <chrono>

namespace eddy {

namespace {
using Clock = std::chrono::steady_clock;
double msSince(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}
}  // namespace

ParticleBuffers::ParticleBuffers(Context& ctx, BufferPath path, bool clGlEvent, ExternalInterop* external)
    : ctx_(ctx), path_(path), clGlEvent_(clGlEvent), ext_(external) {
  if (path == BufferPath::HostCopyPersistent && !glHasBufferStorage())
    throw Error("persistent mapping needs OpenGL 4.4 or GL_ARB_buffer_storage");
  if (path == BufferPath::External && !external)
    throw Error("the external buffer path needs its OpenCL/OpenGL/Vulkan set-up");
}

ParticleBuffers::~ParticleBuffers() {
  try {
    release();
  } catch (...) {
    // Teardown: nothing sensible to report any more.
  }
}

void ParticleBuffers::release() {
  try {
    ctx_.queue().finish();
  } catch (const cl::Error&) {
    // A failed kernel is reported by the profiler; teardown goes on.
  }
  glFinish();
  for (Slot& s : slots_) {
    if (s.fence) glDeleteSync(s.fence);
    // OpenCL objects created from GL buffers go before the GL buffers do.
    s.posCl = cl::BufferGL();
    s.colorCl = cl::BufferGL();
    s.posEvent = s.colorEvent = s.releaseEvent = s.readBackEvent = cl::Event();
    // External: the buffers own their GL names (freed OpenCL, OpenGL, Vulkan).
    s.ready.reset();
    s.free.reset();
    if (s.posExt || s.colorExt) s.pos = s.color = 0;
    s.posExt.reset();
    s.colorExt.reset();
    for (GLuint* b : {&s.pos, &s.color}) {
      if (!*b) continue;
      if (path_ == BufferPath::HostCopyPersistent) {
        glBindBuffer(GL_ARRAY_BUFFER, *b);
        glUnmapBuffer(GL_ARRAY_BUFFER);
      }
      glDeleteBuffers(1, b);
      *b = 0;
    }
    s = Slot{};
  }
  glBindBuffer(GL_ARRAY_BUFFER, 0);
  colorDev_ = cl::Buffer();
  readBack_.clear();
  readBackSlot_ = -1;
  drawn_ = -1;
  write_ = 0;
  capacity_ = 0;
}

void ParticleBuffers::reset(size_t capacity) {
  release();
  capacity_ = std::max<size_t>(capacity, 1);
  const GLsizeiptr posBytes = GLsizeiptr(capacity_ * 4 * sizeof(float));
  const GLsizeiptr colorBytes = GLsizeiptr(capacity_ * sizeof(float));
  try {
    if (path_ == BufferPath::External) {
      for (Slot& s : slots_) {
        s.posExt = ext_->makeBuffer(size_t(posBytes));
        s.colorExt = ext_->makeBuffer(size_t(colorBytes));
        s.pos = s.posExt->gl();
        s.color = s.colorExt->gl();
        if (ext_->sync() == ExternalSync::Semaphores) {
          s.ready = ext_->makeSemaphore();
          s.free = ext_->makeSemaphore();
        }
      }
      return;
    }
    for (Slot& s : slots_) {
      glGenBuffers(1, &s.pos);
      glGenBuffers(1, &s.color);
      for (auto [buf, bytes, map] : {std::tuple{s.pos, posBytes, &s.posMap},
                                     std::tuple{s.color, colorBytes, &s.colorMap}}) {
        glBindBuffer(GL_ARRAY_BUFFER, buf);
        if (path_ == BufferPath::HostCopyPersistent) {
          const GLbitfield flags =
              GL_MAP_WRITE_BIT | GL_MAP_READ_BIT | GL_MAP_PERSISTENT_BIT | GL_MAP_COHERENT_BIT;
          glBufferStorage(GL_ARRAY_BUFFER, bytes, nullptr, flags);
          *map = glMapBufferRange(GL_ARRAY_BUFFER, 0, bytes, flags);
          if (!*map) throw Error("mapping a vertex buffer persistently failed");
        } else {
          glBufferData(GL_ARRAY_BUFFER, bytes, nullptr,
                       path_ == BufferPath::GLSharing ? GL_DYNAMIC_DRAW : GL_STREAM_DRAW);
        }
      }
      checkGL("allocating vertex buffers");
      if (path_ == BufferPath::HostCopySubData) {
        s.posHost.resize(capacity_ * 4);
        s.colorHost.resize(capacity_);
      }
    }
    glBindBuffer(GL_ARRAY_BUFFER, 0);
    if (path_ == BufferPath::GLSharing) {
      glFinish();  // the buffers exist on the GL side before OpenCL refers to them
      for (Slot& s : slots_) {
        s.posCl = cl::BufferGL(ctx_.context(), CL_MEM_WRITE_ONLY, s.pos);
        s.colorCl = cl::BufferGL(ctx_.context(), CL_MEM_WRITE_ONLY, s.color);
      }
    } else {
      colorDev_ = cl::Buffer(ctx_.context(), CL_MEM_READ_WRITE, size_t(colorBytes));
    }
  } catch (const cl::Error& e) {
    release();
    throw Error("particle buffers for " + std::to_string(capacity) + " particles: " + describe(e));
  } catch (...) {
    release();
    throw;
  }
}

void ParticleBuffers::waitFence(Slot& s) {
  if (!s.fence) return;
  const auto t0 = Clock::now();
  for (;;) {
    const GLenum r = glClientWaitSync(s.fence, GL_SYNC_FLUSH_COMMANDS_BIT, 1000000000ull);
    if (r == GL_ALREADY_SIGNALED || r == GL_CONDITION_SATISFIED) break;
    if (r == GL_WAIT_FAILED) throw Error("glClientWaitSync failed on a vertex buffer fence");
  }
  glDeleteSync(s.fence);
  s.fence = nullptr;
  waitMs_ += msSince(t0);
}

void ParticleBuffers::waitEvent(const cl::Event& e) {
  if (!e()) return;
  const auto t0 = Clock::now();
  e.wait();
  waitMs_ += msSince(t0);
}

const cl::Buffer& ParticleBuffers::colorDevice(Slot& s) const {
  if (path_ == BufferPath::External) return s.colorExt->cl();
  return s.colorCl;
}

void ParticleBuffers::colorReadBack(Slot& s, size_t n, bool fresh) {
  auto& q = ctx_.queue();
  if (fresh) {
    // A new field: the legend's range needs its values this frame. The
    // read-back of an older field still in flight is of no use now.
    if (readBackSlot_ >= 0) {
      waitEvent(slots_[readBackSlot_].readBackEvent);
      slots_[readBackSlot_].readBackEvent = cl::Event();
      readBackSlot_ = -1;
    }
    readBack_.resize(n);
    const auto t0 = std::chrono::steady_clock::now();
    q.enqueueReadBuffer(colorDevice(s), CL_TRUE, 0, n * sizeof(float), readBack_.data());
    waitMs_ += msSince(t0);
  }
  // Every 16th frame read the field back for the legend's range.
  const bool idle = !s.readBackEvent() && readBackSlot_ < 0;
  if (!fresh && uploads_ % 16 == 0 && idle) {
    s.colorHost.resize(n);
    q.enqueueReadBuffer(colorDevice(s), CL_FALSE, 0, n * sizeof(float), s.colorHost.data(), nullptr,
                        &s.readBackEvent);
    readBackSlot_ = write_;
  }
}

void ParticleBuffers::upload(Simulation& sim, int field, Profiler& prof, bool fresh, bool current) {
  waitMs_ = 0;
  syncMs_ = 0;
  const size_t n = sim.size();
  if (n > capacity_ || capacity_ == 0) reset(std::max(sim.capacity(), n));
  if (field >= int(sim.colorFields().size())) field = -1;
  Slot& s = slots_[write_];
  auto& q = ctx_.queue();
  try {
    if (path_ == BufferPath::GLSharing) {
      // cl_khr_gl_sharing: GL must be done with the objects before the acquire
      // (glFinish), unless cl_khr_gl_event makes the acquire synchronise.
      if (!clGlEvent_) glFinish();
      const std::vector<cl::Memory> objs{s.posCl, s.colorCl};
      q.enqueueAcquireGLObjects(&objs);
      q.enqueueCopyBuffer(sim.positionBuffer(), s.posCl, 0, 0, n * 4 * sizeof(float), nullptr,
                          &s.posEvent);
      prof.record("transfer pos", s.posEvent);
      if (field >= 0) {
        s.colorEvent = sim.writeColorField(size_t(field), s.colorCl);
        prof.record("color", s.colorEvent);
        colorReadBack(s, n, fresh);
      }
      q.enqueueReleaseGLObjects(&objs, nullptr, &s.releaseEvent);
    } else if (path_ == BufferPath::External) {
      const ExternalSync sync = ext_->sync();
      auto t0 = Clock::now();
      if (sync == ExternalSync::HostWait) waitFence(s);  // OpenGL has finished drawing from this slot
      if (sync == ExternalSync::Semaphores) {
        // A slot written but never drawn (a fresh upload drew the other one):
        // OpenCL consumes its own signal, so the next signal is legal.
        if (s.readyPending) ext_->wait(*s.ready);
        // OpenGL signalled `free` after drawing from the slot: wait for it.
        if (s.freePending) ext_->wait(*s.free);
        s.readyPending = s.freePending = false;
      }
      const std::vector<cl_mem> mems{s.posExt->cl()(), s.colorExt->cl()()};
      ext_->acquire(mems);
      syncMs_ += msSince(t0);
      q.enqueueCopyBuffer(sim.positionBuffer(), s.posExt->cl(), 0, 0, n * 4 * sizeof(float), nullptr,
                          &s.posEvent);
      prof.record("transfer pos", s.posEvent);
      if (field >= 0) {
        s.colorEvent = sim.writeColorField(size_t(field), s.colorExt->cl());
        prof.record("color", s.colorEvent);
        colorReadBack(s, n, fresh);
      }
      t0 = Clock::now();
      ext_->release(mems, &s.releaseEvent);
      if (sync == ExternalSync::Semaphores) {
        ext_->signal(*s.ready);
        s.readyPending = true;
      }
      syncMs_ += msSince(t0);
    } else {
      waitFence(s);  // OpenGL has finished drawing from this slot
      const bool mapped = path_ == BufferPath::HostCopyPersistent;
      void* pos = mapped ? s.posMap : s.posHost.data();
      void* color = mapped ? s.colorMap : s.colorHost.data();
      if (field >= 0) {
        cl::Event e = sim.writeColorField(size_t(field), colorDev_);
        prof.record("color", e);
        q.enqueueReadBuffer(colorDev_, CL_FALSE, 0, n * sizeof(float), color, nullptr,
                            &s.colorEvent);
        prof.record("transfer field", s.colorEvent);
      }
      q.enqueueReadBuffer(sim.positionBuffer(), CL_FALSE, 0, n * 4 * sizeof(float), pos, nullptr,
                          &s.posEvent);
      prof.record("transfer pos", s.posEvent);
      s.needsSubData = !mapped;
    }
    q.flush();
  } catch (const cl::Error& e) {
    throw Error("transferring particles to OpenGL: " + describe(e));
  }
  s.count = n;
  s.hasColor = field >= 0;
  s.valid = true;
  drawLatest_ = fresh || current;
  ++uploads_;
  write_ ^= 1;
}

ParticleDraw ParticleBuffers::drawSlot() {
  // The slot uploaded last frame, or, right after a reset or a fresh or
  // current upload, this frame's.
  const int r = slots_[write_].valid && !drawLatest_ ? write_ : 1 - write_;
  drawLatest_ = false;
  Slot& s = slots_[r];
  drawn_ = -1;
  if (!s.valid) return {};
  if (onDevice()) {
    if (path_ == BufferPath::GLSharing && !clGlEvent_) waitEvent(s.releaseEvent);  // OpenCL done before GL reads
    if (path_ == BufferPath::External) {
      const auto t0 = Clock::now();
      if (ext_->sync() == ExternalSync::Semaphores && s.readyPending) {
        ext_->glWait(*s.ready, {s.pos, s.color});  // the GPU waits for OpenCL's writes
        s.readyPending = false;
      } else if (ext_->sync() == ExternalSync::HostWait) {
        waitEvent(s.releaseEvent);  // OpenCL done before GL reads
      }
      syncMs_ += msSince(t0);
    }
    if (readBackSlot_ >= 0) {
      Slot& rb = slots_[readBackSlot_];
      if (rb.readBackEvent() &&
          rb.readBackEvent.getInfo<CL_EVENT_COMMAND_EXECUTION_STATUS>() == CL_COMPLETE) {
        readBack_.swap(rb.colorHost);
        rb.readBackEvent = cl::Event();
        readBackSlot_ = -1;
      }
    }
  } else {
    waitEvent(s.posEvent);
    if (s.hasColor) waitEvent(s.colorEvent);
    if (s.needsSubData) {
      glBindBuffer(GL_ARRAY_BUFFER, s.pos);
      glBufferSubData(GL_ARRAY_BUFFER, 0, GLsizeiptr(s.count * 4 * sizeof(float)), s.posHost.data());
      if (s.hasColor) {
        glBindBuffer(GL_ARRAY_BUFFER, s.color);
        glBufferSubData(GL_ARRAY_BUFFER, 0, GLsizeiptr(s.count * sizeof(float)), s.colorHost.data());
      }
      glBindBuffer(GL_ARRAY_BUFFER, 0);
      s.needsSubData = false;
    }
  }
  drawn_ = r;
  ParticleDraw d;
  d.posVbo = s.pos;
  d.colorVbo = s.hasColor ? s.color : 0;
  d.count = s.count;
  return d;
}

void ParticleBuffers::afterDraw() {
  if (drawn_ < 0) return;
  Slot& s = slots_[drawn_];
  if (path_ == BufferPath::External && ext_->sync() == ExternalSync::Semaphores) {
    const auto t0 = Clock::now();
    // Drawn again before OpenCL took the last `free` (it was drawn twice):
    // OpenGL consumes its own signal first, so the new one is legal.
    if (s.freePending) ext_->glWait(*s.free, {});
    ext_->glSignal(*s.free, {s.pos, s.color});
    glFlush();  // the signal reaches the GPU before OpenCL's wait is submitted
    s.freePending = true;
    syncMs_ += msSince(t0);
    return;
  }
  const bool fence = path_ == BufferPath::HostCopyPersistent ||
                     (path_ == BufferPath::External && ext_->sync() == ExternalSync::HostWait);
  if (!fence) return;
  if (s.fence) glDeleteSync(s.fence);
  s.fence = glFenceSync(GL_SYNC_GPU_COMMANDS_COMPLETE, 0);
}

const float* ParticleBuffers::hostPositions() const {
  if (drawn_ < 0) return nullptr;
  const Slot& s = slots_[drawn_];
  if (path_ == BufferPath::HostCopyPersistent) return static_cast<const float*>(s.posMap);
  if (path_ == BufferPath::HostCopySubData) return s.posHost.data();
  return nullptr;
}

const float* ParticleBuffers::hostColors() const {
  if (drawn_ < 0 || !slots_[drawn_].hasColor) return nullptr;
  const Slot& s = slots_[drawn_];
  if (path_ == BufferPath::HostCopyPersistent) return static_cast<const float*>(s.colorMap);
  if (path_ == BufferPath::HostCopySubData) return s.colorHost.data();
  return readBack_.size() >= s.count && !readBack_.empty() ? readBack_.data() : nullptr;
}

}  // namespace eddy
