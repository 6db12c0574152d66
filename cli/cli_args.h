// Command-line helpers shared by jet-convert (converter/) and the jet-* tools (tools/): argument
// splitting and parsing, the exit-code conventions, text for terminals. A library of its own so
// that the converter does not depend on tools/ (tools/cli_common.h includes this header and adds
// what only the runtime tools need: tensors from files, engines, JSON).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

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

// `text` for a terminal: control characters (NUL, ESC, CR, ...) and DEL written as \xNN, so a
// name from a model file can neither cut a message (NUL) nor drive the terminal. Newlines are kept
// when `keep_newlines` (multi-line messages), else escaped too.
std::string printable(const std::string& text, bool keep_newlines = false);

// "224x224 centre crop 0.875, RGB, NCHW, mean 0.485 0.456 0.406, std 0.229 0.224 0.225"
std::string preprocessing_text(const ImagePreprocessing& pre);

}  // namespace tools
}  // namespace jet
