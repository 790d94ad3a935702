// Flatten: a 2-D view (product of the dimensions before `axis`, product of the rest) of the same bytes;
// the planner aliases the output to the input.
#include <cstring>

#include "ops/data_movement.h"

namespace ninegrid {
namespace {

class Flatten final : public Op {
 public:
  using Op::Op;

  void infer(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& out) override {
    expect_inputs(in, 1, 1);
    expect_sized(*this, in[0], "input");
    const Shape& shape = in[0].shape;
    const int64_t rank = static_cast<int64_t>(shape.size());
    int64_t axis = node_.attrs.get_int("axis", 1);
    if (axis < -rank || axis > rank)
      error("axis " + std::to_string(axis) + " is out of range [" + std::to_string(-rank) + ", " +
            std::to_string(rank) + "] for an input of shape " + shape_str(shape));
    if (axis < 0) axis += rank;
    const Shape before(shape.begin(), shape.begin() + axis), after(shape.begin() + axis, shape.end());
    out[0].dtype = in[0].dtype;
    out[0].shape = {checked_numel(*this, before, "input shape"), checked_numel(*this, after, "input shape")};
  }

  void run(OpContext& ctx) override {
    const Tensor& x = ctx.input(0);
    Tensor& y = ctx.output(0);
    if (y.data() != x.data() && x.nbytes()) std::memcpy(y.data(), x.data(), x.nbytes());
  }

  int aliases_input(int out_index) const override { return out_index == 0 ? 0 : -1; }
};

NINEGRID_REGISTER_OP("Flatten", Flatten);

}  // namespace
}  // namespace ninegrid
