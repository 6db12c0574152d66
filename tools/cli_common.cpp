#include "cli_common.h"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <exception>
#include <new>

#if JET_HAVE_CUDA
#include <cuda_runtime.h>
#endif

namespace jet {
namespace tools {

bool take_model_argument(const std::string& arg, std::string* model, std::string* error) {
  if (!arg.empty() && arg[0] == '-') {
    *error = "unknown option '" + arg + "'";
    return false;
  }
  if (!model->empty()) {
    *error = "more than one model given ('" + *model + "', '" + arg + "')";
    return false;
  }
  *model = arg;
  return true;
}

Status cuda_device_available() {
#if JET_HAVE_CUDA
  int count = 0;
  const cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess || count == 0) {
    cudaGetLastError();  // leave no error behind
    return Status(StatusCode::NOT_SUPPORTED,
                  std::string("this build runs on CUDA by default, but no CUDA device is usable here (") +
                      (err != cudaSuccess ? cudaGetErrorString(err) : "no devices") + "); run on the CPU with --device cpu");
  }
  return Status::success();
#else
  return Status(StatusCode::NOT_SUPPORTED, "this build has no CUDA backend; run on the CPU with --device cpu");
#endif
}

Status load_engine(const std::string& path, Backend backend, std::shared_ptr<Engine>* engine,
                   std::unique_ptr<ExecutionContext>* ctx) {
  LoadOptions load;
  load.backend = backend;
  // The tools own a copy of the file: `cp new.jet live.jet` while jet-bench runs on live.jet
  // cannot crash it (runtime/README.md, "Replacing a model file under a running process").
  load.copy_file = true;
  if (backend == Backend::CUDA) {
    const Status device = cuda_device_available();
    if (!device.ok()) return device;
  }
  Status st = Engine::load(path, load, engine);
  if (!st.ok() || ctx == nullptr) return st;
  return (*engine)->create_context(ctx);
}

bool parse_backend(const std::string& text, Backend* out) {
  if (text == "cpu") {
    *out = Backend::CPU;
  } else if (text == "cuda") {
    *out = Backend::CUDA;
  } else {
    return false;
  }
  return true;
}

const char* backend_name(Backend b) { return b == Backend::CPU ? "cpu" : "cuda"; }

std::string format_dims(const std::vector<int64_t>& dims) { return dims_text(dims); }

std::string fixed(double value, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.*f", decimals, value);
  return buf;
}

std::string format_bytes(size_t bytes) {
  const double b = static_cast<double>(bytes);
  if (bytes < 1024) return std::to_string(bytes) + " B";
  if (b < 1024.0 * 1024.0) return fixed(b / 1024.0, 1) + " KiB";
  if (b < 1024.0 * 1024.0 * 1024.0) return fixed(b / (1024.0 * 1024.0), 2) + " MiB";
  return fixed(b / (1024.0 * 1024.0 * 1024.0), 2) + " GiB";
}

std::string json_string(const std::string& text) {
  std::string s = "\"";
  for (char c : text) {
    const unsigned char u = static_cast<unsigned char>(c);
    if (c == '"') {
      s += "\\\"";
    } else if (c == '\\') {
      s += "\\\\";
    } else if (c == '\n') {
      s += "\\n";
    } else if (c == '\t') {
      s += "\\t";
    } else if (c == '\r') {
      s += "\\r";
    } else if (u < 0x20 || u == 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof(buf), "\\u%04x", u);
      s += buf;
    } else {
      s += c;  // UTF-8 bytes pass through unchanged
    }
  }
  return s + "\"";
}

std::string json_number(double value) {
  if (!std::isfinite(value)) return "null";
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.9g", value);
  return buf;
}

std::string sanitize_file_name(const std::string& name) {
  std::string s = name;
  for (char& c : s) {
    const bool keep = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
                      c == '.' || c == '_' || c == '-';
    if (!keep) c = '_';
  }
  // "." and ".." would name directories, an empty name no file at all.
  if (s.empty() || s == "." || s == "..") s = "_" + s;
  return s;
}

const char* tensor_role_name(TensorRole role) {
  switch (role) {
    case TensorRole::INPUT: return "input";
    case TensorRole::OUTPUT: return "output";
    case TensorRole::CONSTANT: return "constant";
    case TensorRole::ACTIVATION: return "activation";
  }
  return "?";
}

int64_t element_count(const std::vector<int64_t>& dims) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

namespace {

// The element offset (in elements) of each logical index in C order, for info's strides.
// Packed tensors (no strides given) map index i to i.
std::vector<size_t> element_offsets(const TensorInfo& info) {
  const int64_t count = element_count(info.dims);
  std::vector<size_t> offsets(static_cast<size_t>(count < 0 ? 0 : count));
  const bool strided = info.strides.size() == info.dims.size() && !info.dims.empty();
  if (!strided) {
    for (size_t i = 0; i < offsets.size(); ++i) offsets[i] = i;
    return offsets;
  }
  std::vector<int64_t> index(info.dims.size(), 0);
  for (size_t i = 0; i < offsets.size(); ++i) {
    int64_t off = 0;
    for (size_t d = 0; d < index.size(); ++d) off += index[d] * info.strides[d];
    offsets[i] = static_cast<size_t>(off);
    for (size_t d = index.size(); d-- > 0;) {  // advance the C-order counter
      if (++index[d] < info.dims[d]) break;
      index[d] = 0;
    }
  }
  return offsets;
}

void store_element(DType dtype, float v, uint8_t* p) {
  switch (dtype) {
    case DType::F16: {
      const uint16_t bits = half::float_to_half_bits(v);
      std::memcpy(p, &bits, 2);
      return;
    }
    case DType::F32: std::memcpy(p, &v, 4); return;
    // Integer tensors from float values: callers pass integral values (array_to_tensor_bytes
    // checks a file's; random inputs are rounded).
    case DType::I32: {
      const int32_t i = static_cast<int32_t>(v);
      std::memcpy(p, &i, 4);
      return;
    }
    case DType::I64: {
      const int64_t i = static_cast<int64_t>(v);
      std::memcpy(p, &i, 8);
      return;
    }
    case DType::BOOL: *p = v != 0.f ? 1 : 0; return;
  }
}

void store_int_element(DType dtype, int64_t v, uint8_t* p) {
  switch (dtype) {
    case DType::I32: {
      const int32_t i = static_cast<int32_t>(v);
      std::memcpy(p, &i, 4);
      return;
    }
    case DType::I64: std::memcpy(p, &v, 8); return;
    case DType::BOOL: *p = v != 0 ? 1 : 0; return;
    case DType::F32:
    case DType::F16: store_element(dtype, static_cast<float>(v), p); return;
  }
}

float load_element(DType dtype, const uint8_t* p) {
  switch (dtype) {
    case DType::F16: {
      uint16_t bits;
      std::memcpy(&bits, p, 2);
      return half::half_bits_to_float(bits);
    }
    case DType::F32: {
      float v;
      std::memcpy(&v, p, 4);
      return v;
    }
    case DType::I32: {
      int32_t v;
      std::memcpy(&v, p, 4);
      return static_cast<float>(v);
    }
    case DType::I64: {
      int64_t v;
      std::memcpy(&v, p, 8);
      return static_cast<float>(v);
    }
    case DType::BOOL: return *p != 0 ? 1.f : 0.f;
  }
  return 0.f;
}

void values_to_tensor_bytes(const std::vector<float>& values, const TensorInfo& info,
                            std::vector<uint8_t>* out) {
  const size_t esize = dtype_size(info.dtype);
  out->assign(info.bytes, 0);
  const std::vector<size_t> offsets = element_offsets(info);
  for (size_t i = 0; i < offsets.size() && i < values.size(); ++i) {
    if ((offsets[i] + 1) * esize <= out->size()) store_element(info.dtype, values[i], out->data() + offsets[i] * esize);
  }
}

}  // namespace

Status array_to_tensor_bytes(const HostArray& array, const TensorInfo& info, const std::string& what,
                             std::vector<uint8_t>* out) {
  if (array.dims != info.dims) {
    return Status(StatusCode::BAD_PARAM, what + ": shape " + format_dims(array.dims) + " does not match input '" +
                                             info.name + "' of shape " + format_dims(info.dims));
  }
  if (dtype_is_float(info.dtype)) {
    values_to_tensor_bytes(array.values, info, out);
    return Status::success();
  }
  // Integer and bool inputs: the file's exact integers, or float values that are whole numbers in
  // the type's range (a float file for an index input); anything else is refused, never rounded.
  std::vector<int64_t> ints = array.ints;
  if (ints.empty()) {
    const double lo = info.dtype == DType::I64 ? -9223372036854775808.0 : info.dtype == DType::I32 ? -2147483648.0 : 0.0;
    const double hi = info.dtype == DType::I64 ? 9223372036854775808.0 : info.dtype == DType::I32 ? 2147483648.0 : 2.0;
    for (size_t i = 0; i < array.values.size(); ++i) {
      const double v = array.values[i];
      if (!(v >= lo && v < hi) || v != std::floor(v)) {
        return Status(StatusCode::BAD_PARAM, what + ": element " + std::to_string(i) + " is " + std::to_string(v) +
                                                 ", not a value of input '" + info.name + "' (" + dtype_name(info.dtype) + ")");
      }
      ints.push_back(static_cast<int64_t>(v));
    }
  }
  if (info.dtype == DType::I32 || info.dtype == DType::BOOL) {
    const int64_t lo = info.dtype == DType::I32 ? INT32_MIN : 0, hi = info.dtype == DType::I32 ? INT32_MAX : 1;
    for (size_t i = 0; i < ints.size(); ++i) {
      if (ints[i] < lo || ints[i] > hi) {
        return Status(StatusCode::BAD_PARAM, what + ": element " + std::to_string(i) + " is " + std::to_string(ints[i]) +
                                                 ", outside the range of input '" + info.name + "' (" + dtype_name(info.dtype) + ")");
      }
    }
  }
  const size_t esize = dtype_size(info.dtype);
  out->assign(info.bytes, 0);
  const std::vector<size_t> offsets = element_offsets(info);
  for (size_t i = 0; i < offsets.size() && i < ints.size(); ++i) {
    if ((offsets[i] + 1) * esize <= out->size()) store_int_element(info.dtype, ints[i], out->data() + offsets[i] * esize);
  }
  return Status::success();
}

void random_tensor_bytes(const TensorInfo& info, uint64_t seed, std::vector<uint8_t>* out) {
  std::vector<float> values(static_cast<size_t>(element_count(info.dims)));
  uint64_t state = seed;
  for (float& v : values) {
    // splitmix64: one 64-bit step per value, the top 24 bits make a float in [0, 1).
    state += 0x9e3779b97f4a7c15ull;
    uint64_t z = state;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    const float unit = static_cast<float>(z >> 40) * (1.0f / 16777216.0f);
    v = 2.0f * unit - 1.0f;
    // Integer inputs: -3..3; bools: 0 or 1 (what an index or mask input plausibly holds).
    if (dtype_is_integer(info.dtype)) v = std::floor(unit * 7.0f) - 3.0f;
    if (info.dtype == DType::BOOL) v = unit < 0.5f ? 0.f : 1.f;
  }
  values_to_tensor_bytes(values, info, out);
}

void tensor_bytes_to_packed(const TensorInfo& info, const std::vector<uint8_t>& bytes,
                            std::vector<uint8_t>* packed, std::vector<float>* values) {
  const size_t esize = dtype_size(info.dtype);
  const std::vector<size_t> offsets = element_offsets(info);
  if (packed != nullptr) packed->assign(offsets.size() * esize, 0);
  if (values != nullptr) values->assign(offsets.size(), 0.0f);
  for (size_t i = 0; i < offsets.size(); ++i) {
    if ((offsets[i] + 1) * esize > bytes.size()) continue;
    const uint8_t* p = bytes.data() + offsets[i] * esize;
    if (packed != nullptr) std::memcpy(packed->data() + i * esize, p, esize);
    if (values != nullptr) (*values)[i] = load_element(info.dtype, p);
  }
}

Status copy_to_tensor(Backend backend, void* tensor_data, const void* host, size_t bytes) {
  if (tensor_data == nullptr) return Status(StatusCode::INTERNAL_ERROR, "copy_to_tensor: no tensor memory");
  if (bytes == 0) return Status::success();
  if (backend == Backend::CPU) {
    std::memcpy(tensor_data, host, bytes);
    return Status::success();
  }
#if JET_HAVE_CUDA
  cudaError_t err = cudaMemcpy(tensor_data, host, bytes, cudaMemcpyHostToDevice);
  // cudaMemcpy from pageable memory may return before the DMA lands, ordered only on the legacy
  // stream; callers run on any stream (jet-bench's is non-blocking): wait until it is there.
  if (err == cudaSuccess) err = cudaDeviceSynchronize();
  if (err != cudaSuccess) {
    return Status(StatusCode::EXECUTION_FAILED, std::string("cudaMemcpy to the device: ") + cudaGetErrorString(err));
  }
  return Status::success();
#else
  return Status(StatusCode::NOT_SUPPORTED, "this tool was built without CUDA");
#endif
}

Status copy_from_tensor(Backend backend, void* host, const void* tensor_data, size_t bytes) {
  if (tensor_data == nullptr) return Status(StatusCode::INTERNAL_ERROR, "copy_from_tensor: no tensor memory");
  if (bytes == 0) return Status::success();
  if (backend == Backend::CPU) {
    std::memcpy(host, tensor_data, bytes);
    return Status::success();
  }
#if JET_HAVE_CUDA
  const cudaError_t err = cudaMemcpy(host, tensor_data, bytes, cudaMemcpyDeviceToHost);
  if (err != cudaSuccess) {
    return Status(StatusCode::EXECUTION_FAILED, std::string("cudaMemcpy from the device: ") + cudaGetErrorString(err));
  }
  return Status::success();
#else
  return Status(StatusCode::NOT_SUPPORTED, "this tool was built without CUDA");
#endif
}

Status synchronize(Backend backend, cudaStream_t stream) {
  if (backend == Backend::CPU) return Status::success();
#if JET_HAVE_CUDA
  const cudaError_t err = cudaStreamSynchronize(stream);
  if (err != cudaSuccess) {
    return Status(StatusCode::EXECUTION_FAILED, std::string("cudaStreamSynchronize: ") + cudaGetErrorString(err));
  }
  return Status::success();
#else
  (void)stream;
  return Status(StatusCode::NOT_SUPPORTED, "this tool was built without CUDA");
#endif
}

}  // namespace tools
}  // namespace jet
