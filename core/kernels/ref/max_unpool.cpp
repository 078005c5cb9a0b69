// MaxUnpool: MaxPool's Indices output turned back into a sparse tensor, any dtype.
#include <cstring>

#include "core/kernels/kernel_util.h"
#include "core/kernels/ref/register.h"
#include "core/kernels/registry.h"
#include "core/kernels/spatial.h"

namespace weave {
namespace {

// MaxUnpool: Y of zeros with Y.flat[I[i]] = X[i]. The indices address the default output,
// (in - 1) * stride + kernel - pads per spatial axis; an output_shape input (a value the planner
// reads) may make Y larger, and then each index keeps its coordinates (ONNX's reference). An
// index outside Y is skipped (hostile indices never write out of bounds).
class MaxUnpoolKernel final : public Kernel {
 public:
  explicit MaxUnpoolKernel(WindowAttrs a) : a_(std::move(a)) {}
  [[nodiscard]] uint32_t value_inputs() const override { return 1u << 2; }

  Status infer(ShapeContext& ctx) const override {
    const auto& in = ctx.inputs;
    const Dims& x = in[0].dims;
    if (x.rank() < 3 || x.rank() > 5)
      return make_error(ctx.label, ": input ", kern::dims_bracketed(x),
                        " must be N x C x (1 to 3 spatial dims)");
    if (!kern::has_input(in, 1) || in[1].dtype != DType::int64 || !(in[1].dims == x))
      return make_error(ctx.label, ": indices must be int64 of X's shape ", kern::dims_bracketed(x));
    const auto nd = static_cast<std::size_t>(x.rank() - 2);
    if (a_.kernel.size() != nd || (!a_.strides.empty() && a_.strides.size() != nd) ||
        (!a_.pads.empty() && a_.pads.size() != 2 * nd))
      return make_error(ctx.label, ": kernel_shape, strides and pads do not match input ",
                        kern::dims_bracketed(x));
    Dims out = default_dims(x);
    if (kern::has_input(in, 2) && in[2].numel() > 0) {
      const ConstTensorView& os = in[2];
      if (os.data == nullptr) return make_error(ctx.label, ": output_shape is only known at run time");
      if (os.dtype != DType::int64 || os.numel() != x.rank())
        return make_error(ctx.label, ": output_shape must be int64 with one value per dim of X");
      for (int i = 0; i < x.rank(); ++i) out[i] = os.as<int64_t>()[i];
      if (out[0] != x[0] || out[1] != x[1])
        return make_error(ctx.label, ": output_shape must keep X's batch and channels");
    }
    for (int i = 2; i < out.rank(); ++i)
      if (out[i] < 0 || out[i] > (int64_t{1} << 24))
        return make_error(ctx.label, ": output dims ", kern::dims_bracketed(out), " are out of range");
    ctx.outputs[0].dtype = in[0].dtype;
    ctx.outputs[0].dims = out;
    return {};
  }

  void run(const RunContext& ctx) const override {
    const TensorView& y = ctx.outputs[0];
    std::memset(y.data, 0, y.bytes());
    const Dims& od = y.dims;
    const Dims dd = default_dims(ctx.inputs[0].dims);
    const int64_t n = ctx.inputs[0].numel(), total = y.numel();
    const int64_t* idx = ctx.inputs[1].as<int64_t>();
    const std::size_t size = dtype_size(y.dtype);
    const auto* x = static_cast<const std::byte*>(ctx.inputs[0].data);
    auto* out = static_cast<std::byte*>(y.data);
    const int64_t dplane = shape_numel(dd.span().subspan(2)), oplane = shape_numel(od.span().subspan(2));
    const bool same = dd == od;
    for (int64_t i = 0; i < n; ++i) {
      int64_t at = idx[i];
      if (!same && dplane > 0) {  // the same coordinates in the larger output
        int64_t rem = at % dplane, flat = 0, stride = 1;
        for (int d = dd.rank() - 1; d >= 2 && at >= 0; --d) {
          const int64_t c = rem % dd[d];
          rem /= dd[d];
          if (c >= od[d]) at = -1;
          flat += c * stride;
          stride *= od[d];
        }
        if (at >= 0) at = at / dplane * oplane + flat;
      }
      if (at >= 0 && at < total)
        std::memcpy(out + static_cast<std::size_t>(at) * size, x + static_cast<std::size_t>(i) * size, size);
    }
  }

 private:
  // (in - 1) * stride + kernel - pads per spatial axis.
  [[nodiscard]] Dims default_dims(const Dims& x) const {
    Dims out = x;
    const auto nd = static_cast<std::size_t>(x.rank() - 2);
    for (std::size_t i = 0; i < nd && i < a_.kernel.size(); ++i) {
      const int64_t st = a_.strides.size() > i ? a_.strides[i] : 1;
      const int64_t pads = a_.pads.size() == 2 * nd ? a_.pads[i] + a_.pads[i + nd] : 0;
      out[static_cast<int>(i) + 2] = (x[static_cast<int>(i) + 2] - 1) * st + a_.kernel[i] - pads;
    }
    return out;
  }

  WindowAttrs a_;
};

Expected<std::unique_ptr<Kernel>> make_max_unpool(const KernelSetup& s) {
  WEAVE_TRY(kern::require_inputs(s, 2, 3));
  auto a = parse_window_attrs(s.node.attrs, s.label);
  if (!a) return a.error();
  if (a->kernel.empty()) return make_error(s.label, ": MaxUnpool needs kernel_shape");
  return std::unique_ptr<Kernel>(std::make_unique<MaxUnpoolKernel>(std::move(*a)));
}

}  // namespace

void register_max_unpool(KernelRegistry& r) {
  r.add("MaxUnpool", make_max_unpool);
}

}  // namespace weave
