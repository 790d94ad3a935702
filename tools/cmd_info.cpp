// ninegrid info: describe a model: format, inputs, outputs, operator counts, parameters, and per-layer
// output shapes and multiply-accumulates (from each Op's macs() after planning a session).
//
// The description is gathered into a ModelSummary first and then printed as text or JSON, so new views
// (the optimised graph, DOT output) add fields to the summary and lines to the printers.
#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <map>
#include <set>

#include "cli_common.h"
#include "commands.h"
#include "json_writer.h"

namespace ninegrid::cli {

namespace {

struct LayerInfo {
  std::string name;
  std::string op;
  std::vector<Shape> output_shapes;
  int64_t macs = 0;
  std::vector<std::string> fused;  // moved into the op's epilogue by the optimiser: "Add" (residual), "Relu" ...
  std::string layout;              // storage of output 0: "NCHW", "NCHW16c", ...
  std::string algorithm;           // the op's chosen kernel ("ref": the reference kernels)
  bool tuned = false;              // its plan came from the tuning cache
  std::string precision;           // "fp32", "int8" ...
};

struct ModelSummary {
  std::string path;
  std::string format;
  int opt_level = 0;
  std::vector<ValueInfo> inputs;      // as declared (-1 = dynamic)
  std::vector<Shape> planned_inputs;  // the shapes the layer table was planned for (empty if none)
  std::vector<ValueInfo> outputs;     // planned shapes when known
  std::map<std::string, int> op_counts;
  // Layers computing with int8 weights (read directly, as ng.QConv does, or through a DequantizeLinear, as
  // a QDQ model or an ncnn int8 layer before fusion does), by op type.
  std::map<std::string, int> int8_weight_layers;
  int nodes = 0;
  int64_t parameters = 0;
  int64_t parameter_bytes = 0;
  bool planned = false;
  std::string not_planned_reason;
  std::vector<LayerInfo> layers;  // executed steps; nodes folded at plan time are not listed
  int64_t macs = 0;
  int layout_transforms = 0;  // ng.Reorder nodes the layout pass inserted
};

bool is_float_type(DataType t) {
  return t == DataType::Float32 || t == DataType::Float16 || t == DataType::BFloat16 || t == DataType::Float64;
}

// Weights stored as numbers: float, or the integer types of quantised models (int8/uint8 weights, int32
// biases). Not int64 (shapes, axes) or bool.
bool is_parameter_type(DataType t) {
  return is_float_type(t) || t == DataType::Int8 || t == DataType::UInt8 || t == DataType::Int32;
}

// Whether value v is an int8 constant, or DequantizeLinear's output of one (producers: value -> node).
bool int8_weights(const ModelDescription& g, const std::vector<int>& producer, int v) {
  if (v < 0) return false;
  const GraphValueInfo& val = g.values[v];
  if (val.constant) return val.dtype == DataType::Int8 && val.elements > 1;
  const int p = producer[v];
  if (p < 0 || g.nodes[p].op_type != "DequantizeLinear" || g.nodes[p].inputs.empty()) return false;
  const int q = g.nodes[p].inputs[0];
  return q >= 0 && g.values[q].constant && g.values[q].dtype == DataType::Int8 && g.values[q].elements > 1;
}

ModelSummary summarize(const std::string& path, const LoadedModel& loaded) {
  ModelSummary s;
  const ModelDescription g = loaded.model->describe();
  s.path = path;
  s.format = g.format;
  s.opt_level = g.opt_level;
  s.inputs = loaded.declared_inputs;
  s.outputs = loaded.model->outputs();
  s.nodes = static_cast<int>(g.nodes.size());
  std::vector<int> producer(g.values.size(), -1);
  for (size_t i = 0; i < g.nodes.size(); ++i)
    for (int o : g.nodes[i].outputs)
      if (o >= 0) producer[o] = static_cast<int>(i);
  for (const GraphNodeInfo& n : g.nodes) {
    ++s.op_counts[n.op_type];
    if (n.op_type == "ng.Reorder") ++s.layout_transforms;
    if (n.op_type == "DequantizeLinear") continue;
    for (int v : n.inputs)
      if (int8_weights(g, producer, v)) {
        ++s.int8_weight_layers[n.op_type];
        break;
      }
  }

  // Parameters: the float constants that nodes read (weights and biases), each counted once.
  std::set<int> params;
  for (const GraphNodeInfo& n : g.nodes)
    for (int v : n.inputs)
      if (v >= 0 && g.values[v].constant && is_parameter_type(g.values[v].dtype)) params.insert(v);
  for (int v : params) {
    s.parameters += g.values[v].elements;
    s.parameter_bytes += g.values[v].elements * static_cast<int64_t>(dtype_size(g.values[v].dtype));
  }

  if (!loaded.session) {
    s.not_planned_reason = loaded.unresolved;
    return s;
  }
  s.planned = true;
  s.planned_inputs = loaded.input_shapes;
  for (const StepProfile& st : loaded.session->profile()) {
    LayerInfo l;
    l.name = st.name;
    l.op = st.op_type;
    l.output_shapes = st.output_shapes;
    l.macs = st.macs;
    l.fused = st.fused;
    l.layout = st.layout;
    l.algorithm = st.algorithm;
    l.tuned = st.tuned;
    l.precision = st.precision;
    s.macs += l.macs;
    s.layers.push_back(std::move(l));
  }
  return s;
}

// 1234567 -> "1,234,567"
std::string grouped(int64_t n) {
  std::string digits = std::to_string(n < 0 ? -n : n), out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return n < 0 ? "-" + out : out;
}

// Long node names (TensorFlow exports) keep their informative end: ".../depthwise_conv2d_2/depthwise".
constexpr size_t kMaxNameWidth = 48;
std::string shortened(const std::string& name, size_t width) {
  if (name.size() <= width) return name;
  return "..." + name.substr(name.size() - (width - 3));
}

std::string shapes_str(const std::vector<Shape>& shapes) {
  std::string out;
  for (const Shape& sh : shapes) out += (out.empty() ? "" : ", ") + shape_str(sh);
  return out;
}

void print_value_infos(const char* title, const std::vector<ValueInfo>& infos, const std::vector<Shape>* planned) {
  std::printf("%s:\n", title);
  for (size_t i = 0; i < infos.size(); ++i) {
    const ValueInfo& v = infos[i];
    std::printf("  %-24s %-8s %s", v.name.c_str(), dtype_name(v.dtype), shape_str(v.shape).c_str());
    if (planned && i < planned->size() && (*planned)[i] != v.shape)
      std::printf("  (planned as %s)", shape_str((*planned)[i]).c_str());
    std::printf("\n");
  }
}

void print_text(const ModelSummary& s) {
  std::printf("model:       %s\n", s.path.c_str());
  std::printf("format:      %s (graph at opt-level %d)\n", s.format.c_str(), s.opt_level);
  print_value_infos("inputs", s.inputs, s.planned ? &s.planned_inputs : nullptr);
  print_value_infos("outputs", s.outputs, nullptr);
  std::printf("operators:   %d nodes\n", s.nodes);
  for (const auto& kv : s.op_counts) std::printf("  %-24s %d\n", kv.first.c_str(), kv.second);
  std::printf("parameters:  %s (%.2f MiB)\n", grouped(s.parameters).c_str(),
              static_cast<double>(s.parameter_bytes) / (1024.0 * 1024.0));
  if (!s.int8_weight_layers.empty()) {
    int total = 0;
    std::string by_op;
    for (const auto& kv : s.int8_weight_layers) {
      total += kv.second;
      by_op += (by_op.empty() ? "" : ", ") + kv.first + " " + std::to_string(kv.second);
    }
    std::printf("int8 layers: %d with int8 weights (%s)\n", total, by_op.c_str());
  }
  if (!s.planned) {
    std::printf("layers:      not planned: %s\n", s.not_planned_reason.c_str());
    return;
  }
  std::printf("MACs:        %s (%.3f GMACs)\n\n", grouped(s.macs).c_str(), static_cast<double>(s.macs) * 1e-9);

  size_t name_w = 4, op_w = 2, shape_w = 12;
  for (const LayerInfo& l : s.layers) {
    name_w = std::max(name_w, l.name.size());
    op_w = std::max(op_w, l.op.size());
    shape_w = std::max(shape_w, shapes_str(l.output_shapes).size());
  }
  name_w = std::min<size_t>(name_w, kMaxNameWidth);
  std::printf("%5s  %-*s  %-*s  %-*s  %15s  %-9s  %-9s  %-16s  %s\n", "#", int(name_w), "name", int(op_w), "op",
              int(shape_w), "output shape", "MACs", "layout", "precision", "fused", "algorithm");
  for (size_t i = 0; i < s.layers.size(); ++i) {
    const LayerInfo& l = s.layers[i];
    std::string fused;
    for (const std::string& f : l.fused) fused += (fused.empty() ? "" : ",") + (f == "Add" ? "+residual" : f);
    std::printf("%5zu  %-*s  %-*s  %-*s  %15s  %-9s  %-9s  %-16s  %s\n", i, int(name_w),
                shortened(l.name, name_w).c_str(), int(op_w), l.op.c_str(), int(shape_w),
                shapes_str(l.output_shapes).c_str(), grouped(l.macs).c_str(), l.layout.c_str(), l.precision.c_str(),
                fused.c_str(), (l.algorithm + (l.tuned ? " (tuned)" : "")).c_str());
  }
  std::printf("\nlayout transforms: %d\n", s.layout_transforms);
}

void write_value_infos(JsonWriter& w, const std::vector<ValueInfo>& infos) {
  w.begin_array();
  for (const ValueInfo& v : infos) {
    w.begin_object();
    w.key("name").value(v.name);
    w.key("dtype").value(dtype_name(v.dtype));
    w.key("shape").int_array(v.shape);
    w.end_object();
  }
  w.end_array();
}

void print_json(const ModelSummary& s) {
  JsonWriter w;
  w.begin_object();
  w.key("model").value(s.path);
  w.key("format").value(s.format);
  w.key("opt_level").value(s.opt_level);
  w.key("inputs");
  write_value_infos(w, s.inputs);
  w.key("outputs");
  write_value_infos(w, s.outputs);
  w.key("nodes").value(s.nodes);
  w.key("ops").begin_object();
  for (const auto& kv : s.op_counts) w.key(kv.first).value(kv.second);
  w.end_object();
  w.key("layout_transforms").value(s.layout_transforms);
  w.key("int8_weight_layers").begin_object();
  for (const auto& kv : s.int8_weight_layers) w.key(kv.first).value(kv.second);
  w.end_object();
  w.key("parameters").value(s.parameters);
  w.key("parameter_bytes").value(s.parameter_bytes);
  if (s.planned) {
    w.key("planned_input_shapes").begin_array();
    for (const Shape& sh : s.planned_inputs) w.int_array(sh);
    w.end_array();
    w.key("macs").value(s.macs);
    w.key("gmacs").value(static_cast<double>(s.macs) * 1e-9);
  } else {
    w.key("macs").null();
    w.key("gmacs").null();
    w.key("not_planned").value(s.not_planned_reason);
  }
  w.key("layers").begin_array();
  for (const LayerInfo& l : s.layers) {
    w.begin_object();
    w.key("name").value(l.name);
    w.key("op").value(l.op);
    w.key("output_shapes").begin_array();
    for (const Shape& sh : l.output_shapes) w.int_array(sh);
    w.end_array();
    w.key("macs").value(l.macs);
    w.key("layout").value(l.layout);
    w.key("fused").begin_array();
    for (const std::string& f : l.fused) w.value(f);
    w.end_array();
    w.key("algorithm").value(l.algorithm);
    w.key("tuned").value(l.tuned);
    w.key("precision").value(l.precision);
    w.end_object();
  }
  w.end_array();
  w.end_object();
  std::printf("%s\n", w.str().c_str());
}

// The optimised graph in Graphviz DOT: one box per node (op, fused epilogue, output layout), edges
// labelled with the tensor's shape where known.
void write_dot(const std::string& path, const ModelDescription& g) {
  std::string out = "digraph ninegrid {\n  rankdir=TB;\n  node [shape=box, fontname=\"Helvetica\", fontsize=10];\n";
  auto esc = [](const std::string& t) {
    std::string r;
    for (char c : t) {
      if (c == '"' || c == '\\') r += '\\';
      r += c;
    }
    return r;
  };
  std::vector<int> producer(g.values.size(), -1);
  for (size_t n = 0; n < g.nodes.size(); ++n)
    for (int v : g.nodes[n].outputs)
      if (v >= 0) producer[v] = static_cast<int>(n);
  for (int v : g.inputs) out += "  v" + std::to_string(v) + " [shape=ellipse, label=\"" + esc(g.values[v].name) + "\"];\n";
  for (size_t n = 0; n < g.nodes.size(); ++n) {
    const GraphNodeInfo& node = g.nodes[n];
    std::string label = node.op_type;
    for (const std::string& f : node.fused) label += f == "Add" ? " +residual" : " +" + f;
    label += "\\n" + node.layout + "\\n" + esc(node.name);
    const char* color = node.op_type == "ng.Reorder" ? ", style=filled, fillcolor=\"#f4b6b6\"" :
                        node.op_type == "Conv" ? ", style=filled, fillcolor=\"#cfe2f3\"" : "";
    out += "  n" + std::to_string(n) + " [label=\"" + label + "\"" + color + "];\n";
  }
  auto source = [&](int v) { return producer[v] >= 0 ? "n" + std::to_string(producer[v]) : "v" + std::to_string(v); };
  for (size_t n = 0; n < g.nodes.size(); ++n)
    for (int v : g.nodes[n].inputs) {
      if (v < 0 || g.values[v].constant) continue;
      std::string lbl = g.values[v].shape_known ? shape_str(g.values[v].shape) : "";
      out += "  " + source(v) + " -> n" + std::to_string(n) + " [label=\"" + lbl + "\", fontsize=8];\n";
    }
  for (int v : g.outputs) {
    out += "  out" + std::to_string(v) + " [shape=ellipse, label=\"" + esc(g.values[v].name) + "\"];\n";
    out += "  " + source(v) + " -> out" + std::to_string(v) + ";\n";
  }
  out += "}\n";
  FILE* f = std::fopen(path.c_str(), "w");
  if (!f) throw Error("cannot write '" + path + "'");
  std::fwrite(out.data(), 1, out.size(), f);
  std::fclose(f);
}

}  // namespace

int cmd_info(int argc, char** argv) {
  ModelArgs margs;
  margs.opt_level = -1;  // the model as written (0), or optimised (2) with --optimized or --dot
  bool json = false, optimized = false;
  std::string dot_path;
  ArgParser p("info",
              "Describe a model: format, inputs, outputs, operator counts, parameters, and each layer's output\n"
              "shape and multiply-accumulates (MACs) for the given or default input shapes.");
  add_model_options(p, margs, ModelOptionSet{/*threads=*/false, /*opt_level=*/false});
  p.flag("--optimized", "describe the graph after optimisation (fused ops, layouts, layout transforms)", &optimized);
  p.option_int("--opt-level", "N", "graph to describe: 0 none, 1 fusion and folding, 2 also layout planning",
               &margs.opt_level, 0, 2, "0, or 2 with --optimized/--dot");
  p.option("--dot", "FILE", "write the optimised graph as Graphviz DOT to FILE", &dot_path);
  p.flag("--json", "print one JSON object (keys: format, inputs, outputs, ops, parameters, macs, layers, ...)",
         &json);
  int exit_code;
  if (!p.parse(argc, argv, &exit_code)) return exit_code;

  if (margs.opt_level < 0) margs.opt_level = (optimized || !dot_path.empty()) ? 2 : 0;
  margs.threads = 1;  // planning only; no worker threads needed
  std::vector<GivenInput> none;
  LoadedModel loaded = load_model(margs, none, /*require_shapes=*/false);
  ModelSummary summary = summarize(margs.model_path, loaded);
  if (!dot_path.empty()) write_dot(dot_path, loaded.model->describe());
  if (json)
    print_json(summary);
  else
    print_text(summary);
  return 0;
}

}  // namespace ninegrid::cli
