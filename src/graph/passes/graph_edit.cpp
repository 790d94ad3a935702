#include "graph/passes/graph_edit.h"

#include "runtime/plan.h"
#include "core/thread_pool.h"

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

std::vector<int> find_producers(const Graph& g) { return g.producers(); }

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

bool annotate_shapes(Graph& g) {
  std::vector<Shape> shapes;
  for (int v : g.inputs) {
    const Value& val = g.values[v];
    if (!val.shape_known) return false;
    for (int64_t d : val.shape)
      if (d < 0) return false;
    shapes.push_back(val.shape);
  }
  std::vector<std::unique_ptr<Op>> ops;
  for (const Node& n : g.nodes) {
    ops.push_back(OpRegistry::instance().create(n));
    ops.back()->set_prepare_kernels(false);  // shapes only: sessions build the kernels
  }
  ThreadPool pool(1);
  Plan plan = make_plan(g, shapes, ops, &pool);
  for (size_t v = 0; v < g.values.size(); ++v) {
    if (plan.slots[v].storage == Storage::None) continue;
    g.values[v].dtype = plan.slots[v].desc.dtype;
    g.values[v].shape = plan.slots[v].desc.shape;
    g.values[v].shape_known = true;
  }
  return true;
}

void release_unused_constants(Graph& g) {
  Uses u = find_uses(g);
  for (size_t v = 0; v < g.values.size(); ++v)
    if (g.values[v].is_constant() && u.count(static_cast<int>(v)) == 0) g.values[v].constant = Tensor();
}

}  // namespace ninegrid
