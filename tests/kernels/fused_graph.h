// Shared by the tests of the fast registry's fusing passes (ExpandDepthwise, ConvConcat,
// ScaledConv): runs a compiled graph through a Factory of a given registry and returns its
// outputs, and compares them with the reference kernels'.
#pragma once

#include <algorithm>
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <string>
#include <vector>

#include "core/kernels/fast/fast_ops.h"
#include "core/kernels/registry.h"
#include "core/runtime/executor.h"
#include "core/runtime/factory.h"
#include "tests/compiler/graph_build.h"

namespace weave::test {

// Whether the fast path runs here (the passes fuse nothing without it); says so when not.
inline bool have_fast() {
  if (fast::ops() != nullptr) return true;
  BOOST_TEST_MESSAGE("no fast path on this CPU (or WEAVE_ISA=none): nothing is fused");
  return false;
}

// Runs `compiled` on the one float input x of dims `in` with `threads` threads; returns every
// output's floats, one after the other. With `fused_op`, *fused_nodes is set to how many nodes
// of that op the Factory's graph holds (what the passes made of it).
inline std::vector<float> run_fused_graph(const Graph& compiled, const KernelRegistry* registry, int threads,
                                          const Dims& in, const std::vector<float>& x,
                                          const std::string& fused_op = {}, int* fused_nodes = nullptr) {
  FactoryOptions fo;
  fo.registry = registry;
  fo.dedup_params = false;
  auto f = Factory::create(compiled, fo);
  BOOST_REQUIRE_MESSAGE(f, (f ? "" : f.message()));
  if (fused_nodes) *fused_nodes = count_op((*f)->graph(), fused_op);
  ExecutorOptions eo;
  eo.threads = threads;
  auto ex = Executor::create(*f, eo);
  BOOST_REQUIRE(ex);
  ConstTensorView view{x.data(), DType::float32, in};
  auto outs = ex->run(std::span<const ConstTensorView>(&view, 1));
  BOOST_REQUIRE_MESSAGE(outs, (outs ? "" : outs.message()));
  std::vector<float> all;
  for (const auto& t : *outs) {
    const ConstTensorView o = t.view();
    all.insert(all.end(), o.as<float>(), o.as<float>() + o.numel());
  }
  return all;
}

// The largest |fast - ref| / (1 + |ref|) over the outputs (the sizes must agree).
inline double worst_relative_error(const std::vector<float>& fast, const std::vector<float>& ref) {
  BOOST_TEST_REQUIRE(fast.size() == ref.size());
  double worst = 0;
  for (std::size_t i = 0; i < ref.size(); ++i)
    worst = std::max(worst, std::abs(double(fast[i]) - ref[i]) / (1.0 + std::abs(double(ref[i]))));
  return worst;
}

}  // namespace weave::test
