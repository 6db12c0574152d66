// DIRECT convolution on CUDA: every output element is a loop over its window.
//
// Three kernels, picked by the problem:
//  - direct_general: any ConvGeom. One thread per output element; the linear index runs over
//    the output in the order that makes y's fastest dim the threads' fastest dim (K last for
//    channels-last y, W last otherwise) so that neighbouring threads write neighbouring memory.
//  - dw_channels_last: depthwise 3x3 (C == K == groups, 2D) with x and y channel-contiguous
//    (NHWC). Threads run across channels, V channels each with one vector load per tap, and a
//    strip of TW output columns each so the V x 9 filter taps stay in registers.
//  - dw_plane_tile: depthwise 3x3 with any other layout (NCHW). A block computes a tile of one
//    (image, channel) plane from an input tile staged in shared memory as f32.
// All accumulate in f32 and write through conv_store (the fused epilogue). No workspace.
#include "conv_algos.cuh"

namespace jet {
namespace cuda {
namespace {

// ---- General path ------------------------------------------------------------------------------

template <class T, bool kChannelsLast>
__global__ void direct_general(ConvGeom g, ConvOut e, const T* __restrict__ x,
                               const T* __restrict__ w, T* y, int64_t total) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < total;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    int64_t r = i, k, o[3];
    if (kChannelsLast) {
      k = r % g.k;
      r /= g.k;
    }
    o[2] = r % g.out[2];
    r /= g.out[2];
    o[1] = r % g.out[1];
    r /= g.out[1];
    o[0] = r % g.out[0];
    r /= g.out[0];
    if (!kChannelsLast) {
      k = r % g.k;
      r /= g.k;
    }
    const int64_t n = r;
    const int64_t grp = k / g.kg;
    const T* xg = x + n * g.xs_n + grp * g.cg * g.xs_c;
    const T* wk = w + k * g.ws_k;
    float acc = 0.f;
    for (int64_t t0 = 0; t0 < g.win[0]; ++t0) {
      const int64_t i0 = o[0] * g.stride[0] - g.pad[0] + t0 * g.dil[0];
      if (i0 < 0 || i0 >= g.in[0]) continue;
      const int64_t f0 = g.flip ? g.win[0] - 1 - t0 : t0;
      for (int64_t t1 = 0; t1 < g.win[1]; ++t1) {
        const int64_t i1 = o[1] * g.stride[1] - g.pad[1] + t1 * g.dil[1];
        if (i1 < 0 || i1 >= g.in[1]) continue;
        const int64_t f1 = g.flip ? g.win[1] - 1 - t1 : t1;
        for (int64_t t2 = 0; t2 < g.win[2]; ++t2) {
          const int64_t i2 = o[2] * g.stride[2] - g.pad[2] + t2 * g.dil[2];
          if (i2 < 0 || i2 >= g.in[2]) continue;
          const int64_t f2 = g.flip ? g.win[2] - 1 - t2 : t2;
          const T* xp = xg + i0 * g.xs[0] + i1 * g.xs[1] + i2 * g.xs[2];
          const T* wp = wk + f0 * g.ws[0] + f1 * g.ws[1] + f2 * g.ws[2];
          for (int64_t c = 0; c < g.cg; ++c) acc += to_f32(xp[c * g.xs_c]) * to_f32(wp[c * g.ws_c]);
        }
      }
    }
    conv_store(g, e, y, n, k, o[0], o[1], o[2], acc);
  }
}

// ---- Depthwise, channels-last --------------------------------------------------------------------

// Loads V consecutive elements (aligned to V * sizeof(T) when V > 1) as f32.
template <int V>
__device__ __forceinline__ void load_vec(const float* p, float* f) {
  if (V == 4) {
    const float4 v = __ldg(reinterpret_cast<const float4*>(p));
    f[0] = v.x;
    f[1] = v.y;
    f[2] = v.z;
    f[3] = v.w;
  } else if (V == 2) {
    const float2 v = __ldg(reinterpret_cast<const float2*>(p));
    f[0] = v.x;
    f[1] = v.y;
  } else {
    for (int i = 0; i < V; ++i) f[i] = __ldg(p + i);
  }
}

template <int V>
__device__ __forceinline__ void load_vec(const __half* p, float* f) {
  if (V == 8 || V == 2) {
    // V / 2 half2 pairs in one 16- or 4-byte load.
    unsigned int words[4];
    if (V == 8) {
      const uint4 raw = __ldg(reinterpret_cast<const uint4*>(p));
      words[0] = raw.x;
      words[1] = raw.y;
      words[2] = raw.z;
      words[3] = raw.w;
    } else {
      words[0] = __ldg(reinterpret_cast<const unsigned int*>(p));
    }
    for (int i = 0; i < V / 2; ++i) {
      __half2 h2;
      memcpy(&h2, &words[i], sizeof(h2));
      const float2 f2 = __half22float2(h2);
      f[2 * i] = f2.x;
      f[2 * i + 1] = f2.y;
    }
  } else {
    for (int i = 0; i < V; ++i) f[i] = __half2float(p[i]);
  }
}

// Threads: (n, oh, column strip, channel vector) with the channel vector fastest, so a warp
// loads 32 consecutive vectors of one pixel row. A thread computes `strip` output columns,
// reusing its V x 9 filter taps from registers. Requires xs_c == ys_c == 1 and C % V == 0.
template <class T, int V>
__global__ void dw_channels_last(ConvGeom g, ConvOut e, const T* __restrict__ x,
                                 const T* __restrict__ w, T* y, int strip, int64_t total) {
  const int64_t cvecs = g.c / V;
  const int64_t strips = (g.out[2] + strip - 1) / strip;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < total;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    int64_t r = i;
    const int64_t c0 = (r % cvecs) * V;
    r /= cvecs;
    const int64_t ow0 = (r % strips) * strip;
    r /= strips;
    const int64_t oh = r % g.out[1];
    const int64_t n = r / g.out[1];
    // The V x 3 x 3 taps, flipped here for CONVOLUTION mode.
    float wf[9][V];
    for (int t = 0; t < 9; ++t) {
      const int fr = g.flip ? 2 - t / 3 : t / 3;
      const int fs = g.flip ? 2 - t % 3 : t % 3;
      for (int v = 0; v < V; ++v)
        wf[t][v] = to_f32(w[(c0 + v) * g.ws_k + fr * g.ws[1] + fs * g.ws[2]]);
    }
    const T* xn = x + n * g.xs_n + c0;
    for (int j = 0; j < strip; ++j) {
      const int64_t ow = ow0 + j;
      if (ow >= g.out[2]) break;
      float acc[V];
      for (int v = 0; v < V; ++v) acc[v] = 0.f;
      for (int rr = 0; rr < 3; ++rr) {
        const int64_t ih = oh * g.stride[1] - g.pad[1] + rr * g.dil[1];
        if (ih < 0 || ih >= g.in[1]) continue;
        for (int ss = 0; ss < 3; ++ss) {
          const int64_t iw = ow * g.stride[2] - g.pad[2] + ss * g.dil[2];
          if (iw < 0 || iw >= g.in[2]) continue;
          float xv[V];
          load_vec<V>(xn + ih * g.xs[1] + iw * g.xs[2], xv);
          for (int v = 0; v < V; ++v) acc[v] += xv[v] * wf[rr * 3 + ss][v];
        }
      }
      for (int v = 0; v < V; ++v) conv_store(g, e, y, n, c0 + v, 0, oh, ow, acc[v]);
    }
  }
}

// ---- Depthwise, one plane tile per block -----------------------------------------------------

// blockDim (TW, BY); a block computes TW x (BY * rows_per_thread) outputs of one plane from a
// shared-memory copy of the input rectangle they read (zeros where it lies in the padding).
template <class T>
__global__ void dw_plane_tile(ConvGeom g, ConvOut e, const T* __restrict__ x,
                              const T* __restrict__ w, T* y, int rows_per_thread, int tiles_w,
                              int tiles_h, int in_tile_h, int in_tile_w) {
  extern __shared__ float tile[];
  const int tw = blockDim.x, th = blockDim.y * rows_per_thread;
  const int64_t tiles = static_cast<int64_t>(tiles_w) * tiles_h;
  const int64_t plane = blockIdx.x / tiles;
  const int t = static_cast<int>(blockIdx.x - plane * tiles);
  const int64_t oh0 = static_cast<int64_t>(t / tiles_w) * th;
  const int64_t ow0 = static_cast<int64_t>(t % tiles_w) * tw;
  const int64_t c = plane % g.c;
  const int64_t n = plane / g.c;
  const T* xp = x + n * g.xs_n + c * g.xs_c;
  const int64_t ih0 = oh0 * g.stride[1] - g.pad[1];
  const int64_t iw0 = ow0 * g.stride[2] - g.pad[2];
  const int tid = threadIdx.y * blockDim.x + threadIdx.x;
  const int nthreads = blockDim.x * blockDim.y;
  for (int i = tid; i < in_tile_h * in_tile_w; i += nthreads) {
    const int64_t ih = ih0 + i / in_tile_w;
    const int64_t iw = iw0 + i % in_tile_w;
    const bool inside = ih >= 0 && ih < g.in[1] && iw >= 0 && iw < g.in[2];
    tile[i] = inside ? to_f32(xp[ih * g.xs[1] + iw * g.xs[2]]) : 0.f;
  }
  float wf[9];
  for (int q = 0; q < 9; ++q) {
    const int fr = g.flip ? 2 - q / 3 : q / 3;
    const int fs = g.flip ? 2 - q % 3 : q % 3;
    wf[q] = to_f32(w[c * g.ws_k + fr * g.ws[1] + fs * g.ws[2]]);
  }
  __syncthreads();
  const int64_t ow = ow0 + threadIdx.x;
  if (ow >= g.out[2]) return;  // after the only barrier
  const int sh = static_cast<int>(g.stride[1]), sw = static_cast<int>(g.stride[2]);
  const int dh = static_cast<int>(g.dil[1]), dw = static_cast<int>(g.dil[2]);
  for (int rr = 0; rr < rows_per_thread; ++rr) {
    const int ly = threadIdx.y + rr * blockDim.y;
    const int64_t oh = oh0 + ly;
    if (oh >= g.out[1]) break;
    const float* base = tile + ly * sh * in_tile_w + threadIdx.x * sw;
    float acc = 0.f;
    for (int q = 0; q < 9; ++q) acc += base[(q / 3) * dh * in_tile_w + (q % 3) * dw] * wf[q];
    conv_store(g, e, y, n, c, 0, oh, ow, acc);
  }
}

// ---- Dispatch ----------------------------------------------------------------------------------

bool aligned_to(const void* p, size_t bytes) {
  return reinterpret_cast<uintptr_t>(p) % bytes == 0;
}

template <class T>
Status run_direct(const Handle& h, const ConvGeom& g, const ConvOut& e, const void* xv,
                  const void* wv, void* yv) {
  const T* x = static_cast<const T*>(xv);
  const T* w = static_cast<const T*>(wv);
  T* y = static_cast<T*>(yv);
  const int threads = 256;
  const bool dw3x3 = g.cg == 1 && g.kg == 1 && g.spatial_rank == 2 && g.win[1] == 3 &&
                     g.win[2] == 3;
  if (dw3x3 && g.xs_c == 1 && g.ys_c == 1) {
    // Widest vector whose loads stay aligned at every pixel, then narrower vectors and shorter
    // strips while the problem has too few threads to fill the device (a 7x7x960 layer has
    // only 47k outputs): latency, not bandwidth, bounds these small layers.
    const auto vec_ok = [&](int v) {
      return g.c % v == 0 && aligned_to(x, v * sizeof(T)) && g.xs_n % v == 0 &&
             g.xs[1] % v == 0 && g.xs[2] % v == 0;
    };
    const int64_t want = static_cast<int64_t>(h.sm_count() > 0 ? h.sm_count() : 16) * 1024;
    const int64_t pixels = g.n * g.out[1] * g.out[2];
    const int wide = sizeof(T) == 2 ? 8 : 4;
    int vec = vec_ok(wide) ? wide : (vec_ok(2) ? 2 : 1);
    if (vec == wide && pixels * (g.c / vec) < want && vec_ok(2)) vec = 2;
    int strip = 4;
    while (strip > 1 && g.n * g.out[1] * ((g.out[2] + strip - 1) / strip) * (g.c / vec) < want)
      strip /= 2;
    const int64_t total = g.n * g.out[1] * ((g.out[2] + strip - 1) / strip) * (g.c / vec);
    const int grid = grid_for(total, threads, h.sm_count());
    if (vec == wide)
      dw_channels_last<T, sizeof(T) == 2 ? 8 : 4>
          <<<grid, threads, 0, h.stream()>>>(g, e, x, w, y, strip, total);
    else if (vec == 2)
      dw_channels_last<T, 2><<<grid, threads, 0, h.stream()>>>(g, e, x, w, y, strip, total);
    else
      dw_channels_last<T, 1><<<grid, threads, 0, h.stream()>>>(g, e, x, w, y, strip, total);
    return launch_status("conv_forward (direct, depthwise channels-last)");
  }
  if (dw3x3 && g.out[2] >= 12) {
    // 32 or 16 columns per tile; taller tiles for wide planes so a block amortizes its halo.
    const int tw = g.out[2] >= 24 ? 32 : 16;
    const int by = threads / tw;
    const int rows = (tw == 32 && g.out[1] >= 4 * by) ? 4 : (g.out[1] >= 2 * by ? 2 : 1);
    const int th = by * rows;
    const int64_t in_h = (th - 1) * g.stride[1] + 2 * g.dil[1] + 1;
    const int64_t in_w = (tw - 1) * g.stride[2] + 2 * g.dil[2] + 1;
    const int64_t tiles_w = (g.out[2] + tw - 1) / tw, tiles_h = (g.out[1] + th - 1) / th;
    const int64_t smem = in_h * in_w * static_cast<int64_t>(sizeof(float));
    const int64_t blocks = tiles_w * tiles_h * g.n * g.c;
    if (smem <= 32 * 1024 && blocks < (int64_t(1) << 31)) {
      dw_plane_tile<T><<<static_cast<unsigned>(blocks), dim3(tw, by), static_cast<size_t>(smem),
                         h.stream()>>>(g, e, x, w, y, rows, static_cast<int>(tiles_w),
                                       static_cast<int>(tiles_h), static_cast<int>(in_h),
                                       static_cast<int>(in_w));
      return launch_status("conv_forward (direct, depthwise plane tile)");
    }
  }
  const int64_t total = g.n * g.k * g.out[0] * g.out[1] * g.out[2];
  const int grid = grid_for(total, threads, h.sm_count());
  // Channels-last y when its channel stride is the smallest of the dims that vary.
  bool channels_last = g.k > 1;
  for (int i = 0; i < 3; ++i)
    if (g.out[i] > 1 && g.ys[i] < g.ys_c) channels_last = false;
  if (channels_last)
    direct_general<T, true><<<grid, threads, 0, h.stream()>>>(g, e, x, w, y, total);
  else
    direct_general<T, false><<<grid, threads, 0, h.stream()>>>(g, e, x, w, y, total);
  return launch_status("conv_forward (direct)");
}

}  // namespace

Status conv_direct(const Handle& h, const ConvGeom& g, const ConvOut& e, DType t, const void* x,
                   const void* w, void* y) {
  if (t == DType::F32) return run_direct<float>(h, g, e, x, w, y);
  return run_direct<__half>(h, g, e, x, w, y);
}

JET_CUDA_MODULE(conv_direct)

}  // namespace cuda
}  // namespace jet
