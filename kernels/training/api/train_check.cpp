// Validation helpers of the training front ends.
#include "train_check.h"

namespace jet {

Status check_train_tensor(const char* fn, Ranks ranks, const TensorDesc& d, const void* p,
                          const char* name) {
  JET_TRY(in_routine(fn, ranks == Ranks::SPATIAL ? d.validate_spatial(name) : d.validate(name)));
  if (d.dtype() != DType::F32)
    return make_status(StatusCode::NOT_SUPPORTED,
                       "%s: %s is %s; the training routines take f32 tensors only", fn, name,
                       dtype_name(d.dtype()));
  return check_ptr(fn, p, name);
}

Status check_dims_as(const char* fn, const TensorDesc& d, const char* name, const TensorDesc& ref,
                     const char* ref_name) {
  return check_same_dims(fn, d, name, ref, ref_name);
}

Status optional_workspace(const char* fn, size_t need, void* workspace, size_t workspace_bytes,
                          void** use) {
  *use = nullptr;
  if (!workspace && workspace_bytes == 0) return Status();
  if (!workspace || workspace_bytes < need)
    return make_status(StatusCode::BAD_PARAM, "%s: the workspace needs %zu bytes, got %zu%s", fn,
                       need, workspace_bytes, workspace ? "" : " (a null pointer)");
  if (need > 0) *use = workspace;
  return Status();
}

}  // namespace jet
