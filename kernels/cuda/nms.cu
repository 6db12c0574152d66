// CUDA nms_forward: one block per (batch, class). Each candidate's place in the order (score
// descending, lower index first on ties) is counted by its thread over all boxes, so the order is
// written without a sort; then the block walks the order, all threads testing the candidate
// against the boxes kept so far, thread 0 appending it. A second kernel turns the per-class
// counts into row offsets (one thread), a third writes the rows and the -1 padding.
#include "../api/backend.h"
#include "../common/detection_math.h"
#include "cuda_common.cuh"

namespace jet {
namespace cuda {
namespace {

constexpr int kThreads = 256;

template <class T>
__device__ __forceinline__ bool candidate(const T* s, int64_t i, bool has_thr, float thr, float* v) {
  *v = to_f32(s[i]);
  return *v == *v && (!has_thr || *v > thr);
}

template <class T>
__global__ void nms_select(NmsDesc nms, int64_t n, int64_t m, int64_t classes, const T* __restrict__ boxes,
                           const T* __restrict__ scores, int32_t* __restrict__ ws) {
  const int64_t pair = blockIdx.x;
  const int64_t b = pair / classes;
  int32_t* order = ws + pair * (n + m + 1);
  int32_t* kept = order + n;
  const T* s = scores + pair * n;
  const T* bx = boxes + b * n * 4;
  __shared__ int candidates, count, suppressed;
  if (threadIdx.x == 0) candidates = 0;
  __syncthreads();
  int mine = 0;
  for (int64_t i = threadIdx.x; i < n; i += blockDim.x) {
    float si = 0.f;
    if (!candidate(s, i, nms.has_score_threshold, nms.score_threshold, &si)) continue;
    ++mine;
    int64_t place = 0;
    for (int64_t j = 0; j < n; ++j) {
      float sj = 0.f;
      if (j != i && candidate(s, j, nms.has_score_threshold, nms.score_threshold, &sj) && (sj > si || (sj == si && j < i))) ++place;
    }
    order[place] = static_cast<int32_t>(i);
  }
  atomicAdd(&candidates, mine);
  if (threadIdx.x == 0) count = 0;
  __syncthreads();
  const int total = candidates;
  for (int r = 0; r < total; ++r) {
    if (count >= m) break;  // count is uniform here (read after a barrier)
    if (threadIdx.x == 0) suppressed = 0;
    __syncthreads();
    const int32_t i = order[r];
    float box[4], other[4];
    for (int e = 0; e < 4; ++e) box[e] = to_f32(bx[i * 4 + e]);
    for (int j = threadIdx.x; j < count; j += blockDim.x) {
      for (int e = 0; e < 4; ++e) other[e] = to_f32(bx[kept[j] * 4 + e]);
      if (nms_suppresses(other, box, nms.center_point_box, nms.iou_threshold)) suppressed = 1;
    }
    __syncthreads();
    if (threadIdx.x == 0 && !suppressed) kept[count++] = i;
    __syncthreads();
  }
  if (threadIdx.x == 0) kept[m] = count;  // the count after the kept list
}

// Exclusive prefix sum of the per-pair counts, in place (one thread: pairs are few).
__global__ void nms_offsets(int64_t pairs, int64_t n, int64_t m, int32_t* ws) {
  if (threadIdx.x != 0 || blockIdx.x != 0) return;
  int32_t sum = 0;
  for (int64_t p = 0; p < pairs; ++p) {
    int32_t* c = ws + p * (n + m + 1) + n + m;
    const int32_t v = *c;
    *c = sum;
    sum += v;
  }
  // The total after the last pair's order (its candidate order is no longer needed).
  ws[(pairs - 1) * (n + m + 1)] = sum;
}

__global__ void nms_write(int64_t pairs, int64_t classes, int64_t n, int64_t m, int64_t rows,
                          const int32_t* __restrict__ ws, int64_t* __restrict__ y) {
  const int32_t total = ws[(pairs - 1) * (n + m + 1)];
  for (int64_t t = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; t < pairs * m;
       t += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t p = t / m, j = t - p * m;
    const int32_t* kept = ws + p * (n + m + 1) + n;
    const int32_t start = kept[m];
    const int32_t next = p + 1 < pairs ? ws[(p + 1) * (n + m + 1) + n + m] : total;
    if (j < next - start) {
      int64_t* row = y + (start + j) * 3;
      row[0] = p / classes;
      row[1] = p % classes;
      row[2] = kept[j];
    }
    (void)rows;
  }
  for (int64_t r = total + blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; r < rows;
       r += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    y[r * 3] = y[r * 3 + 1] = y[r * 3 + 2] = -1;
  }
}

}  // namespace

Status nms_forward(const Handle& h, const NmsDesc& nms, const TensorDesc& boxes_desc,
                   const void* boxes, const TensorDesc& scores_desc, const void* scores,
                   void* workspace, const TensorDesc& y_desc, void* y) {
  const int64_t batches = boxes_desc.dim(0), n = boxes_desc.dim(1), classes = scores_desc.dim(1);
  const int64_t m = nms.max_output_boxes_per_class < n ? nms.max_output_boxes_per_class : n;
  const int64_t pairs = batches * classes;
  if (pairs > 0x7fffffff)
    return make_status(StatusCode::NOT_SUPPORTED, "nms_forward: %lld batch x class pairs", static_cast<long long>(pairs));
  int32_t* ws = static_cast<int32_t*>(workspace);
  if (boxes_desc.dtype() == DType::F32) {
    nms_select<float><<<static_cast<unsigned>(pairs), kThreads, 0, h.stream()>>>(
        nms, n, m, classes, static_cast<const float*>(boxes), static_cast<const float*>(scores), ws);
  } else {
    nms_select<__half><<<static_cast<unsigned>(pairs), kThreads, 0, h.stream()>>>(
        nms, n, m, classes, static_cast<const __half*>(boxes), static_cast<const __half*>(scores), ws);
  }
  JET_RETURN_IF_ERROR(launch_status("nms_forward"));
  nms_offsets<<<1, 32, 0, h.stream()>>>(pairs, n, m, ws);
  JET_RETURN_IF_ERROR(launch_status("nms_forward"));
  const int64_t rows = y_desc.dim(0);
  const int64_t work = pairs * m > rows ? pairs * m : rows;
  nms_write<<<grid_for(work, kThreads, h.sm_count()), kThreads, 0, h.stream()>>>(
      pairs, classes, n, m, rows, ws, static_cast<int64_t*>(y));
  return launch_status("nms_forward");
}

}  // namespace cuda
}  // namespace jet
