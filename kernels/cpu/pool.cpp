// CPU pooling: for every output element, the taps of its window that land inside x are found per
// axis (a contiguous range of tap indices, since taps are evenly spaced), then visited.
// The front end guarantees every window holds at least one tap inside x.
#include <algorithm>
#include <cmath>
#include <limits>

#include "../api/backend.h"
#include "cpu_common.h"
#include "../common/small_sort.h"

namespace jet {
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
