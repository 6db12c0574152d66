// Every allocation the runtime makes for weights and contexts goes through these functions, so
// there is one place to see (and, in tests/runtime/test_zero_alloc.cpp, to count) them.
#pragma once

#include <cstddef>
#include <cstdint>

#include "jet/dnn/common.h"

namespace jet {
namespace rt {

// Device memory (cudaMalloc on the current device). NOT_SUPPORTED in a build without CUDA.
// `what` names the allocation in the error message.
Status device_alloc(size_t bytes, void** out, const char* what);
void device_free(void* p);

// Host memory aligned to 256 bytes (context memory on the CPU backend).
Status host_alloc(size_t bytes, void** out, const char* what);
void host_free(void* p);

// Page-locked host memory (cudaHostAlloc), for uploads the DMA engine reads directly. ALLOC_FAILED
// when CUDA cannot pin that much (the caller may fall back to pageable memory); NOT_SUPPORTED in a
// build without CUDA.
Status pinned_host_alloc(size_t bytes, void** out, const char* what);
void pinned_host_free(void* p);

// How many device / host allocations these functions have made since the process started.
uint64_t device_alloc_count();
uint64_t host_alloc_count();

}  // namespace rt
}  // namespace jet
