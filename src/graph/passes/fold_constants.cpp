// Load-time constant folding. Value inference with the model's fixed input shapes evaluates every node
// whose inputs are known (weights, and Shape-derived values); those nodes are replaced by their results,
// and the same inference records every value's shape. Only done when all input shapes are fixed, since
// values derived from shapes would otherwise be wrong for other shapes, and only when no shape depends on
// an input's contents (those models are folded by their sessions, per contents).
#include "graph/infer_values.h"
#include "graph/passes/graph_edit.h"
#include "graph/passes/passes.h"

namespace ninegrid {

int fold_constants(Graph& g, const ResourceLimits& limits) {
  ValueInference inferred;
  if (!infer_values_for_declared_shapes(g, &inferred, limits)) return 0;
  record_inferred_shapes(g, inferred);

  std::vector<char> dead(g.nodes.size(), 0);
  int folded = 0;
  for (size_t n = 0; n < g.nodes.size(); ++n) {
    if (!inferred.folded[n]) continue;
    for (int o : g.nodes[n].outputs)
      if (o >= 0) g.values[o].constant = std::move(inferred.values[o].folded);
    dead[n] = 1;
    ++folded;
  }
  erase_nodes(g, dead);
  return folded;
}

}  // namespace ninegrid
