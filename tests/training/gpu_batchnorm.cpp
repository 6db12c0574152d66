// CUDA batchnorm_forward_training and batchnorm_backward against the CPU backend, without the
// workspace (one block per channel) and with it (several blocks per channel where the shape
// leaves the GPU short of blocks: the two larger shapes on any GPU of 2 or more SMs).
#include <string>

#include "training/grad_check.h"

using namespace jet;
using namespace jet::test;

namespace {

HostTensor channel_values(int64_t c, double lo, double hi) {
  HostTensor t(TensorDesc::packed(DType::F32, {c}));
  t.fill_random(lo, hi);
  return t;
}

}  // namespace

TEST_CASE("CUDA batch normalization training forward and backward match the CPU") {
  const std::vector<std::vector<int64_t>> shapes = {
      {8, 16, 14, 14}, {3, 5, 7}, {2, 7, 3, 5, 4}, {32, 64, 1, 1}, {4, 3, 64, 64}, {6, 2, 37, 41}};
  for (const auto& dims : shapes) {
    for (Layout l : {Layout::CHANNELS_FIRST, Layout::CHANNELS_LAST, Layout::PADDED}) {
      for (bool use_ws : {false, true}) {
        CAPTURE(dims_str(dims));
        CAPTURE(std::string(layout_name(l)));
        CAPTURE(use_ws);
        const int64_t c = dims[1];
        HostTensor x(make_desc(DType::F32, dims, l));
        x.fill_random(-1.0, 5.0);
        // The workspace (0 bytes on the CPU); the multi-block path must run for the large shapes.
        auto workspace = [&](const Handle& h, Staging& st, size_t* bytes) -> void* {
          *bytes = 0;
          if (!use_ws) return nullptr;
          REQUIRE_OK(batchnorm_training_workspace_size(h, x.desc(), bytes));
          if (h.backend() == Backend::CUDA && count(dims) / dims[1] >= 8192) CHECK(*bytes > 0);
          return st.scratch(*bytes);
        };
        const HostTensor scale = channel_values(c, 0.5, 1.5), bias = channel_values(c, -1.0, 1.0);
        HostTensor y(make_desc(DType::F32, dims, l));
        y.poison();
        const HostTensor rm = channel_values(c, -1.0, 1.0), rv = channel_values(c, 0.5, 2.0);
        HostTensor sm(TensorDesc::packed(DType::F32, {c})), si(TensorDesc::packed(DType::F32, {c}));
        sm.poison();
        si.poison();
        compare_cuda_with_cpu(
            [&](const Handle& h, Staging& st, std::vector<HostTensor>& o) {
              size_t bytes = 0;
              void* ws = workspace(h, st, &bytes);
              const void* xp = st.in(x);
              void* yp = st.out(o[0]);
              const float* sp = static_cast<const float*>(st.in(scale));
              const float* bp = static_cast<const float*>(st.in(bias));
              if (bytes > 0)  // one byte short
                CHECK_STATUS(batchnorm_forward_training(h, 1.f, 0.f, x.desc(), xp, o[0].desc(), yp, sp, bp, 0.1,
                                                        nullptr, nullptr, 1e-5, nullptr, nullptr, ws, bytes - 1),
                             StatusCode::BAD_PARAM);
              REQUIRE_OK(batchnorm_forward_training(h, 1.f, 0.f, x.desc(), xp, o[0].desc(), yp, sp, bp, 0.1,
                                                    static_cast<float*>(st.out(o[1])),
                                                    static_cast<float*>(st.out(o[2])), 1e-5,
                                                    static_cast<float*>(st.out(o[3])),
                                                    static_cast<float*>(st.out(o[4])), ws, bytes));
            },
            {y, rm, rv, sm, si}, 1e-5);

        HostTensor dy(make_desc(DType::F32, dims, l)), dx(make_desc(DType::F32, dims, l));
        dy.fill_random();
        dx.fill_random();
        HostTensor ds = channel_values(c, -1.0, 1.0), db = channel_values(c, -1.0, 1.0);
        for (bool saved : {true, false}) {
          // Saved statistics: the CPU forward's, the same input on both backends.
          HostTensor ycpu(y.desc()), smc = sm, sic = si;
          REQUIRE_OK(batchnorm_forward_training(Handle::cpu(), 1.f, 0.f, x.desc(), x.data(),
                                                ycpu.desc(), ycpu.data(),
                                                static_cast<const float*>(scale.data()),
                                                static_cast<const float*>(bias.data()), 0.1, nullptr,
                                                nullptr, 1e-5, static_cast<float*>(smc.data()),
                                                static_cast<float*>(sic.data())));
          compare_cuda_with_cpu(
              [&](const Handle& h, Staging& st, std::vector<HostTensor>& o) {
                size_t bytes = 0;
                void* ws = workspace(h, st, &bytes);
                REQUIRE_OK(batchnorm_backward(
                    h, 1.f, 0.5f, 1.f, 0.25f, x.desc(), st.in(x), dy.desc(), st.in(dy), o[0].desc(),
                    st.out(o[0]), static_cast<const float*>(st.in(scale)),
                    static_cast<float*>(st.out(o[1])), static_cast<float*>(st.out(o[2])), 1e-5,
                    saved ? static_cast<const float*>(st.in(smc)) : nullptr,
                    saved ? static_cast<const float*>(st.in(sic)) : nullptr, ws, bytes));
              },
              {dx, ds, db}, 1e-5);
        }
      }
    }
  }
}
