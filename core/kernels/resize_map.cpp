#include "core/kernels/resize_map.h"

#include <algorithm>
#include <cmath>

#include "core/kernels/kernel_util.h"

namespace weave {

Expected<ResizeSpec> ResizeSpec::parse(const KernelSetup& s, bool upsample) {
  ResizeSpec spec;
  const auto& at = s.node.attrs;
  const bool old = upsample || s.opset < 11;
  if (old)
    WEAVE_TRY(kern::require_inputs(s, 2, 2));
  else
    WEAVE_TRY(kern::require_inputs(s, 1, 4));
  WEAVE_TRY(kern::require_float(s, {0}));
  const std::string mode = at.get_string("mode", "nearest");
  if (mode == "linear" || mode == "bilinear")
    spec.linear = true;
  else if (mode == "cubic")
    return make_error(s.label, ": Resize mode 'cubic' is not supported by the reference kernel");
  else if (mode != "nearest")
    return make_error(s.label, ": unknown Resize mode '", mode, "'");
  if (!old) {
    const std::string c = at.get_string("coordinate_transformation_mode", "half_pixel");
    if (c == "half_pixel")
      spec.coord = ResizeCoord::half_pixel;
    else if (c == "pytorch_half_pixel")
      spec.coord = ResizeCoord::pytorch_half_pixel;
    else if (c == "align_corners")
      spec.coord = ResizeCoord::align_corners;
    else if (c == "asymmetric")
      spec.coord = ResizeCoord::asymmetric;
    else if (c == "tf_half_pixel_for_nearest")
      spec.coord = ResizeCoord::tf_half_pixel_for_nearest;
    else
      return make_error(s.label, ": coordinate_transformation_mode '", c, "' is not supported");
    const std::string n = at.get_string("nearest_mode", "round_prefer_floor");
    if (n == "round_prefer_floor")
      spec.nearest = ResizeNearest::round_prefer_floor;
    else if (n == "round_prefer_ceil")
      spec.nearest = ResizeNearest::round_prefer_ceil;
    else if (n == "floor")
      spec.nearest = ResizeNearest::floor;
    else if (n == "ceil")
      spec.nearest = ResizeNearest::ceil;
    else
      return make_error(s.label, ": unknown nearest_mode '", n, "'");
    if (at.has("axes") || at.get_string("keep_aspect_ratio_policy", "stretch") != "stretch")
      return make_error(s.label, ": Resize axes / keep_aspect_ratio_policy are not supported");
    if (at.get_int("antialias", 0) != 0) return make_error(s.label, ": Resize antialias is not supported");
  }
  spec.scales_in = old ? 1 : 2;
  spec.sizes_in = old ? -1 : 3;
  return spec;
}

Status ResizeSpec::plan(std::span<const ConstTensorView> in, const std::string& label, Dims& out,
                        float* scale) const {
  const Dims& x = in[0].dims;
  const int r = x.rank();
  auto known = [&](int i) {
    return i >= 0 && static_cast<std::size_t>(i) < in.size() && in[i].present() && in[i].numel() > 0;
  };
  out = x;
  if (known(sizes_in)) {
    const ConstTensorView& s = in[sizes_in];
    if (s.data == nullptr)
      return make_error(label, ": Resize sizes must be known before running (a constant)");
    if (s.dtype != DType::int64 || s.numel() != r)
      return make_error(label, ": sizes ", kern::dims_bracketed(s.dims),
                        " must be int64 with one value per dim of input ", kern::dims_bracketed(x));
    for (int i = 0; i < r; ++i) {
      const int64_t v = s.as<int64_t>()[i];
      if (v <= 0 || v > (int64_t{1} << 31))
        return make_error(label, ": bad sizes value ", v, " for input ", kern::dims_bracketed(x));
      out[i] = v;
      scale[i] = x[i] > 0 ? static_cast<float>(v) / static_cast<float>(x[i]) : 1.f;
    }
  } else if (known(scales_in)) {
    const ConstTensorView& s = in[scales_in];
    if (s.data == nullptr)
      return make_error(label, ": Resize scales must be known before running (a constant)");
    if (s.dtype != DType::float32 || s.numel() != r)
      return make_error(label, ": scales ", kern::dims_bracketed(s.dims),
                        " must be float32 with one value per dim of input ", kern::dims_bracketed(x));
    for (int i = 0; i < r; ++i) {
      const float v = s.as<float>()[i];
      const double o = std::floor(static_cast<double>(x[i]) * v);
      if (!(v > 0.f) || o > static_cast<double>(int64_t{1} << 31))
        return make_error(label, ": bad scales value ", v, " for input ", kern::dims_bracketed(x));
      out[i] = static_cast<int64_t>(o);
      scale[i] = v;
    }
  } else {
    return make_error(label, ": Resize needs a non-empty scales or sizes input");
  }
  return {};
}

float ResizeSpec::source(int64_t o, int64_t in, int64_t out, float s) const {
  const float x = static_cast<float>(o);
  switch (coord) {
    case ResizeCoord::half_pixel:
      return (x + 0.5f) / s - 0.5f;
    case ResizeCoord::pytorch_half_pixel:
      return out > 1 ? (x + 0.5f) / s - 0.5f : 0.f;
    case ResizeCoord::align_corners: {
      // ONNX's reference divides by the unrounded output length in * scale (scales 0.6 of 4
      // reach 2.4 for 2 outputs); with sizes the scale is out / in, so this is out - 1.
      const float length = static_cast<float>(in) * s;
      return out == 1 || !(length > 1.f) ? 0.f : x * static_cast<float>(in - 1) / (length - 1.f);
    }
    case ResizeCoord::asymmetric:
      return x / s;
    case ResizeCoord::tf_half_pixel_for_nearest:
      return (x + 0.5f) / s;
  }
  return x;
}

void ResizeSpec::build_axis(int64_t in, int64_t out, float s, ResizeAxis m) const {
  for (int64_t o = 0; o < out; ++o) {
    const float c = source(o, in, out, s);
    if (linear) {
      const float cc =
          std::isnan(c) ? 0.f : std::clamp(c, 0.f, static_cast<float>(in - 1));  // NaN: hostile scales
      const auto f = static_cast<int64_t>(std::floor(cc));
      m.i0[o] = f;
      m.i1[o] = std::min(f + 1, in - 1);
      m.lam[o] = cc - static_cast<float>(f);
    } else {
      float r = 0;
      switch (nearest) {
        case ResizeNearest::round_prefer_floor:
          r = c == std::floor(c) + 0.5f ? std::floor(c) : std::round(c);
          break;
        case ResizeNearest::round_prefer_ceil:
          r = std::round(c);
          break;  // std::round rounds halves away from 0
        case ResizeNearest::floor:
          r = std::floor(c);
          break;
        case ResizeNearest::ceil:
          r = std::ceil(c);
          break;
      }
      if (nearest == ResizeNearest::round_prefer_ceil && c < 0 && c == std::floor(c) + 0.5f) r = std::ceil(c);
      m.i0[o] = std::clamp(static_cast<int64_t>(r), int64_t{0}, in - 1);
      m.i1[o] = m.i0[o];
      m.lam[o] = 0.f;
    }
  }
}

Expected<ResizeMaps> ResizeSpec::maps(const Dims& x, const Dims& out, const float* scale, int first, int last,
                                      const std::string& label) const {
  ResizeMaps m;
  m.out = out;
  int64_t total = 0;
  for (int a = first; a < last; ++a) {
    m.base[static_cast<std::size_t>(a)] = total;
    total += out[a];
  }
  const auto bytes = static_cast<uint64_t>(total) * (2 * sizeof(int64_t) + sizeof(float));
  if (bytes > kMaxKeptBytes)
    return make_error(label, ": Resize to ", shape_str(out.span()), " needs ", bytes,
                      " bytes of index tables, above the ", kMaxKeptBytes, " a plan keeps");
  m.i0.resize(static_cast<std::size_t>(total));
  m.i1.resize(static_cast<std::size_t>(total));
  m.lam.resize(static_cast<std::size_t>(total));
  for (int a = first; a < last; ++a) {
    const auto b = static_cast<std::size_t>(m.base[static_cast<std::size_t>(a)]);
    build_axis(x[a], out[a], scale[a], ResizeAxis{m.i0.data() + b, m.i1.data() + b, m.lam.data() + b});
  }
  return m;
}

}  // namespace weave
