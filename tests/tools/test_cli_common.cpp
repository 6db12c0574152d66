// tools/cli_common: what the CLIs do between files and tensors (dtype conversion, strided
// placement, shape checks, the seeded generator) and their small formatting helpers.
#include <doctest/doctest.h>

#include <cstring>
#include <new>
#include <stdexcept>
#include <string>
#include <vector>

#include "cli_common.h"
#include "npy.h"

using jet::DType;
using jet::Status;
using jet::StatusCode;
using jet::TensorInfo;
using jet::tools::HostArray;

namespace {

TensorInfo make_info(DType dtype, std::vector<int64_t> dims, std::vector<int64_t> strides = {}) {
  TensorInfo info;
  info.name = "x";
  info.dtype = dtype;
  info.dims = dims;
  info.strides = strides;
  int64_t extent = 1;
  if (strides.empty()) {
    extent = jet::tools::element_count(dims);
  } else {
    for (size_t i = 0; i < dims.size(); ++i) extent += (dims[i] - 1) * strides[i];
  }
  info.bytes = static_cast<size_t>(extent) * jet::dtype_size(dtype);
  return info;
}

}  // namespace

TEST_CASE("cli_common: file values to f32 and f16 tensors and back") {
  HostArray a;
  a.dims = {2, 2};
  a.values = {0.5f, -1.0f, 3.0f, 0.1f};
  std::vector<uint8_t> bytes;
  const TensorInfo f32 = make_info(DType::F32, {2, 2});
  REQUIRE(jet::tools::array_to_tensor_bytes(a, f32, "in.npy", &bytes).ok());
  REQUIRE(bytes.size() == 16);
  std::vector<float> got(4);
  std::memcpy(got.data(), bytes.data(), 16);
  CHECK(got == a.values);

  const TensorInfo f16 = make_info(DType::F16, {2, 2});
  REQUIRE(jet::tools::array_to_tensor_bytes(a, f16, "in.npy", &bytes).ok());
  REQUIRE(bytes.size() == 8);
  uint16_t h[4];
  std::memcpy(h, bytes.data(), 8);
  for (int i = 0; i < 4; ++i) CHECK(h[i] == jet::half(a.values[i]).bits);  // round to nearest even
  std::vector<uint8_t> packed;
  std::vector<float> values;
  jet::tools::tensor_bytes_to_packed(f16, bytes, &packed, &values);
  CHECK(packed == bytes);
  CHECK(values[0] == 0.5f);
  CHECK(values[3] == static_cast<float>(jet::half(0.1f)));
}

TEST_CASE("cli_common: strided (channels-last) tensors are filled and read in logical order") {
  // N=1, C=2, H=1, W=3 stored NHWC: strides {6, 1, 6, 2}.
  const TensorInfo nhwc = make_info(DType::F32, {1, 2, 1, 3}, {6, 1, 6, 2});
  HostArray a;
  a.dims = {1, 2, 1, 3};
  a.values = {0, 1, 2, 10, 11, 12};  // c0: 0 1 2, c1: 10 11 12
  std::vector<uint8_t> bytes;
  REQUIRE(jet::tools::array_to_tensor_bytes(a, nhwc, "in.npy", &bytes).ok());
  std::vector<float> stored(6);
  std::memcpy(stored.data(), bytes.data(), 24);
  CHECK(stored == std::vector<float>{0, 10, 1, 11, 2, 12});
  std::vector<float> values;
  jet::tools::tensor_bytes_to_packed(nhwc, bytes, nullptr, &values);
  CHECK(values == a.values);
}

TEST_CASE("cli_common: a shape mismatch names the file and both shapes") {
  HostArray a;
  a.dims = {1, 3};
  a.values = {1, 2, 3};
  std::vector<uint8_t> bytes;
  const jet::Status st = jet::tools::array_to_tensor_bytes(a, make_info(DType::F32, {3, 1}), "in.npy", &bytes);
  CHECK(st.code() == jet::StatusCode::BAD_PARAM);
  CHECK(st.message() == "in.npy: shape [1, 3] does not match input 'x' of shape [3, 1]");
}

TEST_CASE("cli_common: the seeded generator is deterministic and uniform in [-1, 1)") {
  const TensorInfo info = make_info(DType::F32, {1000});
  std::vector<uint8_t> a, b, c;
  jet::tools::random_tensor_bytes(info, 1, &a);
  jet::tools::random_tensor_bytes(info, 1, &b);
  jet::tools::random_tensor_bytes(info, 2, &c);
  CHECK(a == b);
  CHECK(a != c);
  std::vector<float> v(1000);
  std::memcpy(v.data(), a.data(), 4000);
  int negative = 0;
  for (float x : v) {
    CHECK(x >= -1.0f);
    CHECK(x < 1.0f);
    negative += x < 0;
  }
  CHECK(negative > 400);  // about half (binomial, sd 16)
  CHECK(negative < 600);
  // The first value of seed 1 (splitmix64 computed independently), fixed so the sequence never
  // changes silently between versions.
  CHECK(v[0] == doctest::Approx(2.0 * ((0x910a2dec89025cc1ull >> 40) / 16777216.0) - 1.0));
}

TEST_CASE("cli_common: names, JSON strings, numbers and integer parsing") {
  CHECK(jet::tools::sanitize_file_name("gpu_0/softmax:0") == "gpu_0_softmax_0");
  CHECK(jet::tools::sanitize_file_name("a.b-c_D9") == "a.b-c_D9");
  CHECK(jet::tools::sanitize_file_name("..") == "_..");
  CHECK(jet::tools::sanitize_file_name("") == "_");
  CHECK(jet::tools::json_string("a\"b\\c\n\x01") == "\"a\\\"b\\\\c\\n\\u0001\"");
  CHECK(jet::tools::json_number(1.5) == "1.5");
  CHECK(jet::tools::json_number(1.0 / 0.0) == "null");
  CHECK(jet::tools::format_dims({2, 3}) == "[2, 3]");
  CHECK(jet::tools::format_dims({}) == "[]");
  int64_t v = 0;
  CHECK(jet::tools::parse_int64("42", 1, 100, &v));
  CHECK(v == 42);
  CHECK(!jet::tools::parse_int64("0", 1, 100, &v));
  CHECK(!jet::tools::parse_int64("101", 1, 100, &v));
  CHECK(!jet::tools::parse_int64("4x", 1, 100, &v));
  CHECK(!jet::tools::parse_int64("", 1, 100, &v));
  CHECK(!jet::tools::parse_int64("99999999999999999999", 1, 100, &v));
  uint64_t u = 0;
  CHECK(jet::tools::parse_uint64("18446744073709551615", &u));
  CHECK(u == 18446744073709551615ull);
  CHECK(!jet::tools::parse_uint64("-1", &u));
  jet::Backend b = jet::Backend::CPU;
  CHECK(jet::tools::parse_backend("cuda", &b));
  CHECK(b == jet::Backend::CUDA);
  CHECK(!jet::tools::parse_backend("gpu", &b));
}

TEST_CASE("cli_common: printable escapes control characters; run_tool lets no exception escape") {
  CHECK(jet::tools::printable(std::string("a\x1b[31mb\0c\x7f", 10)) == "a\\x1b[31mb\\x00c\\x7f");
  CHECK(jet::tools::printable("two\nlines", true) == "two\nlines");
  CHECK(jet::tools::printable("two\nlines") == "two\\x0alines");
  CHECK(jet::tools::printable("plain name/0:1") == "plain name/0:1");
  const auto throws_bad_alloc = [](int, char**) -> int { throw std::bad_alloc(); };
  const auto throws_runtime = [](int, char**) -> int { throw std::runtime_error("boom"); };
  const auto returns = [](int argc, char**) -> int { return argc; };
  CHECK(jet::tools::run_tool("jet-test", throws_bad_alloc, 0, nullptr) == 1);
  CHECK(jet::tools::run_tool("jet-test", throws_runtime, 0, nullptr) == 1);
  CHECK(jet::tools::run_tool("jet-test", returns, 7, nullptr) == 7);
}

TEST_CASE("cli_common: run_tool gives the body the command line split by CommandLine") {
  // The body sees "--device=cpu" as "--device", "cpu", the positional argument whole, and the
  // null pointer after the last argument; any other command line returns 99.
  const auto split_as_expected = [](int argc, char** argv) -> int {
    const std::vector<std::string> want = {"tool", "--device", "cpu", "model.jet"};
    if (argc != static_cast<int>(want.size()) || argv[argc] != nullptr) return 99;
    for (int i = 0; i < argc; ++i)
      if (want[static_cast<size_t>(i)] != argv[i]) return 99;
    return 0;
  };
  std::vector<std::string> in = {"tool", "--device=cpu", "model.jet"};
  std::vector<char*> argv;
  for (std::string& s : in) argv.push_back(&s[0]);
  argv.push_back(nullptr);
  CHECK(jet::tools::run_tool("jet-test", split_as_expected, static_cast<int>(in.size()), argv.data()) == 0);
  // No arguments at all (argc 0, argv only the null pointer): the body gets argc 0, argv[0] null.
  const auto no_arguments = [](int argc, char** argv) -> int { return argc == 0 && argv[0] == nullptr ? 0 : 99; };
  char* empty[] = {nullptr};
  CHECK(jet::tools::run_tool("jet-test", no_arguments, 0, empty) == 0);
}

TEST_CASE("cli_common: CommandLine splits --opt=value and leaves everything else whole") {
  std::vector<std::string> in = {"tool",        "--device=cpu", "--input=x=a.npy", "-o=keep", "NAME=FILE",
                                 "--verbose",   "--",           "--=x",            "--seed=",  "model.jet"};
  std::vector<char*> argv;
  for (std::string& s : in) argv.push_back(&s[0]);
  argv.push_back(nullptr);
  jet::tools::CommandLine cl(static_cast<int>(in.size()), argv.data());
  const std::vector<std::string> want = {"tool", "--device", "cpu",   "--input", "x=a.npy", "-o=keep", "NAME=FILE",
                                         "--verbose", "--", "--=x", "--seed", "", "model.jet"};
  REQUIRE(cl.argc() == static_cast<int>(want.size()));
  for (int i = 0; i < cl.argc(); ++i) CHECK(std::string(cl.argv()[i]) == want[static_cast<size_t>(i)]);
  CHECK(cl.argv()[cl.argc()] == nullptr);
}

TEST_CASE("cli_common: integer and bool inputs take exact values and refuse others; .npy keeps int64 exact") {
  // 2^60 + 1 is no float: the exact values of an int64 .npy file must reach the tensor.
  const int64_t big = (int64_t(1) << 60) + 1;
  const std::vector<int64_t> ids = {big, -7, 0};
  std::vector<uint8_t> file;
  REQUIRE(jet::tools::encode_npy({3}, DType::I64, ids.data(), &file).ok());
  HostArray a;
  REQUIRE(jet::tools::parse_npy(file.data(), file.size(), "ids.npy", &a).ok());
  CHECK(a.ints == ids);
  std::vector<uint8_t> bytes;
  REQUIRE(jet::tools::array_to_tensor_bytes(a, make_info(DType::I64, {3}), "ids.npy", &bytes).ok());
  int64_t stored[3];
  std::memcpy(stored, bytes.data(), 24);
  CHECK(stored[0] == big);
  CHECK(stored[1] == -7);
  // The tensor back to .npy: the same bytes as the file's data.
  std::vector<uint8_t> again;
  REQUIRE(jet::tools::encode_npy({3}, DType::I64, bytes.data(), &again).ok());
  CHECK(again == file);
  // An int32 input: out of range is refused, never wrapped.
  CHECK(jet::tools::array_to_tensor_bytes(a, make_info(DType::I32, {3}), "ids.npy", &bytes).code() ==
        StatusCode::BAD_PARAM);
  // A float file for an integer input: whole numbers are taken, fractions refused.
  HostArray f;
  f.dims = {2};
  f.values = {3.f, -2.f};
  REQUIRE(jet::tools::array_to_tensor_bytes(f, make_info(DType::I32, {2}), "f.npy", &bytes).ok());
  int32_t i32[2];
  std::memcpy(i32, bytes.data(), 8);
  CHECK(i32[0] == 3);
  CHECK(i32[1] == -2);
  f.values = {3.5f, 1.f};
  const Status st = jet::tools::array_to_tensor_bytes(f, make_info(DType::I32, {2}), "f.npy", &bytes);
  CHECK(st.code() == StatusCode::BAD_PARAM);
  CHECK(st.message().find("3.5") != std::string::npos);
  // Bool: 0 and 1 only; written as '|b1'.
  f.values = {1.f, 0.f};
  REQUIRE(jet::tools::array_to_tensor_bytes(f, make_info(DType::BOOL, {2}), "f.npy", &bytes).ok());
  CHECK(bytes == std::vector<uint8_t>{1, 0});
  f.values = {2.f, 0.f};
  CHECK(jet::tools::array_to_tensor_bytes(f, make_info(DType::BOOL, {2}), "f.npy", &bytes).code() == StatusCode::BAD_PARAM);
  REQUIRE(jet::tools::encode_npy({2}, DType::BOOL, std::vector<uint8_t>{1, 0}.data(), &file).ok());
  REQUIRE(jet::tools::parse_npy(file.data(), file.size(), "b.npy", &a).ok());
  CHECK(a.source_type == "|b1");
  CHECK(a.ints == std::vector<int64_t>{1, 0});
}
