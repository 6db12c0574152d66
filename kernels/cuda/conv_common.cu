#include "conv_common.cuh"

namespace jet {
namespace cuda {

ConvGeom make_conv_geom(const TensorDesc& x_desc, const FilterDesc& w_desc, const ConvDesc& conv,
                        const TensorDesc& y_desc) {
  ConvGeom g{};
  const int s = conv.spatial_rank();
  const int lead = 3 - s;  // leading unit spatial dims
  g.spatial_rank = s;
  g.n = x_desc.dim(0);
  g.c = x_desc.dim(1);
  g.k = w_desc.k();
  g.groups = conv.groups();
  g.cg = w_desc.c();
  g.kg = g.k / g.groups;
  g.flip = conv.mode() == ConvMode::CONVOLUTION;
  g.tactic = conv.tactic();
  g.approximate = conv.math() == ConvMath::ALLOW_APPROXIMATE;
  const TensorDesc wt = w_desc.as_tensor();
  g.xs_n = x_desc.stride(0);
  g.xs_c = x_desc.stride(1);
  g.ys_n = y_desc.stride(0);
  g.ys_c = y_desc.stride(1);
  g.ws_k = wt.stride(0);
  g.ws_c = wt.stride(1);
  for (int i = 0; i < 3; ++i) {
    if (i < lead) {
      g.in[i] = g.out[i] = g.win[i] = 1;
      g.pad[i] = 0;
      g.stride[i] = g.dil[i] = 1;
      g.xs[i] = g.ys[i] = g.ws[i] = 0;
      continue;
    }
    const int j = i - lead;  // the problem's spatial dim
    g.in[i] = x_desc.dim(2 + j);
    g.out[i] = y_desc.dim(2 + j);
    g.win[i] = w_desc.spatial(j);
    g.pad[i] = conv.pad_begin(j);
    g.stride[i] = conv.stride(j);
    g.dil[i] = conv.dilation(j);
    g.xs[i] = x_desc.stride(2 + j);
    g.ys[i] = y_desc.stride(2 + j);
    g.ws[i] = wt.stride(2 + j);
  }
  return g;
}

ConvOut make_conv_out(float alpha1, const ConvEpilogue& e, const ConvGeom& g) {
  ConvOut o{};
  o.fused = e.fused;
  o.alpha1 = alpha1;
  o.beta = e.beta;
  o.alpha2 = e.alpha2;
  o.act = e.act;
  o.bias = e.fused ? e.bias : nullptr;
  o.bias_stride = e.bias_stride;
  o.z = e.fused ? e.z : nullptr;
  if (o.z && e.z_desc) {
    const TensorDesc& z = *e.z_desc;
    const int lead = 3 - g.spatial_rank;
    o.zs_n = z.stride(0);
    o.zs_c = z.stride(1);
    for (int i = 0; i < 3; ++i) o.zs[i] = i < lead ? 0 : z.stride(2 + i - lead);
  }
  return o;
}

}  // namespace cuda
}  // namespace jet
