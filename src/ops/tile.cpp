// Tile: repeats the input repeats[d] times along each dimension d (repeats known at plan time). The
// output, seen as [r0, d0, r1, d1, ...], is a strided copy of the input with stride 0 along every r.
#include "ops/data_movement.h"

namespace ninegrid {
namespace {

class Tile final : public Op {
 public:
  using Op::Op;

  void infer(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& out) override {
    expect_inputs(in, 2, 2);
    expect_sized(*this, in[0], "input");
    const std::vector<int64_t> repeats = known_ints(in, 1, "input 'repeats'");
    const Shape& shape = in[0].shape;
    if (repeats.size() != shape.size())
      error("'repeats' has " + std::to_string(repeats.size()) + " values but the input has rank " +
            std::to_string(shape.size()));
    Shape result(shape.size());
    for (size_t d = 0; d < shape.size(); ++d) {
      if (repeats[d] < 0) error("'repeats' must not be negative, got " + std::to_string(repeats[d]));
      result[d] = checked_mul(*this, shape[d], repeats[d], "the output dimension");
    }
    checked_numel(*this, result, "output shape");
    repeats_ = repeats;
    out[0].dtype = in[0].dtype;
    out[0].shape = result;
  }

  void run(OpContext& ctx) override {
    const Tensor& x = ctx.input(0);
    Tensor& y = ctx.output(0);
    const std::vector<int64_t> dense = dense_strides(x.shape());
    Shape view;
    std::vector<int64_t> strides;
    for (size_t d = 0; d < dense.size(); ++d) {
      view.push_back(repeats_[d]);
      strides.push_back(0);
      view.push_back(x.shape()[d]);
      strides.push_back(dense[d]);
    }
    parallel_copy_strided(ctx.pool, y.data(), x.data(), dtype_size(x.dtype()), view, strides);
  }

 private:
  std::vector<int64_t> repeats_;
};

NINEGRID_REGISTER_OP("Tile", Tile);

}  // namespace
}  // namespace ninegrid
