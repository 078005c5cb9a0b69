// Folds an inference BatchNormalization into the Conv or ConvTranspose that feeds it:
//   y = s * (conv(x, W) + B - mean) / sqrt(var + eps) + beta
//     = conv(x, W * a) + (B - mean) * a + beta,        a = s / sqrt(var + eps)   (per channel)
// Applies only when the conv output feeds nothing but the BN (and is no graph output), the BN
// uses running statistics (no training_mode, spatial=1) and writes only its first output, and
// W, B, s, beta, mean, var are all float32 params of matching channel counts. New params are
// created (the old W may be shared by other nodes); unused ones go at the next compact.
// Arithmetic is done in double so the folded weights are the float32 rounding of the exact
// values.
#pragma once

#include "core/common/status.h"
#include "core/graph/graph.h"

namespace weave {

[[nodiscard]] Status fold_batchnorm(Graph& g);

}  // namespace weave
