// bench/conv_bwd: jetinfer's CUDA convolution backward (the data gradient, conv_backward_data, and
// the filter gradient, conv_backward_filter with each of its algorithms) against cuDNN's best, per
// layer, on the forward bench's layer sets (bench/conv/harness.cuh: ResNet-50's convolutions at
// N=1 and N=32 by default).
//
// cuDNN's candidates come from cudnnFindConvolutionBackwardDataAlgorithmEx and
// cudnnFindConvolutionBackwardFilterAlgorithmEx in the forward bench's math modes: f32 with
// CUDNN_FMA_MATH (no TF32), f16 with CUDNN_TENSOR_OP_MATH, f32 accumulation in both. Its three
// fastest candidates, and its fastest deterministic one when none of those is, are re-timed with
// the harness that times ours; "cuDNN" is the fastest of them and "cuDNN det" the fastest
// deterministic one (ours are deterministic: issue 15 allows atomics only behind a flag). Timing,
// input rotation past the L2 and the error check are bench/conv's (harness.cuh): dx and dw are
// pre-filled with NaNs and compared with cuDNN's, max |ours - cuDNN| / max |cuDNN|.
//
//   jet_bench_conv_bwd [--sets resnet50,resnet18,alexnet,mobilenetv2,paper,blog] [--dtypes f32,f16]
//                      [--layouts nchw,nhwc] [--which data,filter] [--runs N] [--n N]
//                      [--layers SUBSTR,...] [--max-n N] [--cudnn-ws-mb MB] [--no-graph]
//                      [--verbose] [--filter-chunks N] [--approximate]
// Ours: the data gradient has GATHER (every problem) and TRANSPOSED_FORWARD (conv_forward of dy
// with the transposed filter; strided layers one per output phase), f32 and f16 storage; the
// filter gradient has IMPLICIT_GEMM and GEMM (im2col + gemm_forward), f32 only (f16 is "n/a").
// Exit status 1 when an output of ours mismatches cuDNN's. Built only when cuDNN is found and
// the training add-on is on (bench/cudnn.cmake).
#include "../conv/harness.cuh"
#include "jet/dnn/training.h"

namespace {

using namespace jet_bench;

const char* bwd_data_algo_name(cudnnConvolutionBwdDataAlgo_t a) {
  switch (a) {
    case CUDNN_CONVOLUTION_BWD_DATA_ALGO_0: return "algo0";
    case CUDNN_CONVOLUTION_BWD_DATA_ALGO_1: return "algo1";
    case CUDNN_CONVOLUTION_BWD_DATA_ALGO_FFT: return "fft";
    case CUDNN_CONVOLUTION_BWD_DATA_ALGO_FFT_TILING: return "fft_tiling";
    case CUDNN_CONVOLUTION_BWD_DATA_ALGO_WINOGRAD: return "winograd";
    case CUDNN_CONVOLUTION_BWD_DATA_ALGO_WINOGRAD_NONFUSED: return "winograd_nonfused";
    default: return "?";
  }
}

const char* bwd_filter_algo_name(cudnnConvolutionBwdFilterAlgo_t a) {
  switch (a) {
    case CUDNN_CONVOLUTION_BWD_FILTER_ALGO_0: return "algo0";
    case CUDNN_CONVOLUTION_BWD_FILTER_ALGO_1: return "algo1";
    case CUDNN_CONVOLUTION_BWD_FILTER_ALGO_FFT: return "fft";
    case CUDNN_CONVOLUTION_BWD_FILTER_ALGO_3: return "algo3";
    case CUDNN_CONVOLUTION_BWD_FILTER_ALGO_WINOGRAD_NONFUSED: return "winograd_nonfused";
    case CUDNN_CONVOLUTION_BWD_FILTER_ALGO_FFT_TILING: return "fft_tiling";
    default: return "?";
  }
}

const char* algo_name(cudnnConvolutionBwdDataAlgo_t a) { return bwd_data_algo_name(a); }
const char* algo_name(cudnnConvolutionBwdFilterAlgo_t a) { return bwd_filter_algo_name(a); }

struct Config {
  jet::DType dtype;
  bool nhwc;
};

// One timed implementation (a cuDNN pick or one of ours).
struct Timed {
  bool ran = false;
  std::string why;  // when it did not run
  std::string algo;
  float ms = 0;
  float host_us = 0;
  bool graph = false;
  size_t ws = 0;
  double err = -1;  // ours: max |ours - cuDNN| / max |cuDNN|
};

const jet::ConvBwdDataAlgo kDataAlgos[] = {jet::ConvBwdDataAlgo::GATHER,
                                           jet::ConvBwdDataAlgo::TRANSPOSED_FORWARD};
constexpr int kDataAlgoCount = 2;

// The filter gradient's variants: IMPLICIT_GEMM, GEMM as the backend chooses (tactic 0: its sum
// split in chunks where dw has few tiles), GEMM unsplit (tactic 1), to show what the split gives;
// --filter-chunks N makes the third GEMM with N chunks (tactic N; n/a where N does not divide the
// N x output positions), to time another split than the backend's; WINOGRAD (2D 3x3 stride-1
// layers; n/a elsewhere).
const jet::ConvBwdFilterAlgo kFilterAlgos[] = {jet::ConvBwdFilterAlgo::IMPLICIT_GEMM,
                                               jet::ConvBwdFilterAlgo::GEMM,
                                               jet::ConvBwdFilterAlgo::GEMM,
                                               jet::ConvBwdFilterAlgo::WINOGRAD};
int32_t kFilterTactics[] = {0, 0, 1, 0};
std::string third_filter_name() {
  return kFilterTactics[2] == 1 ? "gemm unsplit" : "gemm " + std::to_string(kFilterTactics[2]) + " chunks";
}
constexpr int kFilterAlgoCount = 4;

struct LayerResult {
  double gflop = 0;
  // Data gradient: ours per algorithm, and the fastest of them.
  Timed cudnn_data, cudnn_data_det, data[kDataAlgoCount];
  int data_best = -1;
  // Filter gradient: ours per algorithm, and the fastest of them.
  Timed cudnn_filter, cudnn_filter_det, filter[kFilterAlgoCount];
  int filter_best = -1;
  std::string find_list;  // --verbose
};

struct Context {
  Timer timer;
  cudnnHandle_t cudnn;
  jet::Handle jet;
  size_t l2_bytes;
  size_t cudnn_ws_limit;
  DeviceBuffer x, w, dy, dx, dw, ref, ws, ours_ws;
  unsigned* err_dev;  // 2 words
  uint64_t seed = 1;
  bool verbose = false;
  bool want_data = true, want_filter = true;
};

// cuDNN's Find, then its 3 fastest successful candidates (and the fastest deterministic one, if
// not among them) re-timed by `time_one(perf)`; best and best_det get the fastest of each kind.
// `reference(perf)` writes the reference output with the fastest.
template <class Perf, class TimeOne, class Reference>
void pick_cudnn(Context& cx, const Perf* perf, int returned, size_t ws_given, TimeOne&& time_one,
                Reference&& reference, Timed* best, Timed* best_det, std::string* list) {
  int tried = 0;
  bool det_tried = false;
  const Perf* fastest = nullptr;
  for (int i = 0; i < returned; ++i) {
    const Perf& p = perf[i];
    if (cx.verbose)
      *list += std::string(list->empty() ? "" : "; ") + algo_name(p.algo) +
               (p.mathType == CUDNN_TENSOR_OP_MATH ? "+tc" : "") +
               (p.determinism == CUDNN_DETERMINISTIC ? "" : " (non-det)") + " " +
               cudnnGetErrorString(p.status) + " " + fmt("%.4f ms", p.time) + " " +
               fmt_mib(p.memory);
    if (p.status != CUDNN_STATUS_SUCCESS || p.memory > ws_given) continue;
    const bool det = p.determinism == CUDNN_DETERMINISTIC;
    if (tried >= 3 && (det_tried || !det)) continue;
    ++tried;
    det_tried = det_tried || det;
    const Timing tm = time_one(p);
    if (tm.ms < 0) continue;
    std::string name = algo_name(p.algo);
    if (p.mathType == CUDNN_TENSOR_OP_MATH || p.mathType == CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION)
      name += "+tc";
    if (!det) name += " (non-det)";
    auto keep = [&](Timed* t) {
      if (t->ran && tm.ms >= t->ms) return;
      t->ran = true;
      t->ms = tm.ms;
      t->host_us = tm.host_us;
      t->graph = tm.graph;
      t->ws = p.memory;
      t->algo = name;
    };
    if (!best->ran || tm.ms < best->ms) fastest = &p;
    keep(best);
    if (det) keep(best_det);
  }
  if (fastest) reference(*fastest);
  if (!best->ran) best->why = "no algorithm ran";
  if (!best_det->ran) best_det->why = "none deterministic";
}

// What cudnnFind may use: the limit, less when device memory is short (1 GiB kept free).
size_t reserve_cudnn_workspace(Context& cx) {
  size_t free_b = 0, total_b = 0;
  CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
  const size_t avail =
      free_b + cx.ws.bytes > (1ull << 30) ? free_b + cx.ws.bytes - (1ull << 30) : 0;
  size_t ws_need = std::min(cx.cudnn_ws_limit, avail);
  while (ws_need > 0 && !cx.ws.reserve(ws_need)) ws_need /= 2;
  if (ws_need == 0) cx.ws.reserve(256);
  return ws_need;
}

// Times one call of ours through `call(r)` on rotation slice r; the status of a refused call
// says why (NOT_SUPPORTED: "n/a").
template <class Call>
void time_ours(Context& cx, int nrot, Timed* t, Call&& call) {
  jet::Status call_status;
  const Timing tm = time_calls(cx.timer, nrot, [&](int r) {
    const jet::Status s = call(r);
    if (!s.ok() && call_status.ok()) call_status = s;
    return s.ok();
  });
  if (tm.ms < 0 || !call_status.ok()) {
    t->why = call_status.code() == jet::StatusCode::NOT_SUPPORTED ? "n/a"
                                                                  : "err: " + call_status.to_string();
    return;
  }
  t->ran = true;
  t->ms = tm.ms;
  t->host_us = tm.host_us;
  t->graph = tm.graph;
}

LayerResult run_layer(Context& cx, const Layer& l, const Config& cfg) {
  LayerResult res;
  const jet::DType dt = cfg.dtype;
  const size_t es = jet::dtype_size(dt);
  const int64_t p = (l.h + 2 * l.pad - l.r) / l.stride + 1;
  const int64_t q = (l.w + 2 * l.pad - l.s) / l.stride + 1;
  const int64_t cg = l.c / l.groups;
  res.gflop = 2.0 * l.n * l.k * p * q * cg * l.r * l.s * 1e-9;  // each gradient's, as the forward

  const jet::TensorDesc xd = cfg.nhwc ? jet::TensorDesc::nhwc(dt, l.n, l.c, l.h, l.w)
                                      : jet::TensorDesc::nchw(dt, l.n, l.c, l.h, l.w);
  const jet::FilterDesc wd = cfg.nhwc ? jet::FilterDesc::krsc(dt, l.k, cg, l.r, l.s)
                                      : jet::FilterDesc::kcrs(dt, l.k, cg, l.r, l.s);
  const jet::TensorDesc yd = cfg.nhwc ? jet::TensorDesc::nhwc(dt, l.n, l.k, p, q)
                                      : jet::TensorDesc::nchw(dt, l.n, l.k, p, q);
  const jet::ConvDesc cd = jet::ConvDesc::conv2d(l.pad, l.pad, l.stride, l.stride, 1, 1, l.groups,
                                                 jet::ConvMode::CROSS_CORRELATION,
                                                 jet::ComputeType::F32)
                                 .with_math(bench_conv_math());

  const cudnnDataType_t cdt = dt == jet::DType::F32 ? CUDNN_DATA_FLOAT : CUDNN_DATA_HALF;
  const cudnnTensorFormat_t cfmt = cfg.nhwc ? CUDNN_TENSOR_NHWC : CUDNN_TENSOR_NCHW;
  const cudnnMathType_t math = dt == jet::DType::F32 ? CUDNN_FMA_MATH : CUDNN_TENSOR_OP_MATH;
  cudnnTensorDescriptor_t cxd, cyd;
  cudnnFilterDescriptor_t cwd;
  cudnnConvolutionDescriptor_t ccd;
  CUDNN_CHECK(cudnnCreateTensorDescriptor(&cxd));
  CUDNN_CHECK(cudnnCreateTensorDescriptor(&cyd));
  CUDNN_CHECK(cudnnCreateFilterDescriptor(&cwd));
  CUDNN_CHECK(cudnnCreateConvolutionDescriptor(&ccd));
  CUDNN_CHECK(cudnnSetTensor4dDescriptor(cxd, cfmt, cdt, int(l.n), int(l.c), int(l.h), int(l.w)));
  CUDNN_CHECK(cudnnSetTensor4dDescriptor(cyd, cfmt, cdt, int(l.n), int(l.k), int(p), int(q)));
  CUDNN_CHECK(cudnnSetFilter4dDescriptor(cwd, cdt, cfmt, int(l.k), int(cg), int(l.r), int(l.s)));
  CUDNN_CHECK(cudnnSetConvolution2dDescriptor(ccd, int(l.pad), int(l.pad), int(l.stride),
                                              int(l.stride), 1, 1, CUDNN_CROSS_CORRELATION,
                                              CUDNN_DATA_FLOAT));
  CUDNN_CHECK(cudnnSetConvolutionGroupCount(ccd, int(l.groups)));
  CUDNN_CHECK(cudnnSetConvolutionMathType(ccd, math));
  auto cleanup = [&]() {
    cudnnDestroyTensorDescriptor(cxd);
    cudnnDestroyTensorDescriptor(cyd);
    cudnnDestroyFilterDescriptor(cwd);
    cudnnDestroyConvolutionDescriptor(ccd);
  };

  // Rotation copies of every operand, each slice 256-byte aligned: x, w and dy are inputs (random),
  // dx and dw outputs.
  const size_t xb = round_up(static_cast<size_t>(xd.span()) * es, 256);
  const size_t wb = round_up(static_cast<size_t>(wd.elements()) * es, 256);
  const size_t yb = round_up(static_cast<size_t>(yd.span()) * es, 256);
  const size_t set_bytes = 2 * xb + 2 * wb + yb;
  int nrot = 1;
  if (set_bytes < 2 * cx.l2_bytes)
    nrot = static_cast<int>(std::min<size_t>(256, (3 * cx.l2_bytes + set_bytes - 1) / set_bytes));
  if (!cx.x.reserve(xb * nrot) || !cx.w.reserve(wb * nrot) || !cx.dy.reserve(yb * nrot) ||
      !cx.dx.reserve(xb * nrot) || !cx.dw.reserve(wb * nrot) ||
      !cx.ref.reserve(std::max(xb, wb))) {
    for (Timed* t : {&res.cudnn_data, &res.data[0], &res.data[1], &res.cudnn_filter, &res.filter[0],
                     &res.filter[1], &res.filter[2], &res.filter[3]})
      t->why = "out of device memory";
    cleanup();
    return res;
  }
  auto slice = [](const DeviceBuffer& b, size_t bytes, int r) {
    return static_cast<char*>(b.p) + bytes * r;
  };
  auto X = [&](int r) { return slice(cx.x, xb, r); };
  auto W = [&](int r) { return slice(cx.w, wb, r); };
  auto DY = [&](int r) { return slice(cx.dy, yb, r); };
  auto DX = [&](int r) { return slice(cx.dx, xb, r); };
  auto DW = [&](int r) { return slice(cx.dw, wb, r); };
  fill_random(cx.timer.stream, dt, cx.x.p, xb * nrot / es, cx.seed++);
  fill_random(cx.timer.stream, dt, cx.w.p, wb * nrot / es, cx.seed++);
  fill_random(cx.timer.stream, dt, cx.dy.p, yb * nrot / es, cx.seed++);
  const float alpha = 1.f, beta = 0.f;

  if (cx.want_data) {
    const size_t ws_given = reserve_cudnn_workspace(cx);
    cudnnConvolutionBwdDataAlgoPerf_t perf[CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT];
    int returned = 0;
    const cudnnStatus_t st = cudnnFindConvolutionBackwardDataAlgorithmEx(
        cx.cudnn, cwd, W(0), cyd, DY(0), ccd, cxd, DX(0), CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT,
        &returned, perf, cx.ws.p, ws_given);
    CUDA_CHECK(cudaGetLastError());
    std::string list;
    if (st != CUDNN_STATUS_SUCCESS) {
      res.cudnn_data.why = std::string("find: ") + cudnnGetErrorString(st);
    } else {
      pick_cudnn(
          cx, perf, returned, ws_given,
          [&](const cudnnConvolutionBwdDataAlgoPerf_t& pf) {
            CUDNN_CHECK(cudnnSetConvolutionMathType(ccd, pf.mathType));
            return time_calls(cx.timer, nrot, [&](int r) {
              return cudnnConvolutionBackwardData(cx.cudnn, &alpha, cwd, W(r), cyd, DY(r), ccd,
                                                  pf.algo, cx.ws.p, pf.memory, &beta, cxd,
                                                  DX(r)) == CUDNN_STATUS_SUCCESS;
            });
          },
          [&](const cudnnConvolutionBwdDataAlgoPerf_t& pf) {
            CUDNN_CHECK(cudnnSetConvolutionMathType(ccd, pf.mathType));
            CUDNN_CHECK(cudnnConvolutionBackwardData(cx.cudnn, &alpha, cwd, W(0), cyd, DY(0), ccd,
                                                     pf.algo, cx.ws.p, pf.memory, &beta, cxd,
                                                     cx.ref.p));
          },
          &res.cudnn_data, &res.cudnn_data_det, &list);
      CUDNN_CHECK(cudnnSetConvolutionMathType(ccd, math));
      if (cx.verbose) res.find_list += "data: " + list + " (workspace given " + fmt_mib(ws_given) + ")";
    }
    for (int a = 0; a < kDataAlgoCount; ++a) {
      Timed& t = res.data[a];
      const jet::ConvBwdDataAlgo algo = kDataAlgos[a];
      t.algo = jet::conv_bwd_data_algo_name(algo);
      size_t wsb = 0;
      const jet::Status s =
          jet::conv_backward_data_workspace_size(cx.jet, wd, yd, cd, xd, algo, &wsb);
      if (!s.ok()) {
        t.why = s.code() == jet::StatusCode::NOT_SUPPORTED ? "n/a" : "err: " + s.to_string();
        continue;
      }
      if (!cx.ours_ws.reserve(std::max<size_t>(wsb, 256))) {
        t.why = "workspace " + fmt_mib(wsb) + " does not fit";
        continue;
      }
      t.ws = wsb;
      auto call = [&](int r) {
        return jet::conv_backward_data(cx.jet, 1.f, wd, W(r), yd, DY(r), cd, algo,
                                       wsb ? cx.ours_ws.p : nullptr, wsb, 0.f, xd, DX(r));
      };
      time_ours(cx, nrot, &t, call);
      if (t.ran && res.cudnn_data.ran) {
        CUDA_CHECK(cudaMemsetAsync(DX(0), 0xff, xb, cx.timer.stream));
        const jet::Status cs = call(0);
        t.err = cs.ok() ? compare_outputs(cx.timer.stream, cx.err_dev, dt, DX(0), cx.ref.p,
                                          static_cast<size_t>(xd.span()))
                        : INFINITY;
      }
      if (t.ran && (res.data_best < 0 || t.ms < res.data[res.data_best].ms)) res.data_best = a;
    }
  }

  if (cx.want_filter) {
    const size_t ws_given = reserve_cudnn_workspace(cx);
    cudnnConvolutionBwdFilterAlgoPerf_t perf[CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT];
    int returned = 0;
    const cudnnStatus_t st = cudnnFindConvolutionBackwardFilterAlgorithmEx(
        cx.cudnn, cxd, X(0), cyd, DY(0), ccd, cwd, DW(0), CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT,
        &returned, perf, cx.ws.p, ws_given);
    CUDA_CHECK(cudaGetLastError());
    std::string list;
    if (st != CUDNN_STATUS_SUCCESS) {
      res.cudnn_filter.why = std::string("find: ") + cudnnGetErrorString(st);
    } else {
      pick_cudnn(
          cx, perf, returned, ws_given,
          [&](const cudnnConvolutionBwdFilterAlgoPerf_t& pf) {
            CUDNN_CHECK(cudnnSetConvolutionMathType(ccd, pf.mathType));
            return time_calls(cx.timer, nrot, [&](int r) {
              return cudnnConvolutionBackwardFilter(cx.cudnn, &alpha, cxd, X(r), cyd, DY(r), ccd,
                                                    pf.algo, cx.ws.p, pf.memory, &beta, cwd,
                                                    DW(r)) == CUDNN_STATUS_SUCCESS;
            });
          },
          [&](const cudnnConvolutionBwdFilterAlgoPerf_t& pf) {
            CUDNN_CHECK(cudnnSetConvolutionMathType(ccd, pf.mathType));
            CUDNN_CHECK(cudnnConvolutionBackwardFilter(cx.cudnn, &alpha, cxd, X(0), cyd, DY(0),
                                                       ccd, pf.algo, cx.ws.p, pf.memory, &beta,
                                                       cwd, cx.ref.p));
          },
          &res.cudnn_filter, &res.cudnn_filter_det, &list);
      CUDNN_CHECK(cudnnSetConvolutionMathType(ccd, math));
      if (cx.verbose)
        res.find_list += std::string(res.find_list.empty() ? "" : "; ") + "filter: " + list +
                         " (workspace given " + fmt_mib(ws_given) + ")";
    }
    for (int a = 0; a < kFilterAlgoCount; ++a) {
      Timed& t = res.filter[a];
      const jet::ConvBwdFilterAlgo algo = kFilterAlgos[a];
      const jet::ConvDesc ct = cd.with_tactic(kFilterTactics[a]);
      t.algo = a == 2 ? third_filter_name() : std::string(jet::conv_bwd_filter_algo_name(algo));
      size_t wsb = 0;
      const jet::Status s =
          jet::conv_backward_filter_workspace_size(cx.jet, xd, yd, ct, wd, algo, &wsb);
      if (!s.ok()) {
        t.why = s.code() == jet::StatusCode::NOT_SUPPORTED ? "n/a" : "err: " + s.to_string();
        continue;
      }
      if (!cx.ours_ws.reserve(std::max<size_t>(wsb, 256))) {
        t.why = "workspace " + fmt_mib(wsb) + " does not fit";
        continue;
      }
      t.ws = wsb;
      auto call = [&](int r) {
        return jet::conv_backward_filter(cx.jet, 1.f, xd, X(r), yd, DY(r), ct, algo,
                                         wsb ? cx.ours_ws.p : nullptr, wsb, 0.f, wd, DW(r));
      };
      time_ours(cx, nrot, &t, call);
      if (t.ran && res.cudnn_filter.ran) {
        CUDA_CHECK(cudaMemsetAsync(DW(0), 0xff, wb, cx.timer.stream));
        const jet::Status cs = call(0);
        t.err = cs.ok() ? compare_outputs(cx.timer.stream, cx.err_dev, dt, DW(0), cx.ref.p,
                                          static_cast<size_t>(wd.elements()))
                        : INFINITY;
      }
      if (t.ran && (res.filter_best < 0 || t.ms < res.filter[res.filter_best].ms))
        res.filter_best = a;
    }
  }
  cleanup();
  return res;
}

std::string cell(const Timed& t, bool graph_mode) {
  if (!t.ran) return t.why.empty() ? "-" : t.why;
  return fmt_ms(t.ms) + (t.graph || !graph_mode ? "" : " (s)");
}

// Geomeans and network sums of one (set, dtype-layout) table.
struct Tally {
  GeoMean data, data_det, data_algo[kDataAlgoCount], filter, filter_det,
      filter_algo[kFilterAlgoCount], both;
  double net_cudnn = 0, net_ours = 0;  // data + filter, reps counted
  bool net_complete = true;
};

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> sets = {"resnet50"};
  std::vector<std::string> dtypes = {"f32", "f16"};
  std::vector<std::string> layouts = {"nchw", "nhwc"};
  std::vector<std::string> which = {"data", "filter"};
  std::vector<std::string> layer_filter;
  int runs = 7;
  int64_t max_n = 0, only_n = 0;
  size_t cudnn_ws_mb = 4096;
  bool verbose = false, graph = true;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const bool more = i + 1 < argc;
    if (a == "--sets" && more) sets = split(argv[++i]);
    else if (a == "--dtypes" && more) dtypes = split(argv[++i]);
    else if (a == "--layouts" && more) layouts = split(argv[++i]);
    else if (a == "--which" && more) which = split(argv[++i]);
    else if (a == "--runs" && more) runs = std::max(1, std::atoi(argv[++i]));
    else if (a == "--max-n" && more) max_n = std::max(1, std::atoi(argv[++i]));
    else if (a == "--n" && more) only_n = std::max(1, std::atoi(argv[++i]));
    else if (a == "--layers" && more) layer_filter = split(argv[++i]);
    else if (a == "--approximate") bench_conv_math() = jet::ConvMath::ALLOW_APPROXIMATE;
    else if (a == "--cudnn-ws-mb" && more) cudnn_ws_mb = static_cast<size_t>(std::atoll(argv[++i]));
    else if (a == "--verbose") verbose = true;
    else if (a == "--no-graph") graph = false;
    else if (a == "--filter-chunks" && more) kFilterTactics[2] = std::max(1, std::atoi(argv[++i]));
    else {
      std::fprintf(stderr,
                   "usage: %s [--sets resnet50,resnet18,alexnet,mobilenetv2,paper,blog] [--dtypes f32,f16]\n"
                   "       [--layouts nchw,nhwc] [--which data,filter] [--runs N] [--n N]\n"
                   "       [--layers SUBSTR,...] [--max-n N] [--cudnn-ws-mb MB] [--no-graph]\n"
                   "       [--verbose] [--filter-chunks N] [--approximate]\n",
                   argv[0]);
      return 2;
    }
  }
  for (const auto& d : dtypes)
    if (d != "f32" && d != "f16") return std::fprintf(stderr, "unknown dtype %s\n", d.c_str()), 2;
  for (const auto& l : layouts)
    if (l != "nchw" && l != "nhwc") return std::fprintf(stderr, "unknown layout %s\n", l.c_str()), 2;
  for (const auto& w : which)
    if (w != "data" && w != "filter") return std::fprintf(stderr, "unknown --which %s\n", w.c_str()), 2;

  const auto t_start = std::chrono::steady_clock::now();
  Context cx;
  cx.want_data = has(which, "data");
  cx.want_filter = has(which, "filter");
  CUDA_CHECK(cudaSetDevice(0));
  cudaDeviceProp prop;
  CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
  int driver = 0, runtime = 0;
  CUDA_CHECK(cudaDriverGetVersion(&driver));
  CUDA_CHECK(cudaRuntimeGetVersion(&runtime));
  cx.l2_bytes = static_cast<size_t>(prop.l2CacheSize);
  cx.cudnn_ws_limit = cudnn_ws_mb << 20;
  CUDA_CHECK(cudaStreamCreateWithFlags(&cx.timer.stream, cudaStreamNonBlocking));
  CUDA_CHECK(cudaEventCreate(&cx.timer.e0));
  CUDA_CHECK(cudaEventCreate(&cx.timer.e1));
  cx.timer.runs = runs;
  cx.timer.graph = graph;
  cx.verbose = verbose;
  CUDNN_CHECK(cudnnCreate(&cx.cudnn));
  CUDNN_CHECK(cudnnSetStream(cx.cudnn, cx.timer.stream));
  {
    const jet::Status s = jet::Handle::cuda(0, cx.timer.stream, &cx.jet);
    if (!s.ok()) {
      std::fprintf(stderr, "Handle::cuda: %s\n", s.to_string().c_str());
      return 1;
    }
  }
  CUDA_CHECK(cudaMalloc(&cx.err_dev, 2 * sizeof(unsigned)));

  std::printf("# bench/conv_bwd: jetinfer CUDA convolution backward (data, filter) vs cuDNN\n\n");
  std::printf("- device: %s, %d SMs, %.1f GiB, L2 %.0f MiB, cc %d.%d\n", prop.name,
              prop.multiProcessorCount, prop.totalGlobalMem / 1073741824.0,
              prop.l2CacheSize / 1048576.0, prop.major, prop.minor);
  std::printf("- CUDA driver %d, runtime %d; cuDNN %zu (cudnnGetVersion), built against %d.%d.%d\n",
              driver, runtime, cudnnGetVersion(), CUDNN_MAJOR, CUDNN_MINOR, CUDNN_PATCHLEVEL);
  if (cudnnGetVersion() / 100 != CUDNN_VERSION / 100)
    std::printf("- WARNING: the cuDNN library loaded (%zu) is not the version of the headers used "
                "(%d)\n", cudnnGetVersion(), CUDNN_VERSION);
  std::printf("- math: f32 = CUDNN_FMA_MATH (no TF32); f16 = CUDNN_TENSOR_OP_MATH; f32 accumulation "
              "in both (ours: f32 accumulation, f16 storage for dx only; our filter gradient is "
              "f32 only)\n");
  std::printf("- cuDNN = fastest of cudnnFindConvolutionBackward{Data,Filter}AlgorithmEx's 3 best "
              "candidates re-timed here (workspace limit %zu MiB), \"(non-det)\" when that one is "
              "not deterministic; cuDNN det = its fastest deterministic candidate (ours are all "
              "deterministic)\n", cudnn_ws_mb);
  std::printf("- timing: bench/conv's (about 1 ms of calls captured into a CUDA graph and replayed, "
              "median of %d replays; (s) = timed on the stream); inputs rotated over copies when "
              "x+w+dy+dx+dw < 2x L2\n", runs);
  std::printf("- ratio = cuDNN time / our time (higher is better, 1 = parity); geomeans over the "
              "layers where both ran, unweighted by reps; error = max|ours - cuDNN| / max|cuDNN|, "
              "MISMATCH above %g (f32) / %g (f16)\n", 1e-4, 1e-2);
  std::printf("- GFLOP: of one gradient (the forward's count); conv1's data gradient is benched "
              "though training never needs it (its input is the image)\n\n");
  std::fflush(stdout);

  std::vector<Set> chosen;
  for (Set& s : all_sets(max_n)) {
    if (!has(sets, s.family)) continue;
    if (only_n > 0 && (s.layers.empty() || s.layers[0].n != only_n)) continue;
    if (!layer_filter.empty()) {
      std::vector<Layer> kept;
      for (const Layer& l : s.layers)
        for (const std::string& f : layer_filter)
          if (l.name.find(f) != std::string::npos) {
            kept.push_back(l);
            break;
          }
      if (kept.empty()) continue;
      s.layers = kept;
    }
    chosen.push_back(s);
  }

  struct Combo {
    std::string name;
    GeoMean data, filter, both;
  };
  std::vector<Combo> combos;
  int mismatches = 0;
  for (const std::string& dts : dtypes) {
    for (const std::string& lay : layouts) {
      const Config cfg{dts == "f32" ? jet::DType::F32 : jet::DType::F16, lay == "nhwc"};
      Combo combo;
      combo.name = dts + "-" + lay;
      const double tol = cfg.dtype == jet::DType::F32 ? 1e-4 : 1e-2;
      for (const Set& set : chosen) {
        std::printf("## %s, %s, %s %s/%s\n\n", set.title.c_str(), set.key.c_str(), dts.c_str(),
                    cfg.nhwc ? "NHWC" : "NCHW", cfg.nhwc ? "KRSC" : "KCRS");
        std::printf("| layer | N | C->K | in | RxS/s | reps | GFLOP | data: cuDNN algo | cuDNN ms | "
                    "cuDNN det ms | gather ms | transposed_forward ms (ws) | ours best | TF/s | ratio | "
                    "ratio det | err | filter: cuDNN algo "
                    "| cuDNN ms | cuDNN det ms | implicit_gemm ms | gemm ms (ws) | %s ms | winograd ms (ws) | ours best "
                    "| TF/s "
                    "| ratio | ratio det | err |\n|", third_filter_name().c_str());
        for (int i = 0; i < 29; ++i) std::printf("---|");
        std::printf("\n");
        Tally tl;
        std::vector<std::string> notes;
        for (const Layer& l : set.layers) {
          const LayerResult r = run_layer(cx, l, cfg);
          std::printf("| %s | %lld | %lld->%lld | %lldx%lld | %lldx%lld/%lld | %d | %.3f |",
                      l.name.c_str(), (long long)l.n, (long long)l.c, (long long)l.k,
                      (long long)l.h, (long long)l.w, (long long)l.r, (long long)l.s,
                      (long long)l.stride, l.reps, r.gflop);
          auto ratio = [](const Timed& peer, const Timed& ours, GeoMean* gm) {
            if (!peer.ran || !ours.ran) return std::string("-");
            const double v = peer.ms / ours.ms;
            if (gm) gm->add(v);
            return fmt("%.3f", v);
          };
          auto err_cell = [&](const Timed& t, const char* what) {
            if (t.err < 0) return std::string("-");
            if (t.err > tol) {
              ++mismatches;
              notes.push_back("MISMATCH " + l.name + ": " + what + " max rel err " + fmt("%.3g", t.err));
            }
            return fmt("%.2g", t.err) + (t.err > tol ? " MISMATCH" : "");
          };
          double layer_cudnn = 0, layer_ours = 0;
          bool layer_complete = true;
          const Timed none{};
          if (cx.want_data) {
            const Timed& c = r.cudnn_data;
            std::string algos[kDataAlgoCount];
            for (int a = 0; a < kDataAlgoCount; ++a) {
              const Timed& t = r.data[a];
              algos[a] = cell(t, graph);
              if (t.ran) {
                algos[a] += " (" + ratio(c, t, &tl.data_algo[a]) + "x";
                if (t.ws) algos[a] += "; " + fmt_mib(t.ws);
                algos[a] += ")";
              } else if (t.why != "n/a") {
                notes.push_back(l.name + ": data " + t.algo + ": " + t.why);
              }
            }
            const Timed& best = r.data_best >= 0 ? r.data[r.data_best] : none;
            std::printf(" %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |",
                        c.ran ? c.algo.c_str() : c.why.c_str(), cell(c, graph).c_str(),
                        cell(r.cudnn_data_det, graph).c_str(), algos[0].c_str(),
                        algos[1].c_str(), best.ran ? best.algo.c_str() : "n/a",
                        best.ran ? fmt("%.1f", r.gflop / best.ms).c_str() : "-",
                        ratio(c, best, &tl.data).c_str(),
                        ratio(r.cudnn_data_det, best, &tl.data_det).c_str(),
                        err_cell(best, "data").c_str());
            for (int a = 0; a < kDataAlgoCount; ++a)
              if (a != r.data_best && r.data[a].err > tol) {
                ++mismatches;
                notes.push_back("MISMATCH " + l.name + ": data " + r.data[a].algo +
                                " max rel err " + fmt("%.3g", r.data[a].err));
              }
            if (c.ran && best.ran) {
              layer_cudnn += c.ms;
              layer_ours += best.ms;
            } else {
              layer_complete = false;
            }
          } else {
            std::printf(" - | - | - | - | - | - | - | - | - | - |");
          }
          if (cx.want_filter) {
            const Timed& c = r.cudnn_filter;
            std::string algos[kFilterAlgoCount];
            for (int a = 0; a < kFilterAlgoCount; ++a) {
              const Timed& t = r.filter[a];
              algos[a] = cell(t, graph);
              if (t.ran) {
                algos[a] += " (" + ratio(c, t, &tl.filter_algo[a]) + "x";
                if (t.ws) algos[a] += "; " + fmt_mib(t.ws);
                algos[a] += ")";
              } else if (t.why != "n/a") {
                notes.push_back(l.name + ": filter " + t.algo + ": " + t.why);
              }
            }
            const Timed& best = r.filter_best >= 0 ? r.filter[r.filter_best] : none;
            std::printf(" %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |",
                        c.ran ? c.algo.c_str() : c.why.c_str(), cell(c, graph).c_str(),
                        cell(r.cudnn_filter_det, graph).c_str(), algos[0].c_str(),
                        algos[1].c_str(), algos[2].c_str(), algos[3].c_str(),
                        best.ran ? best.algo.c_str() : "n/a",
                        best.ran ? fmt("%.1f", r.gflop / best.ms).c_str() : "-",
                        ratio(c, best, &tl.filter).c_str(),
                        ratio(r.cudnn_filter_det, best, &tl.filter_det).c_str(),
                        err_cell(best, "filter").c_str());
            for (int a = 0; a < kFilterAlgoCount; ++a)
              if (a != r.filter_best && r.filter[a].err > tol) {
                ++mismatches;
                notes.push_back("MISMATCH " + l.name + ": filter " + r.filter[a].algo +
                                " max rel err " + fmt("%.3g", r.filter[a].err));
              }
            if (c.ran && best.ran) {
              layer_cudnn += c.ms;
              layer_ours += best.ms;
            } else {
              layer_complete = false;
            }
          } else {
            std::printf(" - | - | - | - | - | - | - | - | - | - | - | - |");
          }
          std::printf("\n");
          if (layer_complete && layer_ours > 0) tl.both.add(layer_cudnn / layer_ours);
          tl.net_cudnn += layer_cudnn * l.reps;
          tl.net_ours += layer_ours * l.reps;
          tl.net_complete = tl.net_complete && layer_complete;
          if (!r.find_list.empty()) notes.push_back(l.name + ": cuDNN find: " + r.find_list);
          std::fflush(stdout);
        }
        std::printf("\ngeomean ours/cuDNN (%s, %s): data best %s (%d/%zu), vs deterministic %s; "
                    "gather %s, transposed_forward %s (%d); filter best %s (%d/%zu), vs "
                    "deterministic %s; implicit_gemm %s, gemm %s, %s %s, winograd %s (%d); data + "
                    "filter per layer %s (%d)\n",
                    set.key.c_str(), combo.name.c_str(), tl.data.str().c_str(), tl.data.count,
                    set.layers.size(), tl.data_det.str().c_str(), tl.data_algo[0].str().c_str(),
                    tl.data_algo[1].str().c_str(), tl.data_algo[1].count, tl.filter.str().c_str(),
                    tl.filter.count, set.layers.size(), tl.filter_det.str().c_str(),
                    tl.filter_algo[0].str().c_str(), tl.filter_algo[1].str().c_str(),
                    third_filter_name().c_str(), tl.filter_algo[2].str().c_str(),
                    tl.filter_algo[3].str().c_str(), tl.filter_algo[3].count, tl.both.str().c_str(),
                    tl.both.count);
        if ((set.family == "resnet50" || set.family == "resnet18") && tl.net_complete && tl.net_ours > 0)
          std::printf("network (all %d convolutions, reps counted; %s): cuDNN %s ms, ours %s ms, "
                      "ratio %.3f\n",
                      conv_count(set.layers), cx.want_data && cx.want_filter ? "data + filter"
                                                     : (cx.want_data ? "data" : "filter"),
                      fmt_ms(tl.net_cudnn).c_str(), fmt_ms(tl.net_ours).c_str(),
                      tl.net_cudnn / tl.net_ours);
        for (const std::string& n : notes) std::printf("note: %s\n", n.c_str());
        std::printf("\n");
        auto merge = [](GeoMean* into, const GeoMean& g) {
          into->log_sum += g.log_sum;
          into->count += g.count;
        };
        merge(&combo.data, tl.data);
        merge(&combo.filter, tl.filter);
        merge(&combo.both, tl.both);
      }
      combos.push_back(combo);
    }
  }
  for (DeviceBuffer* b : {&cx.x, &cx.w, &cx.dy, &cx.dx, &cx.dw, &cx.ref, &cx.ws, &cx.ours_ws})
    b->release();
  cudnnDestroy(cx.cudnn);
  const double secs =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t_start).count();
  std::printf("%d mismatches; total time %.0f s\n", mismatches, secs);
  std::printf("SUMMARY geomean speed ours/cuDNN-best (higher is better; n/a excluded):");
  for (const Combo& c : combos)
    std::printf(" %s data %s (%d), filter %s (%d), both %s;", c.name.c_str(), c.data.str().c_str(),
                c.data.count, c.filter.str().c_str(), c.filter.count, c.both.str().c_str());
  std::printf(" mismatches %d\n", mismatches);
  return mismatches ? 1 : 0;
}
