// Add, Sub, Mul, Div, Mod and Pow with numpy broadcasting, for every ONNX numeric type except float16.
// Integer arithmetic wraps on overflow; integer division and remainder by zero give 0 (see
// kernels/ref/scalar_math.h). Add, Sub, Mul and Div also run on channel-blocked data
// (ops/layout_tolerant_binary_op.h).
#include "kernels/ref/scalar_math.h"
#include "ops/binary_op.h"
#include "ops/layout_tolerant_binary_op.h"

namespace ninegrid {
namespace {

using Add = LayoutTolerantBinaryOp<ref::AddOp>;
using Sub = LayoutTolerantBinaryOp<ref::SubOp>;
using Mul = LayoutTolerantBinaryOp<ref::MulOp>;
using Div = LayoutTolerantBinaryOp<ref::DivOp>;
NINEGRID_REGISTER_OP("Add", Add);
NINEGRID_REGISTER_OP("Sub", Sub);
NINEGRID_REGISTER_OP("Mul", Mul);
NINEGRID_REGISTER_OP("Div", Div);

// Mod: fmod=0 (the default) takes the divisor's sign and is defined for integers only; fmod=1 takes the
// dividend's sign, like C's fmod.
class Mod final : public Op {
 public:
  explicit Mod(const Node& node) : Op(node) {
    const int64_t fmod = node_.attrs.get_int("fmod", 0);
    if (fmod != 0 && fmod != 1) error("fmod must be 0 or 1, got " + std::to_string(fmod));
    fmod_ = fmod == 1;
  }
  void infer(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& out) override {
    expect_inputs(in, 2, 2);
    out[0].shape = infer_binary_same_type(*this, NumericTypes(), in);
    out[0].dtype = in[0].dtype;
    if (!fmod_ && dtype_in(FloatTypes(), in[0].dtype))
      error(std::string("fmod=0 is not defined for ") + dtype_name(in[0].dtype) + " inputs; set fmod=1");
  }
  void run(OpContext& ctx) override {
    visit_dtype(NumericTypes(), ctx.input(0).dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      if (fmod_) {
        run_broadcast_binary<T, T, T>(ctx.pool, ctx.input(0), ctx.input(1), ctx.output(0), ref::ModTruncOp());
      } else if constexpr (std::is_integral_v<T>) {
        run_broadcast_binary<T, T, T>(ctx.pool, ctx.input(0), ctx.input(1), ctx.output(0), ref::ModFloorOp());
      }
    });
  }

 private:
  bool fmod_ = false;
};
NINEGRID_REGISTER_OP("Mod", Mod);

// Pow: the base's type is the output's; the exponent may be any numeric type.
using PowBaseTypes = TypeList<float, double, int32_t, int64_t>;

class Pow final : public Op {
 public:
  using Op::Op;
  void infer(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& out) override {
    expect_inputs(in, 2, 2);
    require_dtype(*this, PowBaseTypes(), in[0].dtype, "base X");
    require_dtype(*this, NumericTypes(), in[1].dtype, "exponent Y");
    out[0].dtype = in[0].dtype;
    out[0].shape = broadcast_or_throw(*this, {in[0].shape, in[1].shape});
  }
  void run(OpContext& ctx) override {
    visit_dtype(PowBaseTypes(), ctx.input(0).dtype(), [&](auto base_tag) {
      using B = typename decltype(base_tag)::type;
      visit_dtype(NumericTypes(), ctx.input(1).dtype(), [&](auto exp_tag) {
        using E = typename decltype(exp_tag)::type;
        run_broadcast_binary<B, E, B>(ctx.pool, ctx.input(0), ctx.input(1), ctx.output(0), ref::PowOp());
      });
    });
  }
};
NINEGRID_REGISTER_OP("Pow", Pow);

}  // namespace
}  // namespace ninegrid
