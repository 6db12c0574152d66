// What the CPU and CUDA pipelines of the camera loop share (camera_loop.cpp), and the two
// pipelines' factories (camera_loop.cpp: CPU; camera_loop_cuda.cpp: CUDA).
#pragma once

#include <atomic>
#include <chrono>
#include <vector>

#include "camera_loop.h"
#include "jet/dnn/image_preprocess.h"

namespace jet {
namespace camera {

class CameraLoop::Impl {
 public:
  virtual ~Impl() = default;

  // Backend setup after init_common: buffers, streams, the CUDA graph. Every allocation is here.
  virtual Status init_backend() = 0;
  // Runs `frames` frames (0: until stop), see CameraLoop::run.
  virtual Status run(int64_t frames, const FrameCallback& callback) = 0;
  virtual void fill_memory(LoopMemory* m) const = 0;
  virtual Status cuda_graph_status() const {
    return Status(StatusCode::NOT_SUPPORTED, "the CPU backend runs the ops directly");
  }

  // Checks the model and sets up what both pipelines need (called by the factories).
  Status init_common(std::shared_ptr<const Engine> engine, FrameSource* source, const LoopOptions& options);

  // The network input as image_preprocess writes it, from the engine's input tensor.
  TensorDesc input_desc;
  ImagePreprocessDesc preprocess;
  std::shared_ptr<const Engine> engine;
  std::unique_ptr<ExecutionContext> context;
  FrameSource* source = nullptr;
  LoopOptions options;
  size_t frame_capacity = 0;  // bytes of the largest frame

  StageTimes times;
  std::atomic<bool> stop_requested{false};
  uint64_t next_index = 0;
  std::chrono::steady_clock::time_point last_callback_end{};
  bool have_last_callback = false;

  // BlazeFace's four outputs among the engine's: scores of the 16x16 and 8x8 layers, then their
  // box regressors (engine output indices).
  int score_output[2] = {-1, -1};
  int box_output[2] = {-1, -1};
  // Decodes the outputs, given as host pointers in the engine's output order, for a frame
  // preprocessed with `transform` into `detections` (reserved at init: no allocation).
  void postprocess(const float* const* outputs, const ImageTransform& transform);
  std::unique_ptr<blazeface::Postprocess> post;
  std::vector<blazeface::Detection> detections;

  // Times the end of a frame, fills `result` and calls the callback.
  void finish_frame(std::chrono::steady_clock::time_point capture_start, const uint8_t* rgb,
                    FrameSize size, double* stage_ms, const FrameCallback& callback);
};

Status make_cpu_loop(std::unique_ptr<CameraLoop::Impl>* out);
// NOT_SUPPORTED in a build without CUDA.
Status make_cuda_loop(std::unique_ptr<CameraLoop::Impl>* out);

double ms_between(std::chrono::steady_clock::time_point a, std::chrono::steady_clock::time_point b);

}  // namespace camera
}  // namespace jet
