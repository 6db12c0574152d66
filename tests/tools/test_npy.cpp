// tools/npy: our .npy writer read back by our reader, hand-made files of every supported dtype,
// and hostile headers (each must give a clear BAD_PARAM, never a crash). Files written by numpy
// itself are checked by tests/tools/npy_interop.py.
#include <doctest/doctest.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "npy.h"

using jet::DType;
using jet::Status;
using jet::StatusCode;
using jet::tools::HostArray;

namespace {

// A .npy file with `header` (padding and '\n' added) and `data` as the element bytes.
std::vector<uint8_t> make_npy(int major, const std::string& header, const std::vector<uint8_t>& data) {
  std::string h = header;
  const size_t prefix = major == 1 ? 10 : 12;
  while ((prefix + h.size() + 1) % 64 != 0) h.push_back(' ');
  h.push_back('\n');
  std::vector<uint8_t> file = {0x93, 'N', 'U', 'M', 'P', 'Y', static_cast<uint8_t>(major), 0};
  const size_t length_bytes = major == 1 ? 2 : 4;
  for (size_t i = 0; i < length_bytes; ++i) file.push_back(static_cast<uint8_t>(h.size() >> (8 * i)));
  file.insert(file.end(), h.begin(), h.end());
  file.insert(file.end(), data.begin(), data.end());
  return file;
}

std::vector<uint8_t> f32_bytes(const std::vector<float>& v) {
  std::vector<uint8_t> b(v.size() * 4);
  std::memcpy(b.data(), v.data(), b.size());
  return b;
}

Status parse(const std::vector<uint8_t>& file, HostArray* out) {
  return jet::tools::parse_npy(file.data(), file.size(), "test.npy", out);
}

// Parsing must fail with BAD_PARAM, the file named, and `expected` in the message.
void expect_error(const std::vector<uint8_t>& file, const std::string& expected) {
  HostArray a;
  const Status st = parse(file, &a);
  CAPTURE(expected);
  CAPTURE(st.message());
  CHECK(st.code() == StatusCode::BAD_PARAM);
  CHECK(st.message().find("test.npy") != std::string::npos);
  CHECK(st.message().find(expected) != std::string::npos);
}

std::string header_for(const std::string& descr, const std::string& shape) {
  return "{'descr': '" + descr + "', 'fortran_order': False, 'shape': " + shape + ", }";
}

}  // namespace

TEST_CASE("npy: f32 round trip through our writer and reader") {
  const std::vector<float> values = {1.5f, -2.25f, 0.0f, 3.0e-8f, 1.0e30f, -7.0f};
  std::vector<uint8_t> file;
  REQUIRE(jet::tools::encode_npy({2, 3}, DType::F32, values.data(), &file).ok());
  // numpy's layout: magic, version 1.0, the data on a 64-byte boundary after a '\n'.
  REQUIRE(file.size() > values.size() * 4 + 10);
  const size_t data_start = file.size() - values.size() * 4;
  CHECK(data_start % 64 == 0);
  CHECK(std::memcmp(file.data(), "\x93NUMPY\x01\x00", 8) == 0);
  CHECK(file[8] + 256 * file[9] + 10 == data_start);
  CHECK(file[data_start - 1] == '\n');
  const std::string header(file.begin() + 10, file.begin() + static_cast<std::ptrdiff_t>(data_start));
  CHECK(header.find("'descr': '<f4'") != std::string::npos);
  CHECK(header.find("'shape': (2, 3)") != std::string::npos);

  HostArray a;
  REQUIRE(parse(file, &a).ok());
  CHECK(a.dims == std::vector<int64_t>{2, 3});
  CHECK(a.values == values);
  CHECK(a.source_type == "<f4");
}

TEST_CASE("npy: f16 round trip, 1-d, scalar and empty shapes") {
  std::vector<jet::half> h;
  for (float f : {0.5f, -1.0f, 65504.0f, 0.0009765625f, 3.140625f}) h.push_back(jet::half(f));
  std::vector<uint8_t> file;
  REQUIRE(jet::tools::encode_npy({5}, DType::F16, h.data(), &file).ok());
  HostArray a;
  REQUIRE(parse(file, &a).ok());
  CHECK(a.dims == std::vector<int64_t>{5});
  CHECK(a.source_type == "<f2");
  REQUIRE(a.values.size() == 5);
  for (size_t i = 0; i < h.size(); ++i) CHECK(a.values[i] == static_cast<float>(h[i]));
  const std::string header(file.begin() + 10, file.end() - 10);
  CHECK(header.find("'shape': (5,)") != std::string::npos);  // a 1-tuple needs its comma

  const float scalar = 42.0f;
  REQUIRE(jet::tools::encode_npy({}, DType::F32, &scalar, &file).ok());
  REQUIRE(parse(file, &a).ok());
  CHECK(a.dims.empty());
  CHECK(a.values == std::vector<float>{42.0f});

  REQUIRE(jet::tools::encode_npy({0, 3}, DType::F32, nullptr, &file).ok());
  REQUIRE(parse(file, &a).ok());
  CHECK(a.dims == std::vector<int64_t>{0, 3});
  CHECK(a.values.empty());

  CHECK(!jet::tools::encode_npy({-1}, DType::F32, &scalar, &file).ok());
}

TEST_CASE("npy: write_npy / read_npy through a file") {
  const std::vector<float> values = {1, 2, 3, 4};
  const std::string path = "jet_test_npy_roundtrip.npy";
  REQUIRE(jet::tools::write_npy(path, {1, 4}, DType::F32, values.data()).ok());
  HostArray a;
  REQUIRE(jet::tools::read_npy(path, &a).ok());
  CHECK(a.values == values);
  std::remove(path.c_str());

  const Status st = jet::tools::read_npy("no/such/dir/file.npy", &a);
  CHECK(!st.ok());
  CHECK(st.message().find("no/such/dir/file.npy") != std::string::npos);
  CHECK(!jet::tools::write_npy("no/such/dir/file.npy", {1}, DType::F32, values.data()).ok());
}

TEST_CASE("npy: every readable dtype converts to float") {
  HostArray a;
  {
    const double d[] = {1.0 / 3.0, -2.5, 1e300};
    std::vector<uint8_t> bytes(sizeof(d));
    std::memcpy(bytes.data(), d, sizeof(d));
    REQUIRE(parse(make_npy(1, header_for("<f8", "(3,)"), bytes), &a).ok());
    CHECK(a.values[0] == static_cast<float>(1.0 / 3.0));
    CHECK(a.values[1] == -2.5f);
    CHECK(a.values[2] == static_cast<float>(1e300));  // inf, as numpy's astype(float32) gives
    CHECK(a.source_type == "<f8");
  }
  {
    const int64_t v[] = {-3, 0, int64_t{1} << 40};
    std::vector<uint8_t> bytes(sizeof(v));
    std::memcpy(bytes.data(), v, sizeof(v));
    REQUIRE(parse(make_npy(1, header_for("<i8", "(1, 3)"), bytes), &a).ok());
    CHECK(a.values == std::vector<float>{-3.0f, 0.0f, 1099511627776.0f});
  }
  {
    const int32_t v[] = {-7, 123456};
    std::vector<uint8_t> bytes(sizeof(v));
    std::memcpy(bytes.data(), v, sizeof(v));
    REQUIRE(parse(make_npy(1, header_for("<i4", "(2,)"), bytes), &a).ok());
    CHECK(a.values == std::vector<float>{-7.0f, 123456.0f});
  }
  REQUIRE(parse(make_npy(1, header_for("|u1", "(3,)"), {0, 7, 255}), &a).ok());
  CHECK(a.values == std::vector<float>{0.0f, 7.0f, 255.0f});
  REQUIRE(parse(make_npy(1, header_for("|b1", "(3,)"), {1, 0, 1}), &a).ok());
  CHECK(a.values == std::vector<float>{1.0f, 0.0f, 1.0f});
  // '=' (native) and key order, double quotes, Python 2 long literals: all things numpy wrote.
  REQUIRE(parse(make_npy(1, "{\"shape\": (2L,), \"fortran_order\": False, \"descr\": \"=f4\"}", f32_bytes({1, 2})),
                &a).ok());
  CHECK(a.values == std::vector<float>{1.0f, 2.0f});
}

TEST_CASE("npy: format versions 2.0 and 3.0") {
  HostArray a;
  REQUIRE(parse(make_npy(2, header_for("<f4", "(2,)"), f32_bytes({5, 6})), &a).ok());
  CHECK(a.values == std::vector<float>{5.0f, 6.0f});
  REQUIRE(parse(make_npy(3, header_for("<f4", "(1, 1)"), f32_bytes({7})), &a).ok());
  CHECK(a.values == std::vector<float>{7.0f});
  std::vector<uint8_t> v4 = make_npy(1, header_for("<f4", "(1,)"), f32_bytes({1}));
  v4[6] = 4;
  expect_error(v4, "unsupported format version 4.0");
}

TEST_CASE("npy: hostile and malformed headers give clear errors") {
  const std::vector<uint8_t> one = f32_bytes({1});
  expect_error({}, "magic");
  expect_error({'P', 'K', 3, 4, 0, 0, 0, 0, 0, 0, 0, 0}, "magic");
  {
    std::vector<uint8_t> f = make_npy(1, header_for("<f4", "(1,)"), one);
    f[8] = 0xff;  // header length 0xff?? runs past the end
    f[9] = 0x7f;
    expect_error(f, "runs past the end");
    std::vector<uint8_t> g = make_npy(2, header_for("<f4", "(1,)"), one);
    g[11] = 0x7f;  // a 2 GB header
    expect_error(g, "implausibly large");
  }
  expect_error(make_npy(1, "{'descr': '<f4', 'fortran_order': True, 'shape': (1,), }", one), "Fortran");
  expect_error(make_npy(1, header_for(">f4", "(1,)"), one), "big-endian");
  expect_error(make_npy(1, header_for("<c8", "(1,)"), one), "unsupported dtype '<c8'");
  expect_error(make_npy(1, header_for("<f4x", "(1,)"), one), "unsupported dtype");
  expect_error(make_npy(1, "{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (1,), }", one),
               "structured");
  expect_error(make_npy(1, header_for("<f4", "(-1,)"), one), "non-negative integers");
  expect_error(make_npy(1, header_for("<f4", "(2, x)"), one), "non-negative integers");
  expect_error(make_npy(1, header_for("<f4", "(2 3)"), one), "expected ',' or ')'");
  expect_error(make_npy(1, header_for("<f4", "[1]"), one), "must be a tuple");
  expect_error(make_npy(1, header_for("<f4", "(99999999999999999999999,)"), one), "too large");
  expect_error(make_npy(1, header_for("<f4", "(281474976710656, 281474976710656, 281474976710656)"), one),
               "overflows");
  std::string many = "(";
  for (int i = 0; i < 65; ++i) many += "1, ";
  expect_error(make_npy(1, header_for("<f4", many + ")"), one), "more than 64 dimensions");
  expect_error(make_npy(1, "{'descr': '<f4', 'fortran_order': False}", one), "no 'shape'");
  expect_error(make_npy(1, "{'descr': '<f4', 'shape': (1,)}", one), "no 'fortran_order'");
  expect_error(make_npy(1, "{'fortran_order': False, 'shape': (1,)}", one), "no 'descr'");
  expect_error(make_npy(1, "{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (1,)}", one),
               "duplicate key 'descr'");
  expect_error(make_npy(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (1,), 'extra': 1}", one),
               "unexpected header key 'extra'");
  expect_error(make_npy(1, "{'descr': '<f4', 'fortran_order': Nope, 'shape': (1,)}", one), "True or False");
  expect_error(make_npy(1, "{'descr': '<f4, 'fortran_order': False, 'shape': (1,)}", one), "expected ',' or '}'");
  expect_error(make_npy(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (1,)} junk", one),
               "unexpected text after");
  expect_error(make_npy(1, "'descr': '<f4'", one), "does not start with '{'");
  expect_error(make_npy(1, std::string("{'descr': '<f4\x01', 'fortran_order': False, 'shape': (1,)}"), one),
               "non-printable");
  // Data of the wrong size: short, long, and a shape far beyond the file.
  expect_error(make_npy(1, header_for("<f4", "(2,)"), one), "does not match the header");
  expect_error(make_npy(1, header_for("<f4", "(1,)"), f32_bytes({1, 2})), "does not match the header");
  expect_error(make_npy(1, header_for("<f4", "(1000000, 1000000)"), one), "truncated");
}

TEST_CASE("npy: every truncation of a valid file is an error, never a crash") {
  const std::vector<float> values = {1, 2, 3, 4, 5, 6};
  std::vector<uint8_t> file;
  REQUIRE(jet::tools::encode_npy({3, 2}, DType::F32, values.data(), &file).ok());
  HostArray a;
  for (size_t n = 0; n < file.size(); ++n) {
    const std::vector<uint8_t> prefix(file.begin(), file.begin() + static_cast<std::ptrdiff_t>(n));
    CAPTURE(n);
    CHECK(parse(prefix, &a).code() == StatusCode::BAD_PARAM);
  }
  // Every single-byte change in the preamble and header either still parses to 6 values (a
  // change in the padding) or is a BAD_PARAM.
  for (size_t i = 0; i < 64; ++i) {
    for (int bits : {0x01, 0x20, 0x80, 0xff}) {
      std::vector<uint8_t> f = file;
      f[i] = static_cast<uint8_t>(f[i] ^ bits);
      const Status st = parse(f, &a);
      CAPTURE(i);
      CAPTURE(st.message());
      CHECK((st.ok() ? a.values.size() == 6 : st.code() == StatusCode::BAD_PARAM));
    }
  }
}
