// Handle creation for builds without CUDA. With CUDA, kernels/cuda/handle.cu defines these.
#include "check.h"

#if !defined(JET_HAVE_CUDA)
namespace jet {

bool built_with_cuda() { return false; }
bool hopper_mma_available(const Handle&) { return false; }

Status Handle::cuda(int, cudaStream_t, Handle*) {
  return make_status(StatusCode::NOT_SUPPORTED,
                     "Handle::cuda: this build of jet has no CUDA backend (configure with a CUDA "
                     "toolkit and JET_WITH_CUDA=ON)");
}

Status load_cuda_modules(int, CudaModules) {
  return make_status(StatusCode::NOT_SUPPORTED, "load_cuda_modules: this build of jet has no CUDA backend");
}

}  // namespace jet
#endif
