#include "graph/passes/graph_edit.h"

#include "graph/infer_values.h"

namespace ninegrid {

Uses find_uses(const Graph& g) {
  Uses u;
  u.readers.assign(g.values.size(), {});
  u.is_graph_output.assign(g.values.size(), 0);
  for (size_t n = 0; n < g.nodes.size(); ++n)
    for (size_t s = 0; s < g.nodes[n].inputs.size(); ++s)
      if (g.nodes[n].inputs[s] >= 0) u.readers[g.nodes[n].inputs[s]].push_back({static_cast<int>(n), static_cast<int>(s)});
  for (int o : g.outputs) u.is_graph_output[o] = 1;
  return u;
}

void replace_uses(Graph& g, int from, int to) {
  for (Node& n : g.nodes)
    for (int& i : n.inputs)
      if (i == from) i = to;
  for (int& o : g.outputs)
    if (o == from) o = to;
}

void erase_nodes(Graph& g, const std::vector<char>& dead) {
  std::vector<Node> kept;
  kept.reserve(g.nodes.size());
  for (size_t n = 0; n < g.nodes.size(); ++n)
    if (!dead[n]) kept.push_back(std::move(g.nodes[n]));
  g.nodes = std::move(kept);
}

const Tensor* constant_input(const Graph& g, const Node& n, size_t slot) {
  if (slot >= n.inputs.size() || n.inputs[slot] < 0) return nullptr;
  const Value& v = g.values[n.inputs[slot]];
  return v.is_constant() ? &v.constant : nullptr;
}

bool exclusively_owned_constant(const Graph& g, int value) {
  const Value& val = g.values[value];
  // Another tensor holding the same storage (a copy of the graph, or a caller's tensor) would see a
  // write; borrowed memory is not the graph's to write.
  if (!val.constant.defined() || val.constant.use_count() != 1) return false;
  for (int o : g.outputs)
    if (o == value) return false;
  int readers = 0;
  for (const Node& n : g.nodes)
    for (int i : n.inputs) readers += i == value;
  if (readers != 1) return false;
  const char* begin = static_cast<const char*>(val.constant.data());
  const char* end = begin + val.constant.nbytes();
  for (size_t v = 0; v < g.values.size(); ++v) {
    const Tensor& t = g.values[v].constant;
    if (static_cast<int>(v) == value || !t.defined() || t.nbytes() == 0) continue;
    const char* b = static_cast<const char*>(t.data());
    if (b < end && begin < b + t.nbytes()) return false;
  }
  return true;
}

Shape as_rank4(const Shape& s) {
  if (s.size() > 4) return {};
  Shape r(4 - s.size(), 1);
  r.insert(r.end(), s.begin(), s.end());
  return r;
}

bool per_channel_float(const Value& v, const Shape& nchw) {
  if (!v.shape_known || v.dtype != DataType::Float32 || nchw.size() != 4) return false;
  const Shape s = as_rank4(v.shape);
  return !s.empty() && s[2] == 1 && s[3] == 1 && (s[0] == 1 || s[0] == nchw[0]) && (s[1] == 1 || s[1] == nchw[1]);
}

bool is_float_zeros(const Tensor& t) {
  if (t.dtype() != DataType::Float32) return false;
  const float* p = t.data_as<float>();
  for (int64_t i = 0; i < t.numel(); ++i)
    if (p[i] != 0.f) return false;
  return true;
}

int add_constant(Graph& g, const std::string& base, Tensor t) {
  int id = g.add_value(g.unique_value_name(base));
  Value& v = g.values[id];
  v.dtype = t.dtype();
  v.shape = t.shape();
  v.shape_known = true;
  v.constant = std::move(t);
  return id;
}

void record_inferred_shapes(Graph& g, const ValueInference& inferred) {
  for (size_t v = 0; v < g.values.size(); ++v) {
    const InferredValue& iv = inferred.values[v];
    if (iv.kind == ValueKind::Unknown) continue;
    g.values[v].dtype = iv.desc.dtype;
    g.values[v].shape = iv.desc.shape;
    g.values[v].shape_known = true;
  }
  g.shapes_inferred = true;
}

bool annotate_shapes(Graph& g) {
  ValueInference inferred;
  if (!infer_values_for_declared_shapes(g, &inferred)) return false;
  record_inferred_shapes(g, inferred);
  return true;
}

bool ensure_shapes(Graph& g) {
  if (g.shapes_inferred) {
    bool all_known = true;
    for (const Node& n : g.nodes)
      for (int v : n.outputs)
        if (v >= 0 && !g.values[v].shape_known) all_known = false;
    if (all_known) return true;
  }
  return annotate_shapes(g);
}

void release_unused_constants(Graph& g) {
  Uses u = find_uses(g);
  for (size_t v = 0; v < g.values.size(); ++v)
    if (g.values[v].is_constant() && u.count(static_cast<int>(v)) == 0) g.values[v].constant = Tensor();
}

}  // namespace ninegrid
