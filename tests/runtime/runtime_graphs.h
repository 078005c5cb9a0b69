// Small hand-built graphs for the zero-copy, bounds and allocation tests. They use the real
// kernels of the global registry, so the no-allocation claims cover real run() code.
#pragma once

#include <cstring>
#include <vector>

#include "core/common/tensor.h"
#include "core/graph/graph.h"

namespace weave::test {

// x float32[1,2,?,?]
//   -> Conv(w[3,2,3,3], b[3], pads 1) -> c -> Relu -> r (output "relu", also read by Add)
//   -> Add(r, param 0.5) -> y (output "y")
// Shape(x) -> output "x_shape" (int64[4], known at plan time: never written in place)
inline Graph conv_graph() {
  Graph g;
  Value in;
  in.kind = ValueKind::input;
  in.dtype = DType::float32;
  in.shape = {1, 2, kDynamic, kDynamic};
  const int32_t x = g.add_value(in);
  g.inputs = {x};
  g.input_infos = {TensorInfo{"x", DType::float32, {1, 2, kDynamic, kDynamic}, {"", "", "h", "w"}}};
  std::vector<float> w(3 * 2 * 3 * 3), b{0.25f, -0.5f, 1.f};
  for (std::size_t i = 0; i < w.size(); ++i) w[i] = static_cast<float>(static_cast<int>(i % 7) - 3) * 0.125f;
  const int32_t wv =
      g.add_param(DType::float32, {3, 2, 3, 3}, SharedBytes::copy_of(std::as_bytes(std::span(w))));
  const int32_t bv = g.add_param(DType::float32, {3}, SharedBytes::copy_of(std::as_bytes(std::span(b))));
  const float half = 0.5f;
  const int32_t hv =
      g.add_param(DType::float32, {1}, SharedBytes::copy_of(std::as_bytes(std::span(&half, 1))));
  Value f;
  f.dtype = DType::float32;
  f.shape = {1, 3, kDynamic, kDynamic};
  const int32_t c = g.add_value(f);
  const int32_t r = g.add_value(f);
  const int32_t y = g.add_value(f);
  Value sv;
  sv.dtype = DType::int64;
  sv.shape = {4};
  const int32_t s = g.add_value(sv);
  Node conv;
  conv.op = "Conv";
  conv.inputs = {x, wv, bv};
  conv.outputs = {c};
  conv.attrs.set("kernel_shape", std::vector<int64_t>{3, 3});
  conv.attrs.set("pads", std::vector<int64_t>{1, 1, 1, 1});
  Node relu;
  relu.op = "Relu";
  relu.inputs = {c};
  relu.outputs = {r};
  Node add;
  add.op = "Add";
  add.inputs = {r, hv};
  add.outputs = {y};
  Node shape;
  shape.op = "Shape";
  shape.inputs = {x};
  shape.outputs = {s};
  g.nodes = {conv, relu, add, shape};
  g.outputs = {y, r, s};
  g.output_infos = {TensorInfo{"y", DType::float32, {1, 3, kDynamic, kDynamic}, {}},
                    TensorInfo{"relu", DType::float32, {1, 3, kDynamic, kDynamic}, {}},
                    TensorInfo{"x_shape", DType::int64, {4}, {}}};
  return g;
}

// The expected "y" and "relu" of conv_graph for input x (1x2xHxW), computed naively.
inline void conv_graph_reference(const std::vector<float>& x, int64_t h, int64_t w, std::vector<float>& relu,
                                 std::vector<float>& y) {
  std::vector<float> wt(3 * 2 * 3 * 3);
  for (std::size_t i = 0; i < wt.size(); ++i)
    wt[i] = static_cast<float>(static_cast<int>(i % 7) - 3) * 0.125f;
  const float b[3] = {0.25f, -0.5f, 1.f};
  relu.assign(static_cast<std::size_t>(3 * h * w), 0.f);
  y.assign(relu.size(), 0.f);
  for (int64_t o = 0; o < 3; ++o)
    for (int64_t i = 0; i < h; ++i)
      for (int64_t j = 0; j < w; ++j) {
        double acc = b[o];
        for (int64_t ci = 0; ci < 2; ++ci)
          for (int64_t ki = 0; ki < 3; ++ki)
            for (int64_t kj = 0; kj < 3; ++kj) {
              const int64_t ii = i + ki - 1, jj = j + kj - 1;
              if (ii < 0 || jj < 0 || ii >= h || jj >= w) continue;
              acc += static_cast<double>(wt[((o * 2 + ci) * 3 + ki) * 3 + kj]) * x[(ci * h + ii) * w + jj];
            }
        const float v = acc > 0 ? static_cast<float>(acc) : 0.f;
        relu[(o * h + i) * w + j] = v;
        y[(o * h + i) * w + j] = v + 0.5f;
      }
}

// a float32[batch,4] + b float32[batch,4] -> y (Add): two inputs sharing a dynamic dim.
inline Graph two_input_graph() {
  Graph g;
  Value in;
  in.kind = ValueKind::input;
  in.dtype = DType::float32;
  in.shape = {kDynamic, 4};
  const int32_t a = g.add_value(in);
  const int32_t b = g.add_value(in);
  g.inputs = {a, b};
  g.input_infos = {TensorInfo{"a", DType::float32, {kDynamic, 4}, {}},
                   TensorInfo{"b", DType::float32, {kDynamic, 4}, {}}};
  Value f;
  f.dtype = DType::float32;
  f.shape = {kDynamic, 4};
  const int32_t y = g.add_value(f);
  Node add;
  add.op = "Add";
  add.inputs = {a, b};
  add.outputs = {y};
  g.nodes = {add};
  g.outputs = {y};
  g.output_infos = {TensorInfo{"y", DType::float32, {kDynamic, 4}, {}}};
  return g;
}

// Shapes known only at run time, in two stages:
//   x float32[6], n int64[1]
//   s = Concat(n, [-1])          computed in the run (n is data)
//   r = Reshape(x, s); y = Relu(r)   -> output "y" float32[n, 6/n]   (cut 1: Reshape needs s)
//   c = Squeeze(n); z = Range(0, c, 1) -> output "z" int64[n]        (cut 2: Range needs c)
inline Graph run_time_shape_graph() {
  Graph g;
  Value xv;
  xv.kind = ValueKind::input;
  xv.dtype = DType::float32;
  xv.shape = {6};
  Value nv = xv;
  nv.dtype = DType::int64;
  nv.shape = {1};
  const int32_t x = g.add_value(xv);
  const int32_t n = g.add_value(nv);
  g.inputs = {x, n};
  g.input_infos = {TensorInfo{"x", DType::float32, {6}, {}}, TensorInfo{"n", DType::int64, {1}, {}}};
  auto i64 = [&](std::vector<int64_t> v, Shape shape) {
    return g.add_param(DType::int64, std::move(shape), SharedBytes::copy_of(std::as_bytes(std::span(v))));
  };
  const int32_t minus1 = i64({-1}, {1}), zero = i64({0}, {}), one = i64({1}, {}), axes0 = i64({0}, {1});
  auto value = [&](DType t, Shape shape) {
    Value v;
    v.dtype = t;
    v.shape = std::move(shape);
    return g.add_value(v);
  };
  const int32_t s = value(DType::int64, {2});
  const int32_t r = value(DType::float32, {kDynamic, kDynamic});
  const int32_t y = value(DType::float32, {kDynamic, kDynamic});
  const int32_t c = value(DType::int64, {});
  const int32_t z = value(DType::int64, {kDynamic});
  auto node = [](std::string op, std::vector<int32_t> in, std::vector<int32_t> out) {
    Node nd;
    nd.op = std::move(op);
    nd.inputs = std::move(in);
    nd.outputs = std::move(out);
    return nd;
  };
  Node concat = node("Concat", {n, minus1}, {s});
  concat.attrs.set("axis", int64_t{0});
  g.nodes = {concat, node("Reshape", {x, s}, {r}), node("Relu", {r}, {y}), node("Squeeze", {n, axes0}, {c}),
             node("Range", {zero, c, one}, {z})};
  g.outputs = {y, z};
  g.output_infos = {TensorInfo{"y", DType::float32, {kDynamic, kDynamic}, {}},
                    TensorInfo{"z", DType::int64, {kDynamic}, {}}};
  return g;
}

inline std::vector<float> ramp(std::size_t n, float scale = 0.01f) {
  std::vector<float> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<float>(static_cast<int>(i % 23) - 11) * scale;
  return v;
}

}  // namespace weave::test
