// Value inference: for given graph input shapes, every value's type and shape, and the contents of every
// value that can be known before run time (weights, and what nodes compute from them and from shapes:
// the Shape -> Gather -> Concat -> Reshape arithmetic of exported models). One pass over the graph in
// topological order, calling each op's infer() and, for nodes whose inputs are all known, its run() on
// the reference path (folding). Nothing is prepared, nothing is laid out: the graph passes use this to
// learn shapes, and the session's planner builds its steps and arena from the result.
#pragma once

#include <memory>
#include <vector>

#include "ir/graph.h"
#include "ops/op.h"

namespace ninegrid {

// Sizes a plan may ask for. A model file is untrusted input: one edited number (a pad, a scale, a
// ConstantOfShape) can ask for terabytes, and these limits turn that into an error naming the node
// before anything is allocated. 0 means no limit.
struct ResourceLimits {
  int64_t max_tensor_bytes = 0;  // any one value
  int64_t max_arena_bytes = 0;   // a session's working memory (checked by the planner)
};

enum class ValueKind { Unknown, Constant, GraphInput, Folded, Computed };

struct InferredValue {
  ValueKind kind = ValueKind::Unknown;
  TensorDesc desc;  // desc.value: the constant or `folded`, when the contents are known
  Tensor folded;    // ValueKind::Folded: computed during inference; GraphInput: the contents given
};

struct ValueInference {
  ValueInference() = default;
  ValueInference(ValueInference&&) = default;
  ValueInference& operator=(ValueInference&&) = default;
  ValueInference(const ValueInference&) = delete;  // descs point into `values`
  ValueInference& operator=(const ValueInference&) = delete;

  std::vector<InferredValue> values;  // per value id
  std::vector<char> folded;           // per node: 1 when all its outputs were computed here
};

// Throws Error naming the node on an input an op cannot take, an inferred size past `limits`, or an
// input used before it is computed; ContentsNeeded (ops/op.h, with its value and node set) when an op
// needs the contents of a value that is not known. `ops` holds one op per node (their infer() state is
// left set for these shapes); the overload without creates them. `input_values`, when not empty, has one
// tensor per graph input: the contents of those that are defined are known (the session's shape-driving
// inputs; their shapes must be the ones in `input_shapes`), and the values computed from them fold.
ValueInference infer_values(const Graph& graph, const std::vector<Shape>& input_shapes,
                            std::vector<std::unique_ptr<Op>>& ops, const ResourceLimits& limits = {},
                            const std::vector<Tensor>& input_values = {});
ValueInference infer_values(const Graph& graph, const std::vector<Shape>& input_shapes,
                            const ResourceLimits& limits = {});

// One op per node, created from the registry (unsupported operators and bad attributes throw here).
std::vector<std::unique_ptr<Op>> create_ops(const Graph& graph);

// The graph inputs' shapes as declared, or false when one is unknown or has a dynamic dimension.
bool fixed_input_shapes(const Graph& graph, std::vector<Shape>* shapes);

// Value inference at load time, for the graph's fixed input shapes: false (nothing inferred) when an
// input shape is not fixed, or when an op needs the contents of a value that depends on the contents of
// a graph input (such a model is planned by its sessions once the inputs arrive; to the passes it is one
// whose shapes are not known). Other errors throw as infer_values's do.
bool infer_values_for_declared_shapes(const Graph& graph, ValueInference* result, const ResourceLimits& limits = {},
                                      std::vector<std::unique_ptr<Op>>* ops = nullptr);

// The graph inputs (indices into graph.inputs) whose contents value `value` is computed from: the
// ancestors of `value` that are graph inputs, not looking past constants or past ops whose outputs
// follow from their inputs' shapes alone (Shape, Size: `ops`, one per node).
std::vector<int> input_ancestors(const Graph& graph, const std::vector<std::unique_ptr<Op>>& ops, int value);

}  // namespace ninegrid
