// Small helpers for editing ONNX models through the generated protobuf classes (ninegrid_onnx/onnx.pb.h),
// shared by the parts of `ninegrid quantize`: attribute and tensor access, node construction, who
// produces and reads each value, fresh names, removing what nothing reads.
#pragma once

#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "ninegrid/tensor.h"
#include "ninegrid_onnx/onnx.pb.h"

namespace ninegrid::quant {

bool default_domain(const onnx::NodeProto& n);
// The node's name, or "<op> -> <first output>" when it has none.
std::string node_label(const onnx::NodeProto& n);
// "node 'NAME' (OP)", for error messages.
std::string quoted_node(const onnx::NodeProto& n);

const onnx::AttributeProto* find_attr(const onnx::NodeProto& n, const std::string& name);
int64_t attr_int(const onnx::NodeProto& n, const std::string& name, int64_t def);
float attr_float(const onnx::NodeProto& n, const std::string& name, float def);
void set_int_attr(onnx::NodeProto& n, const std::string& name, int64_t v);

int64_t numel(const onnx::TensorProto& t);
// A float tensor's values; false for other types. Throws Error naming the tensor when its data is
// external or does not match its dimensions.
bool tensor_floats(const onnx::TensorProto& t, std::vector<float>* out);
onnx::TensorProto make_tensor(const std::string& name, int type, const std::vector<int64_t>& dims, const void* data,
                              size_t bytes);
onnx::NodeProto make_node(const std::string& op, const std::vector<std::string>& inputs,
                          const std::vector<std::string>& outputs, const std::string& name);

// Calls fn on every node of the graph and of its subgraphs (If, Loop, Scan bodies).
void for_each_node(onnx::GraphProto& g, const std::function<void(onnx::NodeProto&)>& fn);
void for_each_node(const onnx::GraphProto& g, const std::function<void(const onnx::NodeProto&)>& fn);
// Every node input (in subgraphs too) reading `from` reads `to` instead.
void rename_uses(onnx::GraphProto& g, const std::string& from, const std::string& to);
// Removes initializers (and their graph-input entries) and value_info that nothing refers to any more.
void remove_unused(onnx::GraphProto& g);
// Removes the top-level nodes whose entry in `dead` is nonzero.
void erase_nodes(onnx::GraphProto& g, const std::vector<char>& dead);

// Who produces and reads each name of the top-level graph.
struct Index {
  std::map<std::string, int> initializer;  // name -> index in graph.initializer
  std::set<std::string> inputs;            // real graph inputs (not initializers)
  std::set<std::string> outputs;           // graph outputs
  std::map<std::string, int> producer;     // name -> top-level node index
  std::map<std::string, std::vector<int>> readers;  // name -> top-level node indices, once per input slot
  std::set<std::string> subgraph_reads;    // names read inside subgraphs (outer-scope values)

  explicit Index(const onnx::GraphProto& g) {
    for (int i = 0; i < g.initializer_size(); ++i) initializer[g.initializer(i).name()] = i;
    for (const auto& in : g.input())
      if (!initializer.count(in.name())) inputs.insert(in.name());
    for (const auto& out : g.output()) outputs.insert(out.name());
    for (int n = 0; n < g.node_size(); ++n) {
      const onnx::NodeProto& node = g.node(n);
      for (const auto& o : node.output())
        if (!o.empty()) producer[o] = n;
      for (const auto& i : node.input())
        if (!i.empty()) readers[i].push_back(n);
      for (const auto& a : node.attribute()) {
        auto collect = [&](const onnx::GraphProto& sub) {
          for_each_node(sub, [&](const onnx::NodeProto& sn) {
            for (const auto& i : sn.input()) subgraph_reads.insert(i);
          });
        };
        if (a.has_g()) collect(a.g());
        for (const auto& sub : a.graphs()) collect(sub);
      }
    }
  }
  int producer_of(const std::string& t) const {
    auto it = producer.find(t);
    return it == producer.end() ? -1 : it->second;
  }
  const std::vector<int>& readers_of(const std::string& t) const {
    static const std::vector<int> none;
    auto it = readers.find(t);
    return it == readers.end() ? none : it->second;
  }
  // Read by exactly this one input slot of one top-level node, and by nothing else.
  bool only_reader(const std::string& t, int node) const {
    const auto& r = readers_of(t);
    return r.size() == 1 && r[0] == node && !outputs.count(t) && !subgraph_reads.count(t);
  }
  const onnx::TensorProto* init(const onnx::GraphProto& g, const std::string& name) const {
    auto it = initializer.find(name);
    return it == initializer.end() ? nullptr : &g.initializer(it->second);
  }
};

// Fresh names that collide with nothing in the model.
class Names {
 public:
  explicit Names(const onnx::GraphProto& g) {
    for (const auto& t : g.initializer()) used_.insert(t.name());
    for (const auto& v : g.input()) used_.insert(v.name());
    for (const auto& v : g.output()) used_.insert(v.name());
    for (const auto& v : g.value_info()) used_.insert(v.name());
    for_each_node(g, [&](const onnx::NodeProto& n) {
      used_.insert(n.name());
      for (const auto& o : n.output()) used_.insert(o);
      for (const auto& i : n.input()) used_.insert(i);
    });
  }
  std::string fresh(const std::string& base) {
    std::string name = base;
    for (int k = 2; used_.count(name); ++k) name = base + "_" + std::to_string(k);
    used_.insert(name);
    return name;
  }

 private:
  std::set<std::string> used_;
};

}  // namespace ninegrid::quant
