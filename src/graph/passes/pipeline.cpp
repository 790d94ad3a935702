#include "graph/passes/pipeline.h"

#include "graph/passes/graph_edit.h"
#include "graph/passes/passes.h"

namespace ninegrid {

void optimize_graph(Graph& graph, int opt_level, int max_block, const ResourceLimits& limits,
                    const ConvBlockChooser& conv_blocks) {
  if (opt_level < 1) return;
  // Folding infers every value's shape too; the passes after it that need shapes reuse them
  // (ensure_shapes) unless a pass added values without one.
  fuse_qdq(graph);
  fold_constants(graph, limits);
  remove_identity(graph);
  // Folding an Add into a ConvTranspose can expose a BatchNormalization behind it (PP-OCR's
  // ConvTranspose -> Add(bias) -> BN), so the two folds repeat until neither changes anything.
  while (fold_batchnorm(graph) + fold_channel_affine(graph) > 0) {
  }
  recognize_hardswish(graph);
  recognize_silu(graph);
  // Before the fusions, which would hide the Adds and ReLUs it reasons about; only when tensors will be
  // channel-blocked: to a multiple of 8 channels on x86-64 (the smallest block either vector ISA's kernels
  // take), of 4 with NEON's 4-channel blocks.
  if (opt_level >= 2 && max_block > 1) widen_channels(graph, max_block < 8 ? max_block : 8);
  fuse_residual_add(graph);
  fuse_qadd_residual(graph);
  fuse_activation(graph);
  fuse_activation_through_concat(graph);
  fuse_affine_after_activation(graph);
  fuse_gate_residual(graph);
  // After the epilogue fusions, which it carries over to the Conv it makes; where the shuffle after it can
  // move whole channel blocks (of 8 on x86-64, NEON's 4).
  if (opt_level >= 2 && max_block > 1) {
    conv_transpose_as_pointwise(graph, max_block < 8 ? max_block : 8);
    fold_shuffle_into_conv_transpose(graph);
  }
  remove_dead_nodes(graph);
  if (opt_level >= 2) {
    const std::vector<int64_t> chosen = conv_blocks ? conv_blocks(graph) : std::vector<int64_t>();
    plan_layout(graph, max_block, chosen.empty() ? nullptr : &chosen);
  }
  fuse_upsample_add(graph);
  // After the layout plan: only convs that write plain NCHW merge, so no layout decision changes.
  merge_sibling_convs(graph);
  release_unused_constants(graph);
}

}  // namespace ninegrid
