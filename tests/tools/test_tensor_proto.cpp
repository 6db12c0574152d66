// tools/tensor_proto: TensorProto files written here with libonnx-dev's protobuf classes, read back
// by our reader (raw_data and the typed fields, every supported data type), and bad files.
#include <doctest/doctest.h>

#include <onnx/onnx_pb.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "tensor_proto.h"

using jet::Status;
using jet::StatusCode;
using jet::tools::HostArray;
using TP = ONNX_NAMESPACE::TensorProto;

namespace {

Status parse(const TP& t, HostArray* out, std::string* name = nullptr) {
  const std::string bytes = t.SerializeAsString();
  return jet::tools::parse_tensor_proto(bytes.data(), bytes.size(), "input_0.pb", out, name);
}

TP make(TP::DataType type, const std::vector<int64_t>& dims) {
  TP t;
  t.set_data_type(type);
  for (int64_t d : dims) t.add_dims(d);
  return t;
}

}  // namespace

TEST_CASE("tensor_proto: FLOAT raw_data round trip through a file") {
  TP t = make(TP::FLOAT, {1, 2, 3});
  t.set_name("data_0");
  const std::vector<float> values = {0.5f, -1.25f, 3.0f, 1e-20f, -0.0f, 1e20f};
  t.set_raw_data(std::string(reinterpret_cast<const char*>(values.data()), values.size() * 4));
  const std::string path = "jet_test_tensor_proto_input_0.pb";
  {
    std::FILE* f = std::fopen(path.c_str(), "wb");
    REQUIRE(f != nullptr);
    const std::string bytes = t.SerializeAsString();
    REQUIRE(std::fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size());
    std::fclose(f);
  }
  HostArray a;
  std::string name;
  REQUIRE(jet::tools::tensor_proto_supported());
  const Status st = jet::tools::read_tensor_proto(path, &a, &name);
  REQUIRE_MESSAGE(st.ok(), st.to_string());
  std::remove(path.c_str());
  CHECK(name == "data_0");
  CHECK(a.dims == std::vector<int64_t>{1, 2, 3});
  CHECK(a.values == values);
  CHECK(a.source_type == "FLOAT");
}

TEST_CASE("tensor_proto: typed fields of every supported data type") {
  HostArray a;
  {
    TP t = make(TP::FLOAT, {3});
    for (float v : {1.0f, 2.5f, -4.0f}) t.add_float_data(v);
    REQUIRE(parse(t, &a).ok());
    CHECK(a.values == std::vector<float>{1.0f, 2.5f, -4.0f});
  }
  {
    TP t = make(TP::FLOAT16, {2});
    t.add_int32_data(jet::half(1.5f).bits);  // ONNX stores f16 bits in int32_data
    t.add_int32_data(jet::half(-0.125f).bits);
    REQUIRE(parse(t, &a).ok());
    CHECK(a.values == std::vector<float>{1.5f, -0.125f});
    CHECK(a.source_type == "FLOAT16");
  }
  {
    TP t = make(TP::FLOAT16, {2});
    const uint16_t bits[] = {jet::half(3.0f).bits, jet::half(-65504.0f).bits};
    t.set_raw_data(std::string(reinterpret_cast<const char*>(bits), sizeof(bits)));
    REQUIRE(parse(t, &a).ok());
    CHECK(a.values == std::vector<float>{3.0f, -65504.0f});
  }
  {
    TP t = make(TP::DOUBLE, {2});
    t.add_double_data(1.0 / 3.0);
    t.add_double_data(-8.0);
    REQUIRE(parse(t, &a).ok());
    CHECK(a.values == std::vector<float>{static_cast<float>(1.0 / 3.0), -8.0f});
  }
  {
    TP t = make(TP::DOUBLE, {1});
    const double d = 0.1;
    t.set_raw_data(std::string(reinterpret_cast<const char*>(&d), 8));
    REQUIRE(parse(t, &a).ok());
    CHECK(a.values == std::vector<float>{0.1f});
  }
  {
    TP t = make(TP::INT64, {2, 1});
    t.add_int64_data(-5);
    t.add_int64_data(int64_t{1} << 33);
    REQUIRE(parse(t, &a).ok());
    CHECK(a.dims == std::vector<int64_t>{2, 1});
    CHECK(a.values == std::vector<float>{-5.0f, 8589934592.0f});
  }
  {
    TP t = make(TP::INT32, {2});
    const int32_t v[] = {-9, 77};
    t.set_raw_data(std::string(reinterpret_cast<const char*>(v), sizeof(v)));
    REQUIRE(parse(t, &a).ok());
    CHECK(a.values == std::vector<float>{-9.0f, 77.0f});
  }
  {
    TP t = make(TP::UINT8, {3});
    t.set_raw_data(std::string("\x00\x10\xff", 3));
    REQUIRE(parse(t, &a).ok());
    CHECK(a.values == std::vector<float>{0.0f, 16.0f, 255.0f});
  }
  {
    TP t = make(TP::INT8, {1});
    t.add_int32_data(-100);
    REQUIRE(parse(t, &a).ok());
    CHECK(a.values == std::vector<float>{-100.0f});
  }
  {
    TP t = make(TP::BOOL, {2});
    t.add_int32_data(1);
    t.add_int32_data(0);
    REQUIRE(parse(t, &a).ok());
    CHECK(a.values == std::vector<float>{1.0f, 0.0f});
  }
  {
    TP t = make(TP::FLOAT, {});  // a scalar
    t.add_float_data(9.0f);
    REQUIRE(parse(t, &a).ok());
    CHECK(a.dims.empty());
    CHECK(a.values == std::vector<float>{9.0f});
  }
}

TEST_CASE("tensor_proto: bad files give clear errors") {
  HostArray a;
  auto expect_error = [&](const Status& st, const std::string& expected) {
    CAPTURE(st.message());
    CHECK(st.code() == StatusCode::BAD_PARAM);
    CHECK(st.message().find("input_0.pb") != std::string::npos);
    CHECK(st.message().find(expected) != std::string::npos);
  };
  {
    TP t = make(TP::FLOAT, {2, 3});
    t.add_float_data(1.0f);
    expect_error(parse(t, &a), "float_data holds 1 elements but its dims need 6");
  }
  {
    TP t = make(TP::FLOAT, {2});
    t.set_raw_data(std::string(7, '\0'));
    expect_error(parse(t, &a), "not a multiple");
  }
  {
    TP t = make(TP::FLOAT, {1000000, 1000000});  // no data at all for 10^12 elements
    t.add_float_data(1.0f);
    expect_error(parse(t, &a), "its dims need 1000000000000");
  }
  {
    TP t = make(TP::FLOAT, {-1});
    expect_error(parse(t, &a), "dim 0 is -1");
  }
  {
    TP t = make(TP::STRING, {1});
    t.add_string_data("x");
    expect_error(parse(t, &a), "STRING is not supported");
  }
  {
    TP t = make(TP::FLOAT, {1});
    t.set_data_location(TP::EXTERNAL);
    expect_error(parse(t, &a), "external data");
  }
  {
    TP t;  // no data_type: e.g. some other protobuf message
    expect_error(parse(t, &a), "UNDEFINED");
  }
  const std::string garbage = "\xff\xff\xff\xff garbage";
  expect_error(jet::tools::parse_tensor_proto(garbage.data(), garbage.size(), "input_0.pb", &a, nullptr),
               "not a valid ONNX TensorProto");
  const Status missing = jet::tools::read_tensor_proto("no/such/input_0.pb", &a, nullptr);
  CHECK(!missing.ok());
  CHECK(missing.message().find("no/such/input_0.pb") != std::string::npos);
}
