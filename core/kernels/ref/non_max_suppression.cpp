// NonMaxSuppression.
// NonMaxSuppression's output size depends on the boxes and scores (value_inputs): the planner
// computes it once those values are known. Boxes with a non-positive area overlap nothing.
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

using Made = Expected<std::unique_ptr<Kernel>>;

struct Box {
  float y1, x1, y2, x2;
};

class NmsKernel final : public Kernel {
 public:
  explicit NmsKernel(bool center) : center_(center) {}
  [[nodiscard]] uint32_t value_inputs() const override { return input_bits(0, 4); }

  Status infer(ShapeContext& ctx) const override {
    const auto& in = ctx.inputs;
    if (!has_input(in, 0) || !has_input(in, 1)) return make_error(ctx.label, ": needs boxes and scores");
    const Dims& b = in[0].dims;
    const Dims& s = in[1].dims;
    if (in[0].dtype != DType::float32 || in[1].dtype != DType::float32)
      return make_error(ctx.label, ": boxes and scores must be float32");
    if (b.rank() != 3 || b[2] != 4 || s.rank() != 3 || s[0] != b[0] || s[2] != b[1])
      return make_error(ctx.label, ": boxes ", dims_str(b), " and scores ", dims_str(s),
                        " must be [batches, boxes, 4] and [batches, classes, boxes]");
    if (has_input(in, 2) &&
        (in[2].numel() != 1 || (in[2].dtype != DType::int64 && in[2].dtype != DType::int32)))
      return make_error(ctx.label, ": max_output_boxes_per_class must be an integer scalar");
    for (std::size_t i = 3; i < 5; ++i)
      if (has_input(in, i) && (in[i].numel() != 1 || in[i].dtype != DType::float32))
        return make_error(ctx.label, ": input ", i, " must be a float32 scalar");
    for (std::size_t i = 0; i < in.size(); ++i)
      if (has_input(in, i) && in[i].data == nullptr && in[i].numel() > 0)
        return make_error(ctx.label, ": input ", i, " is only known at run time");
    // Each candidate is compared with the boxes kept so far (at most max_output_boxes_per_class):
    // refused beyond ~2^32 comparisons so that hostile sizes cannot stall planning or a run.
    const int64_t max_out = has_input(in, 2) ? std::max<int64_t>(kern::int_at(in[2], 0), 0) : 0;
    const int64_t per_class = b[1] * std::min(b[1], max_out);
    if (per_class > 0 && b[0] * s[1] > (int64_t{1} << 32) / per_class)
      return make_error(ctx.label, ": ", b[0] * s[1], " classes of ", b[1], " boxes keeping up to ", max_out,
                        " each are too many comparisons");
    // Two index lists of one class's boxes: the candidates in score order and the kept ones.
    const auto n = static_cast<std::size_t>(b[1]);
    std::vector<int64_t> scratch(2 * n);
    ctx.outputs[0].dtype = DType::int64;
    ctx.outputs[0].dims = Dims{select(in, scratch.data(), nullptr), 3};
    ctx.workspace = 2 * n * sizeof(int64_t);
    return {};
  }

  void run(const RunContext& ctx) const override {
    (void)select(ctx.inputs, reinterpret_cast<int64_t*>(ctx.workspace.data()), ctx.outputs[0].as<int64_t>());
  }

 private:
  // Selects the boxes with `scratch` (2 x boxes indices); writes [batch, class, box] rows to
  // `out` when given; returns the count.
  int64_t select(std::span<const ConstTensorView> in, int64_t* scratch, int64_t* out) const {
    const Dims& bd = in[0].dims;
    const int64_t batches = bd[0], n = bd[1], classes = in[1].dims[1];
    const int64_t max_out = has_input(in, 2) ? kern::int_at(in[2], 0) : 0;
    const float iou_max = has_input(in, 3) ? *in[3].as<float>() : 0.f;
    const bool has_score = has_input(in, 4);
    const float score_min = has_score ? *in[4].as<float>() : 0.f;
    const float* boxes = in[0].as<float>();
    const float* scores = in[1].as<float>();
    int64_t count = 0;
    int64_t* order = scratch;
    int64_t* kept = scratch + n;
    for (int64_t b = 0; b < batches; ++b)
      for (int64_t c = 0; c < classes; ++c) {
        const float* sc = scores + (b * classes + c) * n;
        int64_t candidates = 0, num_kept = 0;
        for (int64_t i = 0; i < n; ++i)
          if (!std::isnan(sc[i]) && (!has_score || sc[i] > score_min)) order[candidates++] = i;
        // Equal scores keep the lower index first (ONNX's reference order); std::sort, unlike
        // std::stable_sort, never allocates.
        std::sort(order, order + candidates,
                  [&](int64_t x, int64_t y) { return sc[x] > sc[y] || (sc[x] == sc[y] && x < y); });
        for (int64_t oi = 0; oi < candidates; ++oi) {
          const int64_t i = order[oi];
          if (max_out <= 0 || num_kept >= max_out) break;
          const Box bi = box(boxes + (b * n + i) * 4);
          bool keep = true;
          for (int64_t k = 0; k < num_kept && keep; ++k)
            keep = iou(bi, box(boxes + (b * n + kept[k]) * 4)) <= iou_max;
          if (!keep) continue;
          kept[num_kept++] = i;
          if (out) {
            out[count * 3] = b;
            out[count * 3 + 1] = c;
            out[count * 3 + 2] = i;
          }
          ++count;
        }
      }
    return count;
  }

  // Corners with y1 <= y2, x1 <= x2.
  [[nodiscard]] Box box(const float* p) const {
    if (center_) return {p[1] - p[3] / 2, p[0] - p[2] / 2, p[1] + p[3] / 2, p[0] + p[2] / 2};
    return {std::min(p[0], p[2]), std::min(p[1], p[3]), std::max(p[0], p[2]), std::max(p[1], p[3])};
  }

  static float iou(const Box& a, const Box& b) {
    const float area_a = (a.y2 - a.y1) * (a.x2 - a.x1), area_b = (b.y2 - b.y1) * (b.x2 - b.x1);
    if (!(area_a > 0.f) || !(area_b > 0.f)) return 0.f;
    const float h = std::max(0.f, std::min(a.y2, b.y2) - std::max(a.y1, b.y1));
    const float w = std::max(0.f, std::min(a.x2, b.x2) - std::max(a.x1, b.x1));
    const float inter = h * w;
    return inter / (area_a + area_b - inter);
  }

  bool center_;
};

}  // namespace

void register_non_max_suppression(KernelRegistry& r) {
  r.add("NonMaxSuppression", [](const KernelSetup& s) -> Made {
    return make_kernel<NmsKernel>(s.node.attrs.get_int("center_point_box", 0) != 0);
  });
}

}  // namespace weave
