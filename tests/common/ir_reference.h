// The tests' one reference executor of the converter's IR: a node run by direct jet:: kernel
// calls, independently of the runtime's prepare/execute code (its own descriptor building, and for
// SLICE a row-by-row path instead of the runtime's single strided view). The converter's tests
// run whole graphs through it on a planned arena (tests/converter/interpret.h), the runtime's
// tests with one buffer per tensor on either backend (tests/runtime/model_util.h reference_run),
// against which the runtime's results are compared.
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
// is run in place. A kernel's error comes back as it is; NOT_SUPPORTED for an op type this
// executor lacks (there is none: the switch has no default).
Status run_ir_node(const Handle& h, const ir::Graph& g, const ir::Node& n, const std::vector<void*>& ptr,
                   const ScratchFn& scratch);

}  // namespace test
}  // namespace jet
