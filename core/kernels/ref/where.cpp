// Where: X or Y per element, by a bool condition, all three broadcast.
#include <array>
#include <cstdint>

#include "core/kernels/kernel_util.h"
#include "core/kernels/ref/register.h"
#include "core/kernels/registry.h"

namespace weave {
namespace {

using kern::make_kernel;

class WhereKernel final : public Kernel {
 public:
  Status infer(ShapeContext& ctx) const override {
    const auto& in = ctx.inputs;
    if (in.size() != 3 || !in[0].present() || !in[1].present() || !in[2].present())
      return make_error(ctx.label, ": expects 3 inputs (condition, X, Y)");
    if (in[0].dtype != DType::boolean)
      return make_error(ctx.label, ": condition must be bool, got ", dtype_name(in[0].dtype));
    if (in[1].dtype != in[2].dtype)
      return make_error(ctx.label, ": X and Y dtypes differ (", dtype_name(in[1].dtype), " and ",
                        dtype_name(in[2].dtype), ")");
    const std::size_t es = dtype_size(in[1].dtype);
    if (es != 1 && es != 2 && es != 4 && es != 8)
      return make_error(ctx.label, ": dtype ", dtype_name(in[1].dtype), " is not supported");
    auto od = kern::broadcast_inputs(in, 0, 3, ctx.label);
    if (!od) return od.error();
    ctx.outputs[0].dtype = in[1].dtype;
    ctx.outputs[0].dims = *od;
    return {};
  }

  void run(const RunContext& ctx) const override {
    (void)kern::dispatch_bytes(dtype_size(ctx.inputs[1].dtype),
                               [&](auto tag) { run_typed<decltype(tag)>(ctx); });
  }

 private:
  template <class T>
  static void run_typed(const RunContext& ctx) {
    const auto& in = ctx.inputs;
    const TensorView& out = ctx.outputs[0];
    const kern::Plan p = kern::broadcast_plan(out.dims, {&in[0].dims, &in[1].dims, &in[2].dims});
    const uint8_t* c = in[0].as<uint8_t>();
    const T* x = in[1].as<T>();
    const T* y = in[2].as<T>();
    T* o = out.as<T>();
    const int64_t sc = p.inner_stride(0), sx = p.inner_stride(1), sy = p.inner_stride(2);
    ctx.parallel.for_range(out.numel(), kern::kGrain, [&](int64_t b, int64_t e) {
      kern::for_each_run<3>(p, b, e, {0, 0, 0},
                            [&](int64_t oo, const std::array<int64_t, 3>& off, int64_t len) {
                              const uint8_t* cc = c + off[0];
                              const T* xx = x + off[1];
                              const T* yy = y + off[2];
                              T* dst = o + oo;
                              for (int64_t j = 0; j < len; ++j) dst[j] = cc[j * sc] ? xx[j * sx] : yy[j * sy];
                            });
    });
  }
};

}  // namespace

void register_where(KernelRegistry& r) {
  r.add("Where", [](const KernelSetup&) { return make_kernel<WhereKernel>(); });
}

}  // namespace weave
