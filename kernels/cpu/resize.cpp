// resize_forward: validation and backend dispatch; below, the CPU backend.
//
// CPU resize_forward: NEAREST and (bi/tri)LINEAR over the spatial dims, ONNX Resize semantics.
//
// Coordinates are mapped in double: rounding ties in NEAREST (e.g. o / 2 = 1.5 exactly) must be
// decided on the exact value the formula gives, not on an f32 approximation of it.

#include <cmath>

#include "../api/backend.h"
#include "../api/check.h"
#include "../common/resize_math.h"
#include "cpu_common.h"

namespace jet {

JET_BACKEND_ENTRIES(resize_forward, const ResizeDesc& resize, float alpha, const TensorDesc& x_desc,
                    const void* x, float beta, const TensorDesc& y_desc, void* y);

Status resize_forward(const Handle& handle, const ResizeDesc& resize, float alpha,
                      const TensorDesc& x_desc, const void* x, float beta,
                      const TensorDesc& y_desc, void* y) {
  const char* fn = "resize_forward";
  const int mode = static_cast<int>(resize.mode);
  if (!enum_in_range<ResizeMode>(mode))
    return make_status(StatusCode::BAD_PARAM, "%s: unknown resize mode %d", fn, mode);
  const int coord = static_cast<int>(resize.coord);
  if (!enum_in_range<ResizeCoord>(coord))
    return make_status(StatusCode::BAD_PARAM, "%s: unknown coordinate transformation mode %d", fn,
                       coord);
  const int nearest = static_cast<int>(resize.nearest);
  if (!enum_in_range<ResizeNearest>(nearest))
    return make_status(StatusCode::BAD_PARAM, "%s: unknown nearest rounding mode %d", fn, nearest);
  if (resize.mode == ResizeMode::CUBIC && !std::isfinite(resize.cubic_coeff_a))
    return make_status(StatusCode::INVALID_VALUE, "%s: cubic_coeff_a = %g must be finite", fn,
                       static_cast<double>(resize.cubic_coeff_a));
  JET_RETURN_IF_ERROR(check_reshaping_io(fn, Ranks::SPATIAL, x_desc, x, y_desc, y));
  if (x_desc.dim(0) != y_desc.dim(0) || x_desc.dim(1) != y_desc.dim(1))
    return make_status(StatusCode::BAD_PARAM,
                       "%s: x has dims %s but y has dims %s; resize keeps N and C", fn,
                       dims_text(x_desc.rank(), x_desc.dims()).c_str(),
                       dims_text(y_desc.rank(), y_desc.dims()).c_str());
  // Only the scales of the spatial dims are used; the rest are ignored.
  for (int i = 0; i < x_desc.spatial_rank(); ++i) {
    if (!std::isfinite(resize.scales[i]) || resize.scales[i] < 0.f)
      return make_status(StatusCode::INVALID_VALUE,
                         "%s: scales[%d] = %g must be finite and >= 0 (0 means out / in)", fn, i,
                         static_cast<double>(resize.scales[i]));
  }
  if (handle.backend() == Backend::CPU)
    return cpu::resize_forward(resize, alpha, x_desc, x, beta, y_desc, y);
#if defined(JET_HAVE_CUDA)
  return cuda::resize_forward(handle, resize, alpha, x_desc, x, beta, y_desc, y);
#else
  return cuda_not_available(fn);
#endif
}

// ---------------------------------------------------------------------------------------------
// The CPU backend (cpu::), called by the front end above.

namespace cpu {
namespace {

// One spatial axis: sizes and the scale used by the coordinate formulas.
struct ResizeAxis {
  int64_t in = 1;
  int64_t out = 1;
  double scale = 1.0;  // out / in unless the caller gave one
};

// ONNX's coordinate_transformation_mode: the input coordinate sampled by output index o.
double source_coordinate(ResizeCoord coord, const ResizeAxis& a, int64_t o) {
  const double od = static_cast<double>(o);
  switch (coord) {
    case ResizeCoord::HALF_PIXEL: return (od + 0.5) / a.scale - 0.5;
    case ResizeCoord::ALIGN_CORNERS: {
      // ONNX divides by the unrounded resized length in * scale (= out without given scales).
      const double resized = static_cast<double>(a.in) * a.scale;
      return resized <= 1.0 ? 0.0 : od * static_cast<double>(a.in - 1) / (resized - 1.0);
    }
    case ResizeCoord::ASYMMETRIC: return od / a.scale;
    case ResizeCoord::PYTORCH_HALF_PIXEL: return a.out > 1 ? (od + 0.5) / a.scale - 0.5 : 0.0;
    case ResizeCoord::TF_HALF_PIXEL_FOR_NN: return (od + 0.5) / a.scale;
  }
  return 0.0;
}

// Clamping the coordinate to [0, in - 1] first gives the same index as rounding then clamping
// the index (every rounding of c < 0 is <= 0, of c > in - 1 is >= in - 1), and keeps the
// integer conversion in range for huge coordinates.
double clamp_coordinate(double c, int64_t in) {
  const double hi = static_cast<double>(in - 1);
  return c < 0.0 ? 0.0 : (c > hi ? hi : c);
}

int64_t nearest_index(const ResizeDesc& r, const ResizeAxis& a, int64_t o) {
  const double c = clamp_coordinate(source_coordinate(r.coord, a, o), a.in);
  const double f = std::floor(c);
  const double frac = c - f;
  int64_t i = static_cast<int64_t>(f);
  switch (r.nearest) {
    case ResizeNearest::ROUND_PREFER_FLOOR: i += frac > 0.5 ? 1 : 0; break;
    case ResizeNearest::ROUND_PREFER_CEIL: i += frac >= 0.5 ? 1 : 0; break;
    case ResizeNearest::FLOOR: break;
    case ResizeNearest::CEIL: i += frac > 0.0 ? 1 : 0; break;
  }
  return i < a.in ? i : a.in - 1;
}

// LINEAR: the value is (1 - w) * x[i0] + w * x[i1].
struct LinearTaps {
  int64_t i0 = 0;
  int64_t i1 = 0;
  float w = 0.f;
};

LinearTaps linear_taps(const ResizeDesc& r, const ResizeAxis& a, int64_t o) {
  const double c = clamp_coordinate(source_coordinate(r.coord, a, o), a.in);
  LinearTaps t;
  t.i0 = static_cast<int64_t>(std::floor(c));
  t.i1 = t.i0 + 1 < a.in ? t.i0 + 1 : t.i0;
  t.w = static_cast<float>(c - static_cast<double>(t.i0));
  return t;
}

// CUBIC's source coordinate: as the other modes, but pytorch_half_pixel maps an output of length
// 1 to -0.5 (ONNX's reference; the clamped modes see 0 either way).
CubicTaps cubic_axis(const ResizeDesc& r, const ResizeAxis& a, int64_t o) {
  const double c = r.coord == ResizeCoord::PYTORCH_HALF_PIXEL && a.out == 1 ? -0.5 : source_coordinate(r.coord, a, o);
  return cubic_taps(c, a.in, static_cast<double>(r.cubic_coeff_a), r.exclude_outside);
}

// CUBIC: every output element sums 4^spatial taps (the product of the axes' weights).
void resize_cubic(const ResizeDesc& r, const ResizeAxis* axes, int spatial, float alpha,
                  const TensorDesc& x_desc, const void* x, float beta, const TensorDesc& y_desc,
                  void* y) {
  const DType t = x_desc.dtype();
  StridedWalk w(y_desc.rank(), y_desc.dims(), y_desc.strides());
  do {
    CubicTaps taps[3];
    for (int k = 0; k < spatial; ++k) taps[k] = cubic_axis(r, axes[k], w.idx[2 + k]);
    const int64_t base = w.idx[0] * x_desc.stride(0) + w.idx[1] * x_desc.stride(1);
    int combos = 1;
    for (int k = 0; k < spatial; ++k) combos *= 4;
    float v = 0.f;
    for (int m = 0; m < combos; ++m) {
      int64_t off = base;
      float wt = 1.f;
      int rest = m;
      for (int k = spatial - 1; k >= 0; --k) {
        const int j = rest % 4;
        rest /= 4;
        off += taps[k].idx[j] * x_desc.stride(2 + k);
        wt *= taps[k].w[j];
      }
      if (wt != 0.f) v += wt * load(t, x, off);  // a zero weight never turns inf into NaN
    }
    blend_store(t, y, w.off[0], alpha, v, beta);
  } while (w.next());
}

// Up to this many output columns share one table of precomputed row taps (on the stack).
constexpr int64_t kColumnChunk = 256;

}  // namespace

Status resize_forward(const ResizeDesc& resize, float alpha, const TensorDesc& x_desc,
                      const void* x, float beta, const TensorDesc& y_desc, void* y) {
  const DType t = x_desc.dtype();
  const int rank = x_desc.rank();
  const int spatial = rank - 2;
  ResizeAxis axes[3];
  for (int k = 0; k < spatial; ++k) {
    axes[k].in = x_desc.dim(2 + k);
    axes[k].out = y_desc.dim(2 + k);
    axes[k].scale = resize.scales[k] > 0.f
                        ? static_cast<double>(resize.scales[k])
                        : static_cast<double>(axes[k].out) / static_cast<double>(axes[k].in);
  }
  if (resize.mode == ResizeMode::CUBIC) {
    resize_cubic(resize, axes, spatial, alpha, x_desc, x, beta, y_desc, y);
    return Status();
  }
  const int last = rank - 1;  // the row: always a spatial dim
  const int outer = spatial - 1;  // spatial dims outside the row (0 to 2)
  const ResizeAxis& row_axis = axes[outer];
  const int64_t x_col_stride = x_desc.stride(last);
  const int64_t y_col_stride = y_desc.stride(last);
  const bool linear = resize.mode == ResizeMode::LINEAR;

  // The row's taps depend only on the output column, so they are computed once per chunk of
  // columns and reused by every row (N, C and the outer spatial dims) of that chunk.
  int64_t col_off0[kColumnChunk];  // x offset of the (first) tap along the row
  int64_t col_off1[kColumnChunk];  // LINEAR: x offset of the second tap
  float col_w[kColumnChunk];       // LINEAR: weight of the second tap
  for (int64_t col0 = 0; col0 < row_axis.out; col0 += kColumnChunk) {
    const int64_t cols = row_axis.out - col0 < kColumnChunk ? row_axis.out - col0 : kColumnChunk;
    for (int64_t j = 0; j < cols; ++j) {
      if (linear) {
        const LinearTaps tap = linear_taps(resize, row_axis, col0 + j);
        col_off0[j] = tap.i0 * x_col_stride;
        col_off1[j] = tap.i1 * x_col_stride;
        col_w[j] = tap.w;
      } else {
        col_off0[j] = nearest_index(resize, row_axis, col0 + j) * x_col_stride;
      }
    }
    // Walk y's rows: every index of the dims before the last.
    StridedWalk walk(last, y_desc.dims(), y_desc.strides());
    do {
      const int64_t x_base = walk.idx[0] * x_desc.stride(0) + walk.idx[1] * x_desc.stride(1);
      const int64_t y_row = walk.off[0] + col0 * y_col_stride;
      if (!linear) {
        int64_t x_row = x_base;
        for (int k = 0; k < outer; ++k)
          x_row += nearest_index(resize, axes[k], walk.idx[2 + k]) * x_desc.stride(2 + k);
        for (int64_t j = 0; j < cols; ++j)
          blend_store(t, y, y_row + j * y_col_stride, alpha, load(t, x, x_row + col_off0[j]), beta);
        continue;
      }
      // LINEAR: the outer spatial dims contribute 2^outer weighted source rows; corners with
      // zero weight are dropped (so an inf/NaN there cannot turn 0 * inf into NaN).
      int64_t row_off[4];
      float row_w[4];
      int rows = 1;
      row_off[0] = x_base;
      row_w[0] = 1.f;
      for (int k = 0; k < outer; ++k) {
        const LinearTaps tap = linear_taps(resize, axes[k], walk.idx[2 + k]);
        const int64_t s = x_desc.stride(2 + k);
        int next = 0;
        int64_t new_off[4];
        float new_w[4];
        for (int r = 0; r < rows; ++r) {
          if (tap.w != 1.f) {
            new_off[next] = row_off[r] + tap.i0 * s;
            new_w[next++] = row_w[r] * (1.f - tap.w);
          }
          if (tap.w != 0.f) {
            new_off[next] = row_off[r] + tap.i1 * s;
            new_w[next++] = row_w[r] * tap.w;
          }
        }
        rows = next;
        for (int r = 0; r < rows; ++r) {
          row_off[r] = new_off[r];
          row_w[r] = new_w[r];
        }
      }
      for (int64_t j = 0; j < cols; ++j) {
        const float w = col_w[j];
        float v = 0.f;
        for (int r = 0; r < rows; ++r) {
          float along_row = load(t, x, row_off[r] + col_off0[j]);
          if (w != 0.f)
            along_row = (1.f - w) * along_row + w * load(t, x, row_off[r] + col_off1[j]);
          v += row_w[r] * along_row;
        }
        blend_store(t, y, y_row + j * y_col_stride, alpha, v, beta);
      }
    } while (walk.next());
  }
  return Status();
}

}  // namespace cpu

}  // namespace jet
