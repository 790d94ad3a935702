// Load-time constant folding. It reuses the planner: planning with the model's fixed input shapes
// evaluates every node whose inputs are known (weights, and Shape-derived values), and those nodes are
// replaced by their results. Only done when all input shapes are fixed, since values derived from shapes
// would otherwise be wrong for other shapes.
#include "graph/passes/graph_edit.h"
#include "graph/passes/passes.h"
#include "runtime/plan.h"
#include "core/thread_pool.h"

namespace ninegrid {

int fold_constants(Graph& g) {
  std::vector<Shape> shapes;
  for (int v : g.inputs) {
    const Value& val = g.values[v];
    if (!val.shape_known) return 0;
    for (int64_t d : val.shape)
      if (d < 0) return 0;
    shapes.push_back(val.shape);
  }
  std::vector<std::unique_ptr<Op>> ops;
  for (const Node& n : g.nodes) {
    ops.push_back(OpRegistry::instance().create(n));
    ops.back()->set_prepare_kernels(false);  // shapes only: sessions build the kernels
  }
  ThreadPool pool(1);
  Plan plan = make_plan(g, shapes, ops, &pool);

  std::vector<char> dead(g.nodes.size(), 0);
  int folded = 0;
  for (size_t n = 0; n < g.nodes.size(); ++n) {
    const Node& node = g.nodes[n];
    bool all_folded = true;
    for (int o : node.outputs)
      if (o >= 0 && plan.slots[o].storage != Storage::Folded) all_folded = false;
    if (!all_folded) continue;
    for (int o : node.outputs) {
      if (o < 0) continue;
      Value& v = g.values[o];
      v.constant = plan.slots[o].folded;
      v.dtype = v.constant.dtype();
      v.shape = v.constant.shape();
      v.shape_known = true;
    }
    dead[n] = 1;
    ++folded;
  }
  erase_nodes(g, dead);
  return folded;
}

}  // namespace ninegrid
