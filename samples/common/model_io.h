// What the samples share between the image and the engine: the model's image input seen as
// image_preprocess's output, source images where the engine's backend reads them, and outputs
// read back to host floats.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "image_io.h"
#include "jet/dnn.h"
#include "jet/runtime.h"

namespace jet {
namespace samples {

// Loads the model file `path` for `backend` (--device). CUDA in a build without it:
// NOT_SUPPORTED naming --device cpu; a load that fails on CUDA (no usable GPU?) says to try it too.
Status load_model(const std::string& path, Backend backend, std::shared_ptr<Engine>* engine);

// The model's image input `info` (dims [1, C, H, W] or [1, H, W, C], C = 1 or 3) as the
// [1, C, H, W] TensorDesc that image_preprocess writes, with the input's own strides.
// BAD_PARAM naming the dims when the input is not an image.
Status image_input_desc(const TensorInfo& info, TensorDesc* desc);

// A source image in the memory the backend reads: the host pixels on CPU, a device copy (one
// cudaMalloc, made by the first upload and reused while the size fits) on CUDA, copied on
// `stream` so that work queued after it on that stream sees it.
class ImageBuffer {
 public:
  ImageBuffer() = default;
  ~ImageBuffer();
  ImageBuffer(const ImageBuffer&) = delete;
  ImageBuffer& operator=(const ImageBuffer&) = delete;

  Status upload(Backend backend, const Image& image, cudaStream_t stream);
  const void* data() const { return data_; }
  ImageDesc desc() const { return desc_; }

 private:
  const void* data_ = nullptr;
  void* device_ = nullptr;
  size_t device_bytes_ = 0;
  ImageDesc desc_;
};

// Tensor `index` of the context (after a completed run) as host floats, f32 or f16, in its
// logical row-major order.
Status read_tensor(const ExecutionContext& ctx, int index, std::vector<float>* out);

// Waits for `stream` on CUDA; nothing on CPU.
Status synchronize(Backend backend, cudaStream_t stream);

}  // namespace samples
}  // namespace jet
