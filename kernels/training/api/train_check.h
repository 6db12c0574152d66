// Validation helpers of the training routines' front ends (kernels/training/cpu/ and api/), on top
// of kernels/api/check.h. They name each tensor as the routine's caller knows it (dx, dy, ...).
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

// An optional workspace (the CUDA multi-block paths of batch norm and the bias gradient): none
// (null and 0 bytes) is accepted; otherwise at least `need` bytes (BAD_PARAM naming both sizes).
// *use is the workspace when the backend uses one (need > 0), else null.
Status optional_workspace(const char* fn, size_t need, void* workspace, size_t workspace_bytes,
                          void** use);

}  // namespace jet
