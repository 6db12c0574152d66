// conv_backward_data (the transposed convolution) and conv_transpose_output_dims: validation and
// backend dispatch.
//
// The checks name the tensors as this routine's caller knows them (dx, dy, w) instead of reusing
// conv_forward's messages about x and y; the output size itself comes from conv_output_dims, so
// that dx -> dy here is exactly the convolution conv_forward would run.
#include "backend.h"
#include "check.h"

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

}  // namespace jet
