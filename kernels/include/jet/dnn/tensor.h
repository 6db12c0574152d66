// Tensor and filter descriptors.
//
// A TensorDesc names its dims in a fixed logical order and gives a stride (in elements) for each.
// For the spatial routines (convolution, pooling, normalization, softmax, resize) the order is
// N, C, then 1 to 3 spatial dims (D, H, W), so rank is 3 to 5. The memory layout is entirely in
// the strides: NCHW, NHWC, and any strided sub-region of a larger tensor are all expressible.
// The tensor routines (transform, op_tensor, reduce, pad, concat) and GEMM accept rank 1 to 8
// with no meaning attached to the dims.
#pragma once

#include <cstdint>
#include <initializer_list>

#include "jet/dnn/common.h"

namespace jet {

constexpr int kMaxRank = 8;

class TensorDesc {
 public:
  TensorDesc() = default;

  // Fully general: `rank` dims and strides, in elements. Not validated here; routines call
  // validate() and return BAD_PARAM for bad descriptors.
  static TensorDesc strided(DType dtype, int rank, const int64_t* dims, const int64_t* strides);
  static TensorDesc strided(DType dtype, std::initializer_list<int64_t> dims,
                            std::initializer_list<int64_t> strides);
  // Densely packed, row-major over the dims as given (the last dim is contiguous).
  static TensorDesc packed(DType dtype, int rank, const int64_t* dims);
  static TensorDesc packed(DType dtype, std::initializer_list<int64_t> dims);

  // Named layouts. Dims are always stored in N, C, spatial order.
  static TensorDesc ncw(DType t, int64_t n, int64_t c, int64_t w);
  static TensorDesc nwc(DType t, int64_t n, int64_t c, int64_t w);
  static TensorDesc nchw(DType t, int64_t n, int64_t c, int64_t h, int64_t w);
  static TensorDesc nhwc(DType t, int64_t n, int64_t c, int64_t h, int64_t w);
  static TensorDesc ncdhw(DType t, int64_t n, int64_t c, int64_t d, int64_t h, int64_t w);
  static TensorDesc ndhwc(DType t, int64_t n, int64_t c, int64_t d, int64_t h, int64_t w);
  // Channels-first or channels-last packing for a rank 3..5 N, C, spatial dims list.
  static TensorDesc channels_first(DType t, int rank, const int64_t* dims);
  static TensorDesc channels_last(DType t, int rank, const int64_t* dims);

  // BAD_PARAM unless: rank in [1, kMaxRank]; every dim >= 1; strides >= 0, with stride 0 only on
  // dims of size 1 (a broadcast view is an input-only concept, see op_tensor); no two elements
  // share an address (checked exactly: the dims sorted by stride must nest); the element span
  // fits in int64. `what` names the tensor in the message ("x", "y", ...).
  // The dtype must be F32 or F16 (NOT_SUPPORTED naming the dtype otherwise): the check of every
  // routine that computes in floating point.
  Status validate(const char* what) const;
  // As validate(), for any DType (the routines that take integer and bool tensors, the loader).
  Status validate_any_dtype(const char* what) const;
  // As validate(), and additionally rank in [3, 5] (N, C, 1-3 spatial dims).
  Status validate_spatial(const char* what) const;

  DType dtype() const { return dtype_; }
  int rank() const { return rank_; }
  int64_t dim(int i) const { return dims_[i]; }
  int64_t stride(int i) const { return strides_[i]; }
  const int64_t* dims() const { return dims_; }
  const int64_t* strides() const { return strides_; }
  int spatial_rank() const { return rank_ - 2; }

  int64_t elements() const;  // product of dims
  // 1 + the largest element offset: how many elements a buffer for this view must hold.
  int64_t span() const;
  size_t span_bytes() const { return static_cast<size_t>(span()) * dtype_size(dtype_); }
  bool is_packed() const;  // row-major dense over the dims as given

  bool same_dims(const TensorDesc& o) const;
  bool same_layout(const TensorDesc& o) const;  // same dims, strides and dtype

  // The same memory seen with a different dtype or with dims [begin, begin+len) along `axis`.
  // A sub-region keeps the parent's strides; the caller offsets the base pointer by
  // subregion_offset elements.
  TensorDesc with_dtype(DType t) const;
  TensorDesc subregion(int axis, int64_t begin, int64_t len) const;
  int64_t subregion_offset(int axis, int64_t begin) const { return begin * strides_[axis]; }

 private:
  DType dtype_ = DType::F32;
  int rank_ = 0;
  int64_t dims_[kMaxRank] = {};
  int64_t strides_[kMaxRank] = {};
};

// Filter layouts. Dims are always reported K, C/groups, then spatial (D, H, W); the layout
// decides the strides.
enum class FilterLayout : int32_t {
  KCRS = 0,  // K, C, [T,] R, S  (PyTorch / ONNX weights)
  KRSC = 1,  // K, [T,] R, S, C  (channels last, for NHWC convolutions)
};

class FilterDesc {
 public:
  FilterDesc() = default;
  // `rank` counts K and C: 3 for 1D, 4 for 2D, 5 for 3D filters. dims = {K, C/groups, spatial...}.
  static FilterDesc make(DType dtype, FilterLayout layout, int rank, const int64_t* dims);
  static FilterDesc kcrs(DType t, int64_t k, int64_t c, int64_t r, int64_t s);
  static FilterDesc krsc(DType t, int64_t k, int64_t c, int64_t r, int64_t s);

  Status validate(const char* what) const;  // rank 3..5, dims >= 1

  DType dtype() const { return dtype_; }
  FilterLayout layout() const { return layout_; }
  int rank() const { return rank_; }
  int spatial_rank() const { return rank_ - 2; }
  int64_t k() const { return dims_[0]; }
  int64_t c() const { return dims_[1]; }  // input channels per group
  int64_t spatial(int i) const { return dims_[2 + i]; }
  int64_t dim(int i) const { return dims_[i]; }
  // The filter as a plain tensor (dims K, C, spatial with the layout's strides).
  TensorDesc as_tensor() const;
  int64_t elements() const;
  size_t bytes() const { return static_cast<size_t>(elements()) * dtype_size(dtype_); }

 private:
  DType dtype_ = DType::F32;
  FilterLayout layout_ = FilterLayout::KCRS;
  int rank_ = 0;
  int64_t dims_[5] = {};
};

}  // namespace jet
