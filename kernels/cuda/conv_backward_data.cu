// CUDA convolution backward data (the transposed convolution): one thread per dx element gathers
//   dx[n, c, i] = sum over k in c's group, taps t with i + pad_begin - t * dilation = o * stride
//                 for an o inside dy, of dy[n, k, o] * w[k, c_in_group, t (flipped if CONVOLUTION)]
// in f32 and writes alpha * sum + beta * dx. No atomics, so results are deterministic and dx
// never needs a zero-fill pass (beta == 0 does not read dx). No workspace.
//
// The thread index runs over dx in the order that makes dx's most contiguous dim the threads'
// fastest (C for channels-last dx, W otherwise), so neighbouring threads write neighbouring
// memory. The geometry is the forward convolution's (conv_common.cuh) with x = dx and y = dy.
#include "conv_common.cuh"

namespace jet {
namespace cuda {
namespace {

template <class T, bool kChannelsLast>
__global__ void backward_data_gather(ConvGeom g, float alpha, float beta,
                                     const T* __restrict__ w, const T* __restrict__ dy, T* dx,
                                     int64_t total) {
  for (int64_t idx = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; idx < total;
       idx += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    int64_t r = idx, c = 0, pos[3];
    if (kChannelsLast) {
      c = r % g.c;
      r /= g.c;
    }
    pos[2] = r % g.in[2];
    r /= g.in[2];
    pos[1] = r % g.in[1];
    r /= g.in[1];
    pos[0] = r % g.in[0];
    r /= g.in[0];
    if (!kChannelsLast) {
      c = r % g.c;
      r /= g.c;
    }
    const int64_t n = r;
    const int64_t grp = c / g.cg;
    const int64_t first_filter = grp * g.kg;
    // The group's filters at channel c, and dy at image n and the group's first channel.
    const T* wc = w + first_filter * g.ws_k + (c - grp * g.cg) * g.ws_c;
    const T* dyg = dy + n * g.ys_n + first_filter * g.ys_c;
    float acc = 0.f;
    // A tap reaches a dy position when i + pad - t * dilation is a non-negative multiple of the
    // stride below out * stride; that quantity only decreases with t, hence the breaks.
    for (int64_t t0 = 0; t0 < g.win[0]; ++t0) {
      const int64_t q0 = pos[0] + g.pad[0] - t0 * g.dil[0];
      if (q0 < 0) break;
      const int64_t o0 = q0 / g.stride[0];
      if (o0 * g.stride[0] != q0 || o0 >= g.out[0]) continue;
      const int64_t f0 = g.flip ? g.win[0] - 1 - t0 : t0;
      for (int64_t t1 = 0; t1 < g.win[1]; ++t1) {
        const int64_t q1 = pos[1] + g.pad[1] - t1 * g.dil[1];
        if (q1 < 0) break;
        const int64_t o1 = q1 / g.stride[1];
        if (o1 * g.stride[1] != q1 || o1 >= g.out[1]) continue;
        const int64_t f1 = g.flip ? g.win[1] - 1 - t1 : t1;
        for (int64_t t2 = 0; t2 < g.win[2]; ++t2) {
          const int64_t q2 = pos[2] + g.pad[2] - t2 * g.dil[2];
          if (q2 < 0) break;
          const int64_t o2 = q2 / g.stride[2];
          if (o2 * g.stride[2] != q2 || o2 >= g.out[2]) continue;
          const int64_t f2 = g.flip ? g.win[2] - 1 - t2 : t2;
          const T* dyp = dyg + o0 * g.ys[0] + o1 * g.ys[1] + o2 * g.ys[2];
          const T* wp = wc + f0 * g.ws[0] + f1 * g.ws[1] + f2 * g.ws[2];
          for (int64_t k = 0; k < g.kg; ++k)
            acc += to_f32(dyp[k * g.ys_c]) * to_f32(wp[k * g.ws_k]);
        }
      }
    }
    T* out = dx + n * g.xs_n + c * g.xs_c + pos[0] * g.xs[0] + pos[1] * g.xs[1] + pos[2] * g.xs[2];
    blend_store(out, alpha, acc, beta);
  }
}

template <class T>
Status run(const Handle& h, float alpha, const FilterDesc& w_desc, const void* w,
           const TensorDesc& dy_desc, const void* dy, const ConvDesc& conv, float beta,
           const TensorDesc& dx_desc, void* dx) {
  const ConvGeom g = make_conv_geom(dx_desc, w_desc, conv, dy_desc);
  const int64_t total = g.n * g.c * g.in[0] * g.in[1] * g.in[2];
  const int threads = 256;
  const int grid = grid_for(total, threads, h.sm_count());
  // Channels-last dx when its channel stride is the smallest of the dims that vary.
  bool channels_last = g.c > 1;
  for (int i = 0; i < 3; ++i)
    if (g.in[i] > 1 && g.xs[i] < g.xs_c) channels_last = false;
  const T* wp = static_cast<const T*>(w);
  const T* dyp = static_cast<const T*>(dy);
  T* dxp = static_cast<T*>(dx);
  if (channels_last)
    backward_data_gather<T, true>
        <<<grid, threads, 0, h.stream()>>>(g, alpha, beta, wp, dyp, dxp, total);
  else
    backward_data_gather<T, false>
        <<<grid, threads, 0, h.stream()>>>(g, alpha, beta, wp, dyp, dxp, total);
  return launch_status("conv_backward_data");
}

}  // namespace

Status conv_backward_data(const Handle& handle, float alpha, const FilterDesc& w_desc,
                          const void* w, const TensorDesc& dy_desc, const void* dy,
                          const ConvDesc& conv, float beta, const TensorDesc& dx_desc, void* dx) {
  if (dx_desc.dtype() == DType::F32)
    return run<float>(handle, alpha, w_desc, w, dy_desc, dy, conv, beta, dx_desc, dx);
  return run<__half>(handle, alpha, w_desc, w, dy_desc, dy, conv, beta, dx_desc, dx);
}

}  // namespace cuda
}  // namespace jet
