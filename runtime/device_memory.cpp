// device_alloc / host_alloc: the runtime's only allocation points for weights and context memory.
#include "device_memory.h"

#include <algorithm>
#include <atomic>
#include <cstring>
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

bool gather_in_chunks(const std::vector<UploadPiece>& pieces, size_t alignment, uint8_t* const chunks[2],
                      size_t chunk, const std::function<bool(int, size_t, const uint8_t*, size_t)>& send,
                      const std::function<bool(int)>& wait) {
  // Pieces start aligned and a chunk ends on a multiple of the alignment, so a piece never starts
  // past the end of the chunk that holds the one before it.
  (void)alignment;
  int cur = 0;
  bool pending[2] = {false, false};
  size_t start = pieces.empty() ? 0 : pieces[0].offset / alignment * alignment;  // chunk cur's device offset
  // Sends chunk cur up to device offset `end`; the other chunk becomes current once its own last
  // send has completed.
  auto flush = [&](size_t end) {
    if (end > start) {
      if (!send(cur, start, chunks[cur], end - start)) return false;
      pending[cur] = true;
    }
    cur ^= 1;
    start = end;
    if (pending[cur] && !wait(cur)) return false;
    pending[cur] = false;
    return true;
  };
  size_t end = start;
  for (const UploadPiece& p : pieces) {
    if (p.bytes == 0) continue;
    if (p.fill) {
      if (p.offset + p.bytes > start + chunk && !flush(p.offset)) return false;
      p.fill(chunks[cur] + (p.offset - start));
    } else {
      for (size_t copied = 0; copied < p.bytes;) {
        if (p.offset + copied == start + chunk && !flush(start + chunk)) return false;
        const size_t n = std::min(p.bytes - copied, start + chunk - (p.offset + copied));
        std::memcpy(chunks[cur] + (p.offset + copied - start), p.src + copied, n);
        copied += n;
      }
    }
    end = p.offset + p.bytes;
  }
  if (!flush(end)) return false;
  for (int c = 0; c < 2; ++c) {
    if (pending[c] && !wait(c)) return false;
  }
  return true;
}

uint64_t device_alloc_count() { return g_device_allocs.load(std::memory_order_relaxed); }
uint64_t host_alloc_count() { return g_host_allocs.load(std::memory_order_relaxed); }

}  // namespace rt
}  // namespace jet
