// Test helper for tests/tools/npy_interop.py: exposes tools/npy to a script.
//   jet_npy_tool dump FILE                 prints {"dims": [...], "type": "<f4", "values": [...]}
//   jet_npy_tool write FILE f32|f16 DIMS   writes value i = (i % 17) * 0.25 - 2 (exact in f16)
// Errors: the message on stderr, exit status 1.
#include <cstdio>
#include <string>
#include <vector>

#include "cli_common.h"
#include "npy.h"

int main(int argc, char** argv) {
  using namespace jet::tools;
  const std::string command = argc > 1 ? argv[1] : "";
  if (command == "dump" && argc == 3) {
    HostArray a;
    const jet::Status st = read_npy(argv[2], &a);
    if (!st.ok()) {
      std::fprintf(stderr, "%s\n", st.to_string().c_str());
      return 1;
    }
    std::string s = "{\"dims\": " + format_dims(a.dims) + ", \"type\": " + json_string(a.source_type) + ", \"values\": [";
    for (size_t i = 0; i < a.values.size(); ++i) {
      char buf[32];
      // %.9g round-trips a float; non-finite values as strings Python's float() accepts.
      std::snprintf(buf, sizeof(buf), "%.9g", static_cast<double>(a.values[i]));
      const std::string v = buf;
      const bool finite = v.find_first_of("ni") == std::string::npos;
      s += (i > 0 ? ", " : "") + (finite ? v : "\"" + v + "\"");
    }
    std::printf("%s]}\n", s.c_str());
    return 0;
  }
  if (command == "write" && argc >= 4) {
    const std::string type = argv[3];
    std::vector<int64_t> dims;
    for (int i = 4; i < argc; ++i) {
      int64_t d = 0;
      if (!parse_int64(argv[i], 0, 1 << 20, &d)) {
        std::fprintf(stderr, "bad dim '%s'\n", argv[i]);
        return 1;
      }
      dims.push_back(d);
    }
    const size_t n = static_cast<size_t>(element_count(dims));
    std::vector<float> f(n);
    std::vector<jet::half> h(n);
    for (size_t i = 0; i < n; ++i) {
      f[i] = static_cast<float>(i % 17) * 0.25f - 2.0f;
      h[i] = jet::half(f[i]);
    }
    const jet::DType dtype = type == "f16" ? jet::DType::F16 : jet::DType::F32;
    const jet::Status st = write_npy(argv[2], dims, dtype, dtype == jet::DType::F16 ? static_cast<const void*>(h.data())
                                                                                    : static_cast<const void*>(f.data()));
    if (!st.ok()) {
      std::fprintf(stderr, "%s\n", st.to_string().c_str());
      return 1;
    }
    return 0;
  }
  std::fprintf(stderr, "usage: jet_npy_tool dump FILE | write FILE f32|f16 DIMS...\n");
  return 1;
}
