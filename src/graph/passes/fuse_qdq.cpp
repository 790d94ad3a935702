// QDQ fusion: the DequantizeLinear -> float op -> QuantizeLinear islands of a quantised ONNX model (as
// ONNX Runtime's quantiser and PyTorch write them) become integer ops that read and write uint8 tensors
// directly, so the model never runs float round trips between its quantised layers.
//
// First, int8 activations become uint8: a QuantizeLinear with an int8 zero point whose every reader is a
// DequantizeLinear with the same parameters gets zero point + 128 and a uint8 output, and so do its
// readers (the same reals; kernels/quantized.h explains why the kernels want uint8). Then:
//   DQ(x) -> Conv(W = DQ(int8 constant), B) [-> Relu | Clip] -> Q   becomes   ng.QConv
// Runs before constant folding, which would turn the weights' DequantizeLinear into a float constant.
#include <cmath>
#include <limits>

#include "graph/passes/graph_edit.h"
#include "graph/passes/passes.h"
#include "ir/quant_attrs.h"
#include "kernels/quantized.h"

namespace ninegrid {

namespace {

// A node's constant input as a float/integer vector, or false.
bool constant_floats(const Graph& g, const Node& n, size_t slot, std::vector<float>* out) {
  const Tensor* t = constant_input(g, n, slot);
  if (!t || t->dtype() != DataType::Float32) return false;
  out->assign(t->data_as<float>(), t->data_as<float>() + t->numel());
  return true;
}

// The per-tensor scale and zero point of a QuantizeLinear or DequantizeLinear node, when both are
// constants (an absent zero point is uint8 0), with the zero point's type.
struct TensorParams {
  float scale = 0.f;
  int32_t zero_point = 0;
  DataType type = DataType::UInt8;
};
bool per_tensor_params(const Graph& g, const Node& n, TensorParams* p) {
  if (n.inputs.size() < 2) return false;
  std::vector<float> scale;
  if (!constant_floats(g, n, 1, &scale) || scale.size() != 1 || !(scale[0] > 0.f) || !std::isfinite(scale[0]))
    return false;
  p->scale = scale[0];
  p->zero_point = 0;
  p->type = DataType::UInt8;
  if (n.inputs.size() > 2 && n.inputs[2] >= 0) {
    const Tensor* zp = constant_input(g, n, 2);
    if (!zp || zp->numel() != 1) return false;
    p->type = zp->dtype();
    if (p->type == DataType::UInt8) p->zero_point = zp->data_as<uint8_t>()[0];
    else if (p->type == DataType::Int8) p->zero_point = zp->data_as<int8_t>()[0];
    else return false;
  }
  return true;
}

bool same_params(const TensorParams& a, const TensorParams& b) {
  return a.scale == b.scale && a.zero_point == b.zero_point && a.type == b.type;
}

// int8 activations -> uint8 (see the file comment). Returns how many QuantizeLinear nodes changed.
int activations_to_uint8(Graph& g, const Uses& uses) {
  int changed = 0;
  for (size_t n = 0; n < g.nodes.size(); ++n) {
    Node& q = g.nodes[n];
    if (q.op_type != "QuantizeLinear" || q.outputs.empty() || q.outputs[0] < 0) continue;
    TensorParams p;
    if (!per_tensor_params(g, q, &p) || p.type != DataType::Int8) continue;
    const int out = q.outputs[0];
    if (uses.is_graph_output[out] || uses.readers[out].empty()) continue;
    bool all_dq = true;
    for (const auto& [reader, slot] : uses.readers[out]) {
      TensorParams rp;
      all_dq = all_dq && slot == 0 && g.nodes[reader].op_type == "DequantizeLinear" &&
               per_tensor_params(g, g.nodes[reader], &rp) && same_params(p, rp);
    }
    if (!all_dq) continue;
    const int zp = add_constant(g, g.values[q.inputs[2]].name + "_u8",
                                Tensor::from_vector<uint8_t>(DataType::UInt8, {}, {static_cast<uint8_t>(p.zero_point + 128)}));
    q.inputs[2] = zp;
    g.values[out].dtype = DataType::UInt8;
    for (const auto& [reader, slot] : uses.readers[out]) g.nodes[reader].inputs[2] = zp;
    ++changed;
  }
  return changed;
}

// The int8 weights and per-channel scales behind a Conv's weight input W = DequantizeLinear(constant).
struct QuantWeights {
  int wq = -1;  // the int8 constant's value id
  std::vector<float> scale;  // 1 or out_channels values
};
bool quantized_weights(const Graph& g, const std::vector<int>& prod, int w, QuantWeights* out) {
  if (w < 0 || prod[w] < 0) return false;
  const Node& dq = g.nodes[prod[w]];
  if (dq.op_type != "DequantizeLinear" || dq.inputs.size() < 2) return false;
  const Tensor* wq = constant_input(g, dq, 0);
  if (!wq || wq->dtype() != DataType::Int8 || wq->rank() != 4) return false;
  if (!constant_floats(g, dq, 1, &out->scale)) return false;
  const int64_t m = wq->dim(0);
  if (out->scale.size() != 1 && static_cast<int64_t>(out->scale.size()) != m) return false;
  if (out->scale.size() > 1 && dq.attrs.get_int("axis", 1) != 0) return false;
  for (float s : out->scale)
    if (!(s > 0.f) || !std::isfinite(s)) return false;
  if (dq.inputs.size() > 2 && dq.inputs[2] >= 0) {  // symmetric weights only
    const Tensor* zp = constant_input(g, dq, 2);
    if (!zp || zp->dtype() != DataType::Int8) return false;
    for (int64_t i = 0; i < zp->numel(); ++i)
      if (zp->data_as<int8_t>()[i] != 0) return false;
  }
  out->wq = dq.inputs[0];
  return true;
}

// The conv's bias in units of x_scale * w_scale[c] as int32: from DequantizeLinear(int32 constant) or a
// float constant. False when it is neither (or does not fit int32).
bool quantized_bias(const Graph& g, const std::vector<int>& prod, const Node& conv, int64_t m, float x_scale,
                    const std::vector<float>& w_scale, std::vector<int32_t>* out) {
  out->assign(static_cast<size_t>(m), 0);
  if (conv.inputs.size() < 3 || conv.inputs[2] < 0) return true;
  const int b = conv.inputs[2];
  std::vector<double> real(static_cast<size_t>(m));
  if (const Tensor* t = constant_input(g, conv, 2)) {
    if (t->dtype() != DataType::Float32 || t->numel() != m) return false;
    for (int64_t c = 0; c < m; ++c) real[c] = t->data_as<float>()[c];
  } else {
    if (prod[b] < 0) return false;
    const Node& dq = g.nodes[prod[b]];
    std::vector<float> scale;
    const Tensor* bq = constant_input(g, dq, 0);
    if (dq.op_type != "DequantizeLinear" || !bq || bq->dtype() != DataType::Int32 || bq->numel() != m ||
        !constant_floats(g, dq, 1, &scale) || (scale.size() != 1 && static_cast<int64_t>(scale.size()) != m))
      return false;
    if (dq.inputs.size() > 2 && dq.inputs[2] >= 0) {
      const Tensor* zp = constant_input(g, dq, 2);
      if (!zp || zp->dtype() != DataType::Int32) return false;
      for (int64_t i = 0; i < zp->numel(); ++i)
        if (zp->data_as<int32_t>()[i] != 0) return false;
    }
    for (int64_t c = 0; c < m; ++c)
      real[c] = static_cast<double>(bq->data_as<int32_t>()[c]) * scale[scale.size() == 1 ? 0 : c];
  }
  for (int64_t c = 0; c < m; ++c) {
    const double unit = static_cast<double>(x_scale * w_scale[w_scale.size() == 1 ? 0 : c]);
    const double v = std::nearbyint(real[c] / unit);
    if (!(std::fabs(v) < 2147483647.0)) return false;
    (*out)[c] = static_cast<int32_t>(v);
  }
  return true;
}

// The clamp an activation between the conv and its QuantizeLinear imposes on the quantised output, or
// false for an activation that is not a clamp.
bool activation_clamp(const Graph& g, const Node& act, const TensorParams& y, int32_t* qmin, int32_t* qmax) {
  *qmin = 0, *qmax = 255;
  if (act.op_type == "Relu") {
    *qmin = std::max(0, y.zero_point);
    return true;
  }
  if (act.op_type != "Clip") return false;
  float lo = -std::numeric_limits<float>::infinity(), hi = std::numeric_limits<float>::infinity();
  if (act.attrs.has("min") || act.attrs.has("max")) {  // opset < 11
    lo = act.attrs.get_float("min", lo);
    hi = act.attrs.get_float("max", hi);
  }
  std::vector<float> v;
  if (act.inputs.size() > 1 && act.inputs[1] >= 0) {
    if (!constant_floats(g, act, 1, &v) || v.size() != 1) return false;
    lo = v[0];
  }
  if (act.inputs.size() > 2 && act.inputs[2] >= 0) {
    if (!constant_floats(g, act, 2, &v) || v.size() != 1) return false;
    hi = v[0];
  }
  if (std::isnan(lo) || std::isnan(hi) || lo > hi) return false;
  // Quantising is monotonic, so clamping before it equals clamping the quantised value to the quantised
  // bounds.
  if (lo > -std::numeric_limits<float>::infinity()) *qmin = quantize_value(lo, y.scale, y.zero_point, 0, 255);
  if (hi < std::numeric_limits<float>::infinity()) *qmax = quantize_value(hi, y.scale, y.zero_point, 0, 255);
  return *qmin <= *qmax;
}

// The uint8 tensor behind a float value v = DequantizeLinear(q) with per-tensor constant parameters.
struct DequantizedInput {
  int q = -1;  // the uint8 value
  TensorParams params;
};
bool dequantized_input(const Graph& g, const std::vector<int>& prod, int v, DequantizedInput* out) {
  if (v < 0 || prod[v] < 0) return false;
  const Node& dq = g.nodes[prod[v]];
  if (dq.op_type != "DequantizeLinear" || dq.inputs.empty() || dq.inputs[0] < 0) return false;
  if (!per_tensor_params(g, dq, &out->params) || out->params.type != DataType::UInt8) return false;
  out->q = dq.inputs[0];
  return true;
}

// Where a float output y goes: [Relu | Clip ->] QuantizeLinear(uint8), each step the only reader of the
// one before. `act` is -1 without an activation (or when activations are not allowed).
struct QuantizedOutput {
  int act = -1, quantize = -1;  // node indices
  int q = -1;                   // the uint8 value the QuantizeLinear writes
  TensorParams params;
  int32_t qmin = 0, qmax = 255;
};
bool quantized_output(const Graph& g, const Uses& uses, int y, bool allow_activation, QuantizedOutput* out) {
  if (y < 0 || uses.is_graph_output[y] || uses.readers[y].size() != 1 || uses.readers[y][0].second != 0) return false;
  int next = uses.readers[y][0].first;
  out->act = -1;
  if (allow_activation && (g.nodes[next].op_type == "Relu" || g.nodes[next].op_type == "Clip")) {
    out->act = next;
    const int a = g.nodes[next].outputs.empty() ? -1 : g.nodes[next].outputs[0];
    if (a < 0 || uses.is_graph_output[a] || uses.readers[a].size() != 1 || uses.readers[a][0].second != 0) return false;
    next = uses.readers[a][0].first;
  }
  const Node& q = g.nodes[next];
  if (q.op_type != "QuantizeLinear" || !per_tensor_params(g, q, &out->params) || out->params.type != DataType::UInt8 ||
      q.outputs.empty() || q.outputs[0] < 0)
    return false;
  out->quantize = next;
  out->q = q.outputs[0];
  out->qmin = 0, out->qmax = 255;
  return out->act < 0 || activation_clamp(g, g.nodes[out->act], out->params, &out->qmin, &out->qmax);
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
    if (!quantized_weights(g, prod, conv.inputs[1], &w)) continue;
    const int64_t m = g.values[w.wq].constant.dim(0);
    QuantizedOutput y;
    if (!quantized_output(g, uses, conv.outputs[0], /*allow_activation=*/true, &y)) continue;
    std::vector<int32_t> bias;
    if (!quantized_bias(g, prod, conv, m, x.params.scale, w.scale, &bias)) continue;

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

// Ops that only move or select values run on the uint8 tensor itself when the DequantizeLinear before
// and the QuantizeLinear after share their parameters: DQ(x) -> MaxPool -> Q  ->  MaxPool(x).
bool moves_values_only(const Node& n) {
  static const char* kOps[] = {"MaxPool", "Reshape", "Flatten", "Squeeze", "Unsqueeze", "Transpose", "Concat"};
  for (const char* op : kOps)
    if (n.op_type == op) return n.op_type != "MaxPool" || n.outputs.size() == 1 || n.outputs[1] < 0;
  return false;
}

int fuse_value_moving_islands(Graph& g) {
  const std::vector<int> prod = g.producers();
  const Uses uses = find_uses(g);
  std::vector<char> dead(g.nodes.size(), 0);
  int fused = 0;
  for (size_t n = 0; n < g.nodes.size(); ++n) {
    Node& node = g.nodes[n];
    if (!moves_values_only(node) || node.outputs.empty() || node.outputs[0] < 0) continue;
    QuantizedOutput y;
    if (!quantized_output(g, uses, node.outputs[0], /*allow_activation=*/false, &y)) continue;
    // Every data input (Reshape's shape and Squeeze's axes are int64 constants and stay) dequantised
    // with the output's parameters; Concat takes all of its inputs as data.
    const size_t data_inputs = node.op_type == "Concat" ? node.inputs.size() : 1;
    std::vector<int> sources;
    for (size_t i = 0; i < data_inputs; ++i) {
      DequantizedInput x;
      if (!dequantized_input(g, prod, node.inputs[i], &x) || !same_params(x.params, y.params)) break;
      sources.push_back(x.q);
    }
    if (sources.size() != data_inputs) continue;
    for (size_t i = 0; i < data_inputs; ++i) node.inputs[i] = sources[i];
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
  const int fused = fuse_conv_islands(g) + fuse_add_islands(g) + fuse_value_moving_islands(g);
  if (fused > 0) remove_dead_nodes(g);
  return fused;
}

}  // namespace ninegrid
