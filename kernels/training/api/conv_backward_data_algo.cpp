// conv_backward_data with an algorithm choice, and its workspace query. GATHER is the inference
// library's conv_backward_data; TRANSPOSED_FORWARD is composed here from transform_tensor and
// conv_forward (either backend), so it has no backend code of its own.
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

// TRANSPOSED_FORWARD's forward convolution: dy (K channels) -> dx (C channels) with the filter
// wt (C x K / groups x window, w's layout), stride 1, pads dilation * (window - 1) - pad, the
// other mode; and its workspace: wt, 256-aligned, then conv_forward's.
struct TransposedForward {
  FilterDesc wt;
  ConvDesc conv;
  ConvAlgo algo = ConvAlgo::DIRECT;
  size_t filter_bytes = 0;
  size_t forward_bytes = 0;
};

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
  if (w_desc.k() % conv.groups() != 0)
    return make_status(StatusCode::BAD_PARAM,
                       "%s: w has %lld filters, not a multiple of the %lld groups", fn,
                       static_cast<long long>(w_desc.k()), static_cast<long long>(conv.groups()));
  int64_t pad_begin[3], pad_end[3], dilation[3];
  for (int i = 0; i < sr; ++i) {
    if (conv.stride(i) != 1)
      return make_status(StatusCode::NOT_SUPPORTED,
                         "%s: %s needs stride 1; spatial dim %d has stride %lld (use %s)", fn,
                         conv_bwd_data_algo_name(ConvBwdDataAlgo::TRANSPOSED_FORWARD), i,
                         static_cast<long long>(conv.stride(i)),
                         conv_bwd_data_algo_name(ConvBwdDataAlgo::GATHER));
    const int64_t reach = conv.dilation(i) * (w_desc.spatial(i) - 1);
    pad_begin[i] = reach - conv.pad_begin(i);
    pad_end[i] = reach - conv.pad_end(i);
    dilation[i] = conv.dilation(i);
    if (pad_begin[i] < 0 || pad_end[i] < 0)
      return make_status(StatusCode::NOT_SUPPORTED,
                         "%s: %s needs pads <= dilation * (window - 1) = %lld; spatial dim %d has "
                         "pads %lld, %lld (use %s)",
                         fn, conv_bwd_data_algo_name(ConvBwdDataAlgo::TRANSPOSED_FORWARD),
                         static_cast<long long>(reach), i,
                         static_cast<long long>(conv.pad_begin(i)),
                         static_cast<long long>(conv.pad_end(i)),
                         conv_bwd_data_algo_name(ConvBwdDataAlgo::GATHER));
  }
  int64_t dims[5] = {w_desc.c() * conv.groups(), w_desc.k() / conv.groups()};
  for (int i = 0; i < sr; ++i) dims[2 + i] = w_desc.spatial(i);
  p->wt = FilterDesc::make(w_desc.dtype(), w_desc.layout(), w_desc.rank(), dims);
  p->conv = ConvDesc::make(
      sr, pad_begin, pad_end, nullptr, dilation, conv.groups(),
      conv.mode() == ConvMode::CONVOLUTION ? ConvMode::CROSS_CORRELATION : ConvMode::CONVOLUTION,
      conv.compute_type());
  JET_TRY(in_routine(fn, choose_conv_forward_algo(h, dy_desc, p->wt, p->conv, dx_desc,
                                                  ConvPreference::PREFER_FASTEST, 0, &p->algo)));
  JET_TRY(in_routine(fn, conv_forward_workspace_size(h, dy_desc, p->wt, p->conv, dx_desc, p->algo,
                                                     &p->forward_bytes)));
  p->filter_bytes =
      (static_cast<size_t>(p->wt.elements()) * dtype_size(w_desc.dtype()) + 255) / 256 * 256;
  return Status();
}

// w (K x C/groups x window) viewed as [groups, C/groups, K/groups, window...] (src) and the same
// elements' places in wt (dst): wt[g * C/groups + c, k, t] = w[g * K/groups + k, c, t].
void transpose_views(const FilterDesc& w_desc, const FilterDesc& wt_desc, int64_t groups,
                     TensorDesc* src, TensorDesc* dst) {
  const TensorDesc w = w_desc.as_tensor(), wt = wt_desc.as_tensor();
  const int64_t kg = w_desc.k() / groups, cg = w_desc.c();
  const int sr = w_desc.spatial_rank();
  int64_t dims[kMaxRank] = {groups, cg, kg},
          ss[kMaxRank] = {kg * w.stride(0), w.stride(1), w.stride(0)},
          ds[kMaxRank] = {cg * wt.stride(0), wt.stride(0), wt.stride(1)};
  for (int i = 0; i < sr; ++i) {
    dims[3 + i] = w_desc.spatial(i);
    ss[3 + i] = w.stride(2 + i);
    ds[3 + i] = wt.stride(2 + i);
  }
  *src = TensorDesc::strided(w_desc.dtype(), 3 + sr, dims, ss);
  *dst = TensorDesc::strided(w_desc.dtype(), 3 + sr, dims, ds);
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
  const size_t needed = p.filter_bytes + p.forward_bytes;
  if (!workspace || workspace_bytes < needed)
    return make_status(StatusCode::BAD_PARAM,
                       "%s: algorithm %s needs %zu bytes of workspace, got %zu%s", fn,
                       conv_bwd_data_algo_name(algo), needed, workspace_bytes,
                       workspace ? "" : " (a null pointer)");
  TensorDesc src, dst;
  transpose_views(w_desc, p.wt, conv.groups(), &src, &dst);
  uint8_t* wt = static_cast<uint8_t*>(workspace);
  JET_TRY(in_routine(fn, transform_tensor(handle, 1.f, src, w, 0.f, dst, wt)));
  return in_routine(fn, conv_forward(handle, alpha, dy_desc, dy, p.wt, wt, p.conv, p.algo,
                                     p.forward_bytes ? wt + p.filter_bytes : nullptr,
                                     p.forward_bytes, beta, dx_desc, dx));
}

}  // namespace jet
