// The samples' glue between images and the engine (see model_io.h).
#include "model_io.h"

#include <cstring>

#if JET_HAVE_CUDA
#include <cuda_runtime.h>
#endif

namespace jet {
namespace samples {
namespace {

std::string dims_text(const std::vector<int64_t>& dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i) s += (i ? ", " : "") + std::to_string(dims[i]);
  return s + "]";
}

#if JET_HAVE_CUDA
Status cuda_status(cudaError_t e, const char* what) {
  if (e == cudaSuccess) return Status();
  return Status(StatusCode::EXECUTION_FAILED, std::string(what) + ": " + cudaGetErrorString(e));
}
#endif

}  // namespace

Status load_model(const std::string& path, Backend backend, std::shared_ptr<Engine>* engine) {
  if (backend == Backend::CUDA && !built_with_cuda())
    return Status(StatusCode::NOT_SUPPORTED, "this build has no CUDA backend: use --device cpu");
  LoadOptions options;
  options.backend = backend;
  const Status st = Engine::load(path, options, engine);
  if (!st.ok() && backend == Backend::CUDA)
    return Status(st.code(), st.message() + " (no usable GPU? try --device cpu)");
  return st;
}

Status image_input_desc(const TensorInfo& info, TensorDesc* desc) {
  const std::vector<int64_t>& d = info.dims;
  const std::vector<int64_t>& s = info.strides;
  const bool rank4 = d.size() == 4 && s.size() == 4 && d[0] == 1;
  auto colour = [](int64_t c) { return c == 1 || c == 3; };
  if (rank4 && colour(d[1])) {  // [1, C, H, W]
    *desc = TensorDesc::strided(info.dtype, {d[0], d[1], d[2], d[3]}, {s[0], s[1], s[2], s[3]});
    return Status();
  }
  if (rank4 && colour(d[3])) {  // [1, H, W, C]: the same memory in jet's N, C, H, W order
    *desc = TensorDesc::strided(info.dtype, {d[0], d[3], d[1], d[2]}, {s[0], s[3], s[1], s[2]});
    return Status();
  }
  return Status(StatusCode::BAD_PARAM, "input " + info.name + " has dims " + dims_text(d) +
                                           ": an image input is [1, C, H, W] or [1, H, W, C] with C = 1 or 3");
}

ImageBuffer::~ImageBuffer() {
#if JET_HAVE_CUDA
  if (device_) cudaFree(device_);
#endif
}

Status ImageBuffer::upload(Backend backend, const Image& image, cudaStream_t stream) {
  desc_.format = image.channels == 1 ? PixelFormat::GRAY8 : PixelFormat::RGB8;
  desc_.width = image.width;
  desc_.height = image.height;
  desc_.row_bytes = static_cast<int64_t>(image.width) * image.channels;
  if (backend == Backend::CPU) {
    data_ = image.pixels.data();
    return Status();
  }
#if JET_HAVE_CUDA
  const size_t bytes = image.pixels.size();
  if (bytes > device_bytes_) {
    if (device_) cudaFree(device_);
    device_ = nullptr;
    device_bytes_ = 0;
    const Status st = cuda_status(cudaMalloc(&device_, bytes), "cudaMalloc for the image");
    if (!st.ok()) return st;
    device_bytes_ = bytes;
  }
  data_ = device_;
  // From pageable memory the call returns once the bytes are staged; the copy itself is ordered
  // on `stream` before the preprocessing queued after it.
  return cuda_status(cudaMemcpyAsync(device_, image.pixels.data(), bytes, cudaMemcpyHostToDevice, stream),
                     "cudaMemcpyAsync of the image to the device");
#else
  (void)stream;
  return Status(StatusCode::NOT_SUPPORTED, "this build has no CUDA backend (use --device cpu)");
#endif
}

Status read_tensor(const ExecutionContext& ctx, int index, std::vector<float>* out) {
  const Engine& engine = ctx.engine();
  const TensorInfo& info = engine.tensor(index);
  const void* data = ctx.tensor_data(index);
  if (data == nullptr) return Status(StatusCode::BAD_PARAM, "tensor " + info.name + " has no memory in the context");
  std::vector<unsigned char> bytes(info.bytes);
  if (engine.backend() == Backend::CPU) {
    std::memcpy(bytes.data(), data, info.bytes);
  } else {
#if JET_HAVE_CUDA
    const Status st = cuda_status(cudaMemcpy(bytes.data(), data, info.bytes, cudaMemcpyDeviceToHost),
                                  "cudaMemcpy of an output to the host");
    if (!st.ok()) return st;
#else
    return Status(StatusCode::NOT_SUPPORTED, "this build has no CUDA backend");
#endif
  }
  // Logical row-major order through the tensor's strides.
  int64_t count = 1;
  for (int64_t d : info.dims) count *= d;
  out->resize(static_cast<size_t>(count));
  const size_t rank = info.dims.size();
  std::vector<int64_t> idx(rank, 0);
  for (int64_t i = 0; i < count; ++i) {
    int64_t off = 0;
    for (size_t k = 0; k < rank; ++k) off += idx[k] * info.strides[k];
    float v;
    if (info.dtype == DType::F32) {
      std::memcpy(&v, bytes.data() + off * 4, 4);
    } else {
      uint16_t h;
      std::memcpy(&h, bytes.data() + off * 2, 2);
      v = half::half_bits_to_float(h);
    }
    (*out)[static_cast<size_t>(i)] = v;
    for (size_t k = rank; k-- > 0;) {
      if (++idx[k] < info.dims[k]) break;
      idx[k] = 0;
    }
  }
  return Status();
}

Status synchronize(Backend backend, cudaStream_t stream) {
  if (backend == Backend::CPU) return Status();
#if JET_HAVE_CUDA
  return cuda_status(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
#else
  (void)stream;
  return Status(StatusCode::NOT_SUPPORTED, "this build has no CUDA backend");
#endif
}

}  // namespace samples
}  // namespace jet
