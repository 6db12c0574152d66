// model_checksum: the .jet file checksum (see jet/runtime.h and schema/model.fbs).
#include <cstring>

#include "jet/runtime.h"

namespace jet {

uint64_t model_checksum(const void* data, size_t size) {
  // FNV-1a's offset basis and prime, applied to 64-bit words rather than bytes: for a fixed
  // state, xor-then-multiply-by-an-odd-number is a bijection of the word, so changing any one
  // word (any flipped byte) always changes the result. Words are read little-endian.
  const uint64_t prime = 0x100000001b3ull;
  uint64_t h = 0xcbf29ce484222325ull;
  const unsigned char* p = static_cast<const unsigned char*>(data);
  size_t i = 0;
  // The byte-by-byte assembly is not folded into one load by gcc 9-11 (-O2): a whole-word load
  // where the host is little-endian makes the loop bound by the multiply alone (51 MB: 20 -> ~6 ms).
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  for (; i + 8 <= size; i += 8) {
    uint64_t w;
    std::memcpy(&w, p + i, 8);
    h = (h ^ w) * prime;
  }
#else
  for (; i + 8 <= size; i += 8) {
    uint64_t w = 0;
    for (int b = 0; b < 8; ++b) w |= static_cast<uint64_t>(p[i + b]) << (8 * b);
    h = (h ^ w) * prime;
  }
#endif
  if (i < size) {
    uint64_t w = 0;
    for (int b = 0; i + b < size; ++b) w |= static_cast<uint64_t>(p[i + b]) << (8 * b);
    h = (h ^ w) * prime;
  }
  h = (h ^ static_cast<uint64_t>(size)) * prime;
  return h ^ (h >> 29);
}

}  // namespace jet
