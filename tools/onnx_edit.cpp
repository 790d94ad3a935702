#include "onnx_edit.h"

#include <cstring>

namespace ninegrid::quant {

using onnx::AttributeProto;
using onnx::GraphProto;
using onnx::ModelProto;
using onnx::NodeProto;
using onnx::TensorProto;

bool default_domain(const NodeProto& n) { return n.domain().empty() || n.domain() == "ai.onnx"; }

std::string node_label(const NodeProto& n) {
  if (!n.name().empty()) return n.name();
  return n.op_type() + " -> " + (n.output_size() ? n.output(0) : std::string("?"));
}

std::string quoted_node(const NodeProto& n) { return "node '" + node_label(n) + "' (" + n.op_type() + ")"; }

const AttributeProto* find_attr(const NodeProto& n, const std::string& name) {
  for (const auto& a : n.attribute())
    if (a.name() == name) return &a;
  return nullptr;
}
int64_t attr_int(const NodeProto& n, const std::string& name, int64_t def) {
  const AttributeProto* a = find_attr(n, name);
  return a ? a->i() : def;
}
float attr_float(const NodeProto& n, const std::string& name, float def) {
  const AttributeProto* a = find_attr(n, name);
  return a ? a->f() : def;
}

int64_t numel(const TensorProto& t) {
  int64_t n = 1;
  for (int64_t d : t.dims()) n *= d;
  return n;
}

bool tensor_floats(const TensorProto& t, std::vector<float>* out) {
  if (t.data_type() != TensorProto::FLOAT) return false;
  if (t.data_location() == TensorProto::EXTERNAL)
    throw Error("initializer '" + t.name() + "' keeps its data in an external file, which is not supported");
  const int64_t n = numel(t);
  if (n < 0) return false;
  if (!t.raw_data().empty()) {
    if (t.raw_data().size() != static_cast<size_t>(n) * 4)
      throw Error("initializer '" + t.name() + "' has " + std::to_string(t.raw_data().size()) + " bytes of data for " +
                  std::to_string(n) + " floats");
    out->resize(static_cast<size_t>(n));
    std::memcpy(out->data(), t.raw_data().data(), t.raw_data().size());
    return true;
  }
  if (t.float_data_size() != n)
    throw Error("initializer '" + t.name() + "' has " + std::to_string(t.float_data_size()) + " values for " +
                std::to_string(n) + " elements");
  out->assign(t.float_data().begin(), t.float_data().end());
  return true;
}

TensorProto make_tensor(const std::string& name, int type, const std::vector<int64_t>& dims, const void* data,
                        size_t bytes) {
  TensorProto t;
  t.set_name(name);
  t.set_data_type(type);
  for (int64_t d : dims) t.add_dims(d);
  t.set_raw_data(data, bytes);
  return t;
}

NodeProto make_node(const std::string& op, const std::vector<std::string>& inputs,
                    const std::vector<std::string>& outputs, const std::string& name) {
  NodeProto n;
  n.set_op_type(op);
  n.set_name(name);
  for (const auto& i : inputs) n.add_input(i);
  for (const auto& o : outputs) n.add_output(o);
  return n;
}

void set_int_attr(NodeProto& n, const std::string& name, int64_t v) {
  AttributeProto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(AttributeProto::INT);
  a->set_i(v);
}

void for_each_node(GraphProto& g, const std::function<void(NodeProto&)>& fn) {
  for (auto& n : *g.mutable_node()) {
    fn(n);
    for (auto& a : *n.mutable_attribute()) {
      if (a.has_g()) for_each_node(*a.mutable_g(), fn);
      for (auto& sub : *a.mutable_graphs()) for_each_node(sub, fn);
    }
  }
}
void for_each_node(const GraphProto& g, const std::function<void(const NodeProto&)>& fn) {
  for (const auto& n : g.node()) {
    fn(n);
    for (const auto& a : n.attribute()) {
      if (a.has_g()) for_each_node(a.g(), fn);
      for (const auto& sub : a.graphs()) for_each_node(sub, fn);
    }
  }
}

void rename_uses(GraphProto& g, const std::string& from, const std::string& to) {
  for_each_node(g, [&](NodeProto& n) {
    for (int i = 0; i < n.input_size(); ++i)
      if (n.input(i) == from) n.set_input(i, to);
  });
}

void remove_unused(GraphProto& g) {
  std::set<std::string> read;
  for_each_node(g, [&](const NodeProto& n) {
    for (const auto& i : n.input()) read.insert(i);
  });
  for (const auto& o : g.output()) read.insert(o.name());
  std::set<std::string> dropped;
  google::protobuf::RepeatedPtrField<TensorProto> inits;
  for (auto& t : *g.mutable_initializer()) {
    if (read.count(t.name())) inits.Add(std::move(t));
    else dropped.insert(t.name());
  }
  g.mutable_initializer()->Swap(&inits);
  google::protobuf::RepeatedPtrField<onnx::ValueInfoProto> ins;
  for (auto& v : *g.mutable_input())
    if (!dropped.count(v.name())) ins.Add(std::move(v));
  g.mutable_input()->Swap(&ins);
  std::set<std::string> exists;
  for (const auto& t : g.initializer()) exists.insert(t.name());
  for (const auto& n : g.node())
    for (const auto& o : n.output()) exists.insert(o);
  for (const auto& v : g.input()) exists.insert(v.name());
  google::protobuf::RepeatedPtrField<onnx::ValueInfoProto> infos;
  for (auto& v : *g.mutable_value_info())
    if (exists.count(v.name())) infos.Add(std::move(v));
  g.mutable_value_info()->Swap(&infos);
}

void erase_nodes(GraphProto& g, const std::vector<char>& dead) {
  google::protobuf::RepeatedPtrField<NodeProto> kept;
  for (int i = 0; i < g.node_size(); ++i)
    if (!dead[i]) kept.Add(std::move(*g.mutable_node(i)));
  g.mutable_node()->Swap(&kept);
}

}  // namespace ninegrid::quant
