// Execution plan for one set of input shapes: which nodes run (the others were folded to constants by
// value inference), and where each value's bytes live: constants and folded values in their own
// tensors, intermediate tensors in one shared arena whose slots are reused once a tensor's last reader
// has run, views (Reshape, Squeeze ..., a Split's parts) in the bytes of the tensor they alias, and a
// Concat's inputs in their spans of its output.
#pragma once

#include <memory>
#include <vector>

#include "graph/infer_values.h"
#include "ir/graph.h"
#include "ops/op.h"

namespace ninegrid {

struct PlanStep {
  int node = -1;  // index into graph.nodes
  Op* op = nullptr;
  std::vector<int> inputs;   // value ids (-1 omitted), as the node's
  std::vector<int> outputs;  // value ids (-1 omitted)
};

enum class Storage { None, Constant, Folded, GraphInput, Arena, Alias, FreshOutput };

struct ValueSlot {
  Storage storage = Storage::None;
  size_t offset = 0;   // Arena: byte offset in the arena; Alias: byte offset in alias_of's bytes
  int alias_of = -1;   // Alias: the value (itself never an alias) whose bytes this one shares
};

struct Plan {
  std::vector<Shape> input_shapes;  // per graph input, what this plan was made for
  ValueInference values;            // per value: type, shape, known contents
  std::vector<PlanStep> steps;
  std::vector<ValueSlot> slots;     // per value id
  size_t arena_bytes = 0;

  const TensorDesc& desc(int value) const { return values.values[value].desc; }
};

// Lays out the steps and the arena for values inferred with infer_values(graph, input_shapes, ops).
// Throws Error when the arena would exceed limits.max_arena_bytes.
Plan make_plan(const Graph& graph, std::vector<Shape> input_shapes, ValueInference values,
               std::vector<std::unique_ptr<Op>>& ops, const ResourceLimits& limits);

}  // namespace ninegrid
