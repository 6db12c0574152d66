// The bytes of a model file: a read-only POSIX mapping of the file, or an owned, 64-byte aligned
// copy of the file or of caller memory. Either way the base is aligned for every weight buffer (64-byte file
// offsets), so CPU kernels read weights in place.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "jet/dnn/common.h"

namespace jet {
namespace rt {

class FileBytes {
 public:
  FileBytes() = default;
  ~FileBytes() { release(); }
  FileBytes(const FileBytes&) = delete;
  FileBytes& operator=(const FileBytes&) = delete;
  FileBytes(FileBytes&& o) noexcept;
  FileBytes& operator=(FileBytes&& o) noexcept;

  // Maps `path` read-only (MAP_PRIVATE). Errors name the path and the system's reason. FIFOs and
  // devices are refused without blocking. The mapping shares the file's pages: a process that
  // truncates or rewrites the file in place changes (or, past the new end, removes) them under
  // us; see LoadOptions::copy_file.
  static Status map_file(const std::string& path, FileBytes* out);
  // Reads `path` into an owned aligned buffer: later changes to the file cannot reach us. With
  // `checksum_payload`, the .jet checksum of every byte before the footer is computed too (on a
  // second thread, a piece behind the reads, for files of several MB) and kept for
  // payload_checksum().
  static Status read_file(const std::string& path, FileBytes* out, bool checksum_payload = false);
  // Copies `size` bytes into an owned aligned buffer.
  static Status copy_of(const void* data, size_t size, FileBytes* out);

  const uint8_t* data() const { return data_; }
  size_t size() const { return size_; }
  void release();
  // The checksum read_file computed of every byte before the footer; false when none was.
  bool payload_checksum(uint64_t* out) const {
    if (has_checksum_) *out = checksum_;
    return has_checksum_;
  }

 private:
  const uint8_t* data_ = nullptr;
  size_t size_ = 0;
  bool mapped_ = false;  // munmap vs free
  bool has_checksum_ = false;
  uint64_t checksum_ = 0;
};

}  // namespace rt
}  // namespace jet
