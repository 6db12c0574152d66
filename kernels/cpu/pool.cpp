// PoolDesc construction and validation, pool_output_dims, and pool_forward: validation and
// backend dispatch.
//
// CPU pooling: for every output element, the taps of its window that land inside x are found per
// axis (a contiguous range of tap indices, since taps are evenly spaced), then visited.
// The front end guarantees every window holds at least one tap inside x.

#include <algorithm>
#include <cmath>
#include <limits>

#include "../api/backend.h"
#include "../api/check.h"
#include "cpu_common.h"
#include "../common/small_sort.h"

namespace jet {

JET_BACKEND_ENTRIES(pool_forward, const PoolDesc& pool, float alpha, const TensorDesc& x_desc,
                    const void* x, float beta, const TensorDesc& y_desc, void* y);

namespace {

// Window, stride, dilation and pads are capped so that the output-size arithmetic
// ((window - 1) * dilation + pads + input extent) cannot overflow int64.
constexpr int64_t kMaxPoolParam = int64_t(1) << 31;

const char* pool_mode_name(PoolMode m) {
  switch (m) {
    case PoolMode::MAX: return "max";
    case PoolMode::AVG_INCLUDE_PAD: return "avg_include_pad";
    case PoolMode::AVG_EXCLUDE_PAD: return "avg_exclude_pad";
  }
  return "unknown-pool-mode";
}

// The window along spatial dim i as actually applied to x: for global pooling the whole extent
// of x with no padding, stride 1 and dilation 1.
struct PoolAxis {
  int64_t in, window, pad_begin, pad_end, stride, dilation;
};

PoolAxis pool_axis(const PoolDesc& pool, const TensorDesc& x_desc, int i) {
  const int64_t in = x_desc.dim(2 + i);
  if (pool.is_global()) return {in, in, 0, 0, 1, 1};
  return {in, pool.window(i), pool.pad_begin(i), pool.pad_end(i), pool.stride(i),
          pool.dilation(i)};
}

// Output extent along one axis, or -1 when the (dilated) window is larger than the padded input.
int64_t pool_axis_output(const PoolAxis& a, bool ceil_mode) {
  const int64_t effective = (a.window - 1) * a.dilation + 1;
  const int64_t room = a.in + a.pad_begin + a.pad_end - effective;
  if (room < 0) return -1;
  int64_t out = (ceil_mode ? (room + a.stride - 1) / a.stride : room / a.stride) + 1;
  // PyTorch / ONNX: with ceil_mode, the last window must start inside the input or the begin
  // padding; one that would start in the end padding is dropped.
  if (ceil_mode && (out - 1) * a.stride >= a.in + a.pad_begin) --out;
  return out;
}

// Dims checks shared by pool_output_dims and pool_forward. `fn` names the routine.
Status pool_dims(const char* fn, const TensorDesc& x_desc, const PoolDesc& pool,
                 int64_t* out_dims) {
  JET_RETURN_IF_ERROR(in_routine(fn, pool.validate()));
  JET_RETURN_IF_ERROR(in_routine(fn, x_desc.validate_spatial("x")));
  if (pool.spatial_rank() != x_desc.spatial_rank())
    return make_status(StatusCode::BAD_PARAM,
                       "%s: the pooling descriptor has %d spatial dims but x (dims %s) has %d",
                       fn, pool.spatial_rank(), dims_text(x_desc.rank(), x_desc.dims()).c_str(),
                       x_desc.spatial_rank());
  out_dims[0] = x_desc.dim(0);
  out_dims[1] = x_desc.dim(1);
  for (int i = 0; i < pool.spatial_rank(); ++i) {
    const PoolAxis a = pool_axis(pool, x_desc, i);
    const int64_t out = pool_axis_output(a, pool.ceil_mode() && !pool.is_global());
    if (out < 1)
      return make_status(StatusCode::BAD_PARAM,
                         "%s: along spatial dim %d the window (%lld with dilation %lld) is larger "
                         "than x's extent %lld plus padding %lld + %lld",
                         fn, i, static_cast<long long>(a.window),
                         static_cast<long long>(a.dilation), static_cast<long long>(a.in),
                         static_cast<long long>(a.pad_begin), static_cast<long long>(a.pad_end));
    out_dims[2 + i] = out;
  }
  return Status();
}

}  // namespace

PoolDesc PoolDesc::make(PoolMode mode, int spatial_rank, const int64_t* window,
                        const int64_t* pad_begin, const int64_t* pad_end, const int64_t* stride,
                        const int64_t* dilation, bool ceil_mode) {
  PoolDesc p;
  p.mode_ = mode;
  p.spatial_rank_ = spatial_rank;
  p.ceil_mode_ = ceil_mode;
  if (spatial_rank < 1 || spatial_rank > 3) return p;  // validate() reports the bad rank
  for (int i = 0; i < spatial_rank; ++i) {
    p.window_[i] = window ? window[i] : 0;  // no window: validate() reports it
    p.pad_begin_[i] = pad_begin ? pad_begin[i] : 0;
    p.pad_end_[i] = pad_end ? pad_end[i] : 0;
    p.stride_[i] = stride ? stride[i] : 1;
    p.dilation_[i] = dilation ? dilation[i] : 1;
  }
  return p;
}

PoolDesc PoolDesc::pool2d(PoolMode mode, int64_t win_h, int64_t win_w, int64_t pad_h,
                          int64_t pad_w, int64_t stride_h, int64_t stride_w, bool ceil_mode) {
  const int64_t window[2] = {win_h, win_w};
  const int64_t pad[2] = {pad_h, pad_w};
  const int64_t stride[2] = {stride_h, stride_w};
  return make(mode, 2, window, pad, pad, stride, nullptr, ceil_mode);
}

PoolDesc PoolDesc::global(PoolMode mode, int spatial_rank) {
  PoolDesc p;
  p.mode_ = mode;
  p.spatial_rank_ = spatial_rank;
  p.global_ = true;
  return p;
}

Status PoolDesc::validate() const {
  const int m = static_cast<int>(mode_);
  if (!enum_in_range<PoolMode>(m))
    return make_status(StatusCode::BAD_PARAM, "pooling: unknown mode %d", m);
  if (spatial_rank_ < 1 || spatial_rank_ > 3)
    return make_status(StatusCode::BAD_PARAM, "pooling %s: spatial rank %d is outside [1, 3]",
                       pool_mode_name(mode_), spatial_rank_);
  if (global_) return Status();  // window, pads and strides come from x
  for (int i = 0; i < spatial_rank_; ++i) {
    const long long w = window_[i], s = stride_[i], d = dilation_[i];
    const long long pb = pad_begin_[i], pe = pad_end_[i];
    if (w < 1 || w > kMaxPoolParam)
      return make_status(StatusCode::BAD_PARAM,
                         "pooling %s: window %lld along spatial dim %d is outside [1, 2^31]",
                         pool_mode_name(mode_), w, i);
    if (s < 1 || s > kMaxPoolParam)
      return make_status(StatusCode::BAD_PARAM,
                         "pooling %s: stride %lld along spatial dim %d is outside [1, 2^31]",
                         pool_mode_name(mode_), s, i);
    if (d < 1 || d > kMaxPoolParam)
      return make_status(StatusCode::BAD_PARAM,
                         "pooling %s: dilation %lld along spatial dim %d is outside [1, 2^31]",
                         pool_mode_name(mode_), d, i);
    // A window made only of padding is not allowed: the pads must be smaller than the dilated
    // window's extent, (window - 1) * dilation + 1.
    const long long effective = (w - 1) * d + 1;
    if (pb < 0 || pe < 0 || pb >= effective || pe >= effective)
      return make_status(StatusCode::BAD_PARAM,
                         "pooling %s: pads %lld, %lld along spatial dim %d must be >= 0 and "
                         "smaller than the window extent %lld (window %lld, dilation %lld)",
                         pool_mode_name(mode_), pb, pe, i, effective, w, d);
  }
  return Status();
}

Status pool_output_dims(const TensorDesc& x_desc, const PoolDesc& pool, int64_t* out_dims) {
  const char* fn = "pool_output_dims";
  JET_RETURN_IF_ERROR(check_ptr(fn, out_dims, "out_dims"));
  int64_t dims[5];
  JET_RETURN_IF_ERROR(pool_dims(fn, x_desc, pool, dims));
  for (int i = 0; i < x_desc.rank(); ++i) out_dims[i] = dims[i];
  return Status();
}

Status pool_forward(const Handle& handle, const PoolDesc& pool, float alpha,
                    const TensorDesc& x_desc, const void* x, float beta,
                    const TensorDesc& y_desc, void* y) {
  const char* fn = "pool_forward";
  int64_t out_dims[5];
  JET_RETURN_IF_ERROR(pool_dims(fn, x_desc, pool, out_dims));
  JET_RETURN_IF_ERROR(in_routine(fn, y_desc.validate_spatial("y")));
  if (y_desc.rank() != x_desc.rank() || !std::equal(out_dims, out_dims + x_desc.rank(), y_desc.dims()))
    return make_status(StatusCode::BAD_PARAM, "%s: y has dims %s but pooling x gives %s", fn,
                       dims_text(y_desc.rank(), y_desc.dims()).c_str(),
                       dims_text(x_desc.rank(), out_dims).c_str());
  JET_RETURN_IF_ERROR(check_same_dtype(fn, x_desc, "x", y_desc, "y"));
  // With dilation, a window may straddle x without any of its taps landing inside it (e.g. x of
  // extent 1, window 2, dilation 2, pad 1). Such a window has no defined max or average.
  for (int i = 0; i < pool.spatial_rank(); ++i) {
    const PoolAxis a = pool_axis(pool, x_desc, i);
    if (a.dilation == 1) continue;  // pad < window: every window holds an input element
    for (int64_t o = 0; o < out_dims[2 + i]; ++o) {
      const int64_t start = o * a.stride - a.pad_begin;
      // First tap at or after 0: start + k * dilation >= 0.
      const int64_t k = start >= 0 ? 0 : (-start + a.dilation - 1) / a.dilation;
      if (k >= a.window || start + k * a.dilation >= a.in)
        return make_status(StatusCode::BAD_PARAM,
                           "%s: along spatial dim %d, output %lld's window (start %lld, window "
                           "%lld, dilation %lld) has no tap inside x's extent %lld",
                           fn, i, static_cast<long long>(o), static_cast<long long>(start),
                           static_cast<long long>(a.window), static_cast<long long>(a.dilation),
                           static_cast<long long>(a.in));
    }
  }
  JET_RETURN_IF_ERROR(check_ptr(fn, x, "x"));
  JET_RETURN_IF_ERROR(check_ptr(fn, y, "y"));
  if (handle.backend() == Backend::CPU)
    return cpu::pool_forward(pool, alpha, x_desc, x, beta, y_desc, y);
#if defined(JET_HAVE_CUDA)
  return cuda::pool_forward(handle, pool, alpha, x_desc, x, beta, y_desc, y);
#else
  return cuda_not_available(fn);
#endif
}

// ---------------------------------------------------------------------------------------------
// The CPU backend (cpu::), called by the front end above.

namespace cpu {

namespace {

// One spatial axis as applied to x (global pooling: the whole extent, no padding). Unused axes
// of 1D/2D pooling are a trivial axis with one tap at offset 0.
struct Axis {
  int64_t in = 1, window = 1, pad_begin = 0, pad_end = 0, stride = 1, dilation = 1;
  int64_t x_stride = 0;
};

// The taps of one output position along one axis: tap k sits at input index start + k * dilation;
// those inside x are k in [k_begin, k_end). `inside_padded` counts the taps inside
// [-pad_begin, in + pad_end), the divisor of AVG_INCLUDE_PAD (fewer than the window only for a
// ceil_mode window that runs past the end padding, as in PyTorch).
struct Taps {
  int64_t start, k_begin, k_end, inside_padded;
};

int64_t floor_div(int64_t a, int64_t b) {  // b > 0
  return a >= 0 ? a / b : -((-a + b - 1) / b);
}

Taps taps_of(const Axis& a, int64_t o) {
  Taps t;
  t.start = o * a.stride - a.pad_begin;
  t.k_begin = t.start >= 0 ? 0 : (-t.start + a.dilation - 1) / a.dilation;
  t.k_end = std::min(a.window, floor_div(a.in - 1 - t.start, a.dilation) + 1);
  if (t.k_end < t.k_begin) t.k_end = t.k_begin;
  // start >= -pad_begin always, so only the end of the padded range can cut taps off.
  t.inside_padded = std::min(a.window, floor_div(a.in + a.pad_end - 1 - t.start, a.dilation) + 1);
  return t;
}

}  // namespace

Status pool_forward(const PoolDesc& pool, float alpha, const TensorDesc& x_desc, const void* x,
                    float beta, const TensorDesc& y_desc, void* y) {
  const DType t = x_desc.dtype();
  const int rank = y_desc.rank();
  const int spatial = pool.spatial_rank();
  const PoolMode mode = pool.mode();

  Axis axes[3];
  for (int i = 0; i < spatial; ++i) {
    Axis& a = axes[i];
    a.in = x_desc.dim(2 + i);
    a.x_stride = x_desc.stride(2 + i);
    if (pool.is_global()) {
      a.window = a.in;
    } else {
      a.window = pool.window(i);
      a.pad_begin = pool.pad_begin(i);
      a.pad_end = pool.pad_end(i);
      a.stride = pool.stride(i);
      a.dilation = pool.dilation(i);
    }
  }

  // Visit y in its memory order (dims sorted by decreasing stride) for locality; every output
  // element is independent, so the order does not change the result.
  int order[5];
  for (int i = 0; i < rank; ++i) order[i] = i;
  small_stable_sort(order, rank,
                   [&](int a, int b) { return y_desc.stride(a) > y_desc.stride(b); });
  int64_t walk_dims[5], walk_strides[5];
  for (int j = 0; j < rank; ++j) {
    walk_dims[j] = y_desc.dim(order[j]);
    walk_strides[j] = y_desc.stride(order[j]);
  }

  StridedWalk w(rank, walk_dims, walk_strides);
  do {
    int64_t idx[5] = {0, 0, 0, 0, 0};
    for (int j = 0; j < rank; ++j) idx[order[j]] = w.idx[j];

    const int64_t x_base = idx[0] * x_desc.stride(0) + idx[1] * x_desc.stride(1);
    Taps tp[3];
    int64_t divisor = 1;
    for (int i = 0; i < 3; ++i) {
      tp[i] = i < spatial ? taps_of(axes[i], idx[2 + i]) : Taps{0, 0, 1, 1};
      divisor *= mode == PoolMode::AVG_INCLUDE_PAD ? tp[i].inside_padded
                                                   : tp[i].k_end - tp[i].k_begin;
    }

    float max_v = -std::numeric_limits<float>::infinity();
    double sum = 0.0;  // double: long global averages keep f32 accuracy
    for (int64_t k0 = tp[0].k_begin; k0 < tp[0].k_end; ++k0) {
      const int64_t off0 = x_base + (tp[0].start + k0 * axes[0].dilation) * axes[0].x_stride;
      for (int64_t k1 = tp[1].k_begin; k1 < tp[1].k_end; ++k1) {
        const int64_t off1 = off0 + (tp[1].start + k1 * axes[1].dilation) * axes[1].x_stride;
        for (int64_t k2 = tp[2].k_begin; k2 < tp[2].k_end; ++k2) {
          const int64_t off = off1 + (tp[2].start + k2 * axes[2].dilation) * axes[2].x_stride;
          const float v = load(t, x, off);
          if (mode == PoolMode::MAX) {
            if (v > max_v || std::isnan(v)) max_v = v;  // NaN propagates, as in PyTorch
          } else {
            sum += v;
          }
        }
      }
    }
    const float result =
        mode == PoolMode::MAX ? max_v : static_cast<float>(sum / static_cast<double>(divisor));
    blend_store(t, y, w.off[0], alpha, result, beta);
  } while (w.next());
  return Status();
}

}  // namespace cpu

}  // namespace jet
