// The counting allocation functions (alloc_counter.h). Compiled into each test executable that
// counts, so that the interposition is scoped to it.
#include "alloc_counter.h"

#include <cstdlib>
#include <new>

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define JET_TEST_NO_INTERPOSE 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || __has_feature(memory_sanitizer)
#define JET_TEST_NO_INTERPOSE 1
#endif
#endif

namespace {
// Only the armed thread's allocations count (driver threads may allocate on their own schedule).
thread_local bool t_armed = false;
thread_local long t_count = 0;

// To find an allocation site: JET_DEBUG_ALLOC=1 gdb -ex 'break (anonymous namespace)::debug_hook'
__attribute__((noinline)) void debug_hook() { asm volatile(""); }

[[maybe_unused]] void count_one() {
  if (t_armed) {
    ++t_count;
    if (std::getenv("JET_DEBUG_ALLOC")) debug_hook();
  }
}

}  // namespace

namespace jet {
namespace test {

bool alloc_counting_available() {
#if defined(JET_TEST_NO_INTERPOSE)
  return false;
#else
  // JET_TEST_NO_ALLOC_COUNT: set by gpu-check for its compute-sanitizer runs, whose injected
  // library allocates on the calling thread inside every CUDA call it intercepts.
  return std::getenv("JET_TEST_NO_ALLOC_COUNT") == nullptr;
#endif
}

void arm_alloc_counter() {
  t_count = 0;
  t_armed = true;
}

long disarm_alloc_counter() {
  t_armed = false;
  return t_count;
}

}  // namespace test
}  // namespace jet

#if !defined(JET_TEST_NO_INTERPOSE)
// glibc's implementations, which the replacements forward to.
extern "C" {
void* __libc_malloc(size_t);
void* __libc_calloc(size_t, size_t);
void* __libc_realloc(void*, size_t);
void* __libc_memalign(size_t, size_t);
void __libc_free(void*);

void* malloc(size_t n) {
  count_one();
  return __libc_malloc(n);
}
void* calloc(size_t n, size_t s) {
  count_one();
  return __libc_calloc(n, s);
}
void* realloc(void* p, size_t n) {
  count_one();
  return __libc_realloc(p, n);
}
void* memalign(size_t a, size_t n) {
  count_one();
  return __libc_memalign(a, n);
}
void* aligned_alloc(size_t a, size_t n) {
  count_one();
  return __libc_memalign(a, n);
}
int posix_memalign(void** out, size_t a, size_t n) {
  count_one();
  if (a < sizeof(void*) || (a & (a - 1)) != 0) return 22;  // EINVAL
  void* p = __libc_memalign(a, n);
  if (!p) return 12;  // ENOMEM
  *out = p;
  return 0;
}
void free(void* p) { __libc_free(p); }
}

void* operator new(size_t n) {
  void* p = malloc(n ? n : 1);
  if (!p) throw std::bad_alloc();
  return p;
}
void* operator new[](size_t n) { return operator new(n); }
void* operator new(size_t n, const std::nothrow_t&) noexcept { return malloc(n ? n : 1); }
void* operator new[](size_t n, const std::nothrow_t&) noexcept { return malloc(n ? n : 1); }
void* operator new(size_t n, std::align_val_t a) {
  void* p = memalign(static_cast<size_t>(a), n ? n : 1);
  if (!p) throw std::bad_alloc();
  return p;
}
void* operator new[](size_t n, std::align_val_t a) { return operator new(n, a); }
void operator delete(void* p) noexcept { free(p); }
void operator delete[](void* p) noexcept { free(p); }
void operator delete(void* p, size_t) noexcept { free(p); }
void operator delete[](void* p, size_t) noexcept { free(p); }
void operator delete(void* p, std::align_val_t) noexcept { free(p); }
void operator delete[](void* p, std::align_val_t) noexcept { free(p); }
void operator delete(void* p, size_t, std::align_val_t) noexcept { free(p); }
void operator delete[](void* p, size_t, std::align_val_t) noexcept { free(p); }
#endif

