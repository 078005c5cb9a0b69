#include "core/kernels/spatial.h"

#include <algorithm>
#include <climits>
#include <sstream>

namespace weave {

std::string ints_str(std::span<const int64_t> v) {
  std::ostringstream os;
  os << '[';
  for (std::size_t i = 0; i < v.size(); ++i) os << (i ? ", " : "") << v[i];
  os << ']';
  return os.str();
}

Expected<WindowAttrs> parse_window_attrs(const Attributes& attrs, const std::string& label) {
  WindowAttrs a;
  a.kernel = attrs.get_ints("kernel_shape");
  a.strides = attrs.get_ints("strides");
  a.dilations = attrs.get_ints("dilations");
  a.pads = attrs.get_ints("pads");
  a.ceil_mode = attrs.get_int("ceil_mode", 0) != 0;
  const std::string ap = attrs.get_string("auto_pad", "NOTSET");
  if (ap == "NOTSET" || ap.empty())
    a.auto_pad = AutoPad::notset;
  else if (ap == "SAME_UPPER")
    a.auto_pad = AutoPad::same_upper;
  else if (ap == "SAME_LOWER")
    a.auto_pad = AutoPad::same_lower;
  else if (ap == "VALID")
    a.auto_pad = AutoPad::valid;
  else
    return make_error(label, ": unknown auto_pad '", ap, "'");
  for (int64_t k : a.kernel)
    if (k <= 0 || k > (int64_t{1} << 20)) return make_error(label, ": bad kernel_shape ", ints_str(a.kernel));
  for (int64_t s : a.strides)
    if (s <= 0 || s > (int64_t{1} << 20)) return make_error(label, ": bad strides ", ints_str(a.strides));
  for (int64_t d : a.dilations)
    if (d <= 0 || d > (int64_t{1} << 20)) return make_error(label, ": bad dilations ", ints_str(a.dilations));
  for (int64_t p : a.pads)
    if (p < 0 || p > (int64_t{1} << 20)) return make_error(label, ": bad pads ", ints_str(a.pads));
  if (a.pads.size() % 2 != 0) return make_error(label, ": pads ", ints_str(a.pads), " has odd length");
  return a;
}

Expected<WindowGeometry> forward_geometry(const WindowAttrs& a, std::span<const int64_t> in,
                                          std::span<const int64_t> kernel, const std::string& label) {
  WindowGeometry g;
  const std::size_t nd = in.size();
  if (nd == 0 || nd > static_cast<std::size_t>(kMaxRank))
    return make_error(label, ": unsupported number of spatial dims ", nd);
  if (kernel.size() != nd)
    return make_error(label, ": kernel ", ints_str(kernel), " does not match input spatial dims ",
                      ints_str(in));
  if (!a.strides.empty() && a.strides.size() != nd)
    return make_error(label, ": strides ", ints_str(a.strides), " do not match spatial dims ", ints_str(in));
  if (!a.dilations.empty() && a.dilations.size() != nd)
    return make_error(label, ": dilations ", ints_str(a.dilations), " do not match spatial dims ",
                      ints_str(in));
  if (!a.pads.empty() && a.pads.size() != 2 * nd)
    return make_error(label, ": pads ", ints_str(a.pads), " do not match spatial dims ", ints_str(in));
  g.nd = static_cast<int>(nd);
  for (std::size_t i = 0; i < nd; ++i) {
    const int64_t n = in[i], k = kernel[i];
    const int64_t s = a.strides.empty() ? 1 : a.strides[i];
    const int64_t d = a.dilations.empty() ? 1 : a.dilations[i];
    if (k <= 0) return make_error(label, ": bad kernel ", ints_str(kernel));
    if (n < 0) return make_error(label, ": negative input size ", ints_str(in));
    const int64_t eff = (k - 1) * d + 1;
    int64_t pb = 0, pe = 0, out = 0;
    switch (a.auto_pad) {
      case AutoPad::notset:
        if (!a.pads.empty()) pb = a.pads[i], pe = a.pads[i + nd];
        break;
      case AutoPad::valid:
        break;
      case AutoPad::same_upper:
      case AutoPad::same_lower: {
        out = (n + s - 1) / s;
        const int64_t total = std::max<int64_t>(0, (out - 1) * s + eff - n);
        const int64_t small = total / 2, big = total - small;
        pb = a.auto_pad == AutoPad::same_upper ? small : big;
        pe = total - pb;
        break;
      }
    }
    if (a.auto_pad == AutoPad::notset || a.auto_pad == AutoPad::valid) {
      const int64_t span = n + pb + pe - eff;
      if (span < 0)
        return make_error(label, ": window ", ints_str(kernel), " (dilations ", ints_str(a.dilations),
                          ") is larger than the padded input ", ints_str(in));
      out = (a.ceil_mode ? (span + s - 1) / s : span / s) + 1;
      // The last window must start inside the input or the begin padding (PyTorch/ONNX rule).
      if (a.ceil_mode && (out - 1) * s >= n + pb) --out;
    }
    g.in[i] = n;
    g.out[i] = out;
    g.kernel[i] = k;
    g.stride[i] = s;
    g.dilation[i] = d;
    g.pad_begin[i] = pb;
    g.pad_end[i] = pe;
  }
  return g;
}

std::int64_t window_work(const WindowGeometry& g, std::int64_t outputs, std::int64_t per_tap) {
  if (outputs < 0 || per_tap < 0) return INT64_MAX;  // shape_numel's "too large"
  std::int64_t w = outputs;
  if (__builtin_mul_overflow(w, per_tap, &w)) return INT64_MAX;
  for (int i = 0; i < g.nd; ++i)
    if (g.kernel[i] < 0 || __builtin_mul_overflow(w, g.kernel[i], &w)) return INT64_MAX;
  return w;
}

}  // namespace weave
