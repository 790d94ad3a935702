// Execution plan for one set of input shapes: which nodes run (the rest were folded to constants at
// plan time), the shape of every value, and where each intermediate tensor lives in one shared arena
// whose slots are reused once a tensor's last consumer has run.
#pragma once

#include <memory>
#include <vector>

#include "ir/graph.h"
#include "ops/op.h"

namespace ninegrid {

class ThreadPool;

struct PlanStep {
  int node = -1;  // index into graph.nodes
  Op* op = nullptr;
  std::vector<int> inputs;   // value ids (-1 omitted)
  std::vector<int> outputs;  // value ids (-1 omitted)
};

enum class Storage { None, Constant, Folded, GraphInput, Arena, Alias, FreshOutput };

struct ValueSlot {
  Storage storage = Storage::None;
  TensorDesc desc;
  size_t offset = 0;   // Arena: byte offset
  int alias_of = -1;   // Alias: the value whose bytes this one shares
  Tensor folded;       // Folded: the value computed at plan time
};

struct Plan {
  std::vector<Shape> input_shapes;  // per graph input, what this plan was made for
  std::vector<PlanStep> steps;
  std::vector<ValueSlot> slots;     // per value id
  size_t arena_bytes = 0;
};

// Infers shapes for all values given the graph inputs' shapes, evaluates what can be known before run
// time, and lays out the arena. `ops` has one op per node. Throws Error naming the node on a bad shape.
Plan make_plan(const Graph& graph, const std::vector<Shape>& input_shapes, std::vector<std::unique_ptr<Op>>& ops,
               ThreadPool* pool);

}  // namespace ninegrid
