// Rewrites old-opset node forms into the form of opset 13, so that every kernel implements one
// form only. Runs on the Weave graph right after import (it needs no protobuf):
//   Slice   (opset < 10)  starts/ends/axes attributes   -> int64 param inputs
//   Clip    (opset < 11)  min/max attributes            -> param inputs of the input's dtype
//   Squeeze/Unsqueeze (opset < 13) axes attribute       -> int64 param input
//   Upsample (any), Resize (opset 10)                   -> Resize [X, roi=none, scales] with
//                          coordinate_transformation_mode=asymmetric, nearest_mode=floor, which
//                          is exactly what those old forms computed
//   Softmax/LogSoftmax/Hardmax (opset < 13): the old form flattened the input to 2-D at `axis`
//                          (default 1). When that axis is the last one the result equals the
//                          opset-13 single-axis form and we write axis=-1; otherwise the node
//                          keeps `axis` and gets "coerce_2d"=1 for the kernel to honour.
// ReduceMean/ReduceMax/... keep `axes` as an attribute (still an attribute in opset 13).
#pragma once

#include "core/common/status.h"
#include "core/graph/graph.h"

namespace weave {

// `opset` is the model's default-domain opset. Errors name the node.
[[nodiscard]] Status canonicalize_opset(Graph& g, int opset);

// Lowers the sequence ops onto tensor ops when every position is a constant and every split's
// count is known: SequenceEmpty / SequenceConstruct / SequenceInsert / SequenceErase only track
// which tensors a sequence holds, SequenceAt becomes Identity, SequenceLength a constant,
// ConcatFromSequence Concat (Unsqueeze first with new_axis), SplitToSequence Split (and Squeeze
// with keepdims=0). Anything else that takes a sequence, a sequence output, or a position known
// only at run time is an error naming the node. Runs after canonicalize_opset (the nodes it
// makes are opset-13 forms).
[[nodiscard]] Status lower_sequences(Graph& g, int opset);

}  // namespace weave
