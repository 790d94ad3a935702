// The graph optimiser: the sequence of passes run once at load time, chosen by the optimisation level.
#pragma once

#include "ir/graph.h"

namespace ninegrid {

// 0: none; 1: fusion and constant folding; 2: also layout planning. The graph stays topologically sorted.
void optimize_graph(Graph& graph, int opt_level);

}  // namespace ninegrid
