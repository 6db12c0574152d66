// GEMM-family convolutions on CUDA. PLACEHOLDER until the implementation lands: NOT_SUPPORTED.
#include "conv_algos.cuh"

namespace jet {
namespace cuda {
namespace {
Status not_yet() {
  return make_status(StatusCode::NOT_SUPPORTED, "CUDA GEMM convolutions are not implemented yet");
}
}  // namespace

Status conv_implicit_gemm(const Handle&, const ConvGeom&, const ConvOut&, DType, const void*,
                          const void*, void*) {
  return not_yet();
}
size_t implicit_precomp_gemm_workspace(const ConvGeom&, DType) { return 0; }
Status conv_implicit_precomp_gemm(const Handle&, const ConvGeom&, const ConvOut&, DType,
                                  const void*, const void*, void*, void*) {
  return not_yet();
}
size_t gemm_workspace(const ConvGeom&, DType) { return 0; }
Status conv_gemm(const Handle&, const ConvGeom&, const ConvOut&, DType, const void*, const void*,
                 void*, void*) {
  return not_yet();
}

}  // namespace cuda
}  // namespace jet
