// Handle creation for the CUDA backend: device query and the architecture check.
#include <cuda_runtime.h>

#include "../api/check.h"

namespace jet {
namespace cuda {
// JET_CUDA_MODULE in each file (cuda_common.cuh).
cudaError_t load_module_conv_gemm();
cudaError_t load_module_conv_gemm_f32();
cudaError_t load_module_gemm();
cudaError_t load_module_op_tensor();
cudaError_t load_module_reduce();
cudaError_t load_module_transform();
cudaError_t load_module_pool();
cudaError_t load_module_softmax();
cudaError_t load_module_conv_direct();
cudaError_t load_module_conv_winograd();
cudaError_t load_module_activation();
cudaError_t load_module_add_tensor();
namespace gemm {
bool mma_available(const Handle& h);  // gemm_config.cu
}  // namespace gemm
}  // namespace cuda

namespace {

// A kernel that exists only so we can ask the runtime whether this binary holds code (SASS or
// PTX) that the device can run.
__global__ void arch_probe_kernel() {}

}  // namespace

bool built_with_cuda() { return true; }

Status Handle::cuda(int device, cudaStream_t stream, Handle* out) {
  if (!out) return make_status(StatusCode::BAD_PARAM, "Handle::cuda: out is a null pointer");
  int count = 0;
  cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess || count == 0) {
    cudaGetLastError();  // clear the sticky error state for the caller
    return make_status(StatusCode::EXECUTION_FAILED, "Handle::cuda: no CUDA device available (%s)",
                       e != cudaSuccess ? cudaGetErrorString(e) : "device count is 0");
  }
  if (device < 0 || device >= count)
    return make_status(StatusCode::BAD_PARAM, "Handle::cuda: device %d out of range [0, %d)",
                       device, count);
  // Attributes, not cudaDeviceProp fields: they are stable from CUDA 11.4 to 13.
  int major = 0, minor = 0, sms = 0;
  if (cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device) != cudaSuccess ||
      cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device) != cudaSuccess ||
      cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device) != cudaSuccess) {
    e = cudaGetLastError();
    return make_status(StatusCode::EXECUTION_FAILED, "Handle::cuda: cudaDeviceGetAttribute: %s",
                       cudaGetErrorString(e));
  }
  int previous = 0;
  cudaGetDevice(&previous);
  cudaSetDevice(device);
  cudaFuncAttributes attr;
  e = cudaFuncGetAttributes(&attr, arch_probe_kernel);
  cudaSetDevice(previous);
  if (e != cudaSuccess) {
    cudaGetLastError();
    if (e != cudaErrorNoKernelImageForDevice && e != cudaErrorInvalidDeviceFunction)
      return make_status(StatusCode::EXECUTION_FAILED,
                         "Handle::cuda: device %d: cudaFuncGetAttributes failed: %s", device,
                         cudaGetErrorString(e));
    return make_status(StatusCode::ARCH_MISMATCH,
                       "Handle::cuda: device %d is sm_%d%d, but this build of jet holds code for "
                       "%s only (%s); rebuild with CMAKE_CUDA_ARCHITECTURES including %d%d",
                       device, major, minor, JET_CUDA_ARCHS, cudaGetErrorString(e), major, minor);
  }
  Handle h;
  h.backend_ = Backend::CUDA;
  h.device_ = device;
  h.stream_ = stream;
  h.sm_count_ = sms;
  h.cc_ = major * 10 + minor;
  // Which engines the device runs is asked of small modules' probe kernels (gemm_config.cu), once
  // per device, and the answers kept: asked here, not later while load_cuda_modules may hold the
  // driver's module lock on another thread (a ResNet-50 load once waited 18 ms here for it).
  (void)cuda::gemm::mma_available(h);
  (void)hopper_mma_available(h);
  *out = h;
  return Status();
}

Status load_cuda_modules(int device, CudaModules group) {
  // The slowest to load first (sm_90a, H200, 2026-11-27: conv_gemm 7 ms, gemm 5, op_tensor 1.6,
  // transform and conv_winograd 1.4, reduce 1.1, pool 0.9, conv_direct 0.7, softmax 0.6; the f32
  // engine's conv_gemm_f32 23-31, its own group); the small ones a network needs cost ~0.1-0.2 ms
  // each at their first launch. The training add-on's are not loaded.
  using Loader = cudaError_t (*)();
  static const Loader kMost[] = {
      cuda::load_module_conv_gemm,  cuda::load_module_gemm,          cuda::load_module_op_tensor,
      cuda::load_module_reduce,     cuda::load_module_transform,     cuda::load_module_pool,
      cuda::load_module_softmax,    cuda::load_module_conv_direct,   cuda::load_module_conv_winograd,
      cuda::load_module_activation, cuda::load_module_add_tensor};
  static const Loader kF32Convolution[] = {cuda::load_module_conv_gemm_f32};
  const bool most = group == CudaModules::MOST || group == CudaModules::ALL;
  const bool f32 = group == CudaModules::F32_CONVOLUTION || group == CudaModules::ALL;
  if (!most && !f32)
    return make_status(StatusCode::BAD_PARAM, "load_cuda_modules: unknown module group %d",
                       static_cast<int>(group));
  int previous = 0;
  cudaError_t e = cudaGetDevice(&previous);
  const bool switched = e == cudaSuccess && (e = cudaSetDevice(device)) == cudaSuccess;
  for (const Loader load : kMost) {
    if (most && e == cudaSuccess) e = load();
  }
  for (const Loader load : kF32Convolution) {
    if (f32 && e == cudaSuccess) e = load();
  }
  if (switched) cudaSetDevice(previous);
  if (e != cudaSuccess) {
    cudaGetLastError();  // this thread's error state, cleared for the caller
    return make_status(StatusCode::EXECUTION_FAILED, "load_cuda_modules: device %d: %s", device,
                       cudaGetErrorString(e));
  }
  return Status();
}

}  // namespace jet
