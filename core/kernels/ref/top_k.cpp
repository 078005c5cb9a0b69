// TopK.
#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

#include "core/kernels/kernel_util.h"
#include "core/kernels/ref/register.h"
#include "core/kernels/registry.h"

namespace weave {
namespace {

using kern::dims_str;
using kern::has_input;
using kern::make_kernel;

using Factory = Expected<std::unique_ptr<Kernel>>;

// Values and int64 indices of the K largest (or smallest) elements along an axis, sorted, ties
// broken by the lower index. NaN orders above every number, so the comparison is a strict weak
// order for any input. K must be known at infer time.
class TopKKernel final : public Kernel {
 public:
  [[nodiscard]] uint32_t value_inputs() const override { return 1u << 1; }  // K
  // Slices are spread over at most this many chunks, each with its own index scratch.
  static constexpr int64_t kChunks = 8;

  TopKKernel(int64_t axis, bool largest) : axis_(axis), largest_(largest) {}

  Status infer(ShapeContext& ctx) const override {
    if (!has_input(ctx.inputs, 0) || !has_input(ctx.inputs, 1))
      return make_error(ctx.label, ": TopK needs X and K");
    const DType t = ctx.inputs[0].dtype;
    if (t != DType::float32 && t != DType::float64 && t != DType::int64 && t != DType::int32)
      return make_error(ctx.label, ": dtype ", dtype_name(t), " is not supported");
    if (ctx.outputs.size() != 2) return make_error(ctx.label, ": TopK has 2 outputs");
    auto k = kern::read_ints(ctx.inputs[1], ctx.label, "K");
    if (!k) return k.error();
    if (k->size() != 1) return make_error(ctx.label, ": K must hold one value");
    const Dims& in = ctx.inputs[0].dims;
    auto a = kern::normalize_axis(axis_, in.rank(), ctx.label);
    if (!a) return a.error();
    if ((*k)[0] < 0 || (*k)[0] > in[*a])
      return make_error(ctx.label, ": K ", (*k)[0], " is out of range for axis ", axis_, " of shape ",
                        dims_str(in));
    Dims out = in;
    out[*a] = (*k)[0];
    ctx.outputs[0].dtype = t;
    ctx.outputs[0].dims = out;
    ctx.outputs[1].dtype = DType::int64;
    ctx.outputs[1].dims = out;
    ctx.workspace = static_cast<std::size_t>(kChunks * in[*a]) * sizeof(int64_t);
    return {};
  }

  void run(const RunContext& ctx) const override {
    kern::dispatch_numeric(ctx.inputs[0].dtype, [&](auto tag) { run_typed<decltype(tag)>(ctx); });
  }

 private:
  template <class T>
  void run_typed(const RunContext& ctx) const {
    const ConstTensorView& in = ctx.inputs[0];
    const auto [a, outer, dim, inner] = kern::around_axis(in.dims, axis_);
    const int64_t k = ctx.outputs[0].dims[a];
    const int64_t slices = outer * inner;
    if (k == 0 || slices == 0) return;
    const T* x = in.as<T>();
    T* vals = ctx.outputs[0].as<T>();
    int64_t* idxs = ctx.outputs[1].as<int64_t>();
    auto* scratch = reinterpret_cast<int64_t*>(ctx.workspace.data());
    const int64_t per_chunk = (slices + kChunks - 1) / kChunks;
    const bool largest = largest_;
    ctx.parallel.for_range(kChunks, 1, [&](int64_t cb, int64_t ce) {
      for (int64_t c = cb; c < ce; ++c) {
        int64_t* order = scratch + c * dim;
        for (int64_t s = c * per_chunk; s < std::min(slices, (c + 1) * per_chunk); ++s) {
          const int64_t o = s / inner, i = s % inner;
          const T* p = x + o * dim * inner + i;
          auto before = [&](int64_t l, int64_t r) {
            const T vl = p[l * inner], vr = p[r * inner];
            if constexpr (std::is_floating_point_v<T>) {
              const bool nl = std::isnan(vl), nr = std::isnan(vr);
              if (nl || nr) return nl != nr ? (nl == largest) : l < r;
            }
            if (vl != vr) return largest ? vl > vr : vl < vr;
            return l < r;
          };
          for (int64_t j = 0; j < dim; ++j) order[j] = j;
          std::partial_sort(order, order + k, order + dim, before);
          for (int64_t j = 0; j < k; ++j) {
            vals[(o * k + j) * inner + i] = p[order[j] * inner];
            idxs[(o * k + j) * inner + i] = order[j];
          }
        }
      }
    });
  }

  int64_t axis_;
  bool largest_;
};

}  // namespace

void register_top_k(KernelRegistry& r) {
  r.add("TopK", [](const KernelSetup& s) -> Factory {
    return make_kernel<TopKKernel>(s.node.attrs.get_int("axis", -1), s.node.attrs.get_int("largest", 1) != 0);
  });
}

}  // namespace weave
