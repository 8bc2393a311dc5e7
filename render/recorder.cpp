#include "recorder.hpp"

#include "cl.hpp"  // eddy::Error
#include "screenshot.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

namespace eddy {

namespace {
constexpr size_t kQueueFrames = 8;  // frames waiting for the writer at most
}

Recorder::Recorder(const RecordOptions& o) : o_(o) {
  if (o_.every == 0) o_.every = 1;
  video_ = isVideoTarget(o_.target);
  if (video_) {
    if (findOnPath("ffmpeg").empty())
      throw Error("recording to '" + o_.target + "' needs ffmpeg, which is not on PATH "
                  "(Debian: apt install ffmpeg); record PNG frames to a directory instead");
  } else {
    std::error_code ec;
    std::filesystem::create_directories(o_.target, ec);
    if (ec || !std::filesystem::is_directory(o_.target))
      throw Error("cannot record into directory '" + o_.target + "': " +
                  (ec ? ec.message() : std::string("not a directory")));
    checkWritable(framePath(o_.target, 0));
  }
  start_ = std::chrono::steady_clock::now();
  writer_ = std::thread([this] { writerLoop(); });
}

Recorder::~Recorder() {
  try {
    finish();
  } catch (const std::exception&) {
    // already reported by the caller's finish(), or nothing to report to
  }
}

double Recorder::elapsedSeconds() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
}

void Recorder::frame(int w, int h) {
  if (finished_) return;
  {
    std::lock_guard<std::mutex> lock(m_);
    if (!error_.empty()) throw Error(error_);
  }
  if (calls_++ % o_.every != 0) return;
  if (!pbo_[0]) glGenBuffers(2, pbo_);
  const int slot = int(captured_ % 2);
  if (pending_[slot].busy) readBack(slot);  // the capture before the previous one
  const size_t bytes = size_t(w) * size_t(h) * 3;
  glBindBuffer(GL_PIXEL_PACK_BUFFER, pbo_[slot]);
  if (pboBytes_[slot] != bytes) {
    glBufferData(GL_PIXEL_PACK_BUFFER, GLsizeiptr(bytes), nullptr, GL_STREAM_READ);
    pboBytes_[slot] = bytes;
  }
  glPixelStorei(GL_PACK_ALIGNMENT, 1);
  glReadPixels(0, 0, w, h, GL_RGB, GL_UNSIGNED_BYTE, nullptr);
  glBindBuffer(GL_PIXEL_PACK_BUFFER, 0);
  checkGL("recording: reading the frame");
  pending_[slot] = {true, captured_, w, h};
  ++captured_;
}

void Recorder::readBack(int slot) {
  Pending& p = pending_[slot];
  Frame f;
  f.index = p.index;
  f.w = p.w;
  f.h = p.h;
  f.rgb.resize(size_t(p.w) * size_t(p.h) * 3);
  glBindBuffer(GL_PIXEL_PACK_BUFFER, pbo_[slot]);
  const void* src = glMapBufferRange(GL_PIXEL_PACK_BUFFER, 0, GLsizeiptr(f.rgb.size()), GL_MAP_READ_BIT);
  if (src) std::memcpy(f.rgb.data(), src, f.rgb.size());
  glUnmapBuffer(GL_PIXEL_PACK_BUFFER);
  glBindBuffer(GL_PIXEL_PACK_BUFFER, 0);
  p.busy = false;
  if (!src) throw Error("recording: mapping the pixel buffer failed");
  push(std::move(f));
}

void Recorder::push(Frame&& f) {
  std::unique_lock<std::mutex> lock(m_);
  notFull_.wait(lock, [&] { return queue_.size() < kQueueFrames || !error_.empty(); });
  if (!error_.empty()) throw Error(error_);
  queue_.push_back(std::move(f));
  notEmpty_.notify_one();
}

void Recorder::finish() {
  if (finished_) return;
  finished_ = true;
  std::string failure;
  try {
    // Older capture first, so the files stay in order.
    int first = pending_[0].busy && pending_[1].busy ? (pending_[0].index < pending_[1].index ? 0 : 1) : 0;
    for (int k = 0; k < 2; ++k)
      if (pending_[(first + k) % 2].busy) readBack((first + k) % 2);
  } catch (const Error& e) {
    failure = e.what();
  }
  if (pbo_[0]) {
    glDeleteBuffers(2, pbo_);
    pbo_[0] = pbo_[1] = 0;
  }
  {
    std::lock_guard<std::mutex> lock(m_);
    closing_ = true;
    notEmpty_.notify_all();
  }
  if (writer_.joinable()) writer_.join();
  std::lock_guard<std::mutex> lock(m_);
  if (!error_.empty()) throw Error(error_);
  if (!failure.empty()) throw Error(failure);
}

void Recorder::writerLoop() {
  for (;;) {
    Frame f;
    {
      std::unique_lock<std::mutex> lock(m_);
      notEmpty_.wait(lock, [&] { return !queue_.empty() || closing_; });
      if (queue_.empty()) break;
      f = std::move(queue_.front());
      queue_.pop_front();
      notFull_.notify_one();
      if (!error_.empty()) continue;  // after a failure: drain without writing
    }
    try {
      write(f);
      ++written_;
    } catch (const std::exception& e) {
      std::lock_guard<std::mutex> lock(m_);
      if (error_.empty()) error_ = e.what();
      notFull_.notify_all();
    }
  }
  try {
    stopFfmpeg();
  } catch (const std::exception& e) {
    std::lock_guard<std::mutex> lock(m_);
    if (error_.empty()) error_ = e.what();
  }
}

void Recorder::write(Frame& f) {
  if (!video_) {
    std::vector<unsigned char> flipped(f.rgb.size());  // OpenGL rows run bottom-up; PNG's top-down
    const size_t row = size_t(f.w) * 3;
    for (int y = 0; y < f.h; ++y)
      std::memcpy(&flipped[size_t(y) * row], &f.rgb[size_t(f.h - 1 - y) * row], row);
    writePng(framePath(o_.target, f.index), f.w, f.h, flipped.data());
    return;
  }
  if (ffmpeg_ < 0) startFfmpeg(f.w, f.h);
  if (f.w != videoW_ || f.h != videoH_)
    throw Error("recording '" + o_.target + "': the window size changed from " +
                std::to_string(videoW_) + "x" + std::to_string(videoH_) + " to " +
                std::to_string(f.w) + "x" + std::to_string(f.h) + "; the video stops at frame " +
                std::to_string(f.index));
  const unsigned char* p = f.rgb.data();
  size_t left = f.rgb.size();
  while (left > 0) {
    const ssize_t n = ::write(pipe_, p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw Error("recording '" + o_.target + "': ffmpeg stopped reading (" + std::strerror(errno) + ")");
    p += n;
    left -= size_t(n);
  }
}

void Recorder::startFfmpeg(int w, int h) {
  // Raw RGB frames on stdin, bottom-up (vflip); yuv420p needs even sizes (pad).
  const std::string size = std::to_string(w) + "x" + std::to_string(h);
  char fps[32];
  std::snprintf(fps, sizeof fps, "%g", o_.fps);
  const std::vector<std::string> args = {
      "ffmpeg", "-hide_banner", "-loglevel", "error", "-y", "-f", "rawvideo", "-pixel_format",
      "rgb24", "-video_size", size, "-framerate", fps, "-i", "-", "-vf",
      "vflip,pad=ceil(iw/2)*2:ceil(ih/2)*2", "-pix_fmt", "yuv420p", o_.target};
  int fds[2];
  if (::pipe(fds) != 0) throw Error(std::string("recording: pipe() failed: ") + std::strerror(errno));
  // A write to a pipe whose reader died must fail with EPIPE, not kill the app.
  ::signal(SIGPIPE, SIG_IGN);
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(fds[0], 0);
    ::close(fds[0]);
    ::close(fds[1]);
    ::setpgid(0, 0);  // Ctrl-C in the terminal goes to the app, which then closes the pipe
    std::vector<char*> argv;
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    ::execvp("ffmpeg", argv.data());
    _exit(127);
  }
  ::close(fds[0]);
  if (pid < 0) {
    ::close(fds[1]);
    throw Error(std::string("recording: fork() failed: ") + std::strerror(errno));
  }
  ffmpeg_ = pid;
  pipe_ = fds[1];
  videoW_ = w;
  videoH_ = h;
}

void Recorder::stopFfmpeg() {
  if (ffmpeg_ < 0) return;
  ::close(pipe_);
  pipe_ = -1;
  int status = 0;
  while (::waitpid(ffmpeg_, &status, 0) < 0 && errno == EINTR) {
  }
  ffmpeg_ = -1;
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    throw Error("ffmpeg failed writing '" + o_.target + "' (exit status " +
                std::to_string(WIFEXITED(status) ? WEXITSTATUS(status) : -1) + ")");
}

}  // namespace eddy
