// Squeeze and Unsqueeze (one kernel, the reshape.h kind).
#include <array>
#include <vector>

#include "core/kernels/ref/register.h"
#include "core/kernels/ref/reshape.h"
#include "core/kernels/registry.h"

namespace weave {
namespace {

using kern::dims_str;
using kern::has_input;
using kern::known_ints;
using kern::make_kernel;
using kern::ReshapeLike;

using Factory = Expected<std::unique_ptr<Kernel>>;

// Squeeze / Unsqueeze: axes from attribute (opset < 13) or the optional int64 input 1.
class SqueezeKernel final : public ReshapeLike {
 public:
  [[nodiscard]] uint32_t value_inputs() const override { return 1u << 1; }  // axes
  SqueezeKernel(bool unsqueeze, bool axes_from_input, std::vector<int64_t> attr_axes, bool has_attr)
      : unsqueeze_(unsqueeze),
        from_input_(axes_from_input),
        attr_axes_(std::move(attr_axes)),
        has_attr_(has_attr) {}

 protected:
  Expected<Dims> out_dims(const ShapeContext& ctx) const override {
    const char* op = unsqueeze_ ? "Unsqueeze" : "Squeeze";
    std::vector<int64_t> axes = attr_axes_;
    bool given = has_attr_;
    if (from_input_ && has_input(ctx.inputs, 1)) {
      auto a = known_ints(ctx, 1, "axes", op);
      if (!a) return a.error();
      axes = *a;
      given = true;
    }
    const Dims& in = ctx.inputs[0].dims;
    if (unsqueeze_) {
      if (!given) return make_error(ctx.label, ": Unsqueeze needs axes");
      const int r = in.rank() + static_cast<int>(axes.size());
      if (r > kMaxRank)
        return make_error(ctx.label, ": output rank ", r, " exceeds the maximum of ", kMaxRank);
      std::array<bool, kMaxRank> mark{};
      for (int64_t a : axes) {
        auto n = kern::normalize_axis(a, r, ctx.label);
        if (!n) return n.error();
        if (mark[*n]) return make_error(ctx.label, ": duplicate axis ", a);
        mark[*n] = true;
      }
      Dims out;
      int j = 0;
      for (int i = 0; i < r; ++i) out.push_back(mark[i] ? 1 : in[j++]);
      return out;
    }
    std::array<bool, kMaxRank> mark{};
    if (!given || axes.empty()) {
      for (int i = 0; i < in.rank(); ++i) mark[i] = in[i] == 1;
    } else {
      for (int64_t a : axes) {
        auto n = kern::normalize_axis(a, in.rank(), ctx.label);
        if (!n) return n.error();
        if (in[*n] != 1)
          return make_error(ctx.label, ": cannot squeeze axis ", a, " of size ", in[*n], " in shape ",
                            dims_str(in));
        mark[*n] = true;
      }
    }
    Dims out;
    for (int i = 0; i < in.rank(); ++i)
      if (!mark[i]) out.push_back(in[i]);
    return out;
  }

 private:
  bool unsqueeze_, from_input_;
  std::vector<int64_t> attr_axes_;
  bool has_attr_;
};

Factory make_squeeze(const KernelSetup& s, bool unsqueeze) {
  // The axes attribute (opset < 13) and the axes input (opset >= 13) are both accepted; the
  // input wins when given.
  return make_kernel<SqueezeKernel>(unsqueeze, true, s.node.attrs.get_ints("axes"), s.node.attrs.has("axes"));
}

}  // namespace

void register_squeeze(KernelRegistry& r) {
  r.add("Squeeze", [](const KernelSetup& s) { return make_squeeze(s, false); });
  r.add("Unsqueeze", [](const KernelSetup& s) { return make_squeeze(s, true); });
}

}  // namespace weave
