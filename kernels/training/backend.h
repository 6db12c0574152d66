// What the training add-on's front ends (each at the top of kernels/training/cpu/<op>.cpp, or in
// api/ for the routines composed of others) and backends (kernels/training/cpu/<op>.cpp,
// cuda/<op>.cu) share, as kernels/api/backend.h for the forward
// routines: each front end declares its backend entry points (JET_BACKEND_ENTRIES, or
// JET_CPU_ENTRY and JET_CUDA_ENTRY where the CUDA side takes more) and calls them after
// validation; a backend may assume valid, consistent f32 descriptors and non-null pointers
// (except where an argument is documented as optional).
#pragma once

#include "../api/backend.h"
#include "jet/dnn.h"
#include "jet/dnn/training.h"
#include "lrn_grad.h"
#include "pad_grad.h"
#include "resize_grad.h"
#include "train_math.h"

namespace jet {

// The reduction shapes of the losses' means and of the global-norm clip: the elements (rows for
// the cross-entropy) are split into chunks fixed by the count alone, so every device sums in
// the same order; one block per chunk writes a partial sum to the workspace, one block adds the
// partials.
constexpr int64_t kLossChunk = 4096;    // elements per partial (MSE, BCE, the clip's norm)
// Cross-entropy rows per partial: one, so CUDA gives every row its own block (32 rows a block
// took 0.1 ms of ResNet-18's step on the H200, one row after another).
constexpr int64_t kLossRowChunk = 1;
inline int64_t chunks(int64_t count, int64_t chunk) { return (count + chunk - 1) / chunk; }

// One operand's gradient in op_tensor_backward: which = 0 for a, 1 for b. The descriptors are
// rank-aligned with dc; dt_desc/dt is the gradient of operand `which`.
struct OpTensorGrad {
  TensorOp op;
  float alpha1, alpha2, alpha, beta;
  int which;
};

// LRN's window and constants as the gradient code takes them (kernels/training/lrn_grad.h).
LrnGradParams lrn_grad_params(const LrnDesc& lrn, int64_t channels);

// The Adam step's constants (bias corrections in double), the same for both backends
// (kernels/training/cpu/optimizer.cpp).
AdamScalars adam_scalars(const AdamDesc& adam, int64_t step);

namespace cpu {

enum class LossKind { MSE, BCE_WITH_LOGITS };

}  // namespace cpu
}  // namespace jet
