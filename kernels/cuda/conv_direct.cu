// DIRECT convolution on CUDA. PLACEHOLDER until the implementation lands: returns NOT_SUPPORTED.
#include "conv_algos.cuh"

namespace jet {
namespace cuda {

Status conv_direct(const Handle&, const ConvGeom&, const ConvOut&, DType, const void*,
                   const void*, void*) {
  return make_status(StatusCode::NOT_SUPPORTED, "CUDA direct convolution is not implemented yet");
}

}  // namespace cuda
}  // namespace jet
