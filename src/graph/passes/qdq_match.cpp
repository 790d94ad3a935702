#include "graph/passes/qdq_match.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "ir/quant_attrs.h"
#include "kernels/quantized.h"

namespace ninegrid {
namespace qdq {

bool constant_floats(const Graph& g, const Node& n, size_t slot, std::vector<float>* out) {
  const Tensor* t = constant_input(g, n, slot);
  if (!t || t->dtype() != DataType::Float32) return false;
  out->assign(t->data_as<float>(), t->data_as<float>() + t->numel());
  return true;
}

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

bool quantized_weights(const Graph& g, const std::vector<int>& prod, int w, int rank, int channel_axis,
                       QuantWeights* out) {
  if (w < 0 || prod[w] < 0) return false;
  const Node& dq = g.nodes[prod[w]];
  if (dq.op_type != "DequantizeLinear" || dq.inputs.size() < 2) return false;
  const Tensor* wq = constant_input(g, dq, 0);
  if (!wq || wq->dtype() != DataType::Int8 || wq->rank() != rank) return false;
  if (!constant_floats(g, dq, 1, &out->scale)) return false;
  const int64_t m = wq->dim(channel_axis);
  if (out->scale.size() != 1 && static_cast<int64_t>(out->scale.size()) != m) return false;
  if (out->scale.size() > 1) {
    int64_t axis = dq.attrs.get_int("axis", 1);
    if (axis < 0) axis += rank;
    if (axis != channel_axis) return false;
  }
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

bool quantized_bias(const Graph& g, const std::vector<int>& prod, int b, int64_t m, float x_scale,
                    const std::vector<float>& w_scale, std::vector<int32_t>* out) {
  out->assign(static_cast<size_t>(m), 0);
  if (b < 0) return true;
  std::vector<double> real(static_cast<size_t>(m));
  const Value& v = g.values[b];
  if (v.is_constant()) {
    const Tensor& t = v.constant;
    if (t.dtype() != DataType::Float32 || t.numel() != m) return false;
    for (int64_t c = 0; c < m; ++c) real[c] = t.data_as<float>()[c];
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
    const double q = std::nearbyint(real[c] / unit);
    if (!(std::fabs(q) < 2147483647.0)) return false;
    (*out)[c] = static_cast<int32_t>(q);
  }
  return true;
}

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

bool dequantized_input(const Graph& g, const std::vector<int>& prod, int v, DequantizedInput* out) {
  if (v < 0 || prod[v] < 0) return false;
  const Node& dq = g.nodes[prod[v]];
  if (dq.op_type != "DequantizeLinear" || dq.inputs.empty() || dq.inputs[0] < 0) return false;
  if (!per_tensor_params(g, dq, &out->params) || out->params.type != DataType::UInt8) return false;
  out->q = dq.inputs[0];
  return true;
}

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
  if (out->act >= 0 && !activation_clamp(g, g.nodes[out->act], out->params, &out->qmin, &out->qmax)) return false;
  if (q.attrs.has(kNcnnScale)) {
    // ncnn saturates to [-127, 127] around the zero point (core/ncnn_int8.h). Its
    // rounding (half away from zero, of x * s rather than x / (1 / s)) becomes the fused op's.
    out->qmin = std::max(out->qmin, out->params.zero_point - 127);
    out->qmax = std::min(out->qmax, out->params.zero_point + 127);
    if (out->qmin > out->qmax) return false;
  }
  return true;
}

}  // namespace qdq
}  // namespace ninegrid
