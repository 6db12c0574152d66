// CUDA pool_backward against the CPU backend.
#include <string>

#include "training/grad_check.h"

using namespace jet;
using namespace jet::test;

TEST_CASE("CUDA pool_backward matches the CPU") {
  for (PoolMode mode : {PoolMode::MAX, PoolMode::AVG_INCLUDE_PAD, PoolMode::AVG_EXCLUDE_PAD}) {
    const PoolDesc pools[] = {
        PoolDesc::pool2d(mode, 3, 3, 1, 1, 2, 2),        // ResNet's stem pooling
        PoolDesc::pool2d(mode, 2, 3, 1, 0, 1, 2, true),  // ceil_mode, odd
        PoolDesc::pool2d(mode, 3, 3, 1, 1, 1, 1),        // stride 1: every element in 9 windows
        PoolDesc::pool2d(mode, 5, 4, 2, 0, 3, 2),        // wider than the stride
        PoolDesc::global(mode, 2),
    };
    // The second size spans several of the max kernel's 32 x 32 tiles (windows across their
    // borders, a partial last tile).
    for (const std::vector<int64_t>& dims :
         {std::vector<int64_t>{2, 5, 13, 11}, std::vector<int64_t>{1, 3, 70, 45}}) {
      for (const PoolDesc& pool : pools) {
        for (Layout l : {Layout::CHANNELS_FIRST, Layout::CHANNELS_LAST, Layout::PADDED}) {
          const TensorDesc xd = make_desc(DType::F32, dims, l);
          int64_t out[4];
          REQUIRE_OK(pool_output_dims(xd, pool, out));
          HostTensor x(xd), dy(make_desc(DType::F32, {out[0], out[1], out[2], out[3]}, l));
          x.fill_random();
          dy.fill_random();
          if (l == Layout::PADDED) x.plant_specials();
          HostTensor dx(make_desc(DType::F32, dims, l));
          dx.fill_random();
          const float beta = l == Layout::CHANNELS_LAST ? 0.5f : 0.f;
          if (beta == 0.f) dx.poison();
          CAPTURE(static_cast<int>(mode));
          CAPTURE(dims_str(dims));
          CAPTURE(std::string(layout_name(l)));
          compare_cuda_with_cpu(
              [&](const Handle& h, Staging& st, std::vector<HostTensor>& o) {
                REQUIRE_OK(pool_backward(h, pool, 0.75f, x.desc(), st.in(x), dy.desc(), st.in(dy),
                                         beta, o[0].desc(), st.out(o[0])));
              },
              {dx}, 1e-5);
        }
      }
    }
  }
}
