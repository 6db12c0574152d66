#include "training/grad_check.h"

#include <cmath>
#include <cstring>

namespace jet {
namespace test {

Vjp numeric_vjp(const RefFn& f, const std::vector<double>& x, const std::vector<double>& dy,
                double h) {
  Vjp v;
  v.value.resize(x.size());
  v.magnitude.resize(x.size());
  std::vector<double> xp = x;
  for (size_t j = 0; j < x.size(); ++j) {
    xp[j] = x[j] + h;
    const std::vector<double> up = f(xp);
    xp[j] = x[j] - h;
    const std::vector<double> down = f(xp);
    xp[j] = x[j];
    REQUIRE(up.size() == dy.size());
    REQUIRE(down.size() == dy.size());
    double sum = 0.0, mag = 0.0;
    for (size_t i = 0; i < dy.size(); ++i) {
      const double term = dy[i] * (up[i] - down[i]) / (2.0 * h);
      sum += term;
      mag += std::fabs(term);
    }
    v.value[j] = sum;
    v.magnitude[j] = mag;
  }
  return v;
}

double rms(const std::vector<double>& v) {
  double s = 0.0;
  for (double x : v) s += x * x;
  return v.empty() ? 0.0 : std::sqrt(s / static_cast<double>(v.size()));
}

void check_vjp(const HostTensor& got, const HostTensor& before, const Vjp& want, double alpha,
               double beta, double tol, double extra_scale) {
  const std::vector<double> b = before.to_ref();
  const double scale = std::fabs(alpha) * (rms(want.magnitude) + extra_scale) +
                       (beta != 0.0 ? std::fabs(beta) * rms(b) : 0.0);
  check_output(got, before, blend(want.value, alpha, beta, b), tol, scale);
}

std::vector<int64_t> random_dims(int rank, int64_t lo, int64_t hi) {
  std::vector<int64_t> d(static_cast<size_t>(rank));
  for (auto& v : d) v = uniform_int(lo, hi);
  return d;
}

Layout random_layout() {
  const Layout all[] = {Layout::CHANNELS_FIRST, Layout::CHANNELS_LAST, Layout::PADDED,
                        Layout::REVERSED};
  return all[uniform_int(0, 3)];
}

Handle gpu_handle() {
  Handle h;
  const Status s = Handle::cuda(0, nullptr, &h);
  INFO(s.to_string());
  REQUIRE(s.ok());
  return h;
}

void check_against(const HostTensor& got, const HostTensor& before, const HostTensor& want,
                   double tol) {
  check_output(got, before, want.to_ref(), tol);
}

void compare_cuda_with_cpu(const BackendRun& run, const std::vector<HostTensor>& outs,
                           double tol) {
  std::vector<HostTensor> cpu_outs = outs, gpu_outs = outs;
  {
    Staging st(Handle::cpu());
    run(Handle::cpu(), st, cpu_outs);
    st.finish();
  }
  {
    const Handle h = gpu_handle();
    Staging st(h);
    run(h, st, gpu_outs);
    st.finish();
  }
  for (size_t i = 0; i < outs.size(); ++i) {
    CAPTURE(i);
    check_against(gpu_outs[i], outs[i], cpu_outs[i], tol);
  }
}

HostTensor int32_tensor(const std::vector<int32_t>& values) {
  HostTensor t(TensorDesc::packed(DType::F32, {static_cast<int64_t>(values.size())}));
  std::memcpy(t.data(), values.data(), values.size() * sizeof(int32_t));
  return t;
}

}  // namespace test
}  // namespace jet
