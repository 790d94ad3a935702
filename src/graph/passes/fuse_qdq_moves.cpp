// Ops that only move or select values, between a DequantizeLinear and a QuantizeLinear, run on the uint8
// tensor itself (ONNX Runtime's DropQDQNodes, extended to chains and to differing parameters):
//   DQ(x; p) -> M_1 -> ... -> M_k -> Q(p)     becomes   M_1(x) -> ... -> M_k            (the pair disappears)
//   DQ(x; p) -> M_1 -> ... -> M_k -> Q(p')    becomes   the same with one ng.QRequantize p -> p'
//   DQ(x; p) -> Q(p')                         becomes   ng.QRequantize(x) (or nothing, for p' = p)
// Each M_i only moves, copies or selects elements (Reshape, Transpose, Slice, nearest Resize, MaxPool, ...),
// so the element-wise DQ commutes with it (with MaxPool too: DQ is increasing), and the float graph's result
// is Q(DQ(v)) of each moved value v: what ng.QRequantize's table holds (kernels/ref/qlookup_ref.h), bit for
// bit; with equal parameters it is v itself (|v - zp| <= 255 keeps the float round trip far within half a
// step). The requantisation goes where the tensor is smaller as far as the ops tell: before a chain that
// may enlarge it (Resize, Upsample, Tile, Expand), else after. Every value between the DQ and the Q must have
// that one reader (a value also read in float keeps the float chain); the DQ itself may have others.
#include <string>

#include "graph/passes/fuse_qdq_ops.h"
#include "graph/passes/graph_edit.h"
#include "graph/passes/qdq_match.h"
#include "ir/quant_attrs.h"

namespace ninegrid {

using namespace qdq;

namespace {

// Whether node n computes its output 0 from its input 0 by moving, copying or selecting elements only;
// its other inputs (shapes, axes, indices, scales) are parameters. `grows`: it may have more elements out
// than in.
bool moves_values(const Node& n, bool* grows) {
  static const char* kMoves[] = {"Reshape", "Flatten", "Squeeze", "Unsqueeze", "Transpose", "Identity",
                                 "Slice", "DepthToSpace", "SpaceToDepth", "Gather", "GlobalMaxPool", "MaxPool"};
  static const char* kGrows[] = {"Resize", "Upsample", "Tile", "Expand"};
  if (n.inputs.empty() || n.inputs[0] < 0 || n.outputs.empty() || n.outputs[0] < 0) return false;
  for (size_t o = 1; o < n.outputs.size(); ++o)  // MaxPool's Indices, Dropout's mask: not read
    if (n.outputs[o] >= 0) return false;
  *grows = false;
  for (const char* op : kMoves)
    if (n.op_type == op) return true;
  bool grow = false;
  for (const char* op : kGrows) grow = grow || n.op_type == op;
  if (!grow) return false;
  *grows = true;
  if (n.op_type == "Tile" || n.op_type == "Expand") return true;
  try {
    // Nearest only (every output an input element); tf_crop_and_resize may write extrapolation_value.
    return n.attrs.get_string("mode", "nearest") == "nearest" &&
           n.attrs.get_string("coordinate_transformation_mode", "half_pixel") != "tf_crop_and_resize";
  } catch (const Error&) {
    return false;  // an attribute of the wrong kind: the op reports it
  }
}

// Whether value v is read by exactly one node input and is no graph output.
bool single_reader(const Uses& uses, int v) {
  return v >= 0 && !uses.is_graph_output[v] && uses.readers[v].size() == 1;
}

Node requantize_node(const std::string& name, int opset, const TensorParams& x, const TensorParams& y, int in,
                     int out) {
  Node r;
  r.name = name;
  r.op_type = "ng.QRequantize";
  r.opset = opset;
  write_tensor_quant({x.scale, x.zero_point}, "x", r.attrs);
  write_tensor_quant({y.scale, y.zero_point}, "y", r.attrs);
  write_qclamp({0, 255}, r.attrs);
  r.inputs = {in};
  r.outputs = {out};
  return r;
}

}  // namespace

int fuse_moving_chains(Graph& g) {
  const std::vector<int> prod = g.producers();
  const Uses uses = find_uses(g);
  std::vector<char> dead(g.nodes.size(), 0);
  int fused = 0;
  // Chains are disjoint (each value in one has a single reader), so editing one leaves the others'
  // producers and readers as found.
  for (size_t n = 0; n < g.nodes.size(); ++n) {
    const Node& q = g.nodes[n];
    if (q.op_type != "QuantizeLinear" || q.inputs.empty() || q.outputs.empty() || q.outputs[0] < 0 ||
        q.attrs.has(kNcnnScale))
      continue;
    TensorParams yp;
    if (!per_tensor_params(g, q, &yp) || yp.type != DataType::UInt8) continue;
    // Back from the Q through the moving ops to the DQ; chain[0] is the op nearest the Q.
    std::vector<int> chain;
    bool grows = false;
    int v = q.inputs[0];
    while (v >= 0 && single_reader(uses, v) && prod[v] >= 0 && chain.size() < 64) {
      const Node& m = g.nodes[prod[v]];
      bool m_grows = false;
      if (m.op_type == "DequantizeLinear" || !moves_values(m, &m_grows) || m.outputs[0] != v) break;
      grows = grows || m_grows;
      chain.push_back(prod[v]);
      v = m.inputs[0];
    }
    DequantizedInput x;
    if (!dequantized_input(g, prod, v, &x)) continue;
    const int dq = prod[v];
    const int y = q.outputs[0];
    const bool same = same_params(x.params, yp);
    if (chain.empty()) {
      Node& node = g.nodes[n];
      if (same) {
        Node id;
        id.name = node.name;
        id.op_type = "Identity";
        id.inputs = {x.q};
        id.outputs = {y};
        node = std::move(id);
      } else {
        node = requantize_node(node.name, node.opset, x.params, yp, x.q, y);
      }
      ++fused;
      continue;
    }
    for (size_t i = 1; i < chain.size(); ++i) g.values[g.nodes[chain[i]].outputs[0]].dtype = DataType::UInt8;
    Node& first = g.nodes[chain.back()];
    Node& last = g.nodes[chain.front()];
    if (same) {
      first.inputs[0] = x.q;
      last.outputs[0] = y;
      dead[n] = 1;
    } else if (grows && single_reader(uses, v)) {
      // In the DQ's place, on the smaller tensor: its output value becomes the requantised uint8 one.
      g.values[v].dtype = DataType::UInt8;
      last.outputs[0] = y;
      dead[n] = 1;
      Node& d = g.nodes[dq];
      d = requantize_node(d.name, d.opset, x.params, yp, x.q, v);
    } else {
      first.inputs[0] = x.q;
      g.values[last.outputs[0]].dtype = DataType::UInt8;
      Node& node = g.nodes[n];
      node = requantize_node(node.name, node.opset, x.params, yp, last.outputs[0], y);
    }
    ++fused;
  }
  erase_nodes(g, dead);
  return fused;
}

}  // namespace ninegrid
