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

size_t workspace_of(const ConvGeom& g, DType t, ConvAlgo algo) {
  switch (algo) {
    case ConvAlgo::IMPLICIT_PRECOMP_GEMM: return implicit_precomp_gemm_workspace(g, t);
    case ConvAlgo::GEMM: return gemm_workspace(g, t);
    case ConvAlgo::WINOGRAD: return winograd_workspace(g, t);
    default: return 0;
  }
}

// Fastest first, by problem shape. The ranking comes from bench/conv on the H100 test machine
// (bench/results/); find_conv_forward_algo measures instead of guessing.
int rank_algos(const ConvGeom& g, ConvAlgo* order) {
  int n = 0;
  const bool depthwise = g.cg == 1 && g.kg == 1 && g.groups > 1;
  if (depthwise) order[n++] = ConvAlgo::DIRECT;
  if (winograd_applies(g)) order[n++] = ConvAlgo::WINOGRAD;
  order[n++] = ConvAlgo::IMPLICIT_PRECOMP_GEMM;
  order[n++] = ConvAlgo::IMPLICIT_GEMM;
  order[n++] = ConvAlgo::GEMM;
  if (!depthwise) order[n++] = ConvAlgo::DIRECT;
  return n;
}

}  // namespace

Status conv_forward_workspace_size(const Handle&, const TensorDesc& x_desc,
                                   const FilterDesc& w_desc, const ConvDesc& conv,
                                   const TensorDesc& y_desc, ConvAlgo algo, size_t* bytes) {
  const ConvGeom g = make_conv_geom(x_desc, w_desc, conv, y_desc);
  JET_TRY(algo_applies(g, algo));
  *bytes = workspace_of(g, x_desc.dtype(), algo);
  return Status();
}

Status choose_conv_forward_algo(const Handle&, const TensorDesc& x_desc,
                                const FilterDesc& w_desc, const ConvDesc& conv,
                                const TensorDesc& y_desc, ConvPreference preference,
                                size_t workspace_limit, ConvAlgo* algo) {
  const ConvGeom g = make_conv_geom(x_desc, w_desc, conv, y_desc);
  ConvAlgo order[8];
  const int n = rank_algos(g, order);
  for (int i = 0; i < n; ++i) {
    const size_t ws = workspace_of(g, x_desc.dtype(), order[i]);
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
  if (workspace_bytes < workspace_of(g, t, algo))
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

}  // namespace cuda
}  // namespace jet
