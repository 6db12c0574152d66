// Division by a divisor fixed on the host, for the kernels' index math: a multiply-high, an add
// and a shift instead of the ~20-instruction sequence of a 32-bit division (or the longer 64-bit
// one). The element-wise, reduction, transform and pad kernels decompose every element's index
// with it; the convolution loaders divide each output row by the output extents before a block's
// first copy (bench/NOTES.md, 2026-11-26 fifth session). Usable from host and CUDA device code.
#pragma once

#include <cstdint>

#if defined(__CUDACC__)
#define JET_FAST_DIV_HD __host__ __device__
#else
#define JET_FAST_DIV_HD
#endif

namespace jet {

// n / d for a divisor d >= 1. For 0 <= n < 2^31 and d < 2^31, with s = ceil(log2 d) and
// m = floor(2^32 * (2^s - d) / d) + 1: n / d = (mulhi(n, m) + n) >> s (CUTLASS's round-up
// method; mulhi(n, m) < n keeps the sum below 2^32). div() falls back to a 64-bit division for
// larger operands; div32() / divmod() are for callers that guarantee the 31-bit range.
struct FastDiv {
  int64_t d = 1;
  uint32_t mul = 1;
  uint32_t shift = 0;

  static FastDiv make(int64_t divisor) {
    FastDiv f;
    f.d = divisor;
    if (divisor <= 0x7fffffff) {
      while ((uint64_t(1) << f.shift) < static_cast<uint64_t>(divisor)) ++f.shift;
      const uint64_t num = (uint64_t(1) << 32) * ((uint64_t(1) << f.shift) - divisor);
      f.mul = static_cast<uint32_t>(num / static_cast<uint64_t>(divisor) + 1);
    }
    return f;
  }
  // 0 <= n < 2^31 and d < 2^31.
  JET_FAST_DIV_HD int div32(int n) const {
    const uint32_t u = static_cast<uint32_t>(n);
#if defined(__CUDA_ARCH__)
    const uint32_t hi = __umulhi(u, mul);
#else
    const uint32_t hi = static_cast<uint32_t>((static_cast<uint64_t>(u) * mul) >> 32);
#endif
    return static_cast<int>((hi + u) >> shift);
  }
  // n / d, with n % d in *rem (the range of div32).
  JET_FAST_DIV_HD int divmod(int n, int* rem) const {
    const int q = div32(n);
    *rem = n - q * static_cast<int>(d);
    return q;
  }
  // Any 0 <= n: the fast path when both fit in 31 bits.
  JET_FAST_DIV_HD int64_t div(int64_t n) const {
    if (n <= 0x7fffffff && d <= 0x7fffffff) return div32(static_cast<int>(n));
    return n / d;
  }
};

}  // namespace jet
