// The .jet container around the FlatBuffer (schema/model.fbs): the footer, the alignments and
// the limits the loader enforces. One place for the numbers that the writer and the loader share.
#pragma once

#include <cstddef>
#include <cstdint>

namespace jet {
namespace format {

// [ FlatBuffer "JETM" ][ weights, 64-aligned ][ u64 checksum (little endian) ][ "JETSUM01" ]
constexpr size_t kFooterBytes = 16;
constexpr char kFooterMagic[9] = "JETSUM01";  // 8 bytes in the file, no terminator
constexpr char kIdentifier[5] = "JETM";       // FlatBuffers file identifier, bytes 4..7

// Weight buffers start on 64-byte file offsets, so an mmapped file (page aligned) hands out
// weight pointers every CPU kernel may read with vector loads.
constexpr size_t kBufferAlignment = 64;
// Arena regions start on 256-byte offsets (what cudaMalloc guarantees for the base).
constexpr size_t kArenaAlignment = 256;
// Each weight buffer's slot in the engine's device allocation is 256-aligned as well.
constexpr size_t kDeviceWeightAlignment = 256;

// The smallest file that can hold a FlatBuffer root offset, the identifier and the footer.
constexpr size_t kMinFileBytes = 8 + kFooterBytes;

// Bounds for the FlatBuffers verifier and for the loader's own work: far above any real model,
// low enough that a hostile file cannot make verification or the quadratic checks run for hours.
constexpr unsigned kVerifierMaxDepth = 16;
constexpr unsigned kVerifierMaxTables = 1u << 22;
constexpr size_t kMaxTensors = 1u << 18;
constexpr size_t kMaxOps = 1u << 18;
constexpr size_t kMaxOpInputs = 1u << 12;  // concat fan-in

}  // namespace format
}  // namespace jet
