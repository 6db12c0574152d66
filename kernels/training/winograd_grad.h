// conv_backward_filter's WINOGRAD algorithm, the parts shared by the CPU and CUDA backends (host
// and device code): 2D 3x3 filters, stride 1, no dilation, one group.
//
// dw[k][c] (3 x 3) is a sum over the images and m x m tiles of dy: each tile u (m x m, of
// channel k) with the (m + 2) x (m + 2) window d of x (channel c) under it gives
//   dw_tile[r][s] = sum_{i,j < m} u[i][j] * d[i + r][j + s]  =  G^T [(A u A^T) . (B^T d B)] G,
// Winograd's F(3x3, m x m), the transpose of the forward's F(m x m, 3x3) (its G and A swap roles:
// sum_i u_i y_i for y = A^T [(G g) . (B^T d)] is linear in g with the coefficients above).
// m = 2 (16 transformed positions z) is exact to f32 rounding; m = 4 (36 positions, the points
// 0, +-1, +-2 and infinity) is for ConvMath::ALLOW_APPROXIMATE only: its transforms have
// coefficients up to 64 (A u A^T) and 1/36 (G^T m G), as the forward's F(4x4) does.
// The sum over tiles is taken in the transformed domain, where it is (m + 2)^2 matrix products
// (one per z), each K x C summed over the tiles:
//   1. transforms: V[z][c][t] = (B^T d B)[z] and U[z][k][t] = (A u A^T)[z] for every tile t;
//   2. M[z] = U[z] @ V[z]^T (gemm_forward, both operands along t);
//   3. dw[k][c] = G^T M[.][k][c] G ((m + 2)^2 -> 3 x 3), blended with alpha and beta.
// That is (m + 2)^2 products of K x C over N * tiles, against 9 m^2 for the direct sum: 2.25
// times fewer multiplications for m = 2, 4 times for m = 4. The tiles may be split in `chunks`
// (the sum's split-K): the buffers are chunk-major, so that chunk j's products are batch entries
// j * planes + z of one batched GEMM, and reduce_forward adds the chunks' partial M.
// Tiles past the output's end (odd output sizes) read dy as 0, windows past x's edges read x as 0
// (the padding); both are exact: the identity above holds for any u and d.
#pragma once

#include "conv_grad.h"

namespace jet {

struct WinogradGradGeom {
  ConvGradGeom g;            // shapes and strides (spatial axes 1 and 2; axis 0 is trivial)
  int m = 2;                 // dy's tile: m x m (2 or 4)
  int planes = 16;           // transformed positions, (m + 2)^2
  int64_t tiles_h = 1, tiles_w = 1;
  int64_t tiles = 1;         // N * tiles_h * tiles_w
  int64_t chunks = 1;        // the tiles' split
  int64_t chunk_tiles = 1;   // tiles per chunk (the last chunk padded with zero tiles)

  // Offsets in the transformed buffers: V[chunk][z][c][tile in chunk] (U likewise with k).
  JET_HOST_DEVICE int64_t v_offset(int64_t t, int z, int64_t c) const {
    const int64_t j = t / chunk_tiles;
    return ((j * planes + z) * g.cg + c) * chunk_tiles + (t - j * chunk_tiles);
  }
  JET_HOST_DEVICE int64_t u_offset(int64_t t, int z, int64_t k) const {
    const int64_t j = t / chunk_tiles;
    return ((j * planes + z) * g.kg + k) * chunk_tiles + (t - j * chunk_tiles);
  }
  // Floats of V, U and the chunks' partial M.
  int64_t v_floats() const { return chunks * planes * g.cg * chunk_tiles; }
  int64_t u_floats() const { return chunks * planes * g.kg * chunk_tiles; }
  int64_t m_floats() const { return planes * g.kg * g.cg; }
};

// Whether WINOGRAD takes the problem (make_conv_grad_geom's geometry).
inline bool winograd_grad_applies(const ConvGradGeom& g, int spatial) {
  return spatial == 2 && g.groups == 1 && g.win[1] == 3 && g.win[2] == 3 && g.stride[1] == 1 &&
         g.stride[2] == 1 && g.dil[1] == 1 && g.dil[2] == 1;
}

// dy's tile edge for a descriptor: 4 where its math allows approximate algorithms, else 2.
inline int winograd_grad_tile(const ConvDesc& conv) {
  return conv.math() == ConvMath::ALLOW_APPROXIMATE ? 4 : 2;
}

inline WinogradGradGeom make_winograd_grad_geom(const ConvGradGeom& g, int m, int64_t chunks) {
  WinogradGradGeom w;
  w.g = g;
  w.m = m;
  w.planes = (m + 2) * (m + 2);
  w.tiles_h = (g.out[1] + m - 1) / m;
  w.tiles_w = (g.out[2] + m - 1) / m;
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

// x's window of tile (n, ty, tx) in channel c, (M + 2) x (M + 2) from output position (M ty, M tx)
// (x rows M ty - pad .. + M + 1), 0 outside x.
template <int M>
JET_HOST_DEVICE inline void winograd_window(const WinogradGradGeom& w, const float* x, int64_t n,
                                            int64_t c, int64_t ty, int64_t tx, float (&d)[M + 2][M + 2]) {
  const ConvGradGeom& g = w.g;
  const int64_t r0 = M * ty - g.pad[1], c0 = M * tx - g.pad[2];
  const float* xc = x + n * g.xs_n + c * g.xs_c;
  for (int i = 0; i < M + 2; ++i) {
    const int64_t r = r0 + i;
    for (int j = 0; j < M + 2; ++j) {
      const int64_t s = c0 + j;
      d[i][j] = r >= 0 && r < g.in[1] && s >= 0 && s < g.in[2] ? xc[r * g.xs[1] + s * g.xs[2]] : 0.f;
    }
  }
}

// dy's M x M tile (n, ty, tx) of channel k, 0 past dy's end.
template <int M>
JET_HOST_DEVICE inline void winograd_delta_block(const WinogradGradGeom& w, const float* dy, int64_t n,
                                                 int64_t k, int64_t ty, int64_t tx, float (&e)[M][M]) {
  const ConvGradGeom& g = w.g;
  const float* dk = dy + n * g.ys_n + k * g.ys_c;
  for (int i = 0; i < M; ++i) {
    const int64_t r = M * ty + i;
    for (int j = 0; j < M; ++j) {
      const int64_t s = M * tx + j;
      e[i][j] = r < g.out[1] && s < g.out[2] ? dk[r * g.ys[1] + s * g.ys[2]] : 0.f;
    }
  }
}

// The F(3x3, 4x4) transforms in one dimension (points 0, 1, -1, 2, -2, infinity; the forward's
// F(4x4, 3x3) in conv_winograd.cu with G and A swapped). B^T: the forward's input transform.
JET_HOST_DEVICE inline void winograd4_data_1d(const float* d, float* o) {
  o[0] = 4.f * d[0] - 5.f * d[2] + d[4];
  o[1] = -4.f * (d[1] + d[2]) + d[3] + d[4];
  o[2] = 4.f * (d[1] - d[2]) - d[3] + d[4];
  o[3] = -2.f * (d[1] - d[3]) - d[2] + d[4];
  o[4] = 2.f * (d[1] - d[3]) - d[2] + d[4];
  o[5] = 4.f * d[1] - 5.f * d[3] + d[5];
}
// A = (A^T of the forward)^T: the 4 values of dy to 6.
JET_HOST_DEVICE inline void winograd4_delta_1d(const float* e, float* o) {
  const float even = e[0] + e[2], odd = e[1] + e[3];
  const float even4 = e[0] + 4.f * e[2], odd8 = 2.f * e[1] + 8.f * e[3];
  o[0] = e[0];
  o[1] = even + odd;
  o[2] = even - odd;
  o[3] = even4 + odd8;
  o[4] = even4 - odd8;
  o[5] = e[3];
}
// G^T = (G of the forward)^T: the 6 transformed values to the 3 taps.
JET_HOST_DEVICE inline void winograd4_filter_1d(const float* m, float* o) {
  const float p12 = m[1] + m[2], m12 = m[2] - m[1], p34 = m[3] + m[4], m34 = m[3] - m[4];
  o[0] = 0.25f * m[0] - p12 * (1.f / 6.f) + p34 * (1.f / 24.f);
  o[1] = m12 * (1.f / 6.f) + m34 * (1.f / 12.f);
  o[2] = (p34 - p12) * (1.f / 6.f) + m[5];
}

// V's (M + 2)^2 values of x channel c under tile (n, ty, tx): B^T d B.
template <int M>
JET_HOST_DEVICE inline void winograd_data_tile(const WinogradGradGeom& w, const float* x, int64_t n,
                                               int64_t c, int64_t ty, int64_t tx, float* v);
template <>
JET_HOST_DEVICE inline void winograd_data_tile<4>(const WinogradGradGeom& w, const float* x, int64_t n,
                                                  int64_t c, int64_t ty, int64_t tx, float* v) {
  float d[6][6], t[6][6], col[6], out[6];
  winograd_window<4>(w, x, n, c, ty, tx, d);
  for (int j = 0; j < 6; ++j) {  // B^T d (columns)
    for (int i = 0; i < 6; ++i) col[i] = d[i][j];
    winograd4_data_1d(col, out);
    for (int i = 0; i < 6; ++i) t[i][j] = out[i];
  }
  for (int i = 0; i < 6; ++i) winograd4_data_1d(t[i], v + i * 6);  // (B^T d) B (rows)
}

// U's (M + 2)^2 values of dy channel k at tile (n, ty, tx): A u A^T.
template <int M>
JET_HOST_DEVICE inline void winograd_delta_tile(const WinogradGradGeom& w, const float* dy, int64_t n,
                                                int64_t k, int64_t ty, int64_t tx, float* u);
template <>
JET_HOST_DEVICE inline void winograd_delta_tile<4>(const WinogradGradGeom& w, const float* dy, int64_t n,
                                                   int64_t k, int64_t ty, int64_t tx, float* u) {
  float e[4][4], t[6][4], col[4], out[6];
  winograd_delta_block<4>(w, dy, n, k, ty, tx, e);
  for (int j = 0; j < 4; ++j) {  // A e (columns)
    for (int i = 0; i < 4; ++i) col[i] = e[i][j];
    winograd4_delta_1d(col, out);
    for (int i = 0; i < 6; ++i) t[i][j] = out[i];
  }
  for (int i = 0; i < 6; ++i) winograd4_delta_1d(t[i], u + i * 6);  // (A e) A^T (rows)
}

// dw's 3 x 3 of (k, c) from the (M + 2)^2 values m of M: G^T m G. out[r * 3 + s] is tap (r, s) in
// cross-correlation order.
template <int M>
JET_HOST_DEVICE inline void winograd_filter_tile(const float* m, float* out);
template <>
JET_HOST_DEVICE inline void winograd_filter_tile<4>(const float* m, float* out) {
  float t[3][6], col[6], o[3];
  for (int j = 0; j < 6; ++j) {  // G^T m (columns)
    for (int i = 0; i < 6; ++i) col[i] = m[i * 6 + j];
    winograd4_filter_1d(col, o);
    for (int i = 0; i < 3; ++i) t[i][j] = o[i];
  }
  for (int i = 0; i < 3; ++i) winograd4_filter_1d(t[i], out + i * 3);  // (G^T m) G (rows)
}

// F(3x3, 2x2): V's 16 values, d the 4 x 4 window at output position (2 ty, 2 tx).
template <>
JET_HOST_DEVICE inline void winograd_data_tile<2>(const WinogradGradGeom& w, const float* x, int64_t n,
                                                  int64_t c, int64_t ty, int64_t tx, float* v) {
  float d[4][4];
  winograd_window<2>(w, x, n, c, ty, tx, d);
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

// F(3x3, 2x2): U's 16 values, u the 2 x 2 block of dy at (2 ty, 2 tx).
// A e = (e0, e0 + e1, e0 - e1, -e1).
template <>
JET_HOST_DEVICE inline void winograd_delta_tile<2>(const WinogradGradGeom& w, const float* dy, int64_t n,
                                                   int64_t k, int64_t ty, int64_t tx, float* u) {
  float e[2][2];
  winograd_delta_block<2>(w, dy, n, k, ty, tx, e);
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

// F(3x3, 2x2): dw's taps from 16 values, G^T e = (e0 + (e1 + e2) / 2, (e1 - e2) / 2,
// (e1 + e2) / 2 + e3).
template <>
JET_HOST_DEVICE inline void winograd_filter_tile<2>(const float* m, float* out) {
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
