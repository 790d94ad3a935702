// Choosing what `ninegrid quantize` quantises in a prepared float model: the layers (islands of a
// quantisable op and the activation after it) and the activation tensors between them.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "ninegrid/tensor.h"
#include "ninegrid_onnx/onnx.pb.h"

namespace ninegrid::quant {

// Element type and shape of a value of the graph, as ninegrid infers them (the model loaded at opt-level
// 0 with every node output made a graph output: Model::outputs() then has each one's inferred type).
struct ValueType {
  DataType dtype = DataType::Undefined;
  Shape shape;
  bool shape_known = false;
};
using ValueTypes = std::map<std::string, ValueType>;

// One quantised node ("layer").
struct QuantLayer {
  int node = -1;               // index in the graph's node list
  std::string name;            // the node's name, or "<op> -> <first output>" when it has none
  std::string keep_name;       // what --keep-float calls it: the node's name, or its first output's
  std::string op_type;         // "Conv", ...; "Conv+Relu" when an activation is inside the island
  int activation = -1;         // the Relu or Clip inside the island, or -1
  std::string output;          // the tensor quantised after it (the activation's output in an island)
  std::vector<std::string> inputs;  // its quantised activation inputs (not weights or constants)
};

struct QuantPlan {
  std::vector<QuantLayer> layers;
  // Every activation tensor to quantise, graph inputs first, then in the order their producers run.
  std::vector<std::string> tensors;
  // Tensors that take another's parameters instead of their own: MaxPool's output takes its input's
  // (the max of quantised values is a quantised value, so this loses nothing and keeps the pool integer),
  // and so does a tensor that ops moving values (nearest Resize, Slice, Reshape, ...) compute from a
  // quantised one.
  std::map<std::string, std::string> shares;
  // Tensors whose negative values every reader discards (through Concat or MaxPool into a Relu): their
  // range may start at 0.
  std::set<std::string> nonnegative;
  // Nodes of a quantisable type left in float, with why (--keep-float, non-constant weights, ...).
  std::vector<std::string> left_float;
};

// Chooses what to quantise: the float inputs and outputs of Conv (with a following Relu/Clip kept
// inside the island, quantised after the activation), Gemm (alpha = beta = 1, no transA, constant 2-D B
// and 1-D C) and MatMul with a constant 2-D weight (both also with a Relu/Clip island), Add (also with
// a Relu/Clip island, as a residual add with ReLU is one integer op), Concat (also with a Relu/Clip
// island), MaxPool, AveragePool and GlobalAveragePool. `keep_float` names nodes (by node name or by an
// output's name) to leave in float; a name that matches no node is an Error.
QuantPlan plan_quantization(const onnx::ModelProto& model, const ValueTypes& types,
                            const std::vector<std::string>& keep_float);

}  // namespace ninegrid::quant
