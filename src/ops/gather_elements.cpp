// GatherElements: out[p] = data[p with its axis coordinate replaced by indices[p]]; the output has the
// indices' shape, and along every other axis the indices may not reach beyond the data.
#include "kernels/ref/gather.h"
#include "ops/data_movement.h"

namespace ninegrid {
namespace {

class GatherElements final : public Op {
 public:
  using Op::Op;

  void infer(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& out) override {
    expect_inputs(in, 2, 2);
    expect_sized(*this, in[0], "data");
    if (in[1].dtype != DataType::Int64 && in[1].dtype != DataType::Int32)
      error(std::string("indices must be int64 or int32, got ") + dtype_name(in[1].dtype));
    const Shape& data = in[0].shape;
    const Shape& indices = in[1].shape;
    const int rank = static_cast<int>(data.size());
    if (rank == 0) error("cannot gather from a scalar");
    if (indices.size() != data.size())
      error("indices (" + shape_str(indices) + ") must have the rank of data (" + shape_str(data) + ")");
    axis_ = normalize_axis(node_.attrs.get_int("axis", 0), rank);
    for (int d = 0; d < rank; ++d)
      if (d != axis_ && indices[d] > data[d])
        error("indices (" + shape_str(indices) + ") exceed data (" + shape_str(data) + ") along axis " +
              std::to_string(d));
    if (in[1].value) checked_indices(*this, *in[1].value, data[axis_]);
    out[0].dtype = in[0].dtype;
    out[0].shape = indices;
  }

  void run(OpContext& ctx) override {
    const Tensor& x = ctx.input(0);
    Tensor& y = ctx.output(0);
    const std::vector<int64_t> idx = checked_indices(*this, ctx.input(1), x.dim(axis_));
    ref::gather_elements(y.data(), x.data(), dtype_size(x.dtype()), x.rank(), y.shape().data(), x.shape().data(),
                         axis_, idx.data());
  }

 private:
  int axis_ = 0;
};

NINEGRID_REGISTER_OP("GatherElements", GatherElements);

}  // namespace
}  // namespace ninegrid
