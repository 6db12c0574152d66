// Reading and writing whole files safely: the one way every jetinfer tool and library writes a
// file (models, .npy outputs, SVG, JSON, images) and reads an input it does not map.
//
// write_file_atomically(path, bytes):
//   - a regular file (or a new one) is replaced atomically: the bytes go to an unnamed temporary
//     file in the target's directory (O_TMPFILE; where the file system lacks it, a mkstemp file
//     named ".<name>.tmp-XXXXXX"), are fsynced, and the file is renamed over the target. A
//     failure at any step (disk full, `ulimit -f`, no permission) leaves the previous file as it
//     was and removes the temporary file; an existing file keeps its permission bits.
//   - a symbolic link is followed: its target is replaced (or created), never the link itself.
//   - a character device or FIFO is written through (`-o /dev/null` works and /dev/null stays a
//     device); a FIFO without a reader is refused instead of blocking. A block device, socket or
//     directory is refused, saying what it is. Nothing that the call did not create is removed.
//   Errors name the target (never the temporary file) and give the system's reason.
//
// read_regular_file(path, max_bytes, what, bytes): reads a whole regular file of at most
// `max_bytes`. FIFOs, devices (/dev/zero) and directories are refused without blocking (the file
// is opened with O_NONBLOCK and checked with fstat before any read); `what` ("ONNX model",
// "labels file") names the file's role in the size-limit message.
//
// same_file(a, b): true when both paths exist and are the same file (symlinks followed), so a
// tool can refuse to write over its own input.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "jet/dnn/common.h"

namespace jet {

Status write_file_atomically(const std::string& path, const void* data, size_t size);

Status read_regular_file(const std::string& path, size_t max_bytes, const std::string& what,
                         std::vector<uint8_t>* bytes);

bool same_file(const std::string& a, const std::string& b);

// A short noun for a file type: "a directory", "a FIFO", "a character device", ...
// (`mode` is a struct stat st_mode).
const char* file_type_name(unsigned mode);

}  // namespace jet
