// The importer's constant table: TensorProto decoding (typed fields, raw_data, external data
// files) and the small arithmetic that constant folding needs.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <sstream>

#include "importer.h"

namespace jet {
namespace onnx_import {

namespace {

using TP = onnx::TensorProto;

// Bytes per element in raw_data / external data; 0 for types we do not read.
size_t element_bytes(int32_t type) {
  switch (type) {
    case TP::FLOAT: case TP::INT32: case TP::UINT32: return 4;
    case TP::UINT8: case TP::INT8: case TP::BOOL: return 1;
    case TP::UINT16: case TP::INT16: case TP::FLOAT16: case TP::BFLOAT16: return 2;
    case TP::INT64: case TP::UINT64: case TP::DOUBLE: return 8;
    default: return 0;
  }
}

float bfloat16_to_float(uint16_t b) {
  const uint32_t bits = static_cast<uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

// Little-endian element `i` of `bytes` (hosts are little-endian: x86-64 and aarch64 Jetsons).
template <typename T>
T load(const uint8_t* bytes, int64_t i) {
  T v;
  std::memcpy(&v, bytes + static_cast<size_t>(i) * sizeof(T), sizeof(T));
  return v;
}

Status bad(const std::string& what, const std::string& msg) {
  return Status(StatusCode::BAD_PARAM, what + ": " + msg);
}

// Decodes n elements of `type` from little-endian bytes.
Status decode_raw(const uint8_t* bytes, int64_t n, int32_t type, const std::string& what, Constant* c) {
  if (is_float_type(type)) {
    c->floats.resize(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) {
      float v = 0.f;
      switch (type) {
        case TP::FLOAT: v = load<float>(bytes, i); break;
        case TP::DOUBLE: v = static_cast<float>(load<double>(bytes, i)); break;
        case TP::FLOAT16: v = half::half_bits_to_float(load<uint16_t>(bytes, i)); break;
        case TP::BFLOAT16: v = bfloat16_to_float(load<uint16_t>(bytes, i)); break;
        default: break;
      }
      c->floats[static_cast<size_t>(i)] = v;
    }
    return Status::success();
  }
  c->ints.resize(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    int64_t v = 0;
    switch (type) {
      case TP::INT8: v = load<int8_t>(bytes, i); break;
      case TP::UINT8: v = load<uint8_t>(bytes, i); break;
      case TP::BOOL: v = load<uint8_t>(bytes, i) != 0; break;
      case TP::INT16: v = load<int16_t>(bytes, i); break;
      case TP::UINT16: v = load<uint16_t>(bytes, i); break;
      case TP::INT32: v = load<int32_t>(bytes, i); break;
      case TP::UINT32: v = load<uint32_t>(bytes, i); break;
      case TP::INT64: v = load<int64_t>(bytes, i); break;
      case TP::UINT64: {
        const uint64_t u = load<uint64_t>(bytes, i);
        if (u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
          return bad(what, "UINT64 value " + std::to_string(u) + " does not fit in int64");
        }
        v = static_cast<int64_t>(u);
        break;
      }
      default: break;
    }
    c->ints[static_cast<size_t>(i)] = v;
  }
  return Status::success();
}

// A non-negative decimal integer, as external_data's offset and length are written, below 2^62.
// False with the reason in `why`: not a decimal byte count at all, or one too large.
bool parse_size(const std::string& s, int64_t* out, std::string* why) {
  if (s.empty() || s.find_first_not_of("0123456789") != std::string::npos) {
    *why = "is not a byte count";
    return false;
  }
  constexpr int64_t kLimit = int64_t(1) << 62;
  int64_t v = 0;
  for (char ch : s) {
    if (v > (kLimit - (ch - '0')) / 10) {
      *why = "is too large (more than 2^62 bytes)";
      return false;
    }
    v = v * 10 + (ch - '0');
  }
  *out = v;
  return true;
}

// Reads the external data of `t` (location/offset/length relative to `dir`) into `bytes`,
// expecting exactly `want` bytes. The location must stay inside `dir`.
Status read_external(const TP& t, const std::string& what, const std::string& dir, int64_t want,
                     std::vector<uint8_t>* bytes) {
  std::string location;
  int64_t offset = 0, length = -1;
  for (const onnx::StringStringEntryProto& e : t.external_data()) {
    std::string why;
    if (e.key() == "location") {
      location = e.value();
    } else if (e.key() == "offset") {
      if (!parse_size(e.value(), &offset, &why)) return bad(what, "external data offset '" + e.value() + "' " + why);
    } else if (e.key() == "length") {
      if (!parse_size(e.value(), &length, &why)) return bad(what, "external data length '" + e.value() + "' " + why);
    }
  }
  if (location.empty()) return bad(what, "external data without a location");
  if (dir.empty()) {
    return bad(what, "external data '" + location + "' needs the model's directory (import the file, or set ImportOptions::external_data_dir)");
  }
  // The location is relative to the model's directory and may not leave it: no absolute paths,
  // no NUL, no '..' that climbs above the directory (`sub/../w.bin` stays inside), and (against
  // symbolic links) the resolved path must lie inside the resolved directory.
  if (location.find('\0') != std::string::npos) {
    return bad(what, "external data location '" + location + "' contains a NUL byte");
  }
  if (location[0] == '/' || location[0] == '\\') {
    return bad(what, "external data location '" + location + "' is not a relative path inside the model's directory");
  }
  size_t start = 0;
  int depth = 0;
  while (start <= location.size()) {
    size_t end = location.find_first_of("/\\", start);
    if (end == std::string::npos) end = location.size();
    const std::string part = location.substr(start, end - start);
    if (part == "..") {
      if (--depth < 0) return bad(what, "external data location '" + location + "' escapes the model's directory");
    } else if (!part.empty() && part != ".") {
      ++depth;
    }
    start = end + 1;
  }
  char dir_real[PATH_MAX], file_real[PATH_MAX];
  const std::string path = dir + "/" + location;
  if (!realpath(dir.c_str(), dir_real)) {
    return bad(what, "model directory '" + dir + "' cannot be resolved: " + std::strerror(errno));
  }
  if (!realpath(path.c_str(), file_real)) {
    return bad(what, "external data file '" + path + "' cannot be opened: " + std::strerror(errno));
  }
  const std::string dir_s(dir_real), file_s(file_real);
  if (file_s.compare(0, dir_s.size(), dir_s) != 0 || file_s.size() <= dir_s.size() ||
      (dir_s != "/" && file_s[dir_s.size()] != '/')) {
    return bad(what, "external data location '" + location + "' resolves outside the model's directory");
  }
  // O_NONBLOCK and fstat before any read: a FIFO or device is refused, never waited on.
  const int fd = ::open(file_real, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) return bad(what, "cannot open external data '" + path + "': " + std::strerror(errno));
  struct stat st;
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return bad(what, "external data '" + path + "' is not a regular file");
  }
  const int64_t file_size = static_cast<int64_t>(st.st_size);
  Status result = Status::success();
  if (offset > file_size) {
    result = bad(what, "external data offset " + std::to_string(offset) + " is past the end of '" + path + "' (" +
                           std::to_string(file_size) + " bytes)");
  } else {
    if (length < 0) length = file_size - offset;
    if (length != want) {
      result = bad(what, "external data length " + std::to_string(length) + " bytes, but the dims and type need " +
                             std::to_string(want));
    } else if (length > file_size - offset) {
      result = bad(what, "external data [" + std::to_string(offset) + ", +" + std::to_string(length) +
                             ") reads past the end of '" + path + "' (" + std::to_string(file_size) + " bytes)");
    }
  }
  if (result.ok()) {
    bytes->resize(static_cast<size_t>(length));
    size_t got = 0;
    int err = 0;
    while (got < bytes->size()) {
      const ssize_t n = ::pread(fd, bytes->data() + got, bytes->size() - got, static_cast<off_t>(offset) + static_cast<off_t>(got));
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) err = errno;
      if (n <= 0) break;
      got += static_cast<size_t>(n);
    }
    if (got != bytes->size()) {
      result = bad(what, "cannot read " + std::to_string(length) + " bytes of external data from '" + path + "': " +
                             (err ? std::strerror(err) : "the file is shorter than it was"));
    }
  }
  ::close(fd);
  return result;
}

}  // namespace

std::string onnx_type_name(int32_t type) {
  if (onnx::TensorProto_DataType_IsValid(type)) {
    return onnx::TensorProto_DataType_Name(static_cast<onnx::TensorProto_DataType>(type));
  }
  return "type " + std::to_string(type);
}

bool is_float_type(int32_t type) {
  return type == TP::FLOAT || type == TP::FLOAT16 || type == TP::BFLOAT16 || type == TP::DOUBLE;
}

bool is_int_type(int32_t type) {
  switch (type) {
    case TP::INT8: case TP::UINT8: case TP::INT16: case TP::UINT16: case TP::INT32: case TP::UINT32:
    case TP::INT64: case TP::UINT64: case TP::BOOL:
      return true;
    default:
      return false;
  }
}

bool ir_dtype_of(int32_t onnx_type, DType* out) {
  switch (onnx_type) {
    case TP::FLOAT: *out = DType::F32; return true;
    case TP::FLOAT16: *out = DType::F16; return true;
    case TP::INT32: *out = DType::I32; return true;
    case TP::INT64: *out = DType::I64; return true;
    case TP::BOOL: *out = DType::BOOL; return true;
    default: return false;
  }
}

int32_t onnx_type_of(DType t) {
  switch (t) {
    case DType::F32: return TP::FLOAT;
    case DType::F16: return TP::FLOAT16;
    case DType::I32: return TP::INT32;
    case DType::I64: return TP::INT64;
    case DType::BOOL: return TP::BOOL;
  }
  return TP::UNDEFINED;
}

int64_t Constant::elements() const {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

Status checked_elements(const std::vector<int64_t>& dims, const std::string& what, int64_t* n) {
  constexpr int64_t kLimit = int64_t(1) << 40;
  int64_t total = 1;
  for (int64_t d : dims) {
    if (d < 0) return Status(StatusCode::INVALID_VALUE, what + ": dims " + dims_text(dims) + " has a negative dim");
    if (d == 0) {
      total = 0;
      continue;
    }
    if (total > kLimit / d) {
      return Status(StatusCode::INVALID_VALUE, what + ": dims " + dims_text(dims) + " have more than 2^40 elements");
    }
    total *= d;
  }
  *n = total;
  return Status::success();
}

Status decode_tensor(const TP& t, const std::string& what, const std::string& external_dir, Constant* out) {
  Constant c;
  c.type = t.data_type();
  if (!is_float_type(c.type) && !is_int_type(c.type)) {
    return Status(StatusCode::NOT_SUPPORTED, what + ": element type " + onnx_type_name(c.type) + " is not supported");
  }
  if (t.has_segment()) return Status(StatusCode::NOT_SUPPORTED, what + ": segmented tensors are not supported");
  c.dims.assign(t.dims().begin(), t.dims().end());
  int64_t n = 0;
  Status st = checked_elements(c.dims, what, &n);
  if (!st.ok()) return st;
  const int64_t esize = static_cast<int64_t>(element_bytes(c.type));
  const int64_t want = n * esize;

  if (t.data_location() == TP::EXTERNAL) {
    std::vector<uint8_t> bytes;
    st = read_external(t, what, external_dir, want, &bytes);
    if (!st.ok()) return st;
    st = decode_raw(bytes.data(), n, c.type, what, &c);
    if (!st.ok()) return st;
    *out = std::move(c);
    return Status::success();
  }
  if (t.data_location() != TP::DEFAULT) {
    return bad(what, "unknown data_location " + std::to_string(static_cast<int>(t.data_location())));
  }
  if (t.has_raw_data()) {
    const std::string& raw = t.raw_data();
    if (static_cast<int64_t>(raw.size()) != want) {
      return bad(what, "raw_data has " + std::to_string(raw.size()) + " bytes, but dims " + dims_text(c.dims) +
                           " of " + onnx_type_name(c.type) + " need " + std::to_string(want));
    }
    st = decode_raw(reinterpret_cast<const uint8_t*>(raw.data()), n, c.type, what, &c);
    if (!st.ok()) return st;
    *out = std::move(c);
    return Status::success();
  }
  // Typed fields: which one holds the values depends on the type (onnx.proto's comments).
  auto count_error = [&](const char* field, int have) {
    return bad(what, std::string(field) + " has " + std::to_string(have) + " values, but dims " +
                         dims_text(c.dims) + " need " + std::to_string(n));
  };
  switch (c.type) {
    case TP::FLOAT:
      if (t.float_data_size() != n) return count_error("float_data", t.float_data_size());
      c.floats.assign(t.float_data().begin(), t.float_data().end());
      break;
    case TP::DOUBLE:
      if (t.double_data_size() != n) return count_error("double_data", t.double_data_size());
      for (double v : t.double_data()) c.floats.push_back(static_cast<float>(v));
      break;
    case TP::FLOAT16:
    case TP::BFLOAT16:
      if (t.int32_data_size() != n) return count_error("int32_data", t.int32_data_size());
      for (int32_t v : t.int32_data()) {
        const uint16_t bits = static_cast<uint16_t>(v & 0xffff);
        c.floats.push_back(c.type == TP::FLOAT16 ? half::half_bits_to_float(bits) : bfloat16_to_float(bits));
      }
      break;
    case TP::INT64:
      if (t.int64_data_size() != n) return count_error("int64_data", t.int64_data_size());
      c.ints.assign(t.int64_data().begin(), t.int64_data().end());
      break;
    case TP::UINT32:
    case TP::UINT64:
      if (t.uint64_data_size() != n) return count_error("uint64_data", t.uint64_data_size());
      for (uint64_t v : t.uint64_data()) {
        if (v > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
          return bad(what, "value " + std::to_string(v) + " does not fit in int64");
        }
        c.ints.push_back(static_cast<int64_t>(v));
      }
      break;
    default:  // INT8, UINT8, INT16, UINT16, INT32, BOOL live in int32_data
      if (t.int32_data_size() != n) return count_error("int32_data", t.int32_data_size());
      for (int32_t v : t.int32_data()) c.ints.push_back(c.type == TP::BOOL ? (v != 0) : v);
      break;
  }
  *out = std::move(c);
  return Status::success();
}

bool broadcast_shapes(const std::vector<int64_t>& a, const std::vector<int64_t>& b, std::vector<int64_t>* out) {
  const size_t rank = std::max(a.size(), b.size());
  std::vector<int64_t> r(rank);
  for (size_t i = 0; i < rank; ++i) {
    const int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    const int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (da != db && da != 1 && db != 1) return false;
    r[i] = da == 1 ? db : da;
  }
  *out = std::move(r);
  return true;
}

namespace {

// The flat index into a tensor of dims `from` (left-padded with 1s to `to`'s rank) of the element
// at multi-index `idx` of the broadcast shape `to`.
int64_t broadcast_index(const std::vector<int64_t>& from, const std::vector<int64_t>& to,
                        const std::vector<int64_t>& idx) {
  const size_t pad = to.size() - from.size();
  int64_t flat = 0;
  for (size_t d = 0; d < from.size(); ++d) {
    const int64_t i = from[d] == 1 ? 0 : idx[d + pad];
    flat = flat * from[d] + i;
  }
  return flat;
}

bool next_index(std::vector<int64_t>* idx, const std::vector<int64_t>& dims) {
  for (size_t d = dims.size(); d-- > 0;) {
    if (++(*idx)[d] < dims[d]) return true;
    (*idx)[d] = 0;
  }
  return false;
}

// base^exp; false on int64 overflow.
bool int_pow(int64_t base, int64_t exp, int64_t* out) {
  if (base == 0 || base == 1) {
    *out = exp == 0 ? 1 : base;
    return true;
  }
  if (base == -1) {
    *out = exp % 2 == 0 ? 1 : -1;
    return true;
  }
  int64_t r = 1;
  for (int64_t i = 0; i < exp; ++i) {  // |base| >= 2: overflows within 63 steps
    if (__builtin_mul_overflow(r, base, &r)) return false;
  }
  *out = r;
  return true;
}

}  // namespace

Status fold_binary(BinaryOp op, const Constant& a, const Constant& b, const std::string& what, Constant* out) {
  if (a.is_int() != b.is_int()) {
    return bad(what, "operands of types " + onnx_type_name(a.type) + " and " + onnx_type_name(b.type) + " differ");
  }
  Constant r;
  if (!broadcast_shapes(a.dims, b.dims, &r.dims)) {
    return bad(what, "dims " + dims_text(a.dims) + " and " + dims_text(b.dims) + " do not broadcast");
  }
  const bool compare = op == BinaryOp::EQUAL || op == BinaryOp::LESS || op == BinaryOp::GREATER;
  r.type = compare ? static_cast<int32_t>(TP::BOOL) : a.type;
  const int64_t n = r.elements();
  std::vector<int64_t> idx(r.dims.size(), 0);
  for (int64_t i = 0; i < n; ++i, next_index(&idx, r.dims)) {
    const int64_t ia = broadcast_index(a.dims, r.dims, idx), ib = broadcast_index(b.dims, r.dims, idx);
    if (a.is_int()) {
      const int64_t x = a.ints[ia], y = b.ints[ib];
      int64_t v = 0;
      bool overflow = false;
      switch (op) {
        case BinaryOp::ADD: overflow = __builtin_add_overflow(x, y, &v); break;
        case BinaryOp::SUB: overflow = __builtin_sub_overflow(x, y, &v); break;
        case BinaryOp::MUL: overflow = __builtin_mul_overflow(x, y, &v); break;
        case BinaryOp::DIV:
          if (y == 0) return bad(what, "integer division by zero");
          overflow = x == std::numeric_limits<int64_t>::min() && y == -1;
          if (!overflow) v = x / y;  // truncation toward zero, as ONNX Runtime's integer Div
          break;
        case BinaryOp::MAX: v = std::max(x, y); break;
        case BinaryOp::MIN: v = std::min(x, y); break;
        case BinaryOp::EQUAL: v = x == y; break;
        case BinaryOp::LESS: v = x < y; break;
        case BinaryOp::GREATER: v = x > y; break;
        case BinaryOp::MOD:
        case BinaryOp::FMOD:
          if (y == 0) return bad(what, "integer Mod by zero");
          overflow = x == std::numeric_limits<int64_t>::min() && y == -1;
          if (!overflow) v = x % y;  // the dividend's sign
          if (op == BinaryOp::MOD && v != 0 && (v < 0) != (y < 0)) v += y;
          break;
        case BinaryOp::POW:
          if (y < 0) return bad(what, "integer Pow with a negative exponent");
          overflow = !int_pow(x, y, &v);
          break;
      }
      if (overflow) return bad(what, "int64 overflow in " + std::to_string(x) + " and " + std::to_string(y));
      r.ints.push_back(v);
    } else {
      const float x = a.floats[ia], y = b.floats[ib];
      float v = 0.f;
      switch (op) {
        case BinaryOp::ADD: v = x + y; break;
        case BinaryOp::SUB: v = x - y; break;
        case BinaryOp::MUL: v = x * y; break;
        case BinaryOp::DIV: v = x / y; break;
        case BinaryOp::MAX: v = std::isnan(x) || std::isnan(y) ? NAN : std::max(x, y); break;
        case BinaryOp::MIN: v = std::isnan(x) || std::isnan(y) ? NAN : std::min(x, y); break;
        case BinaryOp::POW: v = std::pow(x, y); break;
        case BinaryOp::FMOD: v = std::fmod(x, y); break;
        case BinaryOp::MOD:
          v = std::fmod(x, y);
          if (v != 0.f && (v < 0.f) != (y < 0.f)) v += y;
          break;
        case BinaryOp::EQUAL: r.ints.push_back(x == y); continue;
        case BinaryOp::LESS: r.ints.push_back(x < y); continue;
        case BinaryOp::GREATER: r.ints.push_back(x > y); continue;
      }
      r.floats.push_back(v);
    }
  }
  *out = std::move(r);
  return Status::success();
}

Status cast_constant(const Constant& c, int32_t to, const std::string& what, Constant* out) {
  if (!is_float_type(to) && !is_int_type(to)) {
    return Status(StatusCode::NOT_SUPPORTED, what + ": cast to " + onnx_type_name(to) + " is not supported");
  }
  Constant r;
  r.type = to;
  r.dims = c.dims;
  const int64_t n = c.elements();
  if (is_float_type(to)) {
    r.floats.resize(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) {
      float v = c.is_int() ? static_cast<float>(c.ints[i]) : c.floats[i];
      if (to == TP::FLOAT16) v = static_cast<float>(half(v));
      if (to == TP::BFLOAT16) {  // round to nearest even on the upper 16 bits
        uint32_t bits;
        std::memcpy(&bits, &v, 4);
        if (!std::isnan(v)) bits += 0x7fffu + ((bits >> 16) & 1u);
        bits &= 0xffff0000u;
        std::memcpy(&v, &bits, 4);
      }
      r.floats[static_cast<size_t>(i)] = v;
    }
  } else {
    r.ints.resize(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) {
      int64_t v = 0;
      if (c.is_int()) {
        v = c.ints[i];
      } else {
        const float f = c.floats[i];
        if (to == TP::BOOL) {
          v = f != 0.f;
        } else if (!std::isfinite(f) || std::fabs(f) >= 9.2e18f) {
          return bad(what, "float value " + std::to_string(f) + " cannot be cast to " + onnx_type_name(to));
        } else {
          v = static_cast<int64_t>(f);  // truncation toward zero
        }
      }
      // Narrow integer types wrap as in C (two's complement).
      switch (to) {
        case TP::BOOL: v = v != 0; break;
        case TP::INT8: v = static_cast<int8_t>(v); break;
        case TP::UINT8: v = static_cast<uint8_t>(v); break;
        case TP::INT16: v = static_cast<int16_t>(v); break;
        case TP::UINT16: v = static_cast<uint16_t>(v); break;
        case TP::INT32: v = static_cast<int32_t>(v); break;
        case TP::UINT32: v = static_cast<uint32_t>(v); break;
        default: break;
      }
      r.ints[static_cast<size_t>(i)] = v;
    }
  }
  *out = std::move(r);
  return Status::success();
}

Constant expand_constant(const Constant& c, const std::vector<int64_t>& to) {
  Constant r;
  r.type = c.type;
  r.dims = to;
  const int64_t n = r.elements();
  std::vector<int64_t> idx(to.size(), 0);
  for (int64_t i = 0; i < n; ++i, next_index(&idx, to)) {
    const int64_t src = broadcast_index(c.dims, to, idx);
    if (c.is_int()) {
      r.ints.push_back(c.ints[src]);
    } else {
      r.floats.push_back(c.floats[src]);
    }
  }
  return r;
}

Constant transpose_constant(const Constant& c, const std::vector<int64_t>& perm) {
  Constant r;
  r.type = c.type;
  const size_t rank = c.dims.size();
  r.dims.resize(rank);
  for (size_t d = 0; d < rank; ++d) r.dims[d] = c.dims[perm[d]];
  std::vector<int64_t> in_strides(rank, 1);
  for (size_t d = rank; d-- > 1;) in_strides[d - 1] = in_strides[d] * c.dims[d];
  const int64_t n = c.elements();
  std::vector<int64_t> idx(rank, 0);
  for (int64_t i = 0; i < n; ++i, next_index(&idx, r.dims)) {
    int64_t src = 0;
    for (size_t d = 0; d < rank; ++d) src += idx[d] * in_strides[perm[d]];
    if (c.is_int()) {
      r.ints.push_back(c.ints[src]);
    } else {
      r.floats.push_back(c.floats[src]);
    }
  }
  return r;
}

Status reduce_constant(const Constant& c, const std::vector<int64_t>& axes, bool keepdims, ReduceKind kind,
                       Constant* out) {
  const size_t rank = c.dims.size();
  std::vector<bool> reduced(rank, false);
  for (int64_t a : axes) reduced[a] = true;
  std::vector<int64_t> kept_dims(rank);
  for (size_t d = 0; d < rank; ++d) kept_dims[d] = reduced[d] ? 1 : c.dims[d];
  int64_t out_n = 1;
  for (int64_t d : kept_dims) out_n *= d;
  std::vector<double> acc(static_cast<size_t>(out_n), kind == ReduceKind::PROD ? 1.0 : 0.0);
  std::vector<int64_t> iacc(static_cast<size_t>(out_n), kind == ReduceKind::PROD ? 1 : 0);
  std::vector<bool> first(static_cast<size_t>(out_n), true);
  const int64_t n = c.elements();
  std::vector<int64_t> idx(rank, 0);
  for (int64_t i = 0; i < n; ++i) {
    int64_t o = 0;
    for (size_t d = 0; d < rank; ++d) o = o * kept_dims[d] + (reduced[d] ? 0 : idx[d]);
    const size_t k = static_cast<size_t>(o);
    if (c.is_int()) {
      const int64_t v = c.ints[i];
      switch (kind) {
        case ReduceKind::SUM: case ReduceKind::MEAN:
          if (__builtin_add_overflow(iacc[k], v, &iacc[k])) return Status(StatusCode::BAD_PARAM, "int64 overflow in a reduction");
          break;
        case ReduceKind::PROD:
          if (__builtin_mul_overflow(iacc[k], v, &iacc[k])) return Status(StatusCode::BAD_PARAM, "int64 overflow in a reduction");
          break;
        case ReduceKind::MAX: iacc[k] = first[k] ? v : std::max(iacc[k], v); break;
        case ReduceKind::MIN: iacc[k] = first[k] ? v : std::min(iacc[k], v); break;
      }
    } else {
      const double v = c.floats[i];
      switch (kind) {
        case ReduceKind::SUM: case ReduceKind::MEAN: acc[k] += v; break;
        case ReduceKind::PROD: acc[k] *= v; break;
        case ReduceKind::MAX: acc[k] = first[k] ? v : std::max(acc[k], v); break;
        case ReduceKind::MIN: acc[k] = first[k] ? v : std::min(acc[k], v); break;
      }
    }
    first[k] = false;
    for (size_t d = rank; d-- > 0;) {
      if (++idx[d] < c.dims[d]) break;
      idx[d] = 0;
    }
  }
  const int64_t count = out_n > 0 ? n / out_n : 0;
  Constant r;
  r.type = c.type;
  for (size_t d = 0; d < rank; ++d) {
    if (!reduced[d] || keepdims) r.dims.push_back(kept_dims[d]);
  }
  for (size_t k = 0; k < acc.size(); ++k) {
    if (c.is_int()) {
      r.ints.push_back(kind == ReduceKind::MEAN && count > 0 ? iacc[k] / count : iacc[k]);
    } else {
      r.floats.push_back(static_cast<float>(kind == ReduceKind::MEAN && count > 0 ? acc[k] / count : acc[k]));
    }
  }
  *out = std::move(r);
  return Status::success();
}


}  // namespace onnx_import
}  // namespace jet
