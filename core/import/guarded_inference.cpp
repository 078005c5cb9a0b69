#include "core/import/guarded_inference.h"

#include <cstdint>
#include <cstring>
#include <set>
#include <vector>

#include "onnx/defs/shape_inference.h"

namespace weave::onnx_import {

namespace {

// The rank of input i when the context knows it, else -1.
int input_rank(onnx::InferenceContext& ctx, std::size_t i) {
  if (i >= ctx.getNumInputs()) return -1;
  const onnx::TypeProto* t = ctx.getInputType(i);
  if (t == nullptr || !t->has_tensor_type() || !t->tensor_type().has_shape()) return -1;
  return t->tensor_type().shape().dim_size();
}

int ints_length(onnx::InferenceContext& ctx, const char* name) {
  const onnx::AttributeProto* a = ctx.getAttribute(name);
  return a == nullptr ? -1 : a->ints_size();
}

// Known dims of every input must be non-negative and their product must fit comfortably in
// int64: libonnx multiplies and divides them unchecked (Reshape's -1, Split, the pools), and an
// overflowed product can reach INT64_MIN / -1, which traps. No real tensor comes near 2^48.
void check_input_dims(onnx::InferenceContext& ctx, const std::string& op) {
  constexpr int64_t kMaxElements = int64_t{1} << 48;
  for (std::size_t i = 0; i < ctx.getNumInputs(); ++i) {
    const onnx::TypeProto* t = ctx.getInputType(i);
    if (t == nullptr || !t->has_tensor_type() || !t->tensor_type().has_shape()) continue;
    int64_t product = 1;
    for (const auto& d : t->tensor_type().shape().dim()) {
      if (!d.has_dim_value()) continue;
      const int64_t v = d.dim_value();
      if (v < 0) fail_shape_inference(op, ": input ", i, " has a negative dim ", v);
      if (v != 0 && product > kMaxElements / v)
        fail_shape_inference(op, ": input ", i, " has more than 2^48 elements");
      product *= v;
    }
  }
}

// The values of an int32 or int64 initializer, from its typed field or its raw bytes.
std::vector<int64_t> int_values(const onnx::TensorProto& t) {
  std::vector<int64_t> out;
  const std::string& raw = t.raw_data();
  if (t.data_type() == onnx::TensorProto::INT64) {
    out.assign(t.int64_data().begin(), t.int64_data().end());
    for (std::size_t i = 0; i + 8 <= raw.size(); i += 8) {
      int64_t v;
      std::memcpy(&v, raw.data() + i, 8);
      out.push_back(v);
    }
  } else if (t.data_type() == onnx::TensorProto::INT32) {
    out.assign(t.int32_data().begin(), t.int32_data().end());
    for (std::size_t i = 0; i + 4 <= raw.size(); i += 4) {
      int32_t v;
      std::memcpy(&v, raw.data() + i, 4);
      out.push_back(v);
    }
  }
  return out;
}

// Every value of an ints attribute must lie in [lo, hi]; an absent attribute passes.
void check_ints_range(onnx::InferenceContext& ctx, const std::string& op, const char* name, int64_t lo,
                      int64_t hi) {
  const onnx::AttributeProto* a = ctx.getAttribute(name);
  if (a == nullptr) return;
  for (const int64_t v : a->ints())
    if (v < lo || v > hi)
      fail_shape_inference(op, ": attribute ", name, " value ", v, " is outside ", lo, "..", hi);
  if (a->has_i() && (a->i() < lo || a->i() > hi))
    fail_shape_inference(op, ": attribute ", name, " value ", a->i(), " is outside ", lo, "..", hi);
}

// Conv, ConvTranspose and the pools: libonnx indexes dims and attributes by the spatial rank of
// input 0 without checking them against each other.
void check_window_op(onnx::InferenceContext& ctx, const std::string& op) {
  const int rank = input_rank(ctx, 0);
  if (rank < 0) return;  // libonnx returns early without a shape
  if (rank < 3) fail_shape_inference(op, ": input rank ", rank, " is below 3");
  const int spatial = rank - 2;
  for (const char* name : {"kernel_shape", "strides", "dilations", "output_padding", "output_shape"}) {
    const int n = ints_length(ctx, name);
    if (n >= 0 && n != spatial && !(std::string(name) == "output_shape" && n == rank))
      fail_shape_inference(op, ": attribute ", name, " has ", n, " values for ", spatial, " spatial dims");
  }
  const int pads = ints_length(ctx, "pads");
  if (pads >= 0 && pads != 2 * spatial)
    fail_shape_inference(op, ": attribute pads has ", pads, " values for ", spatial, " spatial dims");
  // Output dims are divided by the strides (a zero stride trapped in convPoolShapeInference,
  // fuzz_onnx) and the kernel extent is (k - 1) * dilation + 1.
  constexpr int64_t kMaxWindow = int64_t{1} << 31;
  check_ints_range(ctx, op, "strides", 1, kMaxWindow);
  check_ints_range(ctx, op, "dilations", 1, kMaxWindow);
  check_ints_range(ctx, op, "kernel_shape", 1, kMaxWindow);
  check_ints_range(ctx, op, "pads", 0, kMaxWindow);
  const int w = input_rank(ctx, 1);
  if ((op == "Conv" || op == "ConvTranspose") && w >= 0 && w != rank)
    fail_shape_inference(op, ": weight rank ", w, " differs from input rank ", rank);
  if (const onnx::AttributeProto* g = ctx.getAttribute("group"); g != nullptr && g->i() <= 0)
    fail_shape_inference(op, ": group ", g->i(), " is not positive");
}

void check_node(onnx::InferenceContext& ctx, const onnx::OpSchema& schema, const std::string& op) {
  // Inference functions index inputs and outputs up to the schema's counts.
  const auto inputs = static_cast<int>(ctx.getNumInputs()), outputs = static_cast<int>(ctx.getNumOutputs());
  if (inputs < schema.min_input() || inputs > schema.max_input())
    fail_shape_inference(op, ": ", inputs, " inputs, the schema takes ", schema.min_input(), "..",
                         schema.max_input());
  if (outputs < schema.min_output() || outputs > schema.max_output())
    fail_shape_inference(op, ": ", outputs, " outputs, the schema gives ", schema.min_output(), "..",
                         schema.max_output());
  check_input_dims(ctx, op);
  static const std::set<std::string> kWindowOps = {"Conv",   "ConvTranspose", "AveragePool", "MaxPool",
                                                   "LpPool", "MaxUnpool",     "ConvInteger", "QLinearConv"};
  if (kWindowOps.count(op)) check_window_op(ctx, op);
  // The recurrent ops' older inference (RNNShapeInference1) reads dims 0..2 of X, W and R unchecked.
  if (op == "RNN" || op == "GRU" || op == "LSTM")
    for (std::size_t i = 0; i < 3 && i < ctx.getNumInputs(); ++i)
      if (const int rank = input_rank(ctx, i); rank >= 0 && rank != 3)
        fail_shape_inference(op, ": input ", i, " has rank ", rank, ", not 3");
  // STFT reads dims 0..2 of the signal (batch, length, 1 or 2) unchecked.
  if (op == "STFT")
    if (const int rank = input_rank(ctx, 0); rank >= 0 && rank != 3)
      fail_shape_inference(op, ": the signal has rank ", rank, ", not 3");
  // LayerNormalization-17 writes dims axis..rank-1 of its Mean and InvStdDev outputs with the
  // axis made positive but not checked (a scalar input gave mutable_dim(-1), fuzz_onnx).
  if (op == "LayerNormalization")
    if (const int rank = input_rank(ctx, 0); rank >= 0) {
      const onnx::AttributeProto* a = ctx.getAttribute("axis");
      const int64_t axis = a == nullptr ? -1 : a->i();
      if (rank == 0 || axis < -rank || axis >= rank)
        fail_shape_inference(op, ": axis ", axis, " is outside the input's rank ", rank);
    }
  // MaxUnpool without output_shape copies dim 1 of its indices (input 1) unchecked: a rank-1,
  // shapeless or untyped indices input read past the end (fuzz_onnx).
  if (op == "MaxUnpool" && ctx.getNumInputs() == 2 && input_rank(ctx, 0) >= 0 && input_rank(ctx, 1) < 2)
    fail_shape_inference(op, ": the indices (input 1) need a known shape of rank >= 2");
  // DepthToSpace divides the channels by blocksize * blocksize, which wraps to 0 at 2^32.
  if (op == "DepthToSpace" || op == "SpaceToDepth") check_ints_range(ctx, op, "blocksize", 1, 1 << 16);
  // SplitToSequence takes the remainder of the axis length by a constant scalar split.
  if (op == "SplitToSequence" && ctx.getNumInputs() > 1)
    if (const onnx::TensorProto* split = ctx.getInputData(1); split != nullptr)
      for (const int64_t v : int_values(*split))
        if (v <= 0) fail_shape_inference(op, ": split size ", v, " is not positive");
  // MaxRoiPool writes pooled_shape[0] and [1] into its output, having checked only that the list
  // has rank(X) - 2 values (an X of rank 2 or 3 and a shorter list read past it, inference sweep).
  if (op == "MaxRoiPool" && input_rank(ctx, 0) >= 0 && input_rank(ctx, 1) >= 0)
    if (const onnx::AttributeProto* a = ctx.getAttribute("pooled_shape"); a != nullptr && a->ints_size() < 2)
      fail_shape_inference(op, ": attribute pooled_shape has ", a->ints_size(), " values, not 2");
  // ConstantOfShape and Expand make an output of one dim per value of their shape input; of a
  // shape input known only by its shape, getShapeInput adds dim(0) dims one at a time (2^40 ran
  // out of memory, inference sweep). No real model has a rank anywhere near the bound.
  if (op == "ConstantOfShape" || op == "Expand") {
    const std::size_t i = op == "Expand" ? 1 : 0;
    constexpr int64_t kMaxShapeLength = 1024;
    if (input_rank(ctx, i) == 1) {
      const auto& d = ctx.getInputType(i)->tensor_type().shape().dim(0);
      if (d.has_dim_value() && d.dim_value() > kMaxShapeLength)
        fail_shape_inference(op, ": the shape input has ", d.dim_value(), " values (output rank), above ",
                             kMaxShapeLength);
    }
  }
  // Gemm-6 indexes dims 0 and 1 of A and B without checking their rank (later versions check).
  if (op == "Gemm")
    for (std::size_t i = 0; i < 2; ++i)
      if (const int rank = input_rank(ctx, i); rank >= 0 && rank != 2)
        fail_shape_inference(op, ": input ", i, " has rank ", rank, ", not 2");
}

}  // namespace

GuardedSchemaRegistry& GuardedSchemaRegistry::instance() {
  static GuardedSchemaRegistry* r = new GuardedSchemaRegistry();  // never destroyed, like libonnx's
  return *r;
}

const onnx::OpSchema* GuardedSchemaRegistry::GetSchema(const std::string& key,
                                                       const int max_inclusive_version,
                                                       const std::string& domain) const {
  const onnx::OpSchema* schema =
      onnx::OpSchemaRegistry::Instance()->GetSchema(key, max_inclusive_version, domain);
  if (schema == nullptr) return nullptr;
  std::lock_guard<std::mutex> lock(mu_);
  auto& slot = wrapped_[{key, schema->SinceVersion(), domain}];
  if (!slot) {
    slot = std::make_unique<onnx::OpSchema>(*schema);
    onnx::InferenceFunction inner = schema->GetTypeAndShapeInferenceFunction();
    slot->TypeAndShapeInferenceFunction([inner, schema, op = key](onnx::InferenceContext& ctx) {
      check_node(ctx, *schema, op);
      inner(ctx);
    });
    // Data propagation (ShapeInferenceOptions::data_prop) runs functions of its own, which read
    // their inputs' types without checking that they have one: Shape of an input no node
    // defines segfaulted (fuzz_onnx). Without a type for every input, nothing is propagated.
    onnx::DataPropagationFunction propagate = schema->GetDataPropagationFunction();
    slot->PartialDataPropagationFunction([propagate](onnx::DataPropagationContext& ctx) {
      for (std::size_t i = 0; i < ctx.getNumInputs(); ++i) {
        const onnx::TypeProto* t = ctx.getInputType(i);
        if (t == nullptr) return;
      }
      propagate(ctx);
    });
  }
  return slot.get();
}

}  // namespace weave::onnx_import
