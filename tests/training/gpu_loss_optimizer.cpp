// CUDA losses, optimizer steps and global-norm clip against the CPU backend.
#include <string>

#include "training/grad_check.h"

using namespace jet;
using namespace jet::test;

namespace {

HostTensor vector_tensor(int64_t n, double lo, double hi) {
  HostTensor t(TensorDesc::packed(DType::F32, {n}));
  t.fill_random(lo, hi);
  return t;
}

HostTensor scalar_out() {
  HostTensor t(TensorDesc::packed(DType::F32, {1}));
  t.poison();
  return t;
}

}  // namespace

TEST_CASE("CUDA softmax_cross_entropy_loss matches the CPU") {
  const std::vector<std::pair<int64_t, int64_t>> shapes = {{1, 10}, {33, 7}, {64, 1000}, {100, 3}};
  for (const auto& s : shapes) {
    for (int layout = 0; layout < 2; ++layout) {
      const int64_t n = s.first, c = s.second;
      CAPTURE(n);
      CAPTURE(c);
      const TensorDesc d = layout == 0 ? TensorDesc::packed(DType::F32, {n, c})
                                       : TensorDesc::strided(DType::F32, {n, c}, {1, n});
      HostTensor x(d), dx(d);
      x.fill_random(-8.0, 8.0);
      dx.poison();
      std::vector<int32_t> labels(static_cast<size_t>(n));
      for (auto& l : labels) l = static_cast<int32_t>(uniform_int(0, c - 1));
      const HostTensor lab = int32_tensor(labels);
      const size_t bytes = softmax_cross_entropy_workspace_size(n);
      compare_cuda_with_cpu(
          [&](const Handle& h, Staging& st, std::vector<HostTensor>& o) {
            REQUIRE_OK(softmax_cross_entropy_loss(
                h, x.desc(), st.in(x), static_cast<const int32_t*>(st.in(lab)), st.scratch(bytes),
                bytes, static_cast<float*>(st.out(o[0])), 1.f, 0.f, o[1].desc(), st.out(o[1])));
          },
          {scalar_out(), dx}, 1e-5);
    }
  }
}

TEST_CASE("CUDA mse_loss and bce_with_logits_loss match the CPU") {
  for (bool mse : {true, false}) {
    for (const std::vector<int64_t>& dims :
         {std::vector<int64_t>{7}, std::vector<int64_t>{4, 3, 5}, std::vector<int64_t>{8, 3, 64, 65}}) {
      CAPTURE(mse);
      CAPTURE(dims_str(dims));
      HostTensor x(make_desc(DType::F32, dims, Layout::CHANNELS_FIRST));
      HostTensor t(make_desc(DType::F32, dims, dims.size() >= 3 ? Layout::CHANNELS_LAST
                                                                : Layout::CHANNELS_FIRST));
      x.fill_random(-6.0, 6.0);
      t.fill_random(0.0, 1.0);
      HostTensor dx(make_desc(DType::F32, dims, Layout::PADDED));
      dx.fill_random();
      const size_t bytes = elementwise_loss_workspace_size(count(dims));
      const auto routine = mse ? mse_loss : bce_with_logits_loss;
      compare_cuda_with_cpu(
          [&](const Handle& h, Staging& st, std::vector<HostTensor>& o) {
            REQUIRE_OK(routine(h, x.desc(), st.in(x), t.desc(), st.in(t), st.scratch(bytes), bytes,
                               static_cast<float*>(st.out(o[0])), 0.5f, 0.25f, o[1].desc(),
                               st.out(o[1])));
          },
          {scalar_out(), dx}, 1e-5);
    }
  }
}

TEST_CASE("CUDA sgd_step and adam_step match the CPU") {
  const int64_t n = 100003;
  const HostTensor g = vector_tensor(n, -1.0, 1.0);
  const HostTensor p = vector_tensor(n, -1.0, 1.0), s1 = vector_tensor(n, -0.1, 0.1),
                   s2 = vector_tensor(n, 0.0, 0.01);
  SgdDesc sgd;
  sgd.lr = 0.05f;
  sgd.momentum = 0.9f;
  sgd.weight_decay = 1e-3f;
  sgd.nesterov = true;
  compare_cuda_with_cpu(
      [&](const Handle& h, Staging& st, std::vector<HostTensor>& o) {
        REQUIRE_OK(sgd_step(h, sgd, n, static_cast<float*>(st.out(o[0])),
                            static_cast<const float*>(st.in(g)), static_cast<float*>(st.out(o[1]))));
      },
      {p, s1}, 1e-6);
  for (bool decoupled : {false, true}) {
    AdamDesc adam;
    adam.weight_decay = 0.01f;
    adam.decoupled_weight_decay = decoupled;
    compare_cuda_with_cpu(
        [&](const Handle& h, Staging& st, std::vector<HostTensor>& o) {
          REQUIRE_OK(adam_step(h, adam, 3, n, static_cast<float*>(st.out(o[0])),
                               static_cast<const float*>(st.in(g)),
                               static_cast<float*>(st.out(o[1])), static_cast<float*>(st.out(o[2]))));
        },
        {p, s1, s2}, 1e-5);
  }
}

TEST_CASE("CUDA clip_grad_norm matches the CPU") {
  for (float max_norm : {1.f, 1e6f}) {
    const std::vector<int64_t> counts = {1, 4097, 300000, 37};
    std::vector<HostTensor> grads;
    for (int64_t c : counts) grads.push_back(vector_tensor(c, -0.01, 0.01));
    grads.push_back(scalar_out());
    const size_t bytes = clip_grad_norm_workspace_size(4, counts.data());
    compare_cuda_with_cpu(
        [&](const Handle& h, Staging& st, std::vector<HostTensor>& o) {
          float* ptrs[4];
          for (int i = 0; i < 4; ++i) ptrs[i] = static_cast<float*>(st.out(o[static_cast<size_t>(i)]));
          REQUIRE_OK(clip_grad_norm(h, 4, ptrs, counts.data(), max_norm, st.scratch(bytes), bytes,
                                    static_cast<float*>(st.out(o[4]))));
        },
        grads, 1e-5);
  }
}
