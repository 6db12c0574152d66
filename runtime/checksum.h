// The .jet checksum (jet::model_checksum) fed in pieces: FileBytes::read_file hashes a model's
// bytes on a second thread while the first reads the rest.
#pragma once

#include <cstddef>
#include <cstdint>

namespace jet {
namespace rt {

class ChecksumStream {
 public:
  // Folds in `bytes` bytes, a multiple of 8 (every piece but the last).
  void add_words(const uint8_t* p, size_t bytes);
  // Folds in the last piece (any length) and returns model_checksum of all `total` bytes fed.
  uint64_t finish(const uint8_t* p, size_t bytes, size_t total);

 private:
  uint64_t h_ = 0xcbf29ce484222325ull;  // FNV-1a's offset basis
};

}  // namespace rt
}  // namespace jet
