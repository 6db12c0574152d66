// The tests' one reference executor of the converter's IR: a node run by direct jet:: kernel
// calls, independently of the runtime's prepare/execute code (its own descriptor building, and for
// SLICE a row-by-row path instead of the runtime's single strided view), except for the ops whose
// IR attributes are their schema table's struct: their kernel call is the runtime's kernel rule
// (rt::run_kernel, schema/op_rules.h), written once, so the field-to-argument mapping is checked
// by ONNX's node tests (tests/conformance) and the import tests rather than here. The converter's
// tests run whole graphs through it on a planned arena (tests/converter/interpret.h), the
// runtime's tests with one buffer per tensor on either backend (tests/runtime/model_util.h
// reference_run), against which the runtime's results are compared. Beside it, one sample graph
// per op type (op_sample_graph). A new op type with its own IR attribute struct needs both here
// (a compile error without them); one whose attributes are its table's struct needs neither, unless
// its sample needs more than x and the table's defaults.
#pragma once

#include <cstddef>
#include <functional>
#include <vector>

#include "ir.h"
#include "jet/dnn.h"

namespace jet {
namespace test {

// Memory for a kernel's workspace on the handle's backend, alive until the node has run.
using ScratchFn = std::function<void*(size_t bytes)>;

// Runs node `n` of `g` on `h`: ptr[t] is tensor t's memory on h's backend (every input and the
// output set). A node that reads the same memory it writes (an in-place pair of a planned arena)
// is run in place. A kernel's error comes back as it is.
Status run_ir_node(const Handle& h, const ir::Graph& g, const ir::Node& n, const std::vector<void*>& ptr,
                   const ScratchFn& scratch);

// One sample node of every op type into an empty graph: graph input "x" (f32, [2, 3, 5, 7] unless
// the op needs another), the op's constants and one node named "op" whose output is the graph's
// output. The runtime's op-table test writes, loads and runs each against run_ir_node
// (tests/runtime/test_op_tables.cpp), and the fuzzer's seed corpus writes each as a .jet file
// (tests/fuzz/make_seeds.cpp, built with JET_BUILD_FUZZERS under clang and without the test
// suite: it compiles this file itself). The constants come from a fixed sequence, so the same
// graph, and the same seed file, every run. BAD_PARAM for COUNT.
Status op_sample_graph(ir::OpType op, ir::Graph* out);

}  // namespace test
}  // namespace jet
