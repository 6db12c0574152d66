// bench/conv: every jetinfer CUDA convolution algorithm against cuDNN's best, per layer.
//
// cuDNN's candidates come from cudnnFindConvolutionForwardAlgorithmEx in the same math mode as
// ours: f32 with CUDNN_FMA_MATH (no TF32), f16 with CUDNN_TENSOR_OP_MATH, f32 accumulation
// (CUDNN_DATA_FLOAT compute type) in both. Its three fastest candidates are then re-timed with
// the harness that times ours, and the fastest of them is "cuDNN". Built only when cuDNN is found
// (bench/cudnn.cmake); cuDNN is linked into this program only, never into jet::kernels.
//
// Timing: about a millisecond of back-to-back calls is captured into a CUDA graph and replayed
// between cudaEvents (GPU time without the API's host overhead, which is reported apart: cuDNN 9's
// legacy API spends 40-1600 us of CPU per call); the median of --runs replays after a warm-up
// call. --no-graph times the calls on the stream instead. When one call's x, w and y
// together are smaller than twice the L2 cache, the calls rotate over enough copies of them
// (fresh random values in each) that the inputs are not L2-resident from the previous call.
// Correctness: each algorithm's output (from a y pre-filled with NaNs) is compared with cuDNN's:
// max |ours - cudnn| / max |cudnn| over the whole tensor.
//
//   jet_bench_conv [--quick] [--sets paper,resnet50,resnet18,alexnet,mobilenetv2,mobilenetv2pw,blog]
//                  [--dtypes f32,f16] [--layouts nchw,nhwc] [--runs N] [--max-n N]
//                  [--cudnn-ws-mb MB] [--verbose] [--no-graph] [--tactics] [--approximate]
// --tactics times every tactic (tensor-core tile x split-K factor) of each algorithm and keeps
// its fastest, as a tuned runtime would choose; "best" then names the tactic (algo#t). --csv FILE
// writes every timed (layer, algorithm, tactic) for calibrating the heuristic.
// --verbose adds what cudnnFindConvolutionForwardAlgorithmEx returned per layer. Exit status 1
// when an algorithm's output mismatches cuDNN's.
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <cudnn.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include "jet/dnn.h"

#include "harness.cuh"

namespace {

using namespace jet_bench;

// ---------------------------------------------------------------------------------------------
// Reporting helpers.

const jet::ConvAlgo kAlgos[] = {jet::ConvAlgo::DIRECT, jet::ConvAlgo::IMPLICIT_GEMM,
                                jet::ConvAlgo::IMPLICIT_PRECOMP_GEMM, jet::ConvAlgo::GEMM,
                                jet::ConvAlgo::WINOGRAD};
constexpr int kAlgoCount = 5;
constexpr int kIgemm = 1;  // index of IMPLICIT_GEMM in kAlgos

const char* cudnn_algo_name(cudnnConvolutionFwdAlgo_t a) {
  switch (a) {
    case CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM: return "implicit_gemm";
    case CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM: return "implicit_precomp_gemm";
    case CUDNN_CONVOLUTION_FWD_ALGO_GEMM: return "gemm";
    case CUDNN_CONVOLUTION_FWD_ALGO_DIRECT: return "direct";
    case CUDNN_CONVOLUTION_FWD_ALGO_FFT: return "fft";
    case CUDNN_CONVOLUTION_FWD_ALGO_FFT_TILING: return "fft_tiling";
    case CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD: return "winograd";
    case CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD_NONFUSED: return "winograd_nonfused";
    default: return "?";
  }
}

// ---------------------------------------------------------------------------------------------
// One layer in one dtype and layout.

struct Config {
  jet::DType dtype;
  bool nhwc;
};

struct AlgoResult {
  bool ran = false;
  std::string why;  // when it did not run
  float ms = 0;
  float host_us = 0;
  bool graph = false;
  size_t ws = 0;
  double err = -1;  // max |ours - cudnn| / max |cudnn|, the worst over its tactics
  int tactic = 0;   // the fastest tactic (0: the heuristic's configuration)
};

struct LayerResult {
  bool cudnn_ok = false;
  std::string cudnn_why;
  float cudnn_ms = 0;
  float cudnn_host_us = 0;
  bool cudnn_graph = false;
  size_t cudnn_ws = 0;
  std::string find_list;  // --verbose: what cudnnFindConvolutionForwardAlgorithmEx returned
  std::string cudnn_algo;
  AlgoResult algo[kAlgoCount];
  int best = -1;  // index into algo
  jet::ConvAlgo heuristic = jet::ConvAlgo::COUNT;
  float heuristic_ms = -1;  // the heuristic's algorithm with tactic 0
  double gflop = 0;
};

struct Context {
  Timer timer;
  cudnnHandle_t cudnn;
  jet::Handle jet;
  size_t l2_bytes;
  size_t cudnn_ws_limit;
  DeviceBuffer x, w, y, yref, ws;
  unsigned* err_dev;  // 2 words
  uint64_t seed = 1;
  bool verbose = false;
  bool tactics = false;  // --tactics: time every tactic of every algorithm
  FILE* csv = nullptr;   // --csv FILE: one line per timed (layer, algorithm, tactic)
};

template <class T>
void fill(Context& cx, void* p, size_t elems) {
  fill_random(cx.timer.stream, std::is_same<T, float>::value ? jet::DType::F32 : jet::DType::F16,
              p, elems, cx.seed++);
}

double compare(Context& cx, jet::DType dt, const void* a, const void* ref, size_t elems) {
  return compare_outputs(cx.timer.stream, cx.err_dev, dt, a, ref, elems);
}

LayerResult run_layer(Context& cx, const Layer& l, const Config& cfg) {
  LayerResult res;
  const jet::DType dt = cfg.dtype;
  const size_t es = jet::dtype_size(dt);
  const int64_t p = (l.h + 2 * l.pad - l.r) / l.stride + 1;
  const int64_t q = (l.w + 2 * l.pad - l.s) / l.stride + 1;
  const int64_t cg = l.c / l.groups;
  res.gflop = 2.0 * l.n * l.k * p * q * cg * l.r * l.s * 1e-9;

  // jet descriptors.
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

  // cuDNN descriptors.
  const cudnnDataType_t cdt = dt == jet::DType::F32 ? CUDNN_DATA_FLOAT : CUDNN_DATA_HALF;
  const cudnnTensorFormat_t fmt_ = cfg.nhwc ? CUDNN_TENSOR_NHWC : CUDNN_TENSOR_NCHW;
  const cudnnMathType_t math = dt == jet::DType::F32 ? CUDNN_FMA_MATH : CUDNN_TENSOR_OP_MATH;
  cudnnTensorDescriptor_t cxd, cyd;
  cudnnFilterDescriptor_t cwd;
  cudnnConvolutionDescriptor_t ccd;
  CUDNN_CHECK(cudnnCreateTensorDescriptor(&cxd));
  CUDNN_CHECK(cudnnCreateTensorDescriptor(&cyd));
  CUDNN_CHECK(cudnnCreateFilterDescriptor(&cwd));
  CUDNN_CHECK(cudnnCreateConvolutionDescriptor(&ccd));
  CUDNN_CHECK(cudnnSetTensor4dDescriptor(cxd, fmt_, cdt, int(l.n), int(l.c), int(l.h), int(l.w)));
  CUDNN_CHECK(cudnnSetTensor4dDescriptor(cyd, fmt_, cdt, int(l.n), int(l.k), int(p), int(q)));
  CUDNN_CHECK(cudnnSetFilter4dDescriptor(cwd, cdt, fmt_, int(l.k), int(cg), int(l.r), int(l.s)));
  CUDNN_CHECK(cudnnSetConvolution2dDescriptor(ccd, int(l.pad), int(l.pad), int(l.stride),
                                              int(l.stride), 1, 1, CUDNN_CROSS_CORRELATION,
                                              CUDNN_DATA_FLOAT));
  CUDNN_CHECK(cudnnSetConvolutionGroupCount(ccd, int(l.groups)));
  CUDNN_CHECK(cudnnSetConvolutionMathType(ccd, math));
  int on, ok, op, oq;
  CUDNN_CHECK(cudnnGetConvolution2dForwardOutputDim(ccd, cxd, cwd, &on, &ok, &op, &oq));
  if (on != l.n || ok != l.k || op != p || oq != q) {
    std::fprintf(stderr, "%s: cuDNN output dims disagree\n", l.name.c_str());
    std::exit(1);
  }

  // Buffers: nrot copies of x, w and y, each slice 256-byte aligned.
  const size_t xb = round_up(static_cast<size_t>(xd.span()) * es, 256);
  const size_t wb = round_up(static_cast<size_t>(wd.elements()) * es, 256);
  const size_t yb = round_up(static_cast<size_t>(yd.span()) * es, 256);
  const size_t set_bytes = xb + wb + yb;
  int nrot = 1;
  if (set_bytes < 2 * cx.l2_bytes)
    nrot = static_cast<int>(std::min<size_t>(256, (3 * cx.l2_bytes + set_bytes - 1) / set_bytes));
  auto cleanup = [&]() {
    cudnnDestroyTensorDescriptor(cxd);
    cudnnDestroyTensorDescriptor(cyd);
    cudnnDestroyFilterDescriptor(cwd);
    cudnnDestroyConvolutionDescriptor(ccd);
  };
  if (!cx.x.reserve(xb * nrot) || !cx.w.reserve(wb * nrot) || !cx.y.reserve(yb * nrot) ||
      !cx.yref.reserve(yb)) {
    res.cudnn_why = "out of device memory";
    for (auto& a : res.algo) a.why = "out of device memory";
    cleanup();
    return res;
  }
  auto X = [&](int r) { return static_cast<char*>(cx.x.p) + xb * r; };
  auto W = [&](int r) { return static_cast<char*>(cx.w.p) + wb * r; };
  auto Y = [&](int r) { return static_cast<char*>(cx.y.p) + yb * r; };
  if (dt == jet::DType::F32) {
    fill<float>(cx, cx.x.p, xb * nrot / es);
    fill<float>(cx, cx.w.p, wb * nrot / es);
  } else {
    fill<__half>(cx, cx.x.p, xb * nrot / es);
    fill<__half>(cx, cx.w.p, wb * nrot / es);
  }
  const size_t y_elems = static_cast<size_t>(yd.span());

  // cuDNN: find, then re-time its three fastest candidates with our harness.
  const float alpha = 1.f, beta = 0.f;
  {
    // cudnnGetConvolutionForwardWorkspaceSize under-reports what Find's engines want (cuDNN 9:
    // 0 bytes reported, 25 MiB wanted), so Find gets the whole limit (less when memory is short).
    size_t free_b = 0, total_b = 0;
    CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
    const size_t avail = free_b + cx.ws.bytes > (1ull << 30) ? free_b + cx.ws.bytes - (1ull << 30) : 0;
    size_t ws_need = std::min(cx.cudnn_ws_limit, avail);
    while (ws_need > 0 && !cx.ws.reserve(ws_need)) ws_need /= 2;
    if (ws_need == 0) cx.ws.reserve(256);
    cudnnConvolutionFwdAlgoPerf_t perf[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
    int returned = 0;
    const cudnnStatus_t st = cudnnFindConvolutionForwardAlgorithmEx(
        cx.cudnn, cxd, X(0), cwd, W(0), ccd, cyd, cx.yref.p, CUDNN_CONVOLUTION_FWD_ALGO_COUNT,
        &returned, perf, cx.ws.p, ws_need);
    CUDA_CHECK(cudaGetLastError());
    if (st != CUDNN_STATUS_SUCCESS) {
      res.cudnn_why = std::string("find: ") + cudnnGetErrorString(st);
    } else {
      if (cx.verbose) {
        for (int i = 0; i < returned; ++i) {
          res.find_list += std::string(i ? "; " : "") + cudnn_algo_name(perf[i].algo) +
                           (perf[i].mathType == CUDNN_TENSOR_OP_MATH ? "+tc" : "") + " " +
                           cudnnGetErrorString(perf[i].status) + " " +
                           fmt("%.4f ms", perf[i].time) + " " + fmt_mib(perf[i].memory);
        }
        res.find_list += " (workspace given: " + fmt_mib(ws_need) + ")";
      }
      int tried = 0;
      for (int i = 0; i < returned && tried < 3; ++i) {
        if (perf[i].status != CUDNN_STATUS_SUCCESS || perf[i].memory > ws_need) continue;
        ++tried;
        CUDNN_CHECK(cudnnSetConvolutionMathType(ccd, perf[i].mathType));
        const cudnnConvolutionFwdAlgo_t algo = perf[i].algo;
        const size_t wsb = perf[i].memory;
        const Timing tm = time_calls(cx.timer, nrot, [&](int r) {
          return cudnnConvolutionForward(cx.cudnn, &alpha, cxd, X(r), cwd, W(r), ccd, algo,
                                         cx.ws.p, wsb, &beta, cyd, Y(r)) == CUDNN_STATUS_SUCCESS;
        });
        const float ms = tm.ms;
        if (ms < 0) continue;
        if (!res.cudnn_ok || ms < res.cudnn_ms) {
          res.cudnn_ok = true;
          res.cudnn_ms = ms;
          res.cudnn_host_us = tm.host_us;
          res.cudnn_graph = tm.graph;
          res.cudnn_ws = wsb;
          res.cudnn_algo = cudnn_algo_name(algo);
          if (perf[i].mathType == CUDNN_TENSOR_OP_MATH ||
              perf[i].mathType == CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION)
            res.cudnn_algo += "+tc";
          // The reference output for the checks, from slice 0.
          CUDNN_CHECK(cudnnConvolutionForward(cx.cudnn, &alpha, cxd, X(0), cwd, W(0), ccd, algo,
                                              cx.ws.p, wsb, &beta, cyd, cx.yref.p));
        }
      }
      if (!res.cudnn_ok) res.cudnn_why = "no algorithm ran";
    }
    CUDNN_CHECK(cudnnSetConvolutionMathType(ccd, math));
  }

  // Ours.
  if (!jet::choose_conv_forward_algo(cx.jet, xd, wd, cd, yd, jet::ConvPreference::PREFER_FASTEST,
                                     0, &res.heuristic)
           .ok())
    res.heuristic = jet::ConvAlgo::COUNT;
  // Each algorithm with tactic 0 (the heuristic's configuration) and, with --tactics, every
  // tactic it has: the algorithm's entry is its fastest; heuristic_ms is what the heuristic's
  // algorithm runs in with tactic 0 (an untuned runtime's time).
  for (int a = 0; a < kAlgoCount; ++a) {
    AlgoResult& ar = res.algo[a];
    const jet::ConvAlgo algo = kAlgos[a];
    int tactics = 0;
    if (cx.tactics && !jet::conv_forward_tactic_count(cx.jet, xd, wd, cd, yd, algo, &tactics).ok())
      tactics = 0;
    for (int tactic = 0; tactic <= tactics; ++tactic) {
      const jet::ConvDesc ct = cd.with_tactic(tactic);
      size_t wsb = 0;
      jet::Status s = jet::conv_forward_workspace_size(cx.jet, xd, wd, ct, yd, algo, &wsb);
      if (!s.ok()) {
        if (tactic == 0)
          ar.why = s.code() == jet::StatusCode::NOT_SUPPORTED ? "n/a" : "err: " + s.to_string();
        if (tactic == 0) break;
        continue;
      }
      if (!cx.ws.reserve(std::max<size_t>(wsb, 256))) {
        if (tactic == 0) ar.why = "workspace " + fmt_mib(wsb) + " does not fit";
        continue;
      }
      jet::Status call_status;
      const Timing tm = time_calls(cx.timer, nrot, [&](int r) {
        jet::Status cs = jet::conv_forward(cx.jet, 1.f, xd, X(r), wd, W(r), ct, algo,
                                           wsb ? cx.ws.p : nullptr, wsb, 0.f, yd, Y(r));
        if (!cs.ok()) {
          if (call_status.ok()) call_status = cs;
          return false;
        }
        return true;
      });
      const float ms = tm.ms;
      if (ms < 0 || !call_status.ok()) {
        if (tactic == 0)
          ar.why = call_status.code() == jet::StatusCode::NOT_SUPPORTED
                       ? "n/a"
                       : "err: " + call_status.to_string();
        continue;
      }
      if (tactic == 0 && algo == res.heuristic) res.heuristic_ms = ms;
      if (cx.csv)
        std::fprintf(cx.csv, "%s,%lld,%lld,%lld,%lld,%lld,%lld,%lld,%lld,%lld,%lld,%s,%s,%s,%d,%.5f,%d\n",
                     l.name.c_str(), static_cast<long long>(l.n), static_cast<long long>(l.c),
                     static_cast<long long>(l.h), static_cast<long long>(l.w),
                     static_cast<long long>(l.k), static_cast<long long>(l.r),
                     static_cast<long long>(l.s), static_cast<long long>(l.stride),
                     static_cast<long long>(l.pad), static_cast<long long>(l.groups),
                     cfg.dtype == jet::DType::F16 ? "f16" : "f32", cfg.nhwc ? "nhwc" : "nchw",
                     jet::conv_algo_name(algo), tactic, ms, algo == res.heuristic ? 1 : 0);
      double err = -1;
      if (res.cudnn_ok) {  // correctness: slice 0, y pre-filled with NaNs
        CUDA_CHECK(cudaMemsetAsync(Y(0), 0xff, yb, cx.timer.stream));
        const jet::Status cs = jet::conv_forward(cx.jet, 1.f, xd, X(0), wd, W(0), ct, algo,
                                                 wsb ? cx.ws.p : nullptr, wsb, 0.f, yd, Y(0));
        err = cs.ok() ? compare(cx, dt, Y(0), cx.yref.p, y_elems) : INFINITY;
        ar.err = std::max(ar.err, err);
      }
      if (!ar.ran || ms < ar.ms) {
        ar.ran = true;
        ar.ms = ms;
        ar.host_us = tm.host_us;
        ar.graph = tm.graph;
        ar.ws = wsb;
        ar.tactic = tactic;
      }
    }
    if (ar.ran && (res.best < 0 || ar.ms < res.algo[res.best].ms)) res.best = a;
  }
  cleanup();
  return res;
}

}  // namespace

int main(int argc, char** argv) {
  bool quick = false;
  std::vector<std::string> sets = {"paper",       "resnet50",      "alexnet",
                                   "mobilenetv2", "mobilenetv2pw", "blog"};
  std::vector<std::string> dtypes = {"f32", "f16"};
  std::vector<std::string> layouts = {"nchw", "nhwc"};
  int runs = 7;
  int64_t max_n = 0;
  size_t cudnn_ws_mb = 4096;
  bool verbose = false;
  bool tactics = false;
  std::string csv_path;
  std::vector<std::string> layer_filter;  // --layers: substrings of layer names (profiling one layer)
  int64_t only_n = 0;                     // --n: only the sets of this batch size
  bool graph = true;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const bool more = i + 1 < argc;
    if (a == "--quick") quick = true;
    else if (a == "--sets" && more) sets = split(argv[++i]);
    else if (a == "--dtypes" && more) dtypes = split(argv[++i]);
    else if (a == "--layouts" && more) layouts = split(argv[++i]);
    else if (a == "--runs" && more) runs = std::max(1, std::atoi(argv[++i]));
    else if (a == "--max-n" && more) max_n = std::max(1, std::atoi(argv[++i]));
    else if (a == "--verbose") verbose = true;
    else if (a == "--tactics") tactics = true;
    else if (a == "--csv" && more) csv_path = argv[++i];
    else if (a == "--no-graph") graph = false;
    else if (a == "--layers" && more) layer_filter = split(argv[++i]);
    else if (a == "--approximate") bench_conv_math() = jet::ConvMath::ALLOW_APPROXIMATE;
    else if (a == "--n" && more) only_n = std::max(1, std::atoi(argv[++i]));
    else if (a == "--cudnn-ws-mb" && more) cudnn_ws_mb = static_cast<size_t>(std::atoll(argv[++i]));
    else {
      std::fprintf(stderr,
                   "usage: %s [--quick]\n"
                   "       [--sets paper,resnet50,resnet18,alexnet,mobilenetv2,mobilenetv2pw,blog]\n"
                   "       [--dtypes f32,f16] [--layouts nchw,nhwc] [--runs N] [--max-n N]\n"
                   "       [--cudnn-ws-mb MB] [--verbose] [--no-graph] [--tactics] [--csv FILE] [--approximate]\n"
                   "       [--layers SUBSTR,...] [--n N]   (only layers whose name contains one of the\n"
                   "       substrings; only the sets of batch size N)\n",
                   argv[0]);
      return 2;
    }
  }
  for (const auto& d : dtypes)
    if (d != "f32" && d != "f16") { std::fprintf(stderr, "unknown dtype %s\n", d.c_str()); return 2; }
  for (const auto& l : layouts)
    if (l != "nchw" && l != "nhwc") { std::fprintf(stderr, "unknown layout %s\n", l.c_str()); return 2; }
  for (const auto& s : sets)
    if (s != "paper" && s != "resnet50" && s != "resnet18" && s != "alexnet" && s != "mobilenetv2" &&
        s != "mobilenetv2pw" && s != "blog") {
      std::fprintf(stderr, "unknown set %s\n", s.c_str());
      return 2;
    }

  const auto t_start = std::chrono::steady_clock::now();
  Context cx;
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
  cx.verbose = verbose;
  cx.tactics = tactics;
  if (!csv_path.empty()) {
    cx.csv = std::fopen(csv_path.c_str(), "w");
    if (!cx.csv) {
      std::fprintf(stderr, "cannot write %s\n", csv_path.c_str());
      return 2;
    }
    std::fprintf(cx.csv, "layer,n,c,h,w,k,r,s,stride,pad,groups,dtype,layout,algo,tactic,ms,"
                         "heuristic_algo\n");
  }
  cx.timer.graph = graph;
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

  std::printf("# bench/conv: jetinfer CUDA convolutions vs cuDNN\n\n");
  std::printf("- device: %s, %d SMs, %.1f GiB, L2 %.0f MiB, cc %d.%d\n", prop.name,
              prop.multiProcessorCount, prop.totalGlobalMem / 1073741824.0,
              prop.l2CacheSize / 1048576.0, prop.major, prop.minor);
  std::printf("- CUDA driver %d, runtime %d; cuDNN %zu (cudnnGetVersion), built against %d.%d.%d\n",
              driver, runtime, cudnnGetVersion(), CUDNN_MAJOR, CUDNN_MINOR, CUDNN_PATCHLEVEL);
  if (cudnnGetVersion() / 100 != CUDNN_VERSION / 100)
    std::printf("- WARNING: the cuDNN library loaded (%zu) is not the version of the headers used "
                "(%d): check bench/cudnn.cmake's choice and the loader path\n",
                cudnnGetVersion(), CUDNN_VERSION);
  std::printf("- math: f32 = CUDNN_FMA_MATH (no TF32); f16 = CUDNN_TENSOR_OP_MATH; f32 accumulation "
              "(CUDNN_DATA_FLOAT compute, jet ComputeType::F32) in both\n");
  std::printf("- cuDNN = fastest of cudnnFindConvolutionForwardAlgorithmEx's 3 best candidates "
              "re-timed here (workspace limit %zu MiB)\n", cudnn_ws_mb);
  if (graph)
    std::printf("- timing: about 1 ms of back-to-back calls captured into a CUDA graph, cudaEvents "
                "around replays, median of %d replays after a warm-up call (3 for calls over 20 "
                "ms; one plain call over 250 ms): GPU time, free of the API's host overhead, which "
                "is the \"host us\" column (CPU time to issue one call); inputs rotated over "
                "copies when x+w+y < 2x L2 (50 MB on H100); a time marked (s) is one call timed on "
                "the stream (calls over 250 ms, or a refused capture)\n", runs);
  else
    std::printf("- timing (--no-graph): cudaEvents around about 1 ms of back-to-back calls on the "
                "stream, median of %d samples after a warm-up call; a call whose \"host us\" nears "
                "its time is host-bound; inputs rotated over copies when x+w+y < 2x L2\n", runs);
  std::printf("- ratio = cuDNN time / our time (higher is better, 1 = parity); geomeans over the "
              "layers where both ran, unweighted by reps; \"n/a\" = NOT_SUPPORTED, excluded\n");
  std::printf("- error = max|ours - cuDNN| / max|cuDNN| over y; flagged MISMATCH above %g (f32) / "
              "%g (f16)\n", 1e-4, 1e-2);
  std::printf("- layers: paper L1-L5 = commonly cited shapes (L1 3->96 224 11x11/4 p0; L2 96->256 "
              "27 5x5 p2; L3 256->384 13 3x3 p1; L4 384->384; L5 384->256), not checked against "
              "the paper; AlexNet = torchvision's (ungrouped, 3->64 11x11/4 p2 on 224); blog = "
              "N128 C96 221x221 K256 7x7/2 p0; ResNet-50 v1 and MobileNetV2 at 224x224\n");
  if (max_n > 0) std::printf("- batch capped at N=%lld (--max-n)\n", static_cast<long long>(max_n));
  if (quick) std::printf("- --quick: a few layers only\n");
  std::printf("\n");
  std::fflush(stdout);

  std::vector<Set> chosen;
  for (Set& s : quick ? quick_sets() : all_sets(max_n)) {
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
    GeoMean best;
    int layers = 0;
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
        std::printf("| layer | N | C->K | in | RxS/s | g | reps | GFLOP | cuDNN algo | cuDNN ms | "
                    "cuDNN TF/s | cuDNN ws | cuDNN host us |");
        for (jet::ConvAlgo a : kAlgos) std::printf(" %s ms (ratio; ws) |", jet::conv_algo_name(a));
        std::printf(" ours best | ms | TF/s | ws | host us | ours/cuDNN | implicit_gemm/best | "
                    "heuristic | max rel err |\n|");
        for (int i = 0; i < 13 + kAlgoCount + 9; ++i) std::printf("---|");
        std::printf("\n");
        GeoMean gm_algo[kAlgoCount], gm_best, gm_igemm;
        double net_cudnn = 0, net_ours = 0, net_heur = 0;
        bool net_complete = true, net_heur_complete = true;
        std::vector<std::string> notes;
        for (const Layer& l : set.layers) {
          const LayerResult r = run_layer(cx, l, cfg);
          std::printf("| %s | %lld | %lld->%lld | %lldx%lld | %lldx%lld/%lld | %lld | %d | %.3f |",
                      l.name.c_str(), (long long)l.n, (long long)l.c, (long long)l.k,
                      (long long)l.h, (long long)l.w, (long long)l.r, (long long)l.s,
                      (long long)l.stride, (long long)l.groups, l.reps, r.gflop);
          if (r.cudnn_ok)
            std::printf(" %s | %s%s | %.1f | %s | %.1f |", r.cudnn_algo.c_str(),
                        fmt_ms(r.cudnn_ms).c_str(), r.cudnn_graph || !graph ? "" : " (s)",
                        r.gflop / r.cudnn_ms,
                        fmt_mib(r.cudnn_ws).c_str(), r.cudnn_host_us);
          else
            std::printf(" %s | - | - | - | - |", r.cudnn_why.c_str());
          if (!r.find_list.empty()) notes.push_back(l.name + ": cuDNN find: " + r.find_list);
          for (int a = 0; a < kAlgoCount; ++a) {
            const AlgoResult& ar = r.algo[a];
            if (!ar.ran) {
              std::printf(" %s |", ar.why.c_str());
              if (ar.why != "n/a")
                notes.push_back(l.name + ": " + jet::conv_algo_name(kAlgos[a]) + ": " + ar.why);
              continue;
            }
            std::string cell = fmt_ms(ar.ms) + (ar.graph || !graph ? "" : " (s)");
            if (r.cudnn_ok) {
              const double ratio = r.cudnn_ms / ar.ms;
              gm_algo[a].add(ratio);
              cell += " (" + fmt("%.2fx", ratio);
            } else {
              cell += " (-";
            }
            if (ar.ws) cell += "; " + fmt_mib(ar.ws);
            cell += ")";
            std::printf(" %s |", cell.c_str());
            if (ar.err > tol) {
              ++mismatches;
              notes.push_back("MISMATCH " + l.name + ": " + jet::conv_algo_name(kAlgos[a]) +
                              " max rel err " + fmt("%.3g", ar.err));
            }
          }
          if (r.best >= 0) {
            const AlgoResult& b = r.algo[r.best];
            std::printf(" %s#%d | %s | %.1f | %s | %.1f |", jet::conv_algo_name(kAlgos[r.best]),
                        b.tactic, fmt_ms(b.ms).c_str(), r.gflop / b.ms, fmt_mib(b.ws).c_str(),
                        b.host_us);
            if (r.cudnn_ok) {
              gm_best.add(r.cudnn_ms / b.ms);
              std::printf(" %.3f |", r.cudnn_ms / b.ms);
            } else {
              std::printf(" - |");
            }
            if (r.algo[kIgemm].ran) {
              const double ig = b.ms / r.algo[kIgemm].ms;
              gm_igemm.add(ig);
              std::printf(" %.3f |", ig);
            } else {
              std::printf(" n/a |");
            }
            net_ours += b.ms * l.reps;
            if (r.heuristic_ms > 0) net_heur += r.heuristic_ms * l.reps;
            else net_heur_complete = false;
          } else {
            std::printf(" n/a | - | - | - | - | n/a | n/a |");
            net_complete = false;
          }
          const bool heur_ok = r.heuristic != jet::ConvAlgo::COUNT;
          std::printf(" %s%s |", heur_ok ? jet::conv_algo_name(r.heuristic) : "-",
                      heur_ok && r.best >= 0 && kAlgos[r.best] == r.heuristic ? " (=best)" : "");
          if (r.best >= 0 && r.cudnn_ok) {
            const double e = r.algo[r.best].err;
            std::printf(" %.2g%s |\n", e, e > tol ? " MISMATCH" : "");
          } else {
            std::printf(" - |\n");
          }
          if (r.cudnn_ok) net_cudnn += r.cudnn_ms * l.reps;
          else net_complete = false;
          ++combo.layers;
          std::fflush(stdout);
        }
        std::printf("\ngeomean ours/cuDNN (%s, %s):", set.key.c_str(), combo.name.c_str());
        for (int a = 0; a < kAlgoCount; ++a)
          std::printf(" %s %s (%d/%zu);", jet::conv_algo_name(kAlgos[a]), gm_algo[a].str().c_str(),
                      gm_algo[a].count, set.layers.size());
        std::printf(" best %s (%d/%zu)\n", gm_best.str().c_str(), gm_best.count,
                    set.layers.size());
        if (set.family == "resnet50" || set.family == "resnet18") {
          std::printf("geomean implicit_gemm (zero workspace) / our fastest: %s (%d layers)\n",
                      gm_igemm.str().c_str(), gm_igemm.count);
          if (net_complete)
            std::printf("network (all %d convolutions, reps counted): cuDNN %s ms, ours %s ms, "
                        "ratio %.3f; ours with the heuristic's choices %s ms\n",
                        conv_count(set.layers), fmt_ms(net_cudnn).c_str(), fmt_ms(net_ours).c_str(),
                        net_cudnn / net_ours,
                        net_heur_complete ? fmt_ms(net_heur).c_str() : "n/a");
        }
        for (const std::string& n : notes) std::printf("note: %s\n", n.c_str());
        std::printf("\n");
        combo.best.log_sum += gm_best.log_sum;
        combo.best.count += gm_best.count;
      }
      combos.push_back(combo);
    }
  }
  cx.x.release();
  cx.w.release();
  cx.y.release();
  cx.yref.release();
  cx.ws.release();
  cudnnDestroy(cx.cudnn);
  const double secs =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t_start).count();
  if (cx.csv) std::fclose(cx.csv);
  std::printf("%d mismatches; total time %.0f s\n", mismatches, secs);
  std::printf("SUMMARY geomean speed ours-best/cuDNN-best (higher is better; n/a algorithms "
              "excluded):");
  for (const Combo& c : combos)
    std::printf(" %s %s (%d/%d layers);", c.name.c_str(), c.best.str().c_str(), c.best.count,
                c.layers);
  std::printf(" mismatches %d\n", mismatches);
  return mismatches ? 1 : 0;
}
