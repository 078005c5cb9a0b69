// BitShift.
#include <cstdint>
#include <string>

#include "core/kernels/ref/elementwise.h"
#include "core/kernels/ref/register.h"
#include "core/kernels/registry.h"

namespace weave {
namespace {

using kern::broadcast_binary;
using kern::infer_two;
using kern::make_kernel;

// BitShift on unsigned integers; shifting by the bit width or more gives 0.
class BitShiftKernel final : public Kernel {
 public:
  explicit BitShiftKernel(bool left) : left_(left) {}
  Status infer(ShapeContext& ctx) const override {
    return infer_two(ctx, "one unsigned integer type",
                     [](DType a, DType b) { return a == b && kern::in_set<kern::kUnsigned>(a); });
  }
  void run(const RunContext& ctx) const override {
    kern::dispatch_dtype<kern::kUnsigned>(ctx.inputs[0].dtype, [&](auto tag) {
      using T = kern::storage_t<decltype(tag)::value>;
      const bool left = left_;
      auto f = [left](T a, T b) -> T {
        if (b >= sizeof(T) * 8) return T(0);
        using U = decltype(a + 0u);  // at least unsigned int: no signed promotion
        return static_cast<T>(left ? static_cast<U>(a) << b : static_cast<U>(a) >> b);
      };
      broadcast_binary(ctx.inputs[0].as<T>(), ctx.inputs[0].dims, ctx.inputs[1].as<T>(), ctx.inputs[1].dims,
                       ctx.outputs[0].as<T>(), ctx.outputs[0].dims, f, ctx.parallel);
    });
  }

 private:
  bool left_;
};

Expected<std::unique_ptr<Kernel>> make_bit_shift(const KernelSetup& s) {
  const std::string d = s.node.attrs.get_string("direction");
  if (d != "LEFT" && d != "RIGHT")
    return make_error("BitShift direction must be LEFT or RIGHT, got '", d, "'");
  return make_kernel<BitShiftKernel>(d == "LEFT");
}

}  // namespace

void register_bit_shift(KernelRegistry& r) {
  r.add("BitShift", &make_bit_shift);
}

}  // namespace weave
