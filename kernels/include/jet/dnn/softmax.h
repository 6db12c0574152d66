// Softmax forward.
#pragma once

#include "jet/dnn/tensor.h"

namespace jet {

// Values are stable: they are written into model files.
enum class SoftmaxAlgo : int32_t {
  FAST = 0,      // exp(x) / sum(exp(x)) with no max subtraction (may overflow, as in cuDNN)
  ACCURATE = 1,  // the max is subtracted first
  LOG = 2,       // log-softmax: x - max - log(sum(exp(x - max)))
};
template <>
struct EnumCount<SoftmaxAlgo> {
  static constexpr int32_t value = static_cast<int32_t>(SoftmaxAlgo::LOG) + 1;
};

enum class SoftmaxMode : int32_t {
  INSTANCE = 0,  // over C and all spatial dims, per N
  CHANNEL = 1,   // over C, at each (N, spatial) position
};
template <>
struct EnumCount<SoftmaxMode> {
  static constexpr int32_t value = static_cast<int32_t>(SoftmaxMode::CHANNEL) + 1;
};

// y = alpha * softmax(x) + beta * y. x, y: rank 3..5, same dims and dtype, any strides.
// In place (x == y with the same layout) is allowed. Statistics are computed in f32 or better,
// also for f16 storage. A softmax along any axis of an ONNX tensor is
// the CHANNEL mode over a 3D view (outer, axis, inner) of it.
// docs/ops.md routines: | `softmax_forward` | FAST, ACCURATE, LOG x INSTANCE, CHANNEL; in place |
//   yes | yes | yes | yes | yes | -- | Softmax, LogSoftmax |
Status softmax_forward(const Handle& handle, SoftmaxAlgo algo, SoftmaxMode mode, float alpha,
                       const TensorDesc& x_desc, const void* x, float beta,
                       const TensorDesc& y_desc, void* y);

}  // namespace jet
