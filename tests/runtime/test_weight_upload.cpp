// gather_in_chunks (runtime/device_memory.h), the weight upload's host side: pieces gathered into
// two chunks that take turns while the other one is "sent". The sends here are simulated DMA that
// reads the chunk only when it is waited for (or at the end), so a chunk written again before its
// wait would show up as wrong bytes at the destination.
#include <doctest/doctest.h>

#include <cstring>
#include <vector>

#include "device_memory.h"
#include "model_util.h"

using namespace jet;
using jet::test::uniform_int;

namespace {

struct Layout {
  std::vector<rt::UploadPiece> pieces;
  std::vector<uint8_t> expected;  // the destination as it must end up (padding: not checked)
  std::vector<char> covered;      // bytes that belong to a piece
  std::vector<std::vector<uint8_t>> sources;
};

// Random pieces at `alignment`-aligned offsets, some written by fill() in granules (each granule
// byte-reversed, as a reorder of one output channel's filter would), the others copied; granules
// no larger than chunk - alignment (gather_in_chunks' precondition), pieces of any size. A fill
// called with a range that is not whole granules counts in `bad_fills`.
Layout random_layout(int count, size_t alignment, size_t chunk, size_t max_bytes, int* bad_fills) {
  Layout l;
  l.sources.resize(static_cast<size_t>(count));
  size_t offset = 0;
  for (int i = 0; i < count; ++i) {
    const bool reorder = uniform_int(0, 2) == 0;
    const size_t granule = reorder ? static_cast<size_t>(uniform_int(1, static_cast<int64_t>(chunk - alignment))) : 1;
    const size_t bytes = reorder ? granule * static_cast<size_t>(uniform_int(0, 6))
                                 : static_cast<size_t>(uniform_int(0, static_cast<int64_t>(max_bytes)));
    std::vector<uint8_t>& src = l.sources[static_cast<size_t>(i)];
    src.resize(bytes);
    for (uint8_t& b : src) b = static_cast<uint8_t>(uniform_int(0, 255));
    rt::UploadPiece p;
    p.offset = offset;
    p.bytes = bytes;
    if (reorder) {
      const std::vector<uint8_t>* s = &src;
      p.granule = granule;
      p.fill = [s, granule, bad_fills](uint8_t* dst, size_t begin, size_t n) {
        if (begin % granule != 0 || n % granule != 0 || n == 0 || begin + n > s->size()) ++*bad_fills;
        for (size_t k = 0; k < n && begin + k < s->size(); ++k) {
          const size_t g = (begin + k) / granule * granule;
          dst[k] = (*s)[g + granule - 1 - (begin + k - g)];
        }
      };
    } else {
      p.src = src.data();
    }
    l.pieces.push_back(p);
    l.expected.resize(offset + bytes);
    l.covered.resize(offset + bytes, 0);
    for (size_t k = 0; k < bytes; ++k) {
      const size_t g = k / granule * granule;
      l.expected[offset + k] = reorder ? src[g + granule - 1 - (k - g)] : src[k];
      l.covered[offset + k] = 1;
    }
    offset = (offset + bytes + alignment - 1) / alignment * alignment;
  }
  return l;
}

struct DeferredDma {
  std::vector<uint8_t>* device = nullptr;
  struct Copy {
    size_t offset;
    const uint8_t* host;
    size_t bytes;
  };
  std::vector<Copy> queued[2];
  int sends = 0, waits = 0;
  size_t chunk = 0;
  bool bounds_ok = true;
  bool send(int c, size_t offset, const uint8_t* host, size_t bytes) {
    ++sends;
    if (bytes > chunk || offset + bytes > device->size() + chunk) bounds_ok = false;
    queued[c].push_back({offset, host, bytes});
    return true;
  }
  bool wait(int c) {
    ++waits;
    for (const Copy& q : queued[c]) {
      if (q.offset + q.bytes > device->size()) device->resize(q.offset + q.bytes);
      std::memcpy(device->data() + q.offset, q.host, q.bytes);
    }
    queued[c].clear();
    return true;
  }
};

}  // namespace

TEST_CASE("gather_in_chunks puts every piece at its offset, never rewriting a chunk before its wait") {
  for (int trial = 0; trial < 200; ++trial) {
    const size_t alignment = trial % 2 ? 256 : 16;
    const size_t chunk = alignment * static_cast<size_t>(uniform_int(2, 8));
    int bad_fills = 0;
    const Layout l = random_layout(static_cast<int>(uniform_int(0, 12)), alignment, chunk, 5 * chunk, &bad_fills);
    std::vector<uint8_t> chunk_memory(2 * chunk, 0xEE);
    uint8_t* const chunks[2] = {chunk_memory.data(), chunk_memory.data() + chunk};
    std::vector<uint8_t> device(l.expected.size(), 0xCD);
    DeferredDma dma;
    dma.device = &device;
    dma.chunk = chunk;
    INFO("trial " << trial << ": " << l.pieces.size() << " pieces, chunk " << chunk << ", alignment " << alignment);
    REQUIRE(rt::gather_in_chunks(
        l.pieces, alignment, chunks, chunk,
        [&](int c, size_t o, const uint8_t* h, size_t n) { return dma.send(c, o, h, n); },
        [&](int c) { return dma.wait(c); }));
    CHECK(dma.bounds_ok);
    CHECK(bad_fills == 0);
    // Everything sent was waited for before the function returned.
    CHECK(dma.queued[0].empty());
    CHECK(dma.queued[1].empty());
    REQUIRE(device.size() >= l.expected.size());
    size_t wrong = 0;
    for (size_t k = 0; k < l.expected.size(); ++k) wrong += l.covered[k] && device[k] != l.expected[k];
    CHECK(wrong == 0);
  }
}

TEST_CASE("gather_in_chunks: a failed send or wait stops it with false") {
  std::vector<uint8_t> a(1000, 1), b(600, 2);
  std::vector<rt::UploadPiece> pieces(2);
  pieces[0].offset = 0;
  pieces[0].bytes = a.size();
  pieces[0].src = a.data();
  pieces[1].offset = 1024;
  pieces[1].bytes = b.size();
  pieces[1].src = b.data();
  std::vector<uint8_t> memory(2 * 512);
  uint8_t* const chunks[2] = {memory.data(), memory.data() + 512};
  int sends = 0;
  CHECK_FALSE(rt::gather_in_chunks(
      pieces, 256, chunks, 512, [&](int, size_t, const uint8_t*, size_t) { return ++sends < 2; },
      [](int) { return true; }));
  CHECK(sends == 2);  // stopped at the failing one
  int waits = 0;
  CHECK_FALSE(rt::gather_in_chunks(
      pieces, 256, chunks, 512, [](int, size_t, const uint8_t*, size_t) { return true; },
      [&](int) { return ++waits < 1; }));
  CHECK(waits == 1);
  // A reorder whose granule does not fit a chunk with a slot's padding: false, not a loop.
  std::vector<rt::UploadPiece> big(1);
  big[0].bytes = 2 * 300;
  big[0].granule = 300;
  big[0].fill = [](uint8_t*, size_t, size_t) {};
  CHECK_FALSE(rt::gather_in_chunks(
      big, 256, chunks, 512, [](int, size_t, const uint8_t*, size_t) { return true; }, [](int) { return true; }));
  // No pieces: nothing sent, success.
  CHECK(rt::gather_in_chunks(
      {}, 256, chunks, 512, [](int, size_t, const uint8_t*, size_t) { return false; }, [](int) { return false; }));
}
