// Builds small ONNX models in tests with libonnx-dev's generated protobuf classes.
//
//   jet::test::OnnxModel m(13);                              // opset 13 of the default domain
//   m.input("x", {1, 3, 8, 8});                              // FLOAT; -1 = dynamic dim "N"
//   m.initializer("w", {4, 3, 3, 3}, weights);
//   onnx::NodeProto* n = m.node("Conv", {"x", "w"}, {"y"});
//   jet::test::attr_ints(n, "pads", {1, 1, 1, 1});
//   m.output("y");
//   std::string bytes = m.bytes();
#pragma once

#include <doctest/doctest.h>
#include <stdlib.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <onnx/onnx_pb.h>

namespace jet {
namespace test {

inline void attr_int(onnx::NodeProto* n, const std::string& name, int64_t v) {
  onnx::AttributeProto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(v);
}

inline void attr_float(onnx::NodeProto* n, const std::string& name, float v) {
  onnx::AttributeProto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::FLOAT);
  a->set_f(v);
}

inline void attr_string(onnx::NodeProto* n, const std::string& name, const std::string& v) {
  onnx::AttributeProto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::STRING);
  a->set_s(v);
}

inline void attr_ints(onnx::NodeProto* n, const std::string& name, const std::vector<int64_t>& v) {
  onnx::AttributeProto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INTS);
  for (int64_t x : v) a->add_ints(x);
}

inline void attr_floats(onnx::NodeProto* n, const std::string& name, const std::vector<float>& v) {
  onnx::AttributeProto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::FLOATS);
  for (float x : v) a->add_floats(x);
}

// A FLOAT tensor with float_data (raw = false) or raw_data (raw = true).
inline onnx::TensorProto float_tensor(const std::string& name, const std::vector<int64_t>& dims,
                                      const std::vector<float>& values, bool raw = false) {
  onnx::TensorProto t;
  t.set_name(name);
  t.set_data_type(onnx::TensorProto::FLOAT);
  for (int64_t d : dims) t.add_dims(d);
  if (raw) {
    t.set_raw_data(std::string(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(float)));
  } else {
    for (float v : values) t.add_float_data(v);
  }
  return t;
}

inline onnx::TensorProto int64_tensor(const std::string& name, const std::vector<int64_t>& dims,
                                      const std::vector<int64_t>& values) {
  onnx::TensorProto t;
  t.set_name(name);
  t.set_data_type(onnx::TensorProto::INT64);
  for (int64_t d : dims) t.add_dims(d);
  for (int64_t v : values) t.add_int64_data(v);
  return t;
}

inline void attr_tensor(onnx::NodeProto* n, const std::string& name, const onnx::TensorProto& t) {
  onnx::AttributeProto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::TENSOR);
  *a->mutable_t() = t;
}

class OnnxModel {
 public:
  explicit OnnxModel(int64_t opset, int64_t ir_version = 7) {
    model.set_ir_version(ir_version);
    model.set_producer_name("jetinfer-tests");
    onnx::OperatorSetIdProto* os = model.add_opset_import();
    os->set_domain("");
    os->set_version(opset);
    graph = model.mutable_graph();
    graph->set_name("test");
  }

  // dims: -1 is a dynamic dim named "N" (dim_param); -2 a dim with neither value nor name.
  void input(const std::string& name, const std::vector<int64_t>& dims,
             int32_t elem_type = onnx::TensorProto::FLOAT) {
    value_info(graph->add_input(), name, dims, elem_type);
  }
  void output(const std::string& name, int32_t elem_type = onnx::TensorProto::FLOAT) {
    onnx::ValueInfoProto* v = graph->add_output();
    v->set_name(name);
    v->mutable_type()->mutable_tensor_type()->set_elem_type(elem_type);
  }
  onnx::TensorProto* initializer(const std::string& name, const std::vector<int64_t>& dims,
                                 const std::vector<float>& values, bool raw = false) {
    onnx::TensorProto* t = graph->add_initializer();
    *t = float_tensor(name, dims, values, raw);
    return t;
  }
  onnx::TensorProto* initializer_i64(const std::string& name, const std::vector<int64_t>& dims,
                                     const std::vector<int64_t>& values) {
    onnx::TensorProto* t = graph->add_initializer();
    *t = int64_tensor(name, dims, values);
    return t;
  }
  onnx::NodeProto* node(const std::string& op_type, const std::vector<std::string>& inputs,
                        const std::vector<std::string>& outputs, const std::string& name = "") {
    onnx::NodeProto* n = graph->add_node();
    n->set_op_type(op_type);
    n->set_name(name.empty() ? outputs.empty() ? op_type : outputs[0] : name);
    for (const std::string& i : inputs) n->add_input(i);
    for (const std::string& o : outputs) n->add_output(o);
    return n;
  }
  std::string bytes() const {
    std::string s;
    model.SerializeToString(&s);
    return s;
  }

  onnx::ModelProto model;
  onnx::GraphProto* graph = nullptr;

 private:
  static void value_info(onnx::ValueInfoProto* v, const std::string& name, const std::vector<int64_t>& dims,
                         int32_t elem_type) {
    v->set_name(name);
    onnx::TypeProto_Tensor* tt = v->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(elem_type);
    onnx::TensorShapeProto* shape = tt->mutable_shape();
    for (int64_t d : dims) {
      onnx::TensorShapeProto_Dimension* dim = shape->add_dim();
      if (d >= 0) dim->set_dim_value(d);
      if (d == -1) dim->set_dim_param("N");
    }
  }
};

// A fresh directory under /tmp, removed with its files at the end of the scope.
struct TempDir {
  std::string path;
  TempDir() {
    char tmpl[] = "/tmp/jet_onnx_test_XXXXXX";
    const char* p = mkdtemp(tmpl);
    REQUIRE(p != nullptr);
    path = p;
  }
  ~TempDir() {
    const std::string cmd = "rm -rf '" + path + "'";
    if (std::system(cmd.c_str()) != 0) std::fprintf(stderr, "cannot remove %s\n", path.c_str());
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  std::string file(const std::string& name) const { return path + "/" + name; }
  void write(const std::string& name, const std::string& bytes) const {
    FILE* f = std::fopen(file(name).c_str(), "wb");
    REQUIRE(f != nullptr);
    REQUIRE(std::fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size());
    std::fclose(f);
  }
};

}  // namespace test
}  // namespace jet
