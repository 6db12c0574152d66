// jet::dnn, the deep-learning primitive library of jetinfer. One include for the whole API.
//
// Every routine computes y = alpha * op(x) + beta * y. When beta == 0, y is not read, so NaNs
// already in y never leak into the result. Routines validate their descriptors and return a
// Status naming the problem; nothing throws and nothing aborts on bad input.
#pragma once

#include "jet/dnn/activation.h"
#include "jet/dnn/common.h"
#include "jet/dnn/conv.h"
#include "jet/dnn/detection.h"
#include "jet/dnn/gemm.h"
#include "jet/dnn/image_preprocess.h"
#include "jet/dnn/norm.h"
#include "jet/dnn/pool.h"
#include "jet/dnn/softmax.h"
#include "jet/dnn/tensor.h"
#include "jet/dnn/tensor_ops.h"
