// Rewrites the ways exporters spell HardSwish into one HardSwish node, so it can be fused into a conv:
//   Div(Mul(x, Clip(Add(x, 3), 0, 6)), 6)          (PaddlePaddle, PP-OCR)
//   Mul(x, Div(Clip(Add(x, 3), 0, 6), 6))          and the same with Mul(.., 1/6) for the Div
//   Mul(x, HardSigmoid(x, alpha=1/6, beta=0.5))    (PyTorch before opset 14)
#include <cmath>

#include "graph/passes/graph_edit.h"
#include "graph/passes/passes.h"

namespace ninegrid {

namespace {

struct Matcher {
  const Graph& g;
  const std::vector<int>& prod;
  const Uses& uses;

  // The node producing v if it has op type `op` and v is read once (so the node may be removed).
  const Node* single_use(int v, const char* op) const {
    if (v < 0 || prod[v] < 0 || uses.count(v) != 1) return nullptr;
    const Node& n = g.nodes[prod[v]];
    return n.op_type == op ? &n : nullptr;
  }
  bool scalar_is(int v, float want) const {
    if (v < 0 || !g.values[v].is_constant()) return false;
    const Tensor& t = g.values[v].constant;
    return t.dtype() == DataType::Float32 && t.numel() == 1 && std::fabs(t.data_as<float>()[0] - want) < 1e-6f;
  }
  // Clip(Add(x, 3), 0, 6): returns x, or -1.
  int relu6_of_x_plus_3(int v, std::vector<int>& matched) const {
    const Node* clip = single_use(v, "Clip");
    if (!clip || clip->inputs.size() < 3 || !scalar_is(clip->inputs[1], 0.f) || !scalar_is(clip->inputs[2], 6.f))
      return -1;
    const Node* add = single_use(clip->inputs[0], "Add");
    if (!add || add->inputs.size() != 2) return -1;
    int x = scalar_is(add->inputs[1], 3.f) ? add->inputs[0] : scalar_is(add->inputs[0], 3.f) ? add->inputs[1] : -1;
    if (x < 0) return -1;
    matched.push_back(prod[v]);
    matched.push_back(prod[clip->inputs[0]]);
    return x;
  }
  // v / 6 or v * (1/6): returns v's operand, or -1.
  int divided_by_6(const Node& n) const {
    if (n.inputs.size() != 2) return -1;
    if (n.op_type == "Div" && scalar_is(n.inputs[1], 6.f)) return n.inputs[0];
    if (n.op_type == "Mul") {
      if (scalar_is(n.inputs[1], 1.f / 6.f)) return n.inputs[0];
      if (scalar_is(n.inputs[0], 1.f / 6.f)) return n.inputs[1];
    }
    return -1;
  }
};

}  // namespace

int recognize_hardswish(Graph& g) {
  int found = 0;
  bool changed = true;
  while (changed) {
    changed = false;
    std::vector<int> prod = g.producers();
    Uses uses = find_uses(g);
    Matcher m{g, prod, uses};
    for (size_t n = 0; n < g.nodes.size() && !changed; ++n) {
      const Node& root = g.nodes[n];
      std::vector<int> matched;
      int x = -1;
      // Div(Mul(x, relu6(x+3)), 6)
      int inner = m.divided_by_6(root);
      if (inner >= 0) {
        if (const Node* mul = m.single_use(inner, "Mul"); mul && mul->inputs.size() == 2) {
          for (int side = 0; side < 2 && x < 0; ++side) {
            std::vector<int> sub;
            int cand = m.relu6_of_x_plus_3(mul->inputs[1 - side], sub);
            if (cand >= 0 && cand == mul->inputs[side]) {
              x = cand;
              matched = sub;
              matched.push_back(prod[inner]);
            }
          }
        }
      }
      // Mul(x, relu6(x+3)/6) and Mul(x, HardSigmoid(x, 1/6, 1/2))
      if (x < 0 && root.op_type == "Mul" && root.inputs.size() == 2) {
        for (int side = 0; side < 2 && x < 0; ++side) {
          int other = root.inputs[1 - side];
          if (other < 0 || prod[other] < 0 || uses.count(other) != 1) continue;
          const Node& gate = g.nodes[prod[other]];
          if (gate.op_type == "HardSigmoid" && gate.inputs[0] == root.inputs[side] &&
              std::fabs(gate.attrs.get_float("alpha", 0.2f) - 1.f / 6.f) < 1e-6f &&
              std::fabs(gate.attrs.get_float("beta", 0.5f) - 0.5f) < 1e-6f) {
            x = root.inputs[side];
            matched = {prod[other]};
            continue;
          }
          int divided = m.divided_by_6(gate);
          if (divided < 0) continue;
          std::vector<int> sub;
          int cand = m.relu6_of_x_plus_3(divided, sub);
          if (cand >= 0 && cand == root.inputs[side]) {
            x = cand;
            matched = sub;
            matched.push_back(prod[other]);
          }
        }
      }
      if (x < 0) continue;
      std::vector<char> dead(g.nodes.size(), 0);
      for (int i : matched) dead[i] = 1;
      Node& hs = g.nodes[n];
      hs.op_type = "HardSwish";
      hs.inputs = {x};
      hs.attrs = Attributes();
      erase_nodes(g, dead);
      ++found;
      changed = true;
    }
  }
  return found;
}

}  // namespace ninegrid
