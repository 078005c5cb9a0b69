// Reference shape and data-movement kernels: Shape, Size, Reshape, Flatten, Squeeze, Unsqueeze,
// Transpose, Concat, Split, Slice, Gather, GatherElements, Expand, Tile, ConstantOfShape, Range,
// Pad, DepthToSpace, SpaceToDepth.
//
// Shape-like inputs (Reshape's shape, Slice's starts, Pad's pads...) must be known at infer time
// (params or shape-derived values); run() reads them again from its bound inputs, which hold the
// same values. Everything moves bytes, so most ops work for any dtype.
//
// Gather and GatherElements read indices that are runtime data: run() wraps negative indices
// once and then clamps them into [0, dim) so a hostile index can never read out of bounds; when
// the gathered axis is empty the output is zero-filled.
#include <limits>
#include <type_traits>

#include "core/kernels/kernel_util.h"
#include "core/kernels/registry.h"

namespace weave {
namespace {

using kern::dims_str;
using kern::has_input;
using kern::make_kernel;

using Factory = Expected<std::unique_ptr<Kernel>>;

Status need_input(const ShapeContext& ctx, std::size_t i, const char* what) {
  if (!has_input(ctx.inputs, i)) return make_error(ctx.label, ": input ", i, " (", what, ") is missing");
  if (dtype_size(ctx.inputs[i].dtype) == 0)
    return make_error(ctx.label, ": dtype ", dtype_name(ctx.inputs[i].dtype), " of ", what,
                      " is not supported");
  return {};
}

// Input i as a list of ints that must be known at infer time.
Expected<std::vector<int64_t>> known_ints(const ShapeContext& ctx, std::size_t i, const char* what,
                                          const char* op) {
  const ConstTensorView& v = ctx.inputs[i];
  if (v.data == nullptr && v.numel() > 0)
    return make_error(ctx.label, ": ", what, " of ", op, " is only known at run time; it must be a constant");
  return kern::read_ints(v, ctx.label, what);
}

void fill_pattern(std::byte* dst, int64_t count, const std::byte* value, std::size_t esize) {
  if (count <= 0) return;
  bool zero = true;
  for (std::size_t i = 0; i < esize; ++i) zero = zero && value[i] == std::byte{0};
  if (zero) {
    std::memset(dst, 0, static_cast<std::size_t>(count) * esize);
    return;
  }
  for (int64_t i = 0; i < count; ++i) std::memcpy(dst + i * static_cast<int64_t>(esize), value, esize);
}

// ---------------------------------------------------------------- Shape, Size

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

class SizeKernel final : public Kernel {
 public:
  Status infer(ShapeContext& ctx) const override {
    if (!has_input(ctx.inputs, 0)) return make_error(ctx.label, ": input 0 is missing");
    ctx.outputs[0].dtype = DType::int64;
    ctx.outputs[0].dims = Dims{};
    return {};
  }
  void run(const RunContext& ctx) const override { *ctx.outputs[0].as<int64_t>() = ctx.inputs[0].numel(); }
};

// ---------------------------------------------------------------- Reshape family (copies)

// Output holds the input's bytes under new dims; subclasses compute the dims.
class ReshapeLike : public Kernel {
 public:
  Status infer(ShapeContext& ctx) const final {
    WEAVE_TRY(need_input(ctx, 0, "data"));
    auto d = out_dims(ctx);
    if (!d) return d.error();
    if (d->numel() != ctx.inputs[0].numel())
      return make_error(ctx.label, ": cannot reshape ", dims_str(ctx.inputs[0].dims), " into ", dims_str(*d));
    ctx.outputs[0].dtype = ctx.inputs[0].dtype;
    ctx.outputs[0].dims = *d;
    return {};
  }
  void run(const RunContext& ctx) const final {
    kern::copy_bytes(ctx.outputs[0].data, ctx.inputs[0].data, ctx.outputs[0].bytes());
  }

 protected:
  [[nodiscard]] virtual Expected<Dims> out_dims(const ShapeContext& ctx) const = 0;
};

class ReshapeKernel final : public ReshapeLike {
 public:
  [[nodiscard]] uint32_t value_inputs() const override { return 1u << 1; }  // shape
  explicit ReshapeKernel(bool allowzero) : allowzero_(allowzero) {}

 protected:
  Expected<Dims> out_dims(const ShapeContext& ctx) const override {
    if (!has_input(ctx.inputs, 1)) return make_error(ctx.label, ": Reshape needs the shape input");
    if (ctx.inputs[1].data == nullptr && ctx.inputs[1].numel() > 0)
      return make_error(ctx.label, ": shape of Reshape is only known at run time; it must be a constant");
    auto shape = kern::read_ints(ctx.inputs[1], ctx.label, "shape");
    if (!shape) return shape.error();
    const Dims& in = ctx.inputs[0].dims;
    std::vector<int64_t> out = *shape;
    int infer_at = -1;
    int64_t known = 1;
    for (std::size_t i = 0; i < out.size(); ++i) {
      if (out[i] == 0 && !allowzero_) {
        if (i >= in.size())
          return make_error(ctx.label, ": shape ", shape_str(*shape), " copies dim ", i, " of ", dims_str(in),
                            " which does not exist");
        out[i] = in[static_cast<int>(i)];
      }
      if (out[i] == -1) {
        if (infer_at >= 0)
          return make_error(ctx.label, ": shape ", shape_str(*shape), " has more than one -1");
        infer_at = static_cast<int>(i);
        continue;
      }
      if (out[i] < 0) return make_error(ctx.label, ": invalid shape ", shape_str(*shape));
      if (out[i] > 0 && known > (int64_t{1} << 62) / out[i])
        return make_error(ctx.label, ": shape ", shape_str(*shape), " is too large");
      known *= out[i];
    }
    if (infer_at >= 0) {
      if (known == 0 || ctx.inputs[0].numel() % known != 0)
        return make_error(ctx.label, ": cannot reshape ", dims_str(in), " into ", shape_str(*shape));
      out[infer_at] = ctx.inputs[0].numel() / known;
    }
    return kern::to_dims(out, ctx.label);
  }

 private:
  bool allowzero_;
};

class FlattenKernel final : public ReshapeLike {
 public:
  explicit FlattenKernel(int64_t axis) : axis_(axis) {}

 protected:
  Expected<Dims> out_dims(const ShapeContext& ctx) const override {
    const Dims& in = ctx.inputs[0].dims;
    const int64_t a = axis_ < 0 ? axis_ + in.rank() : axis_;
    if (a < 0 || a > in.rank())
      return make_error(ctx.label, ": axis ", axis_, " is out of range for shape ", dims_str(in));
    // Checked: an empty input may have other dims whose product overflows (fuzz_onnx, UBSan).
    int64_t outer = 1, inner = 1;
    for (int i = 0; i < in.rank(); ++i)
      if (int64_t& side = i < a ? outer : inner; __builtin_mul_overflow(side, in[i], &side))
        return make_error(ctx.label, ": flattening ", dims_str(in), " at axis ", a, " overflows int64");
    return Dims{outer, inner};
  }

 private:
  int64_t axis_;
};

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

// ---------------------------------------------------------------- Transpose

// Interleaving of at most this many planes has its own loop in permute_copy.
constexpr int64_t kFewPlanes = 4;

// dst[i * C + c] = src[c * ld + i] for rows i in [b, e): C planes of 4-byte values interleaved.
template <int C>
void interleave_planes(const uint32_t* src, int64_t ld, int64_t b, int64_t e, uint32_t* dst) {
  for (int64_t i = b; i < e; ++i)
#pragma GCC unroll 4
    for (int c = 0; c < C; ++c) dst[i * C + c] = src[c * ld + i];
}

// Copies `in` (dims d, rank r) permuted by perm into contiguous `out`.
void permute_copy(const std::byte* in, const Dims& d, std::span<const int> perm, std::byte* out,
                  std::size_t esize, const Parallel& par) {
  const int r = d.rank();
  const Dims st = strides_of(d);
  kern::Plan p;
  p.rank = r;
  p.n = 1;
  for (int i = 0; i < r; ++i) {
    p.dims[i] = d[perm[i]];
    p.strides[0][i] = st[perm[i]];
  }
  p.coalesce();
  int64_t total = d.numel();
  if (total == 0) return;
  // A batch of 2-D transposes (e.g. NCHW <-> NHWC after coalescing): copy in square tiles so
  // both the reads and the writes stay within a few cache lines.
  if (p.rank >= 2 && p.strides[0][p.rank - 2] == 1 && p.strides[0][p.rank - 1] != 1 &&
      (esize == 1 || esize == 2 || esize == 4 || esize == 8)) {
    const int64_t rows = p.dims[p.rank - 2], cols = p.dims[p.rank - 1], ld = p.strides[0][p.rank - 1];
    if (cols <= kFewPlanes && esize == 4 && p.rank == 2) {
      // A few planes interleaved (an image's NCHW -> NHWC): one pass over the rows with the
      // plane count known at compile time reads `cols` streams and writes one, where the tiles
      // below spent their time on loop control around 3-element rows (squeezenet's 3x224x224
      // input: 0.18 ms).
      auto* dst = reinterpret_cast<uint32_t*>(out);
      const auto* src = reinterpret_cast<const uint32_t*>(in);
      par.for_range(rows, 4096, [&](int64_t b, int64_t e) {
        switch (cols) {
          case 1:
            interleave_planes<1>(src, ld, b, e, dst);
            break;
          case 2:
            interleave_planes<2>(src, ld, b, e, dst);
            break;
          case 3:
            interleave_planes<3>(src, ld, b, e, dst);
            break;
          default:
            interleave_planes<4>(src, ld, b, e, dst);
            break;
        }
      });
      return;
    }
    constexpr int64_t kTile = 32;
    const int64_t tiles_r = (rows + kTile - 1) / kTile, tiles_c = (cols + kTile - 1) / kTile;
    const int64_t batch = total / (rows * cols);
    kern::Plan outer = p;  // the batch axes only
    outer.rank = p.rank - 2;
    par.for_range(batch * tiles_r * tiles_c, 4, [&](int64_t b, int64_t e) {
      for (int64_t t = b; t < e; ++t) {
        const int64_t bi = t / (tiles_r * tiles_c), tr = (t / tiles_c) % tiles_r, tc = t % tiles_c;
        int64_t src0 = 0;
        if (outer.rank > 0) {
          int64_t rem = bi;
          for (int i = outer.rank - 1; i >= 0; --i) {
            src0 += (rem % outer.dims[i]) * outer.strides[0][i];
            rem /= outer.dims[i];
          }
        }
        const int64_t r0 = tr * kTile, r1 = std::min(rows, r0 + kTile);
        const int64_t c0 = tc * kTile, c1 = std::min(cols, c0 + kTile);
        auto tile = [&](auto tag) {
          using T = decltype(tag);
          T* dst = reinterpret_cast<T*>(out) + bi * rows * cols;
          const T* src = reinterpret_cast<const T*>(in) + src0;
          for (int64_t i = r0; i < r1; ++i)
            for (int64_t j = c0; j < c1; ++j) dst[i * cols + j] = src[i + j * ld];
        };
        (void)kern::dispatch_bytes(esize, tile);
      }
    });
    return;
  }
  kern::strided_copy(p, in, 0, out, esize, total, par);
}

class TransposeKernel final : public Kernel {
 public:
  explicit TransposeKernel(std::vector<int64_t> perm) : perm_(std::move(perm)) {}
  Status infer(ShapeContext& ctx) const override {
    WEAVE_TRY(need_input(ctx, 0, "data"));
    const Dims& in = ctx.inputs[0].dims;
    std::array<int, kMaxRank> perm{};
    WEAVE_TRY(resolve(in.rank(), perm, &ctx.label));
    Dims out;
    for (int i = 0; i < in.rank(); ++i) out.push_back(in[perm[i]]);
    ctx.outputs[0].dtype = ctx.inputs[0].dtype;
    ctx.outputs[0].dims = out;
    return {};
  }
  void run(const RunContext& ctx) const override {
    const ConstTensorView& in = ctx.inputs[0];
    std::array<int, kMaxRank> perm{};
    (void)resolve(in.dims.rank(), perm, nullptr);
    permute_copy(static_cast<const std::byte*>(in.data), in.dims,
                 std::span<const int>(perm.data(), in.dims.size()),
                 static_cast<std::byte*>(ctx.outputs[0].data), dtype_size(in.dtype), ctx.parallel);
  }

 private:
  Status resolve(int r, std::array<int, kMaxRank>& perm, const std::string* label) const {
    if (perm_.empty()) {
      for (int i = 0; i < r; ++i) perm[i] = r - 1 - i;
      return {};
    }
    if (label && static_cast<int>(perm_.size()) != r)
      return make_error(*label, ": perm ", shape_str(perm_), " does not match rank ", r);
    std::array<bool, kMaxRank> seen{};
    for (int i = 0; i < r; ++i) {
      const int64_t p = perm_[i] < 0 ? perm_[i] + r : perm_[i];
      if (label && (p < 0 || p >= r || seen[p]))
        return make_error(*label, ": perm ", shape_str(perm_), " is invalid");
      seen[p] = true;
      perm[i] = static_cast<int>(p);
    }
    return {};
  }
  std::vector<int64_t> perm_;
};

// ---------------------------------------------------------------- Concat, Split

class ConcatKernel final : public Kernel {
 public:
  explicit ConcatKernel(int64_t axis) : axis_(axis) {}
  Status infer(ShapeContext& ctx) const override {
    const auto& in = ctx.inputs;
    if (in.empty()) return make_error(ctx.label, ": Concat needs at least one input");
    for (std::size_t i = 0; i < in.size(); ++i) WEAVE_TRY(need_input(ctx, i, "data"));
    auto a = kern::normalize_axis(axis_, in[0].dims.rank(), ctx.label);
    if (!a) return a.error();
    Dims out = in[0].dims;
    for (std::size_t i = 1; i < in.size(); ++i) {
      bool ok = in[i].dtype == in[0].dtype && in[i].dims.rank() == out.rank();
      for (int k = 0; ok && k < out.rank(); ++k) ok = k == *a || in[i].dims[k] == out[k];
      if (!ok)
        return make_error(ctx.label, ": cannot concatenate ", dtype_name(in[0].dtype), "[",
                          dims_str(in[0].dims), "] and ", dtype_name(in[i].dtype), "[", dims_str(in[i].dims),
                          "] (input ", i, ") on axis ", axis_);
      out[*a] += in[i].dims[*a];
    }
    ctx.outputs[0].dtype = in[0].dtype;
    ctx.outputs[0].dims = out;
    return {};
  }
  void run(const RunContext& ctx) const override {
    const TensorView& out = ctx.outputs[0];
    const auto [a, outer, dim, inner] =
        kern::around_axis(out.dims, axis_, static_cast<int64_t>(dtype_size(out.dtype)));
    const int64_t out_row = dim * inner;
    auto* dst = static_cast<std::byte*>(out.data);
    ctx.parallel.for_range(
        outer, std::max<int64_t>(1, (1 << 16) / std::max<int64_t>(1, out_row)), [&](int64_t b, int64_t e) {
          for (int64_t o = b; o < e; ++o) {
            int64_t pos = 0;
            for (const ConstTensorView& in : ctx.inputs) {
              const int64_t row = in.dims[a] * inner;
              kern::copy_bytes(dst + o * out_row + pos, static_cast<const std::byte*>(in.data) + o * row,
                               static_cast<std::size_t>(row));
              pos += row;
            }
          }
        });
  }

 private:
  int64_t axis_;
};

class SplitKernel final : public Kernel {
 public:
  [[nodiscard]] uint32_t value_inputs() const override { return 1u << 1; }  // split
  SplitKernel(int64_t axis, std::vector<int64_t> split_attr, bool split_from_input, int64_t num_outputs)
      : axis_(axis),
        split_attr_(std::move(split_attr)),
        from_input_(split_from_input),
        num_outputs_(num_outputs) {}
  Status infer(ShapeContext& ctx) const override {
    WEAVE_TRY(need_input(ctx, 0, "data"));
    const Dims& in = ctx.inputs[0].dims;
    auto a = kern::normalize_axis(axis_, in.rank(), ctx.label);
    if (!a) return a.error();
    const int64_t n = static_cast<int64_t>(ctx.outputs.size());
    const int64_t d = in[*a];
    std::vector<int64_t> split = split_attr_;
    if (from_input_ && has_input(ctx.inputs, 1)) {
      auto s = known_ints(ctx, 1, "split", "Split");
      if (!s) return s.error();
      split = *s;
    }
    if (split.empty()) {
      if (num_outputs_ > 0 && num_outputs_ != n)
        return make_error(ctx.label, ": num_outputs ", num_outputs_, " differs from the ", n, " outputs");
      if (num_outputs_ > 0) {
        const int64_t chunk = (d + n - 1) / n;
        for (int64_t i = 0; i < n; ++i) split.push_back(std::clamp<int64_t>(d - i * chunk, 0, chunk));
      } else {
        if (d % n != 0)
          return make_error(ctx.label, ": cannot split ", dims_str(in), " evenly into ", n, " outputs");
        split.assign(static_cast<std::size_t>(n), d / n);
      }
    }
    if (static_cast<int64_t>(split.size()) != n)
      return make_error(ctx.label, ": split has ", split.size(), " entries for ", n, " outputs");
    int64_t sum = 0;
    for (int64_t s : split) {
      if (s < 0) return make_error(ctx.label, ": negative split size ", s);
      sum += s;
    }
    if (sum != d)
      return make_error(ctx.label, ": split ", shape_str(split), " does not add up to dim ", d, " of ",
                        dims_str(in));
    for (int64_t i = 0; i < n; ++i) {
      ctx.outputs[i].dtype = ctx.inputs[0].dtype;
      ctx.outputs[i].dims = in;
      ctx.outputs[i].dims[*a] = split[i];
    }
    return {};
  }
  void run(const RunContext& ctx) const override {
    const ConstTensorView& in = ctx.inputs[0];
    const auto [a, outer, dim, inner] =
        kern::around_axis(in.dims, axis_, static_cast<int64_t>(dtype_size(in.dtype)));
    const int64_t in_row = dim * inner;
    // Nothing to copy (a zero dim anywhere): do not walk a hostile, huge outer count (fuzz_artifact).
    if (in_row == 0 || outer == 0) return;
    const auto* src = static_cast<const std::byte*>(in.data);
    ctx.parallel.for_range(outer, std::max<int64_t>(1, (1 << 16) / std::max<int64_t>(1, in_row)),
                           [&](int64_t b, int64_t e) {
                             for (int64_t o = b; o < e; ++o) {
                               int64_t pos = 0;
                               for (const TensorView& out : ctx.outputs) {
                                 const int64_t row = out.dims[a] * inner;
                                 kern::copy_bytes(static_cast<std::byte*>(out.data) + o * row,
                                                  src + o * in_row + pos, static_cast<std::size_t>(row));
                                 pos += row;
                               }
                             }
                           });
  }

 private:
  int64_t axis_;
  std::vector<int64_t> split_attr_;
  bool from_input_;
  int64_t num_outputs_;
};

// ---------------------------------------------------------------- Slice

struct SliceParams {
  std::array<int64_t, kMaxRank> start{}, step{}, count{};
};

// ONNX Slice semantics: negative starts/ends count from the end, values are clamped, steps may
// be negative. `label` null = no validation (run path).
Status slice_params(const Dims& d, std::span<const int64_t> starts, std::span<const int64_t> ends,
                    std::span<const int64_t> axes, std::span<const int64_t> steps, SliceParams& p,
                    const std::string* label) {
  const int r = d.rank();
  for (int i = 0; i < r; ++i) {
    p.start[i] = 0;
    p.step[i] = 1;
    p.count[i] = d[i];
  }
  if (label && starts.size() != ends.size())
    return make_error(*label, ": starts and ends have different lengths (", starts.size(), " and ",
                      ends.size(), ")");
  if (label &&
      ((!axes.empty() && axes.size() != starts.size()) || (!steps.empty() && steps.size() != starts.size())))
    return make_error(*label, ": axes/steps lengths differ from starts");
  std::array<bool, kMaxRank> seen{};
  for (std::size_t k = 0; k < starts.size() && k < ends.size(); ++k) {
    int64_t ax = axes.empty() ? static_cast<int64_t>(k) : axes[k];
    if (ax < 0) ax += r;
    if (label && (ax < 0 || ax >= r))
      return make_error(*label, ": slice axis ", axes.empty() ? k : axes[k], " is out of range for ",
                        dims_str(d));
    if (label && seen[ax]) return make_error(*label, ": axis ", ax, " is sliced twice");
    seen[ax] = true;
    int64_t step = steps.empty() ? 1 : steps[k];
    if (label && step == 0) return make_error(*label, ": slice step is 0");
    const int64_t dim = d[static_cast<int>(ax)];
    // Steps larger than the dim select at most one element; clamping them avoids overflow.
    step = std::clamp<int64_t>(step, -(dim + 1), dim + 1);
    if (step == 0) step = 1;
    int64_t s = starts[k], e = ends[k];
    if (s < 0) s += dim;
    if (e < 0) e += dim;
    int64_t cnt;
    if (step > 0) {
      s = std::clamp<int64_t>(s, 0, dim);
      e = std::clamp<int64_t>(e, 0, dim);
      cnt = e > s ? (e - s + step - 1) / step : 0;
    } else {
      s = std::clamp<int64_t>(s, 0, dim - 1);
      e = std::clamp<int64_t>(e, -1, dim - 1);
      cnt = s > e ? (s - e - step - 1) / (-step) : 0;
    }
    p.start[ax] = cnt > 0 ? s : 0;
    p.step[ax] = step;
    p.count[ax] = cnt;
  }
  return {};
}

class SliceKernel final : public Kernel {
 public:
  [[nodiscard]] uint32_t value_inputs() const override { return input_bits(1, 4); }
  // opset < 10: starts/ends/axes attributes; otherwise inputs 1..4.
  SliceKernel(bool from_attrs, std::vector<int64_t> starts, std::vector<int64_t> ends,
              std::vector<int64_t> axes)
      : from_attrs_(from_attrs), starts_(std::move(starts)), ends_(std::move(ends)), axes_(std::move(axes)) {}

  Status infer(ShapeContext& ctx) const override {
    WEAVE_TRY(need_input(ctx, 0, "data"));
    std::array<std::vector<int64_t>, 4> v;
    if (from_attrs_) {
      v = {starts_, ends_, axes_, {}};
    } else {
      static constexpr const char* kNames[] = {"starts", "ends", "axes", "steps"};
      for (std::size_t i = 1; i <= 4; ++i) {
        if (!has_input(ctx.inputs, i)) {
          if (i <= 2) return make_error(ctx.label, ": Slice needs ", kNames[i - 1]);
          continue;
        }
        auto r = known_ints(ctx, i, kNames[i - 1], "Slice");
        if (!r) return r.error();
        v[i - 1] = *r;
      }
    }
    SliceParams p;
    WEAVE_TRY(slice_params(ctx.inputs[0].dims, v[0], v[1], v[2], v[3], p, &ctx.label));
    Dims out;
    for (int i = 0; i < ctx.inputs[0].dims.rank(); ++i) out.push_back(p.count[i]);
    ctx.outputs[0].dtype = ctx.inputs[0].dtype;
    ctx.outputs[0].dims = out;
    ctx.keep(p);
    return {};
  }

  void run(const RunContext& ctx) const override {
    const ConstTensorView& in = ctx.inputs[0];
    const SliceParams& p = ctx.kept<SliceParams>();
    const Dims st = strides_of(in.dims);
    kern::Plan plan;
    plan.rank = in.dims.rank();
    plan.n = 1;
    int64_t base = 0;
    for (int i = 0; i < plan.rank; ++i) {
      plan.dims[i] = p.count[i];
      plan.strides[0][i] = st[i] * p.step[i];
      base += p.start[i] * st[i];
    }
    const int64_t total = ctx.outputs[0].numel();
    if (total == 0) return;
    plan.coalesce();
    kern::strided_copy(plan, static_cast<const std::byte*>(in.data), base,
                       static_cast<std::byte*>(ctx.outputs[0].data), dtype_size(in.dtype), total,
                       ctx.parallel);
  }

 private:
  bool from_attrs_;
  std::vector<int64_t> starts_, ends_, axes_;
};

// ---------------------------------------------------------------- Gather, GatherElements

// Wraps a negative index once, then clamps into [0, dim) (dim > 0).
inline int64_t fix_index(int64_t i, int64_t dim) {
  if (i < 0) i += dim;
  return std::clamp<int64_t>(i, 0, dim - 1);
}

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
  explicit GatherKernel(int64_t axis) : axis_(axis) {}
  Status infer(ShapeContext& ctx) const override {
    auto a = gather_axis(ctx, axis_);
    if (!a) return a.error();
    const Dims& d = ctx.inputs[0].dims;
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
    ctx.parallel.for_range(outer * k, std::max<int64_t>(1, 4096 / inner), [&](int64_t b, int64_t e) {
      for (int64_t t = b; t < e; ++t) {
        const int64_t o = t / k, j = fix_index(kern::int_at(idx, t % k), dim);
        std::memcpy(dst + t * inner, src + (o * dim + j) * inner, static_cast<std::size_t>(inner));
      }
    });
  }

 private:
  int64_t axis_;
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
          out[o + j] = src[off[0] + j * s + fix_index(kern::int_at(idx, o + j), dim) * ds[a]];
      });
    });
  }

  int64_t axis_;
};

// ---------------------------------------------------------------- Expand, Tile

class ExpandKernel final : public Kernel {
 public:
  [[nodiscard]] uint32_t value_inputs() const override { return 1u << 1; }  // shape
  Status infer(ShapeContext& ctx) const override {
    WEAVE_TRY(need_input(ctx, 0, "data"));
    if (!has_input(ctx.inputs, 1)) return make_error(ctx.label, ": Expand needs the shape input");
    auto shape = known_ints(ctx, 1, "shape", "Expand");
    if (!shape) return shape.error();
    auto sd = kern::to_dims(*shape, ctx.label);
    if (!sd) return sd.error();
    Dims out;
    if (!kern::broadcast_dims(ctx.inputs[0].dims, *sd, out))
      return make_error(ctx.label, ": incompatible broadcast shapes ", dims_str(ctx.inputs[0].dims), " and ",
                        dims_str(*sd));
    if (!kern::size_ok(out.span()))
      return make_error(ctx.label, ": Expand output ", dims_str(out), " is too large");
    ctx.outputs[0].dtype = ctx.inputs[0].dtype;
    ctx.outputs[0].dims = out;
    return {};
  }
  void run(const RunContext& ctx) const override {
    const TensorView& out = ctx.outputs[0];
    if (out.numel() == 0) return;
    const kern::Plan p = kern::broadcast_plan(out.dims, {&ctx.inputs[0].dims});
    kern::strided_copy(p, static_cast<const std::byte*>(ctx.inputs[0].data), 0,
                       static_cast<std::byte*>(out.data), dtype_size(out.dtype), out.numel(), ctx.parallel);
  }
};

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

// ---------------------------------------------------------------- ConstantOfShape, Range

class ConstantOfShapeKernel final : public Kernel {
 public:
  [[nodiscard]] uint32_t value_inputs() const override { return 1u << 0; }  // shape
  explicit ConstantOfShapeKernel(TensorAttr value) : value_(std::move(value)) {}
  Status infer(ShapeContext& ctx) const override {
    if (!has_input(ctx.inputs, 0)) return make_error(ctx.label, ": ConstantOfShape needs the shape input");
    auto shape = known_ints(ctx, 0, "shape", "ConstantOfShape");
    if (!shape) return shape.error();
    auto d = kern::to_dims(*shape, ctx.label);
    if (!d) return d.error();
    ctx.outputs[0].dtype = value_.dtype;
    ctx.outputs[0].dims = *d;
    return {};
  }
  void run(const RunContext& ctx) const override {
    const TensorView& out = ctx.outputs[0];
    const std::size_t es = dtype_size(out.dtype);
    auto* dst = static_cast<std::byte*>(out.data);
    const auto* v = reinterpret_cast<const std::byte*>(value_.bytes.data());
    ctx.parallel.for_range(out.numel(), kern::kGrain, [&](int64_t b, int64_t e) {
      fill_pattern(dst + b * static_cast<int64_t>(es), e - b, v, es);
    });
  }

 private:
  TensorAttr value_;
};

Factory make_constant_of_shape(const KernelSetup& s) {
  TensorAttr v;
  if (const TensorAttr* t = s.node.attrs.get_tensor("value")) {
    if (shape_numel(t->shape) != 1 || dtype_size(t->dtype) == 0 || t->bytes.size() != dtype_size(t->dtype))
      return make_error("ConstantOfShape value must hold exactly one element of a known dtype");
    v = *t;
  } else {
    v.dtype = DType::float32;
    v.shape = {1};
    v.bytes.assign(4, 0);
  }
  return make_kernel<ConstantOfShapeKernel>(std::move(v));
}

class RangeKernel final : public Kernel {
 public:
  [[nodiscard]] uint32_t value_inputs() const override { return input_bits(0, 2); }
  Status infer(ShapeContext& ctx) const override {
    const char* names[] = {"start", "limit", "delta"};
    for (std::size_t i = 0; i < 3; ++i) {
      if (!has_input(ctx.inputs, i)) return make_error(ctx.label, ": Range needs ", names[i]);
      const ConstTensorView& v = ctx.inputs[i];
      if (v.numel() != 1) return make_error(ctx.label, ": ", names[i], " must be a scalar");
      if (v.data == nullptr)
        return make_error(ctx.label, ": ", names[i],
                          " of Range is only known at run time; it must be a constant");
      if (v.dtype != ctx.inputs[0].dtype) return make_error(ctx.label, ": Range inputs must share one dtype");
    }
    const DType t = ctx.inputs[0].dtype;
    double n = 0;
    if (t == DType::float32 || t == DType::float64) {
      auto get = [&](int i) {
        return t == DType::float32 ? double(*ctx.inputs[i].as<float>()) : *ctx.inputs[i].as<double>();
      };
      const double start = get(0), limit = get(1), delta = get(2);
      if (delta == 0 || !std::isfinite(start) || !std::isfinite(limit) || !std::isfinite(delta))
        return make_error(ctx.label, ": invalid Range (start ", start, ", limit ", limit, ", delta ", delta,
                          ")");
      n = std::ceil((limit - start) / delta);
    } else if (t == DType::int64 || t == DType::int32) {
      const int64_t start = kern::int_at(ctx.inputs[0], 0), limit = kern::int_at(ctx.inputs[1], 0),
                    delta = kern::int_at(ctx.inputs[2], 0);
      if (delta == 0) return make_error(ctx.label, ": Range delta is 0");
      n = std::ceil((static_cast<double>(limit) - static_cast<double>(start)) / static_cast<double>(delta));
    } else {
      return make_error(ctx.label, ": dtype ", dtype_name(t), " is not supported");
    }
    if (n > static_cast<double>(int64_t{1} << 31))
      return make_error(ctx.label, ": Range output is too large");
    ctx.outputs[0].dtype = t;
    ctx.outputs[0].dims = Dims{std::max<int64_t>(0, static_cast<int64_t>(n))};
    return {};
  }
  void run(const RunContext& ctx) const override {
    const TensorView& out = ctx.outputs[0];
    const int64_t n = out.numel();
    kern::dispatch_numeric(out.dtype, [&](auto tag) { fill<decltype(tag)>(ctx, n); });
  }

 private:
  template <class T>
  static void fill(const RunContext& ctx, int64_t n) {
    const T start = *ctx.inputs[0].as<T>(), delta = *ctx.inputs[2].as<T>();
    T* o = ctx.outputs[0].as<T>();
    if constexpr (std::is_integral_v<T>) {
      using U = std::make_unsigned_t<T>;  // wraps instead of overflowing
      for (int64_t i = 0; i < n; ++i) o[i] = static_cast<T>(U(start) + U(i) * U(delta));
    } else {
      for (int64_t i = 0; i < n; ++i) o[i] = static_cast<T>(start + static_cast<T>(i) * delta);
    }
  }
};

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
    WEAVE_TRY(resolve(in, raw, axes, pads, &ctx.label));
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
                        std::array<int64_t, 2 * kMaxRank>& pads, const std::string* label) {
    const int r = in.rank();
    const std::size_t n = axes.empty() ? static_cast<std::size_t>(r) : axes.size();
    if (label && raw.size() != 2 * n)
      return make_error(*label, ": pads has ", raw.size(), " values, expected ", 2 * n, " for shape ",
                        dims_str(in));
    for (std::size_t k = 0; k < n && 2 * k + 1 <= raw.size(); ++k) {
      int64_t ax = axes.empty() ? static_cast<int64_t>(k) : axes[k];
      if (ax < 0) ax += r;
      if (ax < 0 || ax >= r) {
        if (label) return make_error(*label, ": pad axis ", axes[k], " is out of range for ", dims_str(in));
        continue;
      }
      const int64_t lim = int64_t{1} << 40;  // keeps sums far from overflow; sizes are checked later
      if (label && (std::abs(raw[k]) > lim || std::abs(raw[k + n]) > lim))
        return make_error(*label, ": pads are too large");
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

// ---------------------------------------------------------------- DepthToSpace, SpaceToDepth

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

// ---------------------------------------------------------------- factories

Factory make_squeeze(const KernelSetup& s, bool unsqueeze) {
  // The axes attribute (opset < 13) and the axes input (opset >= 13) are both accepted; the
  // input wins when given.
  return make_kernel<SqueezeKernel>(unsqueeze, true, s.node.attrs.get_ints("axes"), s.node.attrs.has("axes"));
}

Factory make_split(const KernelSetup& s) {
  const int64_t n = s.node.attrs.get_int("num_outputs", 0);
  if (s.node.attrs.has("num_outputs") && n <= 0) return make_error("num_outputs must be positive");
  return make_kernel<SplitKernel>(s.node.attrs.get_int("axis", 0), s.node.attrs.get_ints("split"),
                                  s.opset >= 13, n);
}

Factory make_slice(const KernelSetup& s) {
  if (s.opset < 10)
    return make_kernel<SliceKernel>(true, s.node.attrs.get_ints("starts"), s.node.attrs.get_ints("ends"),
                                    s.node.attrs.get_ints("axes"));
  return make_kernel<SliceKernel>(false, std::vector<int64_t>{}, std::vector<int64_t>{},
                                  std::vector<int64_t>{});
}

}  // namespace

void register_shape_kernels(KernelRegistry& r) {
  r.add("Shape", [](const KernelSetup& s) -> Factory {
    return make_kernel<ShapeKernel>(s.node.attrs.get_int("start", 0),
                                    s.node.attrs.get_int("end", std::numeric_limits<int64_t>::max()));
  });
  r.add("Size", [](const KernelSetup&) -> Factory { return make_kernel<SizeKernel>(); });
  r.add("Reshape", [](const KernelSetup& s) -> Factory {
    return make_kernel<ReshapeKernel>(s.node.attrs.get_int("allowzero", 0) != 0);
  });
  r.add("Flatten", [](const KernelSetup& s) -> Factory {
    return make_kernel<FlattenKernel>(s.node.attrs.get_int("axis", 1));
  });
  r.add("Squeeze", [](const KernelSetup& s) { return make_squeeze(s, false); });
  r.add("Unsqueeze", [](const KernelSetup& s) { return make_squeeze(s, true); });
  r.add("Transpose", [](const KernelSetup& s) -> Factory {
    return make_kernel<TransposeKernel>(s.node.attrs.get_ints("perm"));
  });
  r.add("Concat", [](const KernelSetup& s) -> Factory {
    if (!s.node.attrs.has("axis")) return make_error("Concat needs the 'axis' attribute");
    return make_kernel<ConcatKernel>(s.node.attrs.get_int("axis", 0));
  });
  r.add("Split", &make_split);
  r.add("Slice", &make_slice);
  r.add("Gather", [](const KernelSetup& s) -> Factory {
    return make_kernel<GatherKernel>(s.node.attrs.get_int("axis", 0));
  });
  r.add("GatherElements", [](const KernelSetup& s) -> Factory {
    return make_kernel<GatherElementsKernel>(s.node.attrs.get_int("axis", 0));
  });
  r.add("Expand", [](const KernelSetup&) -> Factory { return make_kernel<ExpandKernel>(); });
  r.add("Tile", [](const KernelSetup&) -> Factory { return make_kernel<TileKernel>(); });
  r.add("ConstantOfShape", &make_constant_of_shape);
  r.add("Range", [](const KernelSetup&) -> Factory { return make_kernel<RangeKernel>(); });
  r.add("Pad", &make_pad);
  r.add("DepthToSpace", &make_depth_space<true>);
  r.add("SpaceToDepth", &make_depth_space<false>);
}

}  // namespace weave
