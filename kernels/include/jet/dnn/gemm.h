// GEMM / fully connected.
#pragma once

#include "jet/dnn/activation.h"
#include "jet/dnn/tensor.h"

namespace jet {

// y = alpha * (op(a) @ op(b) + bias) + beta * y, batched.
// a: [batch_a,] M, K (or K, M when trans_a); b: [batch_b,] K, N (or N, K when trans_b);
// y: [batch,] M, N. Rank 2 or 3 for all three (equal ranks); a batch dim of 1 broadcasts.
// Transposition may also be expressed with strides; trans flags are a convenience.
// bias: rank of y, each dim 1 or equal to y's (e.g. 1, N for a fully-connected layer, M, 1 for a
// per-row bias); nullptr means none. Every tensor has one dtype. A ONNX Gemm with beta_onnx and
// bias C maps to bias = beta_onnx / alpha * C with our beta = 0 (the converter folds this).
struct GemmDesc {
  bool trans_a = false;
  bool trans_b = false;
};

// docs/ops.md routines: | `gemm_forward` | transposes, batched (rank 3, batch-1 broadcast), bias
//   broadcast | yes | yes | yes | yes | yes | -- | Gemm, MatMul |
Status gemm_forward(const Handle& handle, const GemmDesc& gemm, float alpha,
                    const TensorDesc& a_desc, const void* a, const TensorDesc& b_desc,
                    const void* b, const TensorDesc& bias_desc, const void* bias, float beta,
                    const TensorDesc& y_desc, void* y);

}  // namespace jet
