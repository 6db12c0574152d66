// The harness bench/conv and bench/conv_bwd share: the layer sets (the forward bench's, so the
// backward bench measures the same convolutions), device buffers and fills, the error check, the
// timing of calls (CUDA-graph replay, inputs rotated past the L2) and the table formatting.
// Header-only (each benchmark is one .cu file); everything in namespace jet_bench.
#pragma once

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

namespace jet_bench {


// ---------------------------------------------------------------------------------------------
// Layers and sets.

struct Layer {
  std::string name;
  int64_t n, c, h, w, k, r, s, stride, pad, groups;
  int reps;  // how many times the network runs this exact shape (1 for the synthetic sets)
};

struct Set {
  std::string family;  // what --sets selects
  std::string key;     // printed
  std::string title;
  std::vector<Layer> layers;
};

inline Layer L(const char* name, int64_t n, int64_t c, int64_t hw, int64_t k, int64_t rs,
               int64_t stride, int64_t pad, int reps = 1, int64_t groups = 1) {
  return Layer{name, n, c, hw, hw, k, rs, rs, stride, pad, groups, reps};
}

// ResNet-50 v1 (stride 2 on the first 1x1 of stages 3-5 and on the downsample branch), 224x224:
// the 53 convolutions as 21 distinct shapes (the same list as bench/cpu_resnet50_conv.cpp).
inline std::vector<Layer> resnet50(int64_t n) {
  return {
      L("conv1 7x7/2", n, 3, 224, 64, 7, 2, 3, 1),
      L("res2a_branch1 1x1", n, 64, 56, 256, 1, 1, 0, 1),
      L("res2a_branch2a 1x1", n, 64, 56, 64, 1, 1, 0, 1),
      L("res2[bc]_branch2a 1x1", n, 256, 56, 64, 1, 1, 0, 2),
      L("res2*_branch2b 3x3", n, 64, 56, 64, 3, 1, 1, 3),
      L("res2*_branch2c 1x1", n, 64, 56, 256, 1, 1, 0, 3),
      L("res3a_branch1 1x1/2", n, 256, 56, 512, 1, 2, 0, 1),
      L("res3a_branch2a 1x1/2", n, 256, 56, 128, 1, 2, 0, 1),
      L("res3[b-d]_branch2a 1x1", n, 512, 28, 128, 1, 1, 0, 3),
      L("res3*_branch2b 3x3", n, 128, 28, 128, 3, 1, 1, 4),
      L("res3*_branch2c 1x1", n, 128, 28, 512, 1, 1, 0, 4),
      L("res4a_branch1 1x1/2", n, 512, 28, 1024, 1, 2, 0, 1),
      L("res4a_branch2a 1x1/2", n, 512, 28, 256, 1, 2, 0, 1),
      L("res4[b-f]_branch2a 1x1", n, 1024, 14, 256, 1, 1, 0, 5),
      L("res4*_branch2b 3x3", n, 256, 14, 256, 3, 1, 1, 6),
      L("res4*_branch2c 1x1", n, 256, 14, 1024, 1, 1, 0, 6),
      L("res5a_branch1 1x1/2", n, 1024, 14, 2048, 1, 2, 0, 1),
      L("res5a_branch2a 1x1/2", n, 1024, 14, 512, 1, 2, 0, 1),
      L("res5[bc]_branch2a 1x1", n, 2048, 7, 512, 1, 1, 0, 2),
      L("res5*_branch2b 3x3", n, 512, 7, 512, 3, 1, 1, 3),
      L("res5*_branch2c 1x1", n, 512, 7, 2048, 1, 1, 0, 3),
  };
}

// ResNet-18 (torchvision; stride 2 on the first 3x3 of stages 2-4 and on their 1x1 downsample
// branch), 224x224: the 20 convolutions as 11 distinct shapes, the layers of the training step
// bench (bench/train_step.cpp), whose ratio against PyTorch eager issue 15 measures.
inline std::vector<Layer> resnet18(int64_t n) {
  return {
      L("conv1 7x7/2", n, 3, 224, 64, 7, 2, 3, 1),
      L("layer1.* 3x3", n, 64, 56, 64, 3, 1, 1, 4),
      L("layer2.0.conv1 3x3/2", n, 64, 56, 128, 3, 2, 1, 1),
      L("layer2.0.downsample 1x1/2", n, 64, 56, 128, 1, 2, 0, 1),
      L("layer2.* 3x3", n, 128, 28, 128, 3, 1, 1, 3),
      L("layer3.0.conv1 3x3/2", n, 128, 28, 256, 3, 2, 1, 1),
      L("layer3.0.downsample 1x1/2", n, 128, 28, 256, 1, 2, 0, 1),
      L("layer3.* 3x3", n, 256, 14, 256, 3, 1, 1, 3),
      L("layer4.0.conv1 3x3/2", n, 256, 14, 512, 3, 2, 1, 1),
      L("layer4.0.downsample 1x1/2", n, 256, 14, 512, 1, 2, 0, 1),
      L("layer4.* 3x3", n, 512, 7, 512, 3, 1, 1, 3),
  };
}

// AlexNet as torchvision defines it (single tower, no groups), 224x224 input.
inline std::vector<Layer> alexnet(int64_t n) {
  return {
      L("conv1 11x11/4", n, 3, 224, 64, 11, 4, 2),
      L("conv2 5x5", n, 64, 27, 192, 5, 1, 2),
      L("conv3 3x3", n, 192, 13, 384, 3, 1, 1),
      L("conv4 3x3", n, 384, 13, 256, 3, 1, 1),
      L("conv5 3x3", n, 256, 13, 256, 3, 1, 1),
  };
}

// MobileNetV2 (224x224, width 1.0): its 17 depthwise 3x3 convolutions as 10 distinct shapes.
inline std::vector<Layer> mobilenetv2_dw(int64_t n) {
  auto dw = [n](const char* name, int64_t c, int64_t hw, int64_t stride, int reps) {
    return L(name, n, c, hw, c, 3, stride, 1, reps, c);
  };
  return {
      dw("block0 dw 32@112", 32, 112, 1, 1),   dw("block1 dw 96@112/2", 96, 112, 2, 1),
      dw("block2 dw 144@56", 144, 56, 1, 1),   dw("block3 dw 144@56/2", 144, 56, 2, 1),
      dw("block4-5 dw 192@28", 192, 28, 1, 2), dw("block6 dw 192@28/2", 192, 28, 2, 1),
      dw("block7-10 dw 384@14", 384, 14, 1, 4), dw("block11-12 dw 576@14", 576, 14, 1, 2),
      dw("block13 dw 576@14/2", 576, 14, 2, 1), dw("block14-16 dw 960@7", 960, 7, 1, 3),
  };
}

// MobileNetV2's other convolutions: the stem and the pointwise 1x1 ones (expand and project) as
// 20 distinct shapes (35 convolutions), for the heuristic's calibration beyond ResNet-50.
inline std::vector<Layer> mobilenetv2_pw(int64_t n) {
  return {
      L("stem 3x3/2 3->32@224", n, 3, 224, 32, 3, 2, 1, 1),
      L("b0 project 32->16@112", n, 32, 112, 16, 1, 1, 0, 1),
      L("b1 expand 16->96@112", n, 16, 112, 96, 1, 1, 0, 1),
      L("b1 project 96->24@56", n, 96, 56, 24, 1, 1, 0, 1),
      L("b2-3 expand 24->144@56", n, 24, 56, 144, 1, 1, 0, 2),
      L("b2 project 144->24@56", n, 144, 56, 24, 1, 1, 0, 1),
      L("b3 project 144->32@28", n, 144, 28, 32, 1, 1, 0, 1),
      L("b4-6 expand 32->192@28", n, 32, 28, 192, 1, 1, 0, 3),
      L("b4-5 project 192->32@28", n, 192, 28, 32, 1, 1, 0, 2),
      L("b6 project 192->64@14", n, 192, 14, 64, 1, 1, 0, 1),
      L("b7-10 expand 64->384@14", n, 64, 14, 384, 1, 1, 0, 4),
      L("b7-9 project 384->64@14", n, 384, 14, 64, 1, 1, 0, 3),
      L("b10 project 384->96@14", n, 384, 14, 96, 1, 1, 0, 1),
      L("b11-13 expand 96->576@14", n, 96, 14, 576, 1, 1, 0, 3),
      L("b11-12 project 576->96@14", n, 576, 14, 96, 1, 1, 0, 2),
      L("b13 project 576->160@7", n, 576, 7, 160, 1, 1, 0, 1),
      L("b14-16 expand 160->960@7", n, 160, 7, 960, 1, 1, 0, 3),
      L("b14-15 project 960->160@7", n, 960, 7, 160, 1, 1, 0, 2),
      L("b16 project 960->320@7", n, 960, 7, 320, 1, 1, 0, 1),
      L("head 320->1280@7", n, 320, 7, 1280, 1, 1, 0, 1),
  };
}

// The cuDNN paper's L1-L5 as commonly cited (AlexNet-like; the paper's own table was not at
// hand), N = 128.
inline std::vector<Layer> paper(int64_t n) {
  return {
      L("L1 11x11/4", n, 3, 224, 96, 11, 4, 0),  L("L2 5x5", n, 96, 27, 256, 5, 1, 2),
      L("L3 3x3", n, 256, 13, 384, 3, 1, 1),     L("L4 3x3", n, 384, 13, 384, 3, 1, 1),
      L("L5 3x3", n, 384, 13, 256, 3, 1, 1),
  };
}

// The cuDNN blog's example (no padding).
inline std::vector<Layer> blog(int64_t n) { return {L("blog 7x7/2", n, 96, 221, 256, 7, 2, 0)}; }

// The math our convolutions may use: EXACT by default; --approximate (both benches) allows the
// approximate algorithms (F(4x4) Winograd in f32), as cuDNN's CUDNN_FMA_MATH allows its
// winograd_nonfused and as the training step's --approximate does (jet::ConvMath).
inline jet::ConvMath& bench_conv_math() {
  static jet::ConvMath math = jet::ConvMath::EXACT;
  return math;
}

// How many convolutions a set's layers stand for (reps counted).
inline int conv_count(const std::vector<Layer>& layers) {
  int n = 0;
  for (const Layer& l : layers) n += l.reps;
  return n;
}

inline std::vector<Set> all_sets(int64_t max_n) {
  auto cap = [max_n](int64_t n) { return max_n > 0 ? std::min(n, max_n) : n; };
  auto key = [&](const char* base, int64_t n) { return std::string(base) + "-n" + std::to_string(cap(n)); };
  return {
      {"paper", key("paper", 128), "cuDNN paper L1-L5 (commonly cited shapes)", paper(cap(128))},
      {"resnet50", key("resnet50", 1), "ResNet-50 v1 convolutions", resnet50(cap(1))},
      {"resnet50", key("resnet50", 32), "ResNet-50 v1 convolutions", resnet50(cap(32))},
      {"resnet18", key("resnet18", 32), "ResNet-18 convolutions (torchvision)", resnet18(cap(32))},
      {"alexnet", key("alexnet", 1), "AlexNet conv1-5 (torchvision)", alexnet(cap(1))},
      {"alexnet", key("alexnet", 128), "AlexNet conv1-5 (torchvision)", alexnet(cap(128))},
      {"mobilenetv2", key("mobilenetv2", 1), "MobileNetV2 depthwise 3x3", mobilenetv2_dw(cap(1))},
      {"mobilenetv2pw", key("mobilenetv2pw", 1), "MobileNetV2 stem and pointwise 1x1",
       mobilenetv2_pw(cap(1))},
      {"blog", key("blog", 128), "cuDNN blog example", blog(cap(128))},
  };
}

// --quick: a few layers spanning the kinds (7x7 stem, 3x3, 1x1, depthwise, big batch).
inline std::vector<Set> quick_sets() {
  std::vector<Layer> r1 = resnet50(1), r32 = resnet50(32), mb = mobilenetv2_dw(1), p = paper(128);
  return {
      {"resnet50", "resnet50-n1", "ResNet-50 v1 convolutions (quick)", {r1[0], r1[9]}},
      {"resnet50", "resnet50-n32", "ResNet-50 v1 convolutions (quick)", {r32[9], r32[13]}},
      {"mobilenetv2", "mobilenetv2-n1", "MobileNetV2 depthwise 3x3 (quick)", {mb[2]}},
      {"paper", "paper-n128", "cuDNN paper L1-L5 (quick)", {p[2]}},
  };
}

// ---------------------------------------------------------------------------------------------
// Device helpers.

#define CUDA_CHECK(call)                                                                    \
  do {                                                                                      \
    const cudaError_t err_ = (call);                                                        \
    if (err_ != cudaSuccess) {                                                              \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call,                    \
                   cudaGetErrorString(err_));                                               \
      std::exit(1);                                                                         \
    }                                                                                       \
  } while (0)

#define CUDNN_CHECK(call)                                                                   \
  do {                                                                                      \
    const cudnnStatus_t st_ = (call);                                                       \
    if (st_ != CUDNN_STATUS_SUCCESS) {                                                      \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call,                    \
                   cudnnGetErrorString(st_));                                               \
      std::exit(1);                                                                         \
    }                                                                                       \
  } while (0)

__device__ __forceinline__ uint64_t splitmix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// Uniform values in [-1, 1).
template <class T>
__global__ void fill_uniform(T* p, size_t n, uint64_t seed) {
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<size_t>(gridDim.x) * blockDim.x) {
    const uint64_t h = splitmix64(seed * 0x100000001b3ull + i);
    const float v = static_cast<float>(h >> 40) * (2.0f / 16777216.0f) - 1.0f;
    if constexpr (std::is_same<T, float>::value) p[i] = v;
    else p[i] = __float2half(v);
  }
}

__device__ __forceinline__ float as_f32(float v) { return v; }
__device__ __forceinline__ float as_f32(__half v) { return __half2float(v); }

// out[0] = max |a - ref| (NaN or inf counts as +inf), out[1] = max |ref|, as float bits.
template <class T>
__global__ void max_error(const T* a, const T* ref, size_t n, unsigned* out) {
  float md = 0.f, mr = 0.f;
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<size_t>(gridDim.x) * blockDim.x) {
    const float r = as_f32(ref[i]);
    float d = fabsf(as_f32(a[i]) - r);
    if (!(d <= 3.0e38f)) d = INFINITY;
    md = fmaxf(md, d);
    if (fabsf(r) <= 3.0e38f) mr = fmaxf(mr, fabsf(r));
  }
  atomicMax(&out[0], __float_as_uint(md));
  atomicMax(&out[1], __float_as_uint(mr));
}

// One device allocation that grows on demand.
struct DeviceBuffer {
  void* p = nullptr;
  size_t bytes = 0;
  bool reserve(size_t want) {
    if (want <= bytes) return true;
    if (p) CUDA_CHECK(cudaFree(p));
    p = nullptr;
    bytes = 0;
    if (cudaMalloc(&p, want) != cudaSuccess) {
      cudaGetLastError();
      p = nullptr;
      return false;
    }
    bytes = want;
    return true;
  }
  void release() {
    if (p) CUDA_CHECK(cudaFree(p));
    p = nullptr;
    bytes = 0;
  }
};

inline size_t round_up(size_t v, size_t a) { return (v + a - 1) / a * a; }

// ---------------------------------------------------------------------------------------------
// Timing.

struct Timer {
  cudaStream_t stream;
  cudaEvent_t e0, e1;
  int runs;
  bool graph = true;  // replay captured calls (GPU time without the API's host overhead)
};

struct Timing {
  float ms = -1.f;      // median GPU time per call (events); -1 when the call was refused
  float host_us = 0.f;  // host time to issue one call (the API's CPU overhead)
  bool graph = false;   // measured by replaying a CUDA graph of the calls
};

// Times launch(rot) after one warm-up call; ms = -1 when launch returns false on the warm-up
// call (the call was refused: nothing is timed).
template <class F>
Timing time_calls(const Timer& t, int nrot, F&& launch) {
  Timing out;
  int rot = 0;
  if (!launch(rot++ % nrot)) return out;
  CUDA_CHECK(cudaStreamSynchronize(t.stream));
  CUDA_CHECK(cudaGetLastError());
  // One call alone, to size the samples.
  CUDA_CHECK(cudaEventRecord(t.e0, t.stream));
  auto h0 = std::chrono::steady_clock::now();
  launch(rot++ % nrot);
  out.host_us = static_cast<float>(
      std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - h0).count());
  CUDA_CHECK(cudaEventRecord(t.e1, t.stream));
  CUDA_CHECK(cudaEventSynchronize(t.e1));
  float one = 0.f;
  CUDA_CHECK(cudaEventElapsedTime(&one, t.e0, t.e1));
  if (one > 250.f) {  // very slow: the single call is the measurement
    out.ms = one;
    return out;
  }
  int inner = std::max(1, std::min(200, static_cast<int>(std::ceil(1.0f / std::max(one, 1e-4f)))));
  if (nrot > 1) inner = std::max(inner, 2);  // consecutive calls on different copies
  const int samples = one > 20.f ? std::min(t.runs, 3) : t.runs;
  std::vector<float> ms, host;
  if (t.graph) {
    // Capture `inner` calls, then time replays of the graph: the calls' GPU time without the
    // host overhead of issuing them (which is measured while capturing).
    cudaGraph_t graph = nullptr;
    cudaGraphExec_t exec = nullptr;
    bool ok = cudaStreamBeginCapture(t.stream, cudaStreamCaptureModeRelaxed) == cudaSuccess;
    if (ok) {
      h0 = std::chrono::steady_clock::now();
      for (int i = 0; i < inner; ++i) ok = launch(rot++ % nrot) && ok;
      const float issue_us = static_cast<float>(
          std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - h0)
              .count() / inner);
      ok = cudaStreamEndCapture(t.stream, &graph) == cudaSuccess && ok;
      ok = ok && cudaGraphInstantiateWithFlags(&exec, graph, 0) == cudaSuccess;
      ok = ok && cudaGraphLaunch(exec, t.stream) == cudaSuccess &&
           cudaStreamSynchronize(t.stream) == cudaSuccess;
      if (ok) {
        for (int s = 0; s < samples; ++s) {
          CUDA_CHECK(cudaEventRecord(t.e0, t.stream));
          CUDA_CHECK(cudaGraphLaunch(exec, t.stream));
          CUDA_CHECK(cudaEventRecord(t.e1, t.stream));
          CUDA_CHECK(cudaEventSynchronize(t.e1));
          float v = 0.f;
          CUDA_CHECK(cudaEventElapsedTime(&v, t.e0, t.e1));
          ms.push_back(v / inner);
        }
        out.host_us = issue_us;
        out.graph = true;
      }
    }
    if (exec) cudaGraphExecDestroy(exec);
    if (graph) cudaGraphDestroy(graph);
    cudaGetLastError();  // a refused capture is not an error: time on the stream instead
    if (!ok) {
      cudaStreamCaptureStatus cs = cudaStreamCaptureStatusNone;
      cudaStreamIsCapturing(t.stream, &cs);
      if (cs != cudaStreamCaptureStatusNone) {
        cudaGraph_t g2 = nullptr;
        cudaStreamEndCapture(t.stream, &g2);
        if (g2) cudaGraphDestroy(g2);
        cudaGetLastError();
      }
    }
  }
  if (!ms.empty()) {
    std::sort(ms.begin(), ms.end());
    out.ms = ms[ms.size() / 2];
    return out;
  }
  for (int s = 0; s < samples; ++s) {
    CUDA_CHECK(cudaEventRecord(t.e0, t.stream));
    h0 = std::chrono::steady_clock::now();
    for (int i = 0; i < inner; ++i) launch(rot++ % nrot);
    host.push_back(static_cast<float>(
        std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - h0).count() /
        inner));
    CUDA_CHECK(cudaEventRecord(t.e1, t.stream));
    CUDA_CHECK(cudaEventSynchronize(t.e1));
    float v = 0.f;
    CUDA_CHECK(cudaEventElapsedTime(&v, t.e0, t.e1));
    ms.push_back(v / inner);
  }
  CUDA_CHECK(cudaGetLastError());
  std::sort(ms.begin(), ms.end());
  std::sort(host.begin(), host.end());
  out.ms = ms[ms.size() / 2];
  out.host_us = host[host.size() / 2];
  return out;
}

// ---------------------------------------------------------------------------------------------
// Reporting helpers.

inline std::string fmt_ms(double ms) {
  char b[32];
  if (ms < 1.0) std::snprintf(b, sizeof b, "%.4f", ms);
  else if (ms < 100.0) std::snprintf(b, sizeof b, "%.3f", ms);
  else std::snprintf(b, sizeof b, "%.1f", ms);
  return b;
}

inline std::string fmt_mib(size_t bytes) {
  char b[32];
  if (bytes == 0) return "0";
  std::snprintf(b, sizeof b, "%.1f MiB", static_cast<double>(bytes) / (1024.0 * 1024.0));
  return b;
}

inline std::string fmt(const char* f, double v) {
  char b[64];
  std::snprintf(b, sizeof b, f, v);
  return b;
}

struct GeoMean {
  double log_sum = 0;
  int count = 0;
  void add(double r) {
    log_sum += std::log(r);
    ++count;
  }
  double value() const { return count ? std::exp(log_sum / count) : 0.0; }
  std::string str() const { return count ? fmt("%.3f", value()) : std::string("n/a"); }
};

inline std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> out;
  size_t b = 0;
  while (b <= s.size()) {
    size_t e = s.find(',', b);
    if (e == std::string::npos) e = s.size();
    if (e > b) out.push_back(s.substr(b, e - b));
    b = e + 1;
  }
  return out;
}

inline bool has(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}


// max |a - ref| / max |ref| over `elems` values of dtype dt (a NaN or inf difference: inf), through
// err_dev (2 words of device memory) on `stream`.
inline double compare_outputs(cudaStream_t stream, unsigned* err_dev, jet::DType dt,
                              const void* a, const void* ref, size_t elems) {
  CUDA_CHECK(cudaMemsetAsync(err_dev, 0, 2 * sizeof(unsigned), stream));
  if (dt == jet::DType::F32)
    max_error<float><<<1024, 256, 0, stream>>>(static_cast<const float*>(a),
                                               static_cast<const float*>(ref), elems, err_dev);
  else
    max_error<__half><<<1024, 256, 0, stream>>>(static_cast<const __half*>(a),
                                                static_cast<const __half*>(ref), elems, err_dev);
  CUDA_CHECK(cudaGetLastError());
  unsigned h[2];
  CUDA_CHECK(cudaMemcpyAsync(h, err_dev, sizeof h, cudaMemcpyDeviceToHost, stream));
  CUDA_CHECK(cudaStreamSynchronize(stream));
  float md, mr;
  std::memcpy(&md, &h[0], 4);
  std::memcpy(&mr, &h[1], 4);
  if (std::isinf(md)) return INFINITY;
  return mr > 0 ? md / mr : md;
}

// Uniform values in [-1, 1) into `elems` values of dtype dt.
inline void fill_random(cudaStream_t stream, jet::DType dt, void* p, size_t elems, uint64_t seed) {
  if (dt == jet::DType::F32)
    fill_uniform<float><<<1024, 256, 0, stream>>>(static_cast<float*>(p), elems, seed);
  else
    fill_uniform<__half><<<1024, 256, 0, stream>>>(static_cast<__half*>(p), elems, seed);
  CUDA_CHECK(cudaGetLastError());
}

}  // namespace jet_bench
