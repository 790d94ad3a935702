// Graph bookkeeping: value lookup, topological order, structural validation.
#include "ir/graph.h"

#include <queue>

namespace ninegrid {

std::string Node::describe() const { return "node '" + name + "' (" + op_type + ")"; }

void throw_node_error(const Node& node, const std::string& message) {
  throw Error(node.describe() + ": " + message);
}

int Graph::add_value(const std::string& name) {
  if (find_value(name) >= 0) throw Error("value '" + name + "' is defined twice");
  Value v;
  v.name = name;
  values.push_back(std::move(v));
  int id = static_cast<int>(values.size()) - 1;
  index_[name] = id;
  return id;
}

int Graph::find_value(const std::string& name) const {
  auto it = index_.find(name);
  if (it != index_.end() && it->second < static_cast<int>(values.size()) && values[it->second].name == name)
    return it->second;
  if (index_.size() != values.size() || it != index_.end()) {
    index_.clear();
    for (size_t i = 0; i < values.size(); ++i) index_.emplace(values[i].name, static_cast<int>(i));
    it = index_.find(name);
    if (it != index_.end()) return it->second;
  }
  return -1;
}

std::string Graph::unique_value_name(const std::string& base) const {
  if (find_value(base) < 0) return base;
  for (int i = 1;; ++i) {
    std::string n = base + "_" + std::to_string(i);
    if (find_value(n) < 0) return n;
  }
}

std::vector<int> Graph::producers() const {
  std::vector<int> prod(values.size(), -1);
  for (size_t n = 0; n < nodes.size(); ++n)
    for (int o : nodes[n].outputs)
      if (o >= 0) prod[o] = static_cast<int>(n);
  return prod;
}

void Graph::validate() const {
  const int nv = static_cast<int>(values.size());
  auto check_id = [&](int id, const Node* node, const char* what) {
    if (id < -1 || id >= nv) {
      std::string msg = std::string(what) + " refers to value #" + std::to_string(id) + ", which does not exist";
      if (node) throw_node_error(*node, msg);
      throw Error("graph " + msg);
    }
  };
  for (const Node& n : nodes) {
    for (int i : n.inputs) check_id(i, &n, "an input");
    for (int o : n.outputs) check_id(o, &n, "an output");
  }
  for (int i : inputs) {
    check_id(i, nullptr, "an input");
    if (i < 0) throw Error("graph input is missing");
  }
  for (int o : outputs) {
    check_id(o, nullptr, "an output");
    if (o < 0) throw Error("graph output is missing");
  }
}

void Graph::topo_sort() {
  validate();
  const size_t nv = values.size();
  std::vector<int> prod(nv, -1);
  for (size_t n = 0; n < nodes.size(); ++n) {
    for (int o : nodes[n].outputs) {
      if (o < 0) continue;
      if (prod[o] >= 0)
        throw_node_error(nodes[n], "output '" + values[o].name + "' is also produced by " +
                                       nodes[prod[o]].describe());
      if (values[o].is_constant())
        throw_node_error(nodes[n], "output '" + values[o].name + "' is also an initializer");
      prod[o] = static_cast<int>(n);
    }
  }
  std::vector<char> is_graph_input(nv, 0);
  for (int i : inputs) is_graph_input[i] = 1;
  for (int i : inputs)
    if (prod[i] >= 0) throw_node_error(nodes[prod[i]], "writes graph input '" + values[i].name + "'");

  // Kahn's algorithm; ties keep the original order so the sort is stable.
  std::vector<int> pending(nodes.size(), 0);
  std::vector<std::vector<int>> consumers(nodes.size());
  for (size_t n = 0; n < nodes.size(); ++n) {
    for (int i : nodes[n].inputs) {
      if (i < 0) continue;
      if (prod[i] >= 0) {
        pending[n]++;
        consumers[prod[i]].push_back(static_cast<int>(n));
      } else if (!is_graph_input[i] && !values[i].is_constant()) {
        throw_node_error(nodes[n], "input '" + values[i].name +
                                       "' is not produced by any node and is neither a graph input nor a weight");
      }
    }
  }
  std::priority_queue<int, std::vector<int>, std::greater<int>> ready;
  for (size_t n = 0; n < nodes.size(); ++n)
    if (pending[n] == 0) ready.push(static_cast<int>(n));
  std::vector<int> order;
  order.reserve(nodes.size());
  while (!ready.empty()) {
    int n = ready.top();
    ready.pop();
    order.push_back(n);
    for (int c : consumers[n])
      if (--pending[c] == 0) ready.push(c);
  }
  if (order.size() != nodes.size()) {
    for (size_t n = 0; n < nodes.size(); ++n)
      if (pending[n] > 0) throw_node_error(nodes[n], "is part of a cycle in the graph");
  }
  for (int o : outputs)
    if (prod[o] < 0 && !is_graph_input[o] && !values[o].is_constant())
      throw Error("graph output '" + values[o].name + "' is not produced by any node");
  std::vector<Node> sorted;
  sorted.reserve(nodes.size());
  for (int n : order) sorted.push_back(std::move(nodes[n]));
  nodes = std::move(sorted);
}

}  // namespace ninegrid
