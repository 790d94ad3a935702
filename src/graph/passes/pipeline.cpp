#include "graph/passes/pipeline.h"

#include "graph/passes/graph_edit.h"
#include "graph/passes/passes.h"

namespace ninegrid {

void optimize_graph(Graph& graph, int opt_level) {
  if (opt_level < 1) return;
  remove_identity(graph);
  fold_constants(graph);
  fold_batchnorm(graph);
  fold_channel_affine(graph);
  recognize_hardswish(graph);
  fuse_residual_add(graph);
  fuse_activation(graph);
  remove_dead_nodes(graph);
  release_unused_constants(graph);
}

}  // namespace ninegrid
