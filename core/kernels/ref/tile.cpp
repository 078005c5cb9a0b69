// Tile.
#include "core/kernels/kernel_util.h"
#include "core/kernels/ref/register.h"
#include "core/kernels/registry.h"

namespace weave {
namespace {

using kern::dims_str;
using kern::has_input;
using kern::known_ints;
using kern::make_kernel;
using kern::need_input;

using Factory = Expected<std::unique_ptr<Kernel>>;

class TileKernel final : public Kernel {
 public:
  [[nodiscard]] uint32_t value_inputs() const override { return 1u << 1; }  // repeats
  Status infer(ShapeContext& ctx) const override {
    WEAVE_TRY(need_input(ctx, 0, "data"));
    if (!has_input(ctx.inputs, 1)) return make_error(ctx.label, ": Tile needs the repeats input");
    auto rep = known_ints(ctx, 1, "repeats", "Tile");
    if (!rep) return rep.error();
    const Dims& in = ctx.inputs[0].dims;
    if (static_cast<int>(rep->size()) != in.rank())
      return make_error(ctx.label, ": repeats ", shape_str(*rep), " does not match the rank of ",
                        dims_str(in));
    Dims out = in;
    for (int i = 0; i < in.rank(); ++i) {
      if ((*rep)[i] < 0) return make_error(ctx.label, ": negative repeat ", (*rep)[i]);
      if (in[i] > 0 && (*rep)[i] > kern::kMaxElements / in[i])
        return make_error(ctx.label, ": repeats ", shape_str(*rep), " are too large");
      out[i] = in[i] * (*rep)[i];
    }
    if (!kern::size_ok(out.span()))
      return make_error(ctx.label, ": repeats ", shape_str(*rep), " are too large");
    ctx.outputs[0].dtype = ctx.inputs[0].dtype;
    ctx.outputs[0].dims = out;
    return {};
  }
  void run(const RunContext& ctx) const override {
    const ConstTensorView& in = ctx.inputs[0];
    const TensorView& out = ctx.outputs[0];
    if (out.numel() == 0) return;
    // Output axis i of size rep*d is viewed as [rep, d] with input strides [0, stride].
    const Dims st = strides_of(in.dims);
    kern::Plan p;
    p.n = 1;
    p.rank = 2 * in.dims.rank();
    for (int i = 0; i < in.dims.rank(); ++i) {
      p.dims[2 * i] = out.dims[i] / in.dims[i];
      p.strides[0][2 * i] = 0;
      p.dims[2 * i + 1] = in.dims[i];
      p.strides[0][2 * i + 1] = st[i];
    }
    p.coalesce();
    kern::strided_copy(p, static_cast<const std::byte*>(in.data), 0, static_cast<std::byte*>(out.data),
                       dtype_size(in.dtype), out.numel(), ctx.parallel);
  }
};

}  // namespace

void register_tile(KernelRegistry& r) {
  r.add("Tile", [](const KernelSetup&) -> Factory { return make_kernel<TileKernel>(); });
}

}  // namespace weave
