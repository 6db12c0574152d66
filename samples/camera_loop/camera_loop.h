// The robotics camera loop: frames from a FrameSource, preprocessed on the device
// (jet::image_preprocess), a BlazeFace face detector run by the runtime (a CUDA graph replay on
// GPUs), its outputs decoded on the host (samples/common's BlazeFace post-processing), and a
// callback with the detections, frame after frame, with per-stage timings.
//
// CUDA: frames are captured into pinned host memory (mapped zero-copy memory on integrated GPUs
// such as Jetson, cudaDevAttrIntegrated), two frame buffers and two streams: while the compute
// stream preprocesses and runs frame n, the host captures frame n+1 and the copy stream uploads
// it. CPU: the same interface, one buffer, no streams.
//
// Memory: create() makes every allocation (frame buffers, streams, events, the context, the
// timing rings, the detection buffers); run() allocates nothing, host or device, after the first
// frames have warmed up the source and the CUDA module loading (tests/samples prove it by
// counting allocations). MJPEG cameras are the exception: stb_image allocates inside each decode.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>

#include "blazeface.h"
#include "frame_source.h"
#include "jet/runtime.h"
#include "stage_times.h"

namespace jet {
namespace camera {

// Where CUDA frames live. AUTO: MAPPED on integrated GPUs (Jetson: cudaDevAttrIntegrated, CPU and
// GPU share DRAM), UPLOAD on discrete ones. MAPPED on a discrete GPU works too (the kernel reads
// host memory over PCIe), which is how the zero-copy path is tested away from a Jetson.
enum class FrameMemory { AUTO, UPLOAD, MAPPED };

struct LoopOptions {
  bool use_cuda_graph = true;      // CUDA: capture the context once, replay it every frame
  FrameMemory frame_memory = FrameMemory::AUTO;
  blazeface::Options detector;     // score threshold and NMS overlap of the post-processing
  size_t timing_capacity = 65536;  // per-stage samples kept for the percentiles (a ring)
};

// What the callback receives for each frame. Everything it points to is valid during the call.
struct FrameResult {
  uint64_t index = 0;           // 0, 1, ... over the loop's life
  const uint8_t* rgb = nullptr; // the frame, host memory, packed RGB8 rows of size.width * 3
  FrameSize size;
  const blazeface::Detection* detections = nullptr;  // frame pixel coordinates, best first
  size_t detection_count = 0;
  // This frame's times so far: END_TO_END and FRAME_INTERVAL are known only after the callback
  // returns (0 here); UPLOAD is 0 where there is none (CPU, mapped zero-copy frames).
  double stage_ms[kStageCount] = {};
};

using FrameCallback = std::function<void(const FrameResult&)>;

// Memory jetinfer holds for the loop, from its own accounting.
struct LoopMemory {
  size_t weight_bytes = 0;         // the engine's weights (device memory on CUDA)
  size_t context_bytes = 0;        // the execution context's arena + workspace
  size_t frame_device_bytes = 0;   // device frame buffers (0 with mapped zero-copy frames)
  size_t frame_host_bytes = 0;     // pinned (or mapped) host frame and output buffers
  bool zero_copy = false;          // integrated GPU: frames mapped, no upload
};

class CameraLoop {
 public:
  // `engine` must be a BlazeFace front-camera model (128x128 input, the 896-anchor outputs);
  // errors name what does not match. `source` must outlive the loop.
  static Status create(std::shared_ptr<const Engine> engine, FrameSource* source,
                       const LoopOptions& options, std::unique_ptr<CameraLoop>* out);
  ~CameraLoop();
  CameraLoop(const CameraLoop&) = delete;
  CameraLoop& operator=(const CameraLoop&) = delete;

  // Runs `frames` frames (0: until stop()), calling `callback` (may be empty) after each. Every
  // frame is finished when run() returns. Times accumulate in times() across calls.
  Status run(int64_t frames, const FrameCallback& callback);
  // Makes run() return after the frame in progress. Async-signal-safe (a SIGINT handler may
  // call it): it only sets a lock-free atomic flag. It sticks: later run() calls return at once.
  void stop();

  StageTimes& times();
  const StageTimes& times() const;
  uint64_t frames_done() const;  // frames completed over the loop's life
  LoopMemory memory() const;
  Backend backend() const;
  // Success when every frame's inference is a CUDA graph replay; otherwise why not (the CPU
  // backend, LoopOptions::use_cuda_graph off, or the reason capture failed).
  Status cuda_graph_status() const;

  class Impl;

 private:
  explicit CameraLoop(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace camera
}  // namespace jet
