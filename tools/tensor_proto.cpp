#include "tensor_proto.h"

#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "npy.h"  // read_file_bytes

#if JET_HAVE_ONNX
#include <onnx/onnx_pb.h>
#endif

namespace jet {
namespace tools {

#if JET_HAVE_ONNX

namespace {

Status proto_error(const std::string& what, const std::string& problem) {
  return Status(StatusCode::BAD_PARAM, what + ": " + problem);
}

uint64_t load_le(const uint8_t* p, size_t n) {
  uint64_t v = 0;
  for (size_t i = 0; i < n; ++i) v |= static_cast<uint64_t>(p[i]) << (8 * i);
  return v;
}

// One element of raw_data (little-endian, as ONNX specifies) as float.
float raw_to_float(int type, const uint8_t* p) {
  using T = ONNX_NAMESPACE::TensorProto;
  switch (type) {
    case T::FLOAT: {
      const uint32_t bits = static_cast<uint32_t>(load_le(p, 4));
      float f;
      std::memcpy(&f, &bits, 4);
      return f;
    }
    case T::FLOAT16: return half::half_bits_to_float(static_cast<uint16_t>(load_le(p, 2)));
    case T::DOUBLE: {
      const uint64_t bits = load_le(p, 8);
      double d;
      std::memcpy(&d, &bits, 8);
      return static_cast<float>(d);
    }
    case T::INT64: return static_cast<float>(static_cast<int64_t>(load_le(p, 8)));
    case T::INT32: return static_cast<float>(static_cast<int32_t>(static_cast<uint32_t>(load_le(p, 4))));
    case T::INT8: return static_cast<float>(static_cast<int8_t>(p[0]));
    case T::UINT8: return static_cast<float>(p[0]);
    default: return p[0] != 0 ? 1.0f : 0.0f;  // BOOL
  }
}

size_t element_size(int type) {
  using T = ONNX_NAMESPACE::TensorProto;
  switch (type) {
    case T::FLOAT: return 4;
    case T::FLOAT16: return 2;
    case T::DOUBLE: return 8;
    case T::INT64: return 8;
    case T::INT32: return 4;
    case T::INT8: return 1;
    case T::UINT8: return 1;
    case T::BOOL: return 1;
    default: return 0;  // not supported
  }
}

}  // namespace

bool tensor_proto_supported() { return true; }

Status parse_tensor_proto(const void* data, size_t size, const std::string& what, HostArray* out,
                          std::string* name) {
  using T = ONNX_NAMESPACE::TensorProto;
  if (out == nullptr) return Status(StatusCode::BAD_PARAM, "parse_tensor_proto: out is null");
  if (data == nullptr && size > 0) return Status(StatusCode::BAD_PARAM, "parse_tensor_proto: data is null");
  if (size > static_cast<size_t>(std::numeric_limits<int>::max())) {
    return proto_error(what, "the file is too large for a TensorProto (2 GiB at most)");
  }
  T tensor;
  if (!tensor.ParseFromArray(data, static_cast<int>(size))) {
    return proto_error(what, "not a valid ONNX TensorProto (protobuf parsing failed)");
  }
  const int type = tensor.data_type();
  const std::string type_name =
      T::DataType_IsValid(type) ? T::DataType_Name(static_cast<T::DataType>(type)) : std::to_string(type);
  if (type == T::UNDEFINED) {
    return proto_error(what, "the TensorProto's data_type is UNDEFINED (is this a TensorProto file?)");
  }
  const size_t esize = element_size(type);
  if (esize == 0) {
    return proto_error(what, "TensorProto data_type " + type_name +
                                 " is not supported (FLOAT, FLOAT16, DOUBLE, INT64, INT32, INT8, UINT8, BOOL are)");
  }
  if (tensor.data_location() == T::EXTERNAL) {
    return proto_error(what, "TensorProto with external data is not supported");
  }
  if (tensor.has_segment()) return proto_error(what, "segmented TensorProto is not supported");
  if (tensor.dims_size() > 64) return proto_error(what, "TensorProto has more than 64 dims");

  std::vector<int64_t> dims;
  uint64_t count = 1;
  for (int i = 0; i < tensor.dims_size(); ++i) {
    const int64_t d = tensor.dims(i);
    if (d < 0 || d > (int64_t{1} << 48)) {
      return proto_error(what, "TensorProto dim " + std::to_string(i) + " is " + std::to_string(d));
    }
    if (d != 0 && count > std::numeric_limits<uint64_t>::max() / static_cast<uint64_t>(d)) {
      return proto_error(what, "the TensorProto's element count overflows");
    }
    count *= static_cast<uint64_t>(d);
    dims.push_back(d);
  }

  // Check the stored element count before allocating anything of `count`'s size.
  uint64_t stored = 0;
  const char* field = "raw_data";
  const bool raw = tensor.has_raw_data();
  if (raw) {
    const uint64_t bytes = tensor.raw_data().size();
    if (bytes % esize != 0) {
      return proto_error(what, "raw_data holds " + std::to_string(bytes) + " bytes, not a multiple of " +
                                   type_name + "'s " + std::to_string(esize));
    }
    stored = bytes / esize;
  } else if (type == T::FLOAT) {
    field = "float_data";
    stored = static_cast<uint64_t>(tensor.float_data_size());
  } else if (type == T::DOUBLE) {
    field = "double_data";
    stored = static_cast<uint64_t>(tensor.double_data_size());
  } else if (type == T::INT64) {
    field = "int64_data";
    stored = static_cast<uint64_t>(tensor.int64_data_size());
  } else {  // FLOAT16 (as uint16 bits), INT32, INT8, UINT8, BOOL
    field = "int32_data";
    stored = static_cast<uint64_t>(tensor.int32_data_size());
  }
  if (stored != count) {
    return proto_error(what, std::string("the TensorProto's ") + field + " holds " + std::to_string(stored) +
                                 " elements but its dims need " + std::to_string(count));
  }

  out->dims = dims;
  out->source_type = type_name;
  out->values.resize(static_cast<size_t>(count));
  for (size_t i = 0; i < out->values.size(); ++i) {
    float v;
    if (raw) {
      v = raw_to_float(type, reinterpret_cast<const uint8_t*>(tensor.raw_data().data()) + i * esize);
    } else if (type == T::FLOAT) {
      v = tensor.float_data(static_cast<int>(i));
    } else if (type == T::DOUBLE) {
      v = static_cast<float>(tensor.double_data(static_cast<int>(i)));
    } else if (type == T::INT64) {
      v = static_cast<float>(tensor.int64_data(static_cast<int>(i)));
    } else if (type == T::FLOAT16) {
      v = half::half_bits_to_float(static_cast<uint16_t>(tensor.int32_data(static_cast<int>(i))));
    } else if (type == T::BOOL) {
      v = tensor.int32_data(static_cast<int>(i)) != 0 ? 1.0f : 0.0f;
    } else {
      v = static_cast<float>(tensor.int32_data(static_cast<int>(i)));
    }
    out->values[i] = v;
  }
  // Integer and bool tensors also keep their exact values.
  out->ints.clear();
  if (type == T::INT64 || type == T::INT32 || type == T::INT8 || type == T::UINT8 || type == T::BOOL) {
    out->ints.resize(static_cast<size_t>(count));
    for (size_t i = 0; i < out->ints.size(); ++i) {
      int64_t v = 0;
      if (raw) {
        const uint8_t* p = reinterpret_cast<const uint8_t*>(tensor.raw_data().data()) + i * esize;
        if (type == T::INT64) v = static_cast<int64_t>(load_le(p, 8));
        else if (type == T::INT32) v = static_cast<int32_t>(static_cast<uint32_t>(load_le(p, 4)));
        else if (type == T::INT8) v = static_cast<int8_t>(p[0]);
        else if (type == T::UINT8) v = p[0];
        else v = p[0] != 0 ? 1 : 0;
      } else if (type == T::INT64) {
        v = tensor.int64_data(static_cast<int>(i));
      } else {
        v = tensor.int32_data(static_cast<int>(i));
        if (type == T::BOOL) v = v != 0 ? 1 : 0;
      }
      out->ints[i] = v;
    }
  }
  if (name != nullptr) *name = tensor.name();
  return Status::success();
}

#else  // !JET_HAVE_ONNX

bool tensor_proto_supported() { return false; }

Status parse_tensor_proto(const void*, size_t, const std::string& what, HostArray*, std::string*) {
  return Status(StatusCode::NOT_SUPPORTED,
                what + ": this jet-run was built without ONNX TensorProto support (.pb); use .npy");
}

#endif

Status read_tensor_proto(const std::string& path, HostArray* out, std::string* name) {
  if (!tensor_proto_supported()) return parse_tensor_proto(nullptr, 0, path, out, name);
  std::vector<uint8_t> bytes;
  Status st = read_file_bytes(path, &bytes);
  if (!st.ok()) return st;
  return parse_tensor_proto(bytes.data(), bytes.size(), path, out, name);
}

}  // namespace tools
}  // namespace jet
