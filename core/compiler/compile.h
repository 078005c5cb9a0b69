// The compile driver: turns an imported Graph into the graph the runtime plans and the artifact
// stores. Passes, in order (each in its own file):
//   remove_identity      Identity/Dropout disappear              (remove_identity.h)
//   fold_constants       all-param nodes become params          (fold_constants.h)
//   fold_conv_affine     Conv * s + c -> Conv with folded W, B   (fold_conv_affine.h)
//   fold_batchnorm       Conv+BN -> Conv with folded weights    (fold_batchnorm.h)
//   fuse_hardswish       x * relu6(x + 3) / 6 -> HardSwish      (fuse_hardswish.h)
//   fuse_conv_epilogue   Conv [+ residual] [+ act] [* s + t]    (fuse_conv_epilogue.h)
//   eliminate_dead_code  unreachable nodes, values, params go   (eliminate_dead.h)
// The graph is validated before (passes rely on valid ids) and after. No protobuf here: this
// runs on graphs from the importer and from .weave artifacts alike.
#pragma once

#include <cstdint>

#include "core/common/status.h"
#include "core/graph/graph.h"
#include "core/kernels/registry.h"

namespace weave {

struct CompileOptions {
  bool remove_identity = true;
  bool fold_constants = true;
  bool fold_batchnorm = true;
  bool fuse =
      true;  // fold_conv_affine, fuse_hardswish, fuse_activations, fuse_layer_norm, fuse_conv_epilogue
  bool eliminate_dead_code = true;
  // Constant folding skips nodes whose outputs would exceed this many bytes.
  int64_t max_folded_bytes = int64_t{64} << 20;
};

// `registry` evaluates folded nodes; tests inject their own.
[[nodiscard]] Expected<Graph> compile_graph(Graph g, const CompileOptions& opt = {},
                                            const KernelRegistry& registry = KernelRegistry::global());

}  // namespace weave
