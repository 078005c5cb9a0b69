// Fills in the ranks ONNX shape inference leaves unknown. Shape inference gives up at the
// first Reshape whose target shape is computed at run time (common in Paddle exports: Shape ->
// Slice -> Cast -> Concat -> Reshape) and everything downstream loses even its rank, although the
// rank is plain from the length of the shape tensor. Knowing ranks lets canonicalisation prove
// that an old-opset Softmax axis is the last one. Beyond ranks, a few dims of the shape
// arithmetic itself are computed (Shape -> [rank], 1-D Slice with constant bounds, Concat of
// 1-D pieces, Cast/unary ops keep their input's shape), which is what makes a Reshape's rank
// known; all other dims found this way are kDynamic. Values ONNX fully typed are not touched.
#pragma once

#include "core/graph/graph.h"

namespace weave {

void propagate_ranks(Graph& g);

}  // namespace weave
