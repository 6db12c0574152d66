// Every convolution layer of ResNet-50 v1 (224x224, batch 1, f32, NCHW) on the CPU backend, on
// the calling thread: per-layer time with the algorithm choose_conv_forward_algo(PREFER_FASTEST)
// picks, and the network total of each algorithm. Run it pinned to one core:
//   taskset -c 0 ./jet_bench_cpu_resnet50_conv [--runs N] [--no-direct]
// ResNet-50 v1 as in the paper (and Caffe): the stride-2 of a stage's first block sits on its
// first 1x1 convolution and on the 1x1 downsample branch (v1.5 moves it to the 3x3).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

#include "jet/dnn.h"

namespace {

struct Layer {
  const char* name;
  int64_t in_channels, out_channels, in_size, kernel, stride, pad;
  int reps;  // how many times the network runs this exact layer
};

// The 53 convolutions, grouped by identical shape.
const Layer kLayers[] = {
    {"conv1 7x7/2", 3, 64, 224, 7, 2, 3, 1},
    {"res2a_branch1 1x1 (downsample)", 64, 256, 56, 1, 1, 0, 1},
    {"res2a_branch2a 1x1", 64, 64, 56, 1, 1, 0, 1},
    {"res2[bc]_branch2a 1x1", 256, 64, 56, 1, 1, 0, 2},
    {"res2*_branch2b 3x3", 64, 64, 56, 3, 1, 1, 3},
    {"res2*_branch2c 1x1", 64, 256, 56, 1, 1, 0, 3},
    {"res3a_branch1 1x1/2 (downsample)", 256, 512, 56, 1, 2, 0, 1},
    {"res3a_branch2a 1x1/2", 256, 128, 56, 1, 2, 0, 1},
    {"res3[b-d]_branch2a 1x1", 512, 128, 28, 1, 1, 0, 3},
    {"res3*_branch2b 3x3", 128, 128, 28, 3, 1, 1, 4},
    {"res3*_branch2c 1x1", 128, 512, 28, 1, 1, 0, 4},
    {"res4a_branch1 1x1/2 (downsample)", 512, 1024, 28, 1, 2, 0, 1},
    {"res4a_branch2a 1x1/2", 512, 256, 28, 1, 2, 0, 1},
    {"res4[b-f]_branch2a 1x1", 1024, 256, 14, 1, 1, 0, 5},
    {"res4*_branch2b 3x3", 256, 256, 14, 3, 1, 1, 6},
    {"res4*_branch2c 1x1", 256, 1024, 14, 1, 1, 0, 6},
    {"res5a_branch1 1x1/2 (downsample)", 1024, 2048, 14, 1, 2, 0, 1},
    {"res5a_branch2a 1x1/2", 1024, 512, 14, 1, 2, 0, 1},
    {"res5[bc]_branch2a 1x1", 2048, 512, 7, 1, 1, 0, 2},
    {"res5*_branch2b 3x3", 512, 512, 7, 3, 1, 1, 3},
    {"res5*_branch2c 1x1", 512, 2048, 7, 1, 1, 0, 3},
};

const jet::ConvAlgo kAlgos[] = {jet::ConvAlgo::DIRECT, jet::ConvAlgo::IMPLICIT_GEMM,
                                jet::ConvAlgo::IMPLICIT_PRECOMP_GEMM, jet::ConvAlgo::GEMM};
constexpr int kAlgoCount = 4;

void check(const jet::Status& s, const char* what) {
  if (s.ok()) return;
  std::fprintf(stderr, "%s failed: %s\n", what, s.to_string().c_str());
  std::exit(1);
}

struct Problem {
  jet::TensorDesc x, y;
  jet::FilterDesc w;
  jet::ConvDesc conv;
  std::vector<float> xv, wv, yv;
  double gflop;  // per call (2 flops per multiply-add)
};

Problem make_problem(const Layer& l, std::mt19937& rng) {
  Problem p;
  const int64_t out = (l.in_size + 2 * l.pad - l.kernel) / l.stride + 1;
  p.x = jet::TensorDesc::nchw(jet::DType::F32, 1, l.in_channels, l.in_size, l.in_size);
  p.w = jet::FilterDesc::kcrs(jet::DType::F32, l.out_channels, l.in_channels, l.kernel, l.kernel);
  p.y = jet::TensorDesc::nchw(jet::DType::F32, 1, l.out_channels, out, out);
  p.conv = jet::ConvDesc::conv2d(l.pad, l.pad, l.stride, l.stride);
  std::uniform_real_distribution<float> dist(-1.f, 1.f);
  p.xv.resize(static_cast<size_t>(p.x.elements()));
  p.wv.resize(static_cast<size_t>(p.w.elements()));
  p.yv.resize(static_cast<size_t>(p.y.elements()));
  for (float& v : p.xv) v = dist(rng);
  for (float& v : p.wv) v = dist(rng);
  p.gflop = 2.0 * static_cast<double>(p.y.elements()) * l.in_channels * l.kernel * l.kernel * 1e-9;
  return p;
}

// Best of `runs` timed calls after one warm-up call, in seconds.
double time_conv(const jet::Handle& h, Problem& p, jet::ConvAlgo algo, int runs,
                 std::vector<unsigned char>& ws) {
  size_t bytes = 0;
  check(jet::conv_forward_workspace_size(h, p.x, p.w, p.conv, p.y, algo, &bytes), "workspace");
  if (ws.size() < bytes) ws.resize(bytes);
  double best = 1e30;
  for (int r = 0; r <= runs; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    check(jet::conv_forward(h, 1.f, p.x, p.xv.data(), p.w, p.wv.data(), p.conv, algo,
                            bytes ? ws.data() : nullptr, bytes, 0.f, p.y, p.yv.data()),
          "conv_forward");
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (r > 0) best = std::min(best, s);
  }
  return best;
}

}  // namespace

int main(int argc, char** argv) {
  int runs = 5;
  bool with_direct = true;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--runs") && i + 1 < argc) runs = std::max(1, std::atoi(argv[++i]));
    else if (!std::strcmp(argv[i], "--no-direct")) with_direct = false;
    else {
      std::fprintf(stderr, "usage: %s [--runs N] [--no-direct]\n", argv[0]);
      return 2;
    }
  }
  const jet::Handle h = jet::Handle::cpu();
  std::mt19937 rng(42);
  std::vector<unsigned char> ws;
  double chosen_total = 0, gflop_total = 0;
  double algo_total[kAlgoCount] = {};
  int layer_count = 0;

  std::printf("| layer | C->K | in | reps | GFLOP/call | chosen algo | ms/call | ms total | GFLOP/s |"
              " direct ms | implicit_gemm ms | implicit_precomp_gemm ms | gemm ms |\n");
  std::printf("|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
  for (const Layer& l : kLayers) {
    Problem p = make_problem(l, rng);
    jet::ConvAlgo chosen;
    check(jet::choose_conv_forward_algo(h, p.x, p.w, p.conv, p.y,
                                        jet::ConvPreference::PREFER_FASTEST, 0, &chosen),
          "choose_conv_forward_algo");
    const double t_chosen = time_conv(h, p, chosen, runs, ws);
    chosen_total += t_chosen * l.reps;
    gflop_total += p.gflop * l.reps;
    layer_count += l.reps;
    std::printf("| %s | %lld->%lld | %lld | %d | %.3f | %s | %.2f | %.2f | %.1f |", l.name,
                static_cast<long long>(l.in_channels), static_cast<long long>(l.out_channels),
                static_cast<long long>(l.in_size), l.reps, p.gflop, jet::conv_algo_name(chosen),
                t_chosen * 1e3, t_chosen * 1e3 * l.reps, p.gflop / t_chosen);
    for (int a = 0; a < kAlgoCount; ++a) {
      if (kAlgos[a] == jet::ConvAlgo::DIRECT && !with_direct) {
        std::printf(" - |");
        continue;
      }
      // The slow algorithms get fewer runs; DIRECT is timed once.
      const int algo_runs = kAlgos[a] == jet::ConvAlgo::DIRECT ? 1 : std::max(1, runs / 2);
      const double t = kAlgos[a] == chosen ? t_chosen : time_conv(h, p, kAlgos[a], algo_runs, ws);
      algo_total[a] += t * l.reps;
      std::printf(" %.2f |", t * 1e3);
    }
    std::printf("\n");
    std::fflush(stdout);
  }
  std::printf("\n%d convolution layers, %.2f GFLOP in total.\n", layer_count, gflop_total);
  std::printf("Total with the PREFER_FASTEST choice: %.1f ms (%.1f GFLOP/s)\n", chosen_total * 1e3,
              gflop_total / chosen_total);
  for (int a = 0; a < kAlgoCount; ++a) {
    if (kAlgos[a] == jet::ConvAlgo::DIRECT && !with_direct) continue;
    std::printf("Total with %s everywhere: %.1f ms (%.1f GFLOP/s)\n",
                jet::conv_algo_name(kAlgos[a]), algo_total[a] * 1e3, gflop_total / algo_total[a]);
  }
  return 0;
}
