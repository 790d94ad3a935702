// The common shape of two-input element-wise operators with numpy broadcasting: both inputs of one type
// from `List`, the output of that type (or bool for comparisons), computed by the functor F.
#pragma once

#include <type_traits>

#include "ops/elementwise_common.h"

namespace ninegrid {

// Checks two same-typed inputs from `list` and returns their broadcast shape.
template <class List>
Shape infer_binary_same_type(const Op& op, List list, const std::vector<TensorDesc>& in) {
  require_dtype(op, list, in[0].dtype, "input A");
  if (in[1].dtype != in[0].dtype)
    op.error(std::string("inputs must have the same type, got ") + dtype_name(in[0].dtype) + " and " +
             dtype_name(in[1].dtype));
  return broadcast_or_throw(op, {in[0].shape, in[1].shape});
}

template <class F, class List, bool kBoolOutput>
class BinaryOp final : public Op {
 public:
  using Op::Op;
  void infer(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& out) override {
    expect_inputs(in, 2, 2);
    out[0].shape = infer_binary_same_type(*this, List(), in);
    out[0].dtype = kBoolOutput ? DataType::Bool : in[0].dtype;
  }
  void run(OpContext& ctx) override {
    visit_dtype(List(), ctx.input(0).dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      using Y = std::conditional_t<kBoolOutput, bool, T>;
      run_broadcast_binary<T, T, Y>(ctx.pool, ctx.input(0), ctx.input(1), ctx.output(0), F());
    });
  }
};

}  // namespace ninegrid
