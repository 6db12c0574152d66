// Every op type in every table (issue 14): for each ir::OpType, its one-node sample graph
// (tests/common/ir_reference.h op_sample_graph) is written by the converter, loaded and run by the runtime on the
// CPU and compared with the tests' reference executor (tests/common/ir_reference.h), on random
// inputs and the sample's weights. The written op carries the schema member schema/op_list.h names,
// the runtime's row for it agrees with the IR on in-place and dtypes, and docs/ops.md's generated
// table lists every op type as op_list.h does; docs/onnx.md's op table is generated from the ONNX
// importer's op table (the op rows of converter/onnx/ops_*.cpp, their IR and notes columns); docs/format.md's parameter tables are generated
// from schema/model.fbs (each table's comment and fields), so the schema file is the one place an
// op's stored parameters are described. The tables themselves are tied to op_list.h by
// static_asserts (converter/ir.h, runtime/ops.cpp); this test checks what a compiler cannot: that
// each op really runs end to end, and the docs.
//
// JET_UPDATE_DOCS=1 rewrites the docs' generated blocks instead of checking them.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "common/ir_reference.h"
#include "model_util.h"
#include "op_list.h"
#include "ops.h"
#include "passes.h"
#if JET_HAVE_ONNX_IMPORT
#include "onnx_import.h"
#endif

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

#define JET_TEST_OP_ROW(ENUM, fn, Attrs, Params, name, in_place, layout, f32_params, dtypes, backward, inputs) \
  {ir::OpType::ENUM, #ENUM, #fn, #Attrs, fb::OpParams::Params, #Params, name, in_place, #layout, f32_params,   \
   OpDTypes::dtypes == OpDTypes::ANY},
const OpRow kRows[] = {JET_OPS(JET_TEST_OP_ROW)};
#undef JET_TEST_OP_ROW

// docs/ops.md's generated table, as op_list.h gives it.
std::string op_types_table() {
  std::ostringstream s;
  s << "| IR op (`ir::OpType`) | name | schema table (`OpParams`) | attributes (`ir::`, or the table's `fb::` struct) | "
       "runtime "
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
      // The header up to its brace: `table X {`, or `table X` and its attributes on the next line,
      // `(jet_op: "...") {`.
      std::string more;
      while (line.find('{') == std::string::npos && std::getline(in, more)) line += " " + trimmed(more);
      const std::string name = trimmed(line.substr(6, line.find_first_of("({") - 6));
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

// docs/ops.md's routine tables, from the rows the kernels' public headers keep beside each
// routine's declaration, so that a new routine's row is written in the header its author edits
// anyway (kernels/include/jet/dnn/<op>.h), not in the doc. A row is a comment that starts
//   // docs/ops.md TABLE: | `routine` | ... |
// and goes on over the comment lines after it that start with "//   " (joined by one space; it
// ends in "|"); TABLE is one of kRoutineTables. The headers are ASCII, so "--" in a row stands for the
// doc's dash of "not applicable". Each table lists its rows in the order of the headers in
// jet/dnn.h's includes (then jet/dnn/training.h, the training add-on's, which dnn.h does not
// include) and of the rows in each header.
struct RoutineTable {
  const char* tag;       // TABLE in the headers' rows
  const char* begin;     // the doc's generated block, between these two lines
  const char* end;
  const char* heading;   // its header row and rule
  int cells;             // cells a row must have
};
const RoutineTable kRoutineTables[] = {
    {"routines",
     "<!-- routines: generated from the rows of the kernels' headers (kernels/include/jet/dnn/*.h) by "
     "tests/runtime/test_op_tables.cpp (JET_UPDATE_DOCS=1 rewrites it) -->\n",
     "<!-- end of routines -->\n",
     "| routine | modes | CPU f32 | CPU f16 | CUDA f32 | CUDA f16 | forward | backward | ONNX ops (opsets 6..21) |\n"
     "| --- | --- | --- | --- | --- | --- | --- | --- | --- |\n",
     9},
    {"integer",
     "<!-- integer routines: generated from the rows of the kernels' headers (kernels/include/jet/dnn/*.h) by "
     "tests/runtime/test_op_tables.cpp (JET_UPDATE_DOCS=1 rewrites it) -->\n",
     "<!-- end of integer routines -->\n",
     "| routine | modes and dtypes | CPU | CUDA | ONNX ops |\n"
     "| --- | --- | --- | --- | --- |\n",
     5},
    {"training",
     "<!-- training routines: generated from the rows of jet/dnn/training.h by tests/runtime/test_op_tables.cpp "
     "(JET_UPDATE_DOCS=1 rewrites it) -->\n",
     "<!-- end of training routines -->\n",
     "| routine | what | CPU | CUDA | notes |\n"
     "| --- | --- | --- | --- | --- |\n",
     5},
};

// The public headers whose rows make the tables, in order.
std::vector<std::string> routine_headers() {
  std::vector<std::string> headers;
  std::istringstream in(read_source("kernels/include/jet/dnn.h"));
  const std::string tag = "#include \"jet/dnn/";
  std::string line;
  while (std::getline(in, line)) {
    if (line.compare(0, tag.size(), tag) == 0) {
      headers.push_back("kernels/include/jet/dnn/" + line.substr(tag.size(), line.find('"', tag.size()) - tag.size()));
    }
  }
  REQUIRE(!headers.empty());
  headers.push_back("kernels/include/jet/dnn/training.h");
  return headers;
}

// A query, not a routine that computes: sizes, algorithm choices and timings, which the
// convolution tables describe (they need no row).
bool is_query(const std::string& name) {
  auto ends_with = [&](const std::string& suffix) {
    return name.size() > suffix.size() && name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0;
  };
  return ends_with("_workspace_size") || ends_with("_tactic_count") || name.compare(0, 7, "choose_") == 0 ||
         name.compare(0, 5, "find_") == 0;
}

// The rows of every table (by tag), checking that each names routines its header declares and
// has its table's cells, and that every routine of the headers (a `Status name(const Handle&
// ...` declaration that is not a query) has a row in some table.
std::map<std::string, std::string> routine_tables() {
  std::map<std::string, std::string> rows;  // tag -> the table's rows
  std::set<std::string> declared, named;
  for (const std::string& header : routine_headers()) {
    INFO(header);
    const std::string text = read_source(header);
    std::set<std::string> here;  // the routines this header declares
    {
      std::istringstream in(text);
      std::string line;
      while (std::getline(in, line)) {
        const std::string decl = "Status ";
        const size_t paren = line.find('(');
        if (line.compare(0, decl.size(), decl) != 0 || paren == std::string::npos) continue;
        if (line.compare(paren + 1, 20, "const Handle& handle") != 0) continue;
        const std::string name = line.substr(decl.size(), paren - decl.size());
        here.insert(name);
        if (!is_query(name)) declared.insert(name);
      }
    }
    std::istringstream in(text);
    std::string line;
    const std::string tag = "// docs/ops.md ";
    while (std::getline(in, line)) {
      if (line.compare(0, tag.size(), tag) != 0) continue;
      const size_t colon = line.find(": ", tag.size());
      REQUIRE_MESSAGE(colon != std::string::npos, "a docs/ops.md row without its table: " << line);
      const std::string table = line.substr(tag.size(), colon - tag.size());
      std::string row = trimmed(line.substr(colon + 2));
      // Its continuation lines start with "//   "; the next line that does not ends the row.
      std::streampos next = in.tellg();
      while (std::getline(in, line) && line.compare(0, 5, "//   ") == 0) {
        row += " " + trimmed(line.substr(5));
        next = in.tellg();
      }
      in.clear();
      in.seekg(next);
      REQUIRE_MESSAGE((!row.empty() && row.back() == '|'), "a docs/ops.md row that does not end in '|': " << row);
      INFO("row " << row);
      bool known = false;
      for (const RoutineTable& t : kRoutineTables) {
        if (table != t.tag) continue;
        known = true;
        CHECK(std::count(row.begin(), row.end(), '|') == t.cells + 1);
      }
      CHECK_MESSAGE(known, "no docs/ops.md table '" << table << "'");
      // The first cell: the routines it documents, "`a`" or "`a`, `b`", each declared here.
      REQUIRE(row.compare(0, 3, "| `") == 0);
      const std::string first = row.substr(2, row.find(" |", 2) - 2);
      for (size_t b = first.find('`'); b != std::string::npos;) {
        const size_t e = first.find('`', b + 1);
        REQUIRE(e != std::string::npos);
        const std::string name = first.substr(b + 1, e - b - 1);
        CHECK_MESSAGE(here.count(name) == 1, "the row's routine " << name << " is not declared in " << header);
        named.insert(name);
        b = first.find('`', e + 1);
      }
      for (size_t d = row.find("--"); d != std::string::npos; d = row.find("--", d)) row.replace(d, 2, "\xe2\x80\x94");
      rows[table] += row + "\n";
    }
  }
  for (const std::string& name : declared) {
    CHECK_MESSAGE(named.count(name) == 1, name << " has no docs/ops.md row in its header");
  }
  return rows;
}

#if JET_HAVE_ONNX_IMPORT
// docs/onnx.md's op table, as the op rows of converter/onnx/ops_*.cpp give it: a table row per op row
// with an IR, holding the rows after it whose IR is ""; an op added after opset 1 shows its first opset.
std::string onnx_ops_table() {
  const std::vector<OnnxOpInfo> ops = onnx_op_table();
  std::ostringstream s;
  s << "| ONNX op | IR | notes |\n";
  s << "| --- | --- | --- |\n";
  for (size_t i = 0; i < ops.size();) {
    INFO("ONNX op " << ops[i].op_type);
    REQUIRE(std::string(ops[i].ir) != "");  // the first line of a row says what the ops become
    s << "|";
    size_t j = i;
    for (; j < ops.size() && (j == i || std::string(ops[j].ir).empty()); ++j) {
      if (j > i) CHECK(std::string(ops[j].notes).empty());  // a line joining a row has no notes of its own
      s << (j == i ? " " : ", ") << ops[j].op_type;
      if (ops[j].since > 1) s << " (" << ops[j].since << "+)";
    }
    s << " | " << ops[i].ir << " | " << ops[i].notes << (std::string(ops[i].notes).empty() ? "|\n" : " |\n");
    i = j;
  }
  return s.str();
}

// docs/onnx.md's list of the op types that take computed integer and bool tensors (ints).
std::string onnx_integer_ops() {
  std::set<std::string> names;
  for (const OnnxOpInfo& op : onnx_op_table()) {
    if (op.integer_tensors) names.insert(op.op_type);
  }
  std::string s;
  for (const std::string& n : names) s += (s.empty() ? "" : ", ") + n;
  return s + ".\n";
}
#endif

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
    // The runtime names a member after its first JET_OPS row (POOL for POOL and GLOBAL_POOL).
    size_t first = 0;
    while (kRows[first].params != r.params) ++first;
    CHECK(std::string(e->name) == kRows[first].name);
  }
  CHECK(ir::op_type_name(ir::OpType::COUNT) == std::string("?"));
  CHECK(rt::find_op_entry(fb::OpParams::NONE) == nullptr);
}

TEST_CASE("op tables: every op type written, loaded and run against the reference (f32, f16 channels-last; CPU and CUDA)") {
  for (const OpRow& r : kRows) {
    INFO("op " << r.name);
    ir::Graph g;
    REQUIRE_OK(test::op_sample_graph(r.op, &g));
    REQUIRE(g.nodes.size() == 1);
    CHECK(g.nodes[0].op == r.op);
    const Bytes bytes = model_bytes(g);
    const fb::Model* m = fb::GetModel(bytes.data());
    REQUIRE(m->ops()->size() == 1);
    CHECK(m->ops()->Get(0)->params_type() == r.params);
    // The f16 form as the converter makes it (what the fuzz seeds hold too).
    ir::Graph g16 = g;
    REQUIRE_OK(convert_precision(&g16, DType::F16));
    REQUIRE_OK(set_channels_last(&g16));
    for (const Handle& h : test_handles()) {
      check_against_reference(g, h, (std::string(r.name) + " f32").c_str());
      check_against_reference(g16, h, (std::string(r.name) + " f16 channels-last").c_str());
    }
  }
}

TEST_CASE("op tables: docs/ops.md lists every op type (its generated table)") {
  check_generated_block("docs/ops.md", kBegin, kEnd, op_types_table());
}

TEST_CASE("op tables: docs/ops.md's routine tables are the rows of the kernels' headers") {
  std::map<std::string, std::string> rows = routine_tables();
  for (const RoutineTable& t : kRoutineTables) {
    INFO("table " << t.tag);
    CHECK(!rows[t.tag].empty());
    check_generated_block("docs/ops.md", t.begin, t.end, std::string(t.heading) + rows[t.tag]);
  }
}

TEST_CASE("op tables: docs/format.md's parameter tables are schema/model.fbs's") {
  check_generated_block("docs/format.md",
                        "<!-- parameter tables: generated from schema/model.fbs by tests/runtime/test_op_tables.cpp "
                        "(JET_UPDATE_DOCS=1 rewrites it) -->\n",
                        "<!-- end of parameter tables -->\n", params_table(read_source("schema/model.fbs")));
}

#if JET_HAVE_ONNX_IMPORT
TEST_CASE("op tables: docs/onnx.md's op table is the op rows of converter/onnx/ops_*.cpp") {
  std::set<std::string> names;
  for (const OnnxOpInfo& op : onnx_op_table()) {
    INFO("ONNX op " << op.op_type);
    CHECK(names.insert(op.op_type).second);  // one line per op type: a second would never be found
  }
  check_generated_block("docs/onnx.md",
                        "<!-- ONNX op table: generated from the op rows of converter/onnx/ops_*.cpp by "
                        "tests/runtime/test_op_tables.cpp (JET_UPDATE_DOCS=1 rewrites it) -->\n",
                        "<!-- end of ONNX op table -->\n", onnx_ops_table());
  check_generated_block("docs/onnx.md",
                        "<!-- integer ops: generated from the op rows of converter/onnx/ops_*.cpp by "
                        "tests/runtime/test_op_tables.cpp (JET_UPDATE_DOCS=1 rewrites it) -->\n",
                        "<!-- end of integer ops -->\n", onnx_integer_ops());
}
#endif
