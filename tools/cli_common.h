// Small helpers shared by the jet-* command-line tools: argument parsing, formatting, JSON
// strings, and moving tensors between files, host buffers and an execution context.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "host_array.h"
#include "jet/runtime.h"

namespace jet {
namespace tools {

// Integers only (std::from_chars for integers is portable; floating-point from_chars is not
// available on gcc 9). The whole string must be a number in [min, max].
bool parse_int64(const std::string& text, int64_t min, int64_t max, int64_t* out);
bool parse_uint64(const std::string& text, uint64_t* out);

// The command line with every "--name=value" argument split into "--name" and "value", so that
// the argument loop of every tool, which takes an option's value from the next argument, accepts
// both spellings. Only arguments starting with "--" are split, at their first '=' ("--input=x=a.npy"
// gives "--input", "x=a.npy"); "-o", positional arguments and a lone "--" stay whole. run_tool
// gives every tool's body its command line split so.
class CommandLine {
 public:
  CommandLine(int argc, char** argv);
  CommandLine(const CommandLine&) = delete;
  CommandLine& operator=(const CommandLine&) = delete;
  int argc() const { return static_cast<int>(args_.size()); }
  char** argv() { return pointers_.data(); }  // argc() entries, then a null pointer

 private:
  std::vector<std::string> args_;
  std::vector<char*> pointers_;
};

// For the argument loop of every tool: true when `arg` is -h or --help, after printing `usage` to
// stdout (the tool then exits with 0); false, printing nothing, for any other argument.
bool print_usage_if_help(const std::string& arg, const char* usage);

// Runs a tool's main body on the command line split by CommandLine (--opt=value as --opt value),
// so that no exception escapes main: std::bad_alloc (a huge input, a model bigger than memory) and
// any other exception become "<tool>: error: ..." and exit 1, never an abort. With no argv (a
// null pointer) the body gets argc and argv as given: there is nothing to split.
int run_tool(const char* tool, int (*body)(int, char**), int argc, char** argv);

// Prints "<tool>: <message>" and the usage text to stderr; returns 2, the usage-error exit code.
int usage_error(const char* tool, const char* usage, const std::string& message);
// Prints "<tool>: error: <status>" to stderr; returns 1, the failure exit code.
int fail(const char* tool, const Status& st);

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

// `text` for a terminal: control characters (NUL, ESC, CR, ...) and DEL written as \xNN, so a
// name from a model file can neither cut a message (NUL) nor drive the terminal. Newlines are kept
// when `keep_newlines` (multi-line messages), else escaped too.
std::string printable(const std::string& text, bool keep_newlines = false);

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
