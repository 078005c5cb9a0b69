#include "core/kernels/fast/epilogue.h"

#include "core/kernels/fused_activation.h"
#include "core/kernels/fused_ops.h"
#include "core/kernels/kernel_util.h"

namespace weave::fast {

Expected<Activation> parse_epilogue(const KernelSetup& s) {
  auto r = kern::parse_activation(s);
  if (!r) return r.error();
  Activation a;
  a.post_mul = r->post_mul;
  a.post_add = r->post_add;
  a.residual_last = s.node.attrs.get_int(fused::kResidualLastAttr, 0) != 0;
  switch (r->kind) {
    case kern::Activation::none:
      break;
    case kern::Activation::relu:
      a.kind = Activation::relu;
      break;
    case kern::Activation::clip:
      a.kind = Activation::clip, a.p0 = r->lo, a.p1 = r->hi;
      break;
    case kern::Activation::leaky_relu:
      a.kind = Activation::leaky_relu, a.p0 = r->alpha;
      break;
    case kern::Activation::hard_swish:
      a.kind = Activation::hard_swish;
      break;
    case kern::Activation::sigmoid:
      a.kind = Activation::sigmoid;
      break;
    case kern::Activation::hard_sigmoid:
      a.kind = Activation::hard_sigmoid, a.p0 = r->alpha, a.p1 = r->beta;
      break;
    case kern::Activation::tanh:
      a.kind = Activation::tanh;
      break;
    case kern::Activation::swish:
      a.kind = Activation::swish, a.p0 = r->alpha;
      break;
    case kern::Activation::gelu:
      a.kind = Activation::gelu;
      break;
    case kern::Activation::gelu_tanh:
      a.kind = Activation::gelu_tanh;
      break;
  }
  return a;
}

}  // namespace weave::fast
