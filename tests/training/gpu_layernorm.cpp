// CUDA layernorm_backward against the CPU backend: every gradient, with and without scale, axes
// that leave one element or thousands per group, every layout.
#include <string>

#include "training/grad_check.h"

using namespace jet;
using namespace jet::test;

TEST_CASE("CUDA layernorm_backward matches the CPU") {
  struct Case {
    std::vector<int64_t> dims;
    int axis;
  };
  const std::vector<Case> cases = {{{8, 197, 64}, 2}, {{3, 5, 7}, 1}, {{2, 7, 3, 5, 4}, 2},
                                   {{32, 64, 1, 1}, 1}, {{4, 3000}, 1}, {{6, 5}, 0}};
  for (const Case& c : cases) {
    for (Layout l : {Layout::CHANNELS_FIRST, Layout::CHANNELS_LAST, Layout::PADDED}) {
      for (bool with_scale : {true, false}) {
        CAPTURE(dims_str(c.dims));
        CAPTURE(c.axis);
        CAPTURE(std::string(layout_name(l)));
        CAPTURE(with_scale);
        int64_t inner = 1;
        for (size_t i = static_cast<size_t>(c.axis); i < c.dims.size(); ++i) inner *= c.dims[i];
        HostTensor x(make_desc(DType::F32, c.dims, l)), dy(make_desc(DType::F32, c.dims, l));
        x.fill_random(-1.0, 5.0);
        dy.fill_random();
        HostTensor dx(make_desc(DType::F32, c.dims, l));
        dx.fill_random();
        HostTensor scale(TensorDesc::packed(DType::F32, {inner})), ds(scale.desc()), db(scale.desc());
        scale.fill_random(0.5, 1.5);
        ds.fill_random();
        db.poison();
        HostTensor ws(TensorDesc::packed(DType::F32, {static_cast<int64_t>(
                                                         layernorm_backward_workspace_size(x.desc(), c.axis) / 4)}));
        // The workspace is staged as an input (its contents differ between the backends: doubles
        // on the CPU, floats on CUDA) and written through.
        compare_cuda_with_cpu(
            [&](const Handle& h, Staging& st, std::vector<HostTensor>& o) {
              REQUIRE_OK(layernorm_backward(
                  h, c.axis, 1.f, 0.5f, 2.f, 0.f, x.desc(), st.in(x), dy.desc(), st.in(dy), o[0].desc(),
                  st.out(o[0]), with_scale ? static_cast<const float*>(st.in(scale)) : nullptr,
                  static_cast<float*>(st.out(o[1])), static_cast<float*>(st.out(o[2])), 1e-5, const_cast<void*>(st.in(ws)),
                  ws.desc().span_bytes()));
            },
            {dx, ds, db}, 1e-4);
      }
    }
  }
}
