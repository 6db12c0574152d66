// CUDA gemm_backward (gemm_forward and reduce_forward on the device) against the CPU backend.
#include <string>

#include "training/grad_check.h"

using namespace jet;
using namespace jet::test;

TEST_CASE("CUDA gemm_backward matches the CPU") {
  // A fully connected layer (batch 32, 512 -> 10, weights stored N x K as PyTorch's Linear), and
  // a batched product with transposed a.
  struct Case {
    GemmDesc g;
    std::vector<int64_t> a, b, y, bias;
  };
  const Case cases[] = {
      {{false, true}, {32, 512}, {10, 512}, {32, 10}, {1, 10}},
      {{true, false}, {3, 17, 9}, {3, 17, 33}, {3, 9, 33}, {3, 9, 1}},
  };
  for (const Case& c : cases) {
    CAPTURE(dims_str(c.a));
    HostTensor a(TensorDesc::packed(DType::F32, static_cast<int>(c.a.size()), c.a.data()));
    HostTensor b(TensorDesc::packed(DType::F32, static_cast<int>(c.b.size()), c.b.data()));
    HostTensor dy(TensorDesc::packed(DType::F32, static_cast<int>(c.y.size()), c.y.data()));
    a.fill_random();
    b.fill_random();
    dy.fill_random();
    HostTensor da(a.desc()), db(b.desc()),
        dbias(TensorDesc::packed(DType::F32, static_cast<int>(c.bias.size()), c.bias.data()));
    da.poison();
    db.poison();
    dbias.poison();
    compare_cuda_with_cpu(
        [&](const Handle& h, Staging& st, std::vector<HostTensor>& o) {
          REQUIRE_OK(gemm_backward(h, c.g, 1.f, a.desc(), st.in(a), b.desc(), st.in(b), dy.desc(),
                                   st.in(dy), 0.f, o[0].desc(), st.out(o[0]), o[1].desc(),
                                   st.out(o[1]), o[2].desc(), st.out(o[2])));
        },
        {da, db, dbias}, 1e-5);
  }
}
