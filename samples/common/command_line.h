// What the samples' command lines share: "--name value" and "--name=value" alike, --device,
// -h / --help, unknown options and positional arguments. Each sample names its own options and
// checks their values.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "jet/runtime.h"

namespace jet {
namespace samples {

struct CommandLine {
  // --device cpu|cuda; by default CUDA when this build has it, else the CPU.
  Backend backend = built_with_cuda() ? Backend::CUDA : Backend::CPU;
  // The options given, by name ("--top-k"), with their last value; "" for a flag.
  std::map<std::string, std::string> options;
  // Every other argument (not starting with "--"), in order; argv[0] is not one.
  std::vector<std::string> positional;

  // The value of option `name`, or nullptr when it was not given.
  const std::string* find(const std::string& name) const;
  // Option `name`, when given, as a whole number from `min` to `max` into *out (left as it is
  // when the option was not given). False, naming the option and the range in `error`, when the
  // value is not such a number.
  bool whole_number(const std::string& name, int min, int max, int* out, std::string* error) const;
};

// Parses argv[1..argc-1]: --device; each of `value_options` as "--name VALUE" or "--name=VALUE";
// each of `flags` as "--name"; -h / --help prints `usage` to stdout and exits 0; any other
// argument starting with "--" is an unknown option. Returns false with the problem in `error`
// (a missing or bad value, an unknown option).
bool parse_command_line(int argc, char** argv, const char* usage, const std::vector<std::string>& value_options,
                        const std::vector<std::string>& flags, CommandLine* out, std::string* error);

}  // namespace samples
}  // namespace jet
