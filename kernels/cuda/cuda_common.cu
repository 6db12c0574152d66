#include "cuda_common.cuh"

namespace jet {
namespace cuda {

StridedIndex make_strided_index(const TensorDesc& a, const TensorDesc& b) {
  StridedIndex s{};
  int r = 0;
  for (int i = 0; i < a.rank(); ++i) {
    if (a.dim(i) == 1) continue;
    if (r > 0 && s.strides[0][r - 1] == a.stride(i) * a.dim(i) &&
        s.strides[1][r - 1] == b.stride(i) * a.dim(i)) {
      // Dim i continues the previous one in both tensors: merge.
      s.dims[r - 1] *= a.dim(i);
      s.strides[0][r - 1] = a.stride(i);
      s.strides[1][r - 1] = b.stride(i);
      continue;
    }
    s.dims[r] = a.dim(i);
    s.strides[0][r] = a.stride(i);
    s.strides[1][r] = b.stride(i);
    ++r;
  }
  if (r == 0) {  // a single element
    s.dims[0] = 1;
    s.strides[0][0] = s.strides[1][0] = 0;
    r = 1;
  }
  s.rank = r;
  return s;
}

bool same_dense_layout(const TensorDesc& a, const TensorDesc& b) {
  return a.same_dims(b) && a.span() == a.elements() && b.span() == b.elements() &&
         [&] {
           for (int i = 0; i < a.rank(); ++i)
             if (a.dim(i) > 1 && a.stride(i) != b.stride(i)) return false;
           return true;
         }();
}

int grid_for(int64_t n, int threads, int sm_count) {
  const int64_t blocks = (n + threads - 1) / threads;
  const int64_t cap = static_cast<int64_t>(sm_count > 0 ? sm_count : 16) * 32;
  return static_cast<int>(blocks < cap ? (blocks > 0 ? blocks : 1) : cap);
}

Status launch_status(const char* routine) {
  const cudaError_t e = cudaGetLastError();
  if (e == cudaSuccess) return Status();
  return make_status(StatusCode::EXECUTION_FAILED, "%s: kernel launch failed: %s", routine,
                     cudaGetErrorString(e));
}

}  // namespace cuda
}  // namespace jet
