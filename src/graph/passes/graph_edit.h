// Small editing helpers shared by the optimisation passes.
#pragma once

#include <vector>

#include "ir/graph.h"

namespace ninegrid {

// Where each value is read: (node index, input slot) pairs, and whether it is a graph output.
struct Uses {
  std::vector<std::vector<std::pair<int, int>>> readers;  // per value id
  std::vector<char> is_graph_output;                       // per value id
  int count(int v) const { return static_cast<int>(readers[v].size()) + (is_graph_output[v] ? 1 : 0); }
};
Uses find_uses(const Graph& g);

// Makes every reader of `from` (node inputs and graph outputs) read `to` instead.
void replace_uses(Graph& g, int from, int to);

// Removes the nodes whose flag is set, keeping the others in order.
void erase_nodes(Graph& g, const std::vector<char>& dead);

// The node's constant input `slot`, or nullptr if absent or not constant.
const Tensor* constant_input(const Graph& g, const Node& n, size_t slot);
// Whether constant `value` may be changed in place: one node input reads it, it is no graph output, no
// other tensor holds its storage (a copy of the graph, a caller's tensor) and no other constant shares its
// bytes (a folded Reshape of a weight is a view of it).
bool exclusively_owned_constant(const Graph& g, int value);
// Whether `t` is a float32 tensor whose every element is zero (channel padding by Concat).
bool is_float_zeros(const Tensor& t);
// The shape `s` left-padded with 1s to rank 4 (numpy broadcasting), or empty if its rank is above 4.
Shape as_rank4(const Shape& s);
// Whether `v` is float32 with a known shape holding at most one value per (batch, channel) of a tensor of
// 4-D shape `nchw`: [N or 1, C or 1, 1, 1], or fewer leading axes (a squeeze-and-excitation gate).
bool per_channel_float(const Value& v, const Shape& nchw);

// Adds a new constant value holding `t`, named after `base`.
int add_constant(Graph& g, const std::string& base, Tensor t);

// Records every value's dtype and shape (Value::shape) by inferring them for the graph's fixed input
// shapes, and sets Graph::shapes_inferred. False (nothing recorded) when an input shape is not fixed or a
// shape depends on an input's contents (infer_values_for_declared_shapes).
bool annotate_shapes(Graph& g);
// annotate_shapes unless the graph's shapes were inferred already and every node output still has
// one: passes that need shapes call this, so a load infers again only after a pass that added values
// without shapes. A pass that changes an existing value's shape must annotate again itself.
bool ensure_shapes(Graph& g);
// Copies inferred types and shapes into the graph's values.
struct ValueInference;
void record_inferred_shapes(Graph& g, const ValueInference& inferred);

// Drops the data of constants that no node or graph output reads any more (e.g. a folded BatchNorm's
// statistics), so the model does not keep them in memory.
void release_unused_constants(Graph& g);

}  // namespace ninegrid
