// The buffer-path choice (issue 15: gl_sharing -> external -> host copy) and
// the cl_khr_gl_sharing setup, as far as they go without a GPU: the decision
// for every combination of offered and missing pieces, the forced paths, the
// context properties, and the fallbacks when a set-up fails.
#include "gl_sharing.hpp"
#include "nbody.hpp"
#include "test_util.hpp"

#include <CL/cl_gl.h>
#include <gtest/gtest.h>

using namespace eddy;

namespace {

DeviceInfo fakeDevice(bool sharing) {
  DeviceInfo d = test::context().info();
  d.glSharing = sharing;
  d.name = "TestGPU";
  return d;
}

PathRequest request(BufferPathRequest path = BufferPathRequest::Auto, bool sharingAllowed = true,
                    bool persistentAllowed = true) {
  PathRequest r;
  r.path = path;
  r.sharingAllowed = sharingAllowed;
  r.persistentAllowed = persistentAllowed;
  r.externalSync = ExternalSync::Semaphores;  // semaphores where offered (EDDY_EXTERNAL_SYNC=semaphore)
  return r;
}

PathFacts sharingFacts(bool offered, const std::string& ext, bool glx, bool storage) {
  PathFacts f;
  f.device = fakeDevice(offered);
  f.deviceExtensions = ext;
  f.haveGlxContext = glx;
  f.glBufferStorage = storage;
  return f;
}

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

TEST(GlSharing, ExtensionTokensMatchWholeWords) {
  const std::string list = "cl_khr_fp64 cl_khr_gl_sharing_ext  cl_khr_gl_event\tcl_khr_icd";
  EXPECT_TRUE(hasExtensionToken(list, "cl_khr_gl_event"));
  EXPECT_TRUE(hasExtensionToken(list, "cl_khr_icd"));
  EXPECT_FALSE(hasExtensionToken(list, "cl_khr_gl_sharing")) << "a prefix is not a match";
  EXPECT_FALSE(hasExtensionToken("", "cl_khr_gl_sharing"));
}

TEST(GlSharing, DecisionTable) {
  const std::string ev = "cl_khr_gl_sharing cl_khr_gl_event", noev = "cl_khr_gl_sharing";

  PathChoice c = choosePath(request(), sharingFacts(true, ev, true, true));
  EXPECT_EQ(c.path, BufferPath::GLSharing);
  EXPECT_TRUE(c.clGlEvent);
  EXPECT_TRUE(c.notTaken.empty()) << "the first choice: nothing else was considered";
  c = choosePath(request(), sharingFacts(true, noev, true, true));
  EXPECT_EQ(c.path, BufferPath::GLSharing);
  EXPECT_FALSE(c.clGlEvent) << "without cl_khr_gl_event: glFinish / event waits";

  c = choosePath(request(BufferPathRequest::Auto, false), sharingFacts(true, ev, true, true));
  EXPECT_EQ(c.path, BufferPath::HostCopyPersistent);
  EXPECT_TRUE(contains(c.summary(), "--no-gl-sharing")) << c.summary();
  c = choosePath(request(), sharingFacts(false, "", true, true));
  EXPECT_EQ(c.path, BufferPath::HostCopyPersistent);
  EXPECT_TRUE(contains(c.summary(), "cl_khr_gl_sharing")) << c.summary();
  c = choosePath(request(), sharingFacts(true, ev, false, true));  // no GLX context (e.g. Wayland, EGL)
  EXPECT_EQ(c.path, BufferPath::HostCopyPersistent);
  EXPECT_TRUE(contains(c.summary(), "GLX")) << c.summary();
  c = choosePath(request(), sharingFacts(false, "", true, false));  // GL 3.3 without buffer storage
  EXPECT_EQ(c.path, BufferPath::HostCopySubData);
  c = choosePath(request(BufferPathRequest::Auto, true, false), sharingFacts(false, "", true, true));
  EXPECT_EQ(c.path, BufferPath::HostCopySubData);  // --no-persistent-map
  EXPECT_TRUE(contains(c.summary(), "switched off")) << c.summary();
  // The external path was not probed: the host copy says so.
  EXPECT_TRUE(contains(c.summary(), "external: not probed")) << c.summary();

  // The real PoCL device: a host copy, and the panel says why.
  PathFacts real;
  real.device = test::context().info();
  real.glBufferStorage = true;
  c = choosePath(request(), real);
  EXPECT_EQ(c.path, BufferPath::HostCopyPersistent);
  EXPECT_TRUE(c.error.empty());
}

// ---- every combination of offered and missing pieces ----

enum Piece {
  // cl_khr_gl_sharing
  SharingAllowed, DeviceSharing, Glx,
  // host copy
  BufferStorage, PersistentAllowed,
  // external memory, in the order the choice checks them
  ClMemory, Cl30, ClUuid, GlMemory, VulkanLoader, VulkanMatch, VulkanMemoryFd, GlUuidMatch, DriverMatch,
  // semaphores
  ClSemaphore, GlSemaphore, VulkanSemaphore,
  PieceCount
};

// What the reason must say when this piece is the first one missing.
const char* externalWords(int p) {
  switch (p) {
    case ClMemory: return "cl_khr_external_memory_opaque_fd";
    case Cl30: return "OpenCL 3.0";
    case ClUuid: return "cl_khr_device_uuid";
    case GlMemory: return "GL_EXT_memory_object_fd";
    case VulkanLoader: return "Vulkan: no loader here";
    case VulkanMatch: return "no Vulkan device has the UUID";
    case VulkanMemoryFd: return "cannot export vertex buffers";
    case GlUuidMatch: return "OpenGL context is not on";
    case DriverMatch: return "different drivers";
    case ClSemaphore: return "cl_khr_external_semaphore_opaque_fd";
    case GlSemaphore: return "GL_EXT_semaphore_fd";
    case VulkanSemaphore: return "cannot export semaphores";
  }
  return "?";
}

PathFacts factsFor(unsigned bits) {
  auto has = [&](Piece p) { return (bits >> p) & 1u; };
  const Uuid gpu{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
  const Uuid otherGpu{99, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
  const Uuid driver{7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7};
  const Uuid otherDriver{8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8};
  PathFacts f = sharingFacts(has(DeviceSharing), "cl_khr_gl_sharing", has(Glx), has(BufferStorage));
  ExternalFacts& e = f.external;
  e.probed = true;
  e.clMemory = has(ClMemory);
  e.clCreateWithProperties = has(Cl30);
  e.clPlatformVersion = has(Cl30) ? "OpenCL 3.0 test" : "OpenCL 1.2 test";
  e.clUuid = has(ClUuid);
  e.clDeviceUuid = has(ClUuid) ? gpu : Uuid{};
  e.clSemaphore = has(ClSemaphore);
  e.glMemory = has(GlMemory);
  e.glSemaphore = has(GlSemaphore);
  e.glDeviceUuids = {otherGpu};
  if (has(GlUuidMatch)) e.glDeviceUuids.push_back(gpu);
  e.glDriverUuid = driver;
  if (!has(VulkanLoader)) {
    e.vulkanProblem = "no loader here";
  } else {
    e.vulkanDevices.push_back({"other GPU", otherGpu, driver, true, true});
    if (has(VulkanMatch))
      e.vulkanDevices.push_back({"TestGPU (Vulkan)", gpu, has(DriverMatch) ? driver : otherDriver,
                                 bool(has(VulkanMemoryFd)), bool(has(VulkanSemaphore))});
  }
  return f;
}

TEST(BufferPathChoice, EveryCombinationOfOfferedAndMissingPieces) {
  const BufferPathRequest requests[] = {BufferPathRequest::Auto, BufferPathRequest::GLSharing,
                                        BufferPathRequest::External, BufferPathRequest::Host};
  const char* requestNames[] = {"auto", "gl_sharing", "external", "host"};
  size_t checked = 0, external = 0, semaphores = 0, sharing = 0, host = 0, errors = 0;
  for (int ri = 0; ri < 4; ++ri) {
    for (unsigned bits = 0; bits < (1u << PieceCount); ++bits) {
      auto has = [&](int p) { return ((bits >> p) & 1u) != 0; };
      const PathRequest r = request(requests[ri], has(SharingAllowed), has(PersistentAllowed));
      const PathChoice c = choosePath(r, factsFor(bits));
      const BufferPathRequest want = requests[ri];
      // The oracle, written out piece by piece.
      const bool sharingOk = (want == BufferPathRequest::Auto || want == BufferPathRequest::GLSharing) &&
                             has(SharingAllowed) && has(DeviceSharing) && has(Glx);
      int firstMissing = -1;
      for (int p = ClMemory; p <= DriverMatch && firstMissing < 0; ++p)
        if (!has(p)) firstMissing = p;  // the first missing piece, in the documented order
      const bool externalOk = (want == BufferPathRequest::Auto || want == BufferPathRequest::External) &&
                              firstMissing < 0;
      const bool storage = has(BufferStorage) && has(PersistentAllowed);
      const BufferPath expected = sharingOk    ? BufferPath::GLSharing
                                  : externalOk ? BufferPath::External
                                  : storage    ? BufferPath::HostCopyPersistent
                                               : BufferPath::HostCopySubData;
      const bool expectError = (want == BufferPathRequest::GLSharing && !sharingOk) ||
                               (want == BufferPathRequest::External && !externalOk);
      const std::string where = std::string("request ") + requestNames[ri] + ", pieces " + std::to_string(bits) +
                                ": " + c.summary();
      ASSERT_EQ(c.path, expected) << where;
      ASSERT_EQ(!c.error.empty(), expectError) << where << " / error: " << c.error;
      if (expectError) {
        ASSERT_TRUE(contains(c.error, std::string("--buffer-path ") + requestNames[ri] + " is not possible"))
            << c.error;
      }
      const bool externalConsidered = want == BufferPathRequest::Auto || want == BufferPathRequest::External;
      if (expected != BufferPath::GLSharing && want != BufferPathRequest::Host) {
        ASSERT_TRUE(contains(c.summary(), "gl_sharing: ")) << where;
      }
      if (expected != BufferPath::GLSharing && expected != BufferPath::External && externalConsidered) {
        ASSERT_GE(firstMissing, 0) << where;
        ASSERT_TRUE(contains(c.summary(), "external: ")) << where;
        ASSERT_TRUE(contains(c.summary(), externalWords(firstMissing))) << where;
        if (expectError) {
          ASSERT_TRUE(contains(c.error, externalWords(firstMissing))) << c.error;
        }
      }
      if (expected == BufferPath::External) {
        ++external;
        const bool sem = has(ClSemaphore) && has(GlSemaphore) && has(VulkanSemaphore);
        ASSERT_EQ(c.sync, sem ? ExternalSync::Semaphores : ExternalSync::HostWait) << where;
        if (sem) {
          ++semaphores;
          ASSERT_TRUE(contains(c.reason, "exported semaphores")) << where;
        } else {
          const int missing = !has(ClSemaphore) ? ClSemaphore : !has(GlSemaphore) ? GlSemaphore : VulkanSemaphore;
          ASSERT_TRUE(contains(c.reason, "host waits")) << where;
          ASSERT_TRUE(contains(c.reason, externalWords(missing))) << where;
        }
        const Uuid gpu{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
        ASSERT_EQ(c.externalDevice, gpu) << "the device all three APIs share, not the other GPU";
        ASSERT_EQ(c.vulkanDevice, "TestGPU (Vulkan)");
      }
      sharing += expected == BufferPath::GLSharing;
      host += expected == BufferPath::HostCopyPersistent || expected == BufferPath::HostCopySubData;
      errors += expectError;
      ++checked;
    }
  }
  EXPECT_EQ(checked, 4u << PieceCount);
  // Every outcome occurs (the enumeration is not vacuous).
  EXPECT_GT(external, 0u);
  EXPECT_GT(semaphores, 0u);
  EXPECT_GT(external, semaphores) << "host waits occur too";
  EXPECT_GT(sharing, 0u);
  EXPECT_GT(host, 0u);
  EXPECT_GT(errors, 0u);
}

TEST(BufferPathChoice, ForcedPathsAndSyncModes) {
  const unsigned all = (1u << PieceCount) - 1;
  const unsigned noSharing = all & ~(1u << DeviceSharing);
  // Automatic: sharing first, then external.
  EXPECT_EQ(choosePath(request(), factsFor(all)).path, BufferPath::GLSharing);
  PathChoice c = choosePath(request(), factsFor(noSharing));
  EXPECT_EQ(c.path, BufferPath::External);
  EXPECT_EQ(c.summary(), c.reason + "; not taken: gl_sharing: TestGPU does not offer cl_khr_gl_sharing");
  // Forced external beats sharing; forced host beats both.
  c = choosePath(request(BufferPathRequest::External), factsFor(all));
  EXPECT_EQ(c.path, BufferPath::External);
  EXPECT_TRUE(contains(c.summary(), "gl_sharing: not asked for (--buffer-path external)")) << c.summary();
  c = choosePath(request(BufferPathRequest::Host), factsFor(all));
  EXPECT_EQ(c.path, BufferPath::HostCopyPersistent);
  EXPECT_TRUE(c.notTaken.empty()) << c.summary();
  EXPECT_TRUE(contains(c.reason, "--buffer-path host")) << c.reason;
  // The default request (the app without EDDY_EXTERNAL_SYNC) waits on the
  // host even where semaphores are offered, and says how to get them;
  // EDDY_EXTERNAL_SYNC=none switches ordering off.
  c = choosePath(PathRequest{}, factsFor(noSharing));
  EXPECT_EQ(c.path, BufferPath::External);
  EXPECT_EQ(c.sync, ExternalSync::HostWait);
  EXPECT_TRUE(contains(c.reason, "EDDY_EXTERNAL_SYNC=semaphore")) << c.reason;
  PathRequest r = request();
  r.externalSync = ExternalSync::None;
  c = choosePath(r, factsFor(noSharing));
  EXPECT_EQ(c.sync, ExternalSync::None);
  // A failed sharing set-up falls through to external; a failed external
  // set-up to the host copy; forced, each is an error naming the failure.
  PathFacts f = factsFor(all);
  f.sharingFailure = "clGetGLContextInfoKHR said no";
  c = choosePath(request(), f);
  EXPECT_EQ(c.path, BufferPath::External);
  EXPECT_TRUE(contains(c.summary(), "GL sharing unavailable (clGetGLContextInfoKHR said no)")) << c.summary();
  f.externalFailure = "the self-test read other bytes";
  c = choosePath(request(), f);
  EXPECT_EQ(c.path, BufferPath::HostCopyPersistent);
  EXPECT_TRUE(contains(c.summary(), "external: set-up failed (the self-test read other bytes)")) << c.summary();
  c = choosePath(request(BufferPathRequest::External), f);
  EXPECT_EQ(c.error, "--buffer-path external is not possible: set-up failed (the self-test read other bytes)");
  c = choosePath(request(BufferPathRequest::GLSharing), f);
  EXPECT_TRUE(contains(c.error, "--buffer-path gl_sharing is not possible: GL sharing unavailable")) << c.error;
  // Not probed (a machine where nobody looked) is not possible either.
  f = factsFor(noSharing);
  f.external.probed = false;
  c = choosePath(request(BufferPathRequest::External), f);
  EXPECT_EQ(c.error, "--buffer-path external is not possible: not probed");
}

TEST(BufferPathChoice, UuidText) {
  const Uuid u{0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88, 0x99, 0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xff};
  EXPECT_EQ(uuidText(u), "00112233-4455-6677-8899-aabbccddeeff");
}

TEST(GlSharing, GlxContextProperties) {
  int a = 0, b = 0;
  const auto p = glxSharingProperties(&a, &b);
  ASSERT_EQ(p.size(), 4u) << "pairs only: Context adds CL_CONTEXT_PLATFORM and the 0";
  EXPECT_EQ(p[0], cl_context_properties(CL_GL_CONTEXT_KHR));
  EXPECT_EQ(p[1], reinterpret_cast<cl_context_properties>(&a));
  EXPECT_EQ(p[2], cl_context_properties(CL_GLX_DISPLAY_KHR));
  EXPECT_EQ(p[3], reinterpret_cast<cl_context_properties>(&b));
}

TEST(GlSharing, FallsBackToAHostCopyWhenSharingCannotBeSetUp) {
  // Pretend the device offered sharing: the setup must find out that it
  // cannot (PoCL has no clGetGLContextInfoKHR / the handles are not a GL
  // context) and fall back to a working plain context, saying why.
  PathFacts f = sharingFacts(true, "cl_khr_gl_sharing", true, true);
  f.device = test::context().info();
  f.device.glSharing = true;
  PathChoice want = choosePath(request(), f);
  ASSERT_EQ(want.path, BufferPath::GLSharing);
  int notAContext = 0, notADisplay = 0;
  OpenedContext o = openContext(request(), f, want, &notAContext, &notADisplay);
  ASSERT_TRUE(o.ctx);
  EXPECT_EQ(o.choice.path, BufferPath::HostCopyPersistent);
  EXPECT_FALSE(o.choice.clGlEvent);
  EXPECT_TRUE(contains(o.choice.summary(), "GL sharing unavailable")) << o.choice.summary();
  EXPECT_FALSE(f.sharingFailure.empty()) << "the facts remember the failure for the next choice";
  // The fallback context works: a simulation runs on it.
  Params params(nbodyParamDecl());
  NBodySim sim(*o.ctx, params, makeNBodyScene("plummer", 33, 1));
  sim.step();
  EXPECT_EQ(sim.readPositions().size(), 33u);

  // Without buffer storage the fallback is glBufferSubData.
  f.sharingFailure.clear();
  f.glBufferStorage = false;
  o = openContext(request(), f, want, &notAContext, &notADisplay);
  EXPECT_EQ(o.choice.path, BufferPath::HostCopySubData);
  // Forced sharing that fails is an error, not a silent host copy.
  f.sharingFailure.clear();
  EXPECT_THROW(openContext(request(BufferPathRequest::GLSharing), f, want, &notAContext, &notADisplay), Error);
}

TEST(GlSharing, HostCopyChoiceOpensAPlainContext) {
  PathFacts f;
  f.device = test::context().info();
  f.glBufferStorage = true;
  const PathChoice c = choosePath(request(), f);
  OpenedContext o = openContext(request(), f, c, nullptr, nullptr);
  ASSERT_TRUE(o.ctx);
  EXPECT_EQ(o.choice.path, BufferPath::HostCopyPersistent);
  EXPECT_EQ(o.ctx->info().name, test::context().info().name);
}

}  // namespace
