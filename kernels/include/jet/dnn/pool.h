// Pooling forward: max, average including padding, average excluding padding; 1D/2D/3D; global.
#pragma once

#include "jet/dnn/tensor.h"

namespace jet {

// Values are stable: they are written into model files.
enum class PoolMode : int32_t {
  MAX = 0,
  AVG_INCLUDE_PAD = 1,  // divide by the window size, padding included (ONNX count_include_pad=1)
  AVG_EXCLUDE_PAD = 2,  // divide by the number of window elements inside the input
};
template <>
struct EnumCount<PoolMode> {
  static constexpr int32_t value = static_cast<int32_t>(PoolMode::AVG_EXCLUDE_PAD) + 1;
};

class PoolDesc {
 public:
  PoolDesc() = default;
  // spatial_rank 1..3; arrays have spatial_rank entries (nullptr: pad 0, stride 1, dilation 1).
  // ceil_mode rounds the output size up; as in PyTorch and ONNX, a window that would start
  // entirely inside the end padding is dropped.
  static PoolDesc make(PoolMode mode, int spatial_rank, const int64_t* window,
                       const int64_t* pad_begin, const int64_t* pad_end, const int64_t* stride,
                       const int64_t* dilation = nullptr, bool ceil_mode = false);
  static PoolDesc pool2d(PoolMode mode, int64_t win_h, int64_t win_w, int64_t pad_h = 0,
                         int64_t pad_w = 0, int64_t stride_h = 1, int64_t stride_w = 1,
                         bool ceil_mode = false);
  // Global pooling: the window is the whole spatial extent of x, whatever its size; y is 1x1(x1).
  static PoolDesc global(PoolMode mode, int spatial_rank);

  // BAD_PARAM unless window >= 1, stride >= 1, dilation >= 1 (each at most 2^31) and
  // 0 <= pad < (window - 1) * dilation + 1, the dilated window's extent (a window made only of
  // padding is not allowed, as in cuDNN and PyTorch). A null window array means window 0, which
  // validate() rejects.
  Status validate() const;

  PoolMode mode() const { return mode_; }
  int spatial_rank() const { return spatial_rank_; }
  bool is_global() const { return global_; }
  bool ceil_mode() const { return ceil_mode_; }
  int64_t window(int i) const { return window_[i]; }
  int64_t pad_begin(int i) const { return pad_begin_[i]; }
  int64_t pad_end(int i) const { return pad_end_[i]; }
  int64_t stride(int i) const { return stride_[i]; }
  int64_t dilation(int i) const { return dilation_[i]; }

 private:
  PoolMode mode_ = PoolMode::MAX;
  int spatial_rank_ = 0;
  bool global_ = false;
  bool ceil_mode_ = false;
  int64_t window_[3] = {1, 1, 1};
  int64_t pad_begin_[3] = {};
  int64_t pad_end_[3] = {};
  int64_t stride_[3] = {1, 1, 1};
  int64_t dilation_[3] = {1, 1, 1};
};

// Output dims (N, C, out spatial...) of pooling x with `pool`.
Status pool_output_dims(const TensorDesc& x_desc, const PoolDesc& pool, int64_t* out_dims);

// y = alpha * pool(x) + beta * y. x, y: rank 3..5, same N, C and dtype, any strides; not in
// place. MAX propagates NaN (as PyTorch). With dilation, a window whose taps all miss x (possible
// even with legal pads) has no defined value: pool_forward rejects such problems with BAD_PARAM.
// docs/ops.md routines: | `pool_forward` | max, avg incl. pad, avg excl. pad; 1D/2D/3D; asymmetric
//   pads; dilation; ceil mode; global | yes | yes | yes | yes | yes | -- | MaxPool, AveragePool,
//   GlobalAveragePool, GlobalMaxPool; ReduceMean/Max/Sum over the spatial dims |
Status pool_forward(const Handle& handle, const PoolDesc& pool, float alpha,
                    const TensorDesc& x_desc, const void* x, float beta,
                    const TensorDesc& y_desc, void* y);

}  // namespace jet
