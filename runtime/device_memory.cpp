// device_alloc / host_alloc: the runtime's only allocation points for weights and context memory.
#include "device_memory.h"

#include <atomic>
#include <cstdlib>
#include <string>

#if defined(JET_HAVE_CUDA)
#include <cuda_runtime.h>
#endif

#include "format.h"

namespace jet {
namespace rt {

namespace {
std::atomic<uint64_t> g_device_allocs{0};
std::atomic<uint64_t> g_host_allocs{0};
}  // namespace

Status device_alloc(size_t bytes, void** out, const char* what) {
  *out = nullptr;
#if defined(JET_HAVE_CUDA)
  g_device_allocs.fetch_add(1, std::memory_order_relaxed);
  void* p = nullptr;
  const cudaError_t e = cudaMalloc(&p, bytes > 0 ? bytes : 1);
  if (e != cudaSuccess) {
    cudaGetLastError();  // clear the error so later calls on this thread are not affected
    return Status(StatusCode::ALLOC_FAILED, std::string("cudaMalloc of ") +
                                                std::to_string(bytes) + " bytes for " + what +
                                                " failed: " + cudaGetErrorString(e));
  }
  *out = p;
  return Status();
#else
  (void)bytes;
  return Status(StatusCode::NOT_SUPPORTED,
                std::string("cannot allocate device memory for ") + what +
                    ": this build of jet has no CUDA backend");
#endif
}

void device_free(void* p) {
#if defined(JET_HAVE_CUDA)
  if (p) cudaFree(p);
#else
  (void)p;
#endif
}

Status host_alloc(size_t bytes, void** out, const char* what) {
  *out = nullptr;
  g_host_allocs.fetch_add(1, std::memory_order_relaxed);
  void* p = nullptr;
  // posix_memalign reports failure (a huge arena from a hostile file) instead of throwing.
  if (posix_memalign(&p, format::kArenaAlignment, bytes > 0 ? bytes : 1) != 0 || !p) {
    return Status(StatusCode::ALLOC_FAILED, "cannot allocate " + std::to_string(bytes) +
                                                " bytes of host memory for " + what);
  }
  *out = p;
  return Status();
}

void host_free(void* p) { std::free(p); }

Status pinned_host_alloc(size_t bytes, void** out, const char* what) {
  *out = nullptr;
#if defined(JET_HAVE_CUDA)
  void* p = nullptr;
  const cudaError_t e = cudaHostAlloc(&p, bytes > 0 ? bytes : 1, cudaHostAllocDefault);
  if (e != cudaSuccess) {
    cudaGetLastError();
    return Status(StatusCode::ALLOC_FAILED, std::string("cudaHostAlloc of ") + std::to_string(bytes) + " bytes for " +
                                                what + " failed: " + cudaGetErrorString(e));
  }
  *out = p;
  return Status();
#else
  (void)bytes;
  return Status(StatusCode::NOT_SUPPORTED,
                std::string("cannot allocate pinned memory for ") + what + ": this build of jet has no CUDA backend");
#endif
}

void pinned_host_free(void* p) {
#if defined(JET_HAVE_CUDA)
  if (p) cudaFreeHost(p);
#else
  (void)p;
#endif
}

uint64_t device_alloc_count() { return g_device_allocs.load(std::memory_order_relaxed); }
uint64_t host_alloc_count() { return g_host_allocs.load(std::memory_order_relaxed); }

}  // namespace rt
}  // namespace jet
