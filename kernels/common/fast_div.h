// Division by a divisor fixed on the host, in the kernels' index math: a multiply-high, an add
// and a shift instead of the ~20-instruction sequence an integer division compiles to. The
// convolution loaders divide each output row by the output extents before their first copy, so
// these sit on the critical path of every block (bench/NOTES.md, 2026-11-26 fifth session).
// Usable from host and CUDA device code.
#pragma once

#include <cstdint>

#if defined(__CUDACC__)
#define JET_FAST_DIV_HD __host__ __device__
#else
#define JET_FAST_DIV_HD
#endif

namespace jet {

// n / d and n % d for 0 <= n < 2^31 and 1 <= d < 2^31. With s = ceil(log2 d) and
// m = floor(2^32 * (2^s - d) / d) + 1, n / d = (mulhi(n, m) + n) >> s (the round-up method);
// mulhi(n, m) < n keeps the sum below 2^32.
struct FastDiv {
  int d = 1;
  uint32_t mul = 1;
  uint32_t shift = 0;

  static FastDiv make(int divisor) {
    FastDiv f;
    f.d = divisor;
    f.shift = 0;
    while ((uint64_t(1) << f.shift) < static_cast<uint64_t>(divisor)) ++f.shift;
    const uint64_t num = (uint64_t(1) << 32) * ((uint64_t(1) << f.shift) - divisor);
    f.mul = static_cast<uint32_t>(num / static_cast<uint64_t>(divisor) + 1);
    return f;
  }
  JET_FAST_DIV_HD int div(int n) const {
    const uint32_t u = static_cast<uint32_t>(n);
#if defined(__CUDA_ARCH__)
    const uint32_t hi = __umulhi(u, mul);
#else
    const uint32_t hi = static_cast<uint32_t>((static_cast<uint64_t>(u) * mul) >> 32);
#endif
    return static_cast<int>((hi + u) >> shift);
  }
  // n / d, with n % d in *rem.
  JET_FAST_DIV_HD int divmod(int n, int* rem) const {
    const int q = div(n);
    *rem = n - q * d;
    return q;
  }
};

}  // namespace jet
