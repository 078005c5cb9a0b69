// The window functions HannWindow, HammingWindow and BlackmanWindow (opset 17; one kernel),
// float32 or float64 out. The window size is an input value that decides the output shape: the
// kernel lists it in value_inputs.
#include <cmath>
#include <numbers>

#include "core/kernels/kernel_util.h"
#include "core/kernels/ref/register.h"
#include "core/kernels/registry.h"

namespace weave {
namespace {

using kern::has_input;
using kern::make_kernel;
using kern::output_datatype;
using kern::scalar_int;
using kern::store;

using Made = Expected<std::unique_ptr<Kernel>>;

// w[n] = a0 - a1 cos(2 pi n / N) + a2 cos(4 pi n / N), N = size (periodic) or size - 1.
class WindowKernel final : public Kernel {
 public:
  WindowKernel(double a0, double a1, double a2, bool periodic, DType out)
      : a0_(a0), a1_(a1), a2_(a2), periodic_(periodic), out_(out) {}
  [[nodiscard]] uint32_t value_inputs() const override { return 1u << 0; }
  Status infer(ShapeContext& ctx) const override {
    if (!has_input(ctx.inputs, 0)) return make_error(ctx.label, ": needs the size input");
    auto n = scalar_int(ctx, 0, "size");
    if (!n) return n.error();
    if (*n < 0 || *n > kern::kMaxElements) return make_error(ctx.label, ": size ", *n, " is out of range");
    ctx.outputs[0].dtype = out_;
    ctx.outputs[0].dims = Dims{*n};
    return {};
  }
  void run(const RunContext& ctx) const override {
    const int64_t size = ctx.outputs[0].dims[0];
    const double N = static_cast<double>(periodic_ ? size : size - 1);
    for (int64_t n = 0; n < size; ++n) {
      const double x = N > 0 ? 2 * std::numbers::pi * static_cast<double>(n) / N : 0.0;
      store(ctx.outputs[0], n, a0_ - a1_ * std::cos(x) + a2_ * std::cos(2 * x));
    }
  }

 private:
  double a0_, a1_, a2_;
  bool periodic_;
  DType out_;
};

Made make_window(const KernelSetup& s, double a0, double a1, double a2) {
  auto t = output_datatype(s);
  if (!t) return t.error();
  return make_kernel<WindowKernel>(a0, a1, a2, s.node.attrs.get_int("periodic", 1) != 0, *t);
}

}  // namespace

void register_window(KernelRegistry& r) {
  r.add("HannWindow", [](const KernelSetup& s) { return make_window(s, 0.5, 0.5, 0.0); });
  r.add("HammingWindow", [](const KernelSetup& s) { return make_window(s, 25.0 / 46.0, 21.0 / 46.0, 0.0); });
  r.add("BlackmanWindow", [](const KernelSetup& s) { return make_window(s, 0.42, 0.5, 0.08); });
}

}  // namespace weave
