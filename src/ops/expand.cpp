// Expand: broadcasts the input to the shape given by the second input (known at plan time), numpy-style
// in both directions: a shape entry of 1 keeps the input's dimension. A strided copy with stride 0 along
// every broadcast dimension.
#include "ops/data_movement.h"

namespace ninegrid {
namespace {

class Expand final : public Op {
 public:
  using Op::Op;

  void infer(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& out) override {
    expect_inputs(in, 2, 2);
    expect_sized(*this, in[0], "input");
    const std::vector<int64_t> target = known_ints(in, 1, "input 'shape'");
    const Shape& shape = in[0].shape;
    const size_t rank = std::max(shape.size(), target.size());
    Shape result(rank);
    for (size_t i = 0; i < rank; ++i) {
      // Align from the right; missing leading dimensions count as 1.
      const int64_t a = i + shape.size() >= rank ? shape[i + shape.size() - rank] : 1;
      const int64_t b = i + target.size() >= rank ? target[i + target.size() - rank] : 1;
      if (b < 0) error("the target shape has a negative dimension: " + shape_str(target));
      if (a != b && a != 1 && b != 1)
        error("cannot expand shape " + shape_str(shape) + " to " + shape_str(target) + ": dimension " +
              std::to_string(a) + " vs " + std::to_string(b));
      result[i] = a == 1 ? b : a;
    }
    checked_numel(*this, result, "output shape");
    out[0].dtype = in[0].dtype;
    out[0].shape = result;
  }

  void run(OpContext& ctx) override {
    const Tensor& x = ctx.input(0);
    Tensor& y = ctx.output(0);
    const std::vector<int64_t> dense = dense_strides(x.shape());
    const size_t rank = y.shape().size(), lead = rank - x.shape().size();
    std::vector<int64_t> strides(rank, 0);  // broadcast dimensions repeat the same element: stride 0
    for (size_t d = lead; d < rank; ++d)
      if (x.shape()[d - lead] != 1) strides[d] = dense[d - lead];
    parallel_copy_strided(ctx.pool, y.data(), x.data(), dtype_size(x.dtype()), y.shape(), strides);
  }
};

NINEGRID_REGISTER_OP("Expand", Expand);

}  // namespace
}  // namespace ninegrid
