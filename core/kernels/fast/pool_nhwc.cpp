// Fast MaxPool / AveragePool / GlobalAveragePool / GlobalMaxPool over NHWC data (2-D windows),
// vectorized over channels.
#include <algorithm>

#include "core/kernels/fast/fast_ops.h"
#include "core/kernels/fast/nhwc.h"
#include "core/kernels/kernel_util.h"
#include "core/kernels/spatial.h"

namespace weave::fast {
namespace {

class FastPool final : public Kernel {
 public:
  FastPool(const Ops& ops, WindowAttrs a, bool global, bool is_max, bool include_pad)
      : ops_(ops), a_(std::move(a)), global_(global), max_(is_max), include_pad_(include_pad) {}

  Status infer(ShapeContext& ctx) const override {
    const Dims& x = ctx.inputs[0].dims;
    if (x.rank() != 4)
      return make_error(ctx.label, ": NHWC input ", kern::dims_bracketed(x), " must have rank 4");
    // Everything of the pool's arguments but the tensors, for run().
    PoolArgs p;
    p.N = x[0], p.IH = x[1], p.IW = x[2], p.C = x[3];
    p.max = max_;
    p.count_include_pad = include_pad_;
    if (global_) {
      if (max_ && x[1] * x[2] == 0)
        return make_error(ctx.label, ": GlobalMaxPool of empty input ", kern::dims_bracketed(x));
      ctx.outputs[0].dims = Dims{x[0], 1, 1, x[3]};
      p.KH = p.IH, p.KW = p.IW;
    } else {
      auto geo = geometry(x, ctx.label);
      if (!geo) return geo.error();
      ctx.outputs[0].dims = Dims{x[0], geo->out[0], geo->out[1], x[3]};
      p.OH = geo->out[0], p.OW = geo->out[1];
      p.KH = geo->kernel[0], p.KW = geo->kernel[1], p.SH = geo->stride[0], p.SW = geo->stride[1];
      p.DH = geo->dilation[0], p.DW = geo->dilation[1];
      p.PT = geo->pad_begin[0], p.PL = geo->pad_begin[1], p.PB = geo->pad_end[0], p.PR = geo->pad_end[1];
    }
    ctx.outputs[0].dtype = DType::float32;
    ctx.workspace = 0;
    ctx.keep(p);
    return {};
  }

  void run(const RunContext& ctx) const override {
    PoolArgs p = ctx.kept<PoolArgs>();
    p.x = ctx.inputs[0].as<float>();
    p.y = kern::out_f32(ctx, 0);
    ops_.pool(p, ctx.parallel);
  }

 private:
  Expected<WindowGeometry> geometry(const Dims& x, const std::string& label) const {
    const int64_t in[2] = {x[1], x[2]};
    return forward_geometry(a_, in, a_.kernel, label);
  }

  const Ops& ops_;
  WindowAttrs a_;
  bool global_, max_, include_pad_;
};

}  // namespace

bool pool_nhwc_supported(const Node& n, const Value* x) {
  if (x == nullptr || x->dtype != DType::float32 || !x->rank_known || x->shape.size() != 4) return false;
  if (n.inputs.size() != 1) return false;
  if (n.op == "GlobalAveragePool" || n.op == "GlobalMaxPool") return n.outputs.size() == 1;
  if (n.op != "MaxPool" && n.op != "AveragePool") return false;
  if (n.outputs.size() > 1 && n.outputs[1] != kNoValue) return false;  // MaxPool indices
  if (n.attrs.get_int("storage_order", 0) != 0) return false;
  const auto k = n.attrs.get_ints("kernel_shape");
  return k.size() == 2;
}

Expected<std::unique_ptr<Kernel>> make_fast_pool(const KernelSetup& s) {
  const Ops* ops = fast::ops();
  if (ops == nullptr || s.node.attrs.get_string("weave_layout") != "NHWC" ||
      !pool_nhwc_supported(s.node, kern::input_info(s, 0)))
    return std::unique_ptr<Kernel>();
  const bool global = s.node.op == "GlobalAveragePool" || s.node.op == "GlobalMaxPool";
  const bool is_max = s.node.op == "MaxPool" || s.node.op == "GlobalMaxPool";
  WindowAttrs a;
  if (!global) {
    auto pa = parse_window_attrs(s.node.attrs, s.label);
    if (!pa) return pa.error();
    a = std::move(*pa);
    if (!is_max && !a.dilations.empty() &&
        std::any_of(a.dilations.begin(), a.dilations.end(), [](int64_t d) { return d != 1; }) && s.opset < 19)
      return make_error(s.label, ": AveragePool dilations need opset >= 19");
  }
  const bool include_pad = s.node.attrs.get_int("count_include_pad", 0) != 0;
  return std::unique_ptr<Kernel>(std::make_unique<FastPool>(*ops, std::move(a), global, is_max, include_pad));
}

}  // namespace weave::fast
