// The CUDA convolution algorithms, one file each; conv.cu picks among them. Every algorithm
// handles any ConvGeom (1-3D, groups, dilation, stride, asymmetric pads, both modes, any
// strides, f32 and f16 storage) unless its *_applies() says otherwise, and writes outputs through
// conv_store (conv_common.cuh) so the epilogue is fused in registers. All are asynchronous on
// handle.stream(), allocate nothing and return launch_status() of their last launch.
#pragma once

#include "conv_common.cuh"

namespace jet {
namespace cuda {

// DIRECT (conv_direct.cu): one thread per output element looping over its window; groups with
// one channel in and out (depthwise) take a specialized kernel. No workspace.
Status conv_direct(const Handle& h, const ConvGeom& g, const ConvOut& e, DType t, const void* x,
                   const void* w, void* y);

// The GEMM family (conv_gemm.cu) runs f16 channels-last problems on the tensor-core core
// (gemm_mma.cuh) with tactics choosing its tile and split-K factor; the workspace queries check
// the tactic and give NOT_SUPPORTED when it does not apply.
//
// IMPLICIT_GEMM (conv_gemm.cu): GEMM over (output pixels) x (K per group) x (C/groups * window)
// whose lowered-input tiles are formed on the fly. No workspace (so no split-K).
Status implicit_gemm_workspace(const Handle& h, const ConvGeom& g, DType t, size_t* bytes);
Status conv_implicit_gemm(const Handle& h, const ConvGeom& g, const ConvOut& e, DType t,
                          const void* x, const void* w, void* y);

// IMPLICIT_PRECOMP_GEMM (conv_gemm.cu): implicit GEMM with workspace: the lowered matrix's input
// offsets precomputed (register-staged kernel), or split-K partial sums (tensor-core kernel).
Status implicit_precomp_gemm_workspace(const Handle& h, const ConvGeom& g, DType t,
                                       size_t* bytes);
Status conv_implicit_precomp_gemm(const Handle& h, const ConvGeom& g, const ConvOut& e, DType t,
                                  const void* x, const void* w, void* workspace, void* y);

// GEMM (conv_gemm.cu): explicit im2col into the workspace, then the tiled GEMM. 1x1, stride 1,
// unpadded problems with a GEMM-compatible x layout read x directly.
Status gemm_workspace(const Handle& h, const ConvGeom& g, DType t, size_t* bytes);
// Whether GEMM multiplies x in place (1x1, stride 1, unpadded, evenly strided rows): no im2col.
bool gemm_reads_x(const ConvGeom& g);
Status conv_gemm(const Handle& h, const ConvGeom& g, const ConvOut& e, DType t, const void* x,
                 const void* w, void* workspace, void* y);

// Tactics of the GEMM family for this problem (0 when it is off the tensor-core path).
Status gemm_family_tactic_count(const Handle& h, const ConvGeom& g, DType t, ConvAlgo algo,
                                int* count);

// WINOGRAD (conv_winograd.cu): F(2x2, 3x3) and F(4x4, 3x3) for 2D 3x3 filters with stride 1 and
// dilation 1. Tactics: 1 F(2x2) with the transformed GEMM on 64 x 64 tiles, 2 on 128 x 128, 3 and 4
// the same with F(4x4) (less accurate: never tactic 0's choice).
bool winograd_applies(const ConvGeom& g);
int winograd_tactic_count();
size_t winograd_workspace(const ConvGeom& g, DType t);
Status conv_winograd(const Handle& h, const ConvGeom& g, const ConvOut& e, DType t, const void* x,
                     const void* w, void* workspace, void* y);

}  // namespace cuda
}  // namespace jet
