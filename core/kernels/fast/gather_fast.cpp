// Fast Gather of 4-byte elements along the last axis by constant indices: the layout pass's
// channel shuffle of NHWC data (ShuffleNet's, 17% of its time as an element-by-element copy),
// a fixed selection or reordering of features. Each output vector is planned once per input
// width as one or two windows of the row and a lane permutation (PermutePlan); other Gathers
// decline to the reference kernel, whose index semantics (negative indices wrap once, the rest
// clamp into the axis) the plan keeps.
#include <algorithm>
#include <cstring>
#include <vector>

#include "core/kernels/fast/fast_ops.h"
#include "core/kernels/fast/nhwc.h"
#include "core/kernels/kernel_util.h"

namespace weave::fast {
namespace {

// What infer() keeps for one input width: the plan's tables.
struct PermuteTables {
  std::vector<int32_t> blocks, lanes, idx;
  int64_t n_in = 0;
};

// Plans output vectors of `w` lanes over indices already within [0, n_in).
PermuteTables plan_permute(const std::vector<int32_t>& idx, int64_t n_in, int w) {
  PermuteTables t;
  t.n_in = n_in;
  t.idx = idx;
  const auto n_out = static_cast<int64_t>(idx.size());
  const int64_t vecs = (n_out + w - 1) / w;
  t.blocks.assign(static_cast<std::size_t>(4 * vecs), -1);
  t.lanes.assign(static_cast<std::size_t>(vecs * w), 0);
  auto len = [&](int32_t start) { return static_cast<int32_t>(std::min<int64_t>(w, n_in - start)); };
  for (int64_t v = 0; v < vecs; ++v) {
    const int64_t j0 = v * w, j1 = std::min(n_out, j0 + w);
    int32_t a = idx[static_cast<std::size_t>(j0)];
    for (int64_t j = j0; j < j1; ++j) a = std::min(a, idx[static_cast<std::size_t>(j)]);
    int32_t b = -1;
    for (int64_t j = j0; j < j1; ++j) {
      const int32_t i = idx[static_cast<std::size_t>(j)];
      if (i - a >= w && (b < 0 || i < b)) b = i;
    }
    bool fits = true;
    for (int64_t j = j0; j < j1 && fits; ++j) {
      const int32_t i = idx[static_cast<std::size_t>(j)];
      const bool in_a = i - a < w, in_b = b >= 0 && i >= b && i - b < w;
      fits = in_a || in_b;
      t.lanes[static_cast<std::size_t>(j)] = in_a ? i - a : w + (i - b);
    }
    int32_t* blk = t.blocks.data() + 4 * v;
    if (!fits) continue;  // lane by lane
    blk[0] = a, blk[1] = len(a);
    if (b >= 0) blk[2] = b, blk[3] = len(b);
  }
  return t;
}

class FastGather final : public Kernel {
 public:
  FastGather(const Ops& ops, std::vector<int64_t> indices, std::vector<int64_t> expect)
      : ops_(ops), indices_(std::move(indices)), expect_(std::move(expect)) {}

  Status infer(ShapeContext& ctx) const override {
    const Dims& d = ctx.inputs[0].dims;
    if (!expect_.empty() && !(d == Dims(std::span<const int64_t>(expect_))))
      return make_error(ctx.label, ": planned for data ", shape_str(expect_),
                        " (the channel shuffle in NHWC), got ", kern::dims_bracketed(d));
    if (d.rank() < 1) return make_error(ctx.label, ": data must have rank >= 1");
    const auto k = static_cast<int64_t>(indices_.size());
    const int64_t dim = d[d.rank() - 1];
    Dims out = d;
    out[out.rank() - 1] = k;
    ctx.outputs[0].dtype = ctx.inputs[0].dtype;
    ctx.outputs[0].dims = out;
    if (dim > 0) {
      // The reference kernel's semantics: wrap a negative index once, clamp the rest.
      std::vector<int32_t> idx(static_cast<std::size_t>(k));
      for (int64_t j = 0; j < k; ++j)
        idx[static_cast<std::size_t>(j)] =
            static_cast<int32_t>(kern::clamp_index(indices_[static_cast<std::size_t>(j)], dim));
      ctx.keep(plan_permute(idx, dim, ops_.vec));
    }
    return {};
  }

  void run(const RunContext& ctx) const override {
    const Dims& d = ctx.inputs[0].dims;
    const ConstTensorView& out = ctx.outputs[0];
    if (out.numel() == 0) return;
    if (d[d.rank() - 1] == 0) {
      std::memset(ctx.outputs[0].data, 0, ctx.outputs[0].bytes());
      return;
    }
    const PermuteTables& t = ctx.kept<PermuteTables>();
    PermutePlan p;
    p.n_in = t.n_in;
    p.n_out = static_cast<int64_t>(t.idx.size());
    p.blocks = t.blocks.data();
    p.lanes = t.lanes.data();
    p.idx = t.idx.data();
    // 4-byte elements move as floats: the lanes are only loaded, permuted and stored.
    ops_.permute_rows(static_cast<const float*>(ctx.inputs[0].data), static_cast<float*>(ctx.outputs[0].data),
                      d.numel() / t.n_in, p, ctx.parallel);
  }

 private:
  const Ops& ops_;
  std::vector<int64_t> indices_;  // the constant indices, as given
  std::vector<int64_t> expect_;
};

}  // namespace

Expected<std::unique_ptr<Kernel>> make_fast_gather(const KernelSetup& s) {
  const Ops* ops = fast::ops();
  const Value* x = kern::input_info(s, 0);
  const Value* i = kern::input_info(s, 1);
  const ConstTensorView* ic = kern::constant(s, 1);
  if (ops == nullptr || s.node.inputs.size() != 2 || x == nullptr || i == nullptr || ic == nullptr ||
      !x->rank_known || x->shape.empty() || dtype_size(x->dtype) != 4 || ic->dims.rank() != 1 ||
      ic->numel() < 1 || (ic->dtype != DType::int64 && ic->dtype != DType::int32))
    return std::unique_ptr<Kernel>();
  const auto rank = static_cast<int64_t>(x->shape.size());
  int64_t axis = s.node.attrs.get_int("axis", 0);
  if (axis < 0) axis += rank;
  if (axis != rank - 1) return std::unique_ptr<Kernel>();  // another axis: the reference
  std::vector<int64_t> indices(static_cast<std::size_t>(ic->numel()));
  for (int64_t j = 0; j < ic->numel(); ++j) indices[static_cast<std::size_t>(j)] = kern::int_at(*ic, j);
  return std::unique_ptr<Kernel>(
      std::make_unique<FastGather>(*ops, std::move(indices), s.node.attrs.get_ints("weave_expect_dims")));
}

}  // namespace weave::fast
