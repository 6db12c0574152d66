#include "cli_args.h"

#include <charconv>
#include <cstdio>
#include <exception>
#include <new>

namespace jet {
namespace tools {

namespace {

std::string number_text(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4g", v);
  return buf;
}

}  // namespace

CommandLine::CommandLine(int argc, char** argv) {
  for (int i = 0; i < argc; ++i) {
    const std::string arg = argv[i] != nullptr ? argv[i] : "";
    const size_t eq = arg.find('=');
    if (i > 0 && arg.size() > 2 && arg.compare(0, 2, "--") == 0 && eq != std::string::npos && eq > 2) {
      args_.push_back(arg.substr(0, eq));
      args_.push_back(arg.substr(eq + 1));
    } else {
      args_.push_back(arg);
    }
  }
  for (std::string& a : args_) pointers_.push_back(&a[0]);
  pointers_.push_back(nullptr);
}

bool print_usage_if_help(const std::string& arg, const char* usage) {
  if (arg != "-h" && arg != "--help") return false;
  std::printf("%s", usage);
  return true;
}

int run_tool(const char* tool, int (*body)(int, char**), int argc, char** argv) {
  try {
    if (argv == nullptr) return body(argc, argv);
    CommandLine command_line(argc, argv);
    return body(command_line.argc(), command_line.argv());
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "%s: error: out of memory\n", tool);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: error: %s\n", tool, e.what());
  } catch (...) {
    std::fprintf(stderr, "%s: error: an unexpected exception\n", tool);
  }
  return 1;
}

int usage_error(const char* tool, const char* usage, const std::string& message) {
  std::fprintf(stderr, "%s: %s\n%s", tool, printable(message, true).c_str(), usage);
  return 2;
}

int fail(const char* tool, const Status& st) {
  std::fprintf(stderr, "%s: error: %s\n", tool, printable(st.to_string(), true).c_str());
  return 1;
}

std::string printable(const std::string& text, bool keep_newlines) {
  std::string out;
  out.reserve(text.size());
  for (char ch : text) {
    const unsigned char c = static_cast<unsigned char>(ch);
    if ((c < 0x20 && !(keep_newlines && c == '\n')) || c == 0x7f) {
      char hex[8];
      std::snprintf(hex, sizeof hex, "\\x%02x", c);
      out += hex;
    } else {
      out += ch;
    }
  }
  return out;
}

bool parse_int64(const std::string& text, int64_t min, int64_t max, int64_t* out) {
  int64_t v = 0;
  const char* end = text.data() + text.size();
  const auto result = std::from_chars(text.data(), end, v);
  if (text.empty() || result.ec != std::errc() || result.ptr != end || v < min || v > max) return false;
  *out = v;
  return true;
}

bool parse_uint64(const std::string& text, uint64_t* out) {
  uint64_t v = 0;
  const char* end = text.data() + text.size();
  const auto result = std::from_chars(text.data(), end, v);
  if (text.empty() || result.ec != std::errc() || result.ptr != end) return false;
  *out = v;
  return true;
}

std::string preprocessing_text(const ImagePreprocessing& pre) {
  std::string s = std::to_string(pre.height) + "x" + std::to_string(pre.width) + " ";
  s += pre.resize == ImagePreprocessing::Resize::STRETCH     ? "stretch"
       : pre.resize == ImagePreprocessing::Resize::LETTERBOX ? "letterbox (pad " + number_text(pre.pad_value) + ")"
                                                             : "centre crop " + number_text(pre.crop_fraction);
  s += std::string(pre.bgr ? ", BGR" : ", RGB") + (pre.nhwc ? ", NHWC" : ", NCHW");
  if (pre.mean.empty()) return s + ", x = pixel / 255";
  s += ", mean";
  for (float m : pre.mean) s += " " + number_text(m);
  s += ", std";
  for (float d : pre.std) s += " " + number_text(d);
  return s;
}

}  // namespace tools
}  // namespace jet
