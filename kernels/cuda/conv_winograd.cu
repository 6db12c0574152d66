// WINOGRAD convolution on CUDA. PLACEHOLDER until the implementation lands: applies to nothing.
#include "conv_algos.cuh"

namespace jet {
namespace cuda {

bool winograd_applies(const ConvGeom&) { return false; }
size_t winograd_workspace(const ConvGeom&, DType) { return 0; }
Status conv_winograd(const Handle&, const ConvGeom&, const ConvOut&, DType, const void*,
                     const void*, void*, void*) {
  return make_status(StatusCode::NOT_SUPPORTED, "CUDA winograd convolution is not implemented yet");
}

}  // namespace cuda
}  // namespace jet
