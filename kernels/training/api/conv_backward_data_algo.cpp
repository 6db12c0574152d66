// conv_backward_data with an algorithm choice, and its workspace query. GATHER is the inference
// library's conv_backward_data; TRANSPOSED_FORWARD is composed here from transform_tensor,
// conv_forward and pad_forward (either backend), so it has no backend code of its own.
#include <algorithm>

#include "train_check.h"

namespace jet {

const char* conv_bwd_data_algo_name(ConvBwdDataAlgo a) {
  switch (a) {
    case ConvBwdDataAlgo::GATHER:
      return "gather";
    case ConvBwdDataAlgo::TRANSPOSED_FORWARD:
      return "transposed_forward";
    case ConvBwdDataAlgo::COUNT:
      break;
  }
  return "unknown-conv-bwd-data-algo";
}

namespace {

// TRANSPOSED_FORWARD's plan. Per spatial dim with stride s, dx splits by output phase
// p = i mod s (p < min(s, dx's extent)); the taps t that reach phase p are those with
// t * dilation == p + pad_begin (mod s): t0, t0 + m, t0 + 2m, ... with g = gcd(dilation, s),
// m = s / g, and dx[p + s q] = sum over j of dy[q + e0 - j * dilation / g] * w[t0 + j m] with
// e0 = (p + pad_begin - t0 * dilation) / s. So each phase (a combination of one phase per dim)
// is a stride-1 convolution of a window of dy with the sub-filter of its taps, transposed (K and
// C swapped within each group) and flipped (the other mode), dilation dilation / g, written into
// the strided view of dx that holds the phase. Stride 1 is the single phase with every tap.
struct Phase {
  bool empty = false;  // no tap reaches it, or every tap reads padding: alpha * 0 + beta * dx
  TensorDesc dx, dy;   // the phase's view of dx and the window of dy it reads
  int64_t dx_offset = 0, dy_offset = 0;  // elements
  TensorDesc w_src, wt_dst;              // the sub-filter's taps in w, their places in wt
  int64_t w_offset = 0;                  // elements
  FilterDesc wt;                         // the transposed sub-filter (w's layout)
  ConvDesc conv;
  ConvAlgo algo = ConvAlgo::DIRECT;
  size_t wt_offset = 0;  // bytes into the workspace
};

// The problem and the totals over its phases. The phases are planned again one at a time when
// they run (phase_at), so that nothing is allocated: the trainer's steps allocate nothing.
struct TransposedForward {
  const FilterDesc* w = nullptr;
  const TensorDesc *dy = nullptr, *dx = nullptr;
  const ConvDesc* conv = nullptr;
  int64_t count[3] = {1, 1, 1};  // phases per spatial dim
  int64_t phases = 1;
  bool any_empty = false;
  size_t filter_bytes = 0;   // the sub-filters, each 256-aligned
  size_t forward_bytes = 0;  // the largest conv_forward workspace of the phases
};

// The most phases (product of the strides) planned; larger strides are GATHER's.
constexpr int64_t kMaxPhases = 64;

int64_t gcd64(int64_t a, int64_t b) {
  while (b != 0) {
    const int64_t r = a % b;
    a = b;
    b = r;
  }
  return a;
}

// One spatial dim of one phase.
struct DimPhase {
  bool empty = false;
  int64_t q = 0;                 // dx positions of the phase
  int64_t taps = 0, step = 1;    // J and m
  int64_t w_base = 0;            // w index of the sub-filter's first tap (in wt's order)
  int64_t dilation = 1;          // dilation / g
  int64_t pad_begin = 0, pad_end = 0;
  int64_t dy_begin = 0, dy_len = 0;
};

DimPhase plan_dim(int64_t p, int64_t s, int64_t d, int64_t pb, int64_t window, int64_t dx_len,
                  int64_t dy_len, bool flip) {
  DimPhase r;
  r.q = (dx_len - p + s - 1) / s;
  const int64_t g = gcd64(d, s);
  r.step = s / g;
  r.dilation = d / g;
  int64_t t0 = -1;
  for (int64_t t = 0; t < std::min(window, r.step); ++t) {
    if ((p + pb - t * d) % s == 0) {
      t0 = t;
      break;
    }
  }
  if (t0 < 0) {
    r.empty = true;
    return r;
  }
  r.taps = (window - 1 - t0) / r.step + 1;
  const int64_t e0 = (p + pb - t0 * d) / s;  // exact
  const int64_t reach = (r.taps - 1) * r.dilation;
  const int64_t pad = reach - e0;  // dx_p[q] reads dy[q - pad + j * dilation], j < taps
  const int64_t lo = std::max<int64_t>(0, -pad), hi = std::min(dy_len, r.q - pad + reach);
  if (hi <= lo) {
    r.empty = true;
    return r;
  }
  r.dy_begin = lo;
  r.dy_len = hi - lo;
  r.pad_begin = pad + lo;
  r.pad_end = r.q - pad + reach - hi;
  // Cross-correlation: sub-filter tap j is w[t0 + j m], run in CONVOLUTION mode (the flip). In
  // CONVOLUTION mode the effective tap t is w[window - 1 - t]: the same taps in reverse, run
  // in CROSS_CORRELATION mode.
  r.w_base = flip ? window - 1 - t0 - (r.taps - 1) * r.step : t0;
  return r;
}

// Phase idx of the problem (phases in row-major order over the spatial dims' phases), its
// sub-filter at byte wt_offset of the workspace.
Status phase_at(const char* fn, const Handle& h, const TransposedForward& p, int64_t idx,
                size_t wt_offset, Phase* ph) {
  const FilterDesc& w_desc = *p.w;
  const TensorDesc &dy_desc = *p.dy, &dx_desc = *p.dx;
  const ConvDesc& conv = *p.conv;
  const int sr = conv.spatial_rank();
  const bool flip = conv.mode() == ConvMode::CONVOLUTION;
  const int64_t groups = conv.groups(), kg = w_desc.k() / groups, cg = w_desc.c();
  const TensorDesc w = w_desc.as_tensor();
  *ph = Phase();
  int64_t rest = idx;
  DimPhase dp[3];
  for (int i = sr - 1; i >= 0; --i) {
    const int64_t phase = rest % p.count[i];
    rest /= p.count[i];
    dp[i] = plan_dim(phase, conv.stride(i), conv.dilation(i), conv.pad_begin(i),
                     w_desc.spatial(i), dx_desc.dim(2 + i), dy_desc.dim(2 + i), flip);
    ph->empty = ph->empty || dp[i].empty;
    ph->dx_offset += phase * dx_desc.stride(2 + i);
  }
  int64_t dx_dims[5] = {dx_desc.dim(0), dx_desc.dim(1)},
          dx_strides[5] = {dx_desc.stride(0), dx_desc.stride(1)};
  for (int i = 0; i < sr; ++i) {
    dx_dims[2 + i] = dp[i].q;
    dx_strides[2 + i] = conv.stride(i) * dx_desc.stride(2 + i);
  }
  ph->dx = TensorDesc::strided(dx_desc.dtype(), dx_desc.rank(), dx_dims, dx_strides);
  if (ph->empty) return Status();
  int64_t dy_dims[5] = {dy_desc.dim(0), dy_desc.dim(1)}, wt_dims[5] = {cg * groups, kg};
  int64_t pad_begin[3], pad_end[3], dilation[3];
  int64_t src_dims[kMaxRank] = {groups, cg, kg},
          src_strides[kMaxRank] = {kg * w.stride(0), w.stride(1), w.stride(0)};
  for (int i = 0; i < sr; ++i) {
    dy_dims[2 + i] = dp[i].dy_len;
    ph->dy_offset += dp[i].dy_begin * dy_desc.stride(2 + i);
    wt_dims[2 + i] = src_dims[3 + i] = dp[i].taps;
    src_strides[3 + i] = dp[i].step * w.stride(2 + i);
    ph->w_offset += dp[i].w_base * w.stride(2 + i);
    pad_begin[i] = dp[i].pad_begin;
    pad_end[i] = dp[i].pad_end;
    dilation[i] = dp[i].dilation;
  }
  ph->dy = TensorDesc::strided(dy_desc.dtype(), dy_desc.rank(), dy_dims, dy_desc.strides());
  ph->wt = FilterDesc::make(w_desc.dtype(), w_desc.layout(), w_desc.rank(), wt_dims);
  const TensorDesc wt = ph->wt.as_tensor();
  int64_t dst_strides[kMaxRank] = {cg * wt.stride(0), wt.stride(0), wt.stride(1)};
  for (int i = 0; i < sr; ++i) dst_strides[3 + i] = wt.stride(2 + i);
  ph->w_src = TensorDesc::strided(w_desc.dtype(), 3 + sr, src_dims, src_strides);
  ph->wt_dst = TensorDesc::strided(w_desc.dtype(), 3 + sr, src_dims, dst_strides);
  ph->conv = ConvDesc::make(sr, pad_begin, pad_end, nullptr, dilation, groups,
                            flip ? ConvMode::CROSS_CORRELATION : ConvMode::CONVOLUTION,
                            conv.compute_type())
                  .with_math(conv.math());
  ph->wt_offset = wt_offset;
  return in_routine(fn, choose_conv_forward_algo(h, ph->dy, ph->wt, ph->conv, ph->dx,
                                                 ConvPreference::PREFER_FASTEST, 0, &ph->algo));
}

Status plan_transposed_forward(const char* fn, const Handle& h, const FilterDesc& w_desc,
                               const TensorDesc& dy_desc, const ConvDesc& conv,
                               const TensorDesc& dx_desc, TransposedForward* p) {
  JET_TRY(in_routine(fn, conv.validate()));
  JET_TRY(in_routine(fn, w_desc.validate("w")));
  JET_TRY(in_routine(fn, dy_desc.validate_spatial("dy")));
  JET_TRY(in_routine(fn, dx_desc.validate_spatial("dx")));
  const int sr = conv.spatial_rank();
  if (w_desc.spatial_rank() != sr || dy_desc.spatial_rank() != sr ||
      dx_desc.rank() != dy_desc.rank())
    return make_status(StatusCode::BAD_PARAM,
                       "%s: dy, dx, w and the convolution descriptor disagree on the spatial rank",
                       fn);
  int64_t want[5];
  JET_TRY(in_routine(fn, conv_output_dims(dx_desc, w_desc, conv, want)));
  if (!std::equal(want, want + dy_desc.rank(), dy_desc.dims()))
    return make_status(StatusCode::BAD_PARAM,
                       "%s: dy has dims %s but the convolution of dx gives %s", fn,
                       dims_text(dy_desc.rank(), dy_desc.dims()).c_str(),
                       dims_text(dy_desc.rank(), want).c_str());
  JET_TRY(check_same_dtype(fn, dy_desc, "dy", dx_desc, "dx"));
  JET_TRY(check_same_dtype(fn, dy_desc, "dy", w_desc.as_tensor(), "w"));
  p->w = &w_desc;
  p->dy = &dy_desc;
  p->dx = &dx_desc;
  p->conv = &conv;
  int64_t phases = 1;
  for (int i = 0; i < sr; ++i) {
    if (conv.stride(i) > kMaxPhases || (phases *= conv.stride(i)) > kMaxPhases)
      return make_status(StatusCode::NOT_SUPPORTED,
                         "%s: %s splits dx into one phase per stride combination, at most %lld; "
                         "the strides give more (use %s)",
                         fn, conv_bwd_data_algo_name(ConvBwdDataAlgo::TRANSPOSED_FORWARD),
                         static_cast<long long>(kMaxPhases),
                         conv_bwd_data_algo_name(ConvBwdDataAlgo::GATHER));
    p->count[i] = std::min(conv.stride(i), dx_desc.dim(2 + i));
  }
  p->phases = p->count[0] * p->count[1] * p->count[2];
  p->any_empty = false;
  p->filter_bytes = p->forward_bytes = 0;
  for (int64_t idx = 0; idx < p->phases; ++idx) {
    Phase ph;
    JET_TRY(phase_at(fn, h, *p, idx, p->filter_bytes, &ph));
    if (ph.empty) {
      p->any_empty = true;
      continue;
    }
    size_t fwd = 0;
    JET_TRY(in_routine(
        fn, conv_forward_workspace_size(h, ph.dy, ph.wt, ph.conv, ph.dx, ph.algo, &fwd)));
    p->forward_bytes = std::max(p->forward_bytes, fwd);
    p->filter_bytes += (ph.wt.bytes() + 255) / 256 * 256;
  }
  return Status();
}

// y = alpha * 0 + beta * y over the view y_desc: pad_forward of a 1-element x cropped away
// entirely (x = any valid pointer of y's dtype; it is never read), so beta = 0 writes exact
// zeros over whatever y held.
Status fill_beta(const Handle& h, float beta, const TensorDesc& y_desc, void* y, const void* any) {
  int64_t ones[kMaxRank], pad_begin[kMaxRank], pad_end[kMaxRank];
  for (int i = 0; i < y_desc.rank(); ++i) {
    ones[i] = 1;
    pad_begin[i] = y_desc.dim(i);
    pad_end[i] = -1;
  }
  const TensorDesc x = TensorDesc::packed(y_desc.dtype(), y_desc.rank(), ones);
  return pad_forward(h, PadMode::CONSTANT, pad_begin, pad_end, 0.f, 1.f, x, any, beta, y_desc,
                     y);
}

}  // namespace

Status conv_backward_data_workspace_size(const Handle& handle, const FilterDesc& w_desc,
                                         const TensorDesc& dy_desc, const ConvDesc& conv,
                                         const TensorDesc& dx_desc, ConvBwdDataAlgo algo,
                                         size_t* bytes) {
  const char* fn = "conv_backward_data_workspace_size";
  JET_TRY(check_ptr(fn, bytes, "bytes"));
  switch (algo) {
    case ConvBwdDataAlgo::GATHER:
      *bytes = 0;
      return Status();
    case ConvBwdDataAlgo::TRANSPOSED_FORWARD: {
      TransposedForward p;
      JET_TRY(plan_transposed_forward(fn, handle, w_desc, dy_desc, conv, dx_desc, &p));
      *bytes = p.filter_bytes + p.forward_bytes;
      return Status();
    }
    case ConvBwdDataAlgo::COUNT:
      break;
  }
  return make_status(StatusCode::BAD_PARAM, "%s: unknown algorithm %d", fn, static_cast<int>(algo));
}

Status conv_backward_data(const Handle& handle, float alpha, const FilterDesc& w_desc,
                          const void* w, const TensorDesc& dy_desc, const void* dy,
                          const ConvDesc& conv, ConvBwdDataAlgo algo, void* workspace,
                          size_t workspace_bytes, float beta, const TensorDesc& dx_desc, void* dx) {
  const char* fn = "conv_backward_data";
  if (algo == ConvBwdDataAlgo::GATHER)
    return conv_backward_data(handle, alpha, w_desc, w, dy_desc, dy, conv, beta, dx_desc, dx);
  if (algo != ConvBwdDataAlgo::TRANSPOSED_FORWARD)
    return make_status(StatusCode::BAD_PARAM, "%s: unknown algorithm %d", fn,
                       static_cast<int>(algo));
  TransposedForward p;
  JET_TRY(plan_transposed_forward(fn, handle, w_desc, dy_desc, conv, dx_desc, &p));
  JET_TRY(check_ptr(fn, w, "w"));
  JET_TRY(check_ptr(fn, dy, "dy"));
  JET_TRY(check_ptr(fn, dx, "dx"));
  if (dx == dy)
    return make_status(StatusCode::BAD_PARAM, "%s: dx must not be dy (no in-place convolution)",
                       fn);
  const size_t needed = p.filter_bytes + p.forward_bytes;
  if (needed > 0 && (!workspace || workspace_bytes < needed))
    return make_status(StatusCode::BAD_PARAM,
                       "%s: algorithm %s needs %zu bytes of workspace, got %zu%s", fn,
                       conv_bwd_data_algo_name(algo), needed, workspace_bytes,
                       workspace ? "" : " (a null pointer)");
  uint8_t* ws = static_cast<uint8_t*>(workspace);
  const size_t elem = dtype_size(dx_desc.dtype());
  uint8_t* dxb = static_cast<uint8_t*>(dx);
  const uint8_t* dyb = static_cast<const uint8_t*>(dy);
  const uint8_t* wb = static_cast<const uint8_t*>(w);
  // Phases no tap reaches: with beta = 0 one pass zeroes all of dx first (the other phases
  // then overwrite theirs); else each gets beta * dx in its view (nothing to do for beta = 1).
  const bool zero_first = p.any_empty && beta == 0.f;
  if (zero_first) JET_TRY(in_routine(fn, fill_beta(handle, 0.f, dx_desc, dx, dy)));
  size_t wt_offset = 0;
  for (int64_t idx = 0; idx < p.phases; ++idx) {
    Phase ph;
    JET_TRY(phase_at(fn, handle, p, idx, wt_offset, &ph));
    uint8_t* dxp = dxb + ph.dx_offset * static_cast<int64_t>(elem);
    if (ph.empty) {
      if (!zero_first && beta != 1.f)
        JET_TRY(in_routine(fn, fill_beta(handle, beta, ph.dx, dxp, dy)));
      continue;
    }
    wt_offset += (ph.wt.bytes() + 255) / 256 * 256;
    uint8_t* wt = ws + ph.wt_offset;
    JET_TRY(in_routine(fn, transform_tensor(handle, 1.f, ph.w_src,
                                            wb + ph.w_offset * static_cast<int64_t>(elem), 0.f,
                                            ph.wt_dst, wt)));
    JET_TRY(in_routine(fn, conv_forward(handle, alpha, ph.dy,
                                        dyb + ph.dy_offset * static_cast<int64_t>(elem), ph.wt, wt,
                                        ph.conv, ph.algo,
                                        p.forward_bytes ? ws + p.filter_bytes : nullptr,
                                        p.forward_bytes, beta, ph.dx, dxp)));
  }
  return Status();
}

}  // namespace jet
