// The graph optimiser: the sequence of passes run once at load time, chosen by the optimisation level.
#pragma once

#include "graph/infer_values.h"
#include "ir/graph.h"

namespace ninegrid {

// 0: none; 1: fusion and constant folding; 2: also layout planning, with channel blocks up to
// `max_block` (the kernels' vector width in floats; 1: no blocking). The graph stays topologically
// sorted. `limits` bound what constant folding may compute.
void optimize_graph(Graph& graph, int opt_level, int max_block, const ResourceLimits& limits);

}  // namespace ninegrid
