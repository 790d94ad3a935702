// Element-wise operators defined for integer types too: Relu, Neg (signed types), Abs, Sign (all numeric
// types), Not (bool), and IsNaN / IsInf (float to bool).
#include <cmath>

#include "kernels/ref/elementwise_loops.h"
#include "kernels/ref/scalar_math.h"
#include "ops/elementwise_common.h"

namespace ninegrid {
namespace {

// The element function of each operator, for any numeric T.
struct ReluFn {
  template <class T> T operator()(T v) const { return v > T(0) ? v : T(0); }
};
struct NegFn {
  template <class T> T operator()(T v) const { return ref::neg_wrap(v); }
};
struct AbsFn {
  template <class T> T operator()(T v) const { return ref::abs_wrap(v); }
};
struct SignFn {
  template <class T> T operator()(T v) const {
    if constexpr (std::is_unsigned_v<T>) {
      return v > 0 ? T(1) : T(0);
    } else {
      if constexpr (std::is_floating_point_v<T>)
        if (std::isnan(v)) return v;
      return v > T(0) ? T(1) : (v < T(0) ? T(-1) : T(0));
    }
  }
};

template <class Fn, class List>
class UnaryNumeric final : public Op {
 public:
  using Op::Op;
  void infer(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& out) override {
    expect_inputs(in, 1, 1);
    require_dtype(*this, List(), in[0].dtype, "input");
    out[0].dtype = in[0].dtype;
    out[0].shape = in[0].shape;
  }
  void run(OpContext& ctx) override {
    const Tensor& x = ctx.input(0);
    Tensor& y = ctx.output(0);
    visit_dtype(List(), x.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* xp = x.data_as<T>();
      T* yp = y.data_as<T>();
      parallel_range(ctx.pool, x.numel(), x.numel(),
                     [&](int64_t b, int64_t e) { ref::map_run(xp + b, yp + b, e - b, Fn()); });
    });
  }
};

using Relu = UnaryNumeric<ReluFn, SignedTypes>;
using Neg = UnaryNumeric<NegFn, SignedTypes>;
using Abs = UnaryNumeric<AbsFn, NumericTypes>;
using Sign = UnaryNumeric<SignFn, NumericTypes>;
NINEGRID_REGISTER_OP("Relu", Relu);
NINEGRID_REGISTER_OP("Neg", Neg);
NINEGRID_REGISTER_OP("Abs", Abs);
NINEGRID_REGISTER_OP("Sign", Sign);

// Not: bool -> bool.
class Not final : public Op {
 public:
  using Op::Op;
  void infer(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& out) override {
    expect_inputs(in, 1, 1);
    require_dtype(*this, TypeList<bool>(), in[0].dtype, "input");
    out[0].dtype = DataType::Bool;
    out[0].shape = in[0].shape;
  }
  void run(OpContext& ctx) override {
    const bool* x = ctx.input(0).data_as<bool>();
    bool* y = ctx.output(0).data_as<bool>();
    ref::map_run(x, y, ctx.input(0).numel(), [](bool v) { return !v; });
  }
};
NINEGRID_REGISTER_OP("Not", Not);

// IsNaN and IsInf (with detect_negative / detect_positive): float -> bool.
class FloatClass final : public Op {
 public:
  explicit FloatClass(const Node& node) : Op(node) {
    is_nan_ = node.op_type == "IsNaN";
    detect_negative_ = node_.attrs.get_int("detect_negative", 1) != 0;
    detect_positive_ = node_.attrs.get_int("detect_positive", 1) != 0;
  }
  void infer(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& out) override {
    expect_inputs(in, 1, 1);
    require_dtype(*this, FloatTypes(), in[0].dtype, "input");
    out[0].dtype = DataType::Bool;
    out[0].shape = in[0].shape;
  }
  void run(OpContext& ctx) override {
    const Tensor& x = ctx.input(0);
    bool* y = ctx.output(0).data_as<bool>();
    visit_dtype(FloatTypes(), x.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      const bool nan = is_nan_, neg = detect_negative_, pos = detect_positive_;
      ref::map_run(x.data_as<T>(), y, x.numel(), [=](T v) {
        if (nan) return std::isnan(v);
        return std::isinf(v) && ((v < 0 && neg) || (v > 0 && pos));
      });
    });
  }

 private:
  bool is_nan_ = false, detect_negative_ = true, detect_positive_ = true;
};
NINEGRID_REGISTER_OP("IsNaN", FloatClass);
NINEGRID_REGISTER_OP("IsInf", FloatClass);

}  // namespace
}  // namespace ninegrid
