// CUDA convolution entry points: which algorithms apply, their workspace, the heuristic, and
// dispatch to the algorithm files (conv_algos.cuh).
#include "conv_algos.cuh"

namespace jet {
namespace cuda {
namespace {

// NOT_SUPPORTED with the reason when `algo` cannot run this problem on CUDA.
Status algo_applies(const ConvGeom& g, ConvAlgo algo) {
  switch (algo) {
    case ConvAlgo::DIRECT:
    case ConvAlgo::IMPLICIT_GEMM:
    case ConvAlgo::IMPLICIT_PRECOMP_GEMM:
    case ConvAlgo::GEMM: return Status();
    case ConvAlgo::WINOGRAD:
      if (winograd_applies(g)) return Status();
      return make_status(StatusCode::NOT_SUPPORTED,
                         "winograd applies to 2D 3x3 filters with stride 1 and dilation 1 only");
    default:
      return make_status(StatusCode::NOT_SUPPORTED,
                         "the CUDA backend does not implement convolution algorithm %s",
                         conv_algo_name(algo));
  }
}

// The algorithm's workspace for this problem and tactic; NOT_SUPPORTED when the tactic does not
// apply (DIRECT has none; WINOGRAD's choose its GEMM's tile).
Status workspace_of(const Handle& h, const ConvGeom& g, DType t, ConvAlgo algo, size_t* bytes) {
  *bytes = 0;
  switch (algo) {
    case ConvAlgo::IMPLICIT_GEMM: return implicit_gemm_workspace(h, g, t, bytes);
    case ConvAlgo::IMPLICIT_PRECOMP_GEMM: return implicit_precomp_gemm_workspace(h, g, t, bytes);
    case ConvAlgo::GEMM: return gemm_workspace(h, g, t, bytes);
    case ConvAlgo::WINOGRAD:
      *bytes = winograd_workspace(g, t);
      if (g.tactic > winograd_tactic_count())
        return make_status(StatusCode::NOT_SUPPORTED, "winograd has tactics 1..%d (tactic %d requested)",
                           winograd_tactic_count(), g.tactic);
      return Status();
    default: break;
  }
  if (g.tactic != 0)
    return make_status(StatusCode::NOT_SUPPORTED, "%s has no tactics (tactic %d requested)",
                       conv_algo_name(algo), g.tactic);
  return Status();
}

// Fastest first, by problem shape and dtype, from the tactic sweeps of the ResNet-50 layers at
// N = 1 and 32 on the H100 (bench/calibration/*.csv; the tile and split-K factor within an
// algorithm come from gemm_config.cu's fitted model; find_conv_forward_algo measures instead):
//  - 1x1 stride-1 unpadded layers whose rows GEMM reads straight from x: GEMM, in f16 and f32
//    (no lowering pass; 1.0-1.3x ahead of the implicit algorithms at N = 1);
//  - f16 otherwise IMPLICIT_PRECOMP_GEMM (split-K needs its workspace; at N = 1 most layers
//    split), IMPLICIT_GEMM, then GEMM (im2col writes and reads the lowered matrix), WINOGRAD
//    last (CUDA-core transforms);
//  - f32: WINOGRAD for 3x3 stride 1 (fewer multiplies), then IMPLICIT_PRECOMP_GEMM,
//    IMPLICIT_GEMM, GEMM;
//  - DIRECT is far slower except for depthwise layers, which have their own kernel, and f32
//    channels-first 1x1 layers with few output pixels, few input channels and a small C x K
//    (MobileNetV2's expand layers at 14x14 and 28x28): there the GEMM engines' fixed cost (10-15
//    us) dominates and DIRECT's time is about 0.1 us per input channel. On the H200 at batch 1
//    (bench/results/2026-11-27-h200-four-warp-tiles): 64->384 at 14x14 6.6 us against the GEMM
//    family's best 14.5, 96->576 13.5 against 16.0, 32->192 at 28x28 10.2 against 11.2, 144->32
//    9.8 against 13.0; of the 38 measured f32 layers outside these bounds, DIRECT won 4 by
//    3-19% and lost the others by up to 7x.
bool direct_pointwise_f32(const ConvGeom& g, DType t) {
  const int64_t pixels = g.n * g.out[0] * g.out[1] * g.out[2];
  return t == DType::F32 && g.xs_c != 1 && g.groups == 1 &&
         g.win[0] * g.win[1] * g.win[2] == 1 && pixels <= 784 && g.cg <= 144 &&
         g.cg * g.kg <= 60000;
}

int rank_algos(const ConvGeom& g, DType t, ConvAlgo* order) {
  int n = 0;
  const bool depthwise = g.cg == 1 && g.kg == 1 && g.groups > 1;
  const bool direct_first = depthwise || direct_pointwise_f32(g, t);
  const bool wino = winograd_applies(g);
  const bool gemm_in_place = gemm_reads_x(g);
  if (direct_first) order[n++] = ConvAlgo::DIRECT;
  if (gemm_in_place) order[n++] = ConvAlgo::GEMM;
  if (t == DType::F16) {
    order[n++] = ConvAlgo::IMPLICIT_PRECOMP_GEMM;
    order[n++] = ConvAlgo::IMPLICIT_GEMM;
    if (!gemm_in_place) order[n++] = ConvAlgo::GEMM;
    if (wino) order[n++] = ConvAlgo::WINOGRAD;
  } else {
    if (wino) order[n++] = ConvAlgo::WINOGRAD;
    order[n++] = ConvAlgo::IMPLICIT_PRECOMP_GEMM;
    order[n++] = ConvAlgo::IMPLICIT_GEMM;
    if (!gemm_in_place) order[n++] = ConvAlgo::GEMM;
  }
  if (!direct_first) order[n++] = ConvAlgo::DIRECT;
  return n;
}

}  // namespace

Status conv_forward_workspace_size(const Handle& h, const TensorDesc& x_desc,
                                   const FilterDesc& w_desc, const ConvDesc& conv,
                                   const TensorDesc& y_desc, ConvAlgo algo, size_t* bytes) {
  const ConvGeom g = make_conv_geom(x_desc, w_desc, conv, y_desc);
  JET_TRY(algo_applies(g, algo));
  return workspace_of(h, g, x_desc.dtype(), algo, bytes);
}

Status conv_forward_tactic_count(const Handle& h, const TensorDesc& x_desc,
                                 const FilterDesc& w_desc, const ConvDesc& conv,
                                 const TensorDesc& y_desc, ConvAlgo algo, int* count) {
  const ConvGeom g = make_conv_geom(x_desc, w_desc, conv, y_desc);
  JET_TRY(algo_applies(g, algo));
  *count = 0;
  if (algo == ConvAlgo::IMPLICIT_GEMM || algo == ConvAlgo::IMPLICIT_PRECOMP_GEMM ||
      algo == ConvAlgo::GEMM)
    return gemm_family_tactic_count(h, g, x_desc.dtype(), algo, count);
  if (algo == ConvAlgo::WINOGRAD) *count = winograd_tactic_count();
  return Status();
}

Status choose_conv_forward_algo(const Handle& h, const TensorDesc& x_desc,
                                const FilterDesc& w_desc, const ConvDesc& conv,
                                const TensorDesc& y_desc, ConvPreference preference,
                                size_t workspace_limit, ConvAlgo* algo) {
  // The heuristic chooses with tactic 0 (the heuristic's tile) whatever conv carries.
  const ConvGeom g = make_conv_geom(x_desc, w_desc, conv.with_tactic(0), y_desc);
  ConvAlgo order[8];
  const int n = rank_algos(g, x_desc.dtype(), order);
  for (int i = 0; i < n; ++i) {
    size_t ws = 0;
    if (!workspace_of(h, g, x_desc.dtype(), order[i], &ws).ok()) continue;
    const bool fits = preference == ConvPreference::PREFER_FASTEST ||
                      (preference == ConvPreference::NO_WORKSPACE && ws == 0) ||
                      (preference == ConvPreference::SPECIFY_WORKSPACE_LIMIT &&
                       ws <= workspace_limit);
    if (fits) {
      *algo = order[i];
      return Status();
    }
  }
  *algo = ConvAlgo::IMPLICIT_GEMM;  // needs no workspace, applies to every problem
  return Status();
}

Status conv_forward(const Handle& h, float alpha1, const TensorDesc& x_desc, const void* x,
                    const FilterDesc& w_desc, const void* w, const ConvDesc& conv, ConvAlgo algo,
                    void* workspace, size_t workspace_bytes, const ConvEpilogue& epilogue,
                    const TensorDesc& y_desc, void* y) {
  const ConvGeom g = make_conv_geom(x_desc, w_desc, conv, y_desc);
  JET_TRY(algo_applies(g, algo));
  const DType t = x_desc.dtype();
  size_t need = 0;
  JET_TRY(workspace_of(h, g, t, algo, &need));
  if (workspace_bytes < need)
    return make_status(StatusCode::BAD_PARAM, "workspace too small for %s", conv_algo_name(algo));
  const ConvOut e = make_conv_out(alpha1, epilogue, g);
  switch (algo) {
    case ConvAlgo::DIRECT: return conv_direct(h, g, e, t, x, w, y);
    case ConvAlgo::IMPLICIT_GEMM: return conv_implicit_gemm(h, g, e, t, x, w, y);
    case ConvAlgo::IMPLICIT_PRECOMP_GEMM:
      return conv_implicit_precomp_gemm(h, g, e, t, x, w, workspace, y);
    case ConvAlgo::GEMM: return conv_gemm(h, g, e, t, x, w, workspace, y);
    case ConvAlgo::WINOGRAD: return conv_winograd(h, g, e, t, x, w, workspace, y);
    default: break;
  }
  return make_status(StatusCode::INTERNAL_ERROR, "unhandled convolution algorithm %s",
                     conv_algo_name(algo));
}

// find_conv_forward_algo's CUDA timing (declared in cpu/conv.cpp): one warm-up run, then each
// run bracketed by events on the handle's stream; the median resists a stray slow run. This
// synchronizes, which find_conv_forward_algo documents; inference routines never do.
Status time_conv_forward_algo(const Handle& h, const TensorDesc& x_desc, const void* x,
                              const FilterDesc& w_desc, const void* w, const ConvDesc& conv,
                              ConvAlgo algo, void* workspace, size_t workspace_bytes,
                              const TensorDesc& y_desc, void* y, int runs, float* ms) {
  constexpr int kMaxRuns = 16;
  if (runs < 1 || runs > kMaxRuns)
    return make_status(StatusCode::BAD_PARAM, "conv timing: runs = %d outside [1, %d]", runs,
                       kMaxRuns);
  ConvEpilogue epilogue;  // alpha 1, beta 0: y = conv(x, w)
  const auto run = [&] {
    return conv_forward(h, 1.f, x_desc, x, w_desc, w, conv, algo, workspace, workspace_bytes,
                        epilogue, y_desc, y);
  };
  JET_TRY(run());
  cudaEvent_t ev[kMaxRuns + 1];
  int created = 0;
  Status s;
  for (; created <= runs; ++created) {
    if (cudaEventCreate(&ev[created]) != cudaSuccess) {
      s = make_status(StatusCode::EXECUTION_FAILED, "conv timing: cudaEventCreate: %s",
                      cudaGetErrorString(cudaGetLastError()));
      break;
    }
  }
  // Back-to-back runs, one event between each pair: the gaps include no host latency.
  if (s.ok() && cudaEventRecord(ev[0], h.stream()) != cudaSuccess)
    s = make_status(StatusCode::EXECUTION_FAILED, "conv timing: cudaEventRecord: %s",
                    cudaGetErrorString(cudaGetLastError()));
  for (int r = 0; s.ok() && r < runs; ++r) {
    s = run();
    if (s.ok() && cudaEventRecord(ev[r + 1], h.stream()) != cudaSuccess)
      s = make_status(StatusCode::EXECUTION_FAILED, "conv timing: cudaEventRecord: %s",
                      cudaGetErrorString(cudaGetLastError()));
  }
  if (s.ok()) {
    const cudaError_t e = cudaStreamSynchronize(h.stream());
    if (e != cudaSuccess)
      s = make_status(StatusCode::EXECUTION_FAILED, "conv timing: %s: %s", conv_algo_name(algo),
                      cudaGetErrorString(e));
  }
  float t[kMaxRuns];
  for (int r = 0; s.ok() && r < runs; ++r) {
    if (cudaEventElapsedTime(&t[r], ev[r], ev[r + 1]) != cudaSuccess)
      s = make_status(StatusCode::EXECUTION_FAILED, "conv timing: cudaEventElapsedTime: %s",
                      cudaGetErrorString(cudaGetLastError()));
  }
  for (int i = 0; i < created; ++i) cudaEventDestroy(ev[i]);
  if (!s.ok()) return s;
  for (int i = 1; i < runs; ++i)  // insertion sort: runs <= 16
    for (int j = i; j > 0 && t[j] < t[j - 1]; --j) {
      const float tmp = t[j];
      t[j] = t[j - 1];
      t[j - 1] = tmp;
    }
  *ms = t[runs / 2];
  return Status();
}

}  // namespace cuda
}  // namespace jet
