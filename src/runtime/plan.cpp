#include "runtime/plan.h"

#include <algorithm>

#include "core/checked_math.h"
#include "runtime/arena_layout.h"

namespace ninegrid {

namespace {

size_t align_up(size_t n) { return (n + 63) / 64 * 64; }

// The value whose bytes `v` uses: `v` itself unless it is an alias.
int storage_root(const std::vector<ValueSlot>& slots, int v) {
  return slots[v].storage == Storage::Alias ? slots[v].alias_of : v;
}

// The inferred types and shapes of `inputs`, an omitted one (-1) as not present: what Op's planning
// queries take.
std::vector<TensorDesc> input_descs(const ValueInference& values, const std::vector<int>& inputs) {
  std::vector<TensorDesc> in;
  for (int v : inputs) {
    in.push_back(v >= 0 ? values.values[v].desc : TensorDesc{});
    in.back().present = v >= 0;
  }
  return in;
}

// Whether output `o` of a node can be a view of its span of input 0 `x` (a Split of one image along the
// channels): the span's byte offset in the bytes of the arena value `x` is or views, or -1. The span must
// start on the arena's 64-byte alignment, which the kernels may assume.
int64_t span_view_offset(const Op& op, int o, int x, const std::vector<TensorDesc>& in,
                         const std::vector<ValueSlot>& slots) {
  if (x < 0) return -1;
  const int64_t at = op.output_offset_in_input(o, in);
  if (at < 0 || slots[storage_root(slots, x)].storage != Storage::Arena) return -1;
  const int64_t offset = at + static_cast<int64_t>(slots[x].storage == Storage::Alias ? slots[x].offset : 0);
  return offset % 64 == 0 ? offset : -1;
}

// Where an op's output is its inputs end to end (a Concat of one image along the channels), each input
// that lives in the arena moves into its span of the output, so its producer writes the output and the
// Concat copies nothing (PP-OCRv4 det's FPN, RetinaFace's heads, SqueezeNet's fire modules, GoogLeNet's
// inception blocks). An input moves with the value it is a view of, when it is the whole of that value.
// It does not move when it appears twice, already lives in another Concat's output, or its span would not
// start on the arena's 64-byte alignment (which the kernels may assume; it also keeps a producer that
// writes whole vectors past its tensor's end within its own span). The views of a moved value follow it,
// so aliases keep pointing at an arena value.
void place_inputs_in_outputs(const Plan& plan, std::vector<ValueSlot>& slots) {
  for (const PlanStep& st : plan.steps) {
    if (st.outputs.size() != 1 || st.outputs[0] < 0 || slots[st.outputs[0]].storage != Storage::Arena) continue;
    const int out = st.outputs[0];
    if (std::count(st.inputs.begin(), st.inputs.end(), -1) != 0) continue;
    const std::vector<size_t> offsets = st.op->input_offsets_in_output(input_descs(plan.values, st.inputs));
    if (offsets.size() != st.inputs.size()) continue;
    std::vector<int> roots;
    for (int v : st.inputs) roots.push_back(storage_root(slots, v));
    for (size_t i = 0; i < roots.size(); ++i) {
      const int v = st.inputs[i], r = roots[i];
      if (slots[r].storage != Storage::Arena || slots[v].offset != 0 || offsets[i] % 64 != 0 ||
          std::count(roots.begin(), roots.end(), r) != 1 ||
          tensor_bytes(plan.desc(v).dtype, plan.desc(v).shape) != tensor_bytes(plan.desc(r).dtype, plan.desc(r).shape))
        continue;
      for (ValueSlot& s : slots)
        if (s.storage == Storage::Alias && s.alias_of == r) s.alias_of = out, s.offset += offsets[i];
      slots[r].storage = Storage::Alias;
      slots[r].alias_of = out;
      slots[r].offset = offsets[i];
    }
  }
}

}  // namespace

Plan make_plan(const Graph& graph, std::vector<Shape> input_shapes, ValueInference values,
               std::vector<std::unique_ptr<Op>>& ops, const ResourceLimits& limits) {
  Plan plan;
  plan.input_shapes = std::move(input_shapes);
  plan.values = std::move(values);
  plan.slots.resize(graph.values.size());
  auto& slots = plan.slots;
  const auto& inferred = plan.values.values;

  for (size_t v = 0; v < graph.values.size(); ++v) {
    switch (inferred[v].kind) {
      case ValueKind::Constant: slots[v].storage = Storage::Constant; break;
      case ValueKind::GraphInput: slots[v].storage = Storage::GraphInput; break;
      case ValueKind::Folded: slots[v].storage = Storage::Folded; break;
      default: break;
    }
  }
  std::vector<char> is_output(graph.values.size(), 0);
  for (int o : graph.outputs) is_output[o] = 1;

  for (size_t n = 0; n < graph.nodes.size(); ++n) {
    if (plan.values.folded[n]) continue;
    const Node& node = graph.nodes[n];
    Op* op = ops[n].get();
    const std::vector<TensorDesc> in_descs = input_descs(plan.values, node.inputs);
    const int x = node.inputs.empty() ? -1 : node.inputs[0];
    for (size_t o = 0; o < node.outputs.size(); ++o) {
      const int v = node.outputs[o];
      if (v < 0) continue;
      const TensorDesc& d = inferred[v].desc;
      const int src = op->aliases_input(static_cast<int>(o));
      const int in = src >= 0 && src < static_cast<int>(node.inputs.size()) ? node.inputs[src] : -1;
      if (is_output[v]) {
        slots[v].storage = Storage::FreshOutput;
      } else if (in >= 0 && dtype_size(inferred[in].desc.dtype) == dtype_size(d.dtype) &&
                 shape_numel(inferred[in].desc.shape) == shape_numel(d.shape)) {
        // Point at the root of an alias chain directly, so chains of views cost nothing to resolve.
        slots[v].storage = Storage::Alias;
        slots[v].alias_of = storage_root(slots, in);
        slots[v].offset = slots[in].storage == Storage::Alias ? slots[in].offset : 0;
      } else if (const int64_t at = span_view_offset(*op, static_cast<int>(o), x, in_descs, slots); at >= 0) {
        slots[v].storage = Storage::Alias;
        slots[v].alias_of = storage_root(slots, x);
        slots[v].offset = static_cast<size_t>(at);
      } else {
        slots[v].storage = Storage::Arena;
      }
    }
    plan.steps.push_back({static_cast<int>(n), op, node.inputs, node.outputs});
  }
  place_inputs_in_outputs(plan, slots);

  // Lifetimes of arena buffers: from the step that writes a value to the last step that reads it or
  // any alias of it. A value placed in another's bytes (place_inputs_in_outputs) is written before that
  // value's own step, which then lives from the first such write.
  std::vector<int> first(graph.values.size(), -1), last(graph.values.size(), -1);
  for (size_t s = 0; s < plan.steps.size(); ++s) {
    const PlanStep& st = plan.steps[s];
    const int step = static_cast<int>(s);
    for (int v : st.outputs) {
      if (v < 0) continue;
      const int r = storage_root(slots, v);
      if (slots[r].storage != Storage::Arena) continue;
      first[r] = first[r] < 0 ? step : std::min(first[r], step);
      last[r] = std::max(last[r], step);
    }
    for (int v : st.inputs) {
      if (v < 0) continue;
      const int r = storage_root(slots, v);
      if (slots[r].storage == Storage::Arena) last[r] = std::max(last[r], step);
    }
  }
  std::vector<ArenaBuffer> buffers;
  std::vector<int> buffer_value;
  for (size_t v = 0; v < graph.values.size(); ++v)
    if (slots[v].storage == Storage::Arena) {
      ArenaBuffer b;
      b.bytes = align_up(static_cast<size_t>(tensor_bytes(inferred[v].desc.dtype, inferred[v].desc.shape)));
      b.first = first[v];
      b.last = last[v];
      buffers.push_back(b);
      buffer_value.push_back(static_cast<int>(v));
    }
  plan.arena_bytes = assign_arena_offsets(buffers);
  for (size_t i = 0; i < buffers.size(); ++i) slots[buffer_value[i]].offset = buffers[i].offset;
  if (limits.max_arena_bytes > 0 && plan.arena_bytes > static_cast<size_t>(limits.max_arena_bytes)) {
    // Name the largest buffer live at the arena's peak: the node a user would look at first.
    size_t peak = 0;
    for (size_t i = 1; i < buffers.size(); ++i)
      if (buffers[i].offset + buffers[i].bytes > buffers[peak].offset + buffers[peak].bytes) peak = i;
    const int v = buffer_value[peak];
    std::string where;
    for (size_t s = 0; s < plan.steps.size() && where.empty(); ++s)
      for (int o : plan.steps[s].outputs)
        if (o == v) where = " (the arena's top holds output '" + graph.values[v].name + "' of node '" +
                            graph.nodes[plan.steps[s].node].name + "', " + bytes_str(buffers[peak].bytes) + ")";
    throw Error("the model's working memory for input shapes " + [&] {
      std::string s;
      for (const Shape& sh : plan.input_shapes) s += (s.empty() ? "" : ", ") + shape_str(sh);
      return s;
    }() + " would be " + bytes_str(static_cast<int64_t>(plan.arena_bytes)) + ", more than the limit of " +
                bytes_str(limits.max_arena_bytes) + " (Options::max_arena_bytes)" + where);
  }
  return plan;
}

}  // namespace ninegrid
