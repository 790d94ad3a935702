// ConstantOfShape: a tensor of the shape given by the int64 input (known at plan time), every element the
// single value of the 'value' attribute (float32 0 when absent).
#include <cstring>

#include "ops/data_movement.h"

namespace ninegrid {
namespace {

class ConstantOfShape final : public Op {
 public:
  explicit ConstantOfShape(const Node& node) : Op(node) {
    if (node.attrs.has("value")) {
      fill_ = node.attrs.get_tensor("value");
      if (fill_.numel() != 1) error("'value' must hold one element, it has " + std::to_string(fill_.numel()));
      if (dtype_size(fill_.dtype()) == 0)
        error(std::string("a value of type ") + dtype_name(fill_.dtype()) + " is unsupported");
    } else {
      fill_ = Tensor::zeros(DataType::Float32, {1});
    }
  }

  void infer(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& out) override {
    expect_inputs(in, 1, 1);
    if (in[0].shape.size() != 1) error("the shape input must be 1-D, got shape " + shape_str(in[0].shape));
    Shape shape = known_ints(in, 0, "the shape input");
    for (int64_t d : shape)
      if (d < 0) error("the requested shape " + shape_str(shape) + " has a negative dimension");
    checked_numel(*this, shape, "the requested shape");
    out[0].dtype = fill_.dtype();
    out[0].shape = shape;
  }

  void run(OpContext& ctx) override {
    Tensor& y = ctx.output(0);
    const size_t elem = dtype_size(y.dtype());
    uint8_t* p = static_cast<uint8_t*>(y.data());
    for (int64_t i = 0; i < y.numel(); ++i) std::memcpy(p + static_cast<size_t>(i) * elem, fill_.data(), elem);
  }

 private:
  Tensor fill_;
};

NINEGRID_REGISTER_OP("ConstantOfShape", ConstantOfShape);

}  // namespace
}  // namespace ninegrid
