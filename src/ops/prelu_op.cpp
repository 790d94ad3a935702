// PRelu(X, slope): x where x >= 0, slope * x elsewhere. The slope broadcasts to X in one direction only
// (the output has X's shape), e.g. a per-channel slope of shape (C,1,1) against an NCHW input.
#include "kernels/ref/scalar_math.h"
#include "ops/binary_op.h"

namespace ninegrid {
namespace {

using PReluTypes = TypeList<float, double, int32_t, int64_t>;

class PRelu final : public Op {
 public:
  using Op::Op;
  void infer(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& out) override {
    expect_inputs(in, 2, 2);
    const Shape shape = infer_binary_same_type(*this, PReluTypes(), in);
    if (shape != in[0].shape)
      error("slope of shape " + shape_str(in[1].shape) + " does not broadcast to the input's shape " +
            shape_str(in[0].shape) + " (a per-channel slope for NCHW input has shape Cx1x1)");
    out[0].dtype = in[0].dtype;
    out[0].shape = in[0].shape;
  }
  void run(OpContext& ctx) override {
    visit_dtype(PReluTypes(), ctx.input(0).dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      run_broadcast_binary<T, T, T>(ctx.pool, ctx.input(0), ctx.input(1), ctx.output(0), ref::PReluOp());
    });
  }
};

NINEGRID_REGISTER_OP("PRelu", PRelu);

}  // namespace
}  // namespace ninegrid
