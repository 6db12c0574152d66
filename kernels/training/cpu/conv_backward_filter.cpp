// CPU convolution backward filter and bias gradient.
//  - implicit: each dw element is a sum over images and output positions, in double, with x
//    addressed on the fly (kernels/training/conv_grad.h); taps in the padding contribute 0.
//  - lower: the GEMM algorithm's im2col of x and packing of dy (the GEMM itself is
//    gemm_forward, called by the front end).
//  - bias: per channel, a double sum over images and positions.
#include "../../cpu/cpu_common.h"
#include "../backend.h"
#include "../conv_grad.h"
#include "../winograd_grad.h"

namespace jet {
namespace cpu {

Status conv_backward_filter_implicit(float alpha, const TensorDesc& x_desc, const void* x,
                                     const TensorDesc& dy_desc, const void* dy,
                                     const ConvDesc& conv, float beta, const FilterDesc& dw_desc,
                                     void* dw) {
  const ConvGradGeom g = make_conv_grad_geom(x_desc, dy_desc, conv, dw_desc);
  const float* xp = static_cast<const float*>(x);
  const float* dyp = static_cast<const float*>(dy);
  for (int64_t k = 0; k < g.groups * g.kg; ++k) {
    const int64_t c_first = k / g.kg * g.cg;  // the group's first input channel
    for (int64_t j = 0; j < g.row(); ++j) {
      const FilterTap f = filter_tap(g, j);
      double acc = 0.0;
      for (int64_t n = 0; n < g.n; ++n) {
        for (int64_t p = 0; p < g.positions; ++p) {
          int64_t o[3];
          conv_grad_position(g, p, o);
          const int64_t xo = conv_grad_x_offset(g, f, n, o);
          if (xo < 0) continue;
          const float d = dyp[n * g.ys_n + k * g.ys_c + o[0] * g.ys[0] + o[1] * g.ys[1] +
                              o[2] * g.ys[2]];
          acc += static_cast<double>(d) * xp[xo + c_first * g.xs_c];
        }
      }
      blend_store(DType::F32, dw, k * g.ws_k + filter_offset(g, f), alpha,
                  static_cast<float>(acc), beta);
    }
  }
  return Status();
}

Status conv_backward_filter_lower(const TensorDesc& x_desc, const void* x,
                                  const TensorDesc& dy_desc, const void* dy, const ConvDesc& conv,
                                  const FilterDesc& dw_desc, float* col, float* dyp) {
  const ConvGradGeom g = make_conv_grad_geom(x_desc, dy_desc, conv, dw_desc);
  const float* xp = static_cast<const float*>(x);
  const float* dp = static_cast<const float*>(dy);
  const int64_t rows = g.n * g.positions, row = g.row();
  for (int64_t grp = 0; grp < g.groups; ++grp) {
    for (int64_t r = 0; r < rows; ++r) {
      const int64_t n = r / g.positions;
      int64_t o[3];
      conv_grad_position(g, r % g.positions, o);
      for (int64_t j = 0; j < row; ++j) {
        const FilterTap f = filter_tap(g, j);
        const int64_t xo = conv_grad_x_offset(g, f, n, o);
        // Row j of the lowered matrix is dw's element at offset j of a filter row.
        col[(grp * row + filter_offset(g, f)) * rows + r] = xo < 0 ? 0.f : xp[xo + grp * g.cg * g.xs_c];
      }
    }
  }
  for (int64_t k = 0; k < g.groups * g.kg; ++k)
    for (int64_t r = 0; r < rows; ++r) {
      int64_t o[3];
      conv_grad_position(g, r % g.positions, o);
      dyp[k * rows + r] = dp[r / g.positions * g.ys_n + k * g.ys_c + o[0] * g.ys[0] +
                             o[1] * g.ys[1] + o[2] * g.ys[2]];
    }
  return Status();
}

namespace {

template <int M>
void winograd_transform(const WinogradGradGeom& w, const float* xp, const float* dp, float* v, float* u) {
  float tile[(M + 2) * (M + 2)];
  for (int64_t t = 0; t < w.chunks * w.chunk_tiles; ++t) {
    int64_t n = 0, ty = 0, tx = 0;
    const bool real = t < w.tiles;  // the last chunk's padding tiles are zeros in both
    if (real) winograd_tile_at(w, t, &n, &ty, &tx);
    for (int64_t c = 0; c < w.g.cg; ++c) {
      if (real) winograd_data_tile<M>(w, xp, n, c, ty, tx, tile);
      for (int z = 0; z < w.planes; ++z) v[w.v_offset(t, z, c)] = real ? tile[z] : 0.f;
    }
    for (int64_t k = 0; k < w.g.kg; ++k) {
      if (real) winograd_delta_tile<M>(w, dp, n, k, ty, tx, tile);
      for (int z = 0; z < w.planes; ++z) u[w.u_offset(t, z, k)] = real ? tile[z] : 0.f;
    }
  }
}

template <int M>
void winograd_output(const ConvGradGeom& g, const float* m, float alpha, float beta, void* dw) {
  const int64_t kc = g.kg * g.cg;
  float mm[(M + 2) * (M + 2)], out[9];
  for (int64_t k = 0; k < g.kg; ++k)
    for (int64_t c = 0; c < g.cg; ++c) {
      for (int z = 0; z < (M + 2) * (M + 2); ++z) mm[z] = m[z * kc + k * g.cg + c];
      winograd_filter_tile<M>(mm, out);
      for (int r = 0; r < 3; ++r)
        for (int q = 0; q < 3; ++q)
          blend_store(DType::F32, dw, winograd_dw_offset(g, k, c, r, q), alpha, out[r * 3 + q], beta);
    }
}

}  // namespace

Status conv_backward_filter_winograd_transform(const TensorDesc& x_desc, const void* x,
                                               const TensorDesc& dy_desc, const void* dy,
                                               const ConvDesc& conv, const FilterDesc& dw_desc,
                                               int64_t chunks, float* v, float* u) {
  const WinogradGradGeom w = make_winograd_grad_geom(make_conv_grad_geom(x_desc, dy_desc, conv, dw_desc),
                                                     winograd_grad_tile(conv), chunks);
  const float* xp = static_cast<const float*>(x);
  const float* dp = static_cast<const float*>(dy);
  if (w.m == 4)
    winograd_transform<4>(w, xp, dp, v, u);
  else
    winograd_transform<2>(w, xp, dp, v, u);
  return Status();
}

Status conv_backward_filter_winograd_output(const TensorDesc& x_desc, const TensorDesc& dy_desc,
                                            const ConvDesc& conv, const FilterDesc& dw_desc,
                                            const float* m, float alpha, float beta, void* dw) {
  const ConvGradGeom g = make_conv_grad_geom(x_desc, dy_desc, conv, dw_desc);
  if (winograd_grad_tile(conv) == 4)
    winograd_output<4>(g, m, alpha, beta, dw);
  else
    winograd_output<2>(g, m, alpha, beta, dw);
  return Status();
}

Status conv_backward_bias(float alpha, const TensorDesc& dy_desc, const void* dy, float beta,
                          const TensorDesc& db_desc, void* db) {
  const float* dp = static_cast<const float*>(dy);
  // Every dim but C, with dy's strides.
  int64_t dims[kMaxRank], strides[kMaxRank];
  int rank = 0;
  for (int i = 0; i < dy_desc.rank(); ++i) {
    if (i == 1) continue;
    dims[rank] = dy_desc.dim(i);
    strides[rank++] = dy_desc.stride(i);
  }
  for (int64_t k = 0; k < dy_desc.dim(1); ++k) {
    double acc = 0.0;
    StridedWalk w(rank, dims, strides);
    do {
      acc += dp[k * dy_desc.stride(1) + w.off[0]];
    } while (w.next());
    blend_store(DType::F32, db, k * db_desc.stride(1), alpha, static_cast<float>(acc), beta);
  }
  return Status();
}

}  // namespace cpu
}  // namespace jet
