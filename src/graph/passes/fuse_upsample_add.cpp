// An FPN's top-down merge, lateral + Resize(top) with nearest upsampling, in one pass: the Resize takes
// the Add in (ng.add_operand = 4, its fifth input the lateral; ops/resize.cpp), so the upsampled map is
// never written and read back. PP-OCRv4 det's neck merges three times, up to 1x96x160x160.
//
// Matched: Add(a, r) or Add(r, a) where r = Resize(x, ...) (opset 11 or later: roi, scales and sizes are
// inputs 1-3) in nearest mode without tf_crop_and_resize has no other reader and is no graph output, every
// value float32 with a known shape, a of the Add's shape and of r's (no broadcasting). Runs after the layout
// plan, so the Resize and the Add store r alike (the plan inserts a reorder between them otherwise, and they
// no longer meet) and the Add's block is the lateral's. The fused node takes the Add's place in the order, where
// the lateral is computed; the sum is the Add's, resized value plus lateral. Where the lateral is a fused
// squeeze-and-excitation residual, x * gate + x in one Mul (fuse_gate_residual) read by nothing else, the
// Resize takes x and the gate instead (fused::kResizeGateInput) and computes the lateral as the Mul did.
#include "graph/passes/graph_edit.h"
#include "graph/passes/passes.h"
#include "ir/fused_conv.h"

namespace ninegrid {

namespace {

bool fusable_resize(const Node& r) {
  return r.op_type == "Resize" && (r.opset == 0 || r.opset >= 11) && r.inputs.size() <= fused::kResizeAddendInput &&
         r.outputs.size() == 1 && !r.attrs.has(fused::kAddOperand) &&
         r.attrs.get_string("mode", "nearest") == "nearest" &&
         r.attrs.get_string("coordinate_transformation_mode", "half_pixel") != "tf_crop_and_resize";
}

bool float_of_shape(const Value& v, const Shape& shape) {
  return v.dtype == DataType::Float32 && v.shape_known && v.shape == shape;
}

// The Mul computing lateral `a` as x * gate + x (ng.add_operand) with one gate value per (batch, channel) of
// y, both stored in `block` as y is, when nothing else reads `a`; else -1.
int gate_residual_producer(const Graph& g, const std::vector<int>& prod, const Uses& uses,
                           const std::vector<char>& dead, int a, const Value& y, int64_t block) {
  const int p = prod[a];
  if (p < 0 || dead[p] || uses.count(a) != 1) return -1;
  const Node& m = g.nodes[static_cast<size_t>(p)];
  if (m.op_type != "Mul" || m.inputs.size() != 2 || m.outputs.size() != 1 || !m.attrs.has(fused::kAddOperand) ||
      m.attrs.get_int(fused::kOutBlock, 1) != block || m.attrs.get_int(fused::kInBlock, 1) != block)
    return -1;
  const int64_t x = m.attrs.get_int(fused::kAddOperand, -1);
  if ((x != 0 && x != 1) || m.inputs[0] < 0 || m.inputs[1] < 0) return -1;
  const Value& xv = g.values[m.inputs[static_cast<size_t>(x)]];
  const Value& gate = g.values[m.inputs[static_cast<size_t>(1 - x)]];
  return float_of_shape(xv, y.shape) && per_channel_float(gate, y.shape) ? p : -1;
}

}  // namespace

int fuse_upsample_add(Graph& g) {
  if (!ensure_shapes(g)) return 0;  // needs the shapes to prove the Add does not broadcast
  int fused = 0;
  std::vector<char> dead(g.nodes.size(), 0);
  const std::vector<int> prod = g.producers();
  const Uses uses = find_uses(g);
  for (size_t n = 0; n < g.nodes.size(); ++n) {
    const Node& add = g.nodes[n];
    if (add.op_type != "Add" || add.inputs.size() != 2 || add.outputs.size() != 1 || add.outputs[0] < 0 ||
        add.attrs.has(fused::kAddOperand))
      continue;
    const Value& y = g.values[add.outputs[0]];
    if (!y.shape_known) continue;
    const int64_t block = add.attrs.get_int(fused::kOutBlock, 1);
    if (add.attrs.get_int(fused::kInBlock, 1) != block) continue;
    for (int side = 0; side < 2; ++side) {
      const int r = add.inputs[static_cast<size_t>(side)], a = add.inputs[static_cast<size_t>(1 - side)];
      if (r < 0 || a < 0 || r == a || prod[r] < 0 || dead[prod[r]] || uses.count(r) != 1) continue;
      const Node& resize = g.nodes[static_cast<size_t>(prod[r])];
      if (!fusable_resize(resize) || resize.inputs.empty() || resize.inputs[0] < 0 ||
          resize.attrs.get_int(fused::kOutBlock, 1) != block || resize.attrs.get_int(fused::kInBlock, 1) != block)
        continue;
      if (!float_of_shape(g.values[a], y.shape) || !float_of_shape(g.values[r], y.shape) ||
          g.values[resize.inputs[0]].dtype != DataType::Float32)
        continue;
      Node merged = resize;
      merged.inputs.resize(fused::kResizeAddendInput, -1);
      merged.inputs.push_back(a);
      // A lateral that is a squeeze-and-excitation residual (x + x * gate as one Mul, fuse_gate_residual)
      // read by nothing else: the Resize gates it itself, so the lateral is never written either.
      if (const int mul = gate_residual_producer(g, prod, uses, dead, a, y, block); mul >= 0) {
        const Node& m = g.nodes[static_cast<size_t>(mul)];
        const size_t x = static_cast<size_t>(m.attrs.get_int(fused::kAddOperand, 0));
        merged.inputs[fused::kResizeAddendInput] = m.inputs[x];
        merged.inputs.push_back(m.inputs[1 - x]);
        dead[static_cast<size_t>(mul)] = 1;
      }
      merged.outputs = add.outputs;
      merged.attrs.set(fused::kAddOperand, Attribute::of_int(static_cast<int64_t>(fused::kResizeAddendInput)));
      dead[static_cast<size_t>(prod[r])] = 1;
      g.nodes[n] = std::move(merged);
      ++fused;
      break;
    }
  }
  erase_nodes(g, dead);
  return fused;
}

}  // namespace ninegrid
