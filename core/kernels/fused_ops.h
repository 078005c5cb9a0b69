// Nodes that exist only between the compiler and the fast kernels: the compiler's passes
// (core/compiler/fuse_expand_depthwise.h, fuse_conv_concat.h, fold_channel_scale.h) make them, after the
// layout pass, when the registry has a kernel for them; the kernels (core/kernels/fast/) run them. Never
// stored in an artifact. This header is their contract: op names, inputs and attributes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace weave::fused {

// ExpandDepthwise: a 1x1 expansion Conv whose output feeds only a depthwise Conv, both NHWC.
// Inputs: x, expansion weights [C, Cin, 1, 1], expansion bias (or none), depthwise weights
// [C, 1, KH, KW], depthwise bias (or none). Attributes: the depthwise Conv's, plus the
// expansion's activation* attributes under kExpandPrefix.
inline constexpr const char* kExpandDepthwise = "ExpandDepthwise";
inline constexpr const char* kExpandPrefix = "expand_";

// ConvConcat: a channel Concat (NHWC axis 3) whose inputs are all non-depthwise NHWC Convs used
// by it alone. Inputs: kConvConcatInputs per conv: x, weights, bias (or none), residual (or
// none). Attributes: "convs" (their count, at most kConvConcatMembers) and each conv's
// attributes under conv_prefix(i).
inline constexpr const char* kConvConcat = "ConvConcat";
inline constexpr std::size_t kConvConcatInputs = 4;
inline constexpr int64_t kConvConcatMembers = 8;  // 4 x 8 inputs: KernelSetup::float_inputs' 32 bits
[[nodiscard]] inline std::string conv_prefix(std::size_t i) {
  return "conv" + std::to_string(i) + "_";
}

// ScaledConv: a 1x1 NHWC Conv (stride 1, unpadded, ungrouped, constant weights) whose input is
// the only use of a Mul of x by a per-channel scale s computed at run time (a
// squeeze-and-excitation block). Inputs: x [N, H, W, C], weights [M, C, 1, 1], bias (or none),
// residual (or none), s [N or 1, 1, 1, C]. Attributes: the Conv's.
inline constexpr const char* kScaledConv = "ScaledConv";

// On an NHWC Conv (ungrouped, not depthwise) with a residual input: the residual is added after
// the activation, not before (core/compiler/fuse_residual_after_activation.h). An int, 1.
inline constexpr const char* kResidualLastAttr = "weave_residual_last";

}  // namespace weave::fused
