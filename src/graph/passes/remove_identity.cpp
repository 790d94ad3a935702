#include "graph/passes/graph_edit.h"
#include "graph/passes/passes.h"

namespace ninegrid {

namespace {

// A Slice that keeps its whole input: output shape equal to the input's and every step positive (the
// same shape with a negative step would be a reversal). Exporters emit these for crops that only bite
// at other input sizes (RetinaFace's FPN crops the upsampled map to the finer level's size). Needs the
// shapes annotate_shapes records.
bool is_whole_slice(const Graph& g, const Node& node) {
  if (node.op_type != "Slice" || node.inputs.empty() || node.inputs[0] < 0 || node.outputs.empty() ||
      node.outputs[0] < 0)
    return false;
  const Value& in = g.values[node.inputs[0]];
  const Value& out = g.values[node.outputs[0]];
  if (!in.shape_known || !out.shape_known || in.shape != out.shape) return false;
  if (node.inputs.size() > 4 && node.inputs[4] >= 0) {
    const Value& steps = g.values[node.inputs[4]];
    if (!steps.is_constant()) return false;
    const Tensor& t = steps.constant;
    for (int64_t i = 0; i < t.numel(); ++i) {
      const int64_t step = t.dtype() == DataType::Int64 ? t.data_as<int64_t>()[i]
                           : t.dtype() == DataType::Int32 ? t.data_as<int32_t>()[i] : 0;
      if (step <= 0) return false;
    }
  }
  return true;
}

}  // namespace

int remove_identity(Graph& g) {
  const bool shapes = annotate_shapes(g);
  int removed = 0;
  bool changed = true;
  while (changed) {  // one removal at a time, so use counts never include a removed node
    changed = false;
    for (size_t n = 0; n < g.nodes.size() && !changed; ++n) {
      Node& node = g.nodes[n];
      if (node.op_type != "Identity" && node.op_type != "Dropout" && !(shapes && is_whole_slice(g, node))) continue;
      if (node.inputs.empty() || node.inputs[0] < 0 || node.outputs.empty() || node.outputs[0] < 0) continue;
      Uses uses = find_uses(g);
      // Dropout's mask output, if anyone reads it, keeps the node. (A whole Slice's other inputs are
      // parameters; they stay alive only if something else reads them.)
      if (node.outputs.size() > 1 && node.outputs[1] >= 0 && uses.count(node.outputs[1]) > 0) continue;
      int in = node.inputs[0], out = node.outputs[0];
      if (!uses.is_graph_output[out]) {
        replace_uses(g, out, in);
      } else {
        // The output is a graph output, so its name must survive: let the producer of the input write it,
        // provided nothing else reads the input.
        std::vector<int> prod = g.producers();
        if (prod[in] < 0 || uses.count(in) != 1) continue;
        for (int& o : g.nodes[prod[in]].outputs)
          if (o == in) o = out;
      }
      std::vector<char> dead(g.nodes.size(), 0);
      dead[n] = 1;
      erase_nodes(g, dead);
      ++removed;
      changed = true;
    }
  }
  return removed;
}

int remove_dead_nodes(Graph& g) {
  std::vector<char> live_value(g.values.size(), 0);
  for (int o : g.outputs) live_value[o] = 1;
  std::vector<char> dead(g.nodes.size(), 0);
  int removed = 0;
  for (size_t i = g.nodes.size(); i-- > 0;) {
    const Node& node = g.nodes[i];
    bool live = false;
    for (int o : node.outputs) live = live || (o >= 0 && live_value[o]);
    if (!live) {
      dead[i] = 1;
      ++removed;
      continue;
    }
    for (int in : node.inputs)
      if (in >= 0) live_value[in] = 1;
  }
  erase_nodes(g, dead);
  return removed;
}

}  // namespace ninegrid
