// conv_backward_data (the transposed convolution) and conv_transpose_output_dims: validation and
// backend dispatch.
//
// The checks name the tensors as this routine's caller knows them (dx, dy, w) instead of reusing
// conv_forward's messages about x and y; the output size itself comes from conv_output_dims, so
// that dx -> dy here is exactly the convolution conv_forward would run.
//
// CPU convolution backward data (the transposed convolution), a direct gather:
//   dx[n, c, i] = sum over k in c's group, taps t with i + pad_begin - t * dilation = o * stride
//                 for an o inside dy, of dy[n, k, o] * w[k, c_in_group, t] (t flipped in
//                 CONVOLUTION mode).
// Every dx element is written once from its own sum (no scatter, no zero-fill pass, so beta == 0
// never reads dx and the result does not depend on the order of the taps' arrival). Channels of
// one group are processed in blocks so that each dy value loaded serves a block of accumulators,
// as the forward DIRECT algorithm does with filters. No workspace, no allocation.

#include <algorithm>

#include "../api/backend.h"
#include "../api/check.h"
#include "cpu_common.h"

namespace jet {

JET_BACKEND_ENTRIES(conv_backward_data, float alpha, const FilterDesc& w_desc, const void* w,
                    const TensorDesc& dy_desc, const void* dy, const ConvDesc& conv, float beta,
                    const TensorDesc& dx_desc, void* dx);

namespace {

// Keeps the dx size arithmetic of conv_transpose_output_dims within int64: every term below
// 2^62 (pads, strides and dilations are at most 2^31 by ConvDesc::validate).
constexpr int64_t kMaxTerm = int64_t(1) << 62;

// Descriptors, ranks, channels and groups of dy, w and the convolution, without dx.
Status check_dy_w_conv(const char* fn, const TensorDesc& dy_desc, const FilterDesc& w_desc,
                       const ConvDesc& conv) {
  JET_RETURN_IF_ERROR(in_routine(fn, conv.validate()));
  JET_RETURN_IF_ERROR(in_routine(fn, dy_desc.validate_spatial("dy")));
  JET_RETURN_IF_ERROR(in_routine(fn, w_desc.validate("w")));
  if (w_desc.spatial_rank() != dy_desc.spatial_rank() ||
      conv.spatial_rank() != dy_desc.spatial_rank())
    return make_status(StatusCode::BAD_PARAM,
                       "%s: dy (dims %s) has %d spatial dims, w %d and the convolution "
                       "descriptor %d; they must agree",
                       fn, dims_text(dy_desc.rank(), dy_desc.dims()).c_str(),
                       dy_desc.spatial_rank(), w_desc.spatial_rank(), conv.spatial_rank());
  if (w_desc.k() % conv.groups() != 0)
    return make_status(StatusCode::BAD_PARAM,
                       "%s: w has %lld filters, not a multiple of the %lld groups", fn,
                       static_cast<long long>(w_desc.k()), static_cast<long long>(conv.groups()));
  if (dy_desc.dim(1) != w_desc.k())
    return make_status(StatusCode::BAD_PARAM,
                       "%s: dy has %lld channels but w has %lld filters; dy's channels are the "
                       "forward convolution's outputs, one per filter",
                       fn, static_cast<long long>(dy_desc.dim(1)),
                       static_cast<long long>(w_desc.k()));
  return Status();
}

// Everything conv_backward_data needs of its descriptors: dx's channels match w and the groups,
// the window fits dx plus padding, dy is exactly the convolution of dx, one dtype.
Status check_backward_data(const char* fn, const TensorDesc& dx_desc, const FilterDesc& w_desc,
                           const ConvDesc& conv, const TensorDesc& dy_desc) {
  JET_RETURN_IF_ERROR(check_dy_w_conv(fn, dy_desc, w_desc, conv));
  JET_RETURN_IF_ERROR(in_routine(fn, dx_desc.validate_spatial("dx")));
  if (dx_desc.rank() != dy_desc.rank())
    return make_status(StatusCode::BAD_PARAM, "%s: dx has rank %d but dy has rank %d", fn,
                       dx_desc.rank(), dy_desc.rank());
  // Divide before multiplying: a huge groups value must not overflow the product.
  if (dx_desc.dim(1) % conv.groups() != 0 || dx_desc.dim(1) / conv.groups() != w_desc.c())
    return make_status(StatusCode::BAD_PARAM,
                       "%s: dx has %lld channels but w expects %lld per group x %lld groups",
                       fn, static_cast<long long>(dx_desc.dim(1)),
                       static_cast<long long>(w_desc.c()), static_cast<long long>(conv.groups()));
  for (int i = 0; i < conv.spatial_rank(); ++i) {
    const int64_t window = w_desc.spatial(i);
    const int64_t padded = dx_desc.dim(2 + i) + conv.pad_begin(i) + conv.pad_end(i);
    if (window > padded || (window > 1 && conv.dilation(i) > (padded - 1) / (window - 1)))
      return make_status(StatusCode::BAD_PARAM,
                         "%s: along spatial dim %d the filter (%lld taps, dilation %lld) is "
                         "larger than dx's extent %lld plus padding %lld + %lld",
                         fn, i, static_cast<long long>(window),
                         static_cast<long long>(conv.dilation(i)),
                         static_cast<long long>(dx_desc.dim(2 + i)),
                         static_cast<long long>(conv.pad_begin(i)),
                         static_cast<long long>(conv.pad_end(i)));
  }
  // The convolution of dx must produce dy exactly (N and every spatial extent).
  int64_t expected[5];
  JET_RETURN_IF_ERROR(in_routine(fn, conv_output_dims(dx_desc, w_desc, conv, expected)));
  bool same = true;
  for (int i = 0; i < dy_desc.rank(); ++i) same = same && dy_desc.dim(i) == expected[i];
  if (!same)
    return make_status(StatusCode::BAD_PARAM,
                       "%s: dy has dims %s but the convolution of dx (dims %s) gives %s; dx's "
                       "size must be one whose convolution is dy (see "
                       "conv_transpose_output_dims)",
                       fn, dims_text(dy_desc.rank(), dy_desc.dims()).c_str(),
                       dims_text(dx_desc.rank(), dx_desc.dims()).c_str(),
                       dims_text(dy_desc.rank(), expected).c_str());
  JET_RETURN_IF_ERROR(check_same_dtype(fn, dx_desc, "dx", w_desc.as_tensor(), "w"));
  JET_RETURN_IF_ERROR(check_same_dtype(fn, dx_desc, "dx", dy_desc, "dy"));
  return Status();
}

}  // namespace

Status conv_transpose_output_dims(const TensorDesc& dy_desc, const FilterDesc& w_desc,
                                  const ConvDesc& conv, const int64_t* output_padding,
                                  int64_t* dx_dims) {
  const char* fn = "conv_transpose_output_dims";
  JET_RETURN_IF_ERROR(check_ptr(fn, dx_dims, "dx_dims"));
  JET_RETURN_IF_ERROR(check_dy_w_conv(fn, dy_desc, w_desc, conv));
  int64_t dims[5];
  dims[0] = dy_desc.dim(0);
  dims[1] = w_desc.c() * conv.groups();
  for (int i = 0; i < conv.spatial_rank(); ++i) {
    const int64_t out_pad = output_padding ? output_padding[i] : 0;
    const int64_t stride = conv.stride(i), dilation = conv.dilation(i);
    if (out_pad < 0 || out_pad >= stride)
      return make_status(StatusCode::BAD_PARAM,
                         "%s: output_padding %lld on spatial dim %d must be in [0, stride = "
                         "%lld): a larger one makes dx's convolution longer than dy",
                         fn, static_cast<long long>(out_pad), i, static_cast<long long>(stride));
    const int64_t dy_extent = dy_desc.dim(2 + i), window = w_desc.spatial(i);
    if (dy_extent - 1 > kMaxTerm / stride || window - 1 > kMaxTerm / dilation)
      return make_status(StatusCode::BAD_PARAM,
                         "%s: along spatial dim %d dy's extent %lld x stride %lld or the "
                         "filter's %lld taps x dilation %lld overflow the size arithmetic",
                         fn, i, static_cast<long long>(dy_extent), static_cast<long long>(stride),
                         static_cast<long long>(window), static_cast<long long>(dilation));
    const int64_t extent = (dy_extent - 1) * stride - conv.pad_begin(i) - conv.pad_end(i) +
                           dilation * (window - 1) + 1 + out_pad;
    if (extent < 1)
      return make_status(StatusCode::BAD_PARAM,
                         "%s: along spatial dim %d dx would have extent %lld: the padding "
                         "%lld + %lld removes more than the transposed convolution produces",
                         fn, i, static_cast<long long>(extent),
                         static_cast<long long>(conv.pad_begin(i)),
                         static_cast<long long>(conv.pad_end(i)));
    dims[2 + i] = extent;
  }
  for (int i = 0; i < dy_desc.rank(); ++i) dx_dims[i] = dims[i];
  return Status();
}

Status conv_backward_data(const Handle& handle, float alpha, const FilterDesc& w_desc,
                          const void* w, const TensorDesc& dy_desc, const void* dy,
                          const ConvDesc& conv, float beta, const TensorDesc& dx_desc, void* dx) {
  const char* fn = "conv_backward_data";
  JET_RETURN_IF_ERROR(check_backward_data(fn, dx_desc, w_desc, conv, dy_desc));
  JET_RETURN_IF_ERROR(check_ptr(fn, w, "w"));
  JET_RETURN_IF_ERROR(check_ptr(fn, dy, "dy"));
  JET_RETURN_IF_ERROR(check_ptr(fn, dx, "dx"));
  if (dx == dy)
    return make_status(StatusCode::BAD_PARAM,
                       "%s: dx and dy are the same buffer; convolution cannot run in place", fn);
  if (handle.backend() == Backend::CPU)
    return in_routine(fn, cpu::conv_backward_data(alpha, w_desc, w, dy_desc, dy, conv, beta,
                                                  dx_desc, dx));
#if defined(JET_HAVE_CUDA)
  return in_routine(fn, cuda::conv_backward_data(handle, alpha, w_desc, w, dy_desc, dy, conv, beta,
                                                 dx_desc, dx));
#else
  return cuda_not_available(fn);
#endif
}

// ---------------------------------------------------------------------------------------------
// The CPU backend (cpu::), called by the front end above.

namespace cpu {

namespace {

// The problem with 1-3 spatial dims stored as 3: missing leading dims have extent 1 and stride 0.
// "in" is dx (the forward convolution's input), "out" is dy.
struct BackwardGeom {
  int64_t batch = 1, groups = 1;
  int64_t group_channels = 1;  // dx channels per group (w's C)
  int64_t group_filters = 1;   // dy channels per group
  int64_t in[3] = {1, 1, 1}, out[3] = {1, 1, 1}, win[3] = {1, 1, 1};
  int64_t pad[3] = {0, 0, 0}, stride[3] = {1, 1, 1}, dilation[3] = {1, 1, 1};
  int64_t dxs_n = 0, dxs_c = 0, dxs[3] = {0, 0, 0};
  int64_t dys_n = 0, dys_c = 0, dys[3] = {0, 0, 0};
  int64_t ws_k = 0, ws_c = 0, ws[3] = {0, 0, 0};
  bool flip = false;
};

BackwardGeom make_geom(const FilterDesc& w_desc, const TensorDesc& dy_desc, const ConvDesc& conv,
                       const TensorDesc& dx_desc) {
  BackwardGeom g;
  g.batch = dx_desc.dim(0);
  g.groups = conv.groups();
  g.group_channels = w_desc.c();
  g.group_filters = w_desc.k() / conv.groups();
  g.dxs_n = dx_desc.stride(0);
  g.dxs_c = dx_desc.stride(1);
  g.dys_n = dy_desc.stride(0);
  g.dys_c = dy_desc.stride(1);
  const TensorDesc wt = w_desc.as_tensor();
  g.ws_k = wt.stride(0);
  g.ws_c = wt.stride(1);
  const int spatial = conv.spatial_rank();
  for (int i = 0; i < spatial; ++i) {
    const int d = 3 - spatial + i;
    g.in[d] = dx_desc.dim(2 + i);
    g.out[d] = dy_desc.dim(2 + i);
    g.win[d] = w_desc.spatial(i);
    g.pad[d] = conv.pad_begin(i);
    g.stride[d] = conv.stride(i);
    g.dilation[d] = conv.dilation(i);
    g.dxs[d] = dx_desc.stride(2 + i);
    g.dys[d] = dy_desc.stride(2 + i);
    g.ws[d] = wt.stride(2 + i);
  }
  g.flip = conv.mode() == ConvMode::CONVOLUTION;
  return g;
}

inline float to_f32(float v) { return v; }
inline float to_f32(uint16_t h) { return half::half_bits_to_float(h); }

// dx channels accumulated together: each dy value loaded serves this many sums.
constexpr int64_t kChannelBlock = 16;

template <class T>
void backward_data(const BackwardGeom& g, float alpha, const T* w, const T* dy, float beta,
                   DType dtype, void* dx) {
  for (int64_t n = 0; n < g.batch; ++n) {
    for (int64_t i0 = 0; i0 < g.in[0]; ++i0) {
      for (int64_t i1 = 0; i1 < g.in[1]; ++i1) {
        for (int64_t i2 = 0; i2 < g.in[2]; ++i2) {
          const int64_t pos[3] = {i0, i1, i2};
          const int64_t dx_pos = n * g.dxs_n + i0 * g.dxs[0] + i1 * g.dxs[1] + i2 * g.dxs[2];
          for (int64_t group = 0; group < g.groups; ++group) {
            const int64_t first_filter = group * g.group_filters;
            for (int64_t c0 = 0; c0 < g.group_channels; c0 += kChannelBlock) {
              const int64_t cb = std::min(kChannelBlock, g.group_channels - c0);
              float acc[kChannelBlock] = {};
              // Taps along dim 0, then 1, then 2; a tap whose dy position falls between two
              // strided outputs or outside dy contributes nothing.
              for (int64_t t0 = 0; t0 < g.win[0]; ++t0) {
                const int64_t q0 = pos[0] + g.pad[0] - t0 * g.dilation[0];
                if (q0 < 0) break;  // q only decreases with t
                if (q0 % g.stride[0] != 0 || q0 / g.stride[0] >= g.out[0]) continue;
                const int64_t f0 = g.flip ? g.win[0] - 1 - t0 : t0;
                const int64_t dy0 = q0 / g.stride[0] * g.dys[0];
                for (int64_t t1 = 0; t1 < g.win[1]; ++t1) {
                  const int64_t q1 = pos[1] + g.pad[1] - t1 * g.dilation[1];
                  if (q1 < 0) break;
                  if (q1 % g.stride[1] != 0 || q1 / g.stride[1] >= g.out[1]) continue;
                  const int64_t f1 = g.flip ? g.win[1] - 1 - t1 : t1;
                  const int64_t dy1 = dy0 + q1 / g.stride[1] * g.dys[1];
                  for (int64_t t2 = 0; t2 < g.win[2]; ++t2) {
                    const int64_t q2 = pos[2] + g.pad[2] - t2 * g.dilation[2];
                    if (q2 < 0) break;
                    if (q2 % g.stride[2] != 0 || q2 / g.stride[2] >= g.out[2]) continue;
                    const int64_t f2 = g.flip ? g.win[2] - 1 - t2 : t2;
                    const T* dyp = dy + n * g.dys_n + dy1 + q2 / g.stride[2] * g.dys[2];
                    const T* wp = w + f0 * g.ws[0] + f1 * g.ws[1] + f2 * g.ws[2] + c0 * g.ws_c;
                    for (int64_t k = first_filter; k < first_filter + g.group_filters; ++k) {
                      const float dv = to_f32(dyp[k * g.dys_c]);
                      const T* wk = wp + k * g.ws_k;
                      for (int64_t b = 0; b < cb; ++b) acc[b] += dv * to_f32(wk[b * g.ws_c]);
                    }
                  }
                }
              }
              const int64_t c_first = group * g.group_channels + c0;
              for (int64_t b = 0; b < cb; ++b)
                blend_store(dtype, dx, dx_pos + (c_first + b) * g.dxs_c, alpha, acc[b], beta);
            }
          }
        }
      }
    }
  }
}

}  // namespace

Status conv_backward_data(float alpha, const FilterDesc& w_desc, const void* w,
                          const TensorDesc& dy_desc, const void* dy, const ConvDesc& conv,
                          float beta, const TensorDesc& dx_desc, void* dx) {
  const BackwardGeom g = make_geom(w_desc, dy_desc, conv, dx_desc);
  if (dx_desc.dtype() == DType::F32)
    backward_data(g, alpha, static_cast<const float*>(w), static_cast<const float*>(dy), beta,
                  DType::F32, dx);
  else
    backward_data(g, alpha, static_cast<const uint16_t*>(w), static_cast<const uint16_t*>(dy),
                  beta, DType::F16, dx);
  return Status();
}

}  // namespace cpu

}  // namespace jet
