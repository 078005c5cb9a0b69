// The geometry of ONNX Resize (opset 10-13 inputs) and Upsample (opset 7-9), shared by the
// reference kernel and the fast NHWC one: parsing the attributes, output dims and per-axis
// scales from the scales or sizes input, and per-axis index/weight tables mapping each output
// index to its source index (nearest) or pair of indices and weight (linear).
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "core/common/dims.h"
#include "core/common/status.h"
#include "core/kernels/kernel.h"

namespace weave {

enum class ResizeCoord {
  half_pixel,
  pytorch_half_pixel,
  align_corners,
  asymmetric,
  tf_half_pixel_for_nearest
};
enum class ResizeNearest { round_prefer_floor, round_prefer_ceil, floor, ceil };

// One axis of the tables: output index o reads source indices i0[o], i1[o] with weight lam[o]
// on i1 (linear), or i0[o] alone (nearest: i1 == i0, lam == 0).
struct ResizeAxis {
  int64_t* i0;
  int64_t* i1;
  float* lam;
};

// The tables of a range of axes for one input shape, one axis after the other: what infer()
// keeps and run() reads.
struct ResizeMaps {
  Dims out;
  std::vector<int64_t> i0, i1;
  std::vector<float> lam;
  std::array<int64_t, kMaxRank> base{};  // where axis a's entries start
  // Axis a's tables, read-only.
  struct Axis {
    const int64_t* i0;
    const int64_t* i1;
    const float* lam;
  };
  [[nodiscard]] Axis axis(int a) const {
    const auto b = static_cast<std::size_t>(base[static_cast<std::size_t>(a)]);
    return Axis{i0.data() + b, i1.data() + b, lam.data() + b};
  }
};

struct ResizeSpec {
  bool linear = false;
  ResizeCoord coord = ResizeCoord::asymmetric;
  ResizeNearest nearest = ResizeNearest::floor;
  int scales_in = 2, sizes_in = 3;  // input positions (Upsample: scales = 1, no sizes)

  // From the node's attributes (opset < 11 and Upsample use the old form); errors name the
  // node. Cubic and tf_crop_and_resize are rejected.
  [[nodiscard]] static Expected<ResizeSpec> parse(const KernelSetup& s, bool upsample);
  // Output dims and per-axis scales from the (known) scales or sizes input.
  [[nodiscard]] Status plan(std::span<const ConstTensorView> in, const std::string& label, Dims& out,
                            float* scale) const;
  // Input coordinate of output index o on one axis.
  [[nodiscard]] float source(int64_t o, int64_t in, int64_t out, float s) const;
  void build_axis(int64_t in, int64_t out, float s, ResizeAxis m) const;
  // The tables of axes [first, last) of input dims x resized to out (scales from plan()). An
  // error when they would take more than kMaxKeptBytes (one huge output dim of a hostile model).
  [[nodiscard]] Expected<ResizeMaps> maps(const Dims& x, const Dims& out, const float* scale, int first,
                                          int last, const std::string& label) const;
};

}  // namespace weave
