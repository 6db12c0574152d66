// CUDA resize_backward against the CPU backend.
#include <string>

#include "training/grad_check.h"

using namespace jet;
using namespace jet::test;

TEST_CASE("CUDA resize_backward matches the CPU") {
  // x2 upsampling (a decoder), a downsampling, and an odd ratio.
  const std::vector<std::pair<std::vector<int64_t>, std::vector<int64_t>>> shapes = {
      {{2, 6, 7, 9}, {2, 6, 14, 18}}, {{1, 4, 12, 10}, {1, 4, 5, 4}}, {{1, 3, 5, 6}, {1, 3, 8, 11}}};
  for (ResizeMode mode : {ResizeMode::NEAREST, ResizeMode::LINEAR}) {
    for (ResizeCoord coord : {ResizeCoord::HALF_PIXEL, ResizeCoord::ALIGN_CORNERS,
                              ResizeCoord::ASYMMETRIC}) {
      for (const auto& s : shapes) {
        ResizeDesc r;
        r.mode = mode;
        r.coord = coord;
        CAPTURE(static_cast<int>(mode));
        CAPTURE(static_cast<int>(coord));
        CAPTURE(dims_str(s.second));
        HostTensor dy(make_desc(DType::F32, s.second, Layout::CHANNELS_LAST));
        dy.fill_random();
        HostTensor dx(make_desc(DType::F32, s.first, Layout::CHANNELS_FIRST));
        dx.poison();
        compare_cuda_with_cpu(
            [&](const Handle& h, Staging& st, std::vector<HostTensor>& o) {
              REQUIRE_OK(resize_backward(h, r, 1.f, dy.desc(), st.in(dy), 0.f, o[0].desc(),
                                         st.out(o[0])));
            },
            {dx}, 1e-5);
      }
    }
  }
}
