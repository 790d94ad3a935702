// QDQ fusion: the DequantizeLinear -> float op -> QuantizeLinear islands of a quantised ONNX model (as
// ONNX Runtime's quantiser and PyTorch write them) become integer ops that read and write uint8 tensors
// directly, so the model never runs float round trips between its quantised layers.
//
// First, int8 activations become uint8: a QuantizeLinear with an int8 zero point whose every reader is a
// DequantizeLinear with the same parameters gets zero point + 128 and a uint8 output, and so do its
// readers (the same reals; kernels/quantized.h explains why the kernels want uint8). Then:
//   DQ(x) -> Conv(W = DQ(int8 constant), B) [-> Relu | Clip] -> Q   becomes   ng.QConv
// and Add islands ng.QAdd, and (fuse_qdq_ops.cpp) Gemm/MatMul ng.QGemm, Concat ng.QConcat, average pools
// ng.Q*AveragePool; chains of value-moving ops (MaxPool, Reshape, Slice, nearest Resize, ...) run on the
// uint8 tensor, with one ng.QRequantize where the parameters change (fuse_qdq_moves.cpp).
// Runs before constant folding, which would turn the weights' DequantizeLinear into a float constant.
#include <cmath>
#include <limits>

#include "graph/passes/fuse_qdq_ops.h"
#include "graph/passes/graph_edit.h"
#include "graph/passes/passes.h"
#include "graph/passes/qdq_match.h"
#include "ir/quant_attrs.h"
#include "kernels/quantized.h"

namespace ninegrid {

namespace {

using namespace qdq;

// int8 activations -> uint8 (see the file comment). Returns how many QuantizeLinear nodes changed.
// Whether every reader of the int8 value v is a DequantizeLinear with parameters p or an op that only
// moves or selects values (a QOperator model runs MaxPool and Reshape on the int8 tensor itself) whose
// output passes the same test; collects those DequantizeLinear nodes and the values in between.
bool int8_readers_convertible(const Graph& g, const Uses& uses, int v, const TensorParams& p, std::vector<int>* dqs,
                              std::vector<int>* moved, int depth = 0) {
  if (depth > 64 || uses.is_graph_output[v] || uses.readers[v].empty()) return false;
  for (const auto& [reader, slot] : uses.readers[v]) {
    const Node& r = g.nodes[reader];
    TensorParams rp;
    if (slot == 0 && r.op_type == "DequantizeLinear" && per_tensor_params(g, r, &rp) && same_params(p, rp)) {
      dqs->push_back(reader);
      continue;
    }
    static const char* kMoving[] = {"MaxPool", "Reshape", "Flatten", "Squeeze", "Unsqueeze", "Transpose"};
    bool moving = false;
    for (const char* op : kMoving) moving = moving || r.op_type == op;
    // MaxPool's optional Indices output would differ in nothing, but keep the rule simple: one output.
    if (!moving || slot != 0 || r.outputs.size() != 1 || r.outputs[0] < 0) return false;
    moved->push_back(r.outputs[0]);
    if (!int8_readers_convertible(g, uses, r.outputs[0], p, dqs, moved, depth + 1)) return false;
  }
  return true;
}

int activations_to_uint8(Graph& g, const Uses& uses) {
  int changed = 0;
  for (size_t n = 0; n < g.nodes.size(); ++n) {
    Node& q = g.nodes[n];
    if (q.op_type != "QuantizeLinear" || q.outputs.empty() || q.outputs[0] < 0) continue;
    TensorParams p;
    if (!per_tensor_params(g, q, &p) || p.type != DataType::Int8) continue;
    const int out = q.outputs[0];
    std::vector<int> dqs, moved;
    if (!int8_readers_convertible(g, uses, out, p, &dqs, &moved)) continue;
    const int zp = add_constant(g, g.values[q.inputs[2]].name + "_u8",
                                Tensor::from_vector<uint8_t>(DataType::UInt8, {}, {static_cast<uint8_t>(p.zero_point + 128)}));
    q.inputs[2] = zp;
    // x + 128 is monotonic, so a MaxPool of the shifted values is the shifted MaxPool.
    g.values[out].dtype = DataType::UInt8;
    for (int v : moved) g.values[v].dtype = DataType::UInt8;
    for (int dq : dqs) g.nodes[dq].inputs[2] = zp;
    ++changed;
  }
  return changed;
}

// Conv islands -> ng.QConv. Returns how many.
int fuse_conv_islands(Graph& g) {
  const std::vector<int> prod = g.producers();
  const Uses uses = find_uses(g);
  std::vector<char> dead(g.nodes.size(), 0);
  int fused = 0;
  for (size_t n = 0; n < g.nodes.size(); ++n) {
    const Node& conv = g.nodes[n];
    if (conv.op_type != "Conv" || conv.inputs.size() < 2 || conv.inputs.size() > 3 || conv.outputs.size() != 1) continue;
    DequantizedInput x;
    if (!dequantized_input(g, prod, conv.inputs[0], &x)) continue;
    QuantWeights w;
    if (!quantized_weights(g, prod, conv.inputs[1], /*rank=*/4, /*channel_axis=*/0, &w)) continue;
    const int64_t m = g.values[w.wq].constant.dim(0);
    QuantizedOutput y;
    if (!quantized_output(g, uses, conv.outputs[0], /*allow_activation=*/true, &y)) continue;
    std::vector<int32_t> bias;
    if (!quantized_bias(g, prod, conv.inputs.size() > 2 ? conv.inputs[2] : -1, m, x.params.scale, w.scale, &bias))
      continue;

    Node fusedconv;
    fusedconv.name = conv.name;
    fusedconv.op_type = "ng.QConv";
    fusedconv.opset = conv.opset;
    fusedconv.attrs = conv.attrs;
    QConvAttrs qa;
    qa.x_scale = x.params.scale, qa.x_zero_point = x.params.zero_point;
    qa.w_scale = w.scale;
    qa.y_scale = y.params.scale, qa.y_zero_point = y.params.zero_point;
    qa.qmin = y.qmin, qa.qmax = y.qmax;
    write_qconv_attrs(qa, fusedconv.attrs);
    const int b = add_constant(g, conv.name + "_bias_int32", Tensor::from_vector<int32_t>(DataType::Int32, {m}, bias));
    fusedconv.inputs = {x.q, w.wq, b};
    fusedconv.outputs = {y.q};
    g.nodes[n] = std::move(fusedconv);  // in the conv's place: its inputs come before, the Q's readers after
    if (y.act >= 0) dead[y.act] = 1;
    dead[y.quantize] = 1;
    ++fused;
  }
  erase_nodes(g, dead);
  return fused;
}

// Add(DQ(a), DQ(b)) [-> Relu | Clip] -> Q  ->  ng.QAdd(a, b).
int fuse_add_islands(Graph& g) {
  const std::vector<int> prod = g.producers();
  const Uses uses = find_uses(g);
  std::vector<char> dead(g.nodes.size(), 0);
  int fused = 0;
  for (size_t n = 0; n < g.nodes.size(); ++n) {
    Node& add = g.nodes[n];
    if (add.op_type != "Add" || add.inputs.size() != 2 || add.outputs.size() != 1) continue;
    DequantizedInput a, b;
    QuantizedOutput y;
    if (!dequantized_input(g, prod, add.inputs[0], &a) || !dequantized_input(g, prod, add.inputs[1], &b) ||
        !quantized_output(g, uses, add.outputs[0], /*allow_activation=*/true, &y))
      continue;
    Node q;
    q.name = add.name;
    q.op_type = "ng.QAdd";
    q.opset = add.opset;
    write_tensor_quant({a.params.scale, a.params.zero_point}, "a", q.attrs);
    write_tensor_quant({b.params.scale, b.params.zero_point}, "b", q.attrs);
    write_tensor_quant({y.params.scale, y.params.zero_point}, "y", q.attrs);
    write_qclamp({y.qmin, y.qmax}, q.attrs);
    q.inputs = {a.q, b.q};
    q.outputs = {y.q};
    add = std::move(q);
    if (y.act >= 0) dead[y.act] = 1;
    dead[y.quantize] = 1;
    ++fused;
  }
  erase_nodes(g, dead);
  return fused;
}

// A Concat whose inputs are dequantised with its output's parameters runs on the uint8 tensors itself:
// Concat(DQ(x_0), DQ(x_1), ...) -> Q  ->  Concat(x_0, x_1, ...). (With differing parameters or an
// activation it becomes ng.QConcat: fuse_qdq_ops.cpp.)
int fuse_same_scale_concats(Graph& g) {
  const std::vector<int> prod = g.producers();
  const Uses uses = find_uses(g);
  std::vector<char> dead(g.nodes.size(), 0);
  int fused = 0;
  for (size_t n = 0; n < g.nodes.size(); ++n) {
    Node& node = g.nodes[n];
    if (node.op_type != "Concat" || node.outputs.size() != 1 || node.outputs[0] < 0) continue;
    QuantizedOutput y;
    if (!quantized_output(g, uses, node.outputs[0], /*allow_activation=*/false, &y) || !full_range(y)) continue;
    std::vector<int> sources;
    for (int in : node.inputs) {
      DequantizedInput x;
      if (!dequantized_input(g, prod, in, &x) || !same_params(x.params, y.params)) break;
      sources.push_back(x.q);
    }
    if (sources.size() != node.inputs.size()) continue;
    node.inputs = sources;
    node.outputs[0] = y.q;
    dead[y.quantize] = 1;
    ++fused;
  }
  erase_nodes(g, dead);
  return fused;
}

}  // namespace

int fuse_qdq(Graph& g) {
  bool any = false;
  for (const Node& n : g.nodes) any = any || n.op_type == "QuantizeLinear" || n.op_type == "DequantizeLinear";
  if (!any) return 0;
  activations_to_uint8(g, find_uses(g));
  int fused = fuse_conv_islands(g) + fuse_add_islands(g) + fuse_same_scale_concats(g) + fuse_moving_chains(g);
  // After fuse_same_scale_concats, which takes the Concats whose inputs share the output's parameters.
  fused += fuse_gemm_islands(g) + fuse_concat_islands(g) + fuse_average_pool_islands(g);
  if (fused > 0) remove_dead_nodes(g);
  return fused;
}

}  // namespace ninegrid
