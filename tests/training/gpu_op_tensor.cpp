// CUDA op_tensor_backward and reduce_backward against the CPU backend.
#include <string>

#include "training/grad_check.h"

using namespace jet;
using namespace jet::test;

TEST_CASE("CUDA op_tensor_backward and reduce_backward match the CPU") {
  // Operands scaled by 1.5 and -0.5: a in [0.7, 2] (POW's base 1.5 a > 1, so log(base) > 0), b
  // in [0.5, 2] (MOD's divisor away from 0); dc in [0.1, 1]. Every term of a broadcast
  // operand's summed gradient then has one sign: with dc in [-1, 1] the scalar operand's sum
  // over 6336 terms cancelled to ~0.05 and the CPU's and the GPU's f32 summation orders differed
  // by 2e-4 of it (a sanitizer run's seed), a conditioning failure, not a kernel error.
  const TensorOp ops[] = {TensorOp::ADD, TensorOp::SUB, TensorOp::MUL, TensorOp::DIV,
                          TensorOp::MIN, TensorOp::MAX, TensorOp::POW, TensorOp::MOD, TensorOp::MOD_FLOOR};
  // A residual add (no broadcast), a per-channel bias / scale, a scalar, a lower-rank operand.
  const std::vector<int64_t> c = {4, 16, 9, 11};
  const std::vector<std::pair<std::vector<int64_t>, std::vector<int64_t>>> shapes = {
      {c, c}, {c, {1, 16, 1, 1}}, {{1, 1, 1, 1}, c}, {{9, 11}, c}};
  for (TensorOp op : ops) {
    for (const auto& s : shapes) {
      CAPTURE(static_cast<int>(op));
      CAPTURE(dims_str(s.first));
      CAPTURE(dims_str(s.second));
      HostTensor a(make_desc(DType::F32, s.first, Layout::CHANNELS_FIRST));
      HostTensor b(make_desc(DType::F32, s.second, Layout::PADDED));
      HostTensor dc(make_desc(DType::F32, c, Layout::CHANNELS_LAST));
      a.fill_random(0.7, 2.0);
      b.fill_random(0.5, 2.0);
      dc.fill_random(0.1, 1.0);
      HostTensor da(a.desc()), db(b.desc());
      da.poison();
      db.fill_random();
      compare_cuda_with_cpu(
          [&](const Handle& h, Staging& st, std::vector<HostTensor>& o) {
            REQUIRE_OK(op_tensor_backward(h, op, 1.5f, a.desc(), st.in(a), -0.5f, b.desc(),
                                          st.in(b), dc.desc(), st.in(dc), 1.f, 0.f, o[0].desc(),
                                          st.out(o[0]), o[1].desc(), st.out(o[1])));
          },
          {da, db}, 1e-5);
    }
  }
  for (ReduceOp op : {ReduceOp::SUM, ReduceOp::MEAN}) {
    HostTensor dy(make_desc(DType::F32, {4, 16, 1, 1}, Layout::CHANNELS_FIRST));
    dy.fill_random();
    HostTensor dx(make_desc(DType::F32, c, Layout::CHANNELS_LAST));
    dx.fill_random();
    compare_cuda_with_cpu(
        [&](const Handle& h, Staging& st, std::vector<HostTensor>& o) {
          REQUIRE_OK(reduce_backward(h, op, 2.f, dy.desc(), st.in(dy), 0.5f, o[0].desc(),
                                     st.out(o[0])));
        },
        {dx}, 1e-5);
  }
}
