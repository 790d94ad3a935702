// Transpose: permutes the dimensions (perm; by default reversed). A strided copy whose source strides
// are the input's strides taken in `perm` order.
#include "ops/data_movement.h"

namespace ninegrid {
namespace {

class Transpose final : public Op {
 public:
  using Op::Op;

  void infer(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& out) override {
    expect_inputs(in, 1, 1);
    expect_sized(*this, in[0], "input");
    const Shape& shape = in[0].shape;
    const int rank = static_cast<int>(shape.size());
    perm_.clear();
    if (node_.attrs.has("perm")) {
      const std::vector<int64_t> perm = node_.attrs.get_ints("perm");
      if (static_cast<int>(perm.size()) != rank)
        error("'perm' has " + std::to_string(perm.size()) + " entries but the input has rank " + std::to_string(rank));
      perm_ = normalize_axes(*this, perm, rank);  // in range and no repeats: a permutation
    } else {
      for (int d = rank - 1; d >= 0; --d) perm_.push_back(d);
    }
    out[0].dtype = in[0].dtype;
    out[0].shape.resize(static_cast<size_t>(rank));
    for (int d = 0; d < rank; ++d) out[0].shape[d] = shape[perm_[d]];
  }

  void run(OpContext& ctx) override {
    const Tensor& x = ctx.input(0);
    Tensor& y = ctx.output(0);
    const std::vector<int64_t> dense = dense_strides(x.shape());
    std::vector<int64_t> strides(perm_.size());
    for (size_t d = 0; d < perm_.size(); ++d) strides[d] = dense[perm_[d]];
    parallel_copy_strided(ctx.pool, y.data(), x.data(), dtype_size(x.dtype()), y.shape(), strides);
  }

 private:
  std::vector<int> perm_;
};

NINEGRID_REGISTER_OP("Transpose", Transpose);

}  // namespace
}  // namespace ninegrid
