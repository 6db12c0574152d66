// The manifest shared by the two steps of the ONNX conformance harness (docs/conformance.md):
// `jet_conformance_prepare` (needs the ONNX importer) writes it next to the converted models and
// the .npy tensors; `jet_conformance_run` (runtime only, no ONNX dependency) reads it.
//
// Plain text, one line per test, fields separated by tabs:
//   <suite/test> TAB <status> TAB key=value TAB key=value ...
// Statuses:
//   supported       converted; keys f32, f16 (model files) or f32_error / f16_error (the
//                   conversion of that precision failed: counted as a failure when run),
//                   input (repeated, "<name>:<file>", graph input order), output (repeated,
//                   "<name>:<file>", the ONNX graph's output order), frozen (repeated, an input
//                   whose test value became an initializer: docs/conformance.md "Frozen inputs")
//   unsupported     the importer said NOT_SUPPORTED; keys message (the importer's message),
//                   blocker (repeated, "<op type>|<reason>": what to implement next)
//   failed          conversion failed otherwise (a bug); key message
//   not_present     the package has no model for the test (key reason); listed, never run
// Lines starting with '#' are comments. Values are percent-encoded (every byte outside
// [A-Za-z0-9._/-+ ,'()] and '%' itself), so tabs, newlines, ':' and '|' never appear raw.
// File names are relative to the manifest's directory.
#pragma once

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "jet/dnn/common.h"

namespace jet {
namespace conformance {

struct ManifestEntry {
  std::string name;    // "node/test_abs"
  std::string status;  // supported, unsupported, failed, not_present
  std::vector<std::pair<std::string, std::string>> fields;  // decoded key, value; in file order

  // The first value of `key` ("" when absent) and every value of it.
  std::string get(const std::string& key) const;
  std::vector<std::string> get_all(const std::string& key) const;
  void add(const std::string& key, const std::string& value) { fields.emplace_back(key, value); }
};

std::string percent_encode(const std::string& text);
// BAD_PARAM for a malformed escape.
Status percent_decode(const std::string& text, std::string* out);

// "<name>:<file>" pairs (input=, output=): split at the last ':' (tensor names may contain ':',
// the file names the harness writes never do).
std::string join_name_file(const std::string& name, const std::string& file);
Status split_name_file(const std::string& value, std::string* name, std::string* file);

// One line (no trailing newline) for `e`, and back.
std::string format_entry(const ManifestEntry& e);
Status parse_entry(const std::string& line, ManifestEntry* out);

// Calls `take` with every line of the text file `path` that is neither empty nor a '#' comment.
// BAD_PARAM "<path>: cannot open the <what>" when the file cannot be read; an error from `take`
// comes back as BAD_PARAM with "<path>:<line number>: " before its message.
Status for_each_content_line(const std::string& path, const char* what,
                             const std::function<Status(const std::string& line)>& take);

Status write_manifest(const std::string& path, const std::vector<ManifestEntry>& entries);
// BAD_PARAM naming the path and line number for anything malformed.
Status read_manifest(const std::string& path, std::vector<ManifestEntry>* out);

}  // namespace conformance
}  // namespace jet
