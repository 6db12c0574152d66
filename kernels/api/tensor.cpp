// TensorDesc and FilterDesc: construction helpers and validation.
#include <limits>

#include "check.h"

namespace jet {

TensorDesc TensorDesc::strided(DType dtype, int rank, const int64_t* dims,
                               const int64_t* strides) {
  TensorDesc d;
  d.dtype_ = dtype;
  d.rank_ = rank;
  if (rank < 0 || rank > kMaxRank) return d;  // validate() reports the bad rank
  for (int i = 0; i < rank; ++i) {
    d.dims_[i] = dims[i];
    d.strides_[i] = strides[i];
  }
  return d;
}

TensorDesc TensorDesc::strided(DType dtype, std::initializer_list<int64_t> dims,
                               std::initializer_list<int64_t> strides) {
  if (dims.size() != strides.size()) {
    TensorDesc d;
    d.dtype_ = dtype;
    d.rank_ = -1;  // rejected by validate()
    return d;
  }
  return strided(dtype, static_cast<int>(dims.size()), dims.begin(), strides.begin());
}

TensorDesc TensorDesc::packed(DType dtype, int rank, const int64_t* dims) {
  int64_t strides[kMaxRank] = {};
  if (rank >= 1 && rank <= kMaxRank) {
    int64_t s = 1;
    for (int i = rank - 1; i >= 0; --i) {
      strides[i] = s;
      s *= dims[i] > 0 ? dims[i] : 1;
    }
  }
  return strided(dtype, rank, dims, strides);
}

TensorDesc TensorDesc::packed(DType dtype, std::initializer_list<int64_t> dims) {
  return packed(dtype, static_cast<int>(dims.size()), dims.begin());
}

TensorDesc TensorDesc::channels_first(DType t, int rank, const int64_t* dims) {
  return packed(t, rank, dims);
}

TensorDesc TensorDesc::channels_last(DType t, int rank, const int64_t* dims) {
  if (rank < 3 || rank > 5) return packed(t, rank, dims);  // validate_spatial() rejects it
  // Memory order: N, spatial..., C.
  int64_t strides[5];
  int64_t s = 1;
  strides[1] = s;
  s *= dims[1] > 0 ? dims[1] : 1;
  for (int i = rank - 1; i >= 2; --i) {
    strides[i] = s;
    s *= dims[i] > 0 ? dims[i] : 1;
  }
  strides[0] = s;
  return strided(t, rank, dims, strides);
}

TensorDesc TensorDesc::ncw(DType t, int64_t n, int64_t c, int64_t w) {
  const int64_t d[3] = {n, c, w};
  return channels_first(t, 3, d);
}
TensorDesc TensorDesc::nwc(DType t, int64_t n, int64_t c, int64_t w) {
  const int64_t d[3] = {n, c, w};
  return channels_last(t, 3, d);
}
TensorDesc TensorDesc::nchw(DType t, int64_t n, int64_t c, int64_t h, int64_t w) {
  const int64_t d[4] = {n, c, h, w};
  return channels_first(t, 4, d);
}
TensorDesc TensorDesc::nhwc(DType t, int64_t n, int64_t c, int64_t h, int64_t w) {
  const int64_t d[4] = {n, c, h, w};
  return channels_last(t, 4, d);
}
TensorDesc TensorDesc::ncdhw(DType t, int64_t n, int64_t c, int64_t dd, int64_t h, int64_t w) {
  const int64_t d[5] = {n, c, dd, h, w};
  return channels_first(t, 5, d);
}
TensorDesc TensorDesc::ndhwc(DType t, int64_t n, int64_t c, int64_t dd, int64_t h, int64_t w) {
  const int64_t d[5] = {n, c, dd, h, w};
  return channels_last(t, 5, d);
}

Status TensorDesc::validate(const char* what) const {
  JET_RETURN_IF_ERROR(validate_any_dtype(what));
  if (!dtype_is_float(dtype_))
    return make_status(StatusCode::NOT_SUPPORTED, "%s is %s; this routine takes f32 or f16 tensors",
                       what, dtype_name(dtype_));
  return Status();
}

Status TensorDesc::validate_any_dtype(const char* what) const {
  if (rank_ < 1 || rank_ > kMaxRank)
    return make_status(StatusCode::BAD_PARAM, "%s: rank %d is outside [1, %d]", what, rank_,
                       kMaxRank);
  if (!dtype_is_valid(static_cast<int64_t>(dtype_)))
    return make_status(StatusCode::BAD_PARAM, "%s: unknown dtype %d", what,
                       static_cast<int>(dtype_));
  const int64_t kLimit = std::numeric_limits<int64_t>::max() / 16;
  int64_t elems = 1;
  for (int i = 0; i < rank_; ++i) {
    if (dims_[i] < 1)
      return make_status(StatusCode::BAD_PARAM, "%s: dim %d is %lld; dims must be >= 1 (dims %s)",
                         what, i, static_cast<long long>(dims_[i]),
                         dims_text(rank_, dims_).c_str());
    if (strides_[i] < 0)
      return make_status(StatusCode::BAD_PARAM, "%s: stride %d is %lld; strides must be >= 0",
                         what, i, static_cast<long long>(strides_[i]));
    if (strides_[i] == 0 && dims_[i] > 1)
      return make_status(StatusCode::BAD_PARAM,
                         "%s: stride %d is 0 on a dim of size %lld: elements would overlap", what,
                         i, static_cast<long long>(dims_[i]));
    if (elems > kLimit / dims_[i])
      return make_status(StatusCode::BAD_PARAM, "%s: element count overflows (dims %s)", what,
                         dims_text(rank_, dims_).c_str());
    elems *= dims_[i];
  }
  // Non-overlap: sort the dims of size > 1 by stride; each stride must be at least the extent
  // of all smaller-strided dims (the nesting rule; it also rejects exotic interleavings).
  int order[kMaxRank];
  int n = 0;
  for (int i = 0; i < rank_; ++i)
    if (dims_[i] > 1) order[n++] = i;
  for (int j = 1; j < n; ++j) {  // insertion sort by stride (ties: later dim first)
    const int v = order[j];
    int k = j;
    for (; k > 0; --k) {
      const int u = order[k - 1];
      if (strides_[u] < strides_[v] || (strides_[u] == strides_[v] && u > v)) break;
      order[k] = u;
    }
    order[k] = v;
  }
  int64_t extent = 1;  // elements covered by the dims so far
  for (int j = 0; j < n; ++j) {
    const int i = order[j];
    if (strides_[i] < extent)
      return make_status(StatusCode::BAD_PARAM,
                         "%s: strides %s overlap for dims %s (dim %d's stride %lld is smaller "
                         "than the %lld elements spanned by the dims inside it)",
                         what, dims_text(rank_, strides_).c_str(),
                         dims_text(rank_, dims_).c_str(), i,
                         static_cast<long long>(strides_[i]), static_cast<long long>(extent));
    if (strides_[i] > kLimit / dims_[i])
      return make_status(StatusCode::BAD_PARAM, "%s: element span overflows (strides %s)", what,
                         dims_text(rank_, strides_).c_str());
    extent = strides_[i] * (dims_[i] - 1) + extent;
  }
  return Status();
}

Status TensorDesc::validate_spatial(const char* what) const {
  JET_RETURN_IF_ERROR(validate(what));
  if (rank_ < 3 || rank_ > 5)
    return make_status(StatusCode::BAD_PARAM,
                       "%s: rank %d, but this routine needs rank 3 to 5 (N, C, 1-3 spatial dims)",
                       what, rank_);
  return Status();
}

int64_t TensorDesc::elements() const {
  int64_t e = 1;
  for (int i = 0; i < rank_; ++i) e *= dims_[i];
  return e;
}

int64_t TensorDesc::span() const {
  int64_t s = 1;
  for (int i = 0; i < rank_; ++i) s += (dims_[i] - 1) * strides_[i];
  return s;
}

bool TensorDesc::is_packed() const {
  int64_t s = 1;
  for (int i = rank_ - 1; i >= 0; --i) {
    if (dims_[i] != 1 && strides_[i] != s) return false;
    s *= dims_[i];
  }
  return true;
}

bool TensorDesc::same_dims(const TensorDesc& o) const {
  if (rank_ != o.rank_) return false;
  for (int i = 0; i < rank_; ++i)
    if (dims_[i] != o.dims_[i]) return false;
  return true;
}

bool TensorDesc::same_layout(const TensorDesc& o) const {
  if (!same_dims(o) || dtype_ != o.dtype_) return false;
  for (int i = 0; i < rank_; ++i)
    if (dims_[i] > 1 && strides_[i] != o.strides_[i]) return false;
  return true;
}

TensorDesc TensorDesc::with_dtype(DType t) const {
  TensorDesc d = *this;
  d.dtype_ = t;
  return d;
}

TensorDesc TensorDesc::subregion(int axis, int64_t begin, int64_t len) const {
  TensorDesc d = *this;
  (void)begin;  // the caller offsets the pointer by subregion_offset()
  if (axis >= 0 && axis < rank_) d.dims_[axis] = len;
  return d;
}

// ---- FilterDesc ----

FilterDesc FilterDesc::make(DType dtype, FilterLayout layout, int rank, const int64_t* dims) {
  FilterDesc f;
  f.dtype_ = dtype;
  f.layout_ = layout;
  f.rank_ = rank;
  if (rank < 3 || rank > 5) return f;  // validate() reports it
  for (int i = 0; i < rank; ++i) f.dims_[i] = dims[i];
  return f;
}

FilterDesc FilterDesc::kcrs(DType t, int64_t k, int64_t c, int64_t r, int64_t s) {
  const int64_t d[4] = {k, c, r, s};
  return make(t, FilterLayout::KCRS, 4, d);
}

FilterDesc FilterDesc::krsc(DType t, int64_t k, int64_t c, int64_t r, int64_t s) {
  const int64_t d[4] = {k, c, r, s};
  return make(t, FilterLayout::KRSC, 4, d);
}

Status FilterDesc::validate(const char* what) const {
  if (rank_ < 3 || rank_ > 5)
    return make_status(StatusCode::BAD_PARAM,
                       "%s: filter rank %d is outside [3, 5] (K, C, 1-3 spatial dims)", what,
                       rank_);
  if (dtype_ != DType::F32 && dtype_ != DType::F16)
    return make_status(StatusCode::BAD_PARAM, "%s: unknown dtype %d", what,
                       static_cast<int>(dtype_));
  if (layout_ != FilterLayout::KCRS && layout_ != FilterLayout::KRSC)
    return make_status(StatusCode::BAD_PARAM, "%s: unknown filter layout %d", what,
                       static_cast<int>(layout_));
  for (int i = 0; i < rank_; ++i)
    if (dims_[i] < 1)
      return make_status(StatusCode::BAD_PARAM, "%s: filter dim %d is %lld; dims must be >= 1",
                         what, i, static_cast<long long>(dims_[i]));
  return as_tensor().validate(what);  // catches overflow
}

TensorDesc FilterDesc::as_tensor() const {
  if (layout_ == FilterLayout::KRSC) return TensorDesc::channels_last(dtype_, rank_, dims_);
  return TensorDesc::channels_first(dtype_, rank_, dims_);
}

int64_t FilterDesc::elements() const {
  int64_t e = 1;
  for (int i = 0; i < rank_; ++i) e *= dims_[i];
  return e;
}

}  // namespace jet
