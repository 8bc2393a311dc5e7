// particle_buffers.hpp: getting particle positions (and one colour field) from
// the simulation's OpenCL buffers into OpenGL vertex buffers, double-buffered:
// while OpenGL draws one slot, the next frame's data goes into the other.
//
// Paths:
//  - HostCopyPersistent: one non-blocking clEnqueueReadBuffer per frame straight
//    into a persistently, coherently mapped GL buffer (GL 4.4 / ARB_buffer_storage);
//    a GL fence guards the slot until OpenGL has finished drawing from it.
//  - HostCopySubData: the same read into a host array, then glBufferSubData.
//  - GLSharing (cl_khr_gl_sharing): the VBOs are OpenCL buffers too
//    (clCreateFromGLBuffer); each frame acquire, device-side copy, release.
//    Synchronisation per the extension: glFinish before the acquire and a wait
//    on the release event before GL draws, both replaced by the implicit
//    synchronisation of cl_khr_gl_event where the device offers it.
//  - External: the VBOs live in memory Vulkan exported and both OpenCL and
//    OpenGL imported (render/external_buffers.hpp); each frame a device-side
//    copy into the slot. Ordered by exported semaphores (OpenCL signals the
//    slot's "ready" after writing, GL waits on it before drawing; GL signals
//    "free" after drawing, OpenCL waits on it before writing the slot again),
//    or by host waits (the slot's release event before GL draws, a GL fence
//    before OpenCL writes), or not at all (ExternalSync::None: the torn-frame
//    test's failing mode).
#pragma once

#include "buffer_path.hpp"
#include "external_buffers.hpp"
#include "gl.hpp"
#include "renderer.hpp"
#include "simulation.hpp"

#include <memory>
#include <string>
#include <vector>

namespace eddy {

class ParticleBuffers {
 public:
  // Needs the current GL context; for GLSharing `ctx` must have been created
  // against it. `clGlEvent`: the device offers cl_khr_gl_event. External
  // needs `external` (on `ctx`, outliving these buffers); its sync() decides
  // the ordering.
  ParticleBuffers(Context& ctx, BufferPath path, bool clGlEvent, ExternalInterop* external = nullptr);
  ~ParticleBuffers();
  ParticleBuffers(const ParticleBuffers&) = delete;
  ParticleBuffers& operator=(const ParticleBuffers&) = delete;

  BufferPath path() const { return path_; }
  size_t capacity() const { return capacity_; }
  // Waits for every pending transfer and draw, then sizes both slots for
  // `capacity` particles. Nothing is drawn until the next upload.
  void reset(size_t capacity);
  // Enqueues this frame's transfer of the positions and colour field `field`
  // (-1: none) into the slot OpenGL is not drawing. Records the "color"
  // kernel and the "transfer pos" / "transfer field" copies in `prof`. Never waits for the simulation's kernels.
  // `fresh`: this frame must draw this upload, not last frame's (the colour
  // field changed: last frame's slot holds the old field's values). Costs
  // one wait for the transfer (and, when sharing, a read-back of the field
  // for the legend's range); used on a user's action only.
  // `current`: this frame draws this upload as well (the state after this
  // frame's steps, which drawSlot() then waits for), without `fresh`'s
  // read-back of the field: a batch capture's frames (the app's --frames
  // with --screenshot / --record), which must show the state they name.
  void upload(Simulation& sim, int field, Profiler& prof, bool fresh = false, bool current = false);
  // The slot to draw this frame: the one uploaded last frame (or this frame's
  // right after a reset, or with upload(..., fresh / current)). Makes sure
  // its transfer is complete.
  ParticleDraw drawSlot();
  // After the draw calls that read the slot (places its fence).
  void afterDraw();

  // Host copies of the slot last drawn (host-copy paths; the sharing path reads
  // the colour field back every few frames). nullptr / 0 when not available.
  const float* hostPositions() const;
  const float* hostColors() const;
  size_t hostCount() const { return drawn_ >= 0 ? slots_[drawn_].count : 0; }
  bool hasColors() const { return drawn_ >= 0 && slots_[drawn_].hasColor; }
  // Host milliseconds spent waiting (fences, transfer events) this frame.
  double waitMs() const { return waitMs_; }
  // External path: host milliseconds spent in the synchronisation calls
  // (semaphore signal/wait, acquire/release, fences) from this frame's
  // upload to its afterDraw.
  double syncMs() const { return syncMs_; }

 private:
  struct Slot {
    GLuint pos = 0, color = 0;
    void* posMap = nullptr;  // persistent mapping
    void* colorMap = nullptr;
    std::vector<float> posHost, colorHost;  // SubData staging / sharing read-back
    cl::BufferGL posCl, colorCl;            // sharing
    std::unique_ptr<ExternalInterop::Buffer> posExt, colorExt;     // external
    std::unique_ptr<ExternalInterop::Semaphore> ready, free;       // external, semaphores
    bool readyPending = false;  // OpenCL signalled `ready`, OpenGL has not waited on it
    bool freePending = false;   // OpenGL signalled `free`, OpenCL has not waited on it
    cl::Event posEvent, colorEvent, releaseEvent, readBackEvent;
    GLsync fence = nullptr;
    size_t count = 0;
    bool hasColor = false, valid = false, needsSubData = false;
  };
  bool onDevice() const { return path_ == BufferPath::GLSharing || path_ == BufferPath::External; }
  const cl::Buffer& colorDevice(Slot& s) const;
  void colorReadBack(Slot& s, size_t n, bool fresh);
  void release();
  void waitFence(Slot& s);
  void waitEvent(const cl::Event& e);

  Context& ctx_;
  BufferPath path_;
  bool clGlEvent_;
  ExternalInterop* ext_;
  size_t capacity_ = 0;
  Slot slots_[2];
  cl::Buffer colorDev_;  // host-copy paths: the colour field on the device
  int write_ = 0;        // slot the next upload writes
  int drawn_ = -1;       // slot drawn this frame
  uint64_t uploads_ = 0;
  std::vector<float> readBack_;  // sharing: last completed colour read-back
  int readBackSlot_ = -1;
  bool drawLatest_ = false;  // drawSlot(): this frame's upload (upload(..., fresh / current))
  double waitMs_ = 0, syncMs_ = 0;
};

}  // namespace eddy
