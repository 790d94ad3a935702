// The intermediate representation: a graph of nodes (operators) connected by values (tensors).
//
// Both importers produce this IR with ONNX operator names and semantics (ncnn layers are mapped onto
// ONNX operators, plus a few "ng." internal operators where ONNX has no equivalent). Optimisation
// passes rewrite it; the runtime plans and executes it.
#pragma once

#include <string>
#include <unordered_map>
#include <vector>

#include "ir/attribute.h"
#include "ninegrid/tensor.h"

namespace ninegrid {

struct Value {
  std::string name;
  DataType dtype = DataType::Undefined;
  // Declared or inferred shape; -1 for unknown dimensions. Empty with shape_known=false when unknown.
  Shape shape;
  bool shape_known = false;
  // Graph inputs and outputs: the model's name for each dimension it leaves dynamic (ONNX's dim_param,
  // e.g. "batch"), "" for the others; empty when the model names none. Shown by the APIs' queries only.
  std::vector<std::string> dim_names;
  // Defined for initializers (weights) and values folded to constants.
  Tensor constant;
  // A constant whose contents the model released once every op reading it had packed it (runtime/
  // model.cpp): `constant` is then undefined and dtype and shape describe it.
  bool constant_released = false;
  bool is_constant() const { return constant.defined() || constant_released; }
};

struct Node {
  std::string name;     // from the model; importers invent one if the model has none
  std::string op_type;  // "Conv", "Relu", ..., or "ng.<Name>" for internal operators
  int opset = 0;        // the ONNX opset version the node was written against (0 = latest semantics)
  std::vector<int> inputs;   // value ids; -1 for an omitted optional input
  std::vector<int> outputs;  // value ids; -1 for an omitted optional output
  Attributes attrs;

  // "node 'conv1' (Conv)": the prefix of every error about this node.
  std::string describe() const;
};

class Graph {
 public:
  std::vector<Value> values;
  std::vector<Node> nodes;   // in topological order after topo_sort()
  std::vector<int> inputs;   // value ids of the graph inputs (not initializers)
  std::vector<int> outputs;  // value ids of the graph outputs
  // Set when every value's dtype and shape were recorded by value inference (graph/passes/graph_edit.h);
  // until then a shape may be only what the model file declared.
  bool shapes_inferred = false;

  // Adds a value and returns its id; throws if the name is already taken.
  int add_value(const std::string& name);
  // Value id by name, or -1.
  int find_value(const std::string& name) const;
  // Returns a name not yet used by any value, starting from `base`.
  std::string unique_value_name(const std::string& base) const;

  // Orders nodes so every producer precedes its consumers. Throws Error naming a node on a cycle, on a
  // value produced twice, or on an input that nothing produces (not a graph input nor a constant).
  void topo_sort();
  // Checks structural sanity: ids in range, every graph output produced or given. Throws Error.
  void validate() const;
  // For each value id, the node index that produces it (-1 for graph inputs and constants).
  std::vector<int> producers() const;

 private:
  // name -> id; rebuilt when a pass has renamed or added values behind add_value's back.
  mutable std::unordered_map<std::string, int> index_;
};

// Throws Error("<node description>: <message>").
[[noreturn]] void throw_node_error(const Node& node, const std::string& message);

}  // namespace ninegrid
