// Every op type in every table (issue 14): for each ir::OpType, a one-node graph is written by the
// converter, loaded and run by the runtime on the CPU and compared with the tests' reference
// executor (tests/common/ir_reference.h), on random inputs and weights. The written op carries the
// schema member schema/op_list.h names, the runtime's row for it agrees with the IR on in-place,
// and docs/ops.md's generated table lists every op type as op_list.h does; docs/format.md's
// parameter tables are generated from schema/model.fbs (each table's comment and fields), so the
// schema file is the one place an op's stored parameters are described. The tables themselves
// are tied to op_list.h by static_asserts (converter/ir.h, runtime/ops.cpp); this test checks what
// a compiler cannot: that each op really runs end to end, and the docs.
//
// JET_UPDATE_DOCS=1 rewrites the docs' generated blocks instead of checking them.
#include <doctest/doctest.h>

#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "model_util.h"
#include "op_list.h"
#include "ops.h"

using namespace jet;
using namespace jet::test;

namespace {

struct OpRow {
  ir::OpType op;
  const char* enum_name;
  const char* fn;
  const char* attrs;
  fb::OpParams params;
  const char* params_name;
  const char* name;
  bool in_place;
  const char* layout;
  bool f32_params;
  bool any_dtype;
};

#define JET_TEST_OP_ROW(ENUM, fn, Attrs, Params, name, in_place, layout, f32_params, dtypes, inputs)         \
  {ir::OpType::ENUM, #ENUM, #fn, #Attrs, fb::OpParams::Params, #Params, name, in_place, #layout, f32_params, \
   OpDTypes::dtypes == OpDTypes::ANY},
const OpRow kRows[] = {JET_OPS(JET_TEST_OP_ROW)};
#undef JET_TEST_OP_ROW

// A graph of one node of type `op` on odd shapes (x: [2, 3, 5, 7] unless the op needs another).
// The switch names every op type, without a default: a new op type needs its sample here.
void one_node_graph(ir::OpType op, ir::Graph* out) {
  ir::Graph& g = *out;
  int x = -1, y = -1;
  const std::vector<int64_t> xdims = op == ir::OpType::GEMM  ? std::vector<int64_t>{3, 6}
                                     : op == ir::OpType::NMS ? std::vector<int64_t>{2, 7, 4}  // boxes
                                                             : std::vector<int64_t>{2, 3, 5, 7};
  REQUIRE_OK(g.add_input("x", DType::F32, xdims, &x));
  switch (op) {
    case ir::OpType::CONV: {
      ir::ConvAttrs a;
      a.pad_begin = {1, 0};
      a.pad_end = {1, 2};
      a.strides = {2, 1};
      a.act = ActivationDesc::relu();
      REQUIRE_OK(g.conv("op", x, random_constant(g, "w", {4, 3, 3, 3}, -1, 1), random_constant(g, "b", {4}, -1, 1), -1, a, &y));
      break;
    }
    case ir::OpType::POOL: REQUIRE_OK(g.max_pool("op", x, 3, 2, 1, &y)); break;
    case ir::OpType::GLOBAL_POOL: REQUIRE_OK(g.global_avg_pool("op", x, &y)); break;
    case ir::OpType::ACTIVATION: REQUIRE_OK(g.activation("op", x, ActivationDesc::leaky_relu(0.1f), &y)); break;
    case ir::OpType::OP_TENSOR:
      REQUIRE_OK(g.op_tensor("op", TensorOp::MUL, x, random_constant(g, "s", {1, 3, 1, 1}, -2, 2), &y));
      break;
    case ir::OpType::GEMM: {
      ir::GemmAttrs a;
      a.trans_b = true;
      REQUIRE_OK(g.gemm("op", x, random_constant(g, "w", {5, 6}, -1, 1), random_constant(g, "b", {5}, -1, 1), a, &y));
      break;
    }
    case ir::OpType::SOFTMAX: REQUIRE_OK(g.softmax("op", x, 1, &y)); break;
    case ir::OpType::CONCAT: REQUIRE_OK(g.concat("op", {x, random_constant(g, "c", {2, 2, 5, 7}, -1, 1)}, 1, &y)); break;
    case ir::OpType::RESHAPE: REQUIRE_OK(g.reshape("op", x, {2, -1}, &y)); break;
    case ir::OpType::BATCHNORM:
      REQUIRE_OK(g.batchnorm("op", x, random_constant(g, "scale", {3}, 0.5f, 2), random_constant(g, "bias", {3}, -1, 1),
                             random_constant(g, "mean", {3}, -1, 1), random_constant(g, "var", {3}, 0.5f, 2), 1e-5, &y));
      break;
    case ir::OpType::TRANSFORM: REQUIRE_OK(g.transform("op", x, DType::F16, &y)); break;
    case ir::OpType::SLICE: {
      ir::SliceAttrs a;
      a.starts = {1, 0, 1, 2};
      a.steps = {1, 2, 1, 2};
      a.sizes = {1, 2, 3, 3};
      a.perm = {0, 1, 3, 2};
      REQUIRE_OK(g.slice("op", x, a, &y));
      break;
    }
    case ir::OpType::PAD: {
      ir::PadAttrs a;
      a.mode = PadMode::REFLECT;
      a.pad_begin = {0, 0, 2, -1};
      a.pad_end = {0, 1, 1, 3};
      REQUIRE_OK(g.pad("op", x, a, &y));
      break;
    }
    case ir::OpType::RESIZE: {
      ir::ResizeAttrs a;
      a.mode = ResizeMode::LINEAR;
      REQUIRE_OK(g.resize("op", x, a, {2, 3, 9, 4}, &y));
      break;
    }
    case ir::OpType::CONV_TRANSPOSE: {
      ir::ConvTransposeAttrs a;
      a.strides = {2, 1};
      REQUIRE_OK(g.conv_transpose("op", x, random_constant(g, "w", {3, 2, 3, 2}, -1, 1), random_constant(g, "b", {2}, -1, 1), a,
                                  {11, 8}, &y));
      break;
    }
    case ir::OpType::INSTANCENORM:
      REQUIRE_OK(g.instancenorm("op", x, random_constant(g, "scale", {3}, 0.5f, 2), random_constant(g, "bias", {3}, -1, 1), 1e-5,
                                &y));
      break;
    case ir::OpType::LRN: {
      LrnDesc l;
      l.n = 3;
      l.k = 1.0;
      REQUIRE_OK(g.lrn("op", x, l, &y));
      break;
    }
    case ir::OpType::REDUCE: REQUIRE_OK(g.reduce("op", x, ReduceOp::MEAN, {1, 3}, &y)); break;
    case ir::OpType::LAYERNORM:
      REQUIRE_OK(g.layernorm("op", x, random_constant(g, "scale", {5, 7}, 0.5f, 2), random_constant(g, "bias", {35}, -1, 1),
                             2, 1e-5, &y));
      break;
    case ir::OpType::LOGIC:  // b of a lower rank: numpy's rank alignment
      REQUIRE_OK(g.logic("op", LogicOp::LESS, x, random_constant(g, "b", {3, 1, 7}, -1, 1), &y));
      break;
    case ir::OpType::WHERE: {
      int cond = -1;
      REQUIRE_OK(g.add_constant("cond", DType::BOOL, {5, 1}, &cond));
      g.tensors[cond].int_data = {1, 0, 0, 1, 1};
      REQUIRE_OK(g.where("op", cond, x, random_constant(g, "b", {3, 1, 1}, -1, 1), &y));
      break;
    }
    case ir::OpType::ARG_REDUCE: REQUIRE_OK(g.arg_reduce("op", x, ArgReduceOp::ARGMIN, 2, true, &y)); break;
    case ir::OpType::GATHER: {  // indices of rank 2, negative ones too
      int idx = -1;
      REQUIRE_OK(g.add_constant("idx", DType::I64, {2, 2}, &idx));
      g.tensors[idx].int_data = {4, -1, 0, -5};
      REQUIRE_OK(g.gather("op", x, idx, 2, &y));
      break;
    }
    case ir::OpType::TOPK: {  // the indices of the 4 smallest along the last axis
      ir::TopKAttrs a;
      a.axis = 3;
      a.k = 4;
      a.largest = false;
      a.indices = true;
      REQUIRE_OK(g.topk("op", x, a, &y));
      break;
    }
    case ir::OpType::NMS: {  // random boxes, 3 classes, at most 2 per class, a score threshold
      ir::NmsAttrs a;
      a.max_output_boxes_per_class = 2;
      a.iou_threshold = 0.3f;
      a.has_score_threshold = true;
      a.score_threshold = -0.5f;
      REQUIRE_OK(g.nms("op", x, random_constant(g, "scores", {2, 3, 7}, -1, 1), a, &y));
      break;
    }
    case ir::OpType::GATHER_ELEMENTS: {  // indices smaller than x at dim 1, negative ones too
      int idx = -1;
      REQUIRE_OK(g.add_constant("idx", DType::I64, {2, 2, 4, 7}, &idx));
      std::vector<int64_t>& v = g.tensors[idx].int_data;
      for (int i = 0; i < 2 * 2 * 4 * 7; ++i) v.push_back(i % 9 - 4);
      REQUIRE_OK(g.gather_elements("op", x, idx, 2, &y));
      break;
    }
    case ir::OpType::TRILU: REQUIRE_OK(g.trilu("op", x, false, -1, &y)); break;
    case ir::OpType::CUMSUM: REQUIRE_OK(g.cumsum("op", x, 1, true, true, &y)); break;
    case ir::OpType::SCATTER: {  // ScatterND, slices x[i, j, :, :] accumulated (duplicate tuples too)
      int idx = -1;
      REQUIRE_OK(g.add_constant("idx", DType::I64, {3, 2}, &idx));
      g.tensors[idx].int_data = {1, 2, 0, -1, 1, 2};
      REQUIRE_OK(g.scatter("op", x, idx, random_constant(g, "upd", {3, 5, 7}, -1, 1), true, ScatterReduction::ADD, 0, &y));
      break;
    }
    case ir::OpType::COUNT: FAIL("not an op type");
  }
  REQUIRE_OK(g.mark_output(y));
}

// docs/ops.md's generated table, as op_list.h gives it.
std::string op_types_table() {
  std::ostringstream s;
  s << "| IR op (`ir::OpType`) | name | schema table (`OpParams`) | attributes (`ir::`) | runtime "
       "(`runtime/ops.cpp`) | in place | layout | f32 parameters | dtypes |\n";
  s << "| --- | --- | --- | --- | --- | --- | --- | --- | --- |\n";
  for (const OpRow& r : kRows) {
    s << "| " << r.enum_name << " | " << r.name << " | " << r.params_name << " | " << r.attrs
      << " | prepare_" << r.fn << ", execute_" << r.fn << " | " << (r.in_place ? "yes" : "no")
      << " | " << r.layout << " | " << (r.f32_params ? "yes" : "no") << " | "
      << (r.any_dtype ? "any" : "f32, f16") << " |\n";
  }
  return s.str();
}

const char* const kBegin = "<!-- op types: generated from schema/op_list.h by tests/runtime/test_op_tables.cpp "
                           "(JET_UPDATE_DOCS=1 rewrites it) -->\n";
const char* const kEnd = "<!-- end of op types -->\n";

// The text of a file of the source tree (JET_TEST_DATA_DIR is tests/data).
std::string read_source(const std::string& relative) {
  const std::string path = std::string(JET_TEST_DATA_DIR) + "/../../" + relative;
  std::ifstream in(path);
  REQUIRE_MESSAGE(in.good(), "cannot read " << path);
  std::stringstream buf;
  buf << in.rdbuf();
  return buf.str();
}

// Checks the generated block of a doc (between `begin` and `end`) against `want`, or rewrites it
// with JET_UPDATE_DOCS=1.
void check_generated_block(const std::string& relative, const std::string& begin, const std::string& end,
                           const std::string& want) {
  const std::string path = std::string(JET_TEST_DATA_DIR) + "/../../" + relative;
  std::string doc = read_source(relative);
  const size_t b = doc.find(begin);
  const size_t e = doc.find(end);
  REQUIRE_MESSAGE((b != std::string::npos && e != std::string::npos && e > b),
                  path << " has no generated block (" << begin << "... " << end << ")");
  const std::string have = doc.substr(b + begin.size(), e - b - begin.size());
  const char* update = std::getenv("JET_UPDATE_DOCS");
  if (update && std::string(update) == "1" && have != want) {
    doc.replace(b + begin.size(), have.size(), want);
    std::ofstream(path) << doc;
    MESSAGE("rewrote the generated block of " << path);
    return;
  }
  INFO(relative << "'s generated block is stale; JET_UPDATE_DOCS=1 ctest -R op_tables rewrites it");
  CHECK(have == want);
}

std::string trimmed(const std::string& s) {
  const size_t b = s.find_first_not_of(" \t");
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(" \t") + 1 - b);
}

// "1.6" from "// ---- Added in schema 1.6 (...) ----" (after trimming), "" for any other line.
std::string added_in(const std::string& line) {
  const std::string tag = "// ---- Added in schema ";
  if (line.compare(0, tag.size(), tag) != 0) return "";
  const std::string rest = line.substr(tag.size());
  return rest.substr(0, rest.find_first_of(" ("));
}

// docs/format.md's parameter tables, as schema/model.fbs declares them: one row per member of
// union OpParams, in the union's order, with the schema version that added it (the top-level
// "Added in schema 1.N" section it sits in; none: 1.0), its fields (those added later marked with
// their version, end-of-line comments in parentheses) and the comment above the table.
std::string params_table(const std::string& fbs) {
  struct Table {
    std::string since, fields, comment;
  };
  std::map<std::string, Table> tables;
  std::vector<std::string> members;
  std::istringstream in(fbs);
  std::string line, since = "1.0", comment;
  bool in_union = false;
  while (std::getline(in, line)) {
    const std::string t = trimmed(line);
    if (in_union) {
      if (t == "}") in_union = false;
      else if (!t.empty()) members.push_back(t.substr(0, t.find(',')));
      continue;
    }
    if (!added_in(line).empty()) {  // a top-level section (an indented one belongs to a table)
      since = added_in(line);
      comment.clear();
    } else if (line.compare(0, 2, "//") == 0) {
      comment += (comment.empty() ? "" : " ") + trimmed(line.substr(2));
    } else if (line.compare(0, 6, "table ") == 0) {
      Table tb{since, "", comment};
      const std::string name = trimmed(line.substr(6, line.find('{') - 6));
      // The fields: on this line for `table X { a: int; }`, else up to the closing brace.
      std::vector<std::string> body;
      const size_t open = line.find('{'), close = line.find('}');
      if (close != std::string::npos) {
        body.push_back(line.substr(open + 1, close - open - 1));
      } else {
        while (std::getline(in, line) && trimmed(line) != "}") body.push_back(line);
      }
      std::string field_since;
      for (const std::string& raw : body) {
        const std::string f = trimmed(raw);
        if (!added_in(f).empty()) field_since = added_in(f);
        if (f.empty() || f.compare(0, 2, "//") == 0) continue;
        const size_t note = f.find("//");
        std::string text = trimmed(f.substr(0, f.find(';')));
        if (!field_since.empty()) text += " (" + field_since + ")";
        if (note != std::string::npos) text += " (" + trimmed(f.substr(note + 2)) + ")";
        tb.fields += (tb.fields.empty() ? "" : ", ") + text;
      }
      tables[name] = tb;
      comment.clear();
    } else if (line.compare(0, 15, "union OpParams ") == 0) {
      in_union = true;
    } else {
      comment.clear();
    }
  }
  std::ostringstream s;
  s << "| table (since) | inputs and meaning | fields |\n";
  s << "| --- | --- | --- |\n";
  for (const std::string& m : members) {
    INFO("union member " << m);
    REQUIRE(tables.count(m) == 1);
    const Table& tb = tables[m];
    s << "| " << m << (tb.since == "1.0" ? "" : " (" + tb.since + ")") << " | " << tb.comment << " | "
      << (tb.fields.empty() ? "(none)" : tb.fields) << " |\n";
  }
  return s.str();
}

}  // namespace

TEST_CASE("op tables: every IR op type has its name, its schema member and the runtime's row") {
  REQUIRE(sizeof(kRows) / sizeof(kRows[0]) == static_cast<size_t>(ir::OpType::COUNT));
  for (size_t i = 0; i < sizeof(kRows) / sizeof(kRows[0]); ++i) {
    const OpRow& r = kRows[i];
    INFO("op " << r.name);
    CHECK(static_cast<size_t>(r.op) == i);
    CHECK(std::string(ir::op_type_name(r.op)) == r.name);
    CHECK(ir::op_allows_in_place(r.op) == r.in_place);
    const rt::OpEntry* e = rt::find_op_entry(r.params);
    REQUIRE(e != nullptr);
    CHECK(e->params == r.params);
    CHECK(e->allows_in_place == r.in_place);
    CHECK(ir::op_takes_any_dtype(r.op) == r.any_dtype);
    CHECK(e->takes_any_dtype == r.any_dtype);
    // The runtime names a member after its first op_list.h line (POOL for POOL and GLOBAL_POOL).
    size_t first = 0;
    while (kRows[first].params != r.params) ++first;
    CHECK(std::string(e->name) == kRows[first].name);
  }
  CHECK(ir::op_type_name(ir::OpType::COUNT) == std::string("?"));
  CHECK(rt::find_op_entry(fb::OpParams::NONE) == nullptr);
}

TEST_CASE("op tables: every op type written, loaded and run against the reference (CPU)") {
  for (const OpRow& r : kRows) {
    INFO("op " << r.name);
    ir::Graph g;
    one_node_graph(r.op, &g);
    REQUIRE(g.nodes.size() == 1);
    CHECK(g.nodes[0].op == r.op);
    const Bytes bytes = model_bytes(g);
    const fb::Model* m = fb::GetModel(bytes.data());
    REQUIRE(m->ops()->size() == 1);
    CHECK(m->ops()->Get(0)->params_type() == r.params);
    check_against_reference(g, Handle::cpu(), r.name);
  }
}

TEST_CASE("op tables: docs/ops.md lists every op type (its generated table)") {
  check_generated_block("docs/ops.md", kBegin, kEnd, op_types_table());
}

TEST_CASE("op tables: docs/format.md's parameter tables are schema/model.fbs's") {
  check_generated_block("docs/format.md",
                        "<!-- parameter tables: generated from schema/model.fbs by tests/runtime/test_op_tables.cpp "
                        "(JET_UPDATE_DOCS=1 rewrites it) -->\n",
                        "<!-- end of parameter tables -->\n", params_table(read_source("schema/model.fbs")));
}
