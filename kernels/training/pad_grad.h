// The pad_forward gradient of one dx element, shared by the CPU and CUDA pad_backward (host and
// device code). Padding is the forward's "pad, then crop" (kernels/cpu/pad.cpp): output index o
// along an axis reads x at s = o - pad_begin when 0 <= s < n, else (EDGE) the nearer edge or
// (REFLECT) the mirror -s or 2 (n - 1) - s (one reflection at most: pads < n), or (CONSTANT)
// nothing. dx[i] sums dy over every output position that reads i, per axis at most three ranges:
// the direct position, and the left / right padding that reads i.
#pragma once

#include "../common/activation_math.h"  // JET_HOST_DEVICE
#include "jet/dnn/tensor_ops.h"

namespace jet {

struct PadGradGeom {
  PadMode mode = PadMode::CONSTANT;
  int rank = 0;
  int64_t n[kMaxRank] = {}, out[kMaxRank] = {}, begin[kMaxRank] = {};
  int64_t dys[kMaxRank] = {}, dxs[kMaxRank] = {};
};

// Up to three non-empty half-open ranges [lo, hi) of output indices.
struct PadRanges {
  int count = 0;
  int64_t lo[3] = {0, 0, 0}, hi[3] = {0, 0, 0};

  JET_HOST_DEVICE void add(int64_t l, int64_t h, int64_t out) {
    if (l < 0) l = 0;
    if (h > out) h = out;
    if (l >= h) return;
    lo[count] = l;
    hi[count] = h;
    ++count;
  }
};

// The output positions along one axis that read x index i.
JET_HOST_DEVICE inline PadRanges pad_sources_of(PadMode mode, int64_t i, int64_t begin, int64_t n,
                                                int64_t out) {
  PadRanges r;
  if (mode == PadMode::EDGE && i == 0) r.add(0, begin, out);  // s < 0
  if (mode == PadMode::REFLECT && i > 0) r.add(begin - i, begin - i + 1, out);  // s = -i
  r.add(i + begin, i + begin + 1, out);                                        // s = i
  if (mode == PadMode::REFLECT && i <= n - 2) {                                // s = 2(n-1) - i
    const int64_t o = begin + 2 * (n - 1) - i;
    r.add(o, o + 1, out);
  }
  if (mode == PadMode::EDGE && i == n - 1) r.add(begin + n, out, out);  // s >= n
  return r;
}

// sum of dy over the output positions that read x element idx (rank entries).
JET_HOST_DEVICE inline float pad_grad_at(const PadGradGeom& g, const float* dy, const int64_t* idx) {
  PadRanges r[kMaxRank];
  for (int d = 0; d < g.rank; ++d) {
    r[d] = pad_sources_of(g.mode, idx[d], g.begin[d], g.n[d], g.out[d]);
    if (r[d].count == 0) return 0.f;  // cropped away
  }
  int k[kMaxRank];
  int64_t p[kMaxRank];
  for (int d = 0; d < g.rank; ++d) {
    k[d] = 0;
    p[d] = r[d].lo[0];
  }
  float acc = 0.f;
  for (;;) {
    int64_t off = 0;
    for (int d = 0; d < g.rank; ++d) off += p[d] * g.dys[d];
    acc += dy[off];
    // Odometer over the ranges' positions, last axis fastest.
    int d = g.rank - 1;
    for (; d >= 0; --d) {
      if (++p[d] < r[d].hi[k[d]]) break;
      if (++k[d] < r[d].count) {
        p[d] = r[d].lo[k[d]];
        break;
      }
      k[d] = 0;
      p[d] = r[d].lo[0];
    }
    if (d < 0) return acc;
  }
}

}  // namespace jet
