// Rewrites Mul(x, Sigmoid(x)), the way PyTorch exports SiLU (Swish), into one ng.Silu node, so it can be
// fused into the conv that computes x: EfficientNet has one after nearly every conv, and run on their
// own the Sigmoid and the Mul each make a pass over the conv's output.
#include "graph/passes/graph_edit.h"
#include "graph/passes/passes.h"

namespace ninegrid {

int recognize_silu(Graph& g) {
  const std::vector<int> prod = g.producers();
  const Uses uses = find_uses(g);
  std::vector<char> dead(g.nodes.size(), 0);
  int found = 0;
  for (size_t n = 0; n < g.nodes.size(); ++n) {
    Node& mul = g.nodes[n];
    if (mul.op_type != "Mul" || mul.inputs.size() != 2 || mul.outputs.size() != 1) continue;
    for (int side = 0; side < 2; ++side) {
      const int x = mul.inputs[side], gate = mul.inputs[1 - side];
      // The Sigmoid must read x itself and feed nothing but this Mul (it is removed).
      if (x < 0 || gate < 0 || prod[gate] < 0 || uses.count(gate) != 1 || dead[prod[gate]]) continue;
      const Node& sigmoid = g.nodes[prod[gate]];
      if (sigmoid.op_type != "Sigmoid" || sigmoid.inputs.size() != 1 || sigmoid.inputs[0] != x) continue;
      dead[prod[gate]] = 1;
      mul.op_type = "ng.Silu";
      mul.inputs = {x};
      mul.attrs = Attributes();
      ++found;
      break;
    }
  }
  if (found) erase_nodes(g, dead);
  return found;
}

}  // namespace ninegrid
