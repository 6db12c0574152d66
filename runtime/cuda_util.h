// Small CUDA helpers for the runtime's host code (compiled only with JET_HAVE_CUDA).
#pragma once

#if defined(JET_HAVE_CUDA)
#include <cuda_runtime.h>

#include <string>

#include "jet/dnn/common.h"

namespace jet {
namespace rt {

// Makes `device` current for a scope and restores the caller's device afterwards, so that the
// runtime never leaves the calling thread on another device. Cheap when it is already current.
class DeviceGuard {
 public:
  explicit DeviceGuard(int device) {
    if (cudaGetDevice(&previous_) != cudaSuccess) {
      cudaGetLastError();
      previous_ = -1;
    }
    if (previous_ != device) cudaSetDevice(device);
  }
  ~DeviceGuard() {
    int now = -1;
    if (previous_ >= 0 && cudaGetDevice(&now) == cudaSuccess && now != previous_) cudaSetDevice(previous_);
  }
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;

 private:
  int previous_ = -1;
};

// EXECUTION_FAILED naming the call and CUDA's reason; clears the (non-sticky) error state.
inline Status cuda_error(const char* what, cudaError_t e) {
  cudaGetLastError();
  return Status(StatusCode::EXECUTION_FAILED, std::string(what) + ": " + cudaGetErrorString(e));
}

// BAD_PARAM unless `p` is memory the device `device` can access (device, managed, or mapped
// pinned host memory). `what` names the pointer.
inline Status check_device_pointer(const void* p, int device, const std::string& what) {
  cudaPointerAttributes attr;
  const cudaError_t e = cudaPointerGetAttributes(&attr, p);
  if (e != cudaSuccess) {
    cudaGetLastError();
    return Status(StatusCode::BAD_PARAM, what + " is not memory CUDA knows (" + cudaGetErrorString(e) +
                                             "); pass device, managed or mapped pinned memory");
  }
  const bool device_memory = attr.type == cudaMemoryTypeDevice || attr.type == cudaMemoryTypeManaged;
  const bool mapped_host = attr.type == cudaMemoryTypeHost && attr.devicePointer != nullptr;
  if (!device_memory && !mapped_host) {
    return Status(StatusCode::BAD_PARAM, what + " is host memory the GPU cannot access; pass device, "
                                                "managed or mapped pinned memory");
  }
  if (attr.type == cudaMemoryTypeDevice && attr.device != device) {
    return Status(StatusCode::BAD_PARAM, what + " is memory of device " + std::to_string(attr.device) +
                                             ", but the engine runs on device " + std::to_string(device));
  }
  return Status();
}

}  // namespace rt
}  // namespace jet
#endif
