// ConvDesc construction and validation, conv_output_dims, the workspace query, algorithm choice,
// and conv_forward / conv_bias_act_forward: validation and backend dispatch.
//
// CPU convolution forward: DIRECT, IMPLICIT_GEMM, IMPLICIT_PRECOMP_GEMM and GEMM, all with the
// fused epilogue applied as the output is written.
//
// Every algorithm sees the problem through ConvGeom: 1D and 2D convolutions are 3D ones whose
// leading spatial dims have extent 1, and the convolution mode's filter flip is folded into the
// filter offsets. The GEMM algorithms view the convolution of one group as
//   y[row, k] = sum over depth of lowered_x[row, depth] * w[k, depth]
// with row = (image, output pixel), k = the group's filters, depth = (input channel, filter tap).
// The lowered input is never needed as a whole: its element (row, depth) is x at the row's
// window origin plus the tap's offset, when that lands inside x, else 0. ConvRow and ConvTap hold
// exactly those two halves of the address, so the lowered input is "row table + tap table":
//   IMPLICIT_GEMM computes the tables for each block of the GEMM on the stack,
//   IMPLICIT_PRECOMP_GEMM computes them once for the whole problem into the workspace,
//   GEMM writes the lowered input itself (im2col, in chunks of rows) into the workspace, laid
//   out as the GEMM engine's A panels, with the filters pre-packed there too.
// When the lowering is the identity (1x1 window, stride 1, no padding) the GEMM algorithms read
// x directly as a strided matrix. Scratch outside the workspace: the GEMM engine's stack blocks
// (about 190 KiB) and the per-block tables (about 9 KiB).

#include <algorithm>
#include <chrono>
#include <vector>

#include "../api/backend.h"
#include "../api/check.h"
#include "../common/activation_math.h"
#include "cpu_common.h"
#include "gemm_engine.h"

namespace jet {

JET_BACKEND_ENTRIES(conv_forward_workspace_size, const TensorDesc& x_desc, const FilterDesc& w_desc,
                    const ConvDesc& conv, const TensorDesc& y_desc, ConvAlgo algo, size_t* bytes);
JET_CUDA_ENTRY(conv_forward_tactic_count, const TensorDesc& x_desc, const FilterDesc& w_desc,
               const ConvDesc& conv, const TensorDesc& y_desc, ConvAlgo algo, int* count);
JET_BACKEND_ENTRIES(choose_conv_forward_algo, const TensorDesc& x_desc, const FilterDesc& w_desc,
                    const ConvDesc& conv, const TensorDesc& y_desc, ConvPreference preference,
                    size_t workspace_limit, ConvAlgo* algo);
JET_BACKEND_ENTRIES(conv_forward, float alpha1, const TensorDesc& x_desc, const void* x,
                    const FilterDesc& w_desc, const void* w, const ConvDesc& conv, ConvAlgo algo,
                    void* workspace, size_t workspace_bytes, const ConvEpilogue& epilogue,
                    const TensorDesc& y_desc, void* y);
// For find_conv_forward_algo: runs conv_forward(algo) with alpha 1, beta 0 once to warm up, then
// times `runs` runs with CUDA events on the handle's stream; *ms gets their median. Synchronizes.
JET_CUDA_ENTRY(time_conv_forward_algo, const TensorDesc& x_desc, const void* x,
               const FilterDesc& w_desc, const void* w, const ConvDesc& conv, ConvAlgo algo,
               void* workspace, size_t workspace_bytes, const TensorDesc& y_desc, void* y, int runs,
               float* ms);

namespace {

// Pads, strides and dilations are capped so that the output-size arithmetic
// (in + pads - dilation * (window - 1)) and the kernels' index arithmetic cannot overflow int64.
constexpr int64_t kMaxConvParam = int64_t(1) << 31;

// Checks shared by every routine taking x, w and a ConvDesc; fills the output dims.
Status conv_problem(const char* fn, const TensorDesc& x_desc, const FilterDesc& w_desc,
                    const ConvDesc& conv, int64_t* out_dims) {
  JET_RETURN_IF_ERROR(in_routine(fn, conv.validate()));
  JET_RETURN_IF_ERROR(in_routine(fn, x_desc.validate_spatial("x")));
  JET_RETURN_IF_ERROR(in_routine(fn, w_desc.validate("w")));
  if (w_desc.spatial_rank() != x_desc.spatial_rank() ||
      conv.spatial_rank() != x_desc.spatial_rank())
    return make_status(StatusCode::BAD_PARAM,
                       "%s: x (dims %s) has %d spatial dims, w %d and the convolution "
                       "descriptor %d; they must agree",
                       fn, dims_text(x_desc.rank(), x_desc.dims()).c_str(),
                       x_desc.spatial_rank(), w_desc.spatial_rank(), conv.spatial_rank());
  const int64_t groups = conv.groups();
  // Divide before multiplying: a huge groups value (say, from a damaged model file) must not
  // overflow the product.
  if (x_desc.dim(1) % groups != 0 || x_desc.dim(1) / groups != w_desc.c())
    return make_status(StatusCode::BAD_PARAM,
                       "%s: x has %lld channels but w expects %lld per group x %lld groups",
                       fn, static_cast<long long>(x_desc.dim(1)),
                       static_cast<long long>(w_desc.c()), static_cast<long long>(groups));
  if (w_desc.k() % groups != 0)
    return make_status(StatusCode::BAD_PARAM,
                       "%s: w has %lld filters, not a multiple of the %lld groups", fn,
                       static_cast<long long>(w_desc.k()), static_cast<long long>(groups));
  out_dims[0] = x_desc.dim(0);
  out_dims[1] = w_desc.k();
  for (int i = 0; i < conv.spatial_rank(); ++i) {
    const int64_t in = x_desc.dim(2 + i);
    const int64_t window = w_desc.spatial(i);
    // The dilated window must fit in the padded input: dilation * (window - 1) <= padded - 1,
    // tested by division so that it cannot overflow.
    const int64_t padded = in + conv.pad_begin(i) + conv.pad_end(i);
    if (window > padded ||
        (window > 1 && conv.dilation(i) > (padded - 1) / (window - 1)))
      return make_status(StatusCode::BAD_PARAM,
                         "%s: along spatial dim %d the filter (%lld taps, dilation %lld) is "
                         "larger than x's extent %lld plus padding %lld + %lld: the output "
                         "would be empty",
                         fn, i, static_cast<long long>(window),
                         static_cast<long long>(conv.dilation(i)), static_cast<long long>(in),
                         static_cast<long long>(conv.pad_begin(i)),
                         static_cast<long long>(conv.pad_end(i)));
    // The kernels form x offsets of positions in the padding (coordinate * stride); keep
    // those within int64 too.
    const int64_t x_stride = x_desc.stride(2 + i);
    if (x_stride > 0 && padded > (int64_t(1) << 62) / x_stride)
      return make_status(StatusCode::BAD_PARAM,
                         "%s: along spatial dim %d the padded extent %lld times x's stride "
                         "%lld overflows the offset range",
                         fn, i, static_cast<long long>(padded), static_cast<long long>(x_stride));
    out_dims[2 + i] = (padded - conv.dilation(i) * (window - 1) - 1) / conv.stride(i) + 1;
  }
  return Status();
}

// conv_problem plus y: its dims must be the output dims, and x, w, y share one dtype.
Status check_conv(const char* fn, const TensorDesc& x_desc, const FilterDesc& w_desc,
                  const ConvDesc& conv, const TensorDesc& y_desc) {
  int64_t out_dims[5];
  JET_RETURN_IF_ERROR(conv_problem(fn, x_desc, w_desc, conv, out_dims));
  JET_RETURN_IF_ERROR(in_routine(fn, y_desc.validate_spatial("y")));
  const TensorDesc expected = TensorDesc::packed(y_desc.dtype(), x_desc.rank(), out_dims);
  if (!y_desc.same_dims(expected))
    return make_status(StatusCode::BAD_PARAM, "%s: y has dims %s but the convolution gives %s",
                       fn, dims_text(y_desc.rank(), y_desc.dims()).c_str(),
                       dims_text(x_desc.rank(), out_dims).c_str());
  JET_RETURN_IF_ERROR(check_same_dtype(fn, x_desc, "x", w_desc.as_tensor(), "w"));
  JET_RETURN_IF_ERROR(check_same_dtype(fn, x_desc, "x", y_desc, "y"));
  return Status();
}

Status check_algo(const char* fn, ConvAlgo algo) {
  const int a = static_cast<int>(algo);
  if (a < 0 || a >= static_cast<int>(ConvAlgo::COUNT))
    return make_status(StatusCode::BAD_PARAM, "%s: unknown convolution algorithm %d", fn, a);
  return Status();
}

// The backend's workspace query and heuristic.
Status backend_workspace_size(const Handle& handle, const TensorDesc& x_desc,
                              const FilterDesc& w_desc, const ConvDesc& conv,
                              const TensorDesc& y_desc, ConvAlgo algo, size_t* bytes) {
  if (handle.backend() == Backend::CPU) {
    if (conv.tactic() != 0)
      return make_status(StatusCode::NOT_SUPPORTED,
                         "the CPU backend has no tactics (tactic %d requested; use 0)",
                         static_cast<int>(conv.tactic()));
    return cpu::conv_forward_workspace_size(x_desc, w_desc, conv, y_desc, algo, bytes);
  }
#if defined(JET_HAVE_CUDA)
  return cuda::conv_forward_workspace_size(handle, x_desc, w_desc, conv, y_desc, algo, bytes);
#else
  return cuda_not_available("convolution");
#endif
}

// The backend's tactic count (see conv_forward_tactic_count).
Status backend_tactic_count(const Handle& handle, const TensorDesc& x_desc,
                            const FilterDesc& w_desc, const ConvDesc& conv,
                            const TensorDesc& y_desc, ConvAlgo algo, int* count) {
  size_t bytes = 0;
  JET_RETURN_IF_ERROR(backend_workspace_size(handle, x_desc, w_desc, conv.with_tactic(0), y_desc, algo,
                                 &bytes));
  if (handle.backend() == Backend::CPU) {
    *count = 0;
    return Status();
  }
#if defined(JET_HAVE_CUDA)
  return cuda::conv_forward_tactic_count(handle, x_desc, w_desc, conv, y_desc, algo, count);
#else
  return cuda_not_available("convolution");
#endif
}

// Pointers, the in-place ban, the backend, and the workspace against the algorithm's need;
// then runs the CPU backend.
Status dispatch_conv(const char* fn, const Handle& handle, float alpha1,
                     const TensorDesc& x_desc, const void* x, const FilterDesc& w_desc,
                     const void* w, const ConvDesc& conv, ConvAlgo algo, void* workspace,
                     size_t workspace_bytes, const ConvEpilogue& epilogue,
                     const TensorDesc& y_desc, void* y) {
  JET_RETURN_IF_ERROR(check_algo(fn, algo));
  JET_RETURN_IF_ERROR(check_ptr(fn, x, "x"));
  JET_RETURN_IF_ERROR(check_ptr(fn, w, "w"));
  JET_RETURN_IF_ERROR(check_ptr(fn, y, "y"));
  if (x == y)
    return make_status(StatusCode::BAD_PARAM,
                       "%s: x and y are the same buffer; convolution cannot run in place", fn);
  size_t needed = 0;
  JET_RETURN_IF_ERROR(in_routine(
      fn, backend_workspace_size(handle, x_desc, w_desc, conv, y_desc, algo, &needed)));
  if (needed > 0 && !workspace)
    return make_status(StatusCode::BAD_PARAM,
                       "%s: workspace is a null pointer but algo %s needs %zu bytes", fn,
                       conv_algo_name(algo), needed);
  if (workspace_bytes < needed)
    return make_status(StatusCode::BAD_PARAM,
                       "%s: workspace too small: %zu bytes given, algo %s needs %zu", fn,
                       workspace_bytes, conv_algo_name(algo), needed);
  if (handle.backend() == Backend::CPU)
    return in_routine(fn, cpu::conv_forward(alpha1, x_desc, x, w_desc, w, conv, algo, workspace,
                                            workspace_bytes, epilogue, y_desc, y));
#if defined(JET_HAVE_CUDA)
  return in_routine(fn, cuda::conv_forward(handle, alpha1, x_desc, x, w_desc, w, conv, algo,
                                           workspace, workspace_bytes, epilogue, y_desc, y));
#else
  return cuda_not_available(fn);
#endif
}

}  // namespace

ConvDesc ConvDesc::make(int spatial_rank, const int64_t* pad_begin, const int64_t* pad_end,
                        const int64_t* stride, const int64_t* dilation, int64_t groups,
                        ConvMode mode, ComputeType compute) {
  ConvDesc c;
  c.spatial_rank_ = spatial_rank;
  c.groups_ = groups;
  c.mode_ = mode;
  c.compute_ = compute;
  if (spatial_rank < 1 || spatial_rank > 3) return c;  // validate() reports it
  for (int i = 0; i < spatial_rank; ++i) {
    c.pad_begin_[i] = pad_begin ? pad_begin[i] : 0;
    c.pad_end_[i] = pad_end ? pad_end[i] : 0;
    c.stride_[i] = stride ? stride[i] : 1;
    c.dilation_[i] = dilation ? dilation[i] : 1;
  }
  return c;
}

ConvDesc ConvDesc::conv2d(int64_t pad_h, int64_t pad_w, int64_t stride_h, int64_t stride_w,
                          int64_t dil_h, int64_t dil_w, int64_t groups, ConvMode mode,
                          ComputeType compute) {
  const int64_t pad[2] = {pad_h, pad_w};
  const int64_t stride[2] = {stride_h, stride_w};
  const int64_t dil[2] = {dil_h, dil_w};
  return make(2, pad, pad, stride, dil, groups, mode, compute);
}

Status ConvDesc::validate() const {
  if (spatial_rank_ < 1 || spatial_rank_ > 3)
    return make_status(StatusCode::BAD_PARAM, "conv: spatial rank %d is outside [1, 3]",
                       spatial_rank_);
  for (int i = 0; i < spatial_rank_; ++i) {
    if (pad_begin_[i] < 0 || pad_end_[i] < 0 || pad_begin_[i] > kMaxConvParam ||
        pad_end_[i] > kMaxConvParam)
      return make_status(StatusCode::BAD_PARAM,
                         "conv: padding %lld / %lld on spatial dim %d must be in [0, 2^31]",
                         static_cast<long long>(pad_begin_[i]),
                         static_cast<long long>(pad_end_[i]), i);
    if (stride_[i] < 1 || stride_[i] > kMaxConvParam)
      return make_status(StatusCode::BAD_PARAM,
                         "conv: stride %lld on spatial dim %d must be in [1, 2^31]",
                         static_cast<long long>(stride_[i]), i);
    if (dilation_[i] < 1 || dilation_[i] > kMaxConvParam)
      return make_status(StatusCode::BAD_PARAM,
                         "conv: dilation %lld on spatial dim %d must be in [1, 2^31]",
                         static_cast<long long>(dilation_[i]), i);
  }
  if (tactic_ < 0)
    return make_status(StatusCode::BAD_PARAM, "conv: tactic %d must be >= 0 (0: heuristic)",
                       static_cast<int>(tactic_));
  if (static_cast<int32_t>(math_) < 0 || math_ >= ConvMath::COUNT)
    return make_status(StatusCode::BAD_PARAM,
                       "conv: math %d is not a ConvMath (0 EXACT, 1 ALLOW_APPROXIMATE)",
                       static_cast<int>(math_));
  if (groups_ < 1)
    return make_status(StatusCode::BAD_PARAM, "conv: groups = %lld must be >= 1",
                       static_cast<long long>(groups_));
  if (mode_ != ConvMode::CROSS_CORRELATION && mode_ != ConvMode::CONVOLUTION)
    return make_status(StatusCode::BAD_PARAM, "conv: unknown mode %d", static_cast<int>(mode_));
  if (compute_ != ComputeType::F32 && compute_ != ComputeType::F16)
    return make_status(StatusCode::BAD_PARAM, "conv: unknown compute type %d",
                       static_cast<int>(compute_));
  return Status();
}

const char* conv_algo_name(ConvAlgo a) {
  switch (a) {
    case ConvAlgo::DIRECT: return "direct";
    case ConvAlgo::IMPLICIT_GEMM: return "implicit_gemm";
    case ConvAlgo::IMPLICIT_PRECOMP_GEMM: return "implicit_precomp_gemm";
    case ConvAlgo::GEMM: return "gemm";
    case ConvAlgo::WINOGRAD: return "winograd";
    case ConvAlgo::FFT: return "fft";
    case ConvAlgo::COUNT: break;
  }
  return "unknown-conv-algo";
}

Status conv_output_dims(const TensorDesc& x_desc, const FilterDesc& w_desc,
                        const ConvDesc& conv, int64_t* out_dims) {
  const char* fn = "conv_output_dims";
  JET_RETURN_IF_ERROR(check_ptr(fn, out_dims, "out_dims"));
  return conv_problem(fn, x_desc, w_desc, conv, out_dims);
}

Status conv_forward_workspace_size(const Handle& handle, const TensorDesc& x_desc,
                                   const FilterDesc& w_desc, const ConvDesc& conv,
                                   const TensorDesc& y_desc, ConvAlgo algo, size_t* bytes) {
  const char* fn = "conv_forward_workspace_size";
  JET_RETURN_IF_ERROR(check_conv(fn, x_desc, w_desc, conv, y_desc));
  JET_RETURN_IF_ERROR(check_algo(fn, algo));
  JET_RETURN_IF_ERROR(check_ptr(fn, bytes, "bytes"));
  return in_routine(fn, backend_workspace_size(handle, x_desc, w_desc, conv, y_desc, algo, bytes));
}

Status conv_forward_tactic_count(const Handle& handle, const TensorDesc& x_desc,
                                 const FilterDesc& w_desc, const ConvDesc& conv,
                                 const TensorDesc& y_desc, ConvAlgo algo, int* count) {
  const char* fn = "conv_forward_tactic_count";
  JET_RETURN_IF_ERROR(check_conv(fn, x_desc, w_desc, conv, y_desc));
  JET_RETURN_IF_ERROR(check_algo(fn, algo));
  JET_RETURN_IF_ERROR(check_ptr(fn, count, "count"));
  return in_routine(fn, backend_tactic_count(handle, x_desc, w_desc, conv, y_desc, algo, count));
}

bool conv_forward_tactic_is_approximate(ConvAlgo algo, int32_t tactic) {
  // kernels/cuda/conv_winograd.cu: tactics 3, 4 and 6 run F(4x4, 3x3).
  return algo == ConvAlgo::WINOGRAD && (tactic == 3 || tactic == 4 || tactic == 6);
}

Status choose_conv_forward_algo(const Handle& handle, const TensorDesc& x_desc,
                                const FilterDesc& w_desc, const ConvDesc& conv,
                                const TensorDesc& y_desc, ConvPreference preference,
                                size_t workspace_limit, ConvAlgo* algo) {
  const char* fn = "choose_conv_forward_algo";
  JET_RETURN_IF_ERROR(check_conv(fn, x_desc, w_desc, conv, y_desc));
  JET_RETURN_IF_ERROR(check_ptr(fn, algo, "algo"));
  const int p = static_cast<int>(preference);
  if (!enum_in_range<ConvPreference>(p))
    return make_status(StatusCode::BAD_PARAM, "%s: unknown preference %d", fn, p);
  if (handle.backend() == Backend::CPU)
    return in_routine(fn, cpu::choose_conv_forward_algo(x_desc, w_desc, conv, y_desc, preference,
                                                        workspace_limit, algo));
#if defined(JET_HAVE_CUDA)
  return in_routine(fn, cuda::choose_conv_forward_algo(handle, x_desc, w_desc, conv, y_desc,
                                                       preference, workspace_limit, algo));
#else
  return cuda_not_available(fn);
#endif
}

Status conv_forward(const Handle& handle, float alpha, const TensorDesc& x_desc, const void* x,
                    const FilterDesc& w_desc, const void* w, const ConvDesc& conv, ConvAlgo algo,
                    void* workspace, size_t workspace_bytes, float beta,
                    const TensorDesc& y_desc, void* y) {
  const char* fn = "conv_forward";
  JET_RETURN_IF_ERROR(check_conv(fn, x_desc, w_desc, conv, y_desc));
  ConvEpilogue epilogue;
  epilogue.fused = false;
  epilogue.beta = beta;
  return dispatch_conv(fn, handle, alpha, x_desc, x, w_desc, w, conv, algo, workspace,
                       workspace_bytes, epilogue, y_desc, y);
}

Status conv_bias_act_forward(const Handle& handle, float alpha1, const TensorDesc& x_desc,
                             const void* x, const FilterDesc& w_desc, const void* w,
                             const ConvDesc& conv, ConvAlgo algo, void* workspace,
                             size_t workspace_bytes, float alpha2, const TensorDesc& z_desc,
                             const void* z, const TensorDesc& bias_desc, const void* bias,
                             const ActivationDesc& act, const TensorDesc& y_desc, void* y) {
  const char* fn = "conv_bias_act_forward";
  JET_RETURN_IF_ERROR(check_conv(fn, x_desc, w_desc, conv, y_desc));
  JET_RETURN_IF_ERROR(in_routine(fn, act.validate()));
  ConvEpilogue epilogue;
  epilogue.fused = true;
  epilogue.act = act;
  if (z) {
    JET_RETURN_IF_ERROR(in_routine(fn, z_desc.validate_spatial("z")));
    JET_RETURN_IF_ERROR(check_same_dims(fn, z_desc, "z", y_desc, "y"));
    JET_RETURN_IF_ERROR(check_same_dtype(fn, z_desc, "z", y_desc, "y"));
    if (z == y && !z_desc.same_layout(y_desc))
      return make_status(StatusCode::BAD_PARAM,
                         "%s: z aliases y but has strides %s where y has %s; an aliased "
                         "residual must have y's layout",
                         fn, dims_text(z_desc.rank(), z_desc.strides()).c_str(),
                         dims_text(y_desc.rank(), y_desc.strides()).c_str());
    epilogue.alpha2 = alpha2;
    epilogue.z_desc = &z_desc;
    epilogue.z = z;
  }
  if (bias) {
    JET_RETURN_IF_ERROR(in_routine(fn, bias_desc.validate("bias")));
    bool ok = bias_desc.rank() == y_desc.rank();
    for (int i = 0; ok && i < bias_desc.rank(); ++i)
      ok = bias_desc.dim(i) == (i == 1 ? y_desc.dim(1) : 1);
    if (!ok)
      return make_status(StatusCode::BAD_PARAM,
                         "%s: bias has dims %s but must be [1, %lld, 1...] (rank %d, one value "
                         "per output channel)",
                         fn, dims_text(bias_desc.rank(), bias_desc.dims()).c_str(),
                         static_cast<long long>(y_desc.dim(1)), y_desc.rank());
    JET_RETURN_IF_ERROR(check_same_dtype(fn, bias_desc, "bias", y_desc, "y"));
    epilogue.bias = bias;
    epilogue.bias_stride = bias_desc.stride(1);
  }
  return dispatch_conv(fn, handle, alpha1, x_desc, x, w_desc, w, conv, algo, workspace,
                       workspace_bytes, epilogue, y_desc, y);
}

Status find_conv_forward_algo(const Handle& handle, const TensorDesc& x_desc, const void* x,
                              const FilterDesc& w_desc, const void* w, const ConvDesc& conv,
                              const TensorDesc& y_desc, void* y, void* workspace,
                              size_t workspace_bytes, int max_results, int* returned,
                              ConvAlgoPerf* results) {
  const char* fn = "find_conv_forward_algo";
  JET_RETURN_IF_ERROR(check_conv(fn, x_desc, w_desc, conv, y_desc));
  JET_RETURN_IF_ERROR(check_ptr(fn, x, "x"));
  JET_RETURN_IF_ERROR(check_ptr(fn, w, "w"));
  JET_RETURN_IF_ERROR(check_ptr(fn, y, "y"));
  JET_RETURN_IF_ERROR(check_ptr(fn, returned, "returned"));
  JET_RETURN_IF_ERROR(check_ptr(fn, results, "results"));
  if (max_results < 1)
    return make_status(StatusCode::BAD_PARAM, "%s: max_results = %d must be >= 1", fn,
                       max_results);
  if (x == y)
    return make_status(StatusCode::BAD_PARAM,
                       "%s: x and y are the same buffer; convolution cannot run in place", fn);
#if !defined(JET_HAVE_CUDA)
  if (handle.backend() != Backend::CPU) return cuda_not_available(fn);
#endif
  // Every algorithm gets an entry: the ones the backend does not claim for this problem, or that
  // need more workspace than given, keep their reason and go last. Each tactic of an algorithm
  // that runs gets an entry of its own; tactics that do not apply are left out.
  constexpr int kRuns = 5;  // timed runs after one warm-up; the median is reported
  std::vector<ConvAlgoPerf> perf;
  const auto time_one = [&](ConvAlgoPerf& p) {
    const ConvDesc c = conv.with_tactic(p.tactic);
    Status s;
    if (handle.backend() == Backend::CPU) {
      ConvEpilogue epilogue;  // alpha 1, beta 0: y = conv(x, w)
      s = dispatch_conv(fn, handle, 1.f, x_desc, x, w_desc, w, c, p.algo, workspace,
                        workspace_bytes, epilogue, y_desc, y);  // warm-up
      float times[kRuns];
      for (int r = 0; r < kRuns && s.ok(); ++r) {
        const auto t0 = std::chrono::steady_clock::now();
        s = dispatch_conv(fn, handle, 1.f, x_desc, x, w_desc, w, c, p.algo, workspace,
                          workspace_bytes, epilogue, y_desc, y);
        const auto t1 = std::chrono::steady_clock::now();
        times[r] = std::chrono::duration<float, std::milli>(t1 - t0).count();
      }
      if (s.ok()) {
        std::sort(times, times + kRuns);
        p.time_ms = times[kRuns / 2];
      }
    } else {
#if defined(JET_HAVE_CUDA)
      float ms = -1.f;
      s = in_routine(fn, cuda::time_conv_forward_algo(handle, x_desc, x, w_desc, w, c, p.algo,
                                                      workspace, workspace_bytes, y_desc, y,
                                                      kRuns, &ms));
      if (s.ok()) p.time_ms = ms;
#endif
    }
    p.status = s;
  };
  for (int i = 0; i < static_cast<int>(ConvAlgo::COUNT); ++i) {
    const ConvAlgo algo = static_cast<ConvAlgo>(i);
    int tactics = 0;
    Status s = backend_tactic_count(handle, x_desc, w_desc, conv, y_desc, algo, &tactics);
    if (!s.ok()) s = in_routine(fn, s);
    for (int t = 0; t <= tactics; ++t) {
      if (x_desc.dtype() == DType::F32 && conv.math() != ConvMath::ALLOW_APPROXIMATE &&
          conv_forward_tactic_is_approximate(algo, t))
        continue;
      ConvAlgoPerf p;
      p.algo = algo;
      p.tactic = t;
      size_t need = 0;
      if (s.ok()) {
        s = backend_workspace_size(handle, x_desc, w_desc, conv.with_tactic(t), y_desc, algo,
                                   &need);
        if (s.ok()) p.workspace_bytes = need;
        else s = in_routine(fn, s);
      }
      if (s.ok() && need > 0 && (!workspace || workspace_bytes < need))
        s = make_status(StatusCode::BAD_PARAM,
                        "%s: workspace too small: %zu bytes given%s, algo %s needs %zu", fn,
                        workspace_bytes, workspace ? "" : " (null)", conv_algo_name(algo), need);
      if (!s.ok()) {
        if (t == 0) {  // the algorithm itself cannot run
          p.status = s;
          perf.push_back(p);
          break;
        }
        s = Status();  // this tactic does not apply or does not fit: left out
        continue;
      }
      time_one(p);
      perf.push_back(p);
    }
  }
  // Fastest first; the failures after, in algorithm order.
  std::stable_sort(perf.begin(), perf.end(), [](const ConvAlgoPerf& a, const ConvAlgoPerf& b) {
    if (a.status.ok() != b.status.ok()) return a.status.ok();
    return a.status.ok() && a.time_ms < b.time_ms;
  });
  const int n = std::min(max_results, static_cast<int>(perf.size()));
  for (int i = 0; i < n; ++i) results[i] = perf[i];
  *returned = n;
  return Status();
}

// ---------------------------------------------------------------------------------------------
// The CPU backend (cpu::), called by the front end above.

namespace cpu {

namespace {

// ---- Problem geometry ------------------------------------------------------------------------

struct ConvGeom {
  DType dtype = DType::F32;
  int64_t batch = 1, groups = 1;
  int64_t group_channels = 1;  // input channels per group (w's C)
  int64_t group_filters = 1;   // output channels per group
  // Spatial dims as D, H, W; 1D and 2D problems leave the leading ones at extent 1, stride 0.
  int64_t in[3] = {1, 1, 1}, out[3] = {1, 1, 1}, win[3] = {1, 1, 1};
  int64_t pad_begin[3] = {0, 0, 0}, pad_end[3] = {0, 0, 0};
  int64_t stride[3] = {1, 1, 1}, dilation[3] = {1, 1, 1};
  int64_t xs_n = 0, xs_c = 0, xs[3] = {0, 0, 0};
  int64_t ws_k = 0, ws_c = 0, ws[3] = {0, 0, 0};
  bool flip = false;  // CONVOLUTION mode: tap t reads filter element win - 1 - t
  // Depth order of the lowered input: channel fastest (taps outer) suits channels-last x, where
  // the channels of one pixel are adjacent; otherwise channel outer, taps inner.
  bool channel_fastest = false;
  int64_t pixels = 1;  // output pixels per image
  int64_t window = 1;  // taps per input channel
  int64_t depth = 1;   // GEMM K: group_channels * window
  int64_t rows = 1;    // GEMM M: batch * pixels
};

ConvGeom make_geom(const TensorDesc& x_desc, const FilterDesc& w_desc, const ConvDesc& conv,
                   const TensorDesc& y_desc) {
  ConvGeom g;
  g.dtype = x_desc.dtype();
  g.batch = x_desc.dim(0);
  g.groups = conv.groups();
  g.group_channels = w_desc.c();
  g.group_filters = w_desc.k() / conv.groups();
  g.xs_n = x_desc.stride(0);
  g.xs_c = x_desc.stride(1);
  const TensorDesc wt = w_desc.as_tensor();
  g.ws_k = wt.stride(0);
  g.ws_c = wt.stride(1);
  const int spatial = conv.spatial_rank();
  for (int i = 0; i < spatial; ++i) {
    const int d = 3 - spatial + i;
    g.in[d] = x_desc.dim(2 + i);
    g.out[d] = y_desc.dim(2 + i);
    g.win[d] = w_desc.spatial(i);
    g.pad_begin[d] = conv.pad_begin(i);
    g.pad_end[d] = conv.pad_end(i);
    g.stride[d] = conv.stride(i);
    g.dilation[d] = conv.dilation(i);
    g.xs[d] = x_desc.stride(2 + i);
    g.ws[d] = wt.stride(2 + i);
  }
  g.flip = conv.mode() == ConvMode::CONVOLUTION;
  int64_t min_spatial_stride = 0;
  bool first = true;
  for (int d = 0; d < 3; ++d)
    if (g.in[d] > 1 && (first || g.xs[d] < min_spatial_stride)) {
      min_spatial_stride = g.xs[d];
      first = false;
    }
  g.channel_fastest = g.group_channels > 1 && !first && g.xs_c < min_spatial_stride;
  g.pixels = g.out[0] * g.out[1] * g.out[2];
  g.window = g.win[0] * g.win[1] * g.win[2];
  g.depth = g.group_channels * g.window;
  g.rows = g.batch * g.pixels;
  return g;
}

// Walks GEMM rows (image, od, oh, ow) in order without a division per row.
struct PixelCursor {
  int64_t n = 0, o[3] = {0, 0, 0};
  PixelCursor(const ConvGeom& g, int64_t row) {
    n = row / g.pixels;
    int64_t p = row % g.pixels;
    o[2] = p % g.out[2];
    p /= g.out[2];
    o[1] = p % g.out[1];
    o[0] = p / g.out[1];
  }
  void next(const ConvGeom& g) {
    if (++o[2] < g.out[2]) return;
    o[2] = 0;
    if (++o[1] < g.out[1]) return;
    o[1] = 0;
    if (++o[0] < g.out[0]) return;
    o[0] = 0;
    ++n;
  }
};

// One row of the lowered input: its window origin in x coordinates (may lie in the padding) and
// the x offset of that origin (channel 0 of the group).
struct ConvRow {
  int64_t x_off;
  int64_t at[3];
};

// One depth index of the lowered input: input channel c and filter tap (t, r, s) as the x offset
// and coordinate displacement from the window origin, and the filter offset (flip included).
struct ConvTap {
  int64_t x_delta;
  int64_t w_delta;
  int64_t at[3];
};

void fill_rows(const ConvGeom& g, int64_t row0, int64_t count, ConvRow* rows) {
  PixelCursor pc(g, row0);
  for (int64_t i = 0; i < count; ++i, pc.next(g)) {
    ConvRow& r = rows[i];
    r.x_off = pc.n * g.xs_n;
    for (int d = 0; d < 3; ++d) {
      r.at[d] = pc.o[d] * g.stride[d] - g.pad_begin[d];
      r.x_off += r.at[d] * g.xs[d];
    }
  }
}

void fill_taps(const ConvGeom& g, int64_t depth0, int64_t count, ConvTap* taps) {
  for (int64_t i = 0; i < count; ++i) {
    const int64_t kk = depth0 + i;
    int64_t c, tap;
    if (g.channel_fastest) {
      c = kk % g.group_channels;
      tap = kk / g.group_channels;
    } else {
      c = kk / g.window;
      tap = kk % g.window;
    }
    int64_t t[3];
    t[2] = tap % g.win[2];
    tap /= g.win[2];
    t[1] = tap % g.win[1];
    t[0] = tap / g.win[1];
    ConvTap& e = taps[i];
    e.x_delta = c * g.xs_c;
    e.w_delta = c * g.ws_c;
    for (int d = 0; d < 3; ++d) {
      e.at[d] = t[d] * g.dilation[d];
      e.x_delta += e.at[d] * g.xs[d];
      e.w_delta += (g.flip ? g.win[d] - 1 - t[d] : t[d]) * g.ws[d];
    }
  }
}

inline bool inside(const ConvGeom& g, const ConvRow& r, const ConvTap& t) {
  // Unsigned compares fold "0 <= i" and "i < in" into one test.
  return static_cast<uint64_t>(r.at[0] + t.at[0]) < static_cast<uint64_t>(g.in[0]) &&
         static_cast<uint64_t>(r.at[1] + t.at[1]) < static_cast<uint64_t>(g.in[1]) &&
         static_cast<uint64_t>(r.at[2] + t.at[2]) < static_cast<uint64_t>(g.in[2]);
}

// True when every tap of the row's window lies inside x.
inline bool window_inside(const ConvGeom& g, const ConvRow& r) {
  for (int d = 0; d < 3; ++d)
    if (r.at[d] < 0 || r.at[d] + (g.win[d] - 1) * g.dilation[d] >= g.in[d]) return false;
  return true;
}

inline float to_f32(float v) { return v; }
inline float to_f32(uint16_t h) { return half::half_bits_to_float(h); }

// True when the lowered input is x itself: a 1x1 window, stride 1, no padding, and the output
// pixels of one image one uniform stride apart in x (then row = pixel, depth = channel).
bool lowering_is_identity(const ConvGeom& g, int64_t* pixel_stride) {
  for (int d = 0; d < 3; ++d)
    if (g.win[d] != 1 || g.stride[d] != 1 || g.pad_begin[d] != 0 || g.pad_end[d] != 0)
      return false;
  int64_t step = 0, span = 1;
  for (int d = 2; d >= 0; --d) {
    if (g.out[d] == 1) continue;
    if (span == 1) step = g.xs[d];
    if (g.xs[d] != step * span) return false;
    span *= g.out[d];
  }
  *pixel_stride = step;
  return true;
}

// ---- Output: the epilogue ---------------------------------------------------------------------

// Writes convolution results: y = alpha * acc + beta * y, or fused
// y = act(alpha * acc + alpha2 * z + bias). y is read only for beta != 0; z only when given.
struct ConvOutput {
  const ConvGeom* g;
  float alpha;
  const ConvEpilogue* e;
  void* y;
  int64_t ys_n, ys_c, ys[3];
  int64_t zs_n, zs_c, zs[3];
};

ConvOutput make_output(const ConvGeom& g, float alpha, const ConvEpilogue& e,
                       const TensorDesc& y_desc, void* y) {
  ConvOutput o;
  o.g = &g;
  o.alpha = alpha;
  o.e = &e;
  o.y = y;
  const TensorDesc& z_desc = (e.fused && e.z) ? *e.z_desc : y_desc;
  o.ys_n = y_desc.stride(0);
  o.ys_c = y_desc.stride(1);
  o.zs_n = z_desc.stride(0);
  o.zs_c = z_desc.stride(1);
  const int spatial = y_desc.spatial_rank();
  for (int d = 0; d < 3; ++d) o.ys[d] = o.zs[d] = 0;
  for (int i = 0; i < spatial; ++i) {
    o.ys[3 - spatial + i] = y_desc.stride(2 + i);
    o.zs[3 - spatial + i] = z_desc.stride(2 + i);
  }
  return o;
}

inline void write_output(const ConvOutput& o, int64_t y_off, int64_t z_off, int64_t k,
                         float acc) {
  const ConvEpilogue& e = *o.e;
  const DType t = o.g->dtype;
  if (!e.fused) {
    blend_store(t, o.y, y_off, o.alpha, acc, e.beta);
    return;
  }
  float v = o.alpha * acc;
  if (e.z) v += e.alpha2 * load(t, e.z, z_off);
  if (e.bias) v += load(t, e.bias, k * e.bias_stride);
  store(t, o.y, y_off, apply_activation(e.act, v));
}

// The GEMM sink: rows are (image, pixel) from row_base on, columns the filters of one group.
struct ConvSink {
  const ConvOutput* out;
  int64_t first_filter;  // the group's first output channel
  int64_t row_base;      // GEMM row 0 is this convolution row (im2col chunks)
};

void conv_sink_store(const void* ctx, int64_t row0, int64_t rows, int64_t col0, int64_t cols,
                     const float* c, int64_t ldc) {
  const ConvSink& s = *static_cast<const ConvSink*>(ctx);
  const ConvOutput& o = *s.out;
  const ConvGeom& g = *o.g;
  PixelCursor pc(g, s.row_base + row0);
  for (int64_t i = 0; i < rows; ++i, pc.next(g)) {
    int64_t y_row = pc.n * o.ys_n, z_row = pc.n * o.zs_n;
    for (int d = 0; d < 3; ++d) {
      y_row += pc.o[d] * o.ys[d];
      z_row += pc.o[d] * o.zs[d];
    }
    for (int64_t j = 0; j < cols; ++j) {
      const int64_t k = s.first_filter + col0 + j;
      write_output(o, y_row + k * o.ys_c, z_row + k * o.zs_c, k, c[i * ldc + j]);
    }
  }
}

// ---- DIRECT ----------------------------------------------------------------------------------

// Taps of the window at output position `o` along dim d that land inside x: [lo, hi).
void taps_inside(const ConvGeom& g, int d, int64_t o, int64_t* lo, int64_t* hi) {
  const int64_t start = o * g.stride[d] - g.pad_begin[d];
  const int64_t dil = g.dilation[d];
  *lo = start >= 0 ? 0 : (-start + dil - 1) / dil;
  const int64_t last = g.in[d] - 1 - start;  // tap t is inside when t * dil <= last
  *hi = last < 0 ? 0 : std::min(g.win[d], last / dil + 1);
  if (*hi < *lo) *hi = *lo;
}

// Filters accumulated together per output pixel: each x value loaded serves this many filters,
// and their sums are independent chains.
constexpr int64_t kDirectFilterBlock = 16;

template <class T>
void conv_direct(const ConvGeom& g, const T* x, const T* w, const ConvOutput& out) {
  PixelCursor pc(g, 0);
  for (int64_t row = 0; row < g.rows; ++row, pc.next(g)) {
    int64_t lo[3], hi[3], start[3];
    for (int d = 0; d < 3; ++d) {
      taps_inside(g, d, pc.o[d], &lo[d], &hi[d]);
      start[d] = pc.o[d] * g.stride[d] - g.pad_begin[d];
    }
    int64_t y_row = pc.n * out.ys_n, z_row = pc.n * out.zs_n;
    for (int d = 0; d < 3; ++d) {
      y_row += pc.o[d] * out.ys[d];
      z_row += pc.o[d] * out.zs[d];
    }
    for (int64_t group = 0; group < g.groups; ++group) {
      const T* xg = x + pc.n * g.xs_n + group * g.group_channels * g.xs_c;
      for (int64_t k0 = 0; k0 < g.group_filters; k0 += kDirectFilterBlock) {
        const int64_t kb = std::min(kDirectFilterBlock, g.group_filters - k0);
        const int64_t first = group * g.group_filters + k0;
        const T* wk = w + first * g.ws_k;
        float acc[kDirectFilterBlock] = {};
        for (int64_t c = 0; c < g.group_channels; ++c) {
          for (int64_t t0 = lo[0]; t0 < hi[0]; ++t0) {
            const int64_t f0 = g.flip ? g.win[0] - 1 - t0 : t0;
            for (int64_t t1 = lo[1]; t1 < hi[1]; ++t1) {
              const int64_t f1 = g.flip ? g.win[1] - 1 - t1 : t1;
              for (int64_t t2 = lo[2]; t2 < hi[2]; ++t2) {
                const int64_t f2 = g.flip ? g.win[2] - 1 - t2 : t2;
                const float xv = to_f32(xg[c * g.xs_c + (start[0] + t0 * g.dilation[0]) * g.xs[0] +
                                           (start[1] + t1 * g.dilation[1]) * g.xs[1] +
                                           (start[2] + t2 * g.dilation[2]) * g.xs[2]]);
                const T* wp = wk + c * g.ws_c + f0 * g.ws[0] + f1 * g.ws[1] + f2 * g.ws[2];
                for (int64_t b = 0; b < kb; ++b) acc[b] += xv * to_f32(wp[b * g.ws_k]);
              }
            }
          }
        }
        for (int64_t b = 0; b < kb; ++b) {
          const int64_t k = first + b;
          write_output(out, y_row + k * out.ys_c, z_row + k * out.zs_c, k, acc[b]);
        }
      }
    }
  }
}

// ---- Packers for the GEMM algorithms ----------------------------------------------------------

// Lowered-input rows x taps into GEMM A panels (see GemmPacker): panel p at
// dst + p * panel_depth * width, tap i at + i * width. `rows` starts at a panel boundary.
template <class T>
void pack_lowered(const ConvGeom& g, const T* x, const ConvRow* rows, int64_t row_count,
                  const ConvTap* taps, int64_t tap_count, int64_t width, int64_t panel_depth,
                  float* dst) {
  const int64_t panels = (row_count + width - 1) / width;
  for (int64_t p = 0; p < panels; ++p) {
    const ConvRow* pr = rows + p * width;
    const int64_t valid = std::min(width, row_count - p * width);
    float* out = dst + p * panel_depth * width;
    // Most rows' windows lie wholly inside x (all but a border of the image): then no tap needs
    // a bounds test.
    bool interior = valid == width;
    for (int64_t r = 0; r < valid && interior; ++r) interior = window_inside(g, pr[r]);
    if (interior) {
      for (int64_t i = 0; i < tap_count; ++i) {
        const int64_t delta = taps[i].x_delta;
        float* o = out + i * width;
        for (int64_t r = 0; r < width; ++r) o[r] = to_f32(x[pr[r].x_off + delta]);
      }
      continue;
    }
    for (int64_t i = 0; i < tap_count; ++i) {
      const ConvTap& tap = taps[i];
      float* o = out + i * width;
      for (int64_t r = 0; r < valid; ++r)
        o[r] = inside(g, pr[r], tap) ? to_f32(x[pr[r].x_off + tap.x_delta]) : 0.f;
      for (int64_t r = valid; r < width; ++r) o[r] = 0.f;
    }
  }
}

// Stack table sizes for the blocks built on the fly.
constexpr int64_t kRowChunk = kGemmMC;  // a multiple of every panel width used (MR)
constexpr int64_t kTapChunk = kGemmKC;
static_assert(kRowChunk % kGemmMR == 0, "row chunks must hold whole A panels");

// A: the lowered input of one group. With tables (IMPLICIT_PRECOMP_GEMM) row r is rows[r] and
// depth index d is taps[d]; without, both are computed per block on the stack.
struct LoweredSource {
  const ConvGeom* g;
  const void* x;  // at the group's first channel
  const ConvRow* rows;
  const ConvTap* taps;
};

template <class T>
void pack_lowered_source(const LoweredSource& s, int64_t row0, int64_t rows, int64_t depth0,
                         int64_t depth, int64_t width, float* dst) {
  const ConvGeom& g = *s.g;
  const T* x = static_cast<const T*>(s.x);
  if (s.rows) {
    pack_lowered(g, x, s.rows + row0, rows, s.taps + depth0, depth, width, depth, dst);
    return;
  }
  ConvRow row_table[kRowChunk];
  ConvTap tap_table[kTapChunk];
  const int64_t row_chunk = (kRowChunk / width) * width;
  for (int64_t rc = 0; rc < rows; rc += row_chunk) {
    const int64_t nr = std::min(row_chunk, rows - rc);
    fill_rows(g, row0 + rc, nr, row_table);
    for (int64_t tc = 0; tc < depth; tc += kTapChunk) {
      const int64_t nt = std::min(kTapChunk, depth - tc);
      fill_taps(g, depth0 + tc, nt, tap_table);
      pack_lowered(g, x, row_table, nr, tap_table, nt, width, depth,
                   dst + (rc / width) * depth * width + tc * width);
    }
  }
}

void pack_lowered_any(const void* ctx, int64_t row0, int64_t rows, int64_t depth0, int64_t depth,
                      int64_t width, float* dst) {
  const LoweredSource& s = *static_cast<const LoweredSource*>(ctx);
  if (s.g->dtype == DType::F32)
    pack_lowered_source<float>(s, row0, rows, depth0, depth, width, dst);
  else
    pack_lowered_source<uint16_t>(s, row0, rows, depth0, depth, width, dst);
}

// B: the filters of one group, B[depth, j] = w[first filter + j] at tap `depth`.
struct FilterSource {
  const ConvGeom* g;
  const void* w;        // at the group's first filter
  const ConvTap* taps;  // precomputed (IMPLICIT_PRECOMP_GEMM) or null
};

template <class T>
void pack_filters_source(const FilterSource& s, int64_t col0, int64_t cols, int64_t depth0,
                         int64_t depth, int64_t width, float* dst) {
  const ConvGeom& g = *s.g;
  const T* w = static_cast<const T*>(s.w);
  ConvTap tap_table[kTapChunk];
  const int64_t panels = (cols + width - 1) / width;
  for (int64_t tc = 0; tc < depth; tc += kTapChunk) {
    const int64_t nt = std::min(kTapChunk, depth - tc);
    const ConvTap* taps = s.taps ? s.taps + depth0 + tc : tap_table;
    if (!s.taps) fill_taps(g, depth0 + tc, nt, tap_table);
    for (int64_t p = 0; p < panels; ++p) {
      const int64_t valid = std::min(width, cols - p * width);
      float* out = dst + p * depth * width + tc * width;
      for (int64_t j = 0; j < valid; ++j) {
        const T* wk = w + (col0 + p * width + j) * g.ws_k;
        for (int64_t i = 0; i < nt; ++i) out[i * width + j] = to_f32(wk[taps[i].w_delta]);
      }
      for (int64_t i = 0; i < nt; ++i)
        for (int64_t j = valid; j < width; ++j) out[i * width + j] = 0.f;
    }
  }
}

void pack_filters_any(const void* ctx, int64_t col0, int64_t cols, int64_t depth0, int64_t depth,
                      int64_t width, float* dst) {
  const FilterSource& s = *static_cast<const FilterSource*>(ctx);
  if (s.g->dtype == DType::F32)
    pack_filters_source<float>(s, col0, cols, depth0, depth, width, dst);
  else
    pack_filters_source<uint16_t>(s, col0, cols, depth0, depth, width, dst);
}

const void* offset_ptr(const void* base, DType t, int64_t elements) {
  return static_cast<const unsigned char*>(base) + elements * static_cast<int64_t>(dtype_size(t));
}

// ---- Workspace layouts ------------------------------------------------------------------------

constexpr size_t kAlign = 64;
size_t round_up(size_t v) { return (v + kAlign - 1) / kAlign * kAlign; }

unsigned char* align_ptr(void* p) {
  const uintptr_t v = reinterpret_cast<uintptr_t>(p);
  return reinterpret_cast<unsigned char*>((v + kAlign - 1) / kAlign * kAlign);
}

// The explicit im2col of GEMM is done in chunks of rows (at least one MC block) so that its
// buffer stays bounded and a chunk is still in cache when the GEMM reads it.
constexpr size_t kIm2colBudgetBytes = size_t(2) << 20;

int64_t im2col_chunk_rows(const ConvGeom& g) {
  const int64_t row_bytes = g.depth * 4;
  int64_t rows = static_cast<int64_t>(kIm2colBudgetBytes) / row_bytes;
  rows = std::max(kGemmMC, rows / kGemmMC * kGemmMC);
  return std::min(rows, g.rows);
}

struct GemmAlgoLayout {
  size_t packed_filters = 0;  // bytes, f32 panels of one group's filters
  size_t lowered = 0;         // bytes, f32 im2col of a chunk of rows, as GEMM A panels
  size_t total = 0;
};

GemmAlgoLayout gemm_algo_layout(const ConvGeom& g) {
  GemmAlgoLayout l;
  l.packed_filters = round_up(gemm_prepacked_b_floats(g.depth, g.group_filters) * 4);
  l.lowered = round_up(gemm_prepacked_a_floats(im2col_chunk_rows(g), g.depth) * 4);
  l.total = kAlign + l.packed_filters + l.lowered;  // kAlign: room to align the caller's pointer
  return l;
}

struct PrecompLayout {
  size_t rows = 0, taps = 0, total = 0;
};

PrecompLayout precomp_layout(const ConvGeom& g) {
  PrecompLayout l;
  l.rows = round_up(static_cast<size_t>(g.rows) * sizeof(ConvRow));
  l.taps = round_up(static_cast<size_t>(g.depth) * sizeof(ConvTap));
  l.total = kAlign + l.rows + l.taps;
  return l;
}

// ---- The GEMM algorithms ----------------------------------------------------------------------

// x as GEMM A when the lowering is the identity: row = (image, pixel), depth = channel.
StridedMatrix identity_lowered(const ConvGeom& g, const void* x, int64_t group,
                               int64_t pixel_stride) {
  StridedMatrix m;
  m.data = x;
  m.dtype = g.dtype;
  m.offset = group * g.group_channels * g.xs_c;
  m.row_stride = pixel_stride;
  m.depth_stride = g.xs_c;
  m.rows_per_block = g.pixels;
  m.block_stride = g.xs_n;
  return m;
}

void run_implicit(const ConvGeom& g, const void* x, const void* w, const ConvOutput& out,
                  const ConvRow* row_table, const ConvTap* tap_table) {
  int64_t pixel_stride = 0;
  const bool identity = !row_table && lowering_is_identity(g, &pixel_stride);
  for (int64_t group = 0; group < g.groups; ++group) {
    const LoweredSource lowered{&g, offset_ptr(x, g.dtype, group * g.group_channels * g.xs_c),
                                row_table, tap_table};
    const StridedMatrix plain = identity_lowered(g, x, group, pixel_stride);
    const FilterSource filters{&g, offset_ptr(w, g.dtype, group * g.group_filters * g.ws_k),
                               tap_table};
    const ConvSink sink{&out, group * g.group_filters, 0};
    GemmJob job;
    job.m = g.rows;
    job.n = g.group_filters;
    job.k = g.depth;
    if (identity)
      job.a = {pack_strided, &plain};
    else
      job.a = {pack_lowered_any, &lowered};
    job.b = {pack_filters_any, &filters};
    job.sink = {conv_sink_store, &sink};
    gemm_run(job);
  }
}

void run_precomp(const ConvGeom& g, const void* x, const void* w, const ConvOutput& out,
                 void* workspace) {
  const PrecompLayout l = precomp_layout(g);
  unsigned char* base = align_ptr(workspace);
  ConvRow* rows = reinterpret_cast<ConvRow*>(base);
  ConvTap* taps = reinterpret_cast<ConvTap*>(base + l.rows);
  fill_rows(g, 0, g.rows, rows);
  fill_taps(g, 0, g.depth, taps);
  run_implicit(g, x, w, out, rows, taps);
}

// A packer whose row 0 is row `first` of another packer's (a chunk of the GEMM rows).
struct RowsFrom {
  GemmPacker inner;
  int64_t first;
};

void pack_rows_from(const void* ctx, int64_t row0, int64_t rows, int64_t depth0, int64_t depth,
                    int64_t width, float* dst) {
  const RowsFrom& r = *static_cast<const RowsFrom*>(ctx);
  r.inner.pack(r.inner.ctx, r.first + row0, rows, depth0, depth, width, dst);
}

// GEMM: the filters of a group are packed once into the workspace, then the lowered input is
// written out explicitly (im2col), a chunk of rows at a time, directly in the panel layout the
// micro-kernel reads, so that neither operand is packed again inside the GEMM.
void run_gemm(const ConvGeom& g, const void* x, const void* w, const ConvOutput& out,
              void* workspace) {
  const GemmAlgoLayout l = gemm_algo_layout(g);
  unsigned char* base = align_ptr(workspace);
  float* packed_filters = reinterpret_cast<float*>(base);
  float* lowered = reinterpret_cast<float*>(base + l.packed_filters);
  int64_t pixel_stride = 0;
  const bool identity = lowering_is_identity(g, &pixel_stride);
  const int64_t chunk = im2col_chunk_rows(g);
  for (int64_t group = 0; group < g.groups; ++group) {
    const FilterSource filters{&g, offset_ptr(w, g.dtype, group * g.group_filters * g.ws_k),
                               nullptr};
    gemm_prepack_b({pack_filters_any, &filters}, g.depth, g.group_filters, packed_filters);
    const LoweredSource lowered_source{
        &g, offset_ptr(x, g.dtype, group * g.group_channels * g.xs_c), nullptr, nullptr};
    const StridedMatrix plain = identity_lowered(g, x, group, pixel_stride);
    const GemmPacker all_rows = identity ? GemmPacker{pack_strided, &plain}
                                         : GemmPacker{pack_lowered_any, &lowered_source};
    for (int64_t row0 = 0; row0 < g.rows; row0 += chunk) {
      const int64_t rows = std::min(chunk, g.rows - row0);
      const RowsFrom chunk_rows{all_rows, row0};
      gemm_prepack_a({pack_rows_from, &chunk_rows}, rows, g.depth, lowered);
      const ConvSink sink{&out, group * g.group_filters, row0};
      GemmJob job;
      job.m = rows;
      job.n = g.group_filters;
      job.k = g.depth;
      job.a_prepacked = lowered;
      job.b_prepacked = packed_filters;
      job.sink = {conv_sink_store, &sink};
      gemm_run(job);
    }
  }
}

// ---- Algorithm ranking ------------------------------------------------------------------------

bool cpu_has_algo(ConvAlgo algo) {
  return algo == ConvAlgo::DIRECT || algo == ConvAlgo::IMPLICIT_GEMM ||
         algo == ConvAlgo::IMPLICIT_PRECOMP_GEMM || algo == ConvAlgo::GEMM;
}

size_t workspace_of(const ConvGeom& g, ConvAlgo algo) {
  switch (algo) {
    case ConvAlgo::IMPLICIT_PRECOMP_GEMM: return precomp_layout(g).total;
    case ConvAlgo::GEMM: return gemm_algo_layout(g).total;
    default: return 0;
  }
}

// Fastest first. bench/cpu_resnet50_conv.cpp (every ResNet-50 layer) and measurements of
// depthwise, grouped and tiny layers put GEMM ahead (both operands packed once), then the
// implicit variants (which re-pack per cache block), and DIRECT far behind (several times slower
// even for depthwise layers, where its loops are mostly overhead).
int rank_algos(ConvAlgo* order) {
  order[0] = ConvAlgo::GEMM;
  order[1] = ConvAlgo::IMPLICIT_PRECOMP_GEMM;
  order[2] = ConvAlgo::IMPLICIT_GEMM;
  order[3] = ConvAlgo::DIRECT;
  return 4;
}

}  // namespace

Status conv_forward_workspace_size(const TensorDesc& x_desc, const FilterDesc& w_desc,
                                   const ConvDesc& conv, const TensorDesc& y_desc, ConvAlgo algo,
                                   size_t* bytes) {
  if (!cpu_has_algo(algo))
    return make_status(StatusCode::NOT_SUPPORTED,
                       "the CPU backend does not implement convolution algorithm %s (it has "
                       "direct, implicit_gemm, implicit_precomp_gemm and gemm)",
                       conv_algo_name(algo));
  *bytes = workspace_of(make_geom(x_desc, w_desc, conv, y_desc), algo);
  return Status();
}

Status choose_conv_forward_algo(const TensorDesc& x_desc, const FilterDesc& w_desc,
                                const ConvDesc& conv, const TensorDesc& y_desc,
                                ConvPreference preference, size_t workspace_limit,
                                ConvAlgo* algo) {
  const ConvGeom g = make_geom(x_desc, w_desc, conv, y_desc);
  ConvAlgo order[4];
  const int n = rank_algos(order);
  for (int i = 0; i < n; ++i) {
    const size_t ws = workspace_of(g, order[i]);
    const bool fits = preference == ConvPreference::PREFER_FASTEST ||
                      (preference == ConvPreference::NO_WORKSPACE && ws == 0) ||
                      (preference == ConvPreference::SPECIFY_WORKSPACE_LIMIT &&
                       ws <= workspace_limit);
    if (fits) {
      *algo = order[i];
      return Status();
    }
  }
  *algo = ConvAlgo::DIRECT;  // unreachable: DIRECT needs no workspace and is always ranked
  return Status();
}

Status conv_forward(float alpha1, const TensorDesc& x_desc, const void* x,
                    const FilterDesc& w_desc, const void* w, const ConvDesc& conv, ConvAlgo algo,
                    void* workspace, size_t workspace_bytes, const ConvEpilogue& epilogue,
                    const TensorDesc& y_desc, void* y) {
  const ConvGeom g = make_geom(x_desc, w_desc, conv, y_desc);
  if (!cpu_has_algo(algo))
    return make_status(StatusCode::NOT_SUPPORTED,
                       "the CPU backend does not implement convolution algorithm %s",
                       conv_algo_name(algo));
  if (workspace_bytes < workspace_of(g, algo))
    return make_status(StatusCode::BAD_PARAM, "workspace too small for %s",
                       conv_algo_name(algo));
  const ConvOutput out = make_output(g, alpha1, epilogue, y_desc, y);
  switch (algo) {
    case ConvAlgo::DIRECT:
      if (g.dtype == DType::F32)
        conv_direct(g, static_cast<const float*>(x), static_cast<const float*>(w), out);
      else
        conv_direct(g, static_cast<const uint16_t*>(x), static_cast<const uint16_t*>(w), out);
      break;
    case ConvAlgo::IMPLICIT_GEMM: run_implicit(g, x, w, out, nullptr, nullptr); break;
    case ConvAlgo::IMPLICIT_PRECOMP_GEMM: run_precomp(g, x, w, out, workspace); break;
    case ConvAlgo::GEMM: run_gemm(g, x, w, out, workspace); break;
    default: break;
  }
  return Status();
}

}  // namespace cpu

}  // namespace jet
