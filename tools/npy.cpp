#include "npy.h"

#include "jet/file_io.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <limits>

namespace jet {
namespace tools {

namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicSize = 6;
constexpr size_t kMaxRank = 64;                      // numpy 2 allows 64 dimensions
constexpr int64_t kMaxDim = int64_t{1} << 48;        // far beyond any file we could read
constexpr size_t kMaxHeaderBytes = size_t{1} << 20;  // numpy itself refuses headers > 10000 bytes

Status npy_error(const std::string& what, const std::string& problem) {
  return Status(StatusCode::BAD_PARAM, what + ": not a valid .npy file: " + problem);
}

// Element types we read, by their descr without the byte-order character.
struct ElementType {
  const char* code;
  size_t size;
};
const ElementType kElementTypes[] = {{"f4", 4}, {"f2", 2}, {"f8", 8}, {"i8", 8},
                                     {"i4", 4}, {"u1", 1}, {"b1", 1}};

uint64_t load_le(const uint8_t* p, size_t n) {
  uint64_t v = 0;
  for (size_t i = 0; i < n; ++i) v |= static_cast<uint64_t>(p[i]) << (8 * i);
  return v;
}

float element_to_float(const char* code, const uint8_t* p) {
  if (std::strcmp(code, "f4") == 0) {
    const uint32_t bits = static_cast<uint32_t>(load_le(p, 4));
    float f;
    std::memcpy(&f, &bits, 4);
    return f;
  }
  if (std::strcmp(code, "f2") == 0) return half::half_bits_to_float(static_cast<uint16_t>(load_le(p, 2)));
  if (std::strcmp(code, "f8") == 0) {
    const uint64_t bits = load_le(p, 8);
    double d;
    std::memcpy(&d, &bits, 8);
    return static_cast<float>(d);
  }
  if (std::strcmp(code, "i8") == 0) return static_cast<float>(static_cast<int64_t>(load_le(p, 8)));
  if (std::strcmp(code, "i4") == 0) {
    return static_cast<float>(static_cast<int32_t>(static_cast<uint32_t>(load_le(p, 4))));
  }
  if (std::strcmp(code, "u1") == 0) return static_cast<float>(p[0]);
  return p[0] != 0 ? 1.0f : 0.0f;  // b1
}

// A cursor over the header text: the dict literal numpy writes. Only the subset numpy produces is
// accepted (string keys, a string, a bool and a tuple of non-negative integers).
class HeaderParser {
 public:
  HeaderParser(const std::string& text, const std::string& what) : text_(text), what_(what) {}

  Status parse(std::string* descr, bool* fortran_order, std::vector<int64_t>* shape) {
    bool have_descr = false, have_order = false, have_shape = false;
    skip_space();
    if (!consume('{')) return error("the header does not start with '{'");
    for (;;) {
      skip_space();
      if (consume('}')) break;
      std::string key;
      Status st = parse_string(&key);
      if (!st.ok()) return st;
      skip_space();
      if (!consume(':')) return error("expected ':' after key '" + key + "'");
      skip_space();
      if (key == "descr") {
        if (have_descr) return error("duplicate key 'descr'");
        if (peek() == '[') return error("structured dtypes (a descr list) are not supported");
        st = parse_string(descr);
        have_descr = true;
      } else if (key == "fortran_order") {
        if (have_order) return error("duplicate key 'fortran_order'");
        st = parse_bool(fortran_order);
        have_order = true;
      } else if (key == "shape") {
        if (have_shape) return error("duplicate key 'shape'");
        st = parse_shape(shape);
        have_shape = true;
      } else {
        return error("unexpected header key '" + key + "'");
      }
      if (!st.ok()) return st;
      skip_space();
      if (consume(',')) continue;
      skip_space();
      if (consume('}')) break;
      return error("expected ',' or '}' in the header dict");
    }
    skip_space();
    if (pos_ != text_.size()) return error("unexpected text after the header dict");
    if (!have_descr) return error("the header has no 'descr'");
    if (!have_order) return error("the header has no 'fortran_order'");
    if (!have_shape) return error("the header has no 'shape'");
    return Status::success();
  }

 private:
  char peek() const { return pos_ < text_.size() ? text_[pos_] : '\0'; }
  bool consume(char c) {
    if (peek() != c || pos_ >= text_.size()) return false;
    ++pos_;
    return true;
  }
  void skip_space() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\t' || text_[pos_] == '\n' ||
                                   text_[pos_] == '\r')) {
      ++pos_;
    }
  }
  Status error(const std::string& problem) const {
    return npy_error(what_, problem + " (header offset " + std::to_string(pos_) + ")");
  }

  Status parse_string(std::string* out) {
    const char quote = peek();
    if (quote != '\'' && quote != '"') return error("expected a quoted string");
    ++pos_;
    out->clear();
    while (pos_ < text_.size() && text_[pos_] != quote) {
      if (text_[pos_] == '\\') return error("escapes in header strings are not supported");
      if (out->size() >= 64) return error("a header string is too long");
      out->push_back(text_[pos_++]);
    }
    if (!consume(quote)) return error("unterminated string");
    return Status::success();
  }

  Status parse_bool(bool* out) {
    if (text_.compare(pos_, 4, "True") == 0) {
      pos_ += 4;
      *out = true;
    } else if (text_.compare(pos_, 5, "False") == 0) {
      pos_ += 5;
      *out = false;
    } else {
      return error("'fortran_order' must be True or False");
    }
    return Status::success();
  }

  Status parse_shape(std::vector<int64_t>* shape) {
    shape->clear();
    if (!consume('(')) return error("'shape' must be a tuple");
    for (;;) {
      skip_space();
      if (consume(')')) break;
      if (peek() < '0' || peek() > '9') return error("'shape' entries must be non-negative integers");
      int64_t v = 0;
      while (peek() >= '0' && peek() <= '9') {
        v = v * 10 + (peek() - '0');
        if (v > kMaxDim) return error("a 'shape' entry is too large");
        ++pos_;
      }
      if (peek() == 'L') ++pos_;  // Python 2 long literal, as old numpy wrote
      if (shape->size() >= kMaxRank) {
        return error("'shape' has more than " + std::to_string(kMaxRank) + " dimensions");
      }
      shape->push_back(v);
      skip_space();
      if (consume(',')) continue;
      skip_space();
      if (consume(')')) break;
      return error("expected ',' or ')' in 'shape'");
    }
    // Python needs a trailing comma for a 1-tuple: "(5)" is the integer 5, not a shape.
    return Status::success();
  }

  const std::string& text_;
  const std::string& what_;
  size_t pos_ = 0;
};

}  // namespace

Status parse_npy(const void* data, size_t size, const std::string& what, HostArray* out) {
  if (data == nullptr && size > 0) return Status(StatusCode::BAD_PARAM, "parse_npy: data is null");
  if (out == nullptr) return Status(StatusCode::BAD_PARAM, "parse_npy: out is null");
  const uint8_t* bytes = static_cast<const uint8_t*>(data);
  if (size < kMagicSize + 2 || std::memcmp(bytes, kMagic, kMagicSize) != 0) {
    return npy_error(what, "the file does not start with the .npy magic \"\\x93NUMPY\"");
  }
  const int major = bytes[6], minor = bytes[7];
  if ((major != 1 && major != 2 && major != 3) || minor != 0) {
    return npy_error(what, "unsupported format version " + std::to_string(major) + "." +
                               std::to_string(minor) + " (1.0, 2.0 and 3.0 are supported)");
  }
  const size_t length_bytes = major == 1 ? 2 : 4;
  if (size < kMagicSize + 2 + length_bytes) return npy_error(what, "the file ends inside the preamble");
  const uint64_t header_len = load_le(bytes + 8, length_bytes);
  const size_t header_start = kMagicSize + 2 + length_bytes;
  if (header_len > kMaxHeaderBytes) {
    return npy_error(what, "the header length " + std::to_string(header_len) + " is implausibly large");
  }
  if (header_len > size - header_start) {
    return npy_error(what, "the header length " + std::to_string(header_len) +
                               " runs past the end of the file (" + std::to_string(size) + " bytes)");
  }
  std::string header(reinterpret_cast<const char*>(bytes + header_start), static_cast<size_t>(header_len));
  for (char c : header) {
    const unsigned char u = static_cast<unsigned char>(c);
    if (u != '\n' && u != '\r' && u != '\t' && (u < 0x20 || u > 0x7e)) {
      return npy_error(what, "the header contains a non-printable byte");
    }
  }

  std::string descr;
  bool fortran_order = false;
  std::vector<int64_t> shape;
  Status st = HeaderParser(header, what).parse(&descr, &fortran_order, &shape);
  if (!st.ok()) return st;

  if (fortran_order) {
    return npy_error(what, "Fortran-order (column-major) arrays are not supported; save a C-order "
                           "array (numpy.ascontiguousarray)");
  }
  if (descr.size() != 3) return npy_error(what, "unsupported dtype '" + descr + "'");
  const char order = descr[0];
  const std::string code = descr.substr(1);
  const ElementType* type = nullptr;
  for (const ElementType& t : kElementTypes) {
    if (code == t.code) type = &t;
  }
  if (type == nullptr || (order != '<' && order != '|' && order != '=' && order != '>')) {
    return npy_error(what, "unsupported dtype '" + descr +
                               "' (supported: <f4, <f2, <f8, <i8, <i4, |u1, |b1)");
  }
  if (order == '>' && type->size > 1) {
    return npy_error(what, "big-endian dtype '" + descr + "' is not supported; save little-endian data");
  }

  uint64_t count = 1;
  for (int64_t d : shape) {
    // Each dim is <= 2^48; stop before the product can overflow.
    if (d != 0 && count > std::numeric_limits<uint64_t>::max() / static_cast<uint64_t>(d)) {
      return npy_error(what, "the shape's element count overflows");
    }
    count *= static_cast<uint64_t>(d);
  }
  const size_t data_start = header_start + static_cast<size_t>(header_len);
  const uint64_t data_bytes = size - data_start;
  if (count > data_bytes / type->size + 1) {  // cheap pre-check so the product below cannot overflow
    return npy_error(what, "the data is truncated: the shape needs " + std::to_string(count) +
                               " elements but the file holds " + std::to_string(data_bytes) + " data bytes");
  }
  if (count * type->size != data_bytes) {
    return npy_error(what, "the data size does not match the header: the shape needs " +
                               std::to_string(count * type->size) + " bytes of '" + descr +
                               "' but the file holds " + std::to_string(data_bytes));
  }

  out->dims = shape;
  out->source_type = descr;
  out->values.resize(static_cast<size_t>(count));
  const uint8_t* p = bytes + data_start;
  for (size_t i = 0; i < out->values.size(); ++i) {
    out->values[i] = element_to_float(type->code, p + i * type->size);
  }
  out->ints.clear();
  if (code == "i8" || code == "i4" || code == "u1" || code == "b1") {
    out->ints.resize(static_cast<size_t>(count));
    for (size_t i = 0; i < out->ints.size(); ++i) {
      const uint8_t* e = p + i * type->size;
      if (code == "i8") out->ints[i] = static_cast<int64_t>(load_le(e, 8));
      else if (code == "i4") out->ints[i] = static_cast<int32_t>(static_cast<uint32_t>(load_le(e, 4)));
      else if (code == "u1") out->ints[i] = e[0];
      else out->ints[i] = e[0] != 0 ? 1 : 0;
    }
  }
  return Status::success();
}

Status read_file_bytes(const std::string& path, std::vector<uint8_t>* out) {
  // Regular files only (a FIFO or /dev/zero is refused without blocking), up to 64 GiB.
  return read_regular_file(path, size_t(1) << 36, "an input file", out);
}

Status write_file_bytes(const std::string& path, const void* data, size_t size) {
  return write_file_atomically(path, data, size);
}

Status read_npy(const std::string& path, HostArray* out) {
  std::vector<uint8_t> bytes;
  Status st = read_file_bytes(path, &bytes);
  if (!st.ok()) return st;
  return parse_npy(bytes.data(), bytes.size(), path, out);
}

Status encode_npy(const std::vector<int64_t>& dims, DType dtype, const void* data,
                  std::vector<uint8_t>* out) {
  if (!dtype_is_valid(static_cast<int64_t>(dtype))) {
    return Status(StatusCode::BAD_PARAM, "encode_npy: dtype value " + std::to_string(static_cast<int>(dtype)) +
                                             " is not a DType");
  }
  uint64_t count = 1;
  std::string shape = "(";
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] < 0 || dims[i] > kMaxDim) {
      return Status(StatusCode::BAD_PARAM, "encode_npy: dimension " + std::to_string(i) + " is " +
                                               std::to_string(dims[i]));
    }
    count *= static_cast<uint64_t>(dims[i]);
    if (i > 0) shape += ", ";
    shape += std::to_string(dims[i]);
  }
  if (dims.size() == 1) shape += ",";
  shape += ")";
  const size_t element = dtype_size(dtype);
  if (count > 0 && data == nullptr) return Status(StatusCode::BAD_PARAM, "encode_npy: data is null");

  const char* descr = "<f4";
  switch (dtype) {
    case DType::F32: descr = "<f4"; break;
    case DType::F16: descr = "<f2"; break;
    case DType::I32: descr = "<i4"; break;
    case DType::I64: descr = "<i8"; break;
    case DType::BOOL: descr = "|b1"; break;
  }
  std::string header = std::string("{'descr': '") + descr +
                       "', 'fortran_order': False, 'shape': " + shape + ", }";
  // Pad with spaces so the data starts on a 64-byte boundary; the header ends in '\n'.
  size_t prefix = kMagicSize + 2 + 2;
  int major = 1;
  if (header.size() + 1 + 64 > 65535) {
    prefix = kMagicSize + 2 + 4;
    major = 2;
  }
  while ((prefix + header.size() + 1) % 64 != 0) header.push_back(' ');
  header.push_back('\n');

  out->clear();
  out->reserve(prefix + header.size() + count * element);
  out->insert(out->end(), kMagic, kMagic + kMagicSize);
  out->push_back(static_cast<uint8_t>(major));
  out->push_back(0);
  const size_t length_bytes = major == 1 ? 2 : 4;
  for (size_t i = 0; i < length_bytes; ++i) out->push_back(static_cast<uint8_t>(header.size() >> (8 * i)));
  out->insert(out->end(), header.begin(), header.end());
  // Element bytes as stored: jetinfer's targets (x86-64, aarch64) are little-endian.
  const uint8_t* p = static_cast<const uint8_t*>(data);
  out->insert(out->end(), p, p + count * element);
  return Status::success();
}

Status write_npy(const std::string& path, const std::vector<int64_t>& dims, DType dtype,
                 const void* data) {
  std::vector<uint8_t> bytes;
  Status st = encode_npy(dims, dtype, data, &bytes);
  if (!st.ok()) return Status(st.code(), path + ": " + st.message());
  return write_file_bytes(path, bytes.data(), bytes.size());
}

}  // namespace tools
}  // namespace jet
