// CUDA activation_backward, prelu_backward and softmax_backward against the CPU backend.
#include <string>

#include "reference/activation.h"
#include "training/grad_check.h"

using namespace jet;
using namespace jet::test;

TEST_CASE("CUDA activation_backward matches the CPU for every mode and layout") {
  const int rounds = reduced_tests() ? 2 : 4;
  for (const ActivationDesc& act : ref::every_activation()) {
    for (int round = 0; round < rounds; ++round) {
      // Round 0 is large and packed (the vectorized loop), the others odd and strided.
      const std::vector<int64_t> dims =
          round == 0 ? std::vector<int64_t>{4, 16, 33, 32} : random_dims(4, 1, 9);
      const Layout lx = round == 0 ? Layout::CHANNELS_FIRST : random_layout();
      const Layout ldx = round == 0 ? Layout::CHANNELS_FIRST : random_layout();
      const float alpha = round % 2 ? 0.5f : 1.f, beta = round % 2 ? -0.75f : 0.f;
      CAPTURE(std::string(activation_mode_name(act.mode)));
      CAPTURE(dims_str(dims));
      HostTensor x(make_desc(DType::F32, dims, lx)), dy(make_desc(DType::F32, dims, ldx));
      x.fill_random(-4.0, 4.0);
      dy.fill_random();
      if (round == rounds - 1) x.plant_specials();
      HostTensor dx(make_desc(DType::F32, dims, ldx));
      if (beta == 0.f) dx.poison(); else dx.fill_random();
      compare_cuda_with_cpu(
          [&](const Handle& h, Staging& st, std::vector<HostTensor>& o) {
            REQUIRE_OK(activation_backward(h, act, alpha, x.desc(), st.in(x), dy.desc(), st.in(dy),
                                           beta, o[0].desc(), st.out(o[0])));
          },
          {dx}, 1e-5);
    }
  }
}

TEST_CASE("CUDA softmax_backward matches the CPU") {
  for (SoftmaxAlgo algo : {SoftmaxAlgo::ACCURATE, SoftmaxAlgo::LOG}) {
    for (SoftmaxMode mode : {SoftmaxMode::INSTANCE, SoftmaxMode::CHANNEL}) {
      for (int round = 0; round < (reduced_tests() ? 2 : 4); ++round) {
        const std::vector<int64_t> dims =
            round == 0 ? std::vector<int64_t>{3, 1000, 1, 1} : random_dims(4, 1, 11);
        const Layout l = round == 0 ? Layout::CHANNELS_FIRST : random_layout();
        const float alpha = round % 2 ? 0.5f : 1.f, beta = round % 2 ? 0.25f : 0.f;
        CAPTURE(dims_str(dims));
        HostTensor x(make_desc(DType::F32, dims, l)), y(make_desc(DType::F32, dims, l));
        x.fill_random(-3.0, 3.0);
        y.poison();
        REQUIRE_OK(softmax_forward(Handle::cpu(), algo, mode, 1.f, x.desc(), x.data(), 0.f,
                                   y.desc(), y.data()));
        HostTensor dy(make_desc(DType::F32, dims, random_layout()));
        dy.fill_random();
        HostTensor dx(make_desc(DType::F32, dims, random_layout()));
        if (beta == 0.f) dx.poison(); else dx.fill_random();
        compare_cuda_with_cpu(
            [&](const Handle& h, Staging& st, std::vector<HostTensor>& o) {
              REQUIRE_OK(softmax_backward(h, algo, mode, alpha, y.desc(), st.in(y), dy.desc(),
                                          st.in(dy), beta, o[0].desc(), st.out(o[0])));
            },
            {dx}, 1e-5);
      }
    }
  }
}

TEST_CASE("CUDA prelu_backward matches the CPU") {
  for (int kind = 0; kind < 3; ++kind) {  // scalar, per-channel and full slopes
    for (Layout l : {Layout::CHANNELS_FIRST, Layout::CHANNELS_LAST}) {
      const std::vector<int64_t> dims = {4, 24, 17, 19};
      std::vector<int64_t> sdims(4, 1);
      if (kind == 1) sdims[1] = 24;
      if (kind == 2) sdims = dims;
      CAPTURE(kind);
      CAPTURE(std::string(layout_name(l)));
      HostTensor x(make_desc(DType::F32, dims, l)), dy(make_desc(DType::F32, dims, l));
      HostTensor s(make_desc(DType::F32, sdims, Layout::CHANNELS_FIRST));
      x.fill_random();
      dy.fill_random();
      s.fill_random(0.0, 0.5);
      HostTensor dx(make_desc(DType::F32, dims, Layout::PADDED)), ds(s.desc());
      dx.poison();
      ds.fill_random();
      compare_cuda_with_cpu(
          [&](const Handle& h, Staging& st, std::vector<HostTensor>& o) {
            REQUIRE_OK(prelu_backward(h, 1.f, x.desc(), st.in(x), s.desc(), st.in(s), dy.desc(),
                                      st.in(dy), 0.f, o[0].desc(), st.out(o[0]), 0.5f, 0.5f,
                                      o[1].desc(), st.out(o[1])));
          },
          {dx, ds}, 1e-5);
    }
  }
}
