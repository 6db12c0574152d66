// Every allocation the runtime makes for weights and contexts goes through these functions, so
// there is one place to see (and, in tests/runtime/test_zero_alloc.cpp, to count) them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

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

// One buffer of a chunked upload (gather_in_chunks): `bytes` for device offset `offset`, either
// copied from `src` or written by `fill(dst, begin, count)`, which writes the piece's bytes
// [begin, begin + count) at dst (a reorder); begin and count are multiples of `granule` (e.g. one
// output channel's filter), so a reorder too is split across chunks, a granule never.
struct UploadPiece {
  size_t offset = 0;
  size_t bytes = 0;
  const uint8_t* src = nullptr;
  std::function<void(uint8_t* dst, size_t begin, size_t count)> fill;
  size_t granule = 0;  // with fill: bytes is a multiple of it
};

// Gathers `pieces` (offsets increasing, each aligned to `alignment`) into two host chunks of
// `chunk` bytes that take turns, so the host fills one while the other is sent: send(c, offset,
// host, bytes) sends chunk c's bytes for device [offset, offset + bytes) (bytes between pieces
// are padding); wait(c) returns once chunk c's last send has completed, and is called before
// chunk c is written again. Every send is waited for before the function returns. False as soon
// as send or wait returns false. Requires chunk >= every fill piece's granule + alignment.
bool gather_in_chunks(const std::vector<UploadPiece>& pieces, size_t alignment, uint8_t* const chunks[2],
                      size_t chunk, const std::function<bool(int, size_t, const uint8_t*, size_t)>& send,
                      const std::function<bool(int)>& wait);

// How many device / host allocations these functions have made since the process started.
uint64_t device_alloc_count();
uint64_t host_alloc_count();

}  // namespace rt
}  // namespace jet
