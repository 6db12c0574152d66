// Uses jet::kernels from the installed package: a ReLU on the CPU backend, checked.
#include <cstdio>

#include <jet/dnn.h>

int main() {
  const float x[6] = {-2.f, -1.f, 0.f, 0.5f, 1.f, 3.f};
  float y[6];
  const jet::TensorDesc d = jet::TensorDesc::ncw(jet::DType::F32, 1, 2, 3);
  const jet::Status s = jet::activation_forward(jet::Handle::cpu(), jet::ActivationDesc::relu(),
                                                1.f, d, x, 0.f, d, y);
  if (!s.ok()) {
    std::printf("activation_forward failed: %s\n", s.to_string().c_str());
    return 1;
  }
  for (int i = 0; i < 6; ++i) {
    const float want = x[i] > 0 ? x[i] : 0.f;
    if (y[i] != want) {
      std::printf("y[%d] = %g, want %g\n", i, y[i], want);
      return 1;
    }
  }
  std::printf("jetinfer consumer: relu ok (CUDA in this build: %s)\n",
              jet::built_with_cuda() ? "yes" : "no");
  return 0;
}
