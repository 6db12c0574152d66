// model_checksum: the .jet file checksum (see jet/runtime.h and schema/model.fbs).
#include "checksum.h"

#include <cstring>

#include "jet/runtime.h"

namespace jet {
namespace rt {
namespace {
constexpr uint64_t kPrime = 0x100000001b3ull;  // FNV-1a's prime
}

void ChecksumStream::add_words(const uint8_t* p, size_t bytes) {
  // FNV-1a's offset basis and prime, applied to 64-bit words rather than bytes: for a fixed
  // state, xor-then-multiply-by-an-odd-number is a bijection of the word, so changing any one
  // word (any flipped byte) always changes the result. Words are read little-endian.
  uint64_t h = h_;
  // The byte-by-byte assembly is not folded into one load by gcc 9-11 (-O2): a whole-word load
  // where the host is little-endian makes the loop bound by the multiply alone (51 MB: 20 -> ~6 ms).
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  for (size_t i = 0; i + 8 <= bytes; i += 8) {
    uint64_t w;
    std::memcpy(&w, p + i, 8);
    h = (h ^ w) * kPrime;
  }
#else
  for (size_t i = 0; i + 8 <= bytes; i += 8) {
    uint64_t w = 0;
    for (int b = 0; b < 8; ++b) w |= static_cast<uint64_t>(p[i + b]) << (8 * b);
    h = (h ^ w) * kPrime;
  }
#endif
  h_ = h;
}

uint64_t ChecksumStream::finish(const uint8_t* p, size_t bytes, size_t total) {
  const size_t whole = bytes / 8 * 8;
  add_words(p, whole);
  uint64_t h = h_;
  if (whole < bytes) {
    uint64_t w = 0;
    for (size_t b = 0; whole + b < bytes; ++b) w |= static_cast<uint64_t>(p[whole + b]) << (8 * b);
    h = (h ^ w) * kPrime;
  }
  h = (h ^ static_cast<uint64_t>(total)) * kPrime;
  return h ^ (h >> 29);
}

}  // namespace rt

uint64_t model_checksum(const void* data, size_t size) {
  rt::ChecksumStream s;
  return s.finish(static_cast<const uint8_t*>(data), size, size);
}

}  // namespace jet
