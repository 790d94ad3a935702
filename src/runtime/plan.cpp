#include "runtime/plan.h"

#include <algorithm>

#include "core/thread_pool.h"
#include "runtime/arena_layout.h"

namespace ninegrid {

namespace {

// Folding evaluates nodes at plan time when all their inputs are known; this bounds how large a tensor
// it may create (shape arithmetic and small constant subgraphs, not whole layers).
constexpr int64_t kMaxFoldBytes = int64_t(64) << 20;

size_t align_up(size_t n) { return (n + 63) / 64 * 64; }

}  // namespace

Plan make_plan(const Graph& graph, const std::vector<Shape>& input_shapes, std::vector<std::unique_ptr<Op>>& ops,
               ThreadPool* pool) {
  Plan plan;
  plan.input_shapes = input_shapes;
  plan.slots.resize(graph.values.size());
  auto& slots = plan.slots;

  for (size_t v = 0; v < graph.values.size(); ++v) {
    const Value& val = graph.values[v];
    if (val.is_constant()) {
      slots[v].storage = Storage::Constant;
      slots[v].desc = {val.constant.dtype(), val.constant.shape(), &val.constant, true};
    }
  }
  for (size_t i = 0; i < graph.inputs.size(); ++i) {
    int v = graph.inputs[i];
    slots[v].storage = Storage::GraphInput;
    slots[v].desc = {graph.values[v].dtype, input_shapes.at(i), nullptr, true};
  }

  std::vector<char> is_output(graph.values.size(), 0);
  for (int o : graph.outputs) is_output[o] = 1;

  for (size_t n = 0; n < graph.nodes.size(); ++n) {
    const Node& node = graph.nodes[n];
    Op* op = ops[n].get();
    std::vector<TensorDesc> in(node.inputs.size());
    bool all_known = true;
    for (size_t i = 0; i < node.inputs.size(); ++i) {
      int v = node.inputs[i];
      if (v < 0) {
        in[i].present = false;
        continue;
      }
      if (slots[v].storage == Storage::None)
        throw_node_error(node, "input '" + graph.values[v].name + "' is used before it is computed");
      in[i] = slots[v].desc;
      if (!in[i].value) all_known = false;
    }
    std::vector<TensorDesc> out(node.outputs.size());
    op->infer(in, out);
    int64_t out_bytes = 0;
    for (size_t o = 0; o < out.size(); ++o) {
      if (node.outputs[o] < 0) continue;
      if (out[o].dtype == DataType::Undefined || dtype_size(out[o].dtype) == 0)
        throw_node_error(node, "produced output '" + graph.values[node.outputs[o]].name + "' of unsupported type");
      for (int64_t d : out[o].shape)
        if (d < 0) throw_node_error(node, "inferred a negative dimension for output '" +
                                               graph.values[node.outputs[o]].name + "': " + shape_str(out[o].shape));
      int64_t numel = shape_numel(out[o].shape);
      out_bytes += numel * static_cast<int64_t>(dtype_size(out[o].dtype));
    }

    // Ops whose outputs follow from shapes alone fold too; their unknown inputs are passed as nullptr.
    if ((all_known || op->value_from_shapes()) && op->foldable() && out_bytes <= kMaxFoldBytes) {
      OpContext ctx;
      ctx.pool = pool;
      for (size_t i = 0; i < node.inputs.size(); ++i) ctx.inputs.push_back(in[i].present ? in[i].value : nullptr);
      std::vector<Tensor> results(out.size());
      for (size_t o = 0; o < out.size(); ++o) {
        if (node.outputs[o] < 0) {
          ctx.outputs.push_back(nullptr);
          continue;
        }
        results[o] = Tensor::empty(out[o].dtype, out[o].shape);
        ctx.outputs.push_back(&results[o]);
      }
      op->run(ctx);
      for (size_t o = 0; o < out.size(); ++o) {
        int v = node.outputs[o];
        if (v < 0) continue;
        slots[v].storage = Storage::Folded;
        slots[v].folded = std::move(results[o]);
        slots[v].desc = {out[o].dtype, out[o].shape, &slots[v].folded, true};
      }
      continue;
    }

    PlanStep step;
    step.node = static_cast<int>(n);
    step.op = op;
    step.inputs = node.inputs;
    step.outputs = node.outputs;
    for (size_t o = 0; o < out.size(); ++o) {
      int v = node.outputs[o];
      if (v < 0) continue;
      slots[v].desc = {out[o].dtype, out[o].shape, nullptr, true};
      int src = op->aliases_input(static_cast<int>(o));
      if (is_output[v]) {
        slots[v].storage = Storage::FreshOutput;
      } else if (src >= 0 && src < static_cast<int>(node.inputs.size()) && node.inputs[src] >= 0 &&
                 dtype_size(slots[node.inputs[src]].desc.dtype) == dtype_size(out[o].dtype) &&
                 shape_numel(slots[node.inputs[src]].desc.shape) == shape_numel(out[o].shape)) {
        slots[v].storage = Storage::Alias;
        slots[v].alias_of = node.inputs[src];
      } else {
        slots[v].storage = Storage::Arena;
      }
    }
    plan.steps.push_back(std::move(step));
  }

  // Lifetimes of arena buffers: from the step that writes a value to the last step that reads it or
  // any alias of it.
  auto root_of = [&](int v) {
    while (slots[v].storage == Storage::Alias) v = slots[v].alias_of;
    return v;
  };
  std::vector<int> first(graph.values.size(), -1), last(graph.values.size(), -1);
  for (size_t s = 0; s < plan.steps.size(); ++s) {
    const PlanStep& st = plan.steps[s];
    for (int v : st.outputs)
      if (v >= 0 && slots[v].storage == Storage::Arena) first[v] = last[v] = static_cast<int>(s);
    for (int v : st.inputs)
      if (v >= 0) {
        int r = root_of(v);
        if (slots[r].storage == Storage::Arena) last[r] = std::max(last[r], static_cast<int>(s));
      }
  }
  std::vector<ArenaBuffer> buffers;
  std::vector<int> buffer_value;
  for (size_t v = 0; v < graph.values.size(); ++v)
    if (slots[v].storage == Storage::Arena) {
      ArenaBuffer b;
      b.bytes = align_up(static_cast<size_t>(shape_numel(slots[v].desc.shape)) * dtype_size(slots[v].desc.dtype));
      b.first = first[v];
      b.last = last[v];
      buffers.push_back(b);
      buffer_value.push_back(static_cast<int>(v));
    }
  plan.arena_bytes = assign_arena_offsets(buffers);
  for (size_t i = 0; i < buffers.size(); ++i) slots[buffer_value[i]].offset = buffers[i].offset;
  return plan;
}

}  // namespace ninegrid
