#include "quant_equalize.h"

#include <algorithm>
#include <cmath>
#include <set>

#include "onnx_edit.h"

namespace ninegrid::quant {

using onnx::GraphProto;
using onnx::NodeProto;
using onnx::TensorProto;

namespace {

// A Conv's constant float weight of rank 3 or more, or null.
const TensorProto* conv_weight(const GraphProto& g, const Index& idx, const NodeProto& n) {
  if (n.op_type() != "Conv" || n.input_size() < 2) return nullptr;
  const TensorProto* w = idx.init(g, n.input(1));
  return w && w->data_type() == TensorProto::FLOAT && w->dims_size() >= 3 ? w : nullptr;
}

// A Conv's constant float bias, null when it has none; `ok` false when it has one that is not constant.
const TensorProto* conv_bias(const GraphProto& g, const Index& idx, const NodeProto& n, bool* ok) {
  *ok = true;
  if (n.input_size() < 3 || n.input(2).empty()) return nullptr;
  const TensorProto* b = idx.init(g, n.input(2));
  *ok = b && b->data_type() == TensorProto::FLOAT;
  return *ok ? b : nullptr;
}

}  // namespace

std::vector<EqualizationPair> equalization_pairs(const onnx::ModelProto& model, const QuantPlan& plan) {
  const GraphProto& g = model.graph();
  const Index idx(g);
  std::map<int, const QuantLayer*> layer_of;
  for (const QuantLayer& l : plan.layers) layer_of[l.node] = &l;
  std::vector<EqualizationPair> pairs;
  for (const QuantLayer& l : plan.layers) {
    if (l.op_type != "Conv" && l.op_type != "Conv+Relu") continue;
    const NodeProto& p = g.node(l.node);
    const TensorProto* w = conv_weight(g, idx, p);
    bool bias_ok = true;
    conv_bias(g, idx, p, &bias_ok);
    if (!w || !bias_ok) continue;
    const std::string& t = l.output;
    const std::vector<int>& readers = idx.readers_of(t);
    if (readers.empty() || idx.outputs.count(t) || idx.subgraph_reads.count(t)) continue;
    std::set<int> consumers;
    bool ok = true;
    for (int r : readers) {
      const NodeProto& c = g.node(r);
      const auto it = layer_of.find(r);
      const TensorProto* cw = conv_weight(g, idx, c);
      ok = it != layer_of.end() && it->second->op_type.rfind("Conv", 0) == 0 && cw && c.input(0) == t &&
           cw->dims(1) * std::max<int64_t>(1, attr_int(c, "group", 1)) == w->dims(0);
      for (int k = 1; ok && k < c.input_size(); ++k) ok = c.input(k) != t;
      if (!ok) break;
      consumers.insert(r);
    }
    if (ok) pairs.push_back({l.node, t, std::vector<int>(consumers.begin(), consumers.end())});
  }
  return pairs;
}

std::vector<double> equalization_scales(const std::vector<double>& activation_range,
                                        const std::vector<double>& weight_range) {
  const size_t n = activation_range.size();
  std::vector<double> s(n, 1.0);
  std::vector<char> valid(n, 0);
  double log_sum = 0;
  size_t count = 0;
  for (size_t i = 0; i < n && i < weight_range.size(); ++i) {
    const double a = activation_range[i], r = weight_range[i];
    if (!(a > 0) || !(r > 0) || !std::isfinite(a) || !std::isfinite(r)) continue;
    s[i] = std::sqrt(a / r);
    valid[i] = 1;
    log_sum += std::log(s[i]);
    ++count;
  }
  if (count == 0) return s;
  const double mean = std::exp(log_sum / static_cast<double>(count));
  for (size_t i = 0; i < n; ++i)
    if (valid[i]) s[i] = std::clamp(s[i] / mean, 1.0 / 64, 64.0);
  return s;
}

int equalize(onnx::ModelProto& model, const std::vector<EqualizationPair>& pairs,
             const std::map<std::string, std::vector<double>>& channel_range) {
  GraphProto& g = *model.mutable_graph();
  const Index idx(g);
  Names names(g);
  // The weights and biases as they are being rescaled (a Conv can be the producer of one pair and a
  // consumer of another), with their dimensions.
  struct Param {
    std::vector<float> values;
    std::vector<int64_t> dims;
  };
  std::map<int, Param> weights, biases;
  auto weight = [&](int n) -> Param& {
    auto it = weights.find(n);
    if (it != weights.end()) return it->second;
    const TensorProto& t = *conv_weight(g, idx, g.node(n));
    Param& p = weights[n];
    tensor_floats(t, &p.values);
    p.dims.assign(t.dims().begin(), t.dims().end());
    return p;
  };
  int count = 0;
  for (const EqualizationPair& pair : pairs) {
    const auto range = channel_range.find(pair.tensor);
    Param& pw = weight(pair.producer);
    const size_t m = static_cast<size_t>(pw.dims[0]);
    if (range == channel_range.end() || range->second.size() != m) continue;
    // r_i: the largest weight of any consumer reading channel i.
    std::vector<double> r(m, 0.0);
    for (int c : pair.consumers) {
      const Param& cw = weight(c);
      const size_t out = static_cast<size_t>(cw.dims[0]), in_per_group = static_cast<size_t>(cw.dims[1]);
      const size_t taps = cw.values.size() / (out * in_per_group);
      const size_t per_group = out / (m / in_per_group);
      for (size_t o = 0; o < out; ++o)
        for (size_t il = 0; il < in_per_group; ++il) {
          const size_t i = (o / per_group) * in_per_group + il;
          for (size_t k = 0; k < taps; ++k)
            r[i] = std::max(r[i], static_cast<double>(std::fabs(cw.values[(o * in_per_group + il) * taps + k])));
        }
    }
    const std::vector<double> s = equalization_scales(range->second, r);
    const size_t inner = pw.values.size() / m;
    for (size_t i = 0; i < m; ++i)
      for (size_t k = 0; k < inner; ++k) pw.values[i * inner + k] = static_cast<float>(pw.values[i * inner + k] / s[i]);
    bool bias_ok = true;
    if (const TensorProto* b = conv_bias(g, idx, g.node(pair.producer), &bias_ok)) {
      auto it = biases.find(pair.producer);
      if (it == biases.end()) {
        Param& p = biases[pair.producer];
        tensor_floats(*b, &p.values);
        p.dims.assign(b->dims().begin(), b->dims().end());
        it = biases.find(pair.producer);
      }
      for (size_t i = 0; i < m && i < it->second.values.size(); ++i)
        it->second.values[i] = static_cast<float>(it->second.values[i] / s[i]);
    }
    for (int c : pair.consumers) {
      Param& cw = weight(c);
      const size_t out = static_cast<size_t>(cw.dims[0]), in_per_group = static_cast<size_t>(cw.dims[1]);
      const size_t taps = cw.values.size() / (out * in_per_group);
      const size_t per_group = out / (m / in_per_group);
      for (size_t o = 0; o < out; ++o)
        for (size_t il = 0; il < in_per_group; ++il) {
          const double si = s[(o / per_group) * in_per_group + il];
          for (size_t k = 0; k < taps; ++k) {
            float& v = cw.values[(o * in_per_group + il) * taps + k];
            v = static_cast<float>(v * si);
          }
        }
    }
    ++count;
  }
  // New initializers: the old ones may be read by other nodes too; remove_unused drops them later.
  for (auto& [n, p] : weights) {
    NodeProto& node = *g.mutable_node(n);
    const std::string name = names.fresh(node.input(1) + "_equalized");
    *g.add_initializer() = make_tensor(name, TensorProto::FLOAT, p.dims, p.values.data(), p.values.size() * 4);
    node.set_input(1, name);
  }
  for (auto& [n, p] : biases) {
    NodeProto& node = *g.mutable_node(n);
    const std::string name = names.fresh(node.input(2) + "_equalized");
    *g.add_initializer() = make_tensor(name, TensorProto::FLOAT, p.dims, p.values.data(), p.values.size() * 4);
    node.set_input(2, name);
  }
  remove_unused(g);
  return count;
}

}  // namespace ninegrid::quant
