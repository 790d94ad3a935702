// EyeLike: a 2-D tensor shaped like the input, ones on the k-th diagonal and zeros elsewhere, of the
// 'dtype' attribute's type (the input's by default). Only the input's shape matters, so the planner
// computes it at plan time (value_from_shapes).
#include <cstring>

#include "kernels/ref/cast.h"
#include "ops/data_movement.h"

namespace ninegrid {
namespace {

class EyeLike final : public Op {
 public:
  using Op::Op;

  void infer(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& out) override {
    expect_inputs(in, 1, 1);
    if (in[0].shape.size() != 2) error("input must be 2-D, got shape " + shape_str(in[0].shape));
    const DataType t = node_.attrs.has("dtype") ? static_cast<DataType>(node_.attrs.get_int("dtype", 0)) : in[0].dtype;
    if (!ref::cast_supported(t)) error(std::string("output type ") + dtype_name(t) + " is unsupported");
    out[0].dtype = t;
    out[0].shape = in[0].shape;
  }

  // Reads only the output's shape, never the input.
  void run(OpContext& ctx) override {
    Tensor& y = ctx.output(0);
    std::memset(y.data(), 0, y.nbytes());
    const int64_t rows = y.dim(0), cols = y.dim(1);
    const int64_t k = node_.attrs.get_int("k", 0);
    const size_t elem = dtype_size(y.dtype());
    // The value 1 in the output type.
    uint8_t one[8];
    const float one_f = 1.f;
    ref::cast_elements(&one_f, DataType::Float32, one, y.dtype(), 1);
    if (k >= cols || k <= -rows) return;  // the diagonal misses the matrix (and r + k cannot overflow below)
    uint8_t* p = static_cast<uint8_t*>(y.data());
    for (int64_t r = 0; r < rows; ++r) {
      const int64_t c = r + k;
      if (c >= 0 && c < cols) std::memcpy(p + static_cast<size_t>(r * cols + c) * elem, one, elem);
    }
  }

  bool value_from_shapes() const override { return true; }
};

NINEGRID_REGISTER_OP("EyeLike", EyeLike);

}  // namespace
}  // namespace ninegrid
