// Sibling convolutions merged into one: detection heads read one feature map with several small convs
// (RetinaFace: 4, 8 and 20 output channels per pyramid level, for scores, boxes and landmarks). Each alone
// reads the whole input again and fills its output vectors poorly (20 channels compute 32 lanes with
// AVX-512); one conv with their output channels concatenated reads the input once with full vectors, and
// a Split hands each consumer its channels.
//
// Merged: Convs reading the same value as their input X, with constant weights of the same shape past the
// output-channel axis, constant or absent biases, the same attributes (kernel, strides, pads, dilations,
// one group, the same fused activation, the same input block) and no fused residual, that write plain
// NCHW: the pass runs after the layout plan (plan_layout.cpp) and leaves every blocked tensor alone, since
// a Split needs plain data (merging the SSH modules' blocked 3x3 convs would force layout transforms).
// Only small groups (at most kMaxMergedChannels output channels in all): wide convs fill their vectors
// already.
#include <cstring>
#include <map>
#include <sstream>

#include "graph/passes/graph_edit.h"
#include "graph/passes/passes.h"
#include "ir/fused_conv.h"

namespace ninegrid {

namespace {

constexpr int64_t kMaxMergedChannels = 64;

// Everything that must be equal for two convs to merge, as text: the attributes and the weight shape
// past the output channels. Empty when the node cannot take part (tensor attributes, groups, residual).
std::string merge_key(const Graph& g, const Node& n) {
  if (n.op_type != "Conv" || n.inputs.size() < 2 || n.inputs.size() > 3 || n.outputs.size() != 1) return "";
  if (n.attrs.get_int("group", 1) != 1 || n.attrs.get_int(fused::kOutBlock, 1) != 1) return "";
  const Tensor* w = constant_input(g, n, 1);
  if (!w || w->dtype() != DataType::Float32 || w->rank() != 4) return "";
  if (n.inputs.size() == 3 && n.inputs[2] >= 0) {
    const Tensor* b = constant_input(g, n, 2);
    if (!b || b->dtype() != DataType::Float32 || b->rank() != 1 || b->dim(0) != w->dim(0)) return "";
  }
  std::ostringstream key;
  key << w->dim(1) << "x" << w->dim(2) << "x" << w->dim(3);
  for (const auto& [name, a] : n.attrs.all()) {
    key << ";" << name << "=" << static_cast<int>(a.kind) << ":" << a.i << ":" << a.f << ":" << a.s;
    for (int64_t v : a.ints) key << "," << v;
    for (float v : a.floats) key << "," << v;
    if (a.kind == Attribute::Kind::TensorValue || a.kind == Attribute::Kind::Strings) return "";
  }
  return key.str();
}

// Replaces convs[0] by the merged conv and a Split, and marks the others dead.
void merge(Graph& g, const std::vector<int>& convs, std::vector<char>& dead, std::vector<Node>& inserted_after,
           std::vector<int>& insert_at) {
  const Node& first = g.nodes[convs[0]];
  const Tensor& w0 = *constant_input(g, first, 1);
  const int64_t per_channel = w0.dim(1) * w0.dim(2) * w0.dim(3);
  int64_t total = 0;
  for (int c : convs) total += constant_input(g, g.nodes[c], 1)->dim(0);

  Tensor weights = Tensor::empty(DataType::Float32, {total, w0.dim(1), w0.dim(2), w0.dim(3)});
  Tensor bias = Tensor::empty(DataType::Float32, {total});
  float* wp = weights.data_as<float>();
  float* bp = bias.data_as<float>();
  std::vector<int64_t> sizes;
  std::vector<int> outputs;
  std::string names;
  for (int c : convs) {
    const Node& n = g.nodes[c];
    const Tensor& w = *constant_input(g, n, 1);
    const int64_t oc = w.dim(0);
    std::memcpy(wp, w.data_as<float>(), static_cast<size_t>(oc * per_channel) * sizeof(float));
    const Tensor* b = n.inputs.size() == 3 && n.inputs[2] >= 0 ? constant_input(g, n, 2) : nullptr;
    for (int64_t i = 0; i < oc; ++i) bp[i] = b ? b->data_as<float>()[i] : 0.f;
    wp += oc * per_channel;
    bp += oc;
    sizes.push_back(oc);
    outputs.push_back(n.outputs[0]);
    names += (names.empty() ? "" : "+") + n.name;
  }

  Node conv = first;
  conv.name = names;
  const int merged = g.add_value(g.unique_value_name(first.name + "_merged"));
  g.values[merged].dtype = DataType::Float32;
  conv.inputs = {first.inputs[0], add_constant(g, conv.name + "_weights", std::move(weights)),
                 add_constant(g, conv.name + "_bias", std::move(bias))};
  conv.outputs = {merged};
  Node split;
  split.name = names + "_split";
  split.op_type = "Split";
  split.inputs = {merged};
  split.outputs = outputs;
  split.attrs.set("axis", Attribute::of_int(1));
  split.attrs.set("split", Attribute::of_ints(sizes));
  g.nodes[convs[0]] = std::move(conv);
  for (size_t i = 1; i < convs.size(); ++i) dead[convs[i]] = 1;
  inserted_after.push_back(std::move(split));
  insert_at.push_back(convs[0]);
}

}  // namespace

int merge_sibling_convs(Graph& g) {
  // Convs by (input value, merge key), in node order.
  std::map<std::pair<int, std::string>, std::vector<int>> groups;
  for (int i = 0; i < static_cast<int>(g.nodes.size()); ++i) {
    const std::string key = merge_key(g, g.nodes[i]);
    if (!key.empty() && g.nodes[i].inputs[0] >= 0) groups[{g.nodes[i].inputs[0], key}].push_back(i);
  }
  std::vector<char> dead(g.nodes.size(), 0);
  std::vector<Node> splits;
  std::vector<int> split_after;
  for (const auto& [key, convs] : groups) {
    if (convs.size() < 2) continue;
    int64_t total = 0;
    for (int c : convs) total += constant_input(g, g.nodes[c], 1)->dim(0);
    if (total > kMaxMergedChannels) continue;
    merge(g, convs, dead, splits, split_after);
  }
  if (splits.empty()) return 0;
  // Rebuild the node list: each Split right after its merged conv, the merged-away convs dropped.
  std::vector<Node> nodes;
  nodes.reserve(g.nodes.size() + splits.size());
  for (int i = 0; i < static_cast<int>(g.nodes.size()); ++i) {
    if (dead[i]) continue;
    nodes.push_back(std::move(g.nodes[i]));
    for (size_t s = 0; s < splits.size(); ++s)
      if (split_after[s] == i) nodes.push_back(std::move(splits[s]));
  }
  g.nodes = std::move(nodes);
  g.topo_sort();
  return static_cast<int>(splits.size());
}

}  // namespace ninegrid
