// The kernel interface. Every operator implementation (reference or fast) is a Kernel made by
// a factory function registered under its ONNX op type. The life of a kernel:
//
//   create   once per Factory: validate attributes and param inputs, pack weights.
//            A factory may decline (return nullptr) so that a lower-priority kernel is tried.
//   infer    whenever the executor's input shapes change (never per run): concrete output
//            dtypes and dims from input dims (and from input values known before running:
//            params and shape-derived tensors), the bytes of scratch run() needs, and what
//            run() needs of the shapes themselves (ShapeContext::keep: window geometry, a
//            matrix product's plan), which the plan keeps for these shapes.
//   run      per inference: no allocation, no validation, nothing worked out again; inputs
//            and outputs are bound views, RunContext::kept() what infer() kept.
//
// Kernels are immutable after create, so one kernel serves every Executor of a Factory at once.
#pragma once

#include <cassert>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <utility>

#include "core/common/buffer.h"
#include "core/common/parallel.h"
#include "core/common/status.h"
#include "core/common/tensor.h"
#include "core/graph/graph.h"

namespace weave {

struct KernelSetup {
  const Node& node;
  std::string label;                           // e.g. "node 12 (Conv '/backbone/conv1')", for messages
  std::span<const Value* const> inputs;        // static info per input; nullptr for an omitted input
  std::span<const ConstTensorView> constants;  // per input: the param's bytes, or data == nullptr
  int opset = 13;                              // default-domain opset of the model
  // Out: bit k set by kern::require_float when the kernel reads input k as float32. The static
  // dtype checked at create may be unknown (inference could not type the value); the planner
  // then checks the concrete dtype before infer() (Kernel::float_inputs).
  mutable uint32_t float_inputs = 0;
};

// What a kernel works out in infer() for one set of input shapes and run() needs again (the
// Prepare/Eval split of TFLite Micro, XNNPACK's reshape/setup). Kernels are shared by executors
// planned for different shapes, so this lives in the plan: one per node and shape.
class KernelState {
 public:
  virtual ~KernelState() = default;
};

// What infer() keeps is a few entries per dim, small next to the tensors; a kernel that would
// keep more than this (a hostile model's huge dim) refuses the shape instead, so that planning
// never allocates without bound.
inline constexpr uint64_t kMaxKeptBytes = uint64_t{1} << 28;

template <class T>
struct Kept final : KernelState {
  explicit Kept(T v) : value(std::move(v)) {}
  T value;
};

struct ShapeContext {
  // Per input: dtype and concrete dims; data is non-null only when the value is known before
  // running (a param, or a tensor computed from shapes). Omitted inputs have dtype undefined.
  std::span<const ConstTensorView> inputs;
  // Per output: the kernel sets dtype and dims; data is ignored.
  std::span<TensorView> outputs;
  // Scratch bytes run() needs for these shapes; set by the kernel.
  std::size_t workspace = 0;
  const std::string& label;  // for messages
  // Out: what run() needs of these shapes; the plan keeps it and hands it to run().
  std::shared_ptr<const KernelState> state{};
  template <class T>
  void keep(T value) {
    state = std::make_shared<const Kept<T>>(std::move(value));
  }
  // Out, optional: the steps (multiply-adds, comparisons) run() takes for these shapes, set by
  // kernels whose work grows faster than their output (windows, products); 0 = about the
  // outputs' size. Constant folding leaves a node alone when this is large (a hostile window
  // could make compiling take minutes).
  std::int64_t work = 0;
};

struct RunContext {
  std::span<const ConstTensorView> inputs;
  std::span<const TensorView> outputs;
  std::span<std::byte> workspace;  // at least the bytes infer() asked for, 64-byte aligned
  const Parallel& parallel;
  const KernelState* state = nullptr;  // what infer() kept for these shapes
  // The value infer() kept (ShapeContext::keep) for these shapes, of the type it kept.
  template <class T>
  [[nodiscard]] const T& kept() const {
    assert(dynamic_cast<const Kept<T>*>(state) != nullptr);
    return static_cast<const Kept<T>*>(state)->value;
  }
};

class Kernel {
 public:
  virtual ~Kernel() = default;
  [[nodiscard]] virtual Status infer(ShapeContext& ctx) const = 0;
  virtual void run(const RunContext& ctx) const = 0;
  // Bit k set: infer() needs the values of input k, not only its dims (Reshape's shape,
  // Slice's starts, TopK's K, NonZero's data). When such a value is computed from input data,
  // the planner stops before this node and plans the rest once the value is known at run time
  // (core/runtime/plan.h). Inputs infer() reads only when present and known may be listed too.
  [[nodiscard]] virtual uint32_t value_inputs() const { return 0; }
  // Bit k set: run() reads input k as float32 whatever dtype reaches it, so the planner refuses
  // any other concrete dtype, naming the node (set by KernelRegistry::create from
  // KernelSetup::float_inputs: a bool tensor fed to the reference Softmax was read as floats past
  // its end, fuzz_onnx).
  [[nodiscard]] uint32_t float_inputs() const { return float_inputs_; }
  void set_float_inputs(uint32_t bits) { float_inputs_ = bits; }

  // Blocks the kernel derived from constant inputs at create (packed weights). Before the
  // kernel is shared, the Factory may swap each for equal bytes held once per process
  // (ParamStore, R6), so kernels read them through these SharedBytes only.
  virtual void visit_packed(FunctionRef<void(SharedBytes&)> /*fn*/) {}
  // True when run() never reads constant input k because create() kept what it needs; once
  // every reader of a param says so, the Factory drops the param's bytes.
  [[nodiscard]] virtual bool packs_input(std::size_t /*k*/) const { return false; }
  // Bit k set: the kernel may write output 0 over input k (core/kernels/in_place.h says when
  // the planner lets it); for kernels that know this of themselves.
  [[nodiscard]] virtual uint32_t in_place() const { return 0; }
  // True when output 0 is input 0's bytes under other dims (Reshape, Flatten, Squeeze,
  // Unsqueeze): it may take input 0's memory whatever the two dims are, and then run() moves
  // nothing. in_place() must say input 0 too.
  [[nodiscard]] virtual bool relabels() const { return false; }

 private:
  uint32_t float_inputs_ = 0;
};

// value_inputs() mask of inputs [first, last].
[[nodiscard]] constexpr uint32_t input_bits(int first, int last) {
  uint32_t m = 0;
  for (int i = first; i <= last; ++i) m |= 1u << i;
  return m;
}

// Returns a kernel, nullptr to decline (the registry then tries the next candidate), or an Error
// that names the node and what is wrong with it.
using KernelFactory = Expected<std::unique_ptr<Kernel>> (*)(const KernelSetup&);

}  // namespace weave
