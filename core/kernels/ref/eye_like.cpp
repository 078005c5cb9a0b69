// EyeLike: a 2-D tensor with ones on one diagonal.
#include <cstring>

#include "core/kernels/kernel_util.h"
#include "core/kernels/ref/register.h"
#include "core/kernels/registry.h"

namespace weave {
namespace {

using kern::dims_str;
using kern::make_kernel;
using kern::need;

using Made = Expected<std::unique_ptr<Kernel>>;

// Writes the value 1 (or 0) of dtype `t` at `p`.
void write_one(void* p, DType t, bool one) {
  (void)kern::dispatch_dtype<kern::kAllNumeric | kern::kBool>(t, [&](auto tag) {
    constexpr DType D = decltype(tag)::value;
    kern::storage_t<D> v{};
    if constexpr (D == DType::float16)
      v = kern::float_to_half(one ? 1.f : 0.f);
    else
      v = static_cast<kern::storage_t<D>>(one ? 1 : 0);
    std::memcpy(p, &v, sizeof v);
  });
}

class EyeLikeKernel final : public Kernel {
 public:
  EyeLikeKernel(DType dtype, int64_t k) : dtype_(dtype), k_(k) {}
  Status infer(ShapeContext& ctx) const override {
    WEAVE_TRY(need(ctx, 1));
    if (ctx.inputs[0].dims.rank() != 2)
      return make_error(ctx.label, ": input must be 2-D, got ", dims_str(ctx.inputs[0].dims));
    const DType t = dtype_ == DType::undefined ? ctx.inputs[0].dtype : dtype_;
    if (!kern::in_set<kern::kAllNumeric | kern::kBool>(t))
      return make_error(ctx.label, ": dtype ", dtype_name(t), " is not supported");
    ctx.outputs[0].dtype = t;
    ctx.outputs[0].dims = ctx.inputs[0].dims;
    return {};
  }
  void run(const RunContext& ctx) const override {
    const TensorView& out = ctx.outputs[0];
    const int64_t n = out.dims[0], m = out.dims[1];
    const std::size_t es = dtype_size(out.dtype);
    auto* dst = static_cast<std::byte*>(out.data);
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < m; ++j)
        write_one(dst + (i * m + j) * static_cast<int64_t>(es), out.dtype, j - i == k_);
  }

 private:
  DType dtype_;
  int64_t k_;
};

Made make_eye_like(const KernelSetup& s) {
  DType t = DType::undefined;
  if (s.node.attrs.has("dtype")) {
    const int64_t raw = s.node.attrs.get_int("dtype", 0);
    if (raw != static_cast<int32_t>(raw) || !dtype_valid(static_cast<int32_t>(raw)))
      return make_error("unsupported attribute dtype=", raw);
    t = static_cast<DType>(raw);
  }
  return make_kernel<EyeLikeKernel>(t, s.node.attrs.get_int("k", 0));
}

}  // namespace

void register_eye_like(KernelRegistry& r) {
  r.add("EyeLike", &make_eye_like);
}

}  // namespace weave
