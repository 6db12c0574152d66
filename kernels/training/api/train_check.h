// Validation helpers of the training routines' front ends (kernels/training/api/), on top of
// kernels/api/check.h. They name each tensor as the routine's caller knows it (dx, dy, ...).
#pragma once

#include "../../api/check.h"
#include "../backend.h"

namespace jet {

// The descriptor is valid (rank 1..8, or 3..5 for SPATIAL), f32 (the add-on's only dtype so far:
// NOT_SUPPORTED otherwise) and the pointer is not null.
Status check_train_tensor(const char* fn, Ranks ranks, const TensorDesc& d, const void* p,
                          const char* name);

// Same dims as `ref` (named ref_name).
Status check_dims_as(const char* fn, const TensorDesc& d, const char* name, const TensorDesc& ref,
                     const char* ref_name);

}  // namespace jet
