// ng.BroadcastAlign: reshapes the lower-rank operand of an ncnn BinaryOp so that ONNX (numpy)
// broadcasting then computes what ncnn computes. ncnn aligns a lower-rank blob to the other blob's
// OUTER dimensions, not the inner ones as numpy does:
//   a 1-D blob of n values against a higher-rank blob whose outermost dimension (h for 2-D, c for 3-D
//   and 4-D) is n becomes (n, 1, ..., 1), i.e. one value per channel; any other 1-D blob becomes
//   (1, ..., 1, n);
//   a 2-D (h, w) or 3-D blob becomes (its dims..., 1, ...), padded with 1s on the inner side.
// Inputs: the blob to align and the higher-rank blob (only its shape is read). The output holds the
// first input's bytes under the new shape, with the batch dimension kept in front.
#include <cstring>

#include "ops/ncnn_blob.h"
#include "ops/op.h"

namespace ninegrid {
namespace {

class NcnnBroadcastAlign final : public Op {
 public:
  using Op::Op;

  void infer(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& out) override {
    expect_inputs(in, 2, 2);
    const Shape& a = in[0].shape;
    const Shape& b = in[1].shape;
    const NcnnBlobDims low = ncnn_blob_dims(a);
    const NcnnBlobDims high = ncnn_blob_dims(b);
    if (low.dims == 0 || high.dims == 0)
      error("inputs must have rank 2 to 5 (an ncnn blob plus batch), got " + shape_str(a) + " and " + shape_str(b));
    Shape s(a.begin(), a.end());
    if (low.dims < high.dims) {
      const int64_t outermost = high.dims == 2 ? high.h : high.c;
      s.assign(1, a[0]);
      if (low.dims == 1 && low.w != outermost) {
        // Aligned to the innermost dimension.
        for (int i = 1; i < high.dims; ++i) s.push_back(1);
        s.push_back(low.w);
      } else {
        // Aligned to the outermost dimensions.
        s.insert(s.end(), a.begin() + 1, a.end());
        while (static_cast<int>(s.size()) < high.dims + 1) s.push_back(1);
      }
    }
    out[0].dtype = in[0].dtype;
    out[0].shape = s;
  }

  void run(OpContext& ctx) override {
    const Tensor& x = ctx.input(0);
    Tensor& y = ctx.output(0);
    if (y.data() != x.data()) std::memcpy(y.data(), x.data(), x.nbytes());
  }

  int aliases_input(int out_index) const override { return out_index == 0 ? 0 : -1; }
};

NINEGRID_REGISTER_OP("ng.BroadcastAlign", NcnnBroadcastAlign);

}  // namespace
}  // namespace ninegrid
