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
  int cur = 0;
  bool pending[2] = {false, false};
  size_t start = pieces.empty() ? 0 : pieces[0].offset;  // chunk cur's device offset
  // Sends chunk cur up to device offset `end`; the other chunk becomes current, starting at `end`,
  // once its own last send has completed.
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
  // Room for `need` bytes at device offset pos (>= start) in the current chunk, flushing if there
  // is none. A piece starts at most alignment - 1 bytes of padding past the end of the one before,
  // which ended within the chunk: after a flush at min(pos, start + chunk), pos - start < alignment.
  auto room_for = [&](size_t pos, size_t need) {
    return pos + need <= start + chunk || flush(std::min(pos, start + chunk));
  };
  size_t end = start;
  for (const UploadPiece& p : pieces) {
    if (p.bytes == 0) continue;
    if (p.fill && (p.granule == 0 || p.bytes % p.granule != 0 || p.granule + alignment > chunk)) return false;
    for (size_t done = 0; done < p.bytes;) {
      const size_t pos = p.offset + done;
      if (!room_for(pos, p.fill ? p.granule : 1)) return false;
      size_t n = std::min(p.bytes - done, start + chunk - pos);
      if (p.fill) {
        n = n / p.granule * p.granule;
        p.fill(chunks[cur] + (pos - start), done, n);
      } else {
        std::memcpy(chunks[cur] + (pos - start), p.src + done, n);
      }
      done += n;
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
