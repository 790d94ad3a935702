// Gather: picks entries along one axis by an int32/int64 index tensor (negative indices count from the
// end). Output shape = data.shape[:axis] + indices.shape + data.shape[axis+1:].
#include "kernels/ref/gather.h"
#include "ops/data_movement.h"

namespace ninegrid {
namespace {

class Gather final : public Op {
 public:
  using Op::Op;

  void infer(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& out) override {
    expect_inputs(in, 2, 2);
    expect_sized(*this, in[0], "data");
    if (in[1].dtype != DataType::Int64 && in[1].dtype != DataType::Int32)
      error(std::string("indices must be int64 or int32, got ") + dtype_name(in[1].dtype));
    const Shape& data = in[0].shape;
    const int rank = static_cast<int>(data.size());
    if (rank == 0) error("cannot gather from a scalar");
    axis_ = normalize_axis(node_.attrs.get_int("axis", 0), rank);
    Shape shape(data.begin(), data.begin() + axis_);
    shape.insert(shape.end(), in[1].shape.begin(), in[1].shape.end());
    shape.insert(shape.end(), data.begin() + axis_ + 1, data.end());
    checked_numel(*this, shape, "output shape");
    // Indices known at plan time are checked now, so a bad constant index fails at load, not at run.
    if (in[1].value) checked_indices(*this, *in[1].value, data[axis_]);
    out[0].dtype = in[0].dtype;
    out[0].shape = shape;
  }

  void run(OpContext& ctx) override {
    const Tensor& x = ctx.input(0);
    Tensor& y = ctx.output(0);
    const int64_t dim = x.dim(axis_);
    const std::vector<int64_t> idx = checked_indices(*this, ctx.input(1), dim);
    if (y.numel() == 0) return;
    int64_t outer = 1, inner = 1;
    for (int d = 0; d < axis_; ++d) outer *= x.dim(d);
    for (int d = axis_ + 1; d < x.rank(); ++d) inner *= x.dim(d);
    ref::gather_rows(y.data(), x.data(), outer, dim, static_cast<size_t>(inner) * dtype_size(x.dtype()), idx.data(),
                     static_cast<int64_t>(idx.size()));
  }

 private:
  int axis_ = 0;
};

NINEGRID_REGISTER_OP("Gather", Gather);

}  // namespace
}  // namespace ninegrid
