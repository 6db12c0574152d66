// The camera loop's shared part (model checks, post-processing, timing, the callback) and its CPU
// pipeline. The CUDA pipeline is in camera_loop_cuda.cpp.
#include "camera_loop_impl.h"

#include <string>

#include "model_io.h"

namespace jet {
namespace camera {

double ms_between(std::chrono::steady_clock::time_point a, std::chrono::steady_clock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

namespace {

using Clock = std::chrono::steady_clock;

Status model_error(const std::string& what) {
  return Status(StatusCode::BAD_PARAM, "camera loop: the model is not a BlazeFace front-camera detector: " + what);
}

}  // namespace

Status CameraLoop::Impl::init_common(std::shared_ptr<const Engine> e, FrameSource* s, const LoopOptions& o) {
  engine = std::move(e);
  source = s;
  options = o;
  if (!engine) return Status(StatusCode::BAD_PARAM, "camera loop: no engine");
  if (source == nullptr) return Status(StatusCode::BAD_PARAM, "camera loop: no frame source");
  if (engine->num_inputs() != 1) return model_error(std::to_string(engine->num_inputs()) + " inputs, not 1");
  const TensorInfo& in = engine->tensor(engine->input(0));
  Status st = samples::image_input_desc(in, &input_desc);
  if (!st.ok()) return model_error(st.message());
  if (input_desc.dim(1) != 3 || input_desc.dim(2) != blazeface::kInputSize ||
      input_desc.dim(3) != blazeface::kInputSize) {
    return model_error("input " + in.name + " is not a 128x128 RGB image");
  }
  // The outputs, told apart by shape: [1, anchors, 1] scores and [1, anchors, 16] boxes.
  for (int i = 0; i < engine->num_outputs(); ++i) {
    const TensorInfo& t = engine->tensor(engine->output(i));
    int64_t count = 1;
    for (int64_t d : t.dims) count *= d;
    const int64_t last = t.dims.empty() ? 0 : t.dims.back();
    for (int layer = 0; layer < 2; ++layer) {
      const int64_t anchors = blazeface::kLayerAnchors[layer];
      int* slot = nullptr;
      if (last == 1 && count == anchors) slot = &score_output[layer];
      if (last == blazeface::kValuesPerAnchor && count == anchors * blazeface::kValuesPerAnchor) {
        slot = &box_output[layer];
      }
      if (slot == nullptr) continue;
      if (t.dtype != DType::F32 || t.bytes != static_cast<size_t>(count) * sizeof(float)) {
        return model_error("output " + t.name + " is not packed float32 (convert with fp32 inputs and outputs)");
      }
      *slot = i;
    }
  }
  for (int layer = 0; layer < 2; ++layer) {
    if (score_output[layer] < 0 || box_output[layer] < 0) {
      return model_error("no [1, " + std::to_string(blazeface::kLayerAnchors[layer]) + ", 1] score and [1, " +
                         std::to_string(blazeface::kLayerAnchors[layer]) + ", 16] box outputs");
    }
  }
  preprocess = ImagePreprocessDesc();  // bilinear, letterbox, RGB
  for (int c = 0; c < 3; ++c) {
    preprocess.scale[c] = 2.f / 255.f;  // [-1, 1], as the network was trained
    preprocess.offset[c] = -1.f;
  }
  preprocess.pad_value = 0.f;
  frame_capacity = static_cast<size_t>(source->max_width()) * static_cast<size_t>(source->max_height()) * 3;
  if (frame_capacity == 0) return Status(StatusCode::BAD_PARAM, "camera loop: the source has no frame size");
  times = StageTimes(options.timing_capacity);
  post.reset(new blazeface::Postprocess(options.detector));
  detections.reserve(blazeface::kAnchors);
  return engine->create_context(&context);
}

void CameraLoop::Impl::postprocess(const float* const* outputs, const ImageTransform& transform) {
  blazeface::RawOutputs raw;
  for (int layer = 0; layer < 2; ++layer) {
    raw.scores[layer] = outputs[score_output[layer]];
    raw.boxes[layer] = outputs[box_output[layer]];
  }
  post->run(raw, transform, &detections);
}

void CameraLoop::Impl::finish_frame(Clock::time_point capture_start, const uint8_t* rgb, FrameSize size,
                                    double* stage_ms, const FrameCallback& callback) {
  FrameResult result;
  result.index = next_index++;
  result.rgb = rgb;
  result.size = size;
  result.detections = detections.data();
  result.detection_count = detections.size();
  for (int i = 0; i < kStageCount; ++i) result.stage_ms[i] = stage_ms[i];
  if (callback) callback(result);
  const Clock::time_point end = Clock::now();
  stage_ms[static_cast<int>(Stage::END_TO_END)] = ms_between(capture_start, end);
  for (int i = 0; i < kStageCount; ++i) {
    const Stage s = static_cast<Stage>(i);
    if (s == Stage::FRAME_INTERVAL) continue;
    if (s == Stage::UPLOAD && stage_ms[i] == 0) continue;  // no upload on this pipeline
    times.add(s, stage_ms[i]);
  }
  if (have_last_callback) times.add(Stage::FRAME_INTERVAL, ms_between(last_callback_end, end));
  last_callback_end = end;
  have_last_callback = true;
}

// ---- CPU: capture, preprocess, run, decode, one after the other on the calling thread. --------

namespace {

class CpuLoop : public CameraLoop::Impl {
 public:
  Status init_backend() override {
    frame_.resize(frame_capacity);
    for (int i = 0; i < engine->num_outputs(); ++i) {
      outputs_.push_back(static_cast<const float*>(context->tensor_data(engine->output(i))));
    }
    return Status::success();
  }

  void fill_memory(LoopMemory* m) const override { m->frame_host_bytes = frame_.size(); }

  Status run(int64_t frames, const FrameCallback& callback) override {
    const Handle handle = Handle::cpu();
    const int input = engine->input(0);
    void* input_data = context->tensor_data(input);
    for (int64_t n = 0; (frames == 0 || n < frames) && !stop_requested.load(); ++n) {
      double ms[kStageCount] = {};
      const Clock::time_point t0 = Clock::now();
      FrameSize size;
      Status st = source->read(frame_.data(), frame_.size(), &size);
      if (!st.ok()) return st;
      const Clock::time_point t1 = Clock::now();
      ImageDesc image;
      image.format = PixelFormat::RGB8;
      image.width = size.width;
      image.height = size.height;
      image.row_bytes = static_cast<int64_t>(size.width) * 3;
      ImageTransform transform;
      st = image_preprocess(handle, preprocess, image, frame_.data(), 1.f, 0.f, input_desc, input_data, &transform);
      if (!st.ok()) return st;
      const Clock::time_point t2 = Clock::now();
      st = context->run();
      if (!st.ok()) return st;
      const Clock::time_point t3 = Clock::now();
      postprocess(outputs_.data(), transform);
      const Clock::time_point t4 = Clock::now();
      ms[static_cast<int>(Stage::CAPTURE)] = ms_between(t0, t1);
      ms[static_cast<int>(Stage::PREPROCESS)] = ms_between(t1, t2);
      ms[static_cast<int>(Stage::INFERENCE)] = ms_between(t2, t3);
      ms[static_cast<int>(Stage::POSTPROCESS)] = ms_between(t3, t4);
      finish_frame(t0, frame_.data(), size, ms, callback);
    }
    return Status::success();
  }

 private:
  std::vector<uint8_t> frame_;
  std::vector<const float*> outputs_;
};

}  // namespace

Status make_cpu_loop(std::unique_ptr<CameraLoop::Impl>* out) {
  out->reset(new CpuLoop());
  return Status::success();
}

#if !defined(JET_HAVE_CUDA)
Status make_cuda_loop(std::unique_ptr<CameraLoop::Impl>*) {
  return Status(StatusCode::NOT_SUPPORTED, "camera loop: this build has no CUDA backend");
}
#endif

// ---- CameraLoop: the public face. ------------------------------------------------------------

CameraLoop::CameraLoop(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
CameraLoop::~CameraLoop() = default;

Status CameraLoop::create(std::shared_ptr<const Engine> engine, FrameSource* source, const LoopOptions& options,
                          std::unique_ptr<CameraLoop>* out) {
  if (!engine) return Status(StatusCode::BAD_PARAM, "camera loop: no engine");
  std::unique_ptr<Impl> impl;
  Status st = engine->backend() == Backend::CUDA ? make_cuda_loop(&impl) : make_cpu_loop(&impl);
  if (!st.ok()) return st;
  st = impl->init_common(std::move(engine), source, options);
  if (!st.ok()) return st;
  st = impl->init_backend();
  if (!st.ok()) return st;
  out->reset(new CameraLoop(std::move(impl)));
  return Status::success();
}

Status CameraLoop::run(int64_t frames, const FrameCallback& callback) {
  if (frames < 0) return Status(StatusCode::BAD_PARAM, "camera loop: negative frame count");
  return impl_->run(frames, callback);
}

void CameraLoop::stop() { impl_->stop_requested.store(true); }
StageTimes& CameraLoop::times() { return impl_->times; }
const StageTimes& CameraLoop::times() const { return impl_->times; }
uint64_t CameraLoop::frames_done() const { return impl_->next_index; }
Backend CameraLoop::backend() const { return impl_->engine->backend(); }
Status CameraLoop::cuda_graph_status() const { return impl_->cuda_graph_status(); }

LoopMemory CameraLoop::memory() const {
  LoopMemory m;
  m.weight_bytes = impl_->engine->summary().weight_bytes;
  m.context_bytes = impl_->engine->context_memory_size();
  impl_->fill_memory(&m);
  return m;
}

}  // namespace camera
}  // namespace jet
