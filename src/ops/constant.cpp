// Constant: its one output is the tensor given by whichever value* attribute it carries. The importer
// usually folds these into constant values; the op exists for graphs built otherwise (and it folds at
// plan time anyway, having no inputs).
#include <cstring>

#include "ops/data_movement.h"

namespace ninegrid {
namespace {

class Constant final : public Op {
 public:
  explicit Constant(const Node& node) : Op(node) {
    const Attributes& a = node.attrs;
    int given = 0;
    for (const char* name : {"value", "value_float", "value_floats", "value_int", "value_ints", "value_string",
                             "value_strings", "sparse_value"})
      given += a.has(name) ? 1 : 0;
    if (given != 1) error("needs exactly one value attribute, has " + std::to_string(given));
    if (a.has("value")) {
      value_ = a.get_tensor("value");
      if (dtype_size(value_.dtype()) == 0)
        error(std::string("a value of type ") + dtype_name(value_.dtype()) + " is unsupported");
    } else if (a.has("value_float")) {
      value_ = Tensor::from_vector<float>(DataType::Float32, {}, {a.get_float("value_float", 0.f)});
    } else if (a.has("value_floats")) {
      std::vector<float> v = a.get_floats("value_floats");
      value_ = Tensor::from_vector<float>(DataType::Float32, {static_cast<int64_t>(v.size())}, v);
    } else if (a.has("value_int")) {
      value_ = Tensor::from_vector<int64_t>(DataType::Int64, {}, {a.get_int("value_int", 0)});
    } else if (a.has("value_ints")) {
      std::vector<int64_t> v = a.get_ints("value_ints");
      value_ = Tensor::from_vector<int64_t>(DataType::Int64, {static_cast<int64_t>(v.size())}, v);
    } else if (a.has("sparse_value")) {
      error("a sparse_value is unsupported");
    } else {
      error("string constants are unsupported");
    }
  }

  void infer(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& out) override {
    expect_inputs(in, 0, 0);
    out[0].dtype = value_.dtype();
    out[0].shape = value_.shape();
  }

  void run(OpContext& ctx) override {
    if (value_.nbytes()) std::memcpy(ctx.output(0).data(), value_.data(), value_.nbytes());
  }

 private:
  Tensor value_;
};

NINEGRID_REGISTER_OP("Constant", Constant);

}  // namespace
}  // namespace ninegrid
