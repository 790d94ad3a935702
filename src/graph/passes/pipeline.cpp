#include "graph/passes/pipeline.h"

namespace ninegrid {

void optimize_graph(Graph& graph, int opt_level) {
  (void)graph;
  (void)opt_level;  // The passes arrive with the graph-optimiser work; level 0 semantics for now.
}

}  // namespace ninegrid
