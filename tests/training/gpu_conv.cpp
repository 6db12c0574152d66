// CUDA conv_backward_filter (every algorithm) and conv_backward_bias against the CPU backend,
// and their determinism (two runs, identical bits).
#include <array>
#include <cstring>
#include <string>

#include "training/grad_check.h"

using namespace jet;
using namespace jet::test;

namespace {

struct Layer {
  const char* name;
  std::vector<int64_t> x_dims;
  FilterDesc w;
  ConvDesc conv;
};

std::vector<Layer> layers() {
  const DType f = DType::F32;
  const int64_t pad3[3] = {1, 0, 1}, stride3[3] = {1, 2, 1}, dil3[3] = {1, 1, 2};
  const int64_t w3[5] = {6, 2, 2, 3, 2};
  return {
      {"resnet 3x3 stride 2", {2, 16, 15, 14}, FilterDesc::kcrs(f, 32, 16, 3, 3),
       ConvDesc::conv2d(1, 1, 2, 2)},
      {"1x1 NHWC filter", {3, 24, 9, 7}, FilterDesc::krsc(f, 12, 24, 1, 1), ConvDesc::conv2d(0, 0)},
      {"depthwise 3x3", {2, 10, 11, 9}, FilterDesc::kcrs(f, 10, 1, 3, 3),
       ConvDesc::conv2d(1, 1, 1, 1, 1, 1, 10)},
      {"grouped dilated conv mode", {1, 6, 10, 12}, FilterDesc::krsc(f, 9, 2, 3, 2),
       ConvDesc::conv2d(2, 1, 1, 2, 2, 1, 3, ConvMode::CONVOLUTION)},
      {"3d", {1, 4, 5, 6, 7}, FilterDesc::make(f, FilterLayout::KCRS, 5, w3),
       ConvDesc::make(3, pad3, pad3, stride3, dil3, 2)},
      // Few dw tiles over a long sum (4 x 784 rows): GEMM splits it in chunks on CUDA (the
      // heuristic), not on the CPU.
      {"early-layer 3x3, GEMM split", {4, 16, 28, 28}, FilterDesc::kcrs(f, 16, 16, 3, 3),
       ConvDesc::conv2d(1, 1)},
      // WINOGRAD: odd output sizes (a half tile), asymmetric padding, convolution mode.
      {"3x3 odd sizes, asymmetric padding", {3, 5, 13, 10}, FilterDesc::krsc(f, 7, 5, 3, 3),
       ConvDesc::make(2, std::array<int64_t, 2>{2, 0}.data(), std::array<int64_t, 2>{1, 2}.data(),
                      nullptr, nullptr, 1, ConvMode::CONVOLUTION)},
  };
}

}  // namespace

TEST_CASE("CUDA conv_backward_filter matches the CPU and is deterministic") {
  // JET_TEST_REDUCED (the compute-sanitizer run): one layout per layer.
  const std::vector<Layout> all = {Layout::CHANNELS_FIRST, Layout::CHANNELS_LAST, Layout::PADDED};
  const std::vector<Layout> layouts = reduced_tests() ? std::vector<Layout>{Layout::PADDED} : all;
  for (const Layer& layer : layers()) {
    for (Layout l : layouts) {
      int64_t out[5];
      const TensorDesc xd = make_desc(DType::F32, layer.x_dims, l);
      REQUIRE_OK(conv_output_dims(xd, layer.w, layer.conv, out));
      HostTensor x(xd), dy(make_desc(DType::F32, std::vector<int64_t>(out, out + xd.rank()), l));
      x.fill_random();
      dy.fill_random();
      // Every algorithm; WINOGRAD also with approximate math (F(3x3, 4x4) against F(3x3, 2x2)).
      for (int ai = 0; ai <= static_cast<int>(ConvBwdFilterAlgo::COUNT); ++ai) {
        const bool approximate = ai == static_cast<int>(ConvBwdFilterAlgo::COUNT);
        const ConvBwdFilterAlgo algo = approximate ? ConvBwdFilterAlgo::WINOGRAD : static_cast<ConvBwdFilterAlgo>(ai);
        const ConvDesc conv = layer.conv.with_math(approximate ? ConvMath::ALLOW_APPROXIMATE : ConvMath::EXACT);
        CAPTURE(std::string(layer.name));
        CAPTURE(std::string(layout_name(l)));
        CAPTURE(std::string(conv_bwd_filter_algo_name(algo)));
        CAPTURE(approximate);
        size_t bytes = 0;
        const Status ws_status = conv_backward_filter_workspace_size(gpu_handle(), xd, dy.desc(),
                                                                     conv, layer.w, algo, &bytes);
        // WINOGRAD takes only 2D 3x3 stride-1 undilated ungrouped layers.
        if (algo == ConvBwdFilterAlgo::WINOGRAD && ws_status.code() == StatusCode::NOT_SUPPORTED) continue;
        REQUIRE_OK(ws_status);
        const float beta = l == Layout::PADDED ? 0.5f : 0.f;
        HostTensor dw(layer.w.as_tensor());
        if (beta == 0.f) dw.poison(); else dw.fill_random();
        const auto run = [&](const Handle& h, Staging& st, std::vector<HostTensor>& o) {
          REQUIRE_OK(conv_backward_filter(h, 1.5f, x.desc(), st.in(x), dy.desc(), st.in(dy), conv,
                                          algo, st.scratch(bytes), bytes, beta, layer.w, st.out(o[0])));
        };
        compare_cuda_with_cpu(run, {dw}, approximate ? 5e-5 : 1e-5);
        // Determinism: two CUDA runs give the same bits.
        std::vector<HostTensor> a = {dw}, b = {dw};
        for (std::vector<HostTensor>* o : {&a, &b}) {
          Staging st(gpu_handle());
          run(gpu_handle(), st, *o);
          st.finish();
        }
        CHECK(std::memcmp(a[0].data(), b[0].data(), a[0].desc().span_bytes()) == 0);
      }
      // The bias gradient of the same dy.
      std::vector<int64_t> bdims(static_cast<size_t>(xd.rank()), 1);
      bdims[1] = out[1];
      HostTensor db(make_desc(DType::F32, bdims, Layout::PADDED));
      db.poison();
      compare_cuda_with_cpu(
          [&](const Handle& h, Staging& st, std::vector<HostTensor>& o) {
            REQUIRE_OK(conv_backward_bias(h, 1.f, dy.desc(), st.in(dy), 0.f, o[0].desc(),
                                          st.out(o[0])));
          },
          {db}, 1e-5);
    }
  }
}

TEST_CASE("CUDA conv_backward_bias with its workspace: several blocks per channel, as the CPU") {
  for (const std::vector<int64_t>& dims : {std::vector<int64_t>{4, 3, 64, 64}, std::vector<int64_t>{6, 2, 37, 41}}) {
    for (Layout l : {Layout::CHANNELS_FIRST, Layout::CHANNELS_LAST, Layout::PADDED}) {
      CAPTURE(dims_str(dims));
      CAPTURE(std::string(layout_name(l)));
      HostTensor dy(make_desc(DType::F32, dims, l));
      dy.fill_random();
      size_t bytes = 0;
      REQUIRE_OK(conv_backward_bias_workspace_size(gpu_handle(), dy.desc(), &bytes));
      CHECK(bytes > 0);  // 9102 or 16384 values over 2 or 3 channels
      std::vector<int64_t> bdims(dims.size(), 1);
      bdims[1] = dims[1];
      HostTensor db(make_desc(DType::F32, bdims, Layout::PADDED));
      db.fill_random();
      const auto run = [&](const Handle& h, Staging& st, std::vector<HostTensor>& o) {
        size_t need = 0;
        REQUIRE_OK(conv_backward_bias_workspace_size(h, dy.desc(), &need));
        void* ws = st.scratch(need);
        void* dbp = st.out(o[0]);
        const void* dyp = st.in(dy);
        if (need > 0)
          CHECK_STATUS(conv_backward_bias(h, 1.5f, dy.desc(), dyp, 0.5f, o[0].desc(), dbp, ws, need - 1),
                       StatusCode::BAD_PARAM);
        REQUIRE_OK(conv_backward_bias(h, 1.5f, dy.desc(), dyp, 0.5f, o[0].desc(), dbp, ws, need));
      };
      compare_cuda_with_cpu(run, {db}, 1e-5);
      std::vector<HostTensor> a = {db}, b = {db};
      for (std::vector<HostTensor>* o : {&a, &b}) {
        Staging st(gpu_handle());
        run(gpu_handle(), st, *o);
        st.finish();
      }
      CHECK(std::memcmp(a[0].data(), b[0].data(), a[0].desc().span_bytes()) == 0);
    }
  }
}

// The fused activation backward and bias gradient against the CPU's composition of the two
// routines: NCHW maps whose merged H x W is a multiple of 4 (the 16-byte walk) and one that is
// not, channels-last and padded tensors (the element walk), x in another layout than dy, dpre in
// place over dy or separate, with and without the workspace (several blocks a channel), and two
// runs giving the same bits.
TEST_CASE("CUDA conv_backward_bias_activation against the CPU: both walks, in place, workspace") {
  struct Case {
    std::vector<int64_t> dims;
    Layout x, dy;
  };
  const Case cases[] = {
      {{4, 3, 64, 64}, Layout::CHANNELS_FIRST, Layout::CHANNELS_FIRST},
      {{2, 5, 12, 8}, Layout::CHANNELS_FIRST, Layout::CHANNELS_FIRST},
      {{6, 2, 37, 41}, Layout::CHANNELS_FIRST, Layout::CHANNELS_FIRST},
      {{3, 8, 16, 16}, Layout::CHANNELS_LAST, Layout::CHANNELS_LAST},
      {{3, 6, 16, 20}, Layout::PADDED, Layout::CHANNELS_FIRST},
      {{2, 4, 3, 8, 8}, Layout::CHANNELS_FIRST, Layout::CHANNELS_FIRST},
  };
  int round = 0;
  for (const Case& c : cases) {
    for (const bool workspace : {false, true}) {
      ++round;
      const ActivationDesc act = round % 3 == 0 ? ActivationDesc::sigmoid() : ActivationDesc::relu();
      const bool in_place = round % 2 == 0;
      CAPTURE(dims_str(c.dims));
      CAPTURE(std::string(layout_name(c.x)) + " " + layout_name(c.dy));
      CAPTURE(workspace);
      CAPTURE(in_place);
      HostTensor x(make_desc(DType::F32, c.dims, c.x)), dy(make_desc(DType::F32, c.dims, c.dy));
      x.fill_random();
      dy.fill_random();
      std::vector<int64_t> bdims(c.dims.size(), 1);
      bdims[1] = c.dims[1];
      HostTensor db(make_desc(DType::F32, bdims, Layout::PADDED));
      const float alpha = in_place ? 1.f : 1.5f, beta = in_place ? 0.f : 0.5f;
      if (beta == 0.f) db.poison(); else db.fill_random();
      HostTensor dpre = in_place ? dy : HostTensor(dy.desc());
      if (!in_place) dpre.poison();
      const auto run = [&](const Handle& h, Staging& st, std::vector<HostTensor>& o) {
        size_t need = 0;
        if (workspace) REQUIRE_OK(conv_backward_bias_workspace_size(h, dy.desc(), &need));
        void* ws = need ? st.scratch(need) : nullptr;
        const void* xp = st.in(x);
        void* dpp = st.out(o[0]);
        const void* dyp = in_place ? dpp : st.in(dy);
        REQUIRE_OK(conv_backward_bias_activation(h, act, x.desc(), xp, dy.desc(), dyp, o[0].desc(), dpp, alpha, beta,
                                                 o[1].desc(), st.out(o[1]), ws, need));
      };
      compare_cuda_with_cpu(run, {dpre, db}, 1e-5);
      std::vector<HostTensor> a = {dpre, db}, b = {dpre, db};
      for (std::vector<HostTensor>* o : {&a, &b}) {
        Staging st(gpu_handle());
        run(gpu_handle(), st, *o);
        st.finish();
      }
      CHECK(std::memcmp(a[1].data(), b[1].data(), a[1].desc().span_bytes()) == 0);
    }
  }
}
