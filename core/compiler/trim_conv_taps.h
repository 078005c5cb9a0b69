// Drops the kernel taps of a Conv that read only padding. A dilated convolution on a small map
// (DeepLab's ASPP: rates 12, 24, 36 on a 20x20 map) or a large kernel on a late, small feature
// map has rows and columns of taps that fall outside the input for every output position: they
// multiply zeros. The Conv gets the smallest kernel window holding every tap that can read
// input, and pads shifted so that each output reads the same inputs; a rate-24 3x3 on 20x20
// becomes a 1x1. Only for Convs whose weights are a float32 param and whose input's spatial
// dims are static, in graphs whose inputs are all static (the dims then follow from what the
// executor enforces); only at the window's edges (a tap inside it that reads nothing stays).
#pragma once

#include "core/common/status.h"
#include "core/graph/graph.h"

namespace weave {

[[nodiscard]] Status trim_conv_taps(Graph& g);

}  // namespace weave
