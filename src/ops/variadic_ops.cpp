// Sum, Mean (float types), Max and Min (all numeric types) over one or more inputs broadcast together.
// The first two inputs are combined into the output, then each further input is folded into it in place.
#include <cstring>

#include "kernels/ref/scalar_math.h"
#include "ops/elementwise_common.h"

namespace ninegrid {
namespace {

template <class F, class List, bool kMean>
class Variadic final : public Op {
 public:
  using Op::Op;
  void infer(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& out) override {
    if (in.empty()) error("expects at least 1 input, got 0");
    std::vector<Shape> shapes;
    for (size_t i = 0; i < in.size(); ++i) {
      const std::string what = "input #" + std::to_string(i);
      if (!in[i].present) error(what + " is missing");
      require_dtype(*this, List(), in[i].dtype, what.c_str());
      if (in[i].dtype != in[0].dtype)
        error("all inputs must have the same type: input #0 is " + std::string(dtype_name(in[0].dtype)) + ", " +
              what + " is " + dtype_name(in[i].dtype));
      shapes.push_back(in[i].shape);
    }
    out[0].dtype = in[0].dtype;
    out[0].shape = broadcast_or_throw(*this, shapes);
  }

  void run(OpContext& ctx) override {
    Tensor& y = ctx.output(0);
    const size_t n = ctx.inputs.size();
    if (n == 1) {
      if (y.nbytes() != 0) std::memcpy(y.data(), ctx.input(0).data(), y.nbytes());
      return;
    }
    visit_dtype(List(), y.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      run_broadcast_binary<T, T, T>(ctx.pool, ctx.input(0), ctx.input(1), y, F());
      for (size_t i = 2; i < n; ++i) run_broadcast_binary<T, T, T>(ctx.pool, y, ctx.input(i), y, F());
      if constexpr (kMean) {
        T* yp = y.data_as<T>();
        const T count = static_cast<T>(n);
        ref::map_run(yp, yp, y.numel(), [=](T v) { return v / count; });
      }
    });
  }
};

using Sum = Variadic<ref::AddOp, FloatTypes, false>;
using Mean = Variadic<ref::AddOp, FloatTypes, true>;
using Max = Variadic<ref::MaxOp, NumericTypes, false>;
using Min = Variadic<ref::MinOp, NumericTypes, false>;
NINEGRID_REGISTER_OP("Sum", Sum);
NINEGRID_REGISTER_OP("Mean", Mean);
NINEGRID_REGISTER_OP("Max", Max);
NINEGRID_REGISTER_OP("Min", Min);

}  // namespace
}  // namespace ninegrid
