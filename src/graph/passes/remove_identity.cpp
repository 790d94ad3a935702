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

// One pass over the nodes: a removed node's output is redirected to its input (through chains of
// removed nodes), and the readers are rewritten once at the end, so the pass is linear in the graph.
int remove_identity(Graph& g) {
  const bool shapes = ensure_shapes(g);
  const Uses uses = find_uses(g);
  std::vector<int> readers(g.values.size());  // per value, as the removals so far leave the graph
  for (size_t v = 0; v < g.values.size(); ++v) readers[v] = uses.count(static_cast<int>(v));
  std::vector<int> producer = g.producers();
  std::vector<int> replaced_by(g.values.size(), -1);
  auto resolve = [&](int v) {
    int r = v;
    while (replaced_by[r] >= 0) r = replaced_by[r];
    while (replaced_by[v] >= 0) {  // path compression: chains of removed nodes cost O(1) each
      const int next = replaced_by[v];
      replaced_by[v] = r;
      v = next;
    }
    return r;
  };
  std::vector<char> dead(g.nodes.size(), 0);
  int removed = 0;
  for (size_t n = 0; n < g.nodes.size(); ++n) {
    Node& node = g.nodes[n];
    if (node.op_type != "Identity" && node.op_type != "Dropout" && !(shapes && is_whole_slice(g, node))) continue;
    if (node.inputs.empty() || node.inputs[0] < 0 || node.outputs.empty() || node.outputs[0] < 0) continue;
    // Dropout's mask output, if anyone reads it, keeps the node. (A whole Slice's other inputs are
    // parameters; they stay alive only if something else reads them.)
    if (node.outputs.size() > 1 && node.outputs[1] >= 0 && readers[node.outputs[1]] > 0) continue;
    const int in = resolve(node.inputs[0]), out = node.outputs[0];
    if (!uses.is_graph_output[out]) {
      replaced_by[out] = in;
      readers[in] += readers[out] - 1;
    } else {
      // The output is a graph output, so its name must survive: let the producer of the input write it,
      // provided nothing else reads the input.
      if (producer[in] < 0 || readers[in] != 1) continue;
      for (int& o : g.nodes[producer[in]].outputs)
        if (o == in) o = out;
      producer[out] = producer[in];
    }
    dead[n] = 1;
    ++removed;
  }
  if (removed == 0) return 0;
  for (Node& node : g.nodes)
    for (int& i : node.inputs)
      if (i >= 0) i = resolve(i);
  erase_nodes(g, dead);
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
