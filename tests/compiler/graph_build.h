// Helpers for building small graphs by hand in the compiler tests.
#pragma once

#include <boost/test/unit_test.hpp>
#include <cstring>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "core/graph/graph.h"

namespace weave::test {

// n floats uniform in [-scale, scale), the same for the same seed.
inline std::vector<float> random_floats(std::size_t n, unsigned seed, float scale = 2.f) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-scale, scale);
  std::vector<float> v(n);
  for (float& f : v) f = u(rng);
  return v;
}

inline int32_t add_f32(Graph& g, Shape shape, std::vector<float> v) {
  return g.add_param(DType::float32, std::move(shape),
                     SharedBytes::copy_of(std::as_bytes(std::span<const float>(v))));
}

inline int32_t add_input(Graph& g, const std::string& name, Shape shape) {
  Value v;
  v.kind = ValueKind::input;
  v.dtype = DType::float32;
  v.shape = shape;
  int32_t id = g.add_value(v);
  g.inputs.push_back(id);
  g.input_infos.push_back(TensorInfo{name, DType::float32, shape, {}});
  return id;
}

inline int32_t add_node(Graph& g, const std::string& op, std::vector<int32_t> inputs, int outputs = 1,
                        Attributes attrs = {}) {
  Node n;
  n.op = op;
  n.inputs = std::move(inputs);
  n.attrs = std::move(attrs);
  for (int i = 0; i < outputs; ++i) {
    Value v;
    v.dtype = DType::float32;
    n.outputs.push_back(g.add_value(v));
  }
  g.nodes.push_back(std::move(n));
  return g.nodes.back().outputs[0];
}

inline void set_output(Graph& g, int32_t value, const std::string& name) {
  g.outputs.push_back(value);
  g.output_infos.push_back(TensorInfo{name, DType::float32, {}, {}});
}

inline std::vector<float> param_floats(const Graph& g, int32_t value) {
  BOOST_REQUIRE(g.values[value].kind == ValueKind::param);
  const auto& d = g.params[g.values[value].param].data;
  std::vector<float> out(d.size() / sizeof(float));
  std::memcpy(out.data(), d.data(), d.size());
  return out;
}

inline int count_op(const Graph& g, const std::string& op) {
  int n = 0;
  for (const Node& node : g.nodes) n += node.op == op;
  return n;
}

}  // namespace weave::test
