// recorder.hpp: records the frames the app draws, to numbered PNG files or,
// through an `ffmpeg` child process, to a video file.
//
// The render thread only starts an asynchronous read of the frame into a
// pixel buffer object (glReadPixels into a PBO) and, one capture later, maps
// that PBO and hands the pixels to a writer thread through a bounded queue.
// The writer encodes the PNGs (stb) or pipes raw RGB frames to ffmpeg, so
// neither encoding nor disk I/O stalls drawing. When the queue is full the
// render thread waits for the writer: frames are never dropped. finish()
// (also run by the destructor) reads the last PBOs, drains the queue, joins
// the writer and waits for ffmpeg, so every file is complete.
#pragma once

#include "gl.hpp"
#include "record_target.hpp"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <thread>
#include <vector>
#include <sys/types.h>

namespace eddy {

struct RecordOptions {
  std::string target;  // a directory (PNG frames) or FILE.mp4 / .mkv / .mov / .webm (ffmpeg)
  unsigned every = 1;  // record every K-th frame
  double fps = 60;     // frame rate of the video (ffmpeg)
  // The share of the video one drawn frame is: 1 / (every x fps) seconds.
  double drawnFrameSeconds() const { return 1.0 / (double(every > 0 ? every : 1u) * fps); }
};

class Recorder {
 public:
  // PNG: creates the directory. Video: checks that ffmpeg is on PATH (the
  // process starts with the first frame, whose size it needs). Throws
  // eddy::Error naming the problem.
  explicit Recorder(const RecordOptions& o);
  ~Recorder();
  Recorder(const Recorder&) = delete;
  Recorder& operator=(const Recorder&) = delete;

  // Once per drawn frame, with the frame (w x h) in the read framebuffer:
  // every `every`-th call captures it. Throws eddy::Error when the writer
  // has failed (disk full, ffmpeg gone); the frames before are complete.
  void frame(int w, int h);
  // Reads back the pending captures, writes everything, stops the writer.
  // Idempotent. Throws eddy::Error if a write failed.
  void finish();

  const RecordOptions& options() const { return o_; }
  uint64_t framesCaptured() const { return captured_; }
  uint64_t framesWritten() const { return written_.load(); }
  double elapsedSeconds() const;
  // GL objects held (pixel buffers), for the leak tests.
  size_t glObjects() const { return pbo_[0] ? 2 : 0; }

 private:
  struct Frame {
    uint64_t index = 0;
    int w = 0, h = 0;
    std::vector<unsigned char> rgb;  // rows bottom-up, as OpenGL reads them
  };
  struct Pending {
    bool busy = false;
    uint64_t index = 0;
    int w = 0, h = 0;
  };
  void readBack(int slot);   // maps a PBO, queues its frame
  void push(Frame&& f);      // blocks while the queue is full
  void writerLoop();
  void write(Frame& f);      // on the writer thread
  void startFfmpeg(int w, int h);
  void stopFfmpeg();

  RecordOptions o_;
  bool video_ = false;
  uint64_t calls_ = 0, captured_ = 0;
  GLuint pbo_[2] = {0, 0};
  size_t pboBytes_[2] = {0, 0};
  Pending pending_[2];
  std::chrono::steady_clock::time_point start_;

  std::mutex m_;
  std::condition_variable notEmpty_, notFull_;
  std::deque<Frame> queue_;
  bool closing_ = false, finished_ = false;
  std::string error_;  // first writer failure (guarded by m_)
  std::atomic<uint64_t> written_{0};
  std::thread writer_;

  // ffmpeg child (writer thread only)
  pid_t ffmpeg_ = -1;
  int pipe_ = -1;
  int videoW_ = 0, videoH_ = 0;
};

}  // namespace eddy
