// CUDA pad_backward against the CPU backend.
#include <string>

#include "training/grad_check.h"

using namespace jet;
using namespace jet::test;

TEST_CASE("CUDA pad_backward matches the CPU") {
  const std::vector<int64_t> xd = {2, 5, 9, 8};
  const int64_t begin[4] = {0, 0, 2, 3}, end[4] = {0, 0, 3, -1};  // the last crops one column
  std::vector<int64_t> yd;
  for (size_t i = 0; i < xd.size(); ++i) yd.push_back(xd[i] + begin[i] + end[i]);
  for (PadMode mode : {PadMode::CONSTANT, PadMode::REFLECT, PadMode::EDGE}) {
    for (Layout l : {Layout::CHANNELS_FIRST, Layout::CHANNELS_LAST}) {
      CAPTURE(static_cast<int>(mode));
      CAPTURE(std::string(layout_name(l)));
      HostTensor dy(make_desc(DType::F32, yd, l));
      dy.fill_random();
      HostTensor dx(make_desc(DType::F32, xd, Layout::PADDED));
      dx.poison();
      compare_cuda_with_cpu(
          [&](const Handle& h, Staging& st, std::vector<HostTensor>& o) {
            REQUIRE_OK(pad_backward(h, mode, begin, end, 1.f, dy.desc(), st.in(dy), 0.f,
                                    o[0].desc(), st.out(o[0])));
          },
          {dx}, 1e-5);
    }
  }
}
