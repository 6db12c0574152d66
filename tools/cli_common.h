// Helpers shared by the jet-* command-line tools: formatting, JSON strings, and moving tensors
// between files, host buffers and an execution context. The argument handling they share with
// jet-convert is cli/cli_args.h (included).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "cli_args.h"  // parse_int64, CommandLine, run_tool, usage_error, fail, printable
#include "host_array.h"
#include "jet/runtime.h"

namespace jet {
namespace tools {

// A command-line argument that no option of the tool matched, in a tool taking one model file:
// an unknown option (leading '-'), the model file (into `model`), or a second model file. Returns
// false with the usage error in `error` when the argument is not taken.
bool take_model_argument(const std::string& arg, std::string* model, std::string* error);

// NOT_SUPPORTED, saying so and naming --device cpu, when no CUDA device can be used (a CUDA build
// on a machine without a GPU or driver, or a build without CUDA).
Status cuda_device_available();

// Loads the model file `path` for `backend` (with LoadOptions::copy_file: a tool survives the
// file being rewritten in place while it runs) and, when `ctx` is not null, creates an execution
// context for it. CUDA without a usable device: cuda_device_available()'s error.
Status load_engine(const std::string& path, Backend backend, std::shared_ptr<Engine>* engine,
                   std::unique_ptr<ExecutionContext>* ctx);

// "cpu" / "cuda".
bool parse_backend(const std::string& text, Backend* out);
const char* backend_name(Backend b);

// "[1, 3, 224, 224]"
std::string format_dims(const std::vector<int64_t>& dims);
// "1.5 MiB (1572864 bytes)" style: the short form only.
std::string format_bytes(size_t bytes);
// A JSON string literal, quotes included, with ", \ and control characters escaped.
std::string json_string(const std::string& text);
// A JSON number; non-finite values become null (JSON has no NaN).
std::string json_number(double value);
// printf-style %.*f into a std::string.
std::string fixed(double value, int decimals);

// Every character outside [A-Za-z0-9._-] replaced by '_' (gpu_0/softmax:0 -> gpu_0_softmax_0).
std::string sanitize_file_name(const std::string& name);

const char* tensor_role_name(TensorRole role);

// Product of dims (1 for a scalar).
int64_t element_count(const std::vector<int64_t>& dims);

// Converts a file's values into the bytes the engine expects for tensor `info`: checks the shape
// (BAD_PARAM naming `what`, both shapes and the tensor on mismatch), converts to info.dtype and
// places the elements at info.strides; `out` gets info.bytes bytes.
Status array_to_tensor_bytes(const HostArray& array, const TensorInfo& info, const std::string& what,
                             std::vector<uint8_t>* out);
// Uniform [-1, 1) values for tensor `info` from a splitmix64 stream seeded by `seed` (the same
// seed gives the same values on every platform), in the layout of array_to_tensor_bytes.
void random_tensor_bytes(const TensorInfo& info, uint64_t seed, std::vector<uint8_t>* out);
// The reverse: the tensor's info.bytes bytes (at info.strides) to packed elements of info.dtype
// (`packed`) and to float (`values`). Either output may be null.
void tensor_bytes_to_packed(const TensorInfo& info, const std::vector<uint8_t>& bytes,
                            std::vector<uint8_t>* packed, std::vector<float>* values);

// Copies between host memory and the memory of a context's tensor: cudaMemcpy on CUDA (built
// with CUDA only), memcpy on CPU.
Status copy_to_tensor(Backend backend, void* tensor_data, const void* host, size_t bytes);
Status copy_from_tensor(Backend backend, void* host, const void* tensor_data, size_t bytes);
// Waits for `stream` (CUDA); nothing on CPU.
Status synchronize(Backend backend, cudaStream_t stream);

}  // namespace tools
}  // namespace jet
