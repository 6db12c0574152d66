// find_conv_forward_algo on every backend: every algorithm gets an entry, the ones that ran
// first and fastest first, the ones that could not run last with their reason; y is left holding
// the convolution; and every algorithm it reports as runnable gives the reference result.
#include <algorithm>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "kernels/util.h"
#include "reference/conv.h"

using namespace jet;
using namespace jet::test;

namespace {

constexpr int kAlgos = static_cast<int>(ConvAlgo::COUNT);
// Room for every (algorithm, tactic) entry: the CUDA GEMM family has up to 56 tactics each.
constexpr int kMaxResults = 512;

struct FindCase {
  const char* name;
  std::vector<int64_t> x_dims, w_dims;
  ref::ConvParams p;
  bool cuda_only;  // large enough to cross the CUDA tiles' edges; too slow for nothing on CPU
};

FindCase make_case(const char* name, std::vector<int64_t> x, std::vector<int64_t> w, int64_t pad,
                   int64_t stride, int64_t groups, bool cuda_only) {
  FindCase c;
  c.name = name;
  c.x_dims = std::move(x);
  c.w_dims = std::move(w);
  const size_t s = c.x_dims.size() - 2;
  c.p.pad_begin.assign(s, pad);
  c.p.pad_end.assign(s, pad);
  c.p.stride.assign(s, stride);
  c.p.dilation.assign(s, 1);
  c.p.groups = groups;
  c.cuda_only = cuda_only;
  return c;
}

ConvDesc conv_desc(const FindCase& c) {
  return ConvDesc::make(static_cast<int>(c.x_dims.size()) - 2, c.p.pad_begin.data(),
                        c.p.pad_end.data(), c.p.stride.data(), c.p.dilation.data(), c.p.groups);
}

// The dtype / layout pairs each case runs with: f32 channels-first with KCRS filters, f16
// channels-last with KRSC filters (the two fast paths).
struct Flavor {
  DType t;
  Layout layout;
  FilterLayout filter;
};
const Flavor kFlavors[] = {{DType::F32, Layout::CHANNELS_FIRST, FilterLayout::KCRS},
                           {DType::F16, Layout::CHANNELS_LAST, FilterLayout::KRSC}};

// Checks the shape of one find result list: each (algorithm, tactic) once; the successes first,
// sorted by time, each with a time and the workspace its tactic queries; then one entry per
// algorithm that could not run at all (tactic 0), with its reason and no time; every algorithm
// appears. `claimed` / `need`: the workspace query per algorithm at tactic 0; `ws_bytes`: what
// find was given.
void check_results(const Handle& h, const TensorDesc& xd, const FilterDesc& wd,
                   const ConvDesc& conv, const TensorDesc& yd, const ConvAlgoPerf* r, int n,
                   const bool* claimed, const size_t* need, size_t ws_bytes) {
  std::set<std::pair<int, int>> seen;
  bool appears[kAlgos] = {};
  bool failures_started = false;
  float last_time = 0.f;
  for (int i = 0; i < n; ++i) {
    const int a = static_cast<int>(r[i].algo);
    CAPTURE(i);
    CAPTURE(std::string(conv_algo_name(r[i].algo)));
    CAPTURE(r[i].tactic);
    CAPTURE(r[i].status.to_string());
    REQUIRE(a >= 0);
    REQUIRE(a < kAlgos);
    CHECK(seen.insert({a, r[i].tactic}).second);
    appears[a] = true;
    if (r[i].status.ok()) {
      CHECK_FALSE(failures_started);
      CHECK(claimed[a]);
      CHECK(r[i].time_ms >= 0.f);
      CHECK(r[i].time_ms >= last_time);
      last_time = r[i].time_ms;
      size_t tactic_need = 0;
      REQUIRE_OK(conv_forward_workspace_size(h, xd, wd, conv.with_tactic(r[i].tactic), yd,
                                             r[i].algo, &tactic_need));
      CHECK(r[i].workspace_bytes == tactic_need);
      CHECK(tactic_need <= ws_bytes);
    } else {
      failures_started = true;
      CHECK(r[i].tactic == 0);
      CHECK(r[i].time_ms == -1.f);
      CHECK(!r[i].status.message().empty());
      if (!claimed[a]) {
        CHECK(r[i].status.code() == StatusCode::NOT_SUPPORTED);
      } else {
        CHECK(need[a] > ws_bytes);
        CHECK(r[i].status.code() == StatusCode::BAD_PARAM);  // workspace too small
        CHECK(r[i].workspace_bytes == need[a]);
        CHECK(r[i].status.message().find("workspace") != std::string::npos);
      }
    }
  }
  for (int a = 0; a < kAlgos; ++a) {
    CAPTURE(a);
    CHECK(appears[a]);
  }
}

void run_case(const Handle& h, const FindCase& c, const Flavor& f) {
  CAPTURE(std::string(backend_name(h)));
  CAPTURE(std::string(c.name));
  CAPTURE(std::string(dtype_name(f.t)));
  const DType t = f.t;
  const ConvDesc conv = conv_desc(c);
  const std::vector<int64_t> y_dims = ref::conv_output_dims(c.x_dims, c.w_dims, c.p);
  const FilterDesc wd = FilterDesc::make(t, f.filter, static_cast<int>(c.w_dims.size()),
                                         c.w_dims.data());
  const std::vector<double> xv = random_values(t, c.x_dims);
  const std::vector<double> wv = random_values(t, c.w_dims);
  const std::vector<double> conv_ref = ref::conv_forward(xv, c.x_dims, wv, c.w_dims, c.p);
  const HostTensor x = tensor_with(make_desc(t, c.x_dims, f.layout), xv);
  const HostTensor w = tensor_with(wd.as_tensor(), wv);
  const TensorDesc yd = make_desc(t, y_dims, f.layout);

  bool claimed[kAlgos] = {};
  size_t need[kAlgos] = {};
  size_t ws_max = 0;
  for (int a = 0; a < kAlgos; ++a) {
    const Status s = conv_forward_workspace_size(h, x.desc(), wd, conv, yd,
                                                 static_cast<ConvAlgo>(a), &need[a]);
    claimed[a] = s.ok();
    if (!s.ok()) {
      CHECK(s.code() == StatusCode::NOT_SUPPORTED);
      need[a] = 0;
    }
    ws_max = std::max(ws_max, need[a]);
  }

  // 1. Workspace enough for every algorithm.
  {
    HostTensor y(yd);
    y.poison();
    const HostTensor before = y;
    std::vector<ConvAlgoPerf> results(kMaxResults);
    int returned = -1;
    Staging st(h);
    REQUIRE_OK(find_conv_forward_algo(h, x.desc(), st.in(x), wd, st.in(w), conv, yd, st.out(y),
                                      st.scratch(ws_max), ws_max, kMaxResults, &returned,
                                      results.data()));
    st.finish();
    REQUIRE(returned >= kAlgos);
    REQUIRE(returned < kMaxResults);  // all of them
    check_results(h, x.desc(), wd, conv, yd, results.data(), returned, claimed, need, ws_max);
    CHECK(results[0].status.ok());
    check_output(y, before, conv_ref, tol_for(t));
    // Every algorithm and tactic reported runnable computes the convolution (on top of y's old
    // contents, with beta != 0: find must not have left state that matters).
    for (int i = 0; i < returned && results[i].status.ok(); ++i) {
      CAPTURE(std::string(conv_algo_name(results[i].algo)));
      CAPTURE(results[i].tactic);
      // Approximate tactics are opt-in for f32: find leaves them out (conv.h).
      if (t == DType::F32) CHECK_FALSE(conv_forward_tactic_is_approximate(results[i].algo, results[i].tactic));
      HostTensor y2(yd);
      y2.fill_random();
      const HostTensor before2 = y2;
      Staging st2(h);
      REQUIRE_OK(conv_forward(h, 0.5f, x.desc(), st2.in(x), wd, st2.in(w),
                              conv.with_tactic(results[i].tactic), results[i].algo,
                              st2.scratch(results[i].workspace_bytes),
                              results[i].workspace_bytes, 0.75f, yd, st2.out(y2)));
      st2.finish();
      check_output(y2, before2, blend(conv_ref, 0.5, 0.75, before2.to_ref()), tol_for(t));
    }
  }

  // 2. No workspace: the algorithms that need some are reported as failures, last.
  {
    HostTensor y(yd);
    y.poison();
    const HostTensor before = y;
    std::vector<ConvAlgoPerf> results(kMaxResults);
    int returned = -1;
    Staging st(h);
    REQUIRE_OK(find_conv_forward_algo(h, x.desc(), st.in(x), wd, st.in(w), conv, yd, st.out(y),
                                      nullptr, 0, kMaxResults, &returned, results.data()));
    st.finish();
    REQUIRE(returned >= kAlgos);
    REQUIRE(returned < kMaxResults);
    check_results(h, x.desc(), wd, conv, yd, results.data(), returned, claimed, need, 0);
    bool any_needs = false;
    for (int a = 0; a < kAlgos; ++a) any_needs = any_needs || (claimed[a] && need[a] > 0);
    CHECK(any_needs);  // IMPLICIT_PRECOMP_GEMM always needs its tables
    check_output(y, before, conv_ref, tol_for(t));
  }

  // 3. Fewer results than there are: the fastest ones.
  {
    HostTensor y(yd);
    y.poison();
    const HostTensor before = y;
    ConvAlgoPerf results[2];
    int returned = -1;
    Staging st(h);
    REQUIRE_OK(find_conv_forward_algo(h, x.desc(), st.in(x), wd, st.in(w), conv, yd, st.out(y),
                                      st.scratch(ws_max), ws_max, 2, &returned, results));
    st.finish();
    REQUIRE(returned == 2);
    CHECK(results[0].status.ok());
    CHECK(results[1].status.ok());
    CHECK((results[0].algo != results[1].algo || results[0].tactic != results[1].tactic));
    CHECK(results[0].time_ms <= results[1].time_ms);
    check_output(y, before, conv_ref, tol_for(t));
  }
}

std::vector<FindCase> find_cases() {
  return {
      make_case("3x3 pad 1", {2, 16, 13, 13}, {32, 16, 3, 3}, 1, 1, 1, false),
      make_case("1x1 (x read directly by GEMM)", {2, 64, 7, 9}, {80, 64, 1, 1}, 0, 1, 1, false),
      make_case("1d 5 taps, 2 groups", {2, 8, 37}, {12, 4, 5}, 2, 1, 2, false),
      make_case("3x3 K=136 over 840 output pixels", {2, 48, 20, 21}, {136, 48, 3, 3}, 1, 1, 1,
                true),
      make_case("3x3 stride 2, 2 groups of 32", {1, 64, 15, 17}, {72, 32, 3, 3}, 1, 2, 2, true),
  };
}

// One test case per flavor, so that the sanitizer runs (scripts/gpu-check.sh: one job per test
// case) stay short; reduced runs (JET_TEST_REDUCED) leave out the largest problem.
void run_flavor(const Flavor& f) {
  for (const Handle& h : test_handles())
    for (const FindCase& c : find_cases()) {
      if (c.cuda_only && h.backend() != Backend::CUDA) continue;
      if (reduced_tests() && std::string(c.name).find("840 output pixels") != std::string::npos)
        continue;
      run_case(h, c, f);
    }
}

}  // namespace

TEST_CASE("find_conv_forward_algo times every algorithm and ranks them: f32 NCHW") {
  run_flavor(kFlavors[0]);
}

TEST_CASE("find_conv_forward_algo times every algorithm and ranks them: f16 NHWC") {
  run_flavor(kFlavors[1]);
}

TEST_CASE("find_conv_forward_algo rejects invalid input") {
  const Handle h = Handle::cpu();
  const DType f32 = DType::F32;
  const TensorDesc x = TensorDesc::nchw(f32, 1, 4, 5, 5);
  const FilterDesc w = FilterDesc::kcrs(f32, 6, 4, 3, 3);
  const ConvDesc conv = ConvDesc::conv2d(1, 1);
  const TensorDesc y = TensorDesc::nchw(f32, 1, 6, 5, 5);
  HostTensor xt(x), wt(w.as_tensor()), yt(y);
  xt.fill_random();
  wt.fill_random();
  ConvAlgoPerf results[kAlgos];
  int returned = 0;
  const void* xp = xt.data();
  const void* wp = wt.data();
  void* yp = yt.data();
  REQUIRE_OK(find_conv_forward_algo(h, x, xp, w, wp, conv, y, yp, nullptr, 0, kAlgos, &returned,
                                    results));
  CHECK(returned == kAlgos);
  CHECK_STATUS(find_conv_forward_algo(h, x, nullptr, w, wp, conv, y, yp, nullptr, 0, kAlgos,
                                      &returned, results),
               StatusCode::BAD_PARAM);
  CHECK_STATUS(find_conv_forward_algo(h, x, xp, w, nullptr, conv, y, yp, nullptr, 0, kAlgos,
                                      &returned, results),
               StatusCode::BAD_PARAM);
  CHECK_STATUS(find_conv_forward_algo(h, x, xp, w, wp, conv, y, nullptr, nullptr, 0, kAlgos,
                                      &returned, results),
               StatusCode::BAD_PARAM);
  CHECK_STATUS(find_conv_forward_algo(h, x, xp, w, wp, conv, y, yp, nullptr, 0, kAlgos, nullptr,
                                      results),
               StatusCode::BAD_PARAM);
  CHECK_STATUS(find_conv_forward_algo(h, x, xp, w, wp, conv, y, yp, nullptr, 0, kAlgos,
                                      &returned, nullptr),
               StatusCode::BAD_PARAM);
  CHECK_STATUS(find_conv_forward_algo(h, x, xp, w, wp, conv, y, yp, nullptr, 0, 0, &returned,
                                      results),
               StatusCode::BAD_PARAM);
  // In place, wrong y dims, dtype mix, bad convolution descriptor.
  CHECK_STATUS(find_conv_forward_algo(h, TensorDesc::nchw(f32, 1, 4, 5, 5), yp,
                                      FilterDesc::kcrs(f32, 4, 4, 3, 3), wp, conv,
                                      TensorDesc::nchw(f32, 1, 4, 5, 5), yp, nullptr, 0, kAlgos,
                                      &returned, results),
               StatusCode::BAD_PARAM);
  CHECK_STATUS(find_conv_forward_algo(h, x, xp, w, wp, conv, TensorDesc::nchw(f32, 1, 6, 5, 4),
                                      yp, nullptr, 0, kAlgos, &returned, results),
               StatusCode::BAD_PARAM);
  CHECK_STATUS(find_conv_forward_algo(h, x, xp, w, wp, conv, y.with_dtype(DType::F16), yp,
                                      nullptr, 0, kAlgos, &returned, results),
               StatusCode::BAD_PARAM);
  CHECK_STATUS(find_conv_forward_algo(h, x, xp, w, wp, ConvDesc::conv2d(1, 1, 0, 1), y, yp,
                                      nullptr, 0, kAlgos, &returned, results),
               StatusCode::BAD_PARAM);
}
