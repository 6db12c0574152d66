// Handle creation for the CUDA backend: device query and the architecture check.
#include <cuda_runtime.h>

#include "../api/check.h"

namespace jet {
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
  *out = h;
  return Status();
}

}  // namespace jet
