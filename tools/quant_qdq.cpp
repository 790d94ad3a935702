#include "quant_qdq.h"

#include <algorithm>
#include <cmath>

#include "onnx_edit.h"

namespace ninegrid::quant {

using onnx::AttributeProto;
using onnx::GraphProto;
using onnx::ModelProto;
using onnx::NodeProto;
using onnx::TensorProto;

std::map<std::string, std::string> insert_qdq(onnx::ModelProto& model, const QuantPlan& plan,
                                              const std::map<std::string, ActivationParams>& params,
                                              bool per_channel, const std::map<std::string, ChannelMeans>* input_means,
                                              int* bias_corrected, int weight_max) {
  GraphProto& g = *model.mutable_graph();
  const Index idx(g);
  Names names(g);
  const int count = g.node_size();
  std::vector<std::vector<NodeProto>> before(count), after(count);
  std::vector<NodeProto> head;
  std::map<std::string, std::string> dequantized;

  // Activation parameters as initializers: one scale and zero point per tensor that has its own.
  auto root = [&](std::string t) {
    for (int guard = 0; plan.shares.count(t) && guard < 1000; ++guard) t = plan.shares.at(t);
    return t;
  };
  auto params_of = [&](const std::string& t) {
    auto it = params.find(root(t));
    if (it == params.end()) throw Error("internal: no quantisation parameters for tensor '" + t + "'");
    return it->second;
  };
  std::map<std::string, std::pair<std::string, std::string>> qparam_names;  // root tensor -> scale, zero point
  auto qparams = [&](const std::string& t) {
    const std::string r = root(t);
    auto it = qparam_names.find(r);
    if (it != qparam_names.end()) return it->second;
    const ActivationParams p = params_of(r);
    const std::string s = names.fresh(r + "_scale"), z = names.fresh(r + "_zero_point");
    *g.add_initializer() = make_tensor(s, TensorProto::FLOAT, {}, &p.scale, 4);
    *g.add_initializer() = make_tensor(z, TensorProto::UINT8, {}, &p.zero_point, 1);
    return qparam_names[r] = {s, z};
  };

  // Activations: T_float -> Q -> T_quantized -> DQ -> T.
  std::map<std::string, std::string> graph_input_renames;
  for (const std::string& t : plan.tensors) {
    const auto [s, z] = qparams(t);
    const std::string q = names.fresh(t + "_quantized");
    const int p = idx.producer_of(t);
    if (p < 0) {  // a graph input
      const std::string dq = names.fresh(t + "_dequantized");
      head.push_back(make_node("QuantizeLinear", {t, s, z}, {q}, names.fresh(t + "_QuantizeLinear")));
      head.push_back(make_node("DequantizeLinear", {q, s, z}, {dq}, names.fresh(t + "_DequantizeLinear")));
      graph_input_renames[t] = dq;
      dequantized[t] = dq;
      continue;
    }
    const std::string f = names.fresh(t + "_float");
    NodeProto& producer = *g.mutable_node(p);
    for (int o = 0; o < producer.output_size(); ++o)
      if (producer.output(o) == t) producer.set_output(o, f);
    after[p].push_back(make_node("QuantizeLinear", {f, s, z}, {q}, names.fresh(t + "_QuantizeLinear")));
    after[p].push_back(make_node("DequantizeLinear", {q, s, z}, {t}, names.fresh(t + "_DequantizeLinear")));
    dequantized[t] = t;
  }

  // Weights: int8 symmetric; shared by every quantised reader asking for the same quantisation.
  std::map<std::string, std::pair<std::string, std::vector<float>>> weight_cache;  // key -> DQ output, scales
  auto quantize_weight = [&](int n, const std::string& w, size_t outer, size_t channels, size_t inner, int axis) {
    const std::string key = w + (per_channel ? "/axis" + std::to_string(axis) : "/tensor");
    auto it = weight_cache.find(key);
    if (it != weight_cache.end()) return it->second;
    const TensorProto& t = *idx.init(g, w);
    std::vector<float> v;
    tensor_floats(t, &v);
    const WeightQuant wq = quantize_weights(v.data(), outer, channels, inner, per_channel, weight_max);
    std::vector<int64_t> dims(t.dims().begin(), t.dims().end());
    const std::string qn = names.fresh(w + "_quantized"), sn = names.fresh(w + "_scale"),
                      zn = names.fresh(w + "_zero_point"), dq = names.fresh(w + "_dequantized");
    const std::vector<int64_t> sdims = per_channel ? std::vector<int64_t>{static_cast<int64_t>(channels)}
                                                   : std::vector<int64_t>{};
    const std::vector<int8_t> zeros(wq.scale.size(), 0);
    *g.add_initializer() = make_tensor(qn, TensorProto::INT8, dims, wq.q.data(), wq.q.size());
    *g.add_initializer() = make_tensor(sn, TensorProto::FLOAT, sdims, wq.scale.data(), wq.scale.size() * 4);
    *g.add_initializer() = make_tensor(zn, TensorProto::INT8, sdims, zeros.data(), zeros.size());
    NodeProto node = make_node("DequantizeLinear", {qn, sn, zn}, {dq}, names.fresh(w + "_DequantizeLinear"));
    if (per_channel) set_int_attr(node, "axis", axis);
    before[n].push_back(std::move(node));
    return weight_cache[key] = {dq, wq.scale};
  };
  auto quantize_bias_input = [&](int n, const std::string& b, const std::vector<float>& v, float x_scale,
                                 const std::vector<float>& w_scale) {
    std::vector<int32_t> q;
    std::vector<float> scale;
    quantize_bias(v.data(), v.size(), x_scale, w_scale, &q, &scale);
    const std::string qn = names.fresh(b + "_quantized"), sn = names.fresh(b + "_scale"),
                      zn = names.fresh(b + "_zero_point"), dq = names.fresh(b + "_dequantized");
    const std::vector<int64_t> sdims =
        scale.size() > 1 ? std::vector<int64_t>{static_cast<int64_t>(scale.size())} : std::vector<int64_t>{};
    const std::vector<int32_t> zeros(scale.size(), 0);
    *g.add_initializer() = make_tensor(qn, TensorProto::INT32, {static_cast<int64_t>(q.size())}, q.data(), q.size() * 4);
    *g.add_initializer() = make_tensor(sn, TensorProto::FLOAT, sdims, scale.data(), scale.size() * 4);
    *g.add_initializer() = make_tensor(zn, TensorProto::INT32, sdims, zeros.data(), zeros.size() * 4);
    NodeProto node = make_node("DequantizeLinear", {qn, sn, zn}, {dq}, names.fresh(b + "_DequantizeLinear"));
    if (scale.size() > 1) set_int_attr(node, "axis", 0);
    before[n].push_back(std::move(node));
    return dq;
  };
  // A constant input of Add or Concat: uint8 over its own range.
  std::map<std::string, std::string> constant_cache;
  auto quantize_constant = [&](int n, const std::string& c) {
    auto it = constant_cache.find(c);
    if (it != constant_cache.end()) return it->second;
    const TensorProto& t = *idx.init(g, c);
    std::vector<float> v;
    tensor_floats(t, &v);
    Range r;
    if (!v.empty()) {
      r.lo = *std::min_element(v.begin(), v.end());
      r.hi = *std::max_element(v.begin(), v.end());
    }
    const ActivationParams p = activation_params(r);
    std::vector<uint8_t> q(v.size());
    for (size_t i = 0; i < v.size(); ++i) {
      const float x = std::nearbyint(v[i] / p.scale) + static_cast<float>(p.zero_point);
      q[i] = static_cast<uint8_t>(std::clamp(x, 0.f, 255.f));
    }
    std::vector<int64_t> dims(t.dims().begin(), t.dims().end());
    const std::string qn = names.fresh(c + "_quantized"), sn = names.fresh(c + "_scale"),
                      zn = names.fresh(c + "_zero_point"), dq = names.fresh(c + "_dequantized");
    *g.add_initializer() = make_tensor(qn, TensorProto::UINT8, dims, q.data(), q.size());
    *g.add_initializer() = make_tensor(sn, TensorProto::FLOAT, {}, &p.scale, 4);
    *g.add_initializer() = make_tensor(zn, TensorProto::UINT8, {}, &p.zero_point, 1);
    before[n].push_back(make_node("DequantizeLinear", {qn, sn, zn}, {dq}, names.fresh(c + "_DequantizeLinear")));
    return constant_cache[c] = dq;
  };

  for (const QuantLayer& layer : plan.layers) {
    const int n = layer.node;
    NodeProto& node = *g.mutable_node(n);
    const std::string op = node.op_type();
    if (op == "Conv" || op == "Gemm" || op == "MatMul") {
      const TensorProto& w = *idx.init(g, node.input(1));
      std::vector<int64_t> d(w.dims().begin(), w.dims().end());
      size_t outer = 1, channels = 0, inner = 1;
      int axis = 0;
      if (op == "Conv") {
        channels = static_cast<size_t>(d[0]);
        for (size_t k = 1; k < d.size(); ++k) inner *= static_cast<size_t>(d[k]);
      } else if (op == "Gemm" && attr_int(node, "transB", 0) != 0) {  // [N, K]
        channels = static_cast<size_t>(d[0]);
        inner = static_cast<size_t>(d[1]);
      } else {  // [K, N]
        outer = static_cast<size_t>(d[0]);
        channels = static_cast<size_t>(d[1]);
        axis = 1;
      }
      const auto [wdq, wscale] = quantize_weight(n, node.input(1), outer, channels, inner, axis);
      const bool has_bias = node.input_size() > 2 && !node.input(2).empty();
      std::vector<float> bias;
      if (has_bias) tensor_floats(*idx.init(g, node.input(2)), &bias);
      else bias.assign(channels, 0.f);
      bool corrected = false;
      const ChannelMeans* means = nullptr;
      if (input_means) {
        const auto it = input_means->find(node.input(0));
        if (it != input_means->end()) means = &it->second;
      }
      if (op != "MatMul" && means) {
        // Bias correction (quant_calibration.h): the weight as [out, in per group, taps] in float and
        // dequantised, and the layer's input means.
        std::vector<float> wf;
        tensor_floats(w, &wf);
        const WeightQuant wq = quantize_weights(wf.data(), outer, channels, inner, per_channel, weight_max);
        std::vector<float> wd(wf.size());
        for (size_t o = 0; o < outer; ++o)
          for (size_t c = 0; c < channels; ++c)
            for (size_t i = 0; i < inner; ++i) {
              const size_t at = (o * channels + c) * inner + i;
              wd[at] = static_cast<float>(wq.q[at]) * wq.scale[per_channel ? c : 0];
            }
        size_t in_per_group = inner, taps = 1, groups = 1;
        if (op == "Conv") {
          in_per_group = static_cast<size_t>(d[1]);
          taps = inner / in_per_group;
          groups = static_cast<size_t>(std::max<int64_t>(1, attr_int(node, "group", 1)));
        } else if (axis == 1) {  // Gemm's [K, N] weight: as [N, K]
          std::vector<float> tf(wf.size()), td(wd.size());
          for (size_t k = 0; k < outer; ++k)
            for (size_t c = 0; c < channels; ++c) {
              tf[c * outer + k] = wf[k * channels + c];
              td[c * outer + k] = wd[k * channels + c];
            }
          wf.swap(tf);
          wd.swap(td);
          in_per_group = outer;
        }
        const std::vector<double> shift =
            output_mean_shift(wf.data(), wd.data(), channels, in_per_group, taps, groups, *means);
        for (size_t c = 0; c < channels; ++c)
          if (shift[c] != 0) {
            bias[c] = static_cast<float>(bias[c] - shift[c]);
            corrected = true;
          }
        if (corrected && bias_corrected) ++*bias_corrected;
      }
      if (op != "MatMul" && (has_bias || corrected)) {
        const float x_scale = params_of(node.input(0)).scale;
        const std::string base = has_bias ? node.input(2) : names.fresh(layer.keep_name + "_bias");
        const std::string bdq = quantize_bias_input(n, base, bias, x_scale, wscale);
        if (has_bias) node.set_input(2, bdq);
        else node.add_input(bdq);
      }
      node.set_input(1, wdq);
    } else if (op == "Add" || op == "Concat") {
      for (int k = 0; k < node.input_size(); ++k)
        if (idx.initializer.count(node.input(k))) node.set_input(k, quantize_constant(n, node.input(k)));
    }
  }

  // Readers of a quantised graph input read its dequantised copy (the Q/DQ pair in `head` is not in the
  // graph yet, so its QuantizeLinear keeps reading the input itself).
  for (const auto& [from, to] : graph_input_renames) rename_uses(g, from, to);

  google::protobuf::RepeatedPtrField<NodeProto> nodes;
  for (auto& h : head) nodes.Add(std::move(h));
  for (int n = 0; n < count; ++n) {
    for (auto& b : before[n]) nodes.Add(std::move(b));
    nodes.Add(std::move(*g.mutable_node(n)));
    for (auto& a : after[n]) nodes.Add(std::move(a));
  }
  g.mutable_node()->Swap(&nodes);
  remove_unused(g);
  return dequantized;
}
}  // namespace ninegrid::quant
