// The standalone program of call a (not built by CMake): nvcc -O3 -arch=sm_90 -o tf32acc a-tf32x3-accuracy.cu
// Accuracy of 3xTF32 mma.sync against FFMA, both against float64 (standalone experiment).
#include <cstdio>
#include <cstdlib>
#include <cmath>
#include <vector>
#include <random>
#include <cuda_runtime.h>

__device__ __forceinline__ uint32_t tf32(float x) {
  uint32_t r; asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(r) : "f"(x)); return r;
}
__device__ __forceinline__ void mma(float (&d)[4], const uint32_t (&a)[4], const uint32_t (&b)[2]) {
  asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
               : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}
// A: 16 x K row-major, B: K x 8 (stored as B[k*8+n]). C: 16 x 8.
__global__ void k_mma(const float* A, const float* B, float* C, int K, int mode, int chunk) {
  const int lane = threadIdx.x, g = lane >> 2, t = lane & 3;
  float acc[4] = {0, 0, 0, 0}, tmp[4] = {0, 0, 0, 0};
  for (int k0 = 0; k0 < K; k0 += 8) {
    float af[4] = {A[g * K + k0 + t], A[(g + 8) * K + k0 + t], A[g * K + k0 + t + 4], A[(g + 8) * K + k0 + t + 4]};
    float bf[2] = {B[(k0 + t) * 8 + g], B[(k0 + t + 4) * 8 + g]};
    uint32_t ah[4], al[4], bh[2], bl[2];
    for (int i = 0; i < 4; ++i) { ah[i] = tf32(af[i]); al[i] = tf32(af[i] - __uint_as_float(ah[i])); }
    for (int i = 0; i < 2; ++i) { bh[i] = tf32(bf[i]); bl[i] = tf32(bf[i] - __uint_as_float(bh[i])); }
    if (mode == 0) { mma(acc, al, bh); mma(acc, ah, bl); mma(acc, ah, bh); }
    else if (mode == 1) {
      mma(tmp, al, bh); mma(tmp, ah, bl); mma(tmp, ah, bh);
      if (((k0 / 8) + 1) % chunk == 0 || k0 + 8 >= K) { for (int i = 0; i < 4; ++i) { acc[i] += tmp[i]; tmp[i] = 0; } }
    } else { mma(acc, ah, bh); }
  }
  C[g * 8 + 2 * t] = acc[0]; C[g * 8 + 2 * t + 1] = acc[1]; C[(g + 8) * 8 + 2 * t] = acc[2]; C[(g + 8) * 8 + 2 * t + 1] = acc[3];
}
__global__ void k_ffma(const float* A, const float* B, float* C, int K) {
  const int m = threadIdx.x / 8, n = threadIdx.x % 8;
  float s = 0.f;
  for (int k = 0; k < K; ++k) s = fmaf(A[m * K + k], B[k * 8 + n], s);
  C[m * 8 + n] = s;
}
int main() {
  std::mt19937 rng(7);
  for (int dist = 0; dist < 2; ++dist)
  for (int K : {576, 4608, 32768, 100352}) {
    std::vector<float> A(16 * K), B(K * 8);
    std::uniform_real_distribution<float> u(0.f, 1.f); std::normal_distribution<float> nd(0.f, 1.f);
    for (auto& x : A) x = dist ? nd(rng) : u(rng);
    for (auto& x : B) x = dist ? nd(rng) : u(rng);
    float *dA, *dB, *dC; cudaMalloc(&dA, A.size() * 4); cudaMalloc(&dB, B.size() * 4); cudaMalloc(&dC, 128 * 4);
    cudaMemcpy(dA, A.data(), A.size() * 4, cudaMemcpyHostToDevice); cudaMemcpy(dB, B.data(), B.size() * 4, cudaMemcpyHostToDevice);
    std::vector<double> ref(128), mag(128);
    for (int m = 0; m < 16; ++m) for (int n = 0; n < 8; ++n) { double s = 0, a = 0; for (int k = 0; k < K; ++k) { double p = (double)A[m*K+k] * B[k*8+n]; s += p; a += std::fabs(p);} ref[m*8+n] = s; mag[m*8+n] = a; }
    auto err = [&](const char* name) { std::vector<float> C(128); cudaMemcpy(C.data(), dC, 512, cudaMemcpyDeviceToHost);
      double mx = 0, mean = 0, bias = 0; for (int i = 0; i < 128; ++i) { double e = (C[i] - ref[i]) / mag[i]; mx = std::max(mx, std::fabs(e)); mean += std::fabs(e) / 128; bias += e / 128; }
      std::printf("%-8s K=%6d %-7s max %.2e mean %.2e bias %+.2e\n", dist ? "normal" : "uniform", K, name, mx, mean, bias); };
    k_ffma<<<1, 128>>>(dA, dB, dC, K); err("ffma");
    k_mma<<<1, 32>>>(dA, dB, dC, K, 0, 1); err("3xtf32");
    k_mma<<<1, 32>>>(dA, dB, dC, K, 1, 1); err("3x-fr1");
    k_mma<<<1, 32>>>(dA, dB, dC, K, 1, 4); err("3x-fr4");
    k_mma<<<1, 32>>>(dA, dB, dC, K, 2, 1); err("1xtf32");
    cudaFree(dA); cudaFree(dB); cudaFree(dC);
  }
  return 0;
}
