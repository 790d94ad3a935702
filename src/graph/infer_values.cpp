#include "graph/infer_values.h"

#include <algorithm>

#include "core/checked_math.h"
#include "core/thread_pool.h"

namespace ninegrid {

namespace {

// Folding evaluates nodes whose inputs are all known; this bounds how large a tensor it may create
// (shape arithmetic and small constant subgraphs, not whole layers).
constexpr int64_t kMaxFoldBytes = int64_t(64) << 20;

// Evaluates a node whose inputs are known (or, for value_from_shapes ops, whose shapes are), on the
// reference path: the op has been inferred but not prepared.
void fold_node(const Node& node, Op& op, const std::vector<TensorDesc>& in, const std::vector<TensorDesc>& out,
               std::vector<InferredValue>& values, ThreadPool& pool) {
  OpContext ctx;
  ctx.pool = &pool;
  for (const TensorDesc& d : in) ctx.inputs.push_back(d.present ? d.value : nullptr);
  std::vector<Tensor> results(out.size());
  bool computes = false;
  for (size_t o = 0; o < out.size(); ++o) {
    if (node.outputs[o] < 0) {
      ctx.outputs.push_back(nullptr);
      continue;
    }
    // A view of a known input (Identity, Reshape, Squeeze of a weight) shares its storage: no copy.
    const int src = op.aliases_input(static_cast<int>(o));
    const TensorDesc* from = src >= 0 && static_cast<size_t>(src) < in.size() ? &in[src] : nullptr;
    if (from && from->present && from->value && from->dtype == out[o].dtype &&
        from->value->numel() == shape_numel(out[o].shape)) {
      results[o] = from->value->reshaped(out[o].shape);
    } else {
      results[o] = Tensor::empty(out[o].dtype, out[o].shape);
      computes = true;
    }
    ctx.outputs.push_back(&results[o]);
  }
  if (computes) op.run(ctx);  // aliasing ops skip the copy where the output already shares the input
  for (size_t o = 0; o < out.size(); ++o) {
    const int v = node.outputs[o];
    if (v < 0) continue;
    InferredValue& iv = values[v];
    iv.kind = ValueKind::Folded;
    iv.folded = std::move(results[o]);
    iv.desc = {out[o].dtype, out[o].shape, &iv.folded, true};
  }
}

}  // namespace

std::vector<std::unique_ptr<Op>> create_ops(const Graph& graph) {
  std::vector<std::unique_ptr<Op>> ops;
  ops.reserve(graph.nodes.size());
  for (const Node& n : graph.nodes) ops.push_back(OpRegistry::instance().create(n));
  return ops;
}

bool fixed_input_shapes(const Graph& graph, std::vector<Shape>* shapes) {
  shapes->clear();
  for (int v : graph.inputs) {
    const Value& val = graph.values[v];
    if (!val.shape_known) return false;
    for (int64_t d : val.shape)
      if (d < 0) return false;
    shapes->push_back(val.shape);
  }
  return true;
}

ValueInference infer_values(const Graph& graph, const std::vector<Shape>& input_shapes, const ResourceLimits& limits) {
  std::vector<std::unique_ptr<Op>> ops = create_ops(graph);
  return infer_values(graph, input_shapes, ops, limits);
}

bool infer_values_for_declared_shapes(const Graph& graph, ValueInference* result, const ResourceLimits& limits,
                                      std::vector<std::unique_ptr<Op>>* ops) {
  std::vector<Shape> shapes;
  if (!fixed_input_shapes(graph, &shapes)) return false;
  std::vector<std::unique_ptr<Op>> own;
  if (!ops) {
    own = create_ops(graph);
    ops = &own;
  }
  try {
    *result = infer_values(graph, shapes, *ops, limits);
  } catch (const ContentsNeeded& e) {
    if (e.value < 0 || input_ancestors(graph, *ops, e.value).empty()) throw;  // nothing a run could supply
    return false;
  }
  return true;
}

std::vector<int> input_ancestors(const Graph& graph, const std::vector<std::unique_ptr<Op>>& ops, int value) {
  std::vector<int> input_index(graph.values.size(), -1);
  for (size_t i = 0; i < graph.inputs.size(); ++i) input_index[graph.inputs[i]] = static_cast<int>(i);
  const std::vector<int> producer = graph.producers();
  std::vector<char> seen(graph.values.size(), 0);
  std::vector<int> stack{value}, found;
  seen[value] = 1;
  while (!stack.empty()) {
    const int v = stack.back();
    stack.pop_back();
    if (input_index[v] >= 0) found.push_back(input_index[v]);
    const int n = producer[v];
    if (n < 0 || graph.values[v].is_constant() || ops[n]->value_from_shapes()) continue;
    for (int i : graph.nodes[n].inputs)
      if (i >= 0 && !seen[i]) {
        seen[i] = 1;
        stack.push_back(i);
      }
  }
  std::sort(found.begin(), found.end());
  return found;
}

ValueInference infer_values(const Graph& graph, const std::vector<Shape>& input_shapes,
                            std::vector<std::unique_ptr<Op>>& ops, const ResourceLimits& limits,
                            const std::vector<Tensor>& input_values) {
  ValueInference r;
  r.values.resize(graph.values.size());
  r.folded.assign(graph.nodes.size(), 0);
  auto& values = r.values;
  for (size_t v = 0; v < graph.values.size(); ++v) {
    const Value& val = graph.values[v];
    if (!val.is_constant()) continue;
    values[v].kind = ValueKind::Constant;
    // A released constant's contents are unknown; only ops that packed it read it (Op::packed_input),
    // and they read its type and shape.
    values[v].desc = val.constant_released ? TensorDesc{val.dtype, val.shape, nullptr, true}
                                           : TensorDesc{val.constant.dtype(), val.constant.shape(), &val.constant, true};
  }
  if (input_shapes.size() != graph.inputs.size())
    throw Error("the graph has " + std::to_string(graph.inputs.size()) + " inputs, but " +
                std::to_string(input_shapes.size()) + " shapes were given");
  for (size_t i = 0; i < graph.inputs.size(); ++i) {
    const int v = graph.inputs[i];
    shape_numel(input_shapes[i]);  // rejects negative and uncountable dimensions
    values[v].kind = ValueKind::GraphInput;
    values[v].desc = {graph.values[v].dtype, input_shapes[i], nullptr, true};
    if (i < input_values.size() && input_values[i].defined()) {
      const Tensor& t = input_values[i];
      if (t.dtype() != graph.values[v].dtype || t.shape() != input_shapes[i])
        throw Error("the contents given for input '" + graph.values[v].name + "' are " + dtype_name(t.dtype()) + " " +
                    shape_str(t.shape()) + ", but the input is " + dtype_name(graph.values[v].dtype) + " " +
                    shape_str(input_shapes[i]));
      values[v].folded = t;
      values[v].desc.value = &values[v].folded;
    }
  }

  ThreadPool pool(1);  // folding runs on the calling thread
  std::vector<TensorDesc> in, out;
  for (size_t n = 0; n < graph.nodes.size(); ++n) {
    const Node& node = graph.nodes[n];
    Op& op = *ops[n];
    in.assign(node.inputs.size(), TensorDesc{});
    bool all_known = true;
    for (size_t i = 0; i < node.inputs.size(); ++i) {
      const int v = node.inputs[i];
      if (v < 0) {
        in[i].present = false;
        continue;
      }
      if (values[v].kind == ValueKind::Unknown)
        throw_node_error(node, "input '" + graph.values[v].name + "' is used before it is computed");
      in[i] = values[v].desc;
      if (!in[i].value) all_known = false;
    }
    // Importers refuse such nodes; a graph built another way must not reach an op's out[0].
    if (node.outputs.empty()) throw_node_error(node, "has no outputs");
    out.assign(node.outputs.size(), TensorDesc{});
    try {
      op.infer(in, out);
    } catch (ContentsNeeded& e) {
      if (e.input >= 0 && static_cast<size_t>(e.input) < node.inputs.size()) e.value = node.inputs[e.input];
      e.node = static_cast<int>(n);
      throw;
    }

    int64_t out_bytes = 0;
    for (size_t o = 0; o < out.size(); ++o) {
      const int v = node.outputs[o];
      if (v < 0) continue;
      const std::string& name = graph.values[v].name;
      if (out[o].dtype == DataType::Undefined || dtype_size(out[o].dtype) == 0)
        throw_node_error(node, "produced output '" + name + "' of unsupported type");
      for (int64_t d : out[o].shape)
        if (d < 0) throw_node_error(node, "inferred a negative dimension for output '" + name + "': " + shape_str(out[o].shape));
      int64_t bytes = 0;
      try {
        bytes = tensor_bytes(out[o].dtype, out[o].shape);
      } catch (const Error& e) {
        throw_node_error(node, "output '" + name + "': " + e.what());
      }
      if (limits.max_tensor_bytes > 0 && bytes > limits.max_tensor_bytes)
        throw_node_error(node, "output '" + name + "' (" + dtype_name(out[o].dtype) + ", shape " +
                                   shape_str(out[o].shape) + ") would need " + bytes_str(bytes) +
                                   ", more than the limit of " + bytes_str(limits.max_tensor_bytes) +
                                   " for one tensor (Options::max_tensor_bytes)");
      out_bytes = bytes > kMaxFoldBytes || out_bytes > kMaxFoldBytes ? kMaxFoldBytes + 1 : out_bytes + bytes;
    }

    // Ops whose outputs follow from shapes alone fold too; their unknown inputs are passed as nullptr.
    if ((all_known || op.value_from_shapes()) && op.foldable() && out_bytes <= kMaxFoldBytes) {
      try {
        fold_node(node, op, in, out, values, pool);
      } catch (const Error& e) {
        if (std::string(e.what()).rfind("node ", 0) == 0) throw;  // already names its node
        throw_node_error(node, e.what());
      }
      r.folded[n] = 1;
      continue;
    }
    for (size_t o = 0; o < out.size(); ++o) {
      const int v = node.outputs[o];
      if (v < 0) continue;
      values[v].kind = ValueKind::Computed;
      values[v].desc = {out[o].dtype, out[o].shape, nullptr, true};
    }
  }
  return r;
}

}  // namespace ninegrid
