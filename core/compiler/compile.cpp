#include "core/compiler/compile.h"

#include "core/compiler/eliminate_dead.h"
#include "core/compiler/fold_batchnorm.h"
#include "core/compiler/fold_constants.h"
#include "core/compiler/fold_conv_affine.h"
#include "core/compiler/fuse_activations.h"
#include "core/compiler/fuse_conv_epilogue.h"
#include "core/compiler/fuse_hardswish.h"
#include "core/compiler/fuse_layer_norm.h"
#include "core/compiler/remove_identity.h"
#include "core/compiler/split_conv_outputs.h"
#include "core/compiler/trim_conv_taps.h"
#include "core/compiler/unfold_patch_conv.h"

namespace weave {

Expected<Graph> compile_graph(Graph g, const CompileOptions& opt, const KernelRegistry& registry) {
  if (Status s = g.validate(); !s) return s.error().context("compile: input graph is invalid");
  if (opt.remove_identity) WEAVE_TRY(remove_identity(g));
  if (opt.fold_constants) {
    WEAVE_TRY(fold_constants(g, registry, opt.max_folded_bytes));
    // Again: a Dropout whose training_mode was a Constant node is known to be inference only now.
    if (opt.remove_identity) WEAVE_TRY(remove_identity(g));
  }
  if (opt.fuse) WEAVE_TRY(fold_conv_affine(g));
  if (opt.fold_batchnorm) WEAVE_TRY(fold_batchnorm(g));
  if (opt.fuse) {
    // Again: a bias Add before a BatchNormalization folds first, an affine after it only now.
    WEAVE_TRY(fold_conv_affine(g));
    WEAVE_TRY(trim_conv_taps(g));
    WEAVE_TRY(unfold_patch_conv(g));
    WEAVE_TRY(fuse_hardswish(g));
    WEAVE_TRY(fuse_activations(g));
    WEAVE_TRY(fuse_layer_norm(g));
    WEAVE_TRY(fuse_conv_epilogue(g));
    WEAVE_TRY(split_conv_outputs(g));
  }
  if (opt.eliminate_dead_code) eliminate_dead_code(g);
  if (Status s = g.validate(); !s) return s.error().context("compile: a pass produced an invalid graph");
  return g;
}

}  // namespace weave
