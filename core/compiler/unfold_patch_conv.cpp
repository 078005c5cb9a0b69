#include "core/compiler/unfold_patch_conv.h"

#include <algorithm>
#include <map>
#include <span>
#include <string>

#include "core/compiler/graph_edit.h"

namespace weave {

using namespace compiler;

namespace {

// The kernel dims of a Conv whose windows tile x exactly, or empty.
Shape patch_kernel(const Graph& g, const Node& n) {
  if (n.op != "Conv" || n.inputs.size() < 2 || n.inputs.size() > 3 || n.outputs.size() != 1) return {};
  if (n.inputs[0] < 0 || !is_param(g, n.inputs[1]) || n.attrs.get_int("group", 1) != 1) return {};
  const Value& x = g.values[n.inputs[0]];
  const Value& w = g.values[n.inputs[1]];
  if (x.dtype != DType::float32 || w.dtype != DType::float32 || !x.rank_known || x.shape.size() != 4 ||
      w.shape.size() != 4)
    return {};
  const int64_t kh = w.shape[2], kw = w.shape[3], c = w.shape[1];
  for (int64_t d : x.shape)
    if (d < 1) return {};
  // Kernel dims checked against the input's before any product (hostile weights of 2^32 taps).
  if (kh < 1 || kw < 1 || kh > x.shape[2] || kw > x.shape[3] || x.shape[2] % kh != 0 || x.shape[3] % kw != 0)
    return {};
  if (kh * kw <= c || x.shape[1] != c || shape_numel(w.shape) <= 0) return {};
  const std::string pad = n.attrs.get_string("auto_pad", "NOTSET");
  if (pad != "NOTSET" && pad != "VALID") return {};
  if (n.attrs.get_ints("strides", {1, 1}) != std::vector<int64_t>{kh, kw}) return {};
  if (n.attrs.get_ints("dilations", {1, 1}) != std::vector<int64_t>{1, 1}) return {};
  const std::vector<int64_t> pads = n.attrs.get_ints("pads", {0, 0, 0, 0});
  if (pad == "NOTSET" && std::any_of(pads.begin(), pads.end(), [](int64_t p) { return p != 0; })) return {};
  if (n.attrs.has("kernel_shape") && n.attrs.get_ints("kernel_shape") != std::vector<int64_t>{kh, kw})
    return {};
  return Shape{kh, kw};
}

int32_t int64_param(Graph& g, const std::vector<int64_t>& v) {
  return g.add_param(DType::int64, Shape{static_cast<int64_t>(v.size())},
                     SharedBytes::copy_of(std::as_bytes(std::span<const int64_t>(v))));
}

int32_t value_of_shape(Graph& g, Shape shape) {
  Value v;
  v.dtype = DType::float32;
  v.shape = std::move(shape);
  return g.add_value(v);
}

}  // namespace

Status unfold_patch_conv(Graph& g) {
  if (!inputs_static(g)) return {};
  std::vector<Node> old = std::move(g.nodes);
  g.nodes.clear();
  std::map<int32_t, std::string> old_names = std::move(g.names.nodes);
  g.names.nodes.clear();
  for (std::size_t i = 0; i < old.size(); ++i) {
    Node n = std::move(old[i]);
    const auto name = old_names.find(static_cast<int32_t>(i));
    const Shape k = patch_kernel(g, n);
    if (!k.empty()) {
      const Shape x = g.values[n.inputs[0]].shape;
      const Shape w = g.values[n.inputs[1]].shape;
      const int64_t N = x[0], C = x[1], oh = x[2] / k[0], ow = x[3] / k[1], depth = C * k[0] * k[1];
      const int32_t split = value_of_shape(g, {N, C, oh, k[0], ow, k[1]});
      const int32_t moved = value_of_shape(g, {N, C, k[0], k[1], oh, ow});
      const int32_t patches = value_of_shape(g, {N, depth, oh, ow});
      Node r1;
      r1.op = "Reshape";
      r1.inputs = {n.inputs[0], int64_param(g, {N, C, oh, k[0], ow, k[1]})};
      r1.outputs = {split};
      Node t;
      t.op = "Transpose";
      t.inputs = {split};
      t.outputs = {moved};
      t.attrs.set("perm", std::vector<int64_t>{0, 1, 3, 5, 2, 4});
      Node r2;
      r2.op = "Reshape";
      r2.inputs = {moved, int64_param(g, {N, depth, oh, ow})};
      r2.outputs = {patches};
      // The weights' bytes as they are: [M][C][kh][kw] is [M][C*kh*kw] in the patch order above.
      const ConstTensorView wv = param_view(g, n.inputs[1]);
      const int32_t w1 = g.add_param(DType::float32, Shape{w[0], depth, 1, 1},
                                     SharedBytes::copy_of(std::span<const std::byte>(
                                         static_cast<const std::byte*>(wv.data),
                                         static_cast<std::size_t>(shape_numel(w)) * sizeof(float))));
      for (Node* p : {&r1, &t, &r2}) g.nodes.push_back(std::move(*p));
      n.inputs[0] = patches;
      n.inputs[1] = w1;
      n.attrs.set("kernel_shape", std::vector<int64_t>{1, 1});
      n.attrs.set("strides", std::vector<int64_t>{1, 1});
      n.attrs.set("dilations", std::vector<int64_t>{1, 1});
      n.attrs.set("pads", std::vector<int64_t>{0, 0, 0, 0});
      n.attrs.set("auto_pad", std::string("NOTSET"));
    }
    if (name != old_names.end()) g.names.nodes[static_cast<int32_t>(g.nodes.size())] = name->second;
    g.nodes.push_back(std::move(n));
  }
  return {};
}

}  // namespace weave
