// The residual of a squeeze-and-excitation block, y = x + x * gate with one gate value per (batch,
// channel), in one pass: the Mul takes the Add in (ng.add_operand, ops/layout_tolerant_binary_op.h), so x
// is read once and y written once, where the Mul wrote x * gate and the Add read it back with x again.
// PP-OCRv4 det's neck has eight of these, four on 160 x 160 maps of 96 or 24 channels.
//
// Matched: Add(x, t) or Add(t, x) where t = Mul(x, gate) or Mul(gate, x) has no other reader and is no
// graph output, every value float32 with a known shape, x 4-D and of the Add's shape, and the gate of
// shape [N or 1, C or 1, 1, 1] (or fewer leading axes), so the Mul never broadcasts x. The sum is
// rounded apart from the product, as the two ops did.
#include "graph/passes/graph_edit.h"
#include "graph/passes/passes.h"
#include "ir/fused_conv.h"

namespace ninegrid {

int fuse_gate_residual(Graph& g) {
  if (!ensure_shapes(g)) return 0;  // needs the shapes to prove the Mul does not broadcast x
  int fused = 0;
  std::vector<char> dead(g.nodes.size(), 0);
  const std::vector<int> prod = g.producers();
  const Uses uses = find_uses(g);
  for (size_t n = 0; n < g.nodes.size(); ++n) {
    const Node& add = g.nodes[n];
    if (add.op_type != "Add" || add.inputs.size() != 2 || add.outputs.size() != 1 || add.outputs[0] < 0) continue;
    for (int side = 0; side < 2; ++side) {
      const int t = add.inputs[static_cast<size_t>(side)], x = add.inputs[static_cast<size_t>(1 - side)];
      if (t < 0 || x < 0 || t == x || prod[t] < 0 || dead[prod[t]] || uses.count(t) != 1) continue;
      Node& mul = g.nodes[static_cast<size_t>(prod[t])];
      if (mul.op_type != "Mul" || mul.inputs.size() != 2 || mul.attrs.has(fused::kAddOperand)) continue;
      const int x_slot = mul.inputs[0] == x ? 0 : mul.inputs[1] == x ? 1 : -1;
      if (x_slot < 0 || mul.inputs[0] == mul.inputs[1]) continue;
      const Value& xv = g.values[x];
      const Value& yv = g.values[add.outputs[0]];
      if (!xv.shape_known || xv.shape.size() != 4 || xv.dtype != DataType::Float32 || !yv.shape_known ||
          yv.shape != xv.shape || g.values[t].shape != xv.shape ||
          !per_channel_float(g.values[mul.inputs[static_cast<size_t>(1 - x_slot)]], xv.shape))
        continue;
      mul.attrs.set(fused::kAddOperand, Attribute::of_int(x_slot));
      mul.outputs[0] = add.outputs[0];
      dead[n] = 1;
      ++fused;
      break;
    }
  }
  erase_nodes(g, dead);
  return fused;
}

}  // namespace ninegrid
