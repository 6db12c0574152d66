// A tensor read from a file (.npy or ONNX TensorProto .pb), as the CLIs use it: packed row-major
// values converted to float. float holds every f16 value exactly, so an f16 file converted back
// to f16 is unchanged; wider types (f64, i64, i32) are rounded to the nearest float, and integer
// files also keep their exact values in `ints`.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace jet {
namespace tools {

struct HostArray {
  std::vector<int64_t> dims;   // empty for a scalar
  std::vector<float> values;   // product(dims) values, C order
  // The exact values when the file stored integers or bools (int64, int32, uint8, bool), else
  // empty: integer tensors are fed from these, not from the rounded floats.
  std::vector<int64_t> ints;
  std::string source_type;     // what the file stored, for messages: "<f8", "DOUBLE", ...
};

}  // namespace tools
}  // namespace jet
