// The f32 engine's convolution kernels (gemm_core.cuh's FMA tiles on conv_gemm.cuh's operands):
// a module of their own, apart from conv_gemm.cu's f16 engines, so that the two compile in
// parallel (conv_gemm.cu alone took 3.5 minutes for one architecture with both) and an f16 network
// need not load the f32 kernels.
#include "conv_gemm.cuh"

namespace jet {
namespace cuda {
namespace conv_gemm_detail {

template <class LA>
Status run_f32_engine(const Handle& h, const ConvGeom& g, const ConvOut& e, const LA& a,
                      const void* w, void* partials, const gemm::GemmConfig& c, void* y,
                      const char* routine) {
  const int64_t M = g.n * g.out[0] * g.out[1] * g.out[2];
  const int64_t K = g.cg * g.win[0] * g.win[1] * g.win[2];
  return gemm::run_gemm_f32(h, a, filter_operand<float, true>(g, w), make_epi<float>(g, e, y), M,
                            g.kg, K, g.groups, c, partials, routine);
}

// The A operands conv_gemm.cu runs on the f32 engine.
// (__VA_ARGS__: the type's template arguments hold a comma.)
#define JET_F32_OPERAND(...)                                                                  \
  template Status run_f32_engine<__VA_ARGS__>(const Handle&, const ConvGeom&, const ConvOut&, \
                                              const __VA_ARGS__&, const void*, void*,         \
                                              const gemm::GemmConfig&, void*, const char*);
JET_F32_OPERAND(ConvLoader<float, true>)
JET_F32_OPERAND(ConvLoader<float, false>)
JET_F32_OPERAND(PointwiseLoader<true>)
JET_F32_OPERAND(PointwiseLoader<false>)
JET_F32_OPERAND(gemm::RowsLoader<float, true>)
JET_F32_OPERAND(gemm::RowsLoader<float, false>)
#undef JET_F32_OPERAND

}  // namespace conv_gemm_detail

JET_CUDA_MODULE(conv_gemm_f32)

}  // namespace cuda
}  // namespace jet
