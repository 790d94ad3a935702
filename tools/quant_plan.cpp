#include "quant_plan.h"

#include <functional>
#include <set>

#include "onnx_edit.h"

namespace ninegrid::quant {

using onnx::AttributeProto;
using onnx::GraphProto;
using onnx::ModelProto;
using onnx::NodeProto;
using onnx::TensorProto;

QuantPlan plan_quantization(const onnx::ModelProto& model, const ValueTypes& types,
                            const std::vector<std::string>& keep_float) {
  const GraphProto& g = model.graph();
  const Index idx(g);
  QuantPlan plan;

  std::vector<char> keep(g.node_size(), 0);
  for (const std::string& name : keep_float) {
    bool found = false;
    for (int n = 0; n < g.node_size(); ++n) {
      const NodeProto& node = g.node(n);
      bool match = node.name() == name;
      for (const auto& o : node.output()) match = match || (o == name && !name.empty());
      if (match) {
        keep[n] = 1;
        found = true;
      }
    }
    if (!found) {
      std::string examples;
      int shown = 0;
      for (const auto& node : g.node()) {
        if (shown == 4) break;
        if (node.op_type() != "Conv" && node.op_type() != "Gemm" && node.op_type() != "MatMul") continue;
        examples += (shown++ ? ", '" : "'") + node_label(node) + "'";
      }
      throw Error("--keep-float: the model has no node named '" + name + "' (nor one with an output of that name)" +
                  (examples.empty() ? std::string() : "; its node names look like " + examples));
    }
  }

  auto is_float = [&](const std::string& t) {
    auto it = types.find(t);
    return it != types.end() && it->second.dtype == DataType::Float32;
  };
  // A float value computed by the graph (or fed to it), not a weight.
  auto is_activation = [&](const std::string& t) {
    return !t.empty() && !idx.initializer.count(t) && (idx.producer.count(t) || idx.inputs.count(t)) && is_float(t);
  };
  auto float_init = [&](const std::string& t, int min_rank, int max_rank) -> const TensorProto* {
    const TensorProto* p = idx.init(g, t);
    if (!p || p->data_type() != TensorProto::FLOAT || p->dims_size() < min_rank || p->dims_size() > max_rank)
      return nullptr;
    return p;
  };

  std::set<std::string> chosen;
  for (int n = 0; n < g.node_size(); ++n) {
    const NodeProto& node = g.node(n);
    const std::string& op = node.op_type();
    static const std::set<std::string> kOps = {"Conv",    "Gemm",        "MatMul",     "Add",
                                               "Concat",  "MaxPool",     "AveragePool", "GlobalAveragePool"};
    if (!default_domain(node) || !kOps.count(op)) continue;
    const std::string label = node_label(node);
    if (keep[n]) {
      plan.left_float.push_back(label + " (" + op + "): --keep-float");
      continue;
    }
    if (node.output_size() < 1 || !is_activation(node.output(0))) {
      plan.left_float.push_back(label + " (" + op + "): its output is not a float tensor");
      continue;
    }
    std::vector<std::string> act_inputs;
    std::string why;
    if (op == "Conv") {
      const TensorProto* w = node.input_size() > 1 ? float_init(node.input(1), 3, 5) : nullptr;
      if (!is_activation(node.input(0))) why = "its input is not a float tensor";
      else if (!w) why = "its weight is not a constant float tensor";
      else if (node.input_size() > 2 && !node.input(2).empty()) {
        const TensorProto* b = float_init(node.input(2), 1, 1);
        if (!b || b->dims(0) != w->dims(0)) why = "its bias is not a constant float vector";
      }
      act_inputs = {node.input(0)};
    } else if (op == "Gemm" || op == "MatMul") {
      const TensorProto* w = node.input_size() > 1 ? float_init(node.input(1), 2, 2) : nullptr;
      if (!is_activation(node.input(0))) why = "its input is not a float tensor";
      else if (!w) why = "its weight (B) is not a constant 2-D float tensor";
      else if (op == "Gemm") {
        const bool trans_b = attr_int(node, "transB", 0) != 0;
        const int64_t n_out = trans_b ? w->dims(0) : w->dims(1);
        if (attr_float(node, "alpha", 1.f) != 1.f || attr_int(node, "transA", 0) != 0)
          why = "alpha is not 1 or A is transposed";
        else if (node.input_size() > 2 && !node.input(2).empty()) {
          const TensorProto* c = float_init(node.input(2), 1, 1);
          if (attr_float(node, "beta", 1.f) != 1.f) why = "beta is not 1";
          else if (!c || c->dims(0) != n_out) why = "its bias (C) is not a constant float vector of its output width";
        }
      }
      act_inputs = {node.input(0)};
    } else if (op == "Add" || op == "Concat") {
      bool any_activation = false;
      for (const auto& in : node.input()) {
        if (is_activation(in)) {
          any_activation = true;
          act_inputs.push_back(in);
        } else if (!float_init(in, 0, 8)) {
          why = "input '" + in + "' is neither a float tensor nor a float constant";
          break;
        }
      }
      if (why.empty() && !any_activation) why = "all its inputs are constants";
    } else {  // pools
      if (!is_activation(node.input(0))) why = "its input is not a float tensor";
      if (op == "MaxPool" && node.output_size() > 1 && !node.output(1).empty()) why = "its Indices output is used";
      act_inputs = {node.input(0)};
    }
    if (!why.empty()) {
      plan.left_float.push_back(label + " (" + op + "): " + why);
      continue;
    }

    QuantLayer layer;
    layer.node = n;
    layer.name = label;
    layer.keep_name = node.name().empty() ? node.output(0) : node.name();
    layer.op_type = op;
    layer.output = node.output(0);
    layer.inputs = act_inputs;
    // A Relu or Clip that is the only reader of the output joins the island: quantised after it.
    if (op == "Conv" || op == "Gemm" || op == "MatMul" || op == "Add" || op == "Concat") {
      const auto& readers = idx.readers_of(node.output(0));
      if (readers.size() == 1 && idx.only_reader(node.output(0), readers[0])) {
        const int a = readers[0];
        const NodeProto& act = g.node(a);
        bool clamp = default_domain(act) && !keep[a] && act.output_size() == 1 && is_activation(act.output(0)) &&
                     act.input(0) == node.output(0) && (act.op_type() == "Relu" || act.op_type() == "Clip");
        for (int k = 1; clamp && k < act.input_size(); ++k)
          clamp = act.input(k).empty() || float_init(act.input(k), 0, 1);
        if (clamp) {
          layer.activation = a;
          layer.op_type = op + "+" + act.op_type();
          layer.output = act.output(0);
        }
      }
    }
    for (const auto& in : act_inputs) chosen.insert(in);
    chosen.insert(layer.output);
    if (op == "MaxPool") plan.shares[layer.output] = node.input(0);
    plan.layers.push_back(std::move(layer));
  }

  // A tensor computed from another quantised tensor by ops that only move or select its values (nearest
  // Resize, Slice, Reshape, Transpose, ...) takes that tensor's parameters, as ONNX Runtime's quantiser
  // does: the DequantizeLinear -> moves -> QuantizeLinear between them then drops out when the model is
  // loaded (graph/passes/fuse_qdq_moves.cpp) rather than requantising. RetinaFace's FPN: the upsampled
  // (and cropped) coarser level that the Add of the finer one reads.
  auto moves_values = [&](const NodeProto& n) {
    static const std::set<std::string> kMoves = {"Reshape", "Flatten", "Squeeze", "Unsqueeze", "Transpose", "Identity",
                                                 "Slice", "DepthToSpace", "SpaceToDepth", "Resize", "Upsample"};
    if (!default_domain(n) || !kMoves.count(n.op_type()) || n.input_size() < 1 || n.output_size() < 1) return false;
    for (int o = 1; o < n.output_size(); ++o)
      if (!n.output(o).empty()) return false;
    if (n.op_type() != "Resize" && n.op_type() != "Upsample") return true;
    const AttributeProto* mode = find_attr(n, "mode");
    const AttributeProto* coords = find_attr(n, "coordinate_transformation_mode");
    return (!mode || mode->s() == "nearest") && (!coords || coords->s() != "tf_crop_and_resize");
  };
  for (const std::string& t : chosen) {
    if (plan.shares.count(t)) continue;
    std::string s = t;
    int hops = 0;
    for (; hops < 64; ++hops) {
      const int p = idx.producer_of(s);
      if (p < 0 || !moves_values(g.node(p)) || g.node(p).output(0) != s || !is_activation(g.node(p).input(0))) break;
      s = g.node(p).input(0);
      if (chosen.count(s)) break;
    }
    if (s != t && chosen.count(s)) plan.shares[t] = s;
  }

  for (const auto& in : g.input())
    if (chosen.count(in.name()) && idx.inputs.count(in.name())) plan.tensors.push_back(in.name());
  for (const auto& node : g.node())
    for (const auto& o : node.output())
      if (!o.empty() && chosen.count(o)) plan.tensors.push_back(o);

  // Tensors whose negative values no reader sees: every path from them passes only through Concat or
  // MaxPool (which keep each value or drop it) into a Relu, or a Clip whose lower bound is not negative.
  // Their range can start at 0 and spend all 256 levels on the values that matter (uint8 with zero point
  // 0 saturates the negatives to 0, which is what the Relu would have made of them). An SSH block's
  // Conv -> Concat -> Relu is the case: its convs' outputs are signed, its Concat's readers are not.
  std::map<std::string, bool> memo;
  std::function<bool(const std::string&, int)> nonnegative_use = [&](const std::string& t, int depth) -> bool {
    auto it = memo.find(t);
    if (it != memo.end()) return it->second;
    const auto& readers = idx.readers_of(t);
    bool ok = depth < 64 && !readers.empty() && !idx.outputs.count(t) && !idx.subgraph_reads.count(t);
    for (size_t k = 0; ok && k < readers.size(); ++k) {
      const NodeProto& r = g.node(readers[k]);
      const std::string& op = r.op_type();
      if (!default_domain(r)) ok = false;
      else if (op == "Relu") ok = true;
      else if (op == "Clip") {
        std::vector<float> lo;
        const TensorProto* c = r.input_size() > 1 && !r.input(1).empty() ? float_init(r.input(1), 0, 1) : nullptr;
        ok = r.input(0) == t && c && tensor_floats(*c, &lo) && lo.size() == 1 && lo[0] >= 0.f;
      } else if (op == "Concat" || op == "MaxPool") {
        bool single_output = true;
        for (int o = 1; o < r.output_size(); ++o) single_output = single_output && r.output(o).empty();
        ok = single_output && nonnegative_use(r.output(0), depth + 1);
      } else {
        ok = false;
      }
    }
    return memo[t] = ok;
  };
  for (const std::string& t : plan.tensors)
    if (nonnegative_use(t, 0)) plan.nonnegative.insert(t);
  return plan;
}
}  // namespace ninegrid::quant
