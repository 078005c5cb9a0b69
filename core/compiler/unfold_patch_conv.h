// Rewrites a convolution whose windows tile its input (stride = kernel, no padding, no
// dilation, one group: ViT's and Swin's patch embeddings, ConvNeXt's stem) into a
// rearrangement of every patch into channels and a 1x1 convolution:
//   Conv(x [N,C,H,W], W [M,C,kh,kw], stride (kh,kw))
//     = Conv1x1(Reshape(Transpose(Reshape(x, [N,C,H/kh,kh,W/kw,kw]), [0,1,3,5,2,4]),
//                       [N,C*kh*kw,H/kh,W/kw]),  W as [M,C*kh*kw,1,1])
// A direct or implicit-GEMM convolution sums only C products per tap there (3 for an image),
// which keeps vector units idle; the 1x1 form sums C*kh*kw (768 for a 16x16 patch) after one
// pass over the input. Applied when a patch has more taps than channels, the input's dims are
// static (in a graph whose inputs are all static) and divide by the kernel's, and the weights
// are a float32 param.
#pragma once

#include "core/common/status.h"
#include "core/graph/graph.h"

namespace weave {

[[nodiscard]] Status unfold_patch_conv(Graph& g);

}  // namespace weave
