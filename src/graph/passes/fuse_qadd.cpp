// The int8 twin of fuse_residual_add (fuse_epilogue.cpp): an ng.QAdd of an ng.QConv's output and another
// uint8 tensor of the same shape moves into the conv's requantising epilogue, so the addition's full memory
// pass (a quantised ResNet's residual adds, fused with their ReLU by fuse_qdq) disappears.
//
// The fused conv computes exactly the unfused graph's bytes: its epilogue first requantises the sums to the
// conv's own output (y_scale, y_zero_point, [qmin, qmax]) as before, then adds the residual in QAdd's steps
// with QAdd's constants (kernels/quantized.h: Requantization::residual_add), keeping which operand the
// conv's output was (QuantizedAdd is not symmetric in its rounding). The node records the addition in the
// add_* attributes (ir/quant_attrs.h) and reads the other operand at fused::kResidualInput.
#include "graph/passes/graph_edit.h"
#include "graph/passes/passes.h"
#include "ir/fused_conv.h"
#include "ir/quant_attrs.h"

namespace ninegrid {

namespace {

bool same_shape_uint8(const Value& a, const Value& b) {
  return a.shape_known && b.shape_known && a.shape == b.shape && a.dtype == DataType::UInt8 &&
         b.dtype == DataType::UInt8;
}

// Whether the ng.QConv node can take a fused QAdd: no fused residual of either kind yet, attributes that read.
bool takes_qadd(const Node& conv) {
  if (conv.op_type != "ng.QConv" || fused::has_residual(conv) || conv.outputs.size() != 1) return false;
  try {
    const QConvAttrs q = read_qconv_attrs(conv.attrs);
    return !q.has_residual && !q.has_add;
  } catch (const Error&) {
    return false;  // the op reports its bad attributes
  }
}

}  // namespace

int fuse_qadd_residual(Graph& g) {
  bool any = false;
  for (const Node& n : g.nodes) any = any || n.op_type == "ng.QAdd";
  if (!any || !ensure_shapes(g)) return 0;  // needs both operands' shapes to prove there is no broadcasting
  int fused = 0;
  bool reorder = false;
  std::vector<char> dead(g.nodes.size(), 0);
  const std::vector<int> prod = g.producers();
  const Uses uses = find_uses(g);
  for (size_t n = 0; n < g.nodes.size(); ++n) {
    const Node& add = g.nodes[n];
    if (add.op_type != "ng.QAdd" || add.inputs.size() != 2 || add.outputs.size() != 1 || add.inputs[0] < 0 ||
        add.inputs[1] < 0 || add.inputs[0] == add.inputs[1] || add.outputs[0] < 0)
      continue;
    const Value& a = g.values[add.inputs[0]];
    const Value& b = g.values[add.inputs[1]];
    if (!same_shape_uint8(a, b) || !same_shape_uint8(a, g.values[add.outputs[0]])) continue;
    QConvAttrs addq;
    try {
      addq.add_a = read_tensor_quant(add.attrs, "a");
      addq.add_b = read_tensor_quant(add.attrs, "b");
      addq.add_y = read_tensor_quant(add.attrs, "y");
      addq.add_clamp = read_qclamp(add.attrs);
    } catch (const Error&) {
      continue;  // ng.QAdd names the node when it reads them
    }
    // Of the operands that a fusable ng.QConv produces, the one computed last, so that the other operand is
    // ready before the conv runs.
    int best = -1;
    for (int side = 0; side < 2; ++side) {
      const int v = add.inputs[side];
      const int p = prod[v];
      if (p < 0 || dead[p] || uses.count(v) != 1 || !takes_qadd(g.nodes[p])) continue;
      if (best < 0 || p > prod[add.inputs[best]]) best = side;
    }
    if (best < 0) continue;
    const int conv_out = add.inputs[best], other = add.inputs[1 - best];
    Node& conv = g.nodes[prod[conv_out]];
    // The other operand computed after the conv: the conv moves after it (its inputs come earlier still,
    // and the addition was its only reader).
    if (prod[other] > prod[conv_out]) reorder = true;
    QConvAttrs q = read_qconv_attrs(conv.attrs);
    q.has_add = true;
    q.add_a = addq.add_a, q.add_b = addq.add_b, q.add_y = addq.add_y, q.add_clamp = addq.add_clamp;
    q.add_conv_input = best;
    write_qconv_attrs(q, conv.attrs);
    if (conv.inputs.size() <= fused::kResidualInput) conv.inputs.resize(fused::kResidualInput + 1, -1);
    conv.inputs[fused::kResidualInput] = other;
    conv.outputs[0] = add.outputs[0];
    dead[n] = 1;
    ++fused;
  }
  erase_nodes(g, dead);
  if (reorder) g.topo_sort();
  return fused;
}

}  // namespace ninegrid
