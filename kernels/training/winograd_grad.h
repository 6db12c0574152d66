// conv_backward_filter's WINOGRAD algorithm, the parts shared by the CPU and CUDA backends (host
// and device code): 2D 3x3 filters, stride 1, no dilation, one group.
//
// dw[k][c] (3 x 3) is a sum over the images and 2 x 2 tiles of dy: each tile u (2 x 2, of
// channel k) with the 4 x 4 window d of x (channel c) under it gives
//   dw_tile[r][s] = sum_{i,j < 2} u[i][j] * d[i + r][j + s]  =  G^T [(A u A^T) . (B^T d B)] G,
// Winograd's F(3x3, 2x2) (the transpose of the forward's F(2x2, 3x3): its G and A swap roles).
// The sum over tiles is taken in the transformed domain, where it is 16 matrix products (one per
// transformed position z), each K x C summed over the tiles:
//   1. transforms: V[z][c][t] = (B^T d B)[z] and U[z][k][t] = (A u A^T)[z] for every tile t;
//   2. M[z] = U[z] @ V[z]^T (gemm_forward, both operands along t);
//   3. dw[k][c] = G^T M[.][k][c] G (4 x 4 -> 3 x 3), blended with alpha and beta.
// That is 16 products of K x C over N * tiles, against 9 over N * 4 * tiles for the direct sum:
// 2.25 times fewer multiplications. The tiles may be split in `chunks` (the sum's split-K): the
// buffers are chunk-major, so that chunk j's 16 products are batch entries j * 16 + z of one
// batched GEMM, and reduce_forward adds the chunks' partial M.
// Tiles past the output's end (odd output sizes) read dy as 0, windows past x's edges read x as 0
// (the padding); both are exact: the identity above holds for any u and d.
#pragma once

#include "conv_grad.h"

namespace jet {

struct WinogradGradGeom {
  ConvGradGeom g;            // shapes and strides (spatial axes 1 and 2; axis 0 is trivial)
  int64_t tiles_h = 1, tiles_w = 1;
  int64_t tiles = 1;         // N * tiles_h * tiles_w
  int64_t chunks = 1;        // the tiles' split
  int64_t chunk_tiles = 1;   // tiles per chunk (the last chunk padded with zero tiles)

  // Offsets in the transformed buffers: V[chunk][z][c][tile in chunk] (U likewise with k).
  JET_HOST_DEVICE int64_t v_offset(int64_t t, int z, int64_t c) const {
    const int64_t j = t / chunk_tiles;
    return ((j * 16 + z) * g.cg + c) * chunk_tiles + (t - j * chunk_tiles);
  }
  JET_HOST_DEVICE int64_t u_offset(int64_t t, int z, int64_t k) const {
    const int64_t j = t / chunk_tiles;
    return ((j * 16 + z) * g.kg + k) * chunk_tiles + (t - j * chunk_tiles);
  }
  // Floats of V, U and the chunks' partial M.
  int64_t v_floats() const { return chunks * 16 * g.cg * chunk_tiles; }
  int64_t u_floats() const { return chunks * 16 * g.kg * chunk_tiles; }
  int64_t m_floats() const { return 16 * g.kg * g.cg; }
};

// Whether WINOGRAD takes the problem (make_conv_grad_geom's geometry).
inline bool winograd_grad_applies(const ConvGradGeom& g, int spatial) {
  return spatial == 2 && g.groups == 1 && g.win[1] == 3 && g.win[2] == 3 && g.stride[1] == 1 &&
         g.stride[2] == 1 && g.dil[1] == 1 && g.dil[2] == 1;
}

inline WinogradGradGeom make_winograd_grad_geom(const ConvGradGeom& g, int64_t chunks) {
  WinogradGradGeom w;
  w.g = g;
  w.tiles_h = (g.out[1] + 1) / 2;
  w.tiles_w = (g.out[2] + 1) / 2;
  w.tiles = g.n * w.tiles_h * w.tiles_w;
  w.chunks = chunks;
  w.chunk_tiles = (w.tiles + chunks - 1) / chunks;
  return w;
}

// Tile t as (image, tile row, tile column).
JET_HOST_DEVICE inline void winograd_tile_at(const WinogradGradGeom& w, int64_t t, int64_t* n,
                                             int64_t* ty, int64_t* tx) {
  const int64_t per_image = w.tiles_h * w.tiles_w;
  *n = t / per_image;
  const int64_t r = t - *n * per_image;
  *ty = r / w.tiles_w;
  *tx = r - *ty * w.tiles_w;
}

// V's 16 values of x channel c under tile (n, ty, tx): B^T d B, d the 4 x 4 window at output
// position (2 ty, 2 tx) (x rows 2 ty - pad .. + 3), 0 outside x.
JET_HOST_DEVICE inline void winograd_data_tile(const WinogradGradGeom& w, const float* x, int64_t n,
                                               int64_t c, int64_t ty, int64_t tx, float* v) {
  const ConvGradGeom& g = w.g;
  const int64_t r0 = 2 * ty - g.pad[1], c0 = 2 * tx - g.pad[2];
  const float* xc = x + n * g.xs_n + c * g.xs_c;
  float d[4][4];
  for (int i = 0; i < 4; ++i) {
    const int64_t r = r0 + i;
    for (int j = 0; j < 4; ++j) {
      const int64_t s = c0 + j;
      d[i][j] = r >= 0 && r < g.in[1] && s >= 0 && s < g.in[2] ? xc[r * g.xs[1] + s * g.xs[2]] : 0.f;
    }
  }
  // B^T d (columns), then (B^T d) B (rows): B^T e = (e0 - e2, e1 + e2, e2 - e1, e1 - e3).
  float t[4][4];
  for (int j = 0; j < 4; ++j) {
    t[0][j] = d[0][j] - d[2][j];
    t[1][j] = d[1][j] + d[2][j];
    t[2][j] = d[2][j] - d[1][j];
    t[3][j] = d[1][j] - d[3][j];
  }
  for (int i = 0; i < 4; ++i) {
    v[i * 4 + 0] = t[i][0] - t[i][2];
    v[i * 4 + 1] = t[i][1] + t[i][2];
    v[i * 4 + 2] = t[i][2] - t[i][1];
    v[i * 4 + 3] = t[i][1] - t[i][3];
  }
}

// U's 16 values of dy channel k at tile (n, ty, tx): A u A^T, u the 2 x 2 block of dy at
// (2 ty, 2 tx), 0 past dy's end. A e = (e0, e0 + e1, e0 - e1, -e1).
JET_HOST_DEVICE inline void winograd_delta_tile(const WinogradGradGeom& w, const float* dy,
                                                int64_t n, int64_t k, int64_t ty, int64_t tx,
                                                float* u) {
  const ConvGradGeom& g = w.g;
  const float* dk = dy + n * g.ys_n + k * g.ys_c;
  float e[2][2];
  for (int i = 0; i < 2; ++i) {
    const int64_t r = 2 * ty + i;
    for (int j = 0; j < 2; ++j) {
      const int64_t s = 2 * tx + j;
      e[i][j] = r < g.out[1] && s < g.out[2] ? dk[r * g.ys[1] + s * g.ys[2]] : 0.f;
    }
  }
  float t[4][2];  // A e (columns)
  for (int j = 0; j < 2; ++j) {
    t[0][j] = e[0][j];
    t[1][j] = e[0][j] + e[1][j];
    t[2][j] = e[0][j] - e[1][j];
    t[3][j] = -e[1][j];
  }
  for (int i = 0; i < 4; ++i) {  // (A e) A^T (rows)
    u[i * 4 + 0] = t[i][0];
    u[i * 4 + 1] = t[i][0] + t[i][1];
    u[i * 4 + 2] = t[i][0] - t[i][1];
    u[i * 4 + 3] = -t[i][1];
  }
}

// dw's 3 x 3 of (k, c) from the 16 values m of M: G^T m G, G^T e = (e0 + (e1 + e2) / 2,
// (e1 - e2) / 2, (e1 + e2) / 2 + e3). out[r * 3 + s] is tap (r, s) in cross-correlation order.
JET_HOST_DEVICE inline void winograd_filter_tile(const float* m, float* out) {
  float t[3][4];
  for (int j = 0; j < 4; ++j) {
    const float a = m[0 * 4 + j], b = m[1 * 4 + j], c = m[2 * 4 + j], d = m[3 * 4 + j];
    t[0][j] = a + 0.5f * (b + c);
    t[1][j] = 0.5f * (b - c);
    t[2][j] = 0.5f * (b + c) + d;
  }
  for (int i = 0; i < 3; ++i) {
    const float a = t[i][0], b = t[i][1], c = t[i][2], d = t[i][3];
    out[i * 3 + 0] = a + 0.5f * (b + c);
    out[i * 3 + 1] = 0.5f * (b - c);
    out[i * 3 + 2] = 0.5f * (b + c) + d;
  }
}

// dw's offset of tap (r, s) of filter (k, c): CONVOLUTION mode stores the window flipped.
JET_HOST_DEVICE inline int64_t winograd_dw_offset(const ConvGradGeom& g, int64_t k, int64_t c, int r,
                                                  int s) {
  if (g.flip) {
    r = 2 - r;
    s = 2 - s;
  }
  return k * g.ws_k + c * g.ws_c + r * g.ws[1] + s * g.ws[2];
}

}  // namespace jet
