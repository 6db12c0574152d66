// ConvDesc construction and validation, conv_output_dims, the workspace query, algorithm choice,
// and conv_forward / conv_bias_act_forward: validation and backend dispatch.
#include <algorithm>
#include <chrono>
#include <vector>

#include "backend.h"
#include "check.h"

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

}  // namespace jet
