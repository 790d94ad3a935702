// ONNX ModelProto -> Graph. The protobuf parser does the byte-level work; this file checks what the
// schema cannot (opsets, domains, types, tensor sizes, graph structure) and maps the model onto the IR:
//   initializers and Constant nodes -> constant values, graph inputs -> graph.inputs (with declared type
//   and shape), nodes -> Nodes (old attribute forms moved into inputs, see legacy_forms.h),
//   graph outputs -> graph.outputs; QOperator nodes (QLinearConv, ONNX Runtime's com.microsoft QLinearAdd ...)
//   become their QDQ form (qoperator_forms.h). The result is topologically sorted.
#include "import/onnx/onnx_importer.h"

#include <climits>
#include <istream>
#include <set>

#include "import/onnx/legacy_forms.h"
#include "import/onnx/qoperator_forms.h"
#include "import/onnx/raw_data_split.h"
#include "import/onnx/tensor_proto.h"
#include "core/mapped_file.h"
#include "ninegrid_onnx/onnx.pb.h"
#include <google/protobuf/io/zero_copy_stream_impl.h>

namespace ninegrid {
namespace {

constexpr int kMaxOpset = 18;

bool is_default_domain(const std::string& domain) { return domain.empty() || domain == "ai.onnx"; }

// The default domain's opset. Models before IR version 3 had no opset_import and mean opset 1; later
// models that import none get 0, an error only if a node of the default domain appears (a model of
// only other domains, e.g. ai.onnx.preview.training, should fail on its operators instead).
int default_opset(const onnx::ModelProto& model) {
  const onnx::OperatorSetIdProto* found = nullptr;
  for (const auto& id : model.opset_import())
    if (is_default_domain(id.domain())) {
      if (found && found->version() != id.version())
        throw Error("model imports the default ONNX domain twice, as opset " + std::to_string(found->version()) +
                    " and " + std::to_string(id.version()));
      found = &id;
    }
  if (!found) return model.ir_version() >= 3 ? 0 : 1;
  const int64_t v = found->version();
  if (v < 1) throw Error("model imports invalid opset version " + std::to_string(v) + " of the default ONNX domain");
  if (v > kMaxOpset)
    throw Error("unsupported opset version " + std::to_string(v) + " of the default ONNX domain (supported: 1 to " +
                std::to_string(kMaxOpset) + ")");
  return static_cast<int>(v);
}

const char* value_case_name(const onnx::TypeProto& t) {
  switch (t.value_case()) {
    case onnx::TypeProto::kTensorType: return "tensor";
    case onnx::TypeProto::kSequenceType: return "sequence";
    case onnx::TypeProto::kMapType: return "map";
    case onnx::TypeProto::kOptionalType: return "optional";
    case onnx::TypeProto::kSparseTensorType: return "sparse tensor";
    default: return "undefined";
  }
}

// Copies a graph input's or output's declared element type and shape onto `v`. `role` is "input" or
// "output" for messages. A missing type leaves `v` unknown; a non-tensor type is an error.
void apply_value_info(const onnx::ValueInfoProto& info, const char* role, Value& v) {
  if (!info.has_type()) return;
  const onnx::TypeProto& type = info.type();
  if (type.value_case() == onnx::TypeProto::VALUE_NOT_SET) return;
  if (type.value_case() != onnx::TypeProto::kTensorType)
    throw Error(std::string("graph ") + role + " '" + info.name() + "' has unsupported type " +
                value_case_name(type) + " (only tensors are supported)");
  const onnx::TypeProto::Tensor& tt = type.tensor_type();
  const int elem = tt.elem_type();
  if (elem != 0) {
    const DataType dt = static_cast<DataType>(elem);
    const bool known = elem > 0 && elem <= static_cast<int>(DataType::BFloat16) && dtype_size(dt) != 0;
    if (!known)
      throw Error(std::string("graph ") + role + " '" + info.name() + "' has unsupported element type " +
                  std::to_string(elem) + (elem == 8 ? " (string)" : ""));
    v.dtype = dt;
  }
  if (tt.has_shape()) {
    v.shape.clear();
    v.dim_names.clear();
    bool named = false;
    for (const auto& d : tt.shape().dim()) {
      // A symbolic (dim_param) or absent dimension is dynamic; so is a negative one (some exporters write -1).
      const bool fixed = d.has_dim_value() && d.dim_value() >= 0;
      v.shape.push_back(fixed ? d.dim_value() : -1);
      v.dim_names.push_back(!fixed && d.has_dim_param() ? d.dim_param() : std::string());
      named = named || !v.dim_names.back().empty();
    }
    if (!named) v.dim_names.clear();
    v.shape_known = true;
  }
}

const char* attribute_type_name(int t) {
  switch (t) {
    case onnx::AttributeProto::GRAPH: return "graph";
    case onnx::AttributeProto::GRAPHS: return "graphs";
    case onnx::AttributeProto::SPARSE_TENSOR: return "sparse tensor";
    case onnx::AttributeProto::SPARSE_TENSORS: return "sparse tensors";
    case onnx::AttributeProto::TENSORS: return "tensors";
    case onnx::AttributeProto::TYPE_PROTO: return "type";
    case onnx::AttributeProto::TYPE_PROTOS: return "types";
    default: return "unknown";
  }
}

// The attribute's type; very old models leave it unset, so infer it from the field that is filled.
int attribute_type(const onnx::AttributeProto& a) {
  if (a.type() != onnx::AttributeProto::UNDEFINED) return a.type();
  if (a.has_f()) return onnx::AttributeProto::FLOAT;
  if (a.has_i()) return onnx::AttributeProto::INT;
  if (a.has_s()) return onnx::AttributeProto::STRING;
  if (a.has_t()) return onnx::AttributeProto::TENSOR;
  if (a.has_g()) return onnx::AttributeProto::GRAPH;
  if (a.floats_size()) return onnx::AttributeProto::FLOATS;
  if (a.ints_size()) return onnx::AttributeProto::INTS;
  if (a.strings_size()) return onnx::AttributeProto::STRINGS;
  if (a.graphs_size()) return onnx::AttributeProto::GRAPHS;
  return onnx::AttributeProto::UNDEFINED;
}

void convert_attributes(const onnx::NodeProto& np, Node& node) {
  for (const auto& a : np.attribute()) {
    const std::string& name = a.name();
    if (name.empty()) throw_node_error(node, "has an attribute without a name");
    if (node.attrs.has(name)) throw_node_error(node, "attribute '" + name + "' is given twice");
    if (!a.ref_attr_name().empty())
      throw_node_error(node, "attribute '" + name + "' refers to a function attribute, which is not supported");
    const int type = attribute_type(a);
    switch (type) {
      case onnx::AttributeProto::INT: node.attrs.set(name, Attribute::of_int(a.i())); break;
      case onnx::AttributeProto::FLOAT: node.attrs.set(name, Attribute::of_float(a.f())); break;
      case onnx::AttributeProto::STRING: node.attrs.set(name, Attribute::of_string(a.s())); break;
      case onnx::AttributeProto::INTS:
        node.attrs.set(name, Attribute::of_ints({a.ints().begin(), a.ints().end()}));
        break;
      case onnx::AttributeProto::FLOATS:
        node.attrs.set(name, Attribute::of_floats({a.floats().begin(), a.floats().end()}));
        break;
      case onnx::AttributeProto::STRINGS:
        node.attrs.set(name, Attribute::of_strings({a.strings().begin(), a.strings().end()}));
        break;
      case onnx::AttributeProto::TENSOR:
        try {
          node.attrs.set(name, Attribute::of_tensor(tensor_from_proto(a.t(), "attribute '" + name + "'")));
        } catch (const Error& e) {
          throw_node_error(node, e.what());
        }
        break;
      case onnx::AttributeProto::GRAPH:
      case onnx::AttributeProto::GRAPHS:
        throw_node_error(node, "attribute '" + name + "': subgraphs are not supported");
      case onnx::AttributeProto::UNDEFINED:
        throw_node_error(node, "attribute '" + name + "' has no value");
      default:
        throw_node_error(node, "attribute '" + name + "' of type " + attribute_type_name(type) + " is not supported");
    }
  }
}

// A Constant node's value as a tensor (value, value_float(s), value_int(s)); strings and sparse tensors
// are refused.
Tensor constant_node_value(const Node& node) {
  if (node.attrs.all().size() != 1)
    throw_node_error(node, "must have exactly one value attribute, has " + std::to_string(node.attrs.all().size()));
  const auto& kv = *node.attrs.all().begin();
  const std::string& name = kv.first;
  const Attribute& a = kv.second;
  using K = Attribute::Kind;
  if (name == "value" && a.kind == K::TensorValue) return a.t;
  if (name == "value_float" && a.kind == K::Float) return Tensor::from_vector(DataType::Float32, {}, std::vector<float>{a.f});
  if (name == "value_int" && a.kind == K::Int) return Tensor::from_vector(DataType::Int64, {}, std::vector<int64_t>{a.i});
  if (name == "value_floats" && a.kind == K::Floats)
    return Tensor::from_vector(DataType::Float32, {static_cast<int64_t>(a.floats.size())}, a.floats);
  if (name == "value_ints" && a.kind == K::Ints)
    return Tensor::from_vector(DataType::Int64, {static_cast<int64_t>(a.ints.size())}, a.ints);
  if (name == "value_string" || name == "value_strings")
    throw_node_error(node, "string constants are unsupported");
  throw_node_error(node, "attribute '" + name + "' is not a supported constant value");
}

void set_constant(Value& v, const Tensor& t) {
  v.constant = t;
  v.dtype = t.dtype();
  v.shape = t.shape();
  v.shape_known = true;
}

class Importer {
 public:
  // The model is consumed: each initializer's raw bytes are freed once decoded, so the proto and the
  // graph never both hold all the weights (ResNet-50's peak memory at load was their sum).
  // `raw`, when given, holds every initializer's raw_data, which the model's skeleton left out
  // (raw_data_split.h).
  // `mapped`: the file `raw` points into, whose pages are given back as they are decoded.
  Importer(onnx::ModelProto& model, const std::vector<RawBytes>* raw = nullptr, const MappedFile* mapped = nullptr)
      : model_(model), raw_(raw), mapped_(mapped), opset_(default_opset(model)) {}

  Graph run() {
    if (!model_.has_graph()) throw Error("model has no graph");
    onnx::GraphProto& g = *model_.mutable_graph();
    if (g.sparse_initializer_size() > 0) throw Error("sparse initializers are not supported");
    add_initializers(g);
    add_inputs(g);
    for (int i = 0; i < g.node_size(); ++i) add_node(g.node(i), i);
    add_outputs(g);
    graph_.topo_sort();
    return std::move(graph_);
  }

 private:
  int value_id(const std::string& name) {
    int id = graph_.find_value(name);
    return id >= 0 ? id : graph_.add_value(name);
  }

  void add_initializers(onnx::GraphProto& g) {
    if (raw_ && raw_->size() != static_cast<size_t>(g.initializer_size()))
      throw Error("the model's initializers could not be told apart (" + std::to_string(raw_->size()) + " against " +
                  std::to_string(g.initializer_size()) + ")");
    int index = 0;
    for (auto& init : *g.mutable_initializer()) {
      const std::string what = "initializer '" + init.name() + "'";
      if (init.name().empty()) throw Error("an initializer has no name");
      const RawBytes* raw = raw_ ? &(*raw_)[static_cast<size_t>(index++)] : nullptr;
      Tensor t = tensor_from_proto(init, what, raw);
      if (raw && mapped_) mapped_->discard(raw->data, raw->size);
      std::string().swap(*init.mutable_raw_data());  // frees the bytes (clear() would keep them)
      if (graph_.find_value(init.name()) >= 0) throw Error(what + " is defined twice");
      set_constant(graph_.values[graph_.add_value(init.name())], t);
    }
  }

  // Before IR version 4, initializers were also listed as inputs: those stay constants.
  void add_inputs(const onnx::GraphProto& g) {
    std::set<std::string> seen;
    for (const auto& in : g.input()) {
      if (in.name().empty()) throw Error("a graph input has no name");
      if (!seen.insert(in.name()).second) throw Error("graph input '" + in.name() + "' is listed twice");
      int id = graph_.find_value(in.name());
      if (id >= 0 && graph_.values[id].is_constant()) continue;
      id = graph_.add_value(in.name());
      apply_value_info(in, "input", graph_.values[id]);
      graph_.inputs.push_back(id);
    }
  }

  void add_node(const onnx::NodeProto& np, int index) {
    Node node;
    node.op_type = np.op_type();
    node.name = np.name().empty() ? np.op_type() + "_" + std::to_string(index) : np.name();
    node.opset = opset_;
    if (node.op_type.empty()) throw Error("node #" + std::to_string(index) + " ('" + node.name + "') has no op_type");
    const bool qoperator = is_qoperator(np.domain(), np.op_type());
    if (!is_default_domain(np.domain()) && !qoperator) {
      if (np.domain() == "com.microsoft")
        throw_node_error(node, "unsupported operator '" + np.op_type() + "' of domain 'com.microsoft' (of that domain, " +
                                   supported_microsoft_ops() + " are supported)");
      throw_node_error(node, "unsupported operator '" + np.op_type() + "' of domain '" + np.domain() +
                                 "' (only the default ONNX domain is supported)");
    }
    if (opset_ == 0) throw Error("model imports no opset of the default ONNX domain, but uses its operators");
    convert_attributes(np, node);

    if (node.op_type == "Constant") {
      if (np.output_size() != 1 || np.output(0).empty()) throw_node_error(node, "must have exactly one output");
      Tensor t = constant_node_value(node);
      int id = value_id(np.output(0));
      Value& v = graph_.values[id];
      if (v.is_constant()) throw_node_error(node, "output '" + v.name + "' is already a constant");
      for (int in : graph_.inputs)
        if (in == id) throw_node_error(node, "writes graph input '" + v.name + "'");
      set_constant(v, t);
      return;
    }

    for (const auto& name : np.input()) node.inputs.push_back(name.empty() ? -1 : value_id(name));
    for (const auto& name : np.output()) node.outputs.push_back(name.empty() ? -1 : value_id(name));
    // Every operator ninegrid runs has an output; the ops write their first one unchecked.
    if (node.outputs.empty()) throw_node_error(node, "has no outputs (its operator has at least one)");
    if (qoperator) {  // rewritten into DequantizeLinear -> float op -> QuantizeLinear (qoperator_forms.h)
      std::vector<Node> expanded;
      expand_qoperator(graph_, node, expanded);
      for (Node& n : expanded) graph_.nodes.push_back(std::move(n));
      return;
    }
    upgrade_legacy_form(graph_, node, opset_);
    graph_.nodes.push_back(std::move(node));
  }

  void add_outputs(const onnx::GraphProto& g) {
    std::set<std::string> seen;
    for (const auto& out : g.output()) {
      if (out.name().empty()) throw Error("a graph output has no name");
      if (!seen.insert(out.name()).second) throw Error("graph output '" + out.name() + "' is listed twice");
      int id = value_id(out.name());
      // Declared types describe what the nodes compute; inputs and constants already know theirs.
      Value probe;
      apply_value_info(out, "output", probe);
      Value& v = graph_.values[id];
      if (!v.is_constant() && v.dtype == DataType::Undefined) v.dtype = probe.dtype;
      if (!v.is_constant() && !v.shape_known && probe.shape_known) {
        v.shape = probe.shape;
        v.shape_known = true;
      }
      if (!v.is_constant() && probe.shape_known && (!v.shape_known || v.shape.size() == probe.shape.size()))
        v.dim_names = probe.dim_names;
      graph_.outputs.push_back(id);
    }
    if (graph_.outputs.empty()) throw Error("model has no outputs");
  }

  onnx::ModelProto& model_;
  const std::vector<RawBytes>* raw_;
  const MappedFile* mapped_;
  const int opset_;
  Graph graph_;
};

// Protobuf parses at most 2 GB; an empty file parses as an empty model, which would report a missing graph.
void check_model_size(uint64_t size) {
  if (size > static_cast<uint64_t>(INT_MAX)) throw Error("ONNX models larger than 2 GB are not supported");
  if (size == 0) throw Error("not a valid ONNX model: the file is empty");
}

const char* const kMalformed = "not a valid ONNX model: the protobuf encoding is malformed or truncated";

void parse_model(const void* data, size_t size, onnx::ModelProto& model) {
  check_model_size(size);
  if (!model.ParseFromArray(data, static_cast<int>(size))) throw Error(kMalformed);
}

// The skeleton parsed by protobuf, each initializer decoded from `data` once (raw_data_split.h); a model
// the split does not take is parsed whole.
Graph import_split(const void* data, size_t size, const MappedFile* mapped = nullptr) {
  check_model_size(size);
  SplitModel split;
  if (split_raw_data(static_cast<const uint8_t*>(data), size, &split)) {
    onnx::ModelProto model;
    if (model.ParseFromString(split.skeleton)) return Importer(model, &split.raw, mapped).run();
  }
  onnx::ModelProto model;
  parse_model(data, size, model);
  return Importer(model).run();
}

}  // namespace

Graph import_onnx(const void* data, size_t size) { return import_split(data, size); }

Graph import_onnx(const MappedFile& file) { return import_split(file.data(), file.size(), &file); }

Graph import_onnx_stream(std::istream& in, uint64_t size) {
  check_model_size(size);
  onnx::ModelProto model;
  {
    google::protobuf::io::IstreamInputStream stream(&in);
    const bool parsed = model.ParseFromZeroCopyStream(&stream);
    if (in.bad()) throw Error("cannot read the model file");
    if (!parsed) throw Error(kMalformed);
  }
  return Importer(model).run();
}

Graph import_onnx(std::string&& bytes) {
  Graph g = import_split(bytes.data(), bytes.size());
  std::string().swap(bytes);
  return g;
}

}  // namespace ninegrid
