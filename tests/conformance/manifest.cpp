#include "manifest.h"

#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

namespace jet {
namespace conformance {

namespace {

bool is_plain(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
         std::strchr("._/-+ ,'()", c) != nullptr;
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

std::string ManifestEntry::get(const std::string& key) const {
  for (const auto& kv : fields) {
    if (kv.first == key) return kv.second;
  }
  return "";
}

std::vector<std::string> ManifestEntry::get_all(const std::string& key) const {
  std::vector<std::string> values;
  for (const auto& kv : fields) {
    if (kv.first == key) values.push_back(kv.second);
  }
  return values;
}

std::string percent_encode(const std::string& text) {
  static const char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (char c : text) {
    if (c != '\0' && is_plain(c)) {
      out += c;
    } else {
      const unsigned char u = static_cast<unsigned char>(c);
      out += '%';
      out += kHex[u >> 4];
      out += kHex[u & 15];
    }
  }
  return out;
}

Status percent_decode(const std::string& text, std::string* out) {
  out->clear();
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '%') {
      *out += text[i];
      continue;
    }
    const int hi = i + 2 < text.size() ? hex_value(text[i + 1]) : -1;
    const int lo = i + 2 < text.size() ? hex_value(text[i + 2]) : -1;
    if (hi < 0 || lo < 0) return Status(StatusCode::BAD_PARAM, "bad percent escape in '" + text + "'");
    *out += static_cast<char>(hi * 16 + lo);
    i += 2;
  }
  return Status::success();
}

std::string join_name_file(const std::string& name, const std::string& file) { return name + ":" + file; }

Status split_name_file(const std::string& value, std::string* name, std::string* file) {
  const size_t colon = value.rfind(':');
  if (colon == std::string::npos || colon + 1 == value.size()) {
    return Status(StatusCode::BAD_PARAM, "'" + value + "' is not NAME:FILE");
  }
  *name = value.substr(0, colon);
  *file = value.substr(colon + 1);
  return Status::success();
}

std::string format_entry(const ManifestEntry& e) {
  std::string line = percent_encode(e.name) + "\t" + percent_encode(e.status);
  for (const auto& kv : e.fields) line += "\t" + percent_encode(kv.first) + "=" + percent_encode(kv.second);
  return line;
}

Status parse_entry(const std::string& line, ManifestEntry* out) {
  *out = ManifestEntry();
  std::vector<std::string> parts;
  size_t start = 0;
  while (true) {
    const size_t tab = line.find('\t', start);
    parts.push_back(line.substr(start, tab == std::string::npos ? std::string::npos : tab - start));
    if (tab == std::string::npos) break;
    start = tab + 1;
  }
  if (parts.size() < 2) return Status(StatusCode::BAD_PARAM, "needs at least a name and a status");
  Status st = percent_decode(parts[0], &out->name);
  if (st.ok()) st = percent_decode(parts[1], &out->status);
  if (!st.ok()) return st;
  if (out->name.empty()) return Status(StatusCode::BAD_PARAM, "empty test name");
  for (size_t i = 2; i < parts.size(); ++i) {
    const size_t eq = parts[i].find('=');
    if (eq == std::string::npos || eq == 0) return Status(StatusCode::BAD_PARAM, "field '" + parts[i] + "' is not KEY=VALUE");
    std::string key, value;
    st = percent_decode(parts[i].substr(0, eq), &key);
    if (st.ok()) st = percent_decode(parts[i].substr(eq + 1), &value);
    if (!st.ok()) return st;
    out->add(key, value);
  }
  return Status::success();
}

Status write_manifest(const std::string& path, const std::vector<ManifestEntry>& entries) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  if (!f) return Status(StatusCode::BAD_PARAM, path + ": cannot create the manifest");
  f << "# jetinfer ONNX conformance manifest v1 (tests/conformance/manifest.h describes the format)\n";
  for (const ManifestEntry& e : entries) f << format_entry(e) << "\n";
  f.close();
  if (!f) return Status(StatusCode::BAD_PARAM, path + ": cannot write the manifest");
  return Status::success();
}

Status for_each_content_line(const std::string& path, const char* what,
                             const std::function<Status(const std::string& line)>& take) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return Status(StatusCode::BAD_PARAM, path + ": cannot open the " + what);
  std::string line;
  int number = 0;
  while (std::getline(f, line)) {
    ++number;
    if (line.empty() || line[0] == '#') continue;
    Status st = take(line);
    if (!st.ok()) return Status(StatusCode::BAD_PARAM, path + ":" + std::to_string(number) + ": " + st.message());
  }
  return Status::success();
}

Status read_manifest(const std::string& path, std::vector<ManifestEntry>* out) {
  out->clear();
  return for_each_content_line(path, "manifest", [out](const std::string& line) {
    ManifestEntry e;
    Status st = parse_entry(line, &e);
    if (st.ok()) out->push_back(std::move(e));
    return st;
  });
}

}  // namespace conformance
}  // namespace jet
