#include "graph/passes/fuse_qdq_ops.h"

#include "graph/passes/graph_edit.h"
#include "graph/passes/qdq_match.h"
#include "ir/quant_attrs.h"

namespace ninegrid {

using namespace qdq;

namespace {

// The int8 weights of a fully connected layer as ng.QGemm takes them, [N, K]: `wq` itself when its rows
// are the output columns, else its transpose as a new constant.
int weights_by_output_column(Graph& g, int wq, bool rows_are_outputs, const std::string& name) {
  if (rows_are_outputs) return wq;
  const Tensor& w = g.values[wq].constant;  // [K, N]
  const int64_t k = w.dim(0), n = w.dim(1);
  std::vector<int8_t> t(static_cast<size_t>(n * k));
  for (int64_t i = 0; i < k; ++i)
    for (int64_t j = 0; j < n; ++j) t[j * k + i] = w.data_as<int8_t>()[i * n + j];
  return add_constant(g, name + "_weights_nk", Tensor::from_vector<int8_t>(DataType::Int8, {n, k}, t));
}

}  // namespace

int fuse_gemm_islands(Graph& g) {
  const std::vector<int> prod = g.producers();
  const Uses uses = find_uses(g);
  std::vector<char> dead(g.nodes.size(), 0);
  int fused = 0;
  for (size_t n = 0; n < g.nodes.size(); ++n) {
    const Node& op = g.nodes[n];
    const bool gemm = op.op_type == "Gemm";
    if ((!gemm && op.op_type != "MatMul") || op.inputs.size() < 2 || op.outputs.size() != 1) continue;
    bool trans_b = false, plain = true;
    try {  // attributes of the wrong kind: the Gemm op names the node when it reads them
      trans_b = gemm && op.attrs.get_int("transB", 0) != 0;
      plain = gemm ? op.inputs.size() <= 3 && op.attrs.get_float("alpha", 1.f) == 1.f &&
                         op.attrs.get_int("transA", 0) == 0 &&
                         (op.inputs.size() < 3 || op.inputs[2] < 0 || op.attrs.get_float("beta", 1.f) == 1.f)
                   : op.inputs.size() == 2;
    } catch (const Error&) {
      plain = false;
    }
    if (!plain) continue;
    DequantizedInput x;
    if (!dequantized_input(g, prod, op.inputs[0], &x)) continue;
    QuantWeights w;
    if (!quantized_weights(g, prod, op.inputs[1], /*rank=*/2, /*channel_axis=*/trans_b ? 0 : 1, &w)) continue;
    const int64_t cols = g.values[w.wq].constant.dim(trans_b ? 0 : 1);
    QuantizedOutput y;
    if (!quantized_output(g, uses, op.outputs[0], /*allow_activation=*/true, &y)) continue;
    std::vector<int32_t> bias;
    const int b = gemm && op.inputs.size() > 2 ? op.inputs[2] : -1;
    if (!quantized_bias(g, prod, b, cols, x.params.scale, w.scale, &bias)) continue;

    Node q;
    q.name = op.name;
    q.op_type = "ng.QGemm";
    q.opset = op.opset;
    QConvAttrs qa;
    qa.x_scale = x.params.scale, qa.x_zero_point = x.params.zero_point;
    qa.w_scale = w.scale;
    qa.y_scale = y.params.scale, qa.y_zero_point = y.params.zero_point;
    qa.qmin = y.qmin, qa.qmax = y.qmax;
    write_qconv_attrs(qa, q.attrs);
    if (gemm) q.attrs.set("x_is_matrix", Attribute::of_int(1));  // Gemm's A must be 2-D, MatMul's need not
    const std::string name = op.name;
    const int wnk = weights_by_output_column(g, w.wq, trans_b, name);
    const int bq = add_constant(g, name + "_bias_int32", Tensor::from_vector<int32_t>(DataType::Int32, {cols}, bias));
    q.inputs = {x.q, wnk, bq};
    q.outputs = {y.q};
    g.nodes[n] = std::move(q);
    if (y.act >= 0) dead[y.act] = 1;
    dead[y.quantize] = 1;
    ++fused;
  }
  erase_nodes(g, dead);
  return fused;
}

int fuse_concat_islands(Graph& g) {
  const std::vector<int> prod = g.producers();
  const Uses uses = find_uses(g);
  std::vector<char> dead(g.nodes.size(), 0);
  int fused = 0;
  for (size_t n = 0; n < g.nodes.size(); ++n) {
    Node& cat = g.nodes[n];
    if (cat.op_type != "Concat" || cat.inputs.empty() || cat.outputs.size() != 1) continue;
    // A Relu or Clip after the Concat is ng.QConcat's clamp (exact: quantising is monotonic). Not after
    // an ncnn QuantizeLinear, which rounds its own way (qdq_match.h).
    QuantizedOutput y;
    if (!quantized_output(g, uses, cat.outputs[0], /*allow_activation=*/true, &y) ||
        g.nodes[y.quantize].attrs.has(kNcnnScale))
      continue;
    std::vector<int> sources;
    std::vector<float> scales;
    std::vector<int64_t> zero_points;
    for (int in : cat.inputs) {
      DequantizedInput x;
      if (!dequantized_input(g, prod, in, &x)) break;
      sources.push_back(x.q);
      scales.push_back(x.params.scale);
      zero_points.push_back(x.params.zero_point);
    }
    if (sources.size() != cat.inputs.size()) continue;
    Node q;
    q.name = cat.name;
    q.op_type = "ng.QConcat";
    q.opset = cat.opset;
    q.attrs.set("axis", Attribute::of_int(cat.attrs.get_int("axis", 0)));
    q.attrs.set("x_scales", Attribute::of_floats(scales));
    q.attrs.set("x_zero_points", Attribute::of_ints(zero_points));
    write_tensor_quant({y.params.scale, y.params.zero_point}, "y", q.attrs);
    write_qclamp({y.qmin, y.qmax}, q.attrs);
    q.inputs = sources;
    q.outputs = {y.q};
    cat = std::move(q);
    if (y.act >= 0) dead[y.act] = 1;
    dead[y.quantize] = 1;
    ++fused;
  }
  erase_nodes(g, dead);
  return fused;
}

int fuse_average_pool_islands(Graph& g) {
  const std::vector<int> prod = g.producers();
  const Uses uses = find_uses(g);
  std::vector<char> dead(g.nodes.size(), 0);
  int fused = 0;
  for (size_t n = 0; n < g.nodes.size(); ++n) {
    Node& pool = g.nodes[n];
    const bool global = pool.op_type == "GlobalAveragePool";
    if ((!global && pool.op_type != "AveragePool") || pool.inputs.size() != 1 || pool.outputs.size() != 1) continue;
    DequantizedInput x;
    QuantizedOutput y;
    if (!dequantized_input(g, prod, pool.inputs[0], &x) ||
        !quantized_output(g, uses, pool.outputs[0], /*allow_activation=*/false, &y) || !full_range(y))
      continue;
    Node q;
    q.name = pool.name;
    q.op_type = global ? "ng.QGlobalAveragePool" : "ng.QAveragePool";
    q.opset = pool.opset;
    if (!global) q.attrs = pool.attrs;  // the window and count_include_pad
    write_tensor_quant({x.params.scale, x.params.zero_point}, "x", q.attrs);
    write_tensor_quant({y.params.scale, y.params.zero_point}, "y", q.attrs);
    q.inputs = {x.q};
    q.outputs = {y.q};
    pool = std::move(q);
    dead[y.quantize] = 1;
    ++fused;
  }
  erase_nodes(g, dead);
  return fused;
}

}  // namespace ninegrid
