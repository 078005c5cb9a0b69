// ConvConcat: convolutions whose outputs a channel Concat joins, each writing straight into its
// channels of the joined tensor (SqueezeNet's fire modules). See nhwc.h for the pattern and why;
// core/compiler/fuse_conv_concat.h makes the nodes.
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <string>

#include "core/kernels/fast/fast_ops.h"
#include "core/kernels/fast/nhwc.h"
#include "core/kernels/fused_ops.h"
#include "core/kernels/kernel_util.h"

namespace weave::fast {
namespace {

constexpr std::size_t kPer = fused::kConvConcatInputs;  // x, weights, bias, residual

class ConvConcat final : public Kernel {
 public:
  explicit ConvConcat(std::vector<std::unique_ptr<Kernel>> convs) : convs_(std::move(convs)) {}

  void visit_packed(FunctionRef<void(SharedBytes&)> fn) override {
    for (auto& c : convs_) c->visit_packed(fn);
  }
  [[nodiscard]] bool packs_input(std::size_t k) const override {
    return k / kPer < convs_.size() && convs_[k / kPer]->packs_input(k % kPer);
  }

  Status infer(ShapeContext& ctx) const override {
    Dims out;
    std::size_t workspace = 0;
    States states;  // each conv's, for its run_into
    for (std::size_t i = 0; i < convs_.size(); ++i) {
      TensorView o;
      const std::string label = ctx.label + " conv " + std::to_string(i);
      ShapeContext sub{ctx.inputs.subspan(kPer * i, kPer), std::span<TensorView>(&o, 1), 0, label};
      WEAVE_TRY(convs_[i]->infer(sub));
      workspace = std::max(workspace, sub.workspace);
      states.push_back(std::move(sub.state));
      if (i == 0) {
        out = o.dims;
        continue;
      }
      if (o.dims[0] != out[0] || o.dims[1] != out[1] || o.dims[2] != out[2])
        return make_error(ctx.label, ": conv ", i, " gives ", kern::dims_bracketed(o.dims),
                          " (NHWC), conv 0 ", kern::dims_bracketed(out),
                          "; the Concat needs equal batch, height and width");
      out[3] += o.dims[3];
    }
    ctx.outputs[0].dtype = DType::float32;
    ctx.outputs[0].dims = out;
    ctx.workspace = workspace;
    ctx.keep(std::move(states));
    return {};
  }

  void run(const RunContext& ctx) const override {
    float* y = kern::out_f32(ctx, 0);
    const int64_t ldy = ctx.outputs[0].dims[3];
    const States& states = ctx.kept<States>();
    int64_t channel = 0;
    for (std::size_t i = 0; i < convs_.size(); ++i) {
      const auto& c = static_cast<const NhwcConvKernel&>(*convs_[i]);
      const RunContext sub{
          ctx.inputs.subspan(kPer * i, kPer), {}, ctx.workspace, ctx.parallel, states[i].get()};
      c.run_into(sub, y + channel, ldy);
      channel += c.out_channels();
    }
  }

 private:
  using States = std::vector<std::shared_ptr<const KernelState>>;
  std::vector<std::unique_ptr<Kernel>> convs_;  // each an NhwcConvKernel that can_run_into()
};

}  // namespace

Expected<std::unique_ptr<Kernel>> make_fast_conv_concat(const KernelSetup& s) {
  if (ops() == nullptr) return make_error(s.label, ": ConvConcat needs the fast CPU path");
  const int64_t n = s.node.attrs.get_int("convs", 0);
  if (n < 1 || n > fused::kConvConcatMembers || s.node.inputs.size() != kPer * static_cast<std::size_t>(n) ||
      s.node.outputs.size() != 1 || s.inputs.size() != s.node.inputs.size() ||
      s.constants.size() != s.node.inputs.size())
    return make_error(s.label, ": ConvConcat takes 1 to ", fused::kConvConcatMembers, " convs of ", kPer,
                      " inputs (x, weights, bias, residual) and gives 1 output");
  std::vector<std::unique_ptr<Kernel>> convs;
  for (int64_t i = 0; i < n; ++i) {
    const std::string p = fused::conv_prefix(static_cast<std::size_t>(i));
    Node c;
    c.op = "Conv";
    const auto at = static_cast<std::size_t>(kPer * i);
    c.inputs.assign(s.node.inputs.begin() + at, s.node.inputs.begin() + at + kPer);
    c.outputs = {kNoValue};
    for (const auto& [name, a] : s.node.attrs.items())
      if (name.rfind(p, 0) == 0) c.attrs.set(name.substr(p.size()), a);
    const std::string label = s.label + " conv " + std::to_string(i);
    const KernelSetup sub{c, label, s.inputs.subspan(at, kPer), s.constants.subspan(at, kPer), s.opset};
    auto k = make_fast_conv(sub);
    if (!k) return k.error();
    if (!*k) return make_error(label, ": the fast Conv declines it");
    const auto* conv = dynamic_cast<const NhwcConvKernel*>(k->get());
    if (conv == nullptr || !conv->can_run_into())
      return make_error(label, ": not a convolution the fast path can write into a Concat");
    s.float_inputs |= sub.float_inputs << at;
    convs.push_back(std::move(*k));
  }
  return std::unique_ptr<Kernel>(std::make_unique<ConvConcat>(std::move(convs)));
}

}  // namespace weave::fast
