// The camera loop's CUDA pipeline: two frame slots (pinned host memory plus a device copy, or
// mapped zero-copy host memory on integrated GPUs), a copy stream and a compute stream. While the
// compute stream preprocesses frame n, replays the captured CUDA graph and downloads the outputs,
// the host captures frame n+1 into the other slot and the copy stream uploads it.
//
//   host     | capture n+1 |........ wait ........| postprocess n | callback n | capture n+2 ...
//   copy     |              upload n+1 |
//   compute  | preprocess n | graph replay n | outputs down n |
//
// Events order the slots' reuse: a slot's host memory is rewritten only after its last upload
// (and, zero-copy, its last preprocessing) has finished, and its device memory only after the
// preprocessing that read it has finished.
#include <cuda_runtime.h>

#include <string>

#include "camera_loop_impl.h"

namespace jet {
namespace camera {

namespace {

using Clock = std::chrono::steady_clock;

Status cuda_status(cudaError_t err, const char* what) {
  if (err == cudaSuccess) return Status::success();
  return Status(StatusCode::EXECUTION_FAILED, std::string("camera loop: ") + what + ": " + cudaGetErrorString(err));
}

class CudaLoop : public CameraLoop::Impl {
 public:
  ~CudaLoop() override {
    if (compute_) cudaStreamSynchronize(compute_);
    if (copy_) cudaStreamSynchronize(copy_);
    for (Slot& s : slots_) {
      if (!zero_copy_ && s.device) cudaFree(s.device);
      if (s.host) cudaFreeHost(s.host);
      for (cudaEvent_t e : {s.upload_start, s.uploaded, s.consumed}) {
        if (e) cudaEventDestroy(e);
      }
    }
    for (cudaEvent_t e : {preprocess_start_, preprocess_end_, inference_end_}) {
      if (e) cudaEventDestroy(e);
    }
    if (host_outputs_) cudaFreeHost(host_outputs_);
    if (compute_) cudaStreamDestroy(compute_);
    if (copy_) cudaStreamDestroy(copy_);
  }

  Status init_backend() override {
    const int device = engine->device();
    Status st = cuda_status(cudaSetDevice(device), "cudaSetDevice");
    if (!st.ok()) return st;
    int integrated = 0, can_map = 0;
    st = cuda_status(cudaDeviceGetAttribute(&integrated, cudaDevAttrIntegrated, device), "cudaDeviceGetAttribute");
    if (!st.ok()) return st;
    st = cuda_status(cudaDeviceGetAttribute(&can_map, cudaDevAttrCanMapHostMemory, device), "cudaDeviceGetAttribute");
    if (!st.ok()) return st;
    switch (options.frame_memory) {
      case FrameMemory::AUTO: zero_copy_ = integrated != 0 && can_map != 0; break;
      case FrameMemory::UPLOAD: zero_copy_ = false; break;
      case FrameMemory::MAPPED:
        if (can_map == 0) {
          return Status(StatusCode::NOT_SUPPORTED, "camera loop: device " + std::to_string(device) +
                                                       " cannot map host memory (mapped frames asked for)");
        }
        zero_copy_ = true;
        break;
    }

    st = cuda_status(cudaStreamCreateWithFlags(&compute_, cudaStreamNonBlocking), "cudaStreamCreate (compute)");
    if (st.ok()) st = cuda_status(cudaStreamCreateWithFlags(&copy_, cudaStreamNonBlocking), "cudaStreamCreate (copy)");
    if (!st.ok()) return st;
    for (Slot& s : slots_) {
      if (zero_copy_) {
        st = cuda_status(cudaHostAlloc(reinterpret_cast<void**>(&s.host), frame_capacity, cudaHostAllocMapped),
                         "cudaHostAlloc (mapped frame)");
        if (st.ok()) st = cuda_status(cudaHostGetDevicePointer(reinterpret_cast<void**>(&s.device), s.host, 0),
                                      "cudaHostGetDevicePointer");
      } else {
        st = cuda_status(cudaHostAlloc(reinterpret_cast<void**>(&s.host), frame_capacity, cudaHostAllocDefault),
                         "cudaHostAlloc (pinned frame)");
        if (st.ok()) st = cuda_status(cudaMalloc(reinterpret_cast<void**>(&s.device), frame_capacity), "cudaMalloc (frame)");
      }
      if (st.ok()) st = cuda_status(cudaEventCreate(&s.upload_start), "cudaEventCreate");
      if (st.ok()) st = cuda_status(cudaEventCreate(&s.uploaded), "cudaEventCreate");
      if (st.ok()) st = cuda_status(cudaEventCreateWithFlags(&s.consumed, cudaEventDisableTiming), "cudaEventCreate");
      if (!st.ok()) return st;
    }
    for (cudaEvent_t* e : {&preprocess_start_, &preprocess_end_, &inference_end_}) {
      st = cuda_status(cudaEventCreate(e), "cudaEventCreate");
      if (!st.ok()) return st;
    }

    // The outputs come down into one pinned block, each at a 256-byte aligned offset.
    size_t total = 0;
    std::vector<size_t> offsets;
    for (int i = 0; i < engine->num_outputs(); ++i) {
      offsets.push_back(total);
      total += (engine->tensor(engine->output(i)).bytes + 255) / 256 * 256;
    }
    output_bytes_ = total;
    st = cuda_status(cudaHostAlloc(&host_outputs_, total, cudaHostAllocDefault), "cudaHostAlloc (outputs)");
    if (!st.ok()) return st;
    for (int i = 0; i < engine->num_outputs(); ++i) {
      outputs_.push_back(reinterpret_cast<const float*>(static_cast<uint8_t*>(host_outputs_) + offsets[i]));
    }

    st = Handle::cuda(device, compute_, &handle_);
    if (!st.ok()) return st;
    if (options.use_cuda_graph) {
      // capture() runs the pass once, then records it; later run() calls replay the graph. When
      // capture is impossible the context stays in plain mode: the loop still runs, and says so.
      graph_status_ = context->capture(compute_);
    }
    return cuda_status(cudaStreamSynchronize(compute_), "warm-up run");
  }

  void fill_memory(LoopMemory* m) const override {
    m->zero_copy = zero_copy_;
    m->frame_device_bytes = zero_copy_ ? 0 : 2 * frame_capacity;
    m->frame_host_bytes = 2 * frame_capacity + output_bytes_;
  }
  Status cuda_graph_status() const override {
    if (!options.use_cuda_graph) return Status(StatusCode::NOT_SUPPORTED, "turned off (LoopOptions::use_cuda_graph, --no-graph)");
    return graph_status_;
  }

  Status run(int64_t frames, const FrameCallback& callback) override {
    if (stop_requested.load()) return Status::success();
    Status st = loop(frames, callback);
    // Leave nothing in flight, on success and on failure alike.
    const Status copy_done = cuda_status(cudaStreamSynchronize(copy_), "copy stream");
    const Status compute_done = cuda_status(cudaStreamSynchronize(compute_), "compute stream");
    if (!st.ok()) return st;
    return copy_done.ok() ? compute_done : copy_done;
  }

 private:
  struct Slot {
    uint8_t* host = nullptr;
    uint8_t* device = nullptr;  // == the mapped alias of host when zero-copy
    FrameSize size;
    Clock::time_point capture_start;
    double capture_ms = 0;
    cudaEvent_t upload_start = nullptr, uploaded = nullptr;
    cudaEvent_t consumed = nullptr;  // the preprocessing that read this slot has finished
  };

  // Captures the next frame into `s` and, on a discrete GPU, enqueues its upload.
  Status capture_frame(Slot& s) {
    // The previous frame in this slot is fully uploaded and preprocessed (normally long done).
    Status st = cuda_status(cudaEventSynchronize(s.consumed), "waiting for a frame slot");
    if (!st.ok()) return st;
    s.capture_start = Clock::now();
    st = source->read(s.host, frame_capacity, &s.size);
    if (!st.ok()) return st;
    s.capture_ms = ms_between(s.capture_start, Clock::now());
    if (zero_copy_) return Status::success();
    const size_t bytes = static_cast<size_t>(s.size.width) * static_cast<size_t>(s.size.height) * 3;
    st = cuda_status(cudaEventRecord(s.upload_start, copy_), "cudaEventRecord");
    if (st.ok()) st = cuda_status(cudaMemcpyAsync(s.device, s.host, bytes, cudaMemcpyHostToDevice, copy_), "frame upload");
    if (st.ok()) st = cuda_status(cudaEventRecord(s.uploaded, copy_), "cudaEventRecord");
    return st;
  }

  // Preprocessing, inference and the outputs' download of the frame in `s`, on the compute stream.
  Status enqueue_compute(Slot& s, ImageTransform* transform) {
    Status st;
    if (!zero_copy_) {
      st = cuda_status(cudaStreamWaitEvent(compute_, s.uploaded, 0), "cudaStreamWaitEvent");
      if (!st.ok()) return st;
    }
    st = cuda_status(cudaEventRecord(preprocess_start_, compute_), "cudaEventRecord");
    if (!st.ok()) return st;
    ImageDesc image;
    image.format = PixelFormat::RGB8;
    image.width = s.size.width;
    image.height = s.size.height;
    image.row_bytes = static_cast<int64_t>(s.size.width) * 3;
    st = image_preprocess(handle_, preprocess, image, s.device, 1.f, 0.f, input_desc,
                          context->tensor_data(engine->input(0)), transform);
    if (!st.ok()) return st;
    st = cuda_status(cudaEventRecord(s.consumed, compute_), "cudaEventRecord");
    if (st.ok()) st = cuda_status(cudaEventRecord(preprocess_end_, compute_), "cudaEventRecord");
    if (!st.ok()) return st;
    st = context->run(compute_);
    if (!st.ok()) return st;
    for (int i = 0; i < engine->num_outputs(); ++i) {
      const int t = engine->output(i);
      st = cuda_status(cudaMemcpyAsync(const_cast<float*>(outputs_[static_cast<size_t>(i)]), context->tensor_data(t),
                                       engine->tensor(t).bytes, cudaMemcpyDeviceToHost, compute_),
                       "output download");
      if (!st.ok()) return st;
    }
    return cuda_status(cudaEventRecord(inference_end_, compute_), "cudaEventRecord");
  }

  Status loop(int64_t frames, const FrameCallback& callback) {
    int current = 0;
    Status st = capture_frame(slots_[current]);
    if (!st.ok()) return st;
    for (int64_t n = 0;; ++n) {
      Slot& s = slots_[current];
      ImageTransform transform;
      st = enqueue_compute(s, &transform);
      if (!st.ok()) return st;
      // stop() ends the loop after the frame in progress: a captured frame is always processed.
      const bool more = (frames == 0 || n + 1 < frames) && !stop_requested.load();
      if (more) {
        st = capture_frame(slots_[1 - current]);  // overlaps the compute stream's work on frame n
        if (!st.ok()) return st;
      }
      st = cuda_status(cudaEventSynchronize(inference_end_), "frame inference");
      if (!st.ok()) return st;
      double ms[kStageCount] = {};
      ms[static_cast<int>(Stage::CAPTURE)] = s.capture_ms;
      float gpu_ms = 0;
      if (!zero_copy_) {
        st = cuda_status(cudaEventElapsedTime(&gpu_ms, s.upload_start, s.uploaded), "cudaEventElapsedTime");
        if (!st.ok()) return st;
        ms[static_cast<int>(Stage::UPLOAD)] = gpu_ms;
      }
      st = cuda_status(cudaEventElapsedTime(&gpu_ms, preprocess_start_, preprocess_end_), "cudaEventElapsedTime");
      if (!st.ok()) return st;
      ms[static_cast<int>(Stage::PREPROCESS)] = gpu_ms;
      st = cuda_status(cudaEventElapsedTime(&gpu_ms, preprocess_end_, inference_end_), "cudaEventElapsedTime");
      if (!st.ok()) return st;
      ms[static_cast<int>(Stage::INFERENCE)] = gpu_ms;
      const Clock::time_point post_start = Clock::now();
      postprocess(outputs_.data(), transform);
      ms[static_cast<int>(Stage::POSTPROCESS)] = ms_between(post_start, Clock::now());
      finish_frame(s.capture_start, s.host, s.size, ms, callback);
      if (!more) return Status::success();
      current = 1 - current;
    }
  }

  bool zero_copy_ = false;
  cudaStream_t compute_ = nullptr, copy_ = nullptr;
  Slot slots_[2];
  cudaEvent_t preprocess_start_ = nullptr, preprocess_end_ = nullptr, inference_end_ = nullptr;
  void* host_outputs_ = nullptr;
  size_t output_bytes_ = 0;
  std::vector<const float*> outputs_;
  Handle handle_;
  Status graph_status_;
};

}  // namespace

Status make_cuda_loop(std::unique_ptr<CameraLoop::Impl>* out) {
  out->reset(new CudaLoop());
  return Status::success();
}

}  // namespace camera
}  // namespace jet
