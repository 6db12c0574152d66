// The CUDA handle: creation on a real device (GPU machine), and clean errors where there is no
// device or no CUDA in the build (CI). Routines without a CUDA implementation say so.
#include <cstdlib>

#include "kernels/util.h"

using namespace jet;

TEST_CASE("Handle::cuda succeeds on a device or fails with a clear status") {
  Handle h;
  const Status s = Handle::cuda(0, nullptr, &h);
  if (!built_with_cuda()) {
    CHECK(s.code() == StatusCode::NOT_SUPPORTED);
    CHECK(s.message().find("no CUDA backend") != std::string::npos);
    return;
  }
  if (std::getenv("JET_EXPECT_ARCH_MISMATCH")) {
    // scripts/gpu-check.sh builds this test with machine code for another arch only (no PTX)
    // and runs it on the GPU: creation must fail up front, naming the built and device archs.
    CHECK(s.code() == StatusCode::ARCH_MISMATCH);
    CHECK(s.message().find("sm_") != std::string::npos);
    CHECK(s.message().find("rebuild with CMAKE_CUDA_ARCHITECTURES") != std::string::npos);
    MESSAGE("arch mismatch reported as: " << s.to_string());
    return;
  }
  if (!s.ok()) {
    // No GPU here (CI): the status must say so, not crash.
    MESSAGE("no usable CUDA device, GPU checks skipped: " << s.to_string());
    CHECK(s.code() == StatusCode::EXECUTION_FAILED);
    CHECK(!s.message().empty());
    return;
  }
  CHECK(h.backend() == Backend::CUDA);
  CHECK(h.device() == 0);
  CHECK(h.compute_capability() >= 50);
  CHECK(h.sm_count() > 0);
  MESSAGE("CUDA device 0: sm_" << h.compute_capability() << ", " << h.sm_count() << " SMs");

  Handle bad;
  CHECK_STATUS(Handle::cuda(1000, nullptr, &bad), StatusCode::BAD_PARAM);
  CHECK_STATUS(Handle::cuda(0, nullptr, nullptr), StatusCode::BAD_PARAM);
}

TEST_CASE("Handle::cpu is the CPU backend") {
  const Handle h = Handle::cpu();
  CHECK(h.backend() == Backend::CPU);
  CHECK(h.stream() == nullptr);
}
