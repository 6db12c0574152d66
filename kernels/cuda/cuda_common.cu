#include "cuda_common.cuh"

namespace jet {
namespace cuda {

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
