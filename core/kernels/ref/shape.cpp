// Shape: the dims of its input (between start and end) as int64.
#include <algorithm>
#include <limits>
#include <utility>

#include "core/kernels/kernel_util.h"
#include "core/kernels/ref/register.h"
#include "core/kernels/registry.h"

namespace weave {
namespace {

using kern::has_input;
using kern::make_kernel;

using Factory = Expected<std::unique_ptr<Kernel>>;

class ShapeKernel final : public Kernel {
 public:
  ShapeKernel(int64_t start, int64_t end) : start_(start), end_(end) {}
  Status infer(ShapeContext& ctx) const override {
    if (!has_input(ctx.inputs, 0)) return make_error(ctx.label, ": input 0 is missing");
    auto [b, e] = range(ctx.inputs[0].dims.rank());
    ctx.outputs[0].dtype = DType::int64;
    ctx.outputs[0].dims = Dims{e - b};
    return {};
  }
  void run(const RunContext& ctx) const override {
    const Dims& d = ctx.inputs[0].dims;
    auto [b, e] = range(d.rank());
    int64_t* o = ctx.outputs[0].as<int64_t>();
    for (int64_t i = b; i < e; ++i) o[i - b] = d[static_cast<int>(i)];
  }

 private:
  [[nodiscard]] std::pair<int64_t, int64_t> range(int r) const {
    auto clampi = [r](int64_t v) { return std::clamp<int64_t>(v < 0 ? v + r : v, 0, r); };
    const int64_t b = clampi(start_), e = clampi(end_);
    return {b, std::max(b, e)};
  }
  int64_t start_, end_;
};

}  // namespace

void register_shape(KernelRegistry& r) {
  r.add("Shape", [](const KernelSetup& s) -> Factory {
    return make_kernel<ShapeKernel>(s.node.attrs.get_int("start", 0),
                                    s.node.attrs.get_int("end", std::numeric_limits<int64_t>::max()));
  });
}

}  // namespace weave
