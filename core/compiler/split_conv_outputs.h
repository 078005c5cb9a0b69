// A Split of a convolution's output channels, the convolution read by nothing else, becomes one
// convolution per part, each with its rows of the weights and the bias (views of the same bytes:
// nothing is copied): every part is computed where it is read, and the Split's copy of the whole
// map goes away. YOLOv8's C2f blocks split their first convolution's channels in two; CSP-style
// blocks and a transformer's fused projections do the same.
//
// Taken: an ungrouped Conv with constant float weights [M, C, ...], a constant float bias [M] or
// none, no residual (a fourth input), any fused activation (applied per channel, so per part);
// a Split along axis 1 whose every output has a known channel count, together M. The parts take
// the Split's place, so each reads an input computed before it. WEAVE_SPLIT_CONV=0 turns the
// pass off (for side-by-side measurements).
#pragma once

#include "core/common/status.h"
#include "core/graph/graph.h"

namespace weave {

[[nodiscard]] Status split_conv_outputs(Graph& g);

}  // namespace weave
