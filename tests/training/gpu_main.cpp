// main of the training add-on's CUDA test executable: every case compares a CUDA routine with
// the CPU backend. Without a usable CUDA device (CI) it exits 77, which ctest reports as Skipped.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cstdio>
#include <cstring>

#include "jet/dnn.h"

int main(int argc, char** argv) {
  // Listing the cases (-ltc, --list-test-cases, ...) needs no device.
  bool listing = false;
  for (int i = 1; i < argc; ++i) listing = listing || std::strncmp(argv[i], "-l", 2) == 0 ||
                                           std::strncmp(argv[i], "--list", 6) == 0;
  jet::Handle h;
  const jet::Status s = listing ? jet::Status() : jet::Handle::cuda(0, nullptr, &h);
  if (!s.ok()) {
    std::fprintf(stderr, "training CUDA tests skipped: %s\n", s.to_string().c_str());
    return 77;
  }
  doctest::Context context(argc, argv);
  return context.run();
}
