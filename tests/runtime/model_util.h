// Support for the runtime tests: models written through the converter, host <-> context copies
// on either backend, the reference run (the IR graph run op by op through the tests' one reference
// executor, tests/common/ir_reference.h, one buffer per tensor, no memory plan), and a model-file
// editor for hostile files (FlatBuffers object API, footer checksum recomputed).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "jet/dnn.h"
#include "jet/runtime.h"
#include "jet/schema/model_generated.h"
#include "kernels/util.h"
#include "write_model.h"
#include "zoo.h"

namespace jet {
namespace test {

using Bytes = std::vector<uint8_t>;

// reduced_tests() (kernels/util.h, JET_TEST_REDUCED=1): smaller models and fewer samples.

// write_model with default options (REQUIREs success).
Bytes model_bytes(const ir::Graph& g);

LoadOptions load_options(const Handle& h);

// Loads `bytes` for the backend of `h` (REQUIREs success).
std::shared_ptr<Engine> load_engine(const Bytes& bytes, const Handle& h);

// n uniform values in [lo, hi] (the kernel tests' seeded generator).
std::vector<float> random_floats(int64_t n, float lo, float hi);
// A new f32 CONSTANT of `dims` in g with uniform values in [lo, hi]; its index.
int random_constant(ir::Graph& g, const std::string& name, std::vector<int64_t> dims, float lo, float hi);

// Random values in [-1, 1] for every element of the tensor's span, in its dtype.
Bytes random_tensor(const TensorInfo& t);

// Copies between host bytes and a context's (or any) pointer on the engine's backend; waits.
void copy_to(const Engine& e, void* dst, const Bytes& src);
Bytes copy_from(const Engine& e, const void* src, size_t bytes);

// Memory on the engine's backend (device memory on CUDA), 256-byte aligned, freed on destruction.
class BackendBuffer {
 public:
  BackendBuffer(Backend backend, size_t bytes);
  ~BackendBuffer();
  BackendBuffer(const BackendBuffer&) = delete;
  BackendBuffer& operator=(const BackendBuffer&) = delete;
  void* get() const { return ptr_; }

 private:
  Backend backend_;
  void* ptr_ = nullptr;
};

// Inputs by tensor index -> outputs by tensor index.
using TensorBytes = std::map<int, Bytes>;

// Writes `inputs` into the context, runs it (waiting on CUDA), reads every graph output.
TensorBytes run_context(const Engine& e, ExecutionContext& ctx, const TensorBytes& inputs);

// Random bytes for every graph input of the engine.
TensorBytes random_inputs(const Engine& e);

// The reference: g executed op by op on `h` by direct kernel calls (run_ir_node). Inputs and outputs are keyed
// by IR tensor index (the writer keeps IR indices, so they equal the engine's).
TensorBytes reference_run(const Handle& h, const ir::Graph& g, const TensorBytes& inputs);

// Same bytes (CPU: same kernels in the same order must give bit-identical results).
void check_identical(const TensorBytes& got, const TensorBytes& want, const char* what);
// Within fp32 1e-5 / fp16 1e-2 relative (judged against the output's rms, so that values near
// zero from cancellation are not over-weighted).
void check_close(const Engine& e, const TensorBytes& got, const TensorBytes& want, const char* what,
                 double f32_tol = 1e-5);  // f32_tol: e.g. approximate convolutions' (LoadOptions)

// The runtime (model loaded from memory, context owning its memory) against reference_run, twice
// with fresh random inputs so that nothing left over from the first run can change the second:
// check_identical on CPU, check_close on CUDA.
void check_against_reference(const ir::Graph& g, const Handle& h, const char* what);

// Loads `bytes` on the CPU; the engine goes to `out` when not null. INTERNAL_ERROR when the engine
// is set on failure or missing on success.
Status load_cpu(const Bytes& bytes, bool verify_checksum = true, std::shared_ptr<Engine>* out = nullptr);
// The CPU load of `bytes` is rejected with `text` in the message.
void expect_rejected(const Bytes& bytes, const std::string& text);

// Rewrites a model file: unpack its FlatBuffer, apply `edit`, relay the weights behind the new
// FlatBuffer (same bytes per buffer index), then `after_layout` (for edits of offsets and sizes
// that must not be relocated), pack, and write a correct footer checksum, so that the semantic
// checks are what a hostile edit exercises.
Bytes rebuild_model(const Bytes& file, const std::function<void(fb::ModelT&)>& edit,
                    const std::function<void(fb::ModelT&)>& after_layout = nullptr);

// A fresh correct checksum footer for `file` (after byte edits).
void fix_checksum(Bytes* file);

// The index of the tensor / op named `name` in a model (-1 if absent).
int tensor_index(const fb::ModelT& m, const std::string& name);
int op_index(const fb::ModelT& m, const std::string& name);
// The op named `name` (REQUIREs that there is one).
fb::OpT& op_named(fb::ModelT& m, const std::string& name);

// A temporary file path that is removed on destruction.
class TempFile {
 public:
  explicit TempFile(const std::string& stem);
  ~TempFile();
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace test
}  // namespace jet

// REQUIRE that a Status failed with a message containing `text`.
#define REQUIRE_FAILS_WITH(expr, text)                               \
  do {                                                               \
    const ::jet::Status jet_f_ = (expr);                             \
    INFO("status: " << jet_f_.to_string());                          \
    REQUIRE_FALSE(jet_f_.ok());                                      \
    CHECK(jet_f_.message().find(text) != std::string::npos);         \
  } while (0)
