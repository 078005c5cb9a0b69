// Dropout.
#include <cstdint>
#include <cstring>
#include <optional>
#include <random>
#include <span>

#include "core/kernels/kernel_util.h"
#include "core/kernels/ref/register.h"
#include "core/kernels/registry.h"

namespace weave {
namespace {

using kern::make_kernel;

// Dropout. Inference (training_mode absent or false, or ratio 0): y = x and the optional mask
// all true. Training mode with a ratio r in (0, 1) and a `seed` attribute drops deterministically
// like ONNX's reference: the mask is uniform(0, 1) >= r drawn from MT19937 seeded with `seed`
// (numpy's legacy generator, doubles of 53 bits), y = x * mask / (1 - r). Without a seed the
// dropping would be random: refused while planning. Ratio and mode are read while planning.
class DropoutKernel final : public Kernel {
 public:
  explicit DropoutKernel(std::optional<uint32_t> seed) : seed_(seed) {}
  [[nodiscard]] uint32_t value_inputs() const override { return 1u << 1 | 1u << 2; }
  Status infer(ShapeContext& ctx) const override {
    const auto& in = ctx.inputs;
    if (in.empty() || !in[0].present()) return make_error(ctx.label, ": input 0 is missing");
    const double r = ratio(in);
    if (r != 0.0) {
      if (!(r > 0.0 && r < 1.0)) return make_error(ctx.label, ": Dropout ratio ", r, " must be in [0, 1)");
      if (!seed_)
        return make_error(
            ctx.label, ": Dropout in training mode (ratio ", r,
            ") without a seed drops at random; give the seed attribute or run in inference mode");
      if (in[0].dtype != DType::float32 && in[0].dtype != DType::float64)
        return make_error(ctx.label, ": Dropout in training mode takes float32 or float64, got ",
                          dtype_name(in[0].dtype));
    }
    ctx.outputs[0].dtype = in[0].dtype;
    ctx.outputs[0].dims = in[0].dims;
    if (ctx.outputs.size() > 1) {
      ctx.outputs[1].dtype = DType::boolean;
      ctx.outputs[1].dims = in[0].dims;
    }
    return {};
  }
  void run(const RunContext& ctx) const override {
    const TensorView* mask = ctx.outputs.size() > 1 && ctx.outputs[1].present() ? &ctx.outputs[1] : nullptr;
    const double r = ratio(ctx.inputs);
    if (r == 0.0) {
      kern::copy_bytes(ctx.outputs[0].data, ctx.inputs[0].data, ctx.outputs[0].bytes());
      if (mask && mask->bytes() > 0) std::memset(mask->data, 1, mask->bytes());
      return;
    }
    std::mt19937 gen(*seed_);
    const double scale = 1.0 / (1.0 - r);
    const int64_t n = ctx.inputs[0].numel();
    for (int64_t i = 0; i < n; ++i) {
      const uint32_t a = gen() >> 5, b = gen() >> 6;
      const bool keep = (a * 67108864.0 + b) / 9007199254740992.0 >= r;
      if (mask) mask->as<uint8_t>()[i] = keep ? 1 : 0;
      if (ctx.inputs[0].dtype == DType::float64)
        ctx.outputs[0].as<double>()[i] = keep ? ctx.inputs[0].as<double>()[i] * scale : 0.0;
      else
        ctx.outputs[0].as<float>()[i] = keep ? ctx.inputs[0].as<float>()[i] * static_cast<float>(scale) : 0.f;
    }
  }

 private:
  // The drop ratio in effect: 0 unless training_mode is true.
  static double ratio(std::span<const ConstTensorView> in) {
    if (!kern::has_input(in, 2) || in[2].data == nullptr || in[2].numel() != 1 || *in[2].as<uint8_t>() == 0)
      return 0.0;
    double r = 0.5;
    if (kern::has_input(in, 1) && in[1].data != nullptr && in[1].numel() == 1)
      (void)kern::dispatch_dtype<kern::kFloats | kern::kHalf>(in[1].dtype, [&](auto tag) {
        constexpr DType D = decltype(tag)::value;
        const auto v = *in[1].as<kern::storage_t<D>>();
        if constexpr (D == DType::float16)
          r = kern::half_to_float(v);
        else
          r = static_cast<double>(v);
      });
    return r;
  }

  std::optional<uint32_t> seed_;
};

Expected<std::unique_ptr<Kernel>> make_dropout(const KernelSetup& s) {
  if (s.node.outputs.size() > 2) return make_error("Dropout has at most 2 outputs");
  std::optional<uint32_t> seed;
  if (s.node.attrs.has("seed")) {
    const int64_t v = s.node.attrs.get_int("seed", 0);
    if (v < 0 || v > int64_t{0xffffffff}) return make_error("Dropout seed ", v, " is out of range [0, 2^32)");
    seed = static_cast<uint32_t>(v);
  }
  return make_kernel<DropoutKernel>(seed);
}

}  // namespace

void register_dropout(KernelRegistry& r) {
  r.add("Dropout", &make_dropout);
}

}  // namespace weave
