#include "core/kernels/fast/fast_ops.h"
#include "core/kernels/fast/nhwc.h"
#include "core/kernels/fused_ops.h"
#include "core/kernels/ref/transpose.h"
#include "core/kernels/registry.h"

namespace weave::fast {
namespace {

constexpr int kPriority = 10;

const Value* value_of(const Graph& g, const Node& n, std::size_t i) {
  return i < n.inputs.size() && n.inputs[i] != kNoValue ? &g.values[n.inputs[i]] : nullptr;
}
bool is_param(const Graph& g, const Node& n, std::size_t i) {
  const Value* v = value_of(g, n, i);
  return v != nullptr && v->kind == ValueKind::param;
}

}  // namespace

bool has_nhwc_kernel(const Graph& g, const Node& n) {
  if (ops() == nullptr) return false;
  if (n.op == "Conv")
    return conv_nhwc_supported(n, value_of(g, n, 0), value_of(g, n, 1), is_param(g, n, 1), value_of(g, n, 2),
                               is_param(g, n, 2));
  if (n.op == "Resize" || n.op == "Upsample") return resize_nhwc_supported(g, n);
  if (n.op == "BatchNormalization") return batch_norm_nhwc_supported(g, n);
  if (n.op == "ConvTranspose")
    return conv_transpose_nhwc_supported(n, value_of(g, n, 0), value_of(g, n, 1), is_param(g, n, 1),
                                         value_of(g, n, 2), is_param(g, n, 2));
  return pool_nhwc_supported(n, value_of(g, n, 0));
}

void register_fast_kernels(KernelRegistry& r) {
  if (ops() == nullptr) return;
  r.add("Conv", make_fast_conv, kPriority, "fast");
  r.add(fused::kExpandDepthwise, make_fast_expand_depthwise, kPriority, "fast");
  r.add(fused::kConvConcat, make_fast_conv_concat, kPriority, "fast");
  r.add(fused::kScaledConv, make_fast_conv, kPriority, "fast");
  r.add("ConvTranspose", make_fast_conv_transpose, kPriority, "fast");
  r.add("Resize", make_fast_resize, kPriority, "fast");
  r.add("Upsample", make_fast_resize, kPriority, "fast");
  for (const char* op : {"MaxPool", "AveragePool", "GlobalAveragePool", "GlobalMaxPool"})
    r.add(op, make_fast_pool, kPriority, "fast");
  r.add("BatchNormalization", make_fast_batch_norm, kPriority, "fast");
  r.add("MatMul", make_fast_matmul, kPriority, "fast");
  r.add("Gemm", make_fast_gemm, kPriority, "fast");
  r.add("Softmax", make_fast_softmax, kPriority, "fast");
  r.add("Gather", make_fast_gather, kPriority, "fast");
  r.add(
      "Transpose", [](const KernelSetup& s) { return kern::make_transpose(s, ops()->transpose_tile); },
      kPriority, "fast");
  r.add("LSTM", make_fast_lstm, kPriority, "fast");
  r.add("LogSoftmax", make_fast_softmax, kPriority, "fast");
  r.add("LayerNormalization", make_fast_layer_norm, kPriority, "fast");
  for (const char* op : fast_unary_ops()) r.add(op, make_fast_unary, kPriority, "fast");
  r.set_nhwc_query(&has_nhwc_kernel);
}

}  // namespace weave::fast
