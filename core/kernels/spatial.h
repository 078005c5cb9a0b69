// Shared geometry of windowed ops (Conv, ConvTranspose, MaxPool, AveragePool): parsing of
// kernel_shape / strides / dilations / pads / auto_pad and the output-size rules of ONNX.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/common/dims.h"
#include "core/common/status.h"
#include "core/graph/attributes.h"

namespace weave {

enum class AutoPad { notset, same_upper, same_lower, valid };

struct WindowAttrs {
  std::vector<int64_t> kernel;     // empty = take from the weights (Conv)
  std::vector<int64_t> strides;    // empty = all 1
  std::vector<int64_t> dilations;  // empty = all 1
  std::vector<int64_t> pads;       // empty = all 0; else [begin..., end...]
  AutoPad auto_pad = AutoPad::notset;
  bool ceil_mode = false;
};

// Per spatial axis, after resolving auto_pad against concrete input sizes.
struct WindowGeometry {
  int nd = 0;
  int64_t in[kMaxRank] = {};
  int64_t out[kMaxRank] = {};
  int64_t kernel[kMaxRank] = {};
  int64_t stride[kMaxRank] = {};
  int64_t dilation[kMaxRank] = {};
  int64_t pad_begin[kMaxRank] = {};
  int64_t pad_end[kMaxRank] = {};
};

// Steps of a window op: `outputs` elements, each reading `per_tap` values under each of the
// window's taps (ShapeContext::work). Saturates at INT64_MAX; a negative count (shape_numel's
// "too large") gives INT64_MAX.
[[nodiscard]] std::int64_t window_work(const WindowGeometry& g, std::int64_t outputs,
                                       std::int64_t per_tap = 1);

// Reads and sanity-checks the attributes (positive strides/dilations/kernel, non-negative pads,
// consistent lengths). `label` names the node in errors.
[[nodiscard]] Expected<WindowAttrs> parse_window_attrs(const Attributes& attrs, const std::string& label);

// Resolves the geometry of a forward window op (Conv/pools) for spatial sizes `in` and kernel
// sizes `kernel`; errors when the window does not fit or attribute lengths do not match. The
// arithmetic cannot overflow: the plan bounds every dim by kMaxPlannedBytes (2^40), and
// parse_window_attrs bounds kernel, strides, dilations and pads by 2^20.
[[nodiscard]] Expected<WindowGeometry> forward_geometry(const WindowAttrs& a, std::span<const int64_t> in,
                                                        std::span<const int64_t> kernel,
                                                        const std::string& label);

// A geometry lifted to exactly 3 spatial axes (leading unit axes) so that one loop nest serves
// 1-D, 2-D and 3-D ops.
struct Geo3 {
  int64_t in[3] = {1, 1, 1}, out[3] = {1, 1, 1}, k[3] = {1, 1, 1}, s[3] = {1, 1, 1}, d[3] = {1, 1, 1},
          pb[3] = {0, 0, 0};
  [[nodiscard]] int64_t in_size() const { return in[0] * in[1] * in[2]; }
  [[nodiscard]] int64_t out_size() const { return out[0] * out[1] * out[2]; }
  [[nodiscard]] int64_t k_size() const { return k[0] * k[1] * k[2]; }
};

inline Geo3 lift(const WindowGeometry& g) {
  Geo3 r;
  const int off = 3 - g.nd;
  for (int i = 0; i < g.nd; ++i) {
    r.in[off + i] = g.in[i];
    r.out[off + i] = g.out[i];
    r.k[off + i] = g.kernel[i];
    r.s[off + i] = g.stride[i];
    r.d[off + i] = g.dilation[i];
    r.pb[off + i] = g.pad_begin[i];
  }
  return r;
}

// "[1, 2, 3]" for messages.
[[nodiscard]] std::string ints_str(std::span<const int64_t> v);

}  // namespace weave
