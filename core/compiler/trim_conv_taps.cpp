#include "core/compiler/trim_conv_taps.h"

#include <cstring>
#include <optional>

#include "core/compiler/graph_edit.h"

namespace weave {

using namespace compiler;

namespace {

// The taps [first, last] of one spatial axis that read input for some output position.
struct Window {
  int64_t first = 0, last = 0;
};

// Input size n, kernel k, stride s, dilation d, pads (lo, hi): the window of taps that read
// input, or nullopt when the axis has no output or no tap reads input (left to the kernels).
std::optional<Window> live_taps(int64_t n, int64_t k, int64_t s, int64_t d, int64_t lo, int64_t hi) {
  // Hostile dims (pads near 2^31, kernels of 2^32 taps): no sum or product may overflow.
  int64_t reach = 0, span = 0;
  if (__builtin_mul_overflow(d, k - 1, &reach) || __builtin_add_overflow(n, lo, &span) ||
      __builtin_add_overflow(span, hi, &span))
    return std::nullopt;
  if (__builtin_sub_overflow(span, reach, &span) || span < 1) return std::nullopt;
  span -= 1;  // n + lo + hi - d (k - 1) - 1 >= 0
  const int64_t outs = span / s + 1;
  std::optional<Window> w;
  for (int64_t t = 0; t < k; ++t) {
    // Output o reads input o * s - lo + t * d: is one of them inside [0, n)?
    const int64_t base = t * d - lo;  // input of output 0
    // Smallest o with base + o * s >= 0.
    const int64_t o = base >= 0 ? 0 : (-base - 1) / s + 1;  // -base <= lo: no overflow
    if (o >= outs || base + o * s >= n) continue;
    if (!w) w = Window{t, t};
    w->last = t;
  }
  return w;
}

// Node `ci` with the trimmed weights and attributes, when some axis loses taps.
void trim(Graph& g, Node& conv) {
  if (conv.inputs.size() < 2 || conv.outputs.size() != 1 || conv.inputs[0] < 0 ||
      !is_param(g, conv.inputs[1]))
    return;
  const Value& x = g.values[conv.inputs[0]];
  const Value& wv = g.values[conv.inputs[1]];
  // Weights with bytes bound the kernel's taps (the loop below visits each); a zero dim leaves
  // the other dims unchecked by the importer.
  if (wv.dtype != DType::float32 || wv.shape.size() < 3 || shape_numel(wv.shape) <= 0 || !x.rank_known ||
      x.shape.size() != wv.shape.size())
    return;
  const std::size_t nd = wv.shape.size() - 2;
  const std::string pad_mode = conv.attrs.get_string("auto_pad", "NOTSET");
  if (pad_mode != "NOTSET" && pad_mode != "VALID") return;
  std::vector<int64_t> strides = conv.attrs.get_ints("strides", std::vector<int64_t>(nd, 1));
  std::vector<int64_t> dil = conv.attrs.get_ints("dilations", std::vector<int64_t>(nd, 1));
  std::vector<int64_t> pads = conv.attrs.get_ints("pads", std::vector<int64_t>(2 * nd, 0));
  if (pad_mode == "VALID") pads.assign(2 * nd, 0);
  if (strides.size() != nd || dil.size() != nd || pads.size() != 2 * nd) return;
  if (conv.attrs.has("kernel_shape") &&
      conv.attrs.get_ints("kernel_shape") != std::vector<int64_t>(wv.shape.begin() + 2, wv.shape.end()))
    return;
  Shape kept = wv.shape;
  std::vector<int64_t> first(nd, 0);
  bool trimmed = false;
  for (std::size_t a = 0; a < nd; ++a) {
    const int64_t n = x.shape[2 + a], k = wv.shape[2 + a];
    if (n < 0 || k < 1 || strides[a] < 1 || dil[a] < 1 || pads[a] < 0 || pads[a + nd] < 0) return;
    const std::optional<Window> w = live_taps(n, k, strides[a], dil[a], pads[a], pads[a + nd]);
    if (!w) return;
    // Taps before the window read only the low padding: the pad shrinks by their reach, and by
    // the reach of those after it on the high side, so every output keeps its inputs.
    const int64_t lo = pads[a] - w->first * dil[a], hi = pads[a + nd] - (k - 1 - w->last) * dil[a];
    if (lo < 0 || hi < 0) return;  // the window does not start in the padding: keep the node
    if (w->first == 0 && w->last == k - 1) continue;
    pads[a] = lo;
    pads[a + nd] = hi;
    first[a] = w->first;
    kept[2 + a] = w->last - w->first + 1;
    trimmed = true;
  }
  if (!trimmed) return;

  // The kept window of every [m][c] kernel, copied row by row along the last axis.
  const float* src = param_view(g, conv.inputs[1]).as<float>();
  AlignedBuffer buf(static_cast<std::size_t>(shape_numel(kept)) * sizeof(float));
  auto* dst = reinterpret_cast<float*>(buf.data());
  const int64_t kernels = kept[0] * kept[1];
  int64_t src_size = 1, dst_size = 1;
  for (std::size_t a = 0; a < nd; ++a) src_size *= wv.shape[2 + a], dst_size *= kept[2 + a];
  const int64_t row = kept.back(), rows = dst_size / row;
  for (int64_t kc = 0; kc < kernels; ++kc) {
    for (int64_t r = 0; r < rows; ++r) {
      // r's position in the kept window, axis by axis (the last axis is the row), to source offset.
      int64_t rest = r, off = first[nd - 1];
      int64_t stride = wv.shape.back();
      for (std::size_t a = nd - 1; a-- > 0;) {
        const int64_t i = rest % kept[2 + a];
        rest /= kept[2 + a];
        off += (i + first[a]) * stride;
        stride *= wv.shape[2 + a];
      }
      std::memcpy(dst + kc * dst_size + r * row, src + kc * src_size + off, row * sizeof(float));
    }
  }
  conv.inputs[1] = g.add_param(DType::float32, kept, SharedBytes::from(std::move(buf)));
  conv.attrs.set("pads", pads);
  conv.attrs.set("auto_pad", std::string("NOTSET"));
  if (conv.attrs.has("kernel_shape"))
    conv.attrs.set("kernel_shape", std::vector<int64_t>(kept.begin() + 2, kept.end()));
}

}  // namespace

Status trim_conv_taps(Graph& g) {
  if (!inputs_static(g)) return {};
  for (Node& n : g.nodes)
    if (n.op == "Conv") trim(g, n);
  return {};
}

}  // namespace weave
