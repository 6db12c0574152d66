// main of the training add-on's CUDA test executable: every case compares a CUDA routine with
// the CPU backend. Without a usable CUDA device (CI) it exits 77, which ctest reports as Skipped.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cstdio>

#include "jet/dnn.h"

int main(int argc, char** argv) {
  jet::Handle h;
  const jet::Status s = jet::Handle::cuda(0, nullptr, &h);
  if (!s.ok()) {
    std::fprintf(stderr, "training CUDA tests skipped: %s\n", s.to_string().c_str());
    return 77;
  }
  doctest::Context context(argc, argv);
  return context.run();
}
