// RoiAlign.
// RoiAlign samples bilinearly like ONNX's reference (and ONNX Runtime): sample points beyond
// one pixel outside the image contribute 0; a region's batch index outside the input gives 0s;
// at most 1024 x 1024 samples per bin when sampling_ratio is 0 (adaptive).
#include <algorithm>
#include <cmath>
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

class RoiAlignKernel final : public Kernel {
 public:
  RoiAlignKernel(bool max, int64_t oh, int64_t ow, int64_t ratio, float scale, bool half_pixel)
      : max_(max), oh_(oh), ow_(ow), ratio_(ratio), scale_(scale), half_pixel_(half_pixel) {}

  Status infer(ShapeContext& ctx) const override {
    const auto& in = ctx.inputs;
    if (!has_input(in, 0) || !has_input(in, 1) || !has_input(in, 2))
      return make_error(ctx.label, ": needs X, rois and batch_indices");
    if (in[0].dtype != DType::float32 || in[1].dtype != DType::float32)
      return make_error(ctx.label, ": X and rois must be float32");
    if (in[2].dtype != DType::int64 && in[2].dtype != DType::int32)
      return make_error(ctx.label, ": batch_indices must be int32 or int64");
    const Dims& x = in[0].dims;
    const Dims& r = in[1].dims;
    if (x.rank() != 4 || r.rank() != 2 || r[1] != 4 || in[2].dims.rank() != 1 || in[2].dims[0] != r[0])
      return make_error(ctx.label, ": X ", dims_str(x), ", rois ", dims_str(r), " and batch_indices ",
                        dims_str(in[2].dims), " must be [N, C, H, W], [R, 4] and [R]");
    ctx.outputs[0].dtype = DType::float32;
    ctx.outputs[0].dims = Dims{r[0], x[1], oh_, ow_};
    return {};
  }

  void run(const RunContext& ctx) const override {
    const auto& in = ctx.inputs;
    const Dims& xd = in[0].dims;
    const int64_t N = xd[0], C = xd[1], H = xd[2], W = xd[3], R = in[1].dims[0];
    const float* x = in[0].as<float>();
    const float* rois = in[1].as<float>();
    float* y = ctx.outputs[0].as<float>();
    const float off = half_pixel_ ? 0.5f : 0.f;
    for (int64_t r = 0; r < R; ++r) {
      const int64_t n = kern::int_at(in[2], r);
      float* yr = y + r * C * oh_ * ow_;
      if (n < 0 || n >= N) {
        std::fill(yr, yr + C * oh_ * ow_, 0.f);
        continue;
      }
      const float* roi = rois + r * 4;
      const float x0 = roi[0] * scale_ - off, y0 = roi[1] * scale_ - off;
      float rw = roi[2] * scale_ - off - x0, rh = roi[3] * scale_ - off - y0;
      if (!half_pixel_) {
        rw = std::max(rw, 1.f);
        rh = std::max(rh, 1.f);
      }
      const float bh = rh / static_cast<float>(oh_), bw = rw / static_cast<float>(ow_);
      const int64_t gh = ratio_ > 0 ? ratio_ : grid(rh / static_cast<float>(oh_));
      const int64_t gw = ratio_ > 0 ? ratio_ : grid(rw / static_cast<float>(ow_));
      const float count = static_cast<float>(std::max<int64_t>(gh * gw, 1));
      for (int64_t c = 0; c < C; ++c) {
        const float* plane = x + (n * C + c) * H * W;
        for (int64_t ph = 0; ph < oh_; ++ph)
          for (int64_t pw = 0; pw < ow_; ++pw) {
            float acc = 0.f;
            bool first = true;
            for (int64_t iy = 0; iy < gh; ++iy)
              for (int64_t ix = 0; ix < gw; ++ix) {
                const float sy = y0 + static_cast<float>(ph) * bh +
                                 (static_cast<float>(iy) + 0.5f) * bh / static_cast<float>(gh);
                const float sx = x0 + static_cast<float>(pw) * bw +
                                 (static_cast<float>(ix) + 0.5f) * bw / static_cast<float>(gw);
                const float v = sample(plane, H, W, sy, sx);
                if (max_)
                  acc = first ? v : std::max(acc, v);
                else
                  acc += v;
                first = false;
              }
            yr[(c * oh_ + ph) * ow_ + pw] = max_ ? acc : acc / count;
          }
      }
    }
  }

 private:
  // Samples per bin along an axis: ceil(bin size), at most kMaxGrid (hostile rois stay bounded).
  static int64_t grid(float bin) {
    constexpr float kMaxGrid = 1024.f;
    return !(bin > 0.f) ? 0 : static_cast<int64_t>(std::ceil(std::min(bin, kMaxGrid)));
  }

  // Bilinear value at (y, x); in max mode the largest weighted corner, as ONNX Runtime does.
  [[nodiscard]] float sample(const float* p, int64_t H, int64_t W, float y, float x) const {
    if (!(y >= -1.f && y <= static_cast<float>(H) && x >= -1.f && x <= static_cast<float>(W))) return 0.f;
    y = std::max(y, 0.f);
    x = std::max(x, 0.f);
    int64_t yl = static_cast<int64_t>(y), xl = static_cast<int64_t>(x), yh = yl + 1, xh = xl + 1;
    if (yl >= H - 1) {
      yl = yh = H - 1;
      y = static_cast<float>(yl);
    }
    if (xl >= W - 1) {
      xl = xh = W - 1;
      x = static_cast<float>(xl);
    }
    const float ly = y - static_cast<float>(yl), lx = x - static_cast<float>(xl), hy = 1.f - ly,
                hx = 1.f - lx;
    const float v1 = hy * hx * p[yl * W + xl], v2 = hy * lx * p[yl * W + xh];
    const float v3 = ly * hx * p[yh * W + xl], v4 = ly * lx * p[yh * W + xh];
    return max_ ? std::max({v1, v2, v3, v4}) : v1 + v2 + v3 + v4;
  }

  bool max_;
  int64_t oh_, ow_, ratio_;
  float scale_;
  bool half_pixel_;
};

Made make_roi_align(const KernelSetup& s) {
  const auto& a = s.node.attrs;
  const std::string mode = a.get_string("mode", "avg");
  if (mode != "avg" && mode != "max") return make_error("unsupported attribute mode='", mode, "'");
  const std::string coord = a.get_string("coordinate_transformation_mode", "half_pixel");
  if (coord != "half_pixel" && coord != "output_half_pixel")
    return make_error("unsupported attribute coordinate_transformation_mode='", coord, "'");
  const int64_t oh = a.get_int("output_height", 1), ow = a.get_int("output_width", 1);
  const int64_t ratio = a.get_int("sampling_ratio", 0);
  if (oh < 1 || ow < 1 || oh > (1 << 16) || ow > (1 << 16) || ratio < 0 || ratio > (1 << 10))
    return make_error("RoiAlign output size and sampling_ratio are out of range");
  return make_kernel<RoiAlignKernel>(mode == "max", oh, ow, ratio, a.get_float("spatial_scale", 1.f),
                                     coord == "half_pixel");
}

}  // namespace

void register_roi_align(KernelRegistry& r) {
  r.add("RoiAlign", &make_roi_align);
}

}  // namespace weave
