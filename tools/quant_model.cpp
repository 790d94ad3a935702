#include "quant_model.h"

#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>
#include <map>
#include <set>
#include <sstream>

#include "onnx_edit.h"

namespace ninegrid::quant {

namespace {

using onnx::AttributeProto;
using onnx::GraphProto;
using onnx::ModelProto;
using onnx::NodeProto;
using onnx::TensorProto;

int64_t default_opset(const ModelProto& m) {
  for (const auto& o : m.opset_import())
    if (o.domain().empty() || o.domain() == "ai.onnx") return o.version();
  return 0;
}

// The lowest opset from which each operator means the same as at opset 13, for raising a model's opset:
// the versions between only widened types, allowed negative axes or added optional attributes whose
// defaults keep the old behaviour. Operators not listed (Softmax, Split, Squeeze, Unsqueeze, ReduceSum,
// Upsample, ...) changed meaning or signature on the way and are refused.
const std::map<std::string, int>& opset13_compatible_from() {
  static const std::map<std::string, int> table = {
      {"Abs", 6}, {"Acos", 7}, {"Add", 7}, {"And", 7}, {"ArgMax", 1}, {"ArgMin", 1}, {"Asin", 7}, {"Atan", 7},
      {"AveragePool", 7}, {"BatchNormalization", 9}, {"Cast", 6}, {"Ceil", 6}, {"Clip", 11}, {"Concat", 4},
      {"Constant", 9}, {"ConstantOfShape", 9}, {"Conv", 1}, {"ConvTranspose", 1}, {"Cos", 7},
      {"DepthToSpace", 1}, {"Div", 7}, {"Dropout", 7}, {"Elu", 6}, {"Equal", 7}, {"Erf", 9}, {"Exp", 6},
      {"Expand", 8}, {"Flatten", 1}, {"Floor", 6}, {"Gather", 1}, {"GatherElements", 11}, {"Gemm", 7},
      {"GlobalAveragePool", 1}, {"GlobalMaxPool", 1}, {"Greater", 7}, {"HardSigmoid", 6}, {"Identity", 1},
      {"InstanceNormalization", 6}, {"LeakyRelu", 6}, {"Less", 7}, {"Log", 6}, {"LRN", 1}, {"MatMul", 1},
      {"Max", 8}, {"MaxPool", 8}, {"Mean", 8}, {"Min", 8}, {"Mul", 7}, {"Neg", 6}, {"Not", 1}, {"Or", 7},
      {"Pad", 11}, {"Pow", 7}, {"PRelu", 7}, {"Range", 11}, {"Reciprocal", 6}, {"ReduceL2", 1},
      {"ReduceMax", 1}, {"ReduceMean", 1}, {"ReduceMin", 1}, {"ReduceProd", 1}, {"Relu", 6}, {"Reshape", 5},
      {"Resize", 11}, {"Selu", 6}, {"Shape", 1}, {"Sigmoid", 6}, {"Sign", 9}, {"Sin", 7}, {"Size", 1},
      {"Slice", 10}, {"Softplus", 1}, {"Softsign", 1}, {"SpaceToDepth", 1}, {"Sqrt", 6}, {"Sub", 7}, {"Sum", 8},
      {"Tan", 7}, {"Tanh", 6}, {"Tile", 6}, {"Transpose", 1}, {"Where", 9}, {"Xor", 7}};
  return table;
}

void raise_opset(ModelProto& m, PrepareNotes& notes) {
  const int64_t opset = default_opset(m);
  notes.old_opset = notes.new_opset = opset;
  if (opset >= 13) return;
  if (opset == 0) throw Error("the model imports no opset of the default ONNX domain");
  std::vector<std::string> bad;
  for_each_node(*m.mutable_graph(), [&](NodeProto& n) {
    if (!default_domain(n)) return;
    auto it = opset13_compatible_from().find(n.op_type());
    if (it == opset13_compatible_from().end() || opset < it->second) bad.push_back(quoted_node(n));
  });
  if (!bad.empty()) {
    std::string list;
    for (size_t i = 0; i < bad.size() && i < 5; ++i) list += (i ? ", " : "") + bad[i];
    if (bad.size() > 5) list += " and " + std::to_string(bad.size() - 5) + " more";
    throw Error("the model's opset is " + std::to_string(opset) +
                "; a QDQ model needs opset 13 (per-channel DequantizeLinear), and raising it would change what " +
                list + " mean(s): export the float model again with opset 13 or later");
  }
  for (auto& o : *m.mutable_opset_import())
    if (o.domain().empty() || o.domain() == "ai.onnx") o.set_version(13);
  if (m.ir_version() < 7) m.set_ir_version(7);
  notes.new_opset = 13;
}

int constants_to_initializers(GraphProto& g) {
  Index idx(g);
  std::vector<char> dead(g.node_size(), 0);
  int count = 0;
  for (int i = 0; i < g.node_size(); ++i) {
    const NodeProto& n = g.node(i);
    if (!default_domain(n) || n.op_type() != "Constant" || n.output_size() != 1 || n.attribute_size() != 1) continue;
    const std::string& out = n.output(0);
    if (idx.outputs.count(out) || idx.initializer.count(out)) continue;
    const AttributeProto& a = n.attribute(0);
    TensorProto t;
    if (a.name() == "value" && a.has_t()) {
      t = a.t();
    } else if (a.name() == "value_float") {
      const float v = a.f();
      t = make_tensor(out, TensorProto::FLOAT, {}, &v, 4);
    } else if (a.name() == "value_floats") {
      std::vector<float> v(a.floats().begin(), a.floats().end());
      t = make_tensor(out, TensorProto::FLOAT, {static_cast<int64_t>(v.size())}, v.data(), v.size() * 4);
    } else if (a.name() == "value_int") {
      const int64_t v = a.i();
      t = make_tensor(out, TensorProto::INT64, {}, &v, 8);
    } else if (a.name() == "value_ints") {
      std::vector<int64_t> v(a.ints().begin(), a.ints().end());
      t = make_tensor(out, TensorProto::INT64, {static_cast<int64_t>(v.size())}, v.data(), v.size() * 8);
    } else {
      continue;  // sparse and string constants stay nodes
    }
    t.set_name(out);
    *g.add_initializer() = std::move(t);
    dead[i] = 1;
    ++count;
  }
  erase_nodes(g, dead);
  return count;
}

int remove_identities(GraphProto& g) {
  std::set<std::string> outputs;
  for (const auto& o : g.output()) outputs.insert(o.name());
  std::vector<char> dead(g.node_size(), 0);
  int count = 0;
  for (int i = 0; i < g.node_size(); ++i) {
    const NodeProto& n = g.node(i);
    if (!default_domain(n) || n.op_type() != "Identity" || n.input_size() != 1 || n.output_size() != 1) continue;
    if (outputs.count(n.output(0)) || n.input(0).empty()) continue;
    const std::string from = n.output(0), to = n.input(0);
    dead[i] = 1;
    rename_uses(g, from, to);
    ++count;
  }
  erase_nodes(g, dead);
  return count;
}

int fold_batchnorms(GraphProto& g) {
  Index idx(g);
  Names names(g);
  std::vector<char> dead(g.node_size(), 0);
  int count = 0;
  for (int b = 0; b < g.node_size(); ++b) {
    const NodeProto& bn = g.node(b);
    if (!default_domain(bn) || bn.op_type() != "BatchNormalization" || bn.input_size() != 5) continue;
    bool extra_outputs = false;
    for (int o = 1; o < bn.output_size(); ++o) extra_outputs = extra_outputs || !bn.output(o).empty();
    if (extra_outputs || attr_int(bn, "training_mode", 0) != 0 || attr_int(bn, "spatial", 1) != 1) continue;
    const int c = idx.producer_of(bn.input(0));
    if (c < 0 || dead[c]) continue;
    NodeProto& conv = *g.mutable_node(c);
    if (!default_domain(conv) || conv.op_type() != "Conv" || conv.output_size() != 1 || conv.input_size() < 2) continue;
    if (!idx.only_reader(bn.input(0), b)) continue;
    const TensorProto* w = idx.init(g, conv.input(1));
    std::vector<float> wv, scale, beta, mean, var, bias;
    if (!w || !tensor_floats(*w, &wv) || w->dims_size() < 3) continue;
    const int64_t m = w->dims(0);
    bool ok = true;
    std::vector<float>* params[4] = {&scale, &beta, &mean, &var};
    for (int k = 0; k < 4 && ok; ++k) {
      const TensorProto* t = idx.init(g, bn.input(1 + k));
      ok = t && tensor_floats(*t, params[k]) && static_cast<int64_t>(params[k]->size()) == m;
    }
    if (!ok) continue;
    const bool has_bias = conv.input_size() > 2 && !conv.input(2).empty();
    if (has_bias) {
      const TensorProto* t = idx.init(g, conv.input(2));
      if (!t || !tensor_floats(*t, &bias) || static_cast<int64_t>(bias.size()) != m) continue;
    } else {
      bias.assign(static_cast<size_t>(m), 0.f);
    }
    const double eps = attr_float(bn, "epsilon", 1e-5f);
    const size_t inner = wv.size() / static_cast<size_t>(m);
    std::vector<float> new_w(wv.size()), new_b(static_cast<size_t>(m));
    for (int64_t ch = 0; ch < m; ++ch) {
      const double s = static_cast<double>(scale[ch]) / std::sqrt(static_cast<double>(var[ch]) + eps);
      for (size_t i = 0; i < inner; ++i)
        new_w[ch * inner + i] = static_cast<float>(static_cast<double>(wv[ch * inner + i]) * s);
      new_b[ch] = static_cast<float>((static_cast<double>(bias[ch]) - mean[ch]) * s + beta[ch]);
    }
    const std::string base = conv.name().empty() ? conv.input(1) : conv.name();
    const std::string wname = names.fresh(base + "_weight_bn_folded");
    const std::string bname = names.fresh(base + "_bias_bn_folded");
    std::vector<int64_t> dims(w->dims().begin(), w->dims().end());
    *g.add_initializer() = make_tensor(wname, TensorProto::FLOAT, dims, new_w.data(), new_w.size() * 4);
    *g.add_initializer() = make_tensor(bname, TensorProto::FLOAT, {m}, new_b.data(), new_b.size() * 4);
    conv.set_input(1, wname);
    if (has_bias) conv.set_input(2, bname);
    else conv.add_input(bname);
    conv.set_output(0, bn.output(0));
    dead[b] = 1;
    ++count;
  }
  erase_nodes(g, dead);
  return count;
}

}  // namespace

onnx::ModelProto read_onnx_model(const std::string& path, int64_t max_bytes) {
  const auto ends_with = [&](const char* suffix) {
    const size_t n = std::strlen(suffix);
    return path.size() >= n && path.compare(path.size() - n, n, suffix) == 0;
  };
  std::ifstream f(path, std::ios::binary);
  if (!f) throw Error("cannot open model '" + path + "'");
  std::ostringstream ss;
  ss << f.rdbuf();
  const std::string bytes = ss.str();
  const bool ncnn_magic = bytes.compare(0, 7, "7767517") == 0;
  if (ends_with(".param") || ncnn_magic)
    throw Error("'" + path + "' is an ncnn model; ninegrid quantize reads ONNX models only for now (export the "
                "float model to ONNX and quantise that)");
  if (max_bytes > 0 && static_cast<int64_t>(bytes.size()) > max_bytes)
    throw Error("model '" + path + "' is " + std::to_string(bytes.size() >> 20) + " MiB, more than the limit of " +
                std::to_string(max_bytes >> 20) + " MiB (Options::max_file_bytes)");
  if (bytes.empty()) throw Error("model '" + path + "' is empty");
  ModelProto m;
  if (bytes.size() > static_cast<size_t>(std::numeric_limits<int>::max()) ||
      !m.ParseFromArray(bytes.data(), static_cast<int>(bytes.size())) || !m.has_graph())
    throw Error("'" + path + "' is not a valid ONNX model");
  for (const auto& t : m.graph().initializer())
    if (t.data_location() == TensorProto::EXTERNAL)
      throw Error("initializer '" + t.name() + "' of '" + path +
                  "' keeps its data in an external file, which ninegrid quantize does not read");
  static const std::set<std::string> quantized_ops = {"QuantizeLinear", "DequantizeLinear", "QLinearConv",
                                                      "QLinearMatMul",  "ConvInteger",      "MatMulInteger",
                                                      "QLinearAdd",     "DynamicQuantizeLinear"};
  for (const auto& n : m.graph().node())
    if (quantized_ops.count(n.op_type()))
      throw Error("'" + path + "' is already quantised (" + quoted_node(n) + "); ninegrid quantize takes a float model");
  return m;
}

std::string serialize_model(const onnx::ModelProto& model) {
  std::string bytes;
  if (!model.SerializeToString(&bytes)) throw Error("cannot serialise the ONNX model (larger than 2 GB?)");
  return bytes;
}

PrepareNotes prepare_model(onnx::ModelProto& model) {
  PrepareNotes notes;
  GraphProto& g = *model.mutable_graph();
  notes.constants = constants_to_initializers(g);
  notes.identities = remove_identities(g);
  notes.batchnorms = fold_batchnorms(g);
  raise_opset(model, notes);
  remove_unused(g);
  return notes;
}

std::vector<std::string> graph_inputs(const onnx::ModelProto& model) {
  Index idx(model.graph());
  std::vector<std::string> names;
  for (const auto& in : model.graph().input())
    if (idx.inputs.count(in.name())) names.push_back(in.name());
  return names;
}
void add_graph_outputs(onnx::ModelProto& model, const std::vector<std::string>& names) {
  GraphProto& g = *model.mutable_graph();
  std::set<std::string> skip;
  for (const auto& o : g.output()) skip.insert(o.name());
  for (const auto& i : g.input()) skip.insert(i.name());
  for (const std::string& name : names) {
    if (!skip.insert(name).second) continue;
    g.add_output()->set_name(name);  // untyped: the reader infers it
  }
}

std::vector<std::string> node_outputs(const onnx::ModelProto& model) {
  std::vector<std::string> names;
  for (const auto& n : model.graph().node())
    for (const auto& o : n.output())
      if (!o.empty()) names.push_back(o);
  return names;
}
}  // namespace ninegrid::quant
