// The table of attribute -> input moves between ONNX opsets. Each row: an operator, the first opset in
// which the attribute became an input, and where each attribute goes.
#include "import/onnx/legacy_forms.h"

#include <cstring>

namespace ninegrid {
namespace {

enum class ConstForm { Int64List, FloatList, FloatScalar };

struct AttrToInput {
  const char* attr;      // nullptr ends the list
  const char* alt_attr;  // an older spelling of the same attribute, or nullptr
  int input;             // the input position in the newest form
  ConstForm form;
};

struct LegacyForm {
  const char* op_type;
  int input_since;  // opsets below this carry the attributes
  AttrToInput moves[4];
};

const LegacyForm kLegacyForms[] = {
    {"Slice", 10, {{"starts", nullptr, 1, ConstForm::Int64List}, {"ends", nullptr, 2, ConstForm::Int64List},
                   {"axes", nullptr, 3, ConstForm::Int64List}, {}}},
    {"Split", 13, {{"split", nullptr, 1, ConstForm::Int64List}, {}}},
    {"Squeeze", 13, {{"axes", nullptr, 1, ConstForm::Int64List}, {}}},
    {"Unsqueeze", 13, {{"axes", nullptr, 1, ConstForm::Int64List}, {}}},
    // Pad-1 called the pads "paddings".
    {"Pad", 11, {{"pads", "paddings", 1, ConstForm::Int64List}, {"value", nullptr, 2, ConstForm::FloatScalar}, {}}},
    {"Clip", 11, {{"min", nullptr, 1, ConstForm::FloatScalar}, {"max", nullptr, 2, ConstForm::FloatScalar}, {}}},
    {"Upsample", 9, {{"scales", nullptr, 1, ConstForm::FloatList}, {}}},
};

Tensor attribute_as_tensor(const Node& node, const std::string& name, ConstForm form) {
  try {
    switch (form) {
      case ConstForm::Int64List: {
        std::vector<int64_t> v = node.attrs.get_ints(name);
        return Tensor::from_vector(DataType::Int64, {static_cast<int64_t>(v.size())}, v);
      }
      case ConstForm::FloatList: {
        std::vector<float> v = node.attrs.get_floats(name);
        return Tensor::from_vector(DataType::Float32, {static_cast<int64_t>(v.size())}, v);
      }
      case ConstForm::FloatScalar:
        return Tensor::from_vector(DataType::Float32, {}, std::vector<float>{node.attrs.get_float(name, 0.f)});
    }
  } catch (const Error& e) {
    throw_node_error(node, e.what());
  }
  throw_node_error(node, "internal: unknown constant form");
}

}  // namespace

int add_constant_value(Graph& graph, const std::string& base_name, const Tensor& value) {
  int id = graph.add_value(graph.unique_value_name(base_name));
  Value& v = graph.values[id];
  v.constant = value;
  v.dtype = value.dtype();
  v.shape = value.shape();
  v.shape_known = true;
  return id;
}

void upgrade_legacy_form(Graph& graph, Node& node, int opset) {
  for (const LegacyForm& form : kLegacyForms) {
    if (node.op_type != form.op_type || opset >= form.input_since) continue;
    for (const AttrToInput* m = form.moves; m->attr; ++m) {
      const char* name = node.attrs.has(m->attr) ? m->attr
                         : (m->alt_attr && node.attrs.has(m->alt_attr)) ? m->alt_attr
                                                                        : nullptr;
      if (!name) continue;
      if (static_cast<int>(node.inputs.size()) > m->input && node.inputs[m->input] >= 0)
        throw_node_error(node, "has both attribute '" + std::string(name) + "' and input #" +
                                   std::to_string(m->input) + " for the same operand");
      Tensor value = attribute_as_tensor(node, name, m->form);
      if (static_cast<int>(node.inputs.size()) <= m->input) node.inputs.resize(m->input + 1, -1);
      node.inputs[m->input] = add_constant_value(graph, node.name + "_" + m->attr, value);
      node.attrs.erase(name);
    }
    return;
  }
}

}  // namespace ninegrid
