// The buffer-path choice and the cl_khr_gl_sharing setup, as far as they go
// without a device that offers sharing (PoCL does not): the decision table,
// the context properties, and the fallback to a host copy.
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
  return d;
}

TEST(GlSharing, ExtensionTokensMatchWholeWords) {
  const std::string list = "cl_khr_fp64 cl_khr_gl_sharing_ext  cl_khr_gl_event\tcl_khr_icd";
  EXPECT_TRUE(hasExtensionToken(list, "cl_khr_gl_event"));
  EXPECT_TRUE(hasExtensionToken(list, "cl_khr_icd"));
  EXPECT_FALSE(hasExtensionToken(list, "cl_khr_gl_sharing")) << "a prefix is not a match";
  EXPECT_FALSE(hasExtensionToken("", "cl_khr_gl_sharing"));
}

TEST(GlSharing, DecisionTable) {
  const DeviceInfo yes = fakeDevice(true), no = fakeDevice(false);
  const std::string ev = "cl_khr_gl_sharing cl_khr_gl_event", noev = "cl_khr_gl_sharing";

  PathChoice c = choosePath(true, yes, ev, true, true);
  EXPECT_EQ(c.path, BufferPath::GLSharing);
  EXPECT_TRUE(c.clGlEvent);
  c = choosePath(true, yes, noev, true, true);
  EXPECT_EQ(c.path, BufferPath::GLSharing);
  EXPECT_FALSE(c.clGlEvent) << "without cl_khr_gl_event: glFinish / event waits";

  c = choosePath(false, yes, ev, true, true);  // --no-gl-sharing
  EXPECT_EQ(c.path, BufferPath::HostCopyPersistent);
  EXPECT_NE(c.reason.find("--no-gl-sharing"), std::string::npos);
  c = choosePath(true, no, "", true, true);
  EXPECT_EQ(c.path, BufferPath::HostCopyPersistent);
  EXPECT_NE(c.reason.find("cl_khr_gl_sharing"), std::string::npos);
  c = choosePath(true, yes, ev, false, true);  // no GLX context (e.g. Wayland)
  EXPECT_EQ(c.path, BufferPath::HostCopyPersistent);
  EXPECT_NE(c.reason.find("GLX"), std::string::npos);
  c = choosePath(true, no, "", true, false);  // GL 3.3 without buffer storage
  EXPECT_EQ(c.path, BufferPath::HostCopySubData);
  c = choosePath(true, no, "", true, true, false);  // --no-persistent-map
  EXPECT_EQ(c.path, BufferPath::HostCopySubData);
  EXPECT_NE(c.reason.find("switched off"), std::string::npos);

  // The real PoCL device: a host copy, and the panel says why.
  c = choosePath(true, test::context().info(), "", true, true);
  EXPECT_EQ(c.path, BufferPath::HostCopyPersistent);
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
  const DeviceInfo dev = fakeDevice(true);
  PathChoice want = choosePath(true, dev, "cl_khr_gl_sharing", true, true);
  ASSERT_EQ(want.path, BufferPath::GLSharing);
  int notAContext = 0, notADisplay = 0;
  OpenedContext o = openContext(dev, want, &notAContext, &notADisplay, true);
  ASSERT_TRUE(o.ctx);
  EXPECT_EQ(o.choice.path, BufferPath::HostCopyPersistent);
  EXPECT_FALSE(o.choice.clGlEvent);
  EXPECT_NE(o.choice.reason.find("GL sharing unavailable"), std::string::npos) << o.choice.reason;
  // The fallback context works: a simulation runs on it.
  Params params(nbodyParamDecl());
  NBodySim sim(*o.ctx, params, makeNBodyScene("plummer", 33, 1));
  sim.step();
  EXPECT_EQ(sim.readPositions().size(), 33u);

  // Without buffer storage the fallback is glBufferSubData.
  o = openContext(dev, want, &notAContext, &notADisplay, false);
  EXPECT_EQ(o.choice.path, BufferPath::HostCopySubData);
}

TEST(GlSharing, HostCopyChoiceOpensAPlainContext) {
  PathChoice c = choosePath(true, test::context().info(), "", false, true);
  OpenedContext o = openContext(test::context().info(), c, nullptr, nullptr, true);
  ASSERT_TRUE(o.ctx);
  EXPECT_EQ(o.choice.path, BufferPath::HostCopyPersistent);
  EXPECT_EQ(o.ctx->info().name, test::context().info().name);
}

}  // namespace
