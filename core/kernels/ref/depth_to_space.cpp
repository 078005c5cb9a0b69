// DepthToSpace and SpaceToDepth (one kernel): a Transpose of a 6-D view of the input
// (transpose.h).
#include <array>
#include <string>

#include "core/kernels/kernel_util.h"
#include "core/kernels/ref/register.h"
#include "core/kernels/ref/transpose.h"
#include "core/kernels/registry.h"

namespace weave {
namespace {

using kern::dims_str;
using kern::make_kernel;
using kern::need_input;
using kern::permute_copy;

using Factory = Expected<std::unique_ptr<Kernel>>;

class DepthSpaceKernel final : public Kernel {
 public:
  DepthSpaceKernel(bool to_space, bool crd, int64_t bs) : to_space_(to_space), crd_(crd), bs_(bs) {}
  Status infer(ShapeContext& ctx) const override {
    WEAVE_TRY(need_input(ctx, 0, "data"));
    const Dims& d = ctx.inputs[0].dims;
    if (d.rank() != 4) return make_error(ctx.label, ": expects a 4-D input, got ", dims_str(d));
    const int64_t b2 = bs_ * bs_;
    Dims out = d;
    if (to_space_) {
      if (d[1] % b2 != 0)
        return make_error(ctx.label, ": channels of ", dims_str(d), " are not divisible by blocksize^2 ", b2);
      out = Dims{d[0], d[1] / b2, d[2] * bs_, d[3] * bs_};
    } else {
      if (d[2] % bs_ != 0 || d[3] % bs_ != 0)
        return make_error(ctx.label, ": spatial dims of ", dims_str(d), " are not divisible by blocksize ",
                          bs_);
      out = Dims{d[0], d[1] * b2, d[2] / bs_, d[3] / bs_};
    }
    ctx.outputs[0].dtype = ctx.inputs[0].dtype;
    ctx.outputs[0].dims = out;
    return {};
  }
  void run(const RunContext& ctx) const override {
    const ConstTensorView& in = ctx.inputs[0];
    const Dims& d = in.dims;
    const int64_t b = bs_;
    Dims v;
    std::array<int, 6> perm{};
    if (to_space_) {
      const int64_t c = d[1] / (b * b);
      if (crd_) {
        v = Dims{d[0], c, b, b, d[2], d[3]};
        perm = {0, 1, 4, 2, 5, 3};
      } else {
        v = Dims{d[0], b, b, c, d[2], d[3]};
        perm = {0, 3, 4, 1, 5, 2};
      }
    } else {
      v = Dims{d[0], d[1], d[2] / b, b, d[3] / b, b};
      perm = {0, 3, 5, 1, 2, 4};
    }
    permute_copy(static_cast<const std::byte*>(in.data), v, perm,
                 static_cast<std::byte*>(ctx.outputs[0].data), dtype_size(in.dtype), ctx.parallel);
  }

 private:
  bool to_space_, crd_;
  int64_t bs_;
};

template <bool to_space>
Factory make_depth_space(const KernelSetup& s) {
  const int64_t bs = s.node.attrs.get_int("blocksize", 0);
  if (bs <= 0 || bs > 4096) return make_error("blocksize must be positive, got ", bs);
  const std::string mode = s.node.attrs.get_string("mode", "DCR");
  if (mode != "DCR" && mode != "CRD") return make_error("mode '", mode, "' is not supported");
  return make_kernel<DepthSpaceKernel>(to_space, mode == "CRD", bs);
}

}  // namespace

void register_depth_to_space(KernelRegistry& r) {
  r.add("DepthToSpace", &make_depth_space<true>);
  r.add("SpaceToDepth", &make_depth_space<false>);
}

}  // namespace weave
