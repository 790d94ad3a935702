// The graph optimiser: the sequence of passes run once at load time, chosen by the optimisation level.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "graph/infer_values.h"
#include "ir/graph.h"

namespace ninegrid {

// 0: none; 1: fusion and constant folding; 2: also layout planning, with channel blocks up to
// `max_block` (the kernels' vector width in floats; 1: no blocking). The graph stays topologically
// sorted. `limits` bound what constant folding may compute. `conv_blocks`, if given, is asked at level 2
// just before layout planning for the output block of each Conv node (per node of the graph it is
// shown; empty or 0: the rules'): the global layout search's choice, from the tuning cache.
using ConvBlockChooser = std::function<std::vector<int64_t>(const Graph&)>;
void optimize_graph(Graph& graph, int opt_level, int max_block, const ResourceLimits& limits,
                    const ConvBlockChooser& conv_blocks = nullptr);

}  // namespace ninegrid
