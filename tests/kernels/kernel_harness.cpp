#include "tests/kernels/kernel_harness.h"

#include <cmath>
#include <limits>
#include <memory>
#include <thread>
#include <vector>

#include "core/graph/graph.h"
#include "core/kernels/registry.h"

namespace weave::test {
namespace {

// A small pool for kernel tests of intra-op parallel paths: one std::thread per extra chunk.
class ThreadsParallel final : public Parallel {
 public:
  explicit ThreadsParallel(int n) : n_(n) {}
  [[nodiscard]] int threads() const override { return n_; }
  void for_range(int64_t n, int64_t grain, FunctionRef<void(int64_t, int64_t)> fn) const override {
    if (n <= 0) return;
    int64_t chunks = std::min<int64_t>(n_, std::max<int64_t>(1, n / std::max<int64_t>(1, grain)));
    int64_t step = (n + chunks - 1) / chunks;
    std::vector<std::thread> ts;
    for (int64_t b = step; b < n; b += step) ts.emplace_back([&, b] { fn(b, std::min(n, b + step)); });
    fn(0, std::min(n, step));
    for (auto& t : ts) t.join();
  }

 private:
  int n_;
};

}  // namespace

Expected<std::vector<Tensor>> run_kernel(const KernelCase& c, std::string_view impl, int threads) {
  ThreadsParallel par(threads);
  return run_kernel(c, impl, par);
}

Expected<std::vector<Tensor>> run_kernel(const KernelCase& c, std::string_view impl, const Parallel& par) {
  const std::size_t n_in = c.inputs.size();
  std::vector<Value> values(n_in);
  std::vector<const Value*> value_ptrs(n_in, nullptr);
  std::vector<ConstTensorView> constants(n_in);
  std::vector<ConstTensorView> known(n_in);
  Node node;
  node.op = c.op;
  node.attrs = c.attrs;
  for (std::size_t i = 0; i < n_in; ++i) {
    const Tensor& t = c.inputs[i];
    if (t.dtype() == DType::undefined) {
      node.inputs.push_back(kNoValue);
      continue;
    }
    node.inputs.push_back(static_cast<int32_t>(i));
    bool is_const = i < c.constant.size() && c.constant[i];
    values[i].kind = is_const ? ValueKind::param : ValueKind::intermediate;
    values[i].dtype = t.dtype();
    values[i].shape = t.dims().to_shape();
    value_ptrs[i] = &values[i];
    known[i] = ConstTensorView{is_const ? t.data() : nullptr, t.dtype(), t.dims()};
    if (is_const) constants[i] = t.view();
  }
  for (int o = 0; o < c.num_outputs; ++o) node.outputs.push_back(static_cast<int32_t>(n_in + o));

  const std::string label = "test node (" + c.op + ")";
  KernelSetup setup{node, label, value_ptrs, constants, c.opset};
  auto& reg = KernelRegistry::global();
  auto kernel = impl.empty() ? reg.create(setup) : reg.create(setup, impl);
  if (!kernel) return kernel.error();

  std::vector<TensorView> outs(c.num_outputs);
  ShapeContext sc{known, outs, 0, label};
  WEAVE_TRY((*kernel)->infer(sc));

  std::vector<Tensor> results;
  results.reserve(outs.size());
  for (auto& o : outs) {
    results.emplace_back(o.dtype, o.dims);
    o.data = results.back().data();
  }
  AlignedBuffer ws(sc.workspace);
  std::vector<ConstTensorView> ins(n_in);
  for (std::size_t i = 0; i < n_in; ++i) ins[i] = c.inputs[i].view();
  RunContext rc{ins, outs, ws.span(), par, sc.state.get()};
  (*kernel)->run(rc);
  return results;
}

Tensor make_f32(Dims dims, std::vector<float> values) {
  return Tensor::from<float>(dims, values);
}

Tensor make_i64(Dims dims, std::vector<int64_t> values) {
  return Tensor::from<int64_t>(dims, values);
}

Tensor random_f32(Dims dims, uint32_t seed, float lo, float hi) {
  Tensor t(DType::float32, dims);
  uint32_t s = seed * 2654435761u + 12345u;
  float* p = t.as<float>();
  for (int64_t i = 0; i < t.numel(); ++i) {
    s ^= s << 13;
    s ^= s >> 17;
    s ^= s << 5;
    p[i] = lo + (hi - lo) * static_cast<float>(s >> 8) / static_cast<float>(1u << 24);
  }
  return t;
}

double max_abs_diff(const Tensor& a, const Tensor& b) {
  if (a.dtype() != b.dtype() || !(a.dims() == b.dims())) return std::numeric_limits<double>::infinity();
  double m = 0;
  auto cmp = [&](auto* pa, auto* pb) {
    for (int64_t i = 0; i < a.numel(); ++i)
      m = std::max(m, std::fabs(static_cast<double>(pa[i]) - static_cast<double>(pb[i])));
  };
  switch (a.dtype()) {
    case DType::float32:
      cmp(a.as<float>(), b.as<float>());
      break;
    case DType::float64:
      cmp(a.as<double>(), b.as<double>());
      break;
    case DType::int64:
      cmp(a.as<int64_t>(), b.as<int64_t>());
      break;
    case DType::int32:
      cmp(a.as<int32_t>(), b.as<int32_t>());
      break;
    case DType::uint8:
      cmp(a.as<uint8_t>(), b.as<uint8_t>());
      break;
    case DType::int8:
      cmp(a.as<int8_t>(), b.as<int8_t>());
      break;
    case DType::boolean:
      cmp(a.as<uint8_t>(), b.as<uint8_t>());
      break;
    default:
      return std::numeric_limits<double>::infinity();
  }
  return m;
}

}  // namespace weave::test
