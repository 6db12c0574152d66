// A small reader and writer of NumPy .npy files (format versions 1.0, 2.0 and 3.0), our own.
//
// File layout: "\x93NUMPY", major and minor version bytes, the header length (2 bytes
// little-endian in 1.0, 4 bytes in 2.0/3.0), then the header: a Python dict literal such as
//   {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
// padded with spaces and ending in '\n', then the raw element bytes.
//
// Reading accepts little-endian (or byte-order-free) '<f4', '<f2', '<f8', '<i8', '<i4', '|u1',
// '|b1' and converts the values to float. Fortran order, big-endian data, structured dtypes and
// anything malformed (bad header, shape overflow, wrong data size) is an error naming the file and
// the problem: the parser is written for hostile input and never crashes.
// Writing produces version 1.0 (2.0 when the header would not fit) with descr '<f4', '<f2', '<i4',
// '<i8' or '|b1' (the tensor's dtype: integer outputs are written exactly). Integer and bool files
// are read with their exact values too (HostArray::ints).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "host_array.h"
#include "jet/dnn/common.h"

namespace jet {
namespace tools {

// Parses an in-memory .npy file. `what` names it in error messages (usually the path).
Status parse_npy(const void* data, size_t size, const std::string& what, HostArray* out);
Status read_npy(const std::string& path, HostArray* out);

// The bytes of a .npy file holding `dims` (C order) of `dtype` (F32 -> '<f4', F16 -> '<f2',
// I32 -> '<i4', I64 -> '<i8', BOOL -> '|b1');
// `data` holds product(dims) packed elements of that dtype.
Status encode_npy(const std::vector<int64_t>& dims, DType dtype, const void* data,
                  std::vector<uint8_t>* out);
Status write_npy(const std::string& path, const std::vector<int64_t>& dims, DType dtype,
                 const void* data);

// Reads a whole regular file (at most 64 GiB) into memory: BAD_PARAM naming the path and the
// reason when it cannot be opened or read, or is not a regular file (jet::read_regular_file).
Status read_file_bytes(const std::string& path, std::vector<uint8_t>* out);
// jet::write_file_atomically: a failed write leaves an existing file as it was.
Status write_file_bytes(const std::string& path, const void* data, size_t size);

}  // namespace tools
}  // namespace jet
