#include "runtime/describe.h"

#include "ir/fused_conv.h"
#include "runtime/model_impl.h"

namespace ninegrid {

std::vector<std::string> fused_ops(const Node& node) {
  std::vector<std::string> f;
  if ((node.op_type == "Conv" || node.op_type == "ng.QConv") && fused::has_residual(node))
    f.push_back(node.attrs.has("add_y_scale") ? "QAdd" : "Add");
  const std::string act = node.attrs.get_string(fused::kActivation, "");
  if (!act.empty()) f.push_back(act);
  if (node.attrs.has(fused::kAffineAfter)) f.push_back("Mul+Add");
  if (node.attrs.has(fused::kAddOperand)) f.push_back("Add");
  return f;
}

std::string output_layout(const Node& node) {
  const int64_t block =
      node.op_type == "ng.Reorder" ? node.attrs.get_int("to_block", 1) : node.attrs.get_int(fused::kOutBlock, 1);
  return block > 1 ? "NCHW" + std::to_string(block) + "c" : "NCHW";
}

std::string precision_name(DataType dtype) {
  switch (dtype) {
    case DataType::Float32: return "fp32";
    case DataType::Float16: return "fp16";
    case DataType::BFloat16: return "bf16";
    case DataType::Int8:
    case DataType::UInt8: return "int8";
    default: return dtype_name(dtype);
  }
}

ModelDescription Model::describe() const {
  const Graph& g = impl_->graph();
  ModelDescription d;
  d.format = impl_->format();
  d.opt_level = impl_->options().opt_level;
  d.isa = isa();
  d.values.reserve(g.values.size());
  for (const Value& v : g.values) {
    GraphValueInfo info;
    info.name = v.name;
    info.dtype = v.dtype;
    info.shape_known = v.shape_known;
    if (v.shape_known) info.shape = v.shape;
    info.constant = v.is_constant();
    if (info.constant) info.elements = v.constant_released ? shape_numel(v.shape) : v.constant.numel();
    d.values.push_back(std::move(info));
  }
  for (const Node& n : g.nodes) {
    GraphNodeInfo info;
    info.name = n.name;
    info.op_type = n.op_type;
    info.inputs = n.inputs;
    info.outputs = n.outputs;
    info.fused = fused_ops(n);
    info.layout = output_layout(n);
    d.nodes.push_back(std::move(info));
  }
  d.inputs = g.inputs;
  d.outputs = g.outputs;
  return d;
}

}  // namespace ninegrid
