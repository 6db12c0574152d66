// Reads an ONNX TensorProto file (.pb), as in the ONNX model zoo's test data (input_0.pb), through
// protobuf and the classes libonnx-dev generates. Values come from raw_data (little-endian) or
// from the typed fields (float_data, int32_data, int64_data, double_data, uint64_data), converted
// to float. Supported data types: FLOAT, FLOAT16, DOUBLE, INT64, INT32, INT8, UINT8, BOOL.
//
// Built only where ONNX and protobuf are found (JET_HAVE_ONNX); elsewhere tensor_proto_supported()
// is false and read_tensor_proto returns NOT_SUPPORTED saying so.
#pragma once

#include <string>

#include "host_array.h"
#include "jet/dnn/common.h"

namespace jet {
namespace tools {

bool tensor_proto_supported();

// `name` (may be null) receives the TensorProto's name field (empty when unset).
Status parse_tensor_proto(const void* data, size_t size, const std::string& what, HostArray* out,
                          std::string* name);
Status read_tensor_proto(const std::string& path, HostArray* out, std::string* name);

}  // namespace tools
}  // namespace jet
