// Clip.
#include <limits>
#include <type_traits>

#include "core/kernels/ref/elementwise.h"
#include "core/kernels/ref/register.h"
#include "core/kernels/registry.h"

namespace weave {
namespace {

using kern::make_kernel;

// Clip bounds come from optional scalar inputs 1 and 2, which may be params or runtime values
// (run() reads them), or from the opset < 11 attributes min/max when a kernel is made for such
// an opset directly (the importer turns those attributes into inputs).
constexpr unsigned kClipTypes = kern::kFloats | kern::kHalf | kern::kSigned | kern::kUnsigned;

class ClipKernel final : public Kernel {
 public:
  ClipKernel(bool from_attrs, float lo, float hi) : from_attrs_(from_attrs), lo_(lo), hi_(hi) {}

  Status infer(ShapeContext& ctx) const override {
    const auto& in = ctx.inputs;
    if (in.empty() || !in[0].present()) return make_error(ctx.label, ": input 0 is missing");
    const DType t = in[0].dtype;
    if (from_attrs_ && t != DType::float32)
      return make_error(ctx.label, ": Clip with min/max attributes takes float32, got ", dtype_name(t));
    if (!kern::in_set<kClipTypes>(t))
      return make_error(ctx.label, ": dtype ", dtype_name(t), " is not supported");
    for (std::size_t i = 1; i < in.size() && i < 3; ++i) {
      if (!in[i].present()) continue;
      if (in[i].dtype != t)
        return make_error(ctx.label, ": ", i == 1 ? "min" : "max", " dtype ", dtype_name(in[i].dtype),
                          " differs from input dtype ", dtype_name(t));
      if (in[i].numel() != 1)
        return make_error(ctx.label, ": ", i == 1 ? "min" : "max", " must be a scalar, got shape ",
                          kern::dims_str(in[i].dims));
    }
    if (in.size() > 3) return make_error(ctx.label, ": expects at most 3 inputs");
    ctx.outputs[0].dtype = t;
    ctx.outputs[0].dims = in[0].dims;
    return {};
  }

  void run(const RunContext& ctx) const override {
    kern::dispatch_dtype<kClipTypes>(ctx.inputs[0].dtype,
                                     [&](auto tag) { run_typed<decltype(tag)::value>(ctx); });
  }

 private:
  template <DType D>
  void run_typed(const RunContext& ctx) const {
    using T = kern::storage_t<D>;
    using C = std::conditional_t<D == DType::float16, float, T>;  // compared as
    auto load = [](T v) -> C {
      if constexpr (D == DType::float16)
        return kern::half_to_float(v);
      else
        return v;
    };
    C lo = std::numeric_limits<C>::lowest(), hi = std::numeric_limits<C>::max();
    if (from_attrs_) {
      lo = static_cast<C>(lo_);
      hi = static_cast<C>(hi_);
    }
    if (kern::has_input(ctx.inputs, 1)) lo = load(*ctx.inputs[1].as<T>());
    if (kern::has_input(ctx.inputs, 2)) hi = load(*ctx.inputs[2].as<T>());
    const T* x = ctx.inputs[0].as<T>();
    T* y = ctx.outputs[0].as<T>();
    ctx.parallel.for_range(ctx.outputs[0].numel(), kern::kGrain, [&](int64_t b, int64_t e) {
      // ONNX: min is applied first, then max; a min above max yields max everywhere.
      for (int64_t i = b; i < e; ++i) {
        const C xv = load(x[i]);
        if (xv >= lo && xv <= hi) {
          y[i] = x[i];
          continue;
        }
        const C v = xv < lo ? lo : xv;
        const C r = v > hi ? hi : v;
        if constexpr (D == DType::float16)
          y[i] = kern::float_to_half(r);
        else
          y[i] = r;
      }
    });
  }

  bool from_attrs_;
  float lo_, hi_;
};

Expected<std::unique_ptr<Kernel>> make_clip(const KernelSetup& s) {
  if (s.opset < 11)
    return make_kernel<ClipKernel>(true, s.node.attrs.get_float("min", std::numeric_limits<float>::lowest()),
                                   s.node.attrs.get_float("max", std::numeric_limits<float>::max()));
  return make_kernel<ClipKernel>(false, 0.f, 0.f);
}

}  // namespace

bool kern::is_clip_kernel(const Kernel& k) {
  return dynamic_cast<const ClipKernel*>(&k) != nullptr;
}

void register_clip(KernelRegistry& r) {
  r.add("Clip", &make_clip);
}

}  // namespace weave
