// The layout pass of the fast CPU path: decides which 4-D activations live channels-last (NHWC)
// so that consecutive fast kernels hand each other their data with no reorder in between.
//
// A value keeps its id and its NCHW meaning; its NHWC twin is a new value whose static shape is
// the permuted one ([N, H, W, C]). Rules, walking the nodes in order:
//   - A layout-sensitive op (Conv, ConvTranspose, MaxPool, AveragePool, GlobalAveragePool,
//     GlobalMaxPool; an inference BatchNormalization whose input already is NHWC) the registry
//     takes channels-last (KernelRegistry::takes_nhwc) reads and writes NHWC and gets the
//     attribute weave_layout = "NHWC".
//   - Layout-agnostic ops follow their inputs: elementwise ops (unary, broadcasting binary,
//     Clip, Where, ...) and Concat (axis remapped) run on NHWC data when one of their 4-D inputs
//     already is NHWC; constant operands are permuted once here (a [C,1,1] bias becomes [1,1,C]).
//     So does Resize with constant scales or sizes (scales, sizes and roi permuted) when
//     the registry takes the permuted node (it is marked weave_layout = "NHWC" too).
//   - A Slice with constant axes (starts and ends may be computed) follows its input, axes
//     mapped to their physical places; so does a Split (its axis mapped, each part NHWC).
//   - A channel shuffle (Reshape [N,C,H,W] -> [N,g,C/g,H,W], Transpose of the middle axes,
//     Reshape back) of an NHWC value becomes one Gather along its last axis.
//   - A Reshape splitting the channels of an NHWC value ([N,C,H,W] -> [N,c1..ck,H,W]) read only
//     by a Transpose (a detector's head) becomes the same split of the twin's last axis and one
//     Transpose with the perms composed, or no copy when that is the identity.
//   - ReduceMean / ReduceMax over H and W of an NHWC value become the channels-last global
//     pooling (and a Flatten to [N, C] without keepdims).
//   - Transpose of an NHWC value composes its perm with the layout's (no extra copy; when that
//     is the identity, as ConvNeXt's permute to channels-last after a Conv, no node at all: its
//     readers read the twin); Shape of one becomes Shape + Gather of the NCHW order, which the
//     plan folds.
//   - Transpose [0, 3, 1, 2] of a value holding its own data (a channels-last tensor of the
//     model's, as ConvNeXt's after its MLP) is not run: its input is its output's NHWC twin,
//     and the NCHW output is made only for a reader that needs it.
//   - Anything else reads NCHW: a Transpose back (perm [0,3,1,2]) is inserted once per value,
//     before its first such reader, and graph outputs always end NCHW.
// The graph's inputs, outputs and their names do not change, so callers see the same model.
#pragma once

#include "core/common/status.h"
#include "core/graph/graph.h"
#include "core/kernels/registry.h"

namespace weave {

[[nodiscard]] Status layout_nhwc(Graph& g, const KernelRegistry& registry);

// Count of Transpose nodes the pass inserted at layout boundaries (for tests and `weave inspect`).
[[nodiscard]] int count_layout_transposes(const Graph& g);

}  // namespace weave
