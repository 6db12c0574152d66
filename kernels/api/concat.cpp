// concat_forward: validation, then one transform_tensor per input into its sub-region of y.
//
// There is no backend entry for concat: each input is copied (with alpha/beta and any dtype
// conversion) into the view of y that it occupies, through the public, dispatched
// transform_tensor, so every backend that implements transform gets concat for free.
#include <cstdio>

#include "backend.h"
#include "check.h"

namespace jet {

Status concat_forward(const Handle& handle, int axis, int count, const TensorDesc* x_descs,
                      const void* const* xs, float alpha, float beta, const TensorDesc& y_desc,
                      void* y) {
  const char* fn = "concat_forward";
  if (count < 1)
    return make_status(StatusCode::BAD_PARAM, "%s: count is %d; at least one input is needed",
                       fn, count);
  JET_RETURN_IF_ERROR(check_ptr(fn, x_descs, "x_descs"));
  JET_RETURN_IF_ERROR(check_ptr(fn, xs, "xs"));
  JET_RETURN_IF_ERROR(check_ptr(fn, y, "y"));
  JET_RETURN_IF_ERROR(in_routine(fn, y_desc.validate_any_dtype("y")));
  if (axis < 0 || axis >= y_desc.rank())
    return make_status(StatusCode::BAD_PARAM, "%s: axis %d is outside [0, %d) for y of rank %d",
                       fn, axis, y_desc.rank(), y_desc.rank());

  // Validate every input before writing anything, so a bad input leaves y untouched.
  int64_t axis_total = 0;
  for (int i = 0; i < count; ++i) {
    char what[32];
    std::snprintf(what, sizeof what, "x_descs[%d]", i);
    JET_RETURN_IF_ERROR(in_routine(fn, x_descs[i].validate_any_dtype(what)));
    if ((!dtype_is_float(x_descs[i].dtype()) || !dtype_is_float(y_desc.dtype())) &&
        (alpha != 1.f || beta != 0.f))
      return make_status(StatusCode::NOT_SUPPORTED,
                         "%s: alpha %g and beta %g with %s %s and y %s; integer and bool tensors "
                         "are concatenated with alpha 1 and beta 0 only",
                         fn, static_cast<double>(alpha), static_cast<double>(beta), what,
                         dtype_name(x_descs[i].dtype()), dtype_name(y_desc.dtype()));
    if (!xs[i])
      return make_status(StatusCode::BAD_PARAM, "%s: xs[%d] is a null pointer", fn, i);
    const TensorDesc& xd = x_descs[i];
    bool dims_match = xd.rank() == y_desc.rank();
    for (int d = 0; dims_match && d < xd.rank(); ++d)
      dims_match = d == axis || xd.dim(d) == y_desc.dim(d);
    if (!dims_match)
      return make_status(StatusCode::BAD_PARAM,
                         "%s: x_descs[%d] has dims %s but y has dims %s; they must match in every "
                         "dim except axis %d",
                         fn, i, dims_text(xd.rank(), xd.dims()).c_str(),
                         dims_text(y_desc.rank(), y_desc.dims()).c_str(), axis);
    // Each dim is at most y's span (validated), so the running sum cannot overflow before it
    // exceeds y's dim and we stop.
    axis_total += xd.dim(axis);
    if (axis_total > y_desc.dim(axis)) break;
  }
  if (axis_total != y_desc.dim(axis))
    return make_status(StatusCode::BAD_PARAM,
                       "%s: the inputs' dims along axis %d sum to %s%lld but y's dim there is %lld",
                       fn, axis, axis_total > y_desc.dim(axis) ? "more than " : "",
                       static_cast<long long>(axis_total),
                       static_cast<long long>(y_desc.dim(axis)));

  const size_t esz = dtype_size(y_desc.dtype());
  int64_t begin = 0;
  for (int i = 0; i < count; ++i) {
    const int64_t len = x_descs[i].dim(axis);
    const TensorDesc view = y_desc.subregion(axis, begin, len);
    void* view_base =
        static_cast<unsigned char*>(y) + static_cast<size_t>(y_desc.subregion_offset(axis, begin)) * esz;
    JET_RETURN_IF_ERROR(in_routine(fn, transform_tensor(handle, alpha, x_descs[i], xs[i], beta, view, view_base)));
    begin += len;
  }
  return Status();
}

}  // namespace jet
