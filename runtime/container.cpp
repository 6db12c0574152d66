// check_container: the file-level checks, before anything reads the FlatBuffer's contents.
#include <cstdio>
#include <cstring>
#include <string>

#include "format.h"
#include "loader.h"

namespace jet {
namespace rt {

namespace {

Status bad(const std::string& m) { return Status(StatusCode::BAD_PARAM, m); }

// The 4 or 8 bytes at p as a quoted string, non-printable bytes as \xNN.
std::string quoted_bytes(const uint8_t* p, size_t n) {
  std::string s = "'";
  for (size_t i = 0; i < n; ++i) {
    if (p[i] >= 0x20 && p[i] < 0x7f && p[i] != '\'' && p[i] != '\\') {
      s += static_cast<char>(p[i]);
    } else {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", p[i]);
      s += buf;
    }
  }
  return s + "'";
}

std::string hex64(uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%016llx", static_cast<unsigned long long>(v));
  return buf;
}

uint64_t read_le64(const uint8_t* p) {
  uint64_t v = 0;
  for (int b = 0; b < 8; ++b) v |= static_cast<uint64_t>(p[b]) << (8 * b);
  return v;
}

}  // namespace

Status check_container(const uint8_t* data, size_t size, bool verify_checksum,
                       const fb::Model** model, const uint64_t* payload_checksum) {
  *model = nullptr;
  if (size < format::kMinFileBytes) {
    return bad("file has " + std::to_string(size) + " bytes, too small for a .jet model (at least " +
               std::to_string(format::kMinFileBytes) + ")");
  }
  if (std::memcmp(data + 4, format::kIdentifier, 4) != 0) {
    return bad("not a .jet model: the FlatBuffers identifier is " + quoted_bytes(data + 4, 4) +
               ", expected 'JETM'");
  }
  const uint8_t* footer = data + size - format::kFooterBytes;
  if (std::memcmp(footer + 8, format::kFooterMagic, 8) != 0) {
    return bad("footer magic is " + quoted_bytes(footer + 8, 8) +
               ", expected 'JETSUM01' (truncated or incompletely written file?)");
  }
  const size_t payload = size - format::kFooterBytes;  // every byte the checksum covers
  if (verify_checksum) {
    const uint64_t stored = read_le64(footer);
    const uint64_t actual = payload_checksum ? *payload_checksum : model_checksum(data, payload);
    if (stored != actual) {
      return bad("checksum mismatch: the footer says " + hex64(stored) + " but the contents hash to " +
                 hex64(actual) + " (corrupted file)");
    }
  }
  // The FlatBuffer sits at the start; the weights behind it are not part of it, so verifying a
  // prefix suffices when the file is larger than what FlatBuffers can address (2 GiB).
  const size_t verify_bytes = payload < FLATBUFFERS_MAX_BUFFER_SIZE ? payload : FLATBUFFERS_MAX_BUFFER_SIZE - 1;
  // The (buf, size, depth, tables) constructor: FlatBuffers 1.12 (JetPack 5) has no Options.
  flatbuffers::Verifier verifier(data, verify_bytes, format::kVerifierMaxDepth,
                                 format::kVerifierMaxTables);
  if (!fb::VerifyModelBuffer(verifier)) {
    return bad("the FlatBuffer part of the file fails verification (corrupted file, or not a .jet "
               "model)");
  }
  const fb::Model* m = fb::GetModel(data);
  if (m->schema_major() > kSchemaMajor) {
    return Status(StatusCode::NOT_SUPPORTED,
                  "model schema version " + std::to_string(m->schema_major()) + "." +
                      std::to_string(m->schema_minor()) + " is newer than this runtime's " +
                      std::to_string(kSchemaMajor) + "." + std::to_string(kSchemaMinor) +
                      " (update the runtime, or convert the model with a matching jet-convert)");
  }
  if (m->schema_major() < 1) {
    return bad("model schema version " + std::to_string(m->schema_major()) + "." +
               std::to_string(m->schema_minor()) + " is invalid (versions start at 1.0)");
  }
  if (m->file_size() != size) {
    return bad("the file has " + std::to_string(size) + " bytes but the model says " +
               std::to_string(m->file_size()) + " (truncated or padded file)");
  }
  *model = m;
  return Status();
}

}  // namespace rt
}  // namespace jet
