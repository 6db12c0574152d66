// Memory-bound CUDA routines against the device-to-device copy bandwidth of the same run.
//
// For f32 and f16, on 64 MiB tensors (N x 64 x 128 x 128), every routine is timed with CUDA
// events around one call: 5 warm-up calls, then the median of 25 timed calls. "bytes" is the
// minimum traffic the routine needs (each input read once, each output written once; y is read
// too when beta != 0). Bandwidth = bytes / median time; "of copy" divides it by the bandwidth of
// cudaMemcpyAsync device-to-device of the 64 MiB tensor (bytes read + written), timed as the FC
// rows are (below); at 64 MiB it is the DRAM bandwidth a copy reaches. Routines that report
// NOT_SUPPORTED (not yet implemented on CUDA) print n/a and stay out of the summary.
//
// The fully connected rows (gemm_forward's GEMV path, batch 1 and 8) take a few microseconds, so
// one call between events would time the launch, and their 2-16 MB of weights fit in the L2.
// They are timed as a network runs them: 64 or more calls captured in one CUDA graph, replayed
// (3 warm-up replays, then the median of 25, each between events), time per call = replay / calls.
// The calls rotate over copies of the weights that together span at least twice the device's L2,
// so each call reads its weights from DRAM. Each FC size also gets a copy row moving the same
// bytes (half its weight bytes read, half written) the same way: what a copy reaches at that size.
// The FC rows' last column divides by that copy's bandwidth: at 2-16 MB a launch's fixed cost is
// a large share of either (a copy of ResNet-50's f16 FC weights reaches 44% of the 64 MiB copy's
// bandwidth), so that is the bar a GEMV of that size can be held to.
//
// Usage: jet_bench_cuda_ops [device]
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "jet/dnn.h"

using namespace jet;

namespace {

constexpr int kWarmup = 5;
constexpr int kRuns = 25;

#define CUDA_CHECK(expr)                                                               \
  do {                                                                                 \
    const cudaError_t e_ = (expr);                                                     \
    if (e_ != cudaSuccess) {                                                           \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #expr,               \
                   cudaGetErrorString(e_));                                            \
      std::exit(1);                                                                    \
    }                                                                                  \
  } while (0)

// Values in [-1, 1) so that every routine computes on ordinary numbers.
__global__ void fill_kernel(float* p, size_t n, uint32_t seed) {
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<size_t>(gridDim.x) * blockDim.x) {
    uint32_t h = static_cast<uint32_t>(i) * 2654435761u + seed;
    h ^= h >> 15;
    h *= 2246822519u;
    h ^= h >> 13;
    p[i] = static_cast<float>(h & 0xffffff) / 8388608.f - 1.f;
  }
}
__global__ void fill_half_kernel(__half* p, size_t n, uint32_t seed) {
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<size_t>(gridDim.x) * blockDim.x) {
    uint32_t h = static_cast<uint32_t>(i) * 2654435761u + seed;
    h ^= h >> 15;
    p[i] = __float2half(static_cast<float>(h & 0xffff) / 32768.f - 1.f);
  }
}

void fill(void* p, DType t, size_t n, uint32_t seed) {
  if (t == DType::F32)
    fill_kernel<<<1024, 256>>>(static_cast<float*>(p), n, seed);
  else
    fill_half_kernel<<<1024, 256>>>(static_cast<__half*>(p), n, seed);
  CUDA_CHECK(cudaGetLastError());
}

// Median time in ms of `call` on `stream`, or a negative value when it does not succeed.
double time_ms(cudaStream_t stream, const std::function<Status()>& call, std::string* why) {
  for (int i = 0; i < kWarmup; ++i) {
    const Status s = call();
    if (!s.ok()) {
      *why = s.to_string();
      return -1.0;
    }
  }
  cudaEvent_t start, stop;
  CUDA_CHECK(cudaEventCreate(&start));
  CUDA_CHECK(cudaEventCreate(&stop));
  std::vector<double> ms;
  for (int i = 0; i < kRuns; ++i) {
    CUDA_CHECK(cudaEventRecord(start, stream));
    const Status s = call();
    CUDA_CHECK(cudaEventRecord(stop, stream));
    CUDA_CHECK(cudaEventSynchronize(stop));
    if (!s.ok()) {
      *why = s.to_string();
      return -1.0;
    }
    float t = 0.f;
    CUDA_CHECK(cudaEventElapsedTime(&t, start, stop));
    ms.push_back(t);
  }
  CUDA_CHECK(cudaEventDestroy(start));
  CUDA_CHECK(cudaEventDestroy(stop));
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

// Median over kRuns replays of one CUDA graph holding `calls` calls (call(i), i = 0..calls-1),
// per call in ms, or a negative value when a call does not succeed. The calls are captured on
// `stream`, which must be the handle's.
double time_graph_ms(cudaStream_t stream, int calls, const std::function<Status(int)>& call,
                     std::string* why) {
  cudaGraph_t graph = nullptr;
  CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
  Status status;
  for (int i = 0; i < calls && status.ok(); ++i) status = call(i);
  CUDA_CHECK(cudaStreamEndCapture(stream, &graph));
  if (!status.ok()) {
    *why = status.to_string();
    CUDA_CHECK(cudaGraphDestroy(graph));
    return -1.0;
  }
  cudaGraphExec_t exec = nullptr;
  CUDA_CHECK(cudaGraphInstantiateWithFlags(&exec, graph, 0));
  for (int i = 0; i < 3; ++i) CUDA_CHECK(cudaGraphLaunch(exec, stream));
  cudaEvent_t start, stop;
  CUDA_CHECK(cudaEventCreate(&start));
  CUDA_CHECK(cudaEventCreate(&stop));
  std::vector<double> ms;
  for (int r = 0; r < kRuns; ++r) {
    CUDA_CHECK(cudaEventRecord(start, stream));
    CUDA_CHECK(cudaGraphLaunch(exec, stream));
    CUDA_CHECK(cudaEventRecord(stop, stream));
    CUDA_CHECK(cudaEventSynchronize(stop));
    float t = 0.f;
    CUDA_CHECK(cudaEventElapsedTime(&t, start, stop));
    ms.push_back(t / calls);
  }
  CUDA_CHECK(cudaEventDestroy(start));
  CUDA_CHECK(cudaEventDestroy(stop));
  CUDA_CHECK(cudaGraphExecDestroy(exec));
  CUDA_CHECK(cudaGraphDestroy(graph));
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

Status copy_status(cudaError_t e) {
  return e == cudaSuccess ? Status() : Status(StatusCode::EXECUTION_FAILED, cudaGetErrorString(e));
}

struct Row {
  std::string name;
  double bytes;
  double ms;  // < 0: not available
  std::string why;
  double size_copy_gbs = 0;  // FC rows: what the copy of the same bytes reached (0: none)
};

}  // namespace

int main(int argc, char** argv) {
  const int device = argc > 1 ? std::atoi(argv[1]) : 0;
  CUDA_CHECK(cudaSetDevice(device));
  cudaStream_t stream;
  CUDA_CHECK(cudaStreamCreate(&stream));
  Handle h;
  const Status hs = Handle::cuda(device, stream, &h);
  if (!hs.ok()) {
    std::fprintf(stderr, "no CUDA handle: %s\n", hs.to_string().c_str());
    return 1;
  }
  cudaDeviceProp prop;
  CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
  std::printf("device: %s (sm_%d%d, %d SMs, %.0f MB L2); median of %d runs after %d warm-up; "
              "the copy and FC rows: median of %d CUDA-graph replays\n",
              prop.name, prop.major, prop.minor, prop.multiProcessorCount, prop.l2CacheSize / 1e6,
              kRuns, kWarmup, kRuns);

  const size_t kBytes = size_t{64} << 20;  // every full-size tensor: 64 MiB
  void *x = nullptr, *y = nullptr, *z = nullptr, *y16 = nullptr, *small = nullptr;
  CUDA_CHECK(cudaMalloc(&x, kBytes));
  CUDA_CHECK(cudaMalloc(&y, kBytes));
  CUDA_CHECK(cudaMalloc(&z, kBytes));
  CUDA_CHECK(cudaMalloc(&y16, kBytes));
  CUDA_CHECK(cudaMalloc(&small, 4 << 20));
  // FC weights rotated over at least twice the L2 (plus one copy of the largest, 16 MB).
  const size_t l2_bytes = static_cast<size_t>(prop.l2CacheSize);
  void* wbuf = nullptr;
  CUDA_CHECK(cudaMalloc(&wbuf, 2 * l2_bytes + (size_t{16} << 20)));
  float* params = nullptr;  // batchnorm scale, bias, mean, var (64 channels each)
  CUDA_CHECK(cudaMalloc(&params, 4 * 64 * sizeof(float)));
  fill_kernel<<<1, 256>>>(params, 4 * 64, 7u);
  // var must be positive: 0.5 + |.| is enough for timing.
  std::vector<float> var(64, 1.f);
  CUDA_CHECK(cudaMemcpy(params + 192, var.data(), 64 * sizeof(float), cudaMemcpyHostToDevice));

  std::vector<double> fractions;
  for (DType t : {DType::F32, DType::F16}) {
    const size_t esz = dtype_size(t);
    const int64_t c = 64, hh = 128, ww = 128;
    const int64_t nb = static_cast<int64_t>(kBytes / esz) / (c * hh * ww);  // 16 (f32), 32 (f16)
    const double s = static_cast<double>(kBytes);
    fill(x, t, kBytes / esz, 1u);
    fill(y, t, kBytes / esz, 2u);
    fill(z, t, kBytes / esz, 3u);
    fill(small, t, (4 << 20) / esz, 4u);
    CUDA_CHECK(cudaDeviceSynchronize());
    const TensorDesc nchw = TensorDesc::nchw(t, nb, c, hh, ww);
    const TensorDesc nhwc = TensorDesc::nhwc(t, nb, c, hh, ww);
    const TensorDesc bias = TensorDesc::packed(t, {1, c, 1, 1});

    std::vector<Row> rows;
    std::string why;
    // The reference: 8 copies of the 64 MiB tensor in a graph (128 MiB moved by each, more than
    // twice the H100's 50 MB L2, so from DRAM), as the FC rows are timed.
    rows.push_back({"memcpy d2d (peer, graph)", 2 * s, time_graph_ms(stream, 8, [&](int) {
                      return copy_status(
                          cudaMemcpyAsync(y, x, kBytes, cudaMemcpyDeviceToDevice, stream));
                    }, &why), why});
    if (rows[0].ms <= 0) {
      std::fprintf(stderr, "the reference copy failed: %s\n", why.c_str());
      return 1;
    }
    const double copy_gbs = rows[0].bytes / (rows[0].ms * 1e6);
    auto add = [&](const char* name, double bytes, const std::function<Status()>& call) {
      std::string w;
      const double ms = time_ms(stream, call, &w);
      rows.push_back({name, bytes, ms, w});
    };
    const ActivationDesc relu = ActivationDesc::relu();
    add("activation relu", 2 * s,
        [&] { return activation_forward(h, relu, 1.f, nchw, x, 0.f, nchw, y); });
    add("add_tensor bias NCHW (beta=1)", 2 * s,
        [&] { return add_tensor(h, 1.f, bias, small, 1.f, nchw, y); });
    add("add_tensor bias NHWC (beta=1)", 2 * s,
        [&] { return add_tensor(h, 1.f, bias, small, 1.f, nhwc, y); });
    add("op_tensor add", 3 * s, [&] {
      return op_tensor(h, TensorOp::ADD, 1.f, nchw, x, 1.f, nchw, z, 0.f, nchw, y);
    });
    add("transform NCHW->NHWC", 2 * s,
        [&] { return transform_tensor(h, 1.f, nchw, x, 0.f, nhwc, y); });
    add("transform NHWC->NCHW", 2 * s,
        [&] { return transform_tensor(h, 1.f, nhwc, x, 0.f, nchw, y); });
    if (t == DType::F32) {
      add("transform f32->f16", 1.5 * s, [&] {
        return transform_tensor(h, 1.f, nchw, x, 0.f, nchw.with_dtype(DType::F16), y16);
      });
    } else {
      add("transform f16->f32 (half tensor)", 1.5 * s, [&] {
        // y16 holds 64 MiB: the f32 output of half the f16 tensor.
        const TensorDesc part = TensorDesc::nchw(t, nb / 2, c, hh, ww);
        return transform_tensor(h, 1.f, part, x, 0.f, part.with_dtype(DType::F32), y16);
      });
      rows.back().bytes = 1.5 * s;  // reads 32 MiB of f16, writes 64 MiB of f32
    }
    add("batchnorm NCHW", 2 * s, [&] {
      return batchnorm_forward_inference(h, 1.f, 0.f, nchw, x, nchw, y, params, params + 64,
                                         params + 128, params + 192, 1e-5);
    });
    add("batchnorm NHWC", 2 * s, [&] {
      return batchnorm_forward_inference(h, 1.f, 0.f, nhwc, x, nhwc, y, params, params + 64,
                                         params + 128, params + 192, 1e-5);
    });
    {
      const PoolDesc pool = PoolDesc::pool2d(PoolMode::MAX, 3, 3, 1, 1, 2, 2);
      const TensorDesc py = TensorDesc::nchw(t, nb, c, hh / 2, ww / 2);
      add("pool max 3x3 s2 NCHW", 1.25 * s,
          [&] { return pool_forward(h, pool, 1.f, nchw, x, 0.f, py, y); });
    }
    add("softmax channel NCHW", 2 * s, [&] {
      return softmax_forward(h, SoftmaxAlgo::ACCURATE, SoftmaxMode::CHANNEL, 1.f, nchw, x, 0.f,
                             nchw, y);
    });
    {
      const TensorDesc ry = TensorDesc::nchw(t, nb, c, 1, 1);
      add("reduce mean over HW NCHW", s,
          [&] { return reduce_forward(h, ReduceOp::MEAN, 1.f, nchw, x, 0.f, ry, y); });
    }

    // Fully connected layers (N = 1000 outputs of K inputs, ResNet-50's is 2048) at batch 1 and
    // 8: b holds the N rows of K weights (trans_b), each call reads one of `copies` copies of them
    // laid end to end in wbuf, at least twice the L2 in all. Bytes: weights + input + output.
    // Before them, a copy moving the weights' bytes, rotated the same way.
    std::vector<Row> fc_rows;
    for (const int64_t k : {int64_t(512), int64_t(2048), int64_t(4096)}) {
      const int64_t n = 1000;
      const size_t wbytes = static_cast<size_t>(n * k) * esz;
      const int copies = static_cast<int>(std::max<size_t>(2, (2 * l2_bytes + wbytes - 1) / wbytes));
      // At least 64 calls a replay (the copies in turn, over again), so that the graph's own
      // launch is a small share of the time.
      const int calls = copies * ((64 + copies - 1) / copies);
      const std::string size = std::to_string(k) + "x" + std::to_string(n);
      fill(wbuf, t, copies * wbytes / esz, 5u);
      CUDA_CHECK(cudaDeviceSynchronize());
      std::string w;
      const double copy_ms = time_graph_ms(stream, calls, [&](int i) {
        char* p = static_cast<char*>(wbuf) + (i % copies) * wbytes;
        return copy_status(cudaMemcpyAsync(p + wbytes / 2, p, wbytes / 2, cudaMemcpyDeviceToDevice,
                                           stream));
      }, &w);
      fc_rows.push_back({"memcpy d2d " + size + " bytes", static_cast<double>(wbytes), copy_ms, w});
      for (const int64_t m : {int64_t(1), int64_t(8)}) {
        const TensorDesc ad = TensorDesc::packed(t, {m, k});
        const TensorDesc bd = TensorDesc::packed(t, {n, k});
        const TensorDesc yd = TensorDesc::packed(t, {m, n});
        GemmDesc g;
        g.trans_b = true;
        w.clear();
        const double ms = time_graph_ms(stream, calls, [&](int i) {
          return gemm_forward(h, g, 1.f, ad, small, bd,
                              static_cast<char*>(wbuf) + (i % copies) * wbytes,
                              TensorDesc(), nullptr, 0.f, yd, y);
        }, &w);
        const std::string name = "gemv FC " + size + " batch " + std::to_string(m);
        fc_rows.push_back({name, static_cast<double>(wbytes + m * (k + n) * esz), ms, w,
                           copy_ms > 0 ? wbytes / (copy_ms * 1e6) : 0});
      }
    }
    for (const Row& r : fc_rows) rows.push_back(r);

    std::printf("\n%s, x = %lld x %lld x %lld x %lld (%.0f MiB)\n", dtype_name(t),
                static_cast<long long>(nb), static_cast<long long>(c), static_cast<long long>(hh),
                static_cast<long long>(ww), s / (1 << 20));
    std::printf("%-34s %10s %10s %9s %8s %s\n", "routine", "MB moved", "time us", "GB/s", "of copy",
                "(FC: of the copy of its bytes)");
    for (const Row& r : rows) {
      if (r.ms < 0) {
        std::printf("%-34s %10.1f %10s %9s %8s  (%s)\n", r.name.c_str(), r.bytes / 1e6, "n/a",
                    "n/a", "n/a", r.why.substr(0, 60).c_str());
        continue;
      }
      const double gbs = r.bytes / (r.ms * 1e6);
      const double frac = gbs / copy_gbs;
      std::printf("%-34s %10.1f %10.1f %9.1f %7.1f%%", r.name.c_str(), r.bytes / 1e6,
                  r.ms * 1e3, gbs, 100.0 * frac);
      if (r.size_copy_gbs > 0) std::printf(" %7.1f%%", 100.0 * gbs / r.size_copy_gbs);
      std::printf("\n");
      if (r.name.compare(0, 6, "memcpy") != 0) fractions.push_back(frac);  // routines only
    }
  }
  double log_sum = 0.0, worst = 1e9;
  for (double f : fractions) {
    log_sum += std::log(f);
    worst = std::min(worst, f);
  }
  const double geomean = fractions.empty() ? 0.0 : std::exp(log_sum / fractions.size());
  std::printf("\nsummary: %zu routine runs, geomean %.1f%% of copy bandwidth, min %.1f%%\n",
              fractions.size(), 100.0 * geomean, 100.0 * (fractions.empty() ? 0.0 : worst));
  cudaFree(x);
  cudaFree(y);
  cudaFree(z);
  cudaFree(y16);
  cudaFree(small);
  cudaFree(wbuf);
  cudaFree(params);
  cudaStreamDestroy(stream);
  return 0;
}
