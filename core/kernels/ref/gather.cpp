// Gather, GatherElements and GatherND.
//
// Gather and GatherElements read indices that are runtime data: run() wraps negative indices
// once and then clamps them into [0, dim) so a hostile index can never read out of bounds; when
// the gathered axis is empty the output is zero-filled. GatherND wraps each index once and gives
// zeros for a slice whose index is still outside its axis.
#include <algorithm>
#include <cstring>
#include <vector>

#include "core/kernels/kernel_util.h"
#include "core/kernels/ref/register.h"
#include "core/kernels/registry.h"

namespace weave {
namespace {

using kern::dims_str;
using kern::make_kernel;
using kern::need;
using kern::need_input;
using kern::need_int;
using kern::wrap_index;

using Factory = Expected<std::unique_ptr<Kernel>>;

// Checks data and indices of Gather/GatherElements and returns the normalised axis.
Expected<int> gather_axis(const ShapeContext& ctx, int64_t axis) {
  WEAVE_TRY(need_input(ctx, 0, "data"));
  WEAVE_TRY(need_input(ctx, 1, "indices"));
  if (ctx.inputs[1].dtype != DType::int64 && ctx.inputs[1].dtype != DType::int32)
    return make_error(ctx.label, ": indices must be int64 or int32, got ", dtype_name(ctx.inputs[1].dtype));
  return kern::normalize_axis(axis, ctx.inputs[0].dims.rank(), ctx.label);
}

class GatherKernel final : public Kernel {
 public:
  // `expect`: the data dims the layout pass assumed when it made this Gather of a channel
  // shuffle ("weave_expect_dims"); other dims are an error, not a shuffle of the wrong channels.
  GatherKernel(int64_t axis, std::vector<int64_t> expect) : axis_(axis), expect_(std::move(expect)) {}
  Status infer(ShapeContext& ctx) const override {
    auto a = gather_axis(ctx, axis_);
    if (!a) return a.error();
    const Dims& d = ctx.inputs[0].dims;
    if (!expect_.empty() && !(d == Dims(std::span<const int64_t>(expect_))))
      return make_error(ctx.label, ": the channel shuffle was laid out for input ", shape_str(expect_),
                        " (NHWC), got ", dims_str(d));
    const Dims& idx = ctx.inputs[1].dims;
    if (d.rank() - 1 + idx.rank() > kMaxRank)
      return make_error(ctx.label, ": output rank exceeds the maximum of ", kMaxRank, " (data ", dims_str(d),
                        ", indices ", dims_str(idx), ")");
    Dims out;
    for (int i = 0; i < *a; ++i) out.push_back(d[i]);
    for (int i = 0; i < idx.rank(); ++i) out.push_back(idx[i]);
    for (int i = *a + 1; i < d.rank(); ++i) out.push_back(d[i]);
    ctx.outputs[0].dtype = ctx.inputs[0].dtype;
    ctx.outputs[0].dims = out;
    return {};
  }
  void run(const RunContext& ctx) const override {
    const ConstTensorView& data = ctx.inputs[0];
    const ConstTensorView& idx = ctx.inputs[1];
    const auto [a, outer, dim, inner] =
        kern::around_axis(data.dims, axis_, static_cast<int64_t>(dtype_size(data.dtype)));
    const int64_t k = idx.numel();
    const auto* src = static_cast<const std::byte*>(data.data);
    auto* dst = static_cast<std::byte*>(ctx.outputs[0].data);
    if (ctx.outputs[0].numel() == 0) return;
    if (dim == 0) {
      std::memset(dst, 0, ctx.outputs[0].bytes());
      return;
    }
    if (inner == 4) {
      // One 4-byte element per index (a channel permutation of NHWC data, the layout pass's
      // form of a channel shuffle): element copies in a tight loop per outer row.
      auto rows = [&](const auto* ip) {
        const auto* s = reinterpret_cast<const uint32_t*>(src);
        auto* d = reinterpret_cast<uint32_t*>(dst);
        ctx.parallel.for_range(outer, std::max<int64_t>(1, 4096 / k), [&](int64_t b, int64_t e) {
          for (int64_t o = b; o < e; ++o)
            for (int64_t j = 0; j < k; ++j)
              d[o * k + j] = s[o * dim + kern::clamp_index(static_cast<int64_t>(ip[j]), dim)];
        });
      };
      if (idx.dtype == DType::int64)
        rows(idx.as<int64_t>());
      else
        rows(idx.as<int32_t>());
      return;
    }
    ctx.parallel.for_range(outer * k, std::max<int64_t>(1, 4096 / inner), [&](int64_t b, int64_t e) {
      for (int64_t t = b; t < e; ++t) {
        const int64_t o = t / k, j = kern::clamp_index(kern::int_at(idx, t % k), dim);
        std::memcpy(dst + t * inner, src + (o * dim + j) * inner, static_cast<std::size_t>(inner));
      }
    });
  }

 private:
  int64_t axis_;
  std::vector<int64_t> expect_;
};

class GatherElementsKernel final : public Kernel {
 public:
  explicit GatherElementsKernel(int64_t axis) : axis_(axis) {}
  Status infer(ShapeContext& ctx) const override {
    auto a = gather_axis(ctx, axis_);
    if (!a) return a.error();
    const Dims& d = ctx.inputs[0].dims;
    const Dims& idx = ctx.inputs[1].dims;
    bool ok = idx.rank() == d.rank();
    for (int i = 0; ok && i < d.rank(); ++i) ok = i == *a || idx[i] <= d[i];
    if (!ok)
      return make_error(ctx.label, ": indices shape ", dims_str(idx), " does not fit data shape ",
                        dims_str(d));
    ctx.outputs[0].dtype = ctx.inputs[0].dtype;
    ctx.outputs[0].dims = idx;
    return {};
  }
  void run(const RunContext& ctx) const override {
    (void)kern::dispatch_bytes(dtype_size(ctx.inputs[0].dtype),
                               [&](auto tag) { run_typed<decltype(tag)>(ctx); });
  }

 private:
  template <class T>
  void run_typed(const RunContext& ctx) const {
    const ConstTensorView& data = ctx.inputs[0];
    const ConstTensorView& idx = ctx.inputs[1];
    const Dims& od = ctx.outputs[0].dims;
    const int r = od.rank();
    const int a = static_cast<int>(axis_ < 0 ? axis_ + r : axis_);
    const int64_t dim = data.dims[a];
    T* out = ctx.outputs[0].as<T>();
    if (dim == 0) {
      if (ctx.outputs[0].bytes() > 0) std::memset(out, 0, ctx.outputs[0].bytes());
      return;
    }
    const Dims ds = strides_of(data.dims);
    // Operand 0 walks data with the indexed axis zeroed; the index adds idx * ds[a].
    kern::Plan p;
    p.rank = r;
    p.n = 1;
    for (int i = 0; i < r; ++i) {
      p.dims[i] = od[i];
      p.strides[0][i] = i == a ? 0 : ds[i];
    }
    p.coalesce();
    const T* src = data.as<T>();
    ctx.parallel.for_range(od.numel(), kern::kGrain, [&](int64_t b, int64_t e) {
      kern::for_each_run<1>(p, b, e, {0}, [&](int64_t o, const std::array<int64_t, 1>& off, int64_t len) {
        const int64_t s = p.inner_stride(0);
        for (int64_t j = 0; j < len; ++j)
          out[o + j] = src[off[0] + j * s + kern::clamp_index(kern::int_at(idx, o + j), dim) * ds[a]];
      });
    });
  }

  int64_t axis_;
};

class GatherNDKernel final : public Kernel {
 public:
  explicit GatherNDKernel(int64_t batch_dims) : b_(batch_dims) {}
  Status infer(ShapeContext& ctx) const override {
    WEAVE_TRY(need(ctx, 2));
    WEAVE_TRY(need_int(ctx, 1, "indices"));
    const Dims& d = ctx.inputs[0].dims;
    const Dims& idx = ctx.inputs[1].dims;
    const int q = idx.rank();
    if (q < 1 || b_ < 0 || b_ >= q || b_ >= d.rank() || idx[q - 1] > d.rank() - b_)
      return make_error(ctx.label, ": indices ", dims_str(idx), " do not fit data ", dims_str(d),
                        " with batch_dims ", b_);
    for (int i = 0; i < b_; ++i)
      if (idx[i] != d[i])
        return make_error(ctx.label, ": batch dims of indices ", dims_str(idx), " and data ", dims_str(d),
                          " differ");
    Dims out;
    for (int i = 0; i < q - 1; ++i) out.push_back(idx[i]);
    const int k = static_cast<int>(idx[q - 1]);
    if (out.rank() + d.rank() - b_ - k > kMaxRank) return make_error(ctx.label, ": output rank too high");
    for (int i = static_cast<int>(b_) + k; i < d.rank(); ++i) out.push_back(d[i]);
    ctx.outputs[0].dtype = ctx.inputs[0].dtype;
    ctx.outputs[0].dims = out;
    return {};
  }
  void run(const RunContext& ctx) const override {
    const Dims& d = ctx.inputs[0].dims;
    const Dims& idx = ctx.inputs[1].dims;
    const int q = idx.rank();
    const int k = static_cast<int>(idx[q - 1]);
    const int b = static_cast<int>(b_);
    const Dims ds = strides_of(d);
    const std::size_t es = dtype_size(ctx.inputs[0].dtype);
    int64_t slice = 1, batch = 1;
    for (int i = b + k; i < d.rank(); ++i) slice *= d[i];
    for (int i = 0; i < b; ++i) batch *= d[i];
    const int64_t per_batch = batch > 0 && k > 0 ? idx.numel() / k / batch : 0;
    const auto* src = static_cast<const std::byte*>(ctx.inputs[0].data);
    auto* dst = static_cast<std::byte*>(ctx.outputs[0].data);
    const int64_t bytes = slice * static_cast<int64_t>(es);
    for (int64_t bi = 0; bi < batch; ++bi)
      for (int64_t t = 0; t < per_batch; ++t) {
        const int64_t row = bi * per_batch + t;
        int64_t off = bi * (b > 0 ? ds[b - 1] : 0);
        bool valid = true;
        for (int i = 0; i < k; ++i) {
          const int64_t j = wrap_index(kern::int_at(ctx.inputs[1], row * k + i), d[b + i]);
          valid = valid && j >= 0;
          off += j * ds[b + i];
        }
        if (valid)
          std::memcpy(dst + row * bytes, src + off * static_cast<int64_t>(es),
                      static_cast<std::size_t>(bytes));
        else
          std::memset(dst + row * bytes, 0, static_cast<std::size_t>(bytes));
      }
  }

 private:
  int64_t b_;
};

}  // namespace

void register_gather(KernelRegistry& r) {
  r.add("Gather", [](const KernelSetup& s) -> Factory {
    return make_kernel<GatherKernel>(s.node.attrs.get_int("axis", 0),
                                     s.node.attrs.get_ints("weave_expect_dims"));
  });
  r.add("GatherElements", [](const KernelSetup& s) -> Factory {
    return make_kernel<GatherElementsKernel>(s.node.attrs.get_int("axis", 0));
  });
  r.add("GatherND", [](const KernelSetup& s) -> Factory {
    return make_kernel<GatherNDKernel>(s.node.attrs.get_int("batch_dims", 0));
  });
}

}  // namespace weave
