#include "import/onnx/qoperator_forms.h"

#include <cstring>

#include "import/onnx/legacy_forms.h"

namespace ninegrid {
namespace {

const char* const kDefaultDomainOps[] = {"QLinearConv", "QLinearMatMul"};
const char* const kMicrosoftOps[] = {"QLinearAdd",         "QLinearMul",     "QGemm",
                                     "QLinearConcat",      "QLinearAveragePool", "QLinearGlobalAveragePool",
                                     "QLinearSigmoid",     "QLinearLeakyRelu"};

class Expander {
 public:
  Expander(Graph& g, const Node& q, std::vector<Node>& out) : g_(g), q_(q), out_(out) {}

  void run() {
    const std::string& op = q_.op_type;
    if (op == "QLinearConv") conv();
    else if (op == "QLinearMatMul") matmul();
    else if (op == "QLinearAdd" || op == "QLinearMul") binary(op == "QLinearAdd" ? "Add" : "Mul");
    else if (op == "QGemm") gemm();
    else if (op == "QLinearConcat") concat();
    else if (op == "QLinearAveragePool" || op == "QLinearGlobalAveragePool") pool();
    else if (op == "QLinearSigmoid" || op == "QLinearLeakyRelu") unary(op == "QLinearSigmoid" ? "Sigmoid" : "LeakyRelu");
    else throw_node_error(q_, "is not a QOperator form");  // unreachable: is_qoperator guards the call
  }

 private:
  // QLinearConv(x, x_scale, x_zp, w, w_scale, w_zp, y_scale, y_zp[, B]): B is int32 in units of
  // x_scale * w_scale.
  void conv() {
    expect_inputs(8, 9);
    const int x = dq(0, 1, 2, 1, "x");
    const int w = dq(3, 4, 5, 0, "w");
    std::vector<int> ins = {x, w};
    if (present(8)) ins.push_back(dq_bias(8, q_.inputs[1], q_.inputs[4]));
    Node& conv = add("Conv", ins, {fresh("conv")});
    conv.attrs = q_.attrs;
    quantize(conv.outputs[0], 6, 7);
  }

  // QLinearMatMul(a, a_scale, a_zp, b, b_scale, b_zp, y_scale, y_zp): a per row, b per column.
  void matmul() {
    expect_inputs(8, 8);
    const int a = dq(0, 1, 2, -2, "a");
    const int b = dq(3, 4, 5, -1, "b");
    quantize(add("MatMul", {a, b}, {fresh("matmul")}).outputs[0], 6, 7);
  }

  // com.microsoft QLinearAdd / QLinearMul(A, A_scale, A_zp, B, B_scale, B_zp, C_scale[, C_zp]).
  void binary(const char* op) {
    expect_inputs(7, 8);
    const int a = dq(0, 1, 2, 1, "a");
    const int b = dq(3, 4, 5, 1, "b");
    quantize(add(op, {a, b}, {fresh(op)}).outputs[0], 6, 7);
  }

  // com.microsoft QGemm(A, a_scale, a_zp, B, b_scale, b_zp[, C][, y_scale, y_zp]): C is int32 in units of
  // a_scale * b_scale; without y_scale the output is float.
  void gemm() {
    expect_inputs(6, 9);
    const bool trans_b = q_.attrs.get_int("transB", 0) != 0;
    const int a = dq(0, 1, 2, 1, "a");
    const int b = dq(3, 4, 5, trans_b ? 0 : 1, "b");
    std::vector<int> ins = {a, b};
    if (present(6)) ins.push_back(dq_bias(6, q_.inputs[1], q_.inputs[4]));
    Node& gemm = add("Gemm", ins, {-1});
    for (const char* name : {"alpha", "transA", "transB"})
      if (q_.attrs.has(name)) gemm.attrs.set(name, *q_.attrs.find(name));
    if (present(7)) {
      const int y = fresh("gemm");
      out_.back().outputs[0] = y;
      quantize(y, 7, 8);
    } else {
      out_.back().outputs[0] = q_.outputs[0];
    }
  }

  // com.microsoft QLinearConcat(Y_scale, Y_zp, X_0, X_0_scale, X_0_zp, X_1, ...).
  void concat() {
    if (q_.inputs.size() < 5 || (q_.inputs.size() - 2) % 3 != 0)
      throw_node_error(q_, "needs Y_scale, Y_zero_point and a (tensor, scale, zero point) triple per input, got " +
                               std::to_string(q_.inputs.size()) + " inputs");
    std::vector<int> parts;
    for (size_t i = 2; i < q_.inputs.size(); i += 3) parts.push_back(dq(i, i + 1, i + 2, 1, "x" + std::to_string(i / 3)));
    Node& cat = add("Concat", parts, {fresh("concat")});
    cat.attrs = q_.attrs;
    quantize(cat.outputs[0], 0, 1);
  }

  // com.microsoft QLinearAveragePool / QLinearGlobalAveragePool(X, x_scale, x_zp, y_scale, y_zp), NCHW only.
  void pool() {
    expect_inputs(4, 5);
    not_channels_last();
    const int x = dq(0, 1, 2, 1, "x");
    const bool global = q_.op_type == "QLinearGlobalAveragePool";
    Node& pool = add(global ? "GlobalAveragePool" : "AveragePool", {x}, {fresh("pool")});
    if (!global) pool.attrs = q_.attrs;
    pool.attrs.erase("channels_last");
    quantize(pool.outputs[0], 3, 4);
  }

  // com.microsoft QLinearSigmoid / QLinearLeakyRelu(X, X_scale, X_zp, Y_scale, Y_zp).
  void unary(const char* op) {
    expect_inputs(4, 5);
    const int x = dq(0, 1, 2, 1, "x");
    Node& n = add(op, {x}, {fresh(op)});
    n.attrs = q_.attrs;
    quantize(n.outputs[0], 3, 4);
  }

  void not_channels_last() {
    if (q_.attrs.get_int("channels_last", 0) != 0) throw_node_error(q_, "unsupported: channels_last = 1 (NHWC)");
  }

  void expect_inputs(size_t min, size_t max) {
    if (q_.inputs.size() < min || q_.inputs.size() > max)
      throw_node_error(q_, "needs " + std::to_string(min) + (min == max ? "" : " to " + std::to_string(max)) +
                               " inputs, got " + std::to_string(q_.inputs.size()));
  }
  bool present(size_t i) const { return i < q_.inputs.size() && q_.inputs[i] >= 0; }
  int required(size_t i) const {
    if (!present(i)) throw_node_error(q_, "input " + std::to_string(i) + " is required");
    return q_.inputs[i];
  }

  // A new value named after the node.
  int fresh(const std::string& what) {
    std::string name = q_.name + "::" + what;
    for (int i = 2; g_.find_value(name) >= 0; ++i) name = q_.name + "::" + what + "_" + std::to_string(i);
    return g_.add_value(name);
  }

  Node& add(const std::string& op, std::vector<int> inputs, std::vector<int> outputs) {
    Node n;
    n.name = q_.name + (out_.empty() ? "" : "::" + std::to_string(out_.size())) + "::" + op;
    n.op_type = op;
    n.opset = q_.opset;
    n.inputs = std::move(inputs);
    n.outputs = std::move(outputs);
    out_.push_back(std::move(n));
    return out_.back();
  }

  // DequantizeLinear(input x, scale, zero point) with `axis` for per-axis parameters; the float value.
  int dq(size_t x, size_t scale, size_t zp, int64_t axis, const std::string& what) {
    Node& n = add("DequantizeLinear", {required(x), required(scale), present(zp) ? q_.inputs[zp] : -1},
                  {fresh(what + "_dequantized")});
    n.attrs.set("axis", Attribute::of_int(axis));
    return n.outputs[0];
  }

  // An int32 bias in units of scale_a * scale_b, dequantised: the product is a constant when both are
  // (computed in float, as the fused op recovers the integers from), else a Mul node.
  int dq_bias(size_t bias, int scale_a, int scale_b) {
    int scale;
    const Value &sa = g_.values[scale_a], &sb = g_.values[scale_b];
    if (sa.is_constant() && sb.is_constant() && sa.constant.dtype() == DataType::Float32 &&
        sb.constant.dtype() == DataType::Float32 && sa.constant.numel() == 1) {
      const float a = sa.constant.data_as<float>()[0];
      std::vector<float> product(static_cast<size_t>(sb.constant.numel()));
      for (size_t i = 0; i < product.size(); ++i) product[i] = a * sb.constant.data_as<float>()[i];
      scale = add_constant_value(g_, q_.name + "::bias_scale",
                                 Tensor::from_vector<float>(DataType::Float32, {static_cast<int64_t>(product.size())}, product));
    } else {
      scale = add("Mul", {scale_a, scale_b}, {fresh("bias_scale")}).outputs[0];
    }
    Node& n = add("DequantizeLinear", {required(bias), scale}, {fresh("bias_dequantized")});
    n.attrs.set("axis", Attribute::of_int(0));
    return n.outputs[0];
  }

  // QuantizeLinear(y, input scale, input zero point) writing the node's output.
  void quantize(int y, size_t scale, size_t zp) {
    add("QuantizeLinear", {y, required(scale), present(zp) ? q_.inputs[zp] : -1}, {q_.outputs.at(0)});
  }

  Graph& g_;
  const Node& q_;
  std::vector<Node>& out_;
};

}  // namespace

bool is_qoperator(const std::string& domain, const std::string& op_type) {
  if (domain.empty() || domain == "ai.onnx") {
    for (const char* op : kDefaultDomainOps)
      if (op_type == op) return true;
    return false;
  }
  if (domain != "com.microsoft") return false;
  for (const char* op : kMicrosoftOps)
    if (op_type == op) return true;
  return false;
}

std::string supported_microsoft_ops() {
  std::string s;
  for (const char* op : kMicrosoftOps) s += (s.empty() ? "" : ", ") + std::string(op);
  return s;
}

void expand_qoperator(Graph& graph, const Node& node, std::vector<Node>& out) {
  if (node.outputs.size() != 1 || node.outputs[0] < 0) throw_node_error(node, "must have exactly one output");
  try {
    Expander(graph, node, out).run();
  } catch (const Error& e) {
    // Attribute reads (get_int) throw without the node's name.
    const std::string what = e.what();
    if (what.find("'" + node.name + "'") != std::string::npos) throw;
    throw_node_error(node, what);
  }
}

}  // namespace ninegrid
