// CUDA lrn_cross_channel_backward against the CPU backend.
#include <string>

#include "training/grad_check.h"

using namespace jet;
using namespace jet::test;

TEST_CASE("CUDA lrn_cross_channel_backward matches the CPU") {
  for (int64_t n : {1, 4, 5, 16}) {
    for (Layout l : {Layout::CHANNELS_FIRST, Layout::CHANNELS_LAST, Layout::PADDED}) {
      LrnDesc lrn;
      lrn.n = n;
      lrn.alpha = 1e-2;
      const std::vector<int64_t> dims = {2, 19, 9, 11};
      CAPTURE(n);
      CAPTURE(std::string(layout_name(l)));
      HostTensor x(make_desc(DType::F32, dims, l)), dy(make_desc(DType::F32, dims, l));
      x.fill_random(-3.0, 3.0);
      dy.fill_random();
      HostTensor dx(make_desc(DType::F32, dims, Layout::PADDED));
      if (l == Layout::PADDED) dx.fill_random(); else dx.poison();
      const float beta = l == Layout::PADDED ? 0.5f : 0.f;
      compare_cuda_with_cpu(
          [&](const Handle& h, Staging& st, std::vector<HostTensor>& o) {
            REQUIRE_OK(lrn_cross_channel_backward(h, lrn, 1.f, x.desc(), st.in(x), dy.desc(),
                                                  st.in(dy), beta, o[0].desc(), st.out(o[0])));
          },
          {dx}, 1e-5);
    }
  }
}
