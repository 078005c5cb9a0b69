// QuantizeLinear and DequantizeLinear (one kernel): per tensor or per channel along `axis`.
#include <cmath>

#include "core/kernels/ref/quantize.h"
#include "core/kernels/ref/register.h"
#include "core/kernels/registry.h"

namespace weave {
namespace {

using kern::check_qparams;
using kern::has_input;
using kern::make_kernel;
using kern::qget;
using kern::qput;
using kern::quantized;
using kern::scale_at;
using kern::zero_point;

using Made = Expected<std::unique_ptr<Kernel>>;

class QuantizeKernel final : public Kernel {
 public:
  QuantizeKernel(bool quantize, int64_t axis) : quantize_(quantize), axis_(axis) {}
  Status infer(ShapeContext& ctx) const override {
    const auto& in = ctx.inputs;
    if (in.size() < 2 || !in[0].present()) return make_error(ctx.label, ": expects x and a scale");
    const Dims& x = in[0].dims;
    int64_t channels = 1;
    if (has_input(in, 1) && in[1].numel() > 1) {
      auto a = kern::normalize_axis(axis_, x.rank(), ctx.label);
      if (!a) return a.error();
      channels = x[*a];
    }
    WEAVE_TRY(check_qparams(ctx, 1, 2, channels, quantize_ ? "y" : "x"));
    DType out = DType::float32;
    if (quantize_) {
      if (in[0].dtype != DType::float32 && in[0].dtype != DType::int32)
        return make_error(ctx.label, ": x must be float32 or int32, got ", dtype_name(in[0].dtype));
      out = has_input(in, 2) ? in[2].dtype : DType::uint8;
      if (!quantized(out))
        return make_error(ctx.label, ": zero point dtype ", dtype_name(out), " is not supported");
    } else {
      if (!quantized(in[0].dtype) && in[0].dtype != DType::int32)
        return make_error(ctx.label, ": x dtype ", dtype_name(in[0].dtype), " is not supported");
      if (has_input(in, 2) && in[2].dtype != in[0].dtype)
        return make_error(ctx.label, ": zero point dtype differs from x");
    }
    ctx.outputs[0].dtype = out;
    ctx.outputs[0].dims = x;
    return {};
  }
  void run(const RunContext& ctx) const override {
    const auto& in = ctx.inputs;
    const Dims& x = in[0].dims;
    const bool per_channel = in[1].numel() > 1;
    const auto v = per_channel ? kern::around_axis(x, axis_) : kern::AxisView{0, 1, 1, x.numel()};
    for (int64_t o = 0; o < v.outer; ++o)
      for (int64_t c = 0; c < v.dim; ++c) {
        const float s = scale_at(in[1], c);
        const int32_t zp = zero_point(in, 2, c);
        for (int64_t i = 0; i < v.inner; ++i) {
          const int64_t at = (o * v.dim + c) * v.inner + i;
          if (quantize_) {
            // Divided in float32, as ONNX's reference does (x / scale can land on .5 only there).
            const float xv = in[0].dtype == DType::float32 ? in[0].as<float>()[at]
                                                           : static_cast<float>(in[0].as<int32_t>()[at]);
            qput(ctx.outputs[0], at, std::nearbyint(xv / s) + zp);
          } else {
            ctx.outputs[0].as<float>()[at] =
                static_cast<float>(static_cast<double>(qget(in[0], at) - zp) * s);
          }
        }
      }
  }

 private:
  bool quantize_;
  int64_t axis_;
};

}  // namespace

void register_quantize_linear(KernelRegistry& r) {
  r.add("QuantizeLinear", [](const KernelSetup& s) -> Made {
    return make_kernel<QuantizeKernel>(true, s.node.attrs.get_int("axis", 1));
  });
  r.add("DequantizeLinear", [](const KernelSetup& s) -> Made {
    return make_kernel<QuantizeKernel>(false, s.node.attrs.get_int("axis", 1));
  });
}

}  // namespace weave
