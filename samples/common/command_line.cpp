// The samples' shared command-line parsing (see command_line.h).
#include "command_line.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>

namespace jet {
namespace samples {

const std::string* CommandLine::find(const std::string& name) const {
  const auto it = options.find(name);
  return it == options.end() ? nullptr : &it->second;
}

bool CommandLine::whole_number(const std::string& name, int min, int max, int* out, std::string* error) const {
  const std::string* v = find(name);
  if (v == nullptr) return true;
  char* end = nullptr;
  errno = 0;
  const long n = std::strtol(v->c_str(), &end, 10);
  if (v->empty() || *end != '\0' || errno == ERANGE || n < min || n > max) {
    *error = name + " must be a whole number from " + std::to_string(min) + " to " + std::to_string(max) +
             ", not '" + *v + "'";
    return false;
  }
  *out = static_cast<int>(n);
  return true;
}

bool parse_command_line(int argc, char** argv, const char* usage, const std::vector<std::string>& value_options,
                        const std::vector<std::string>& flags, CommandLine* out, std::string* error) {
  auto named = [](const std::vector<std::string>& names, const std::string& name) {
    return std::find(names.begin(), names.end(), name) != names.end();
  };
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i], value;
    const size_t eq = arg.find('=');
    const bool has_eq = arg.rfind("--", 0) == 0 && eq != std::string::npos;
    if (has_eq) {
      value = arg.substr(eq + 1);
      arg = arg.substr(0, eq);
    }
    if (arg == "-h" || arg == "--help") {
      std::fputs(usage, stdout);
      std::exit(0);
    }
    if (arg.rfind("--", 0) != 0) {
      out->positional.push_back(arg);
      continue;
    }
    if (named(flags, arg)) {
      if (has_eq) return *error = arg + " takes no value", false;
      out->options[arg] = "";
      continue;
    }
    if (arg != "--device" && !named(value_options, arg)) return *error = "unknown option " + arg, false;
    if (!has_eq) {
      if (i + 1 >= argc) return *error = arg + " needs a value", false;
      value = argv[++i];
    }
    if (arg == "--device") {
      if (value == "cpu") out->backend = Backend::CPU;
      else if (value == "cuda") out->backend = Backend::CUDA;
      else return *error = "--device must be cpu or cuda, not '" + value + "'", false;
    } else {
      out->options[arg] = value;
    }
  }
  return true;
}

}  // namespace samples
}  // namespace jet
