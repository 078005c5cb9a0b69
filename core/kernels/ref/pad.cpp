// Pad: constant, reflect and edge modes.
#include <algorithm>
#include <array>
#include <cstdlib>
#include <cstring>
#include <span>
#include <vector>

#include "core/kernels/kernel_util.h"
#include "core/kernels/ref/register.h"
#include "core/kernels/registry.h"

namespace weave {
namespace {

using kern::dims_str;
using kern::fill_pattern;
using kern::has_input;
using kern::known_ints;
using kern::make_kernel;
using kern::need_input;

using Factory = Expected<std::unique_ptr<Kernel>>;

// ---------------------------------------------------------------- Pad

enum class PadMode { constant, reflect, edge };

struct PadParams {
  std::array<int64_t, kMaxRank> begin{};
};

// Source index for output index o along an axis of input size d; -1 = constant.
inline int64_t pad_map(int64_t o, int64_t pb, int64_t d, PadMode m) {
  int64_t i = o - pb;
  if (i >= 0 && i < d) return i;
  if (m == PadMode::constant || d == 0) return -1;
  if (m == PadMode::edge) return std::clamp<int64_t>(i, 0, d - 1);
  if (d == 1) return 0;
  const int64_t period = 2 * (d - 1);
  i %= period;
  if (i < 0) i += period;
  return i < d ? i : period - i;
}

class PadKernel final : public Kernel {
 public:
  [[nodiscard]] uint32_t value_inputs() const override { return 1u << 1 | 1u << 3; }  // pads, axes
  PadKernel(PadMode mode, bool from_attrs, std::vector<int64_t> pads, float value)
      : mode_(mode), from_attrs_(from_attrs), pads_(std::move(pads)), value_(value) {}

  Status infer(ShapeContext& ctx) const override {
    WEAVE_TRY(need_input(ctx, 0, "data"));
    const Dims& in = ctx.inputs[0].dims;
    std::array<int64_t, 2 * kMaxRank> pads{};
    std::vector<int64_t> raw = pads_, axes;
    if (!from_attrs_) {
      if (!has_input(ctx.inputs, 1)) return make_error(ctx.label, ": Pad needs the pads input");
      auto p = known_ints(ctx, 1, "pads", "Pad");
      if (!p) return p.error();
      raw = *p;
      if (has_input(ctx.inputs, 3)) {
        auto a = known_ints(ctx, 3, "axes", "Pad");
        if (!a) return a.error();
        axes = *a;
      }
      if (has_input(ctx.inputs, 2)) {
        const ConstTensorView& cv = ctx.inputs[2];
        if (cv.dtype != ctx.inputs[0].dtype || cv.numel() != 1)
          return make_error(ctx.label, ": constant_value must be one ", dtype_name(ctx.inputs[0].dtype),
                            " value");
      }
    } else if (ctx.inputs[0].dtype != DType::float32) {
      return make_error(ctx.label, ": Pad before opset 11 supports float32 only");
    }
    WEAVE_TRY(resolve(in, raw, axes, pads, ctx.label));
    Dims out = in;
    for (int i = 0; i < in.rank(); ++i) {
      out[i] = in[i] + pads[i] + pads[i + in.rank()];
      if (out[i] < 0) return make_error(ctx.label, ": pads crop more than dim ", i, " of ", dims_str(in));
      const bool grows = pads[i] > 0 || pads[i + in.rank()] > 0;
      if (mode_ != PadMode::constant && grows && in[i] == 0)
        return make_error(ctx.label, ": cannot ", mode_ == PadMode::edge ? "edge" : "reflect",
                          "-pad empty dim ", i);
      if (mode_ == PadMode::reflect && (pads[i] >= in[i] || pads[i + in.rank()] >= in[i]) && grows)
        return make_error(ctx.label, ": reflect pads of dim ", i, " must be smaller than its size ", in[i]);
    }
    if (!kern::size_ok(out.span()))
      return make_error(ctx.label, ": Pad output ", dims_str(out), " is too large");
    ctx.outputs[0].dtype = ctx.inputs[0].dtype;
    ctx.outputs[0].dims = out;
    ctx.keep(pads);
    return {};
  }

  void run(const RunContext& ctx) const override {
    const ConstTensorView& in = ctx.inputs[0];
    const TensorView& out = ctx.outputs[0];
    const int r = in.dims.rank();
    const int64_t es = static_cast<int64_t>(dtype_size(in.dtype));
    const auto& pads = ctx.kept<std::array<int64_t, 2 * kMaxRank>>();
    // The constant as raw bytes of the element type.
    std::array<std::byte, 16> cval{};
    if (from_attrs_) {
      std::memcpy(cval.data(), &value_, sizeof(float));
    } else if (has_input(ctx.inputs, 2)) {
      std::memcpy(cval.data(), ctx.inputs[2].data, static_cast<std::size_t>(es));
    }
    if (out.numel() == 0) return;
    if (r == 0) {
      std::memcpy(out.data, in.data, static_cast<std::size_t>(es));
      return;
    }
    const Dims ist = strides_of(in.dims);
    const int64_t cols = out.dims[r - 1], rows = out.numel() / cols;
    const int64_t d_last = in.dims[r - 1], pb_last = pads[r - 1];
    const auto* src = static_cast<const std::byte*>(in.data);
    auto* dst = static_cast<std::byte*>(out.data);
    ctx.parallel.for_range(rows, std::max<int64_t>(1, 4096 / cols), [&](int64_t b, int64_t e) {
      for (int64_t row = b; row < e; ++row) {
        std::byte* o = dst + row * cols * es;
        // Map the outer coordinates of this output row to an input row.
        int64_t rem = row, src_row = 0;
        bool constant_row = false;
        for (int i = r - 2; i >= 0; --i) {
          const int64_t c = rem % out.dims[i];
          rem /= out.dims[i];
          const int64_t si = pad_map(c, pads[i], in.dims[i], mode_);
          if (si < 0)
            constant_row = true;
          else
            src_row += si * ist[i];
        }
        if (constant_row || d_last == 0) {
          fill_pattern(o, cols, cval.data(), static_cast<std::size_t>(es));
          continue;
        }
        const std::byte* s = src + src_row * es;
        // Middle part: one contiguous copy.
        const int64_t m0 = std::clamp<int64_t>(pb_last, 0, cols),
                      m1 = std::clamp<int64_t>(pb_last + d_last, 0, cols);
        if (m1 > m0)
          std::memcpy(o + m0 * es, s + (m0 - pb_last) * es, static_cast<std::size_t>((m1 - m0) * es));
        auto edge = [&](int64_t j0, int64_t j1) {
          for (int64_t j = j0; j < j1; ++j) {
            const int64_t si = pad_map(j, pb_last, d_last, mode_);
            if (si < 0)
              std::memcpy(o + j * es, cval.data(), static_cast<std::size_t>(es));
            else
              std::memcpy(o + j * es, s + si * es, static_cast<std::size_t>(es));
          }
        };
        edge(0, m0);
        edge(std::max(m1, m0), cols);
      }
    });
  }

 private:
  // pads (2*len(axes) or 2*rank) -> per-axis [begins..., ends...] for all rank axes.
  static Status resolve(const Dims& in, std::span<const int64_t> raw, std::span<const int64_t> axes,
                        std::array<int64_t, 2 * kMaxRank>& pads, const std::string& label) {
    const int r = in.rank();
    const std::size_t n = axes.empty() ? static_cast<std::size_t>(r) : axes.size();
    if (raw.size() != 2 * n)
      return make_error(label, ": pads has ", raw.size(), " values, expected ", 2 * n, " for shape ",
                        dims_str(in));
    for (std::size_t k = 0; k < n && 2 * k + 1 <= raw.size(); ++k) {
      int64_t ax = axes.empty() ? static_cast<int64_t>(k) : axes[k];
      if (ax < 0) ax += r;
      if (ax < 0 || ax >= r)
        return make_error(label, ": pad axis ", axes[k], " is out of range for ", dims_str(in));
      const int64_t lim = int64_t{1} << 40;  // keeps sums far from overflow; sizes are checked later
      if (std::abs(raw[k]) > lim || std::abs(raw[k + n]) > lim)
        return make_error(label, ": pads are too large");
      pads[ax] = raw[k];
      pads[ax + r] = raw[k + n];
    }
    return {};
  }

  PadMode mode_;
  bool from_attrs_;
  std::vector<int64_t> pads_;
  float value_;
};

Factory make_pad(const KernelSetup& s) {
  const std::string mode = s.node.attrs.get_string("mode", "constant");
  PadMode m;
  if (mode == "constant")
    m = PadMode::constant;
  else if (mode == "reflect")
    m = PadMode::reflect;
  else if (mode == "edge")
    m = PadMode::edge;
  else
    return make_error("Pad mode '", mode, "' is not supported");
  if (s.opset < 11)
    return make_kernel<PadKernel>(m, true, s.node.attrs.get_ints("pads"),
                                  s.node.attrs.get_float("value", 0.f));
  return make_kernel<PadKernel>(m, false, std::vector<int64_t>{}, 0.f);
}

}  // namespace

void register_pad(KernelRegistry& r) {
  r.add("Pad", &make_pad);
}

}  // namespace weave
