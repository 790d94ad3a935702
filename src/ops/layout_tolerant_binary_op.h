// Add, Sub, Mul and Div with numpy broadcasting that also run on channel-blocked data. The layout pass
// sets ng.in_block = ng.out_block = B > 1 (see blocked_layout.h) when the output and its full-shape
// input(s) are stored NCHW[B]c. The other input is then either
//   - of the output's shape and stored with the same block: element i of one operand meets element i of
//     the other in every layout, so the plain loop is right as it is; or
//   - a per-(batch, channel) operand [N or 1, C or 1, 1, 1] (or with fewer leading axes) whose bytes are
//     the same in every layout (a constant, or a layout-free value such as a squeeze-and-excitation
//     gate): it is broadcast over the blocked pixels by binary_blocked_ref.
// Anything else with a block is refused: the planner never asks for it.
//
// With ng.add_operand = i (fuse_gate_residual, ir/fused_conv.h) the op also adds its input i, which must
// have Y's shape, after its own arithmetic, y = f(a, b) + x with x = input i: the residual of a squeeze-and-
// excitation block (x + x * gate) in one pass over x instead of three. The sum is rounded apart from f's
// result, as the separate Add did. Float32 only.
#pragma once

#include <array>
#include <type_traits>

#include "ir/fused_conv.h"
#include "kernels/ref/binary_blocked_ref.h"
#include "ops/binary_op.h"
#include "ops/blocked_layout.h"

namespace ninegrid {

// f(a, b) plus operand kFull (0: a, 1: b), the two results rounded apart.
template <class F, int kFull>
struct PlusOperand {
  float operator()(float a, float b) const { return F()(a, b) + (kFull == 0 ? a : b); }
};

template <class F>
class LayoutTolerantBinaryOp final : public Op {
 public:
  explicit LayoutTolerantBinaryOp(const Node& node) : Op(node) {
    block_ = read_spatial_block(*this);
    const int64_t add = node.attrs.get_int(fused::kAddOperand, -1);
    if (add < -1 || add > 1)
      error(std::string(fused::kAddOperand) + " must be 0 or 1 (the input to add), got " + std::to_string(add));
    add_input_ = static_cast<int>(add);
  }

  void infer(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& out) override {
    expect_inputs(in, 2, 2);
    out[0].shape = infer_binary_same_type(*this, NumericTypes(), in);
    out[0].dtype = in[0].dtype;
    channel_broadcast_ = false;
    if (add_input_ >= 0) {
      if (in[0].dtype != DataType::Float32)
        error(std::string(fused::kAddOperand) + " takes float32 inputs, got " + dtype_name(in[0].dtype));
      // Of Y's shape, the added input's element i is the value at output element i in every loop below.
      if (in[static_cast<size_t>(add_input_)].shape != out[0].shape)
        error(std::string(fused::kAddOperand) + " adds input " + std::to_string(add_input_) +
              ", which must have the output's shape " + shape_str(out[0].shape) + ", got " +
              shape_str(in[static_cast<size_t>(add_input_)].shape));
    }
    if (block_ > 1) plan_blocked(in, out[0].shape);
  }

  void run(OpContext& ctx) override {
    if (add_input_ < 0) run_with(ctx, F());
    else if (add_input_ == 0) run_with(ctx, PlusOperand<F, 0>());
    else run_with(ctx, PlusOperand<F, 1>());
  }

 private:
  // The op's arithmetic with g in the place of F (F itself, or F plus an input on float32).
  template <class G>
  void run_with(OpContext& ctx, G g) {
    if (!channel_broadcast_ && block_ > 1 && ctx.input(0).dtype() == DataType::Float32) {
      // Both operands blocked alike: element-wise, split in bands of rows like the convs around it.
      const float* a = ctx.input(0).data_as<float>();
      const float* b = ctx.input(1).data_as<float>();
      Tensor& y = ctx.output(0);
      float* yp = y.data_as<float>();
      const Shape& s = y.shape();
      const int64_t row = s[3] * block_;
      parallel_row_bands(ctx.pool, s, block_, y.numel(), [&](int64_t r0, int64_t r1) {
        ref::binary_run(a + r0 * row, true, b + r0 * row, true, yp + r0 * row, (r1 - r0) * row, g);
      });
      return;
    }
    if (!channel_broadcast_) {
      if constexpr (std::is_same_v<G, F>) {
        visit_dtype(NumericTypes(), ctx.input(0).dtype(), [&](auto tag) {
          using T = typename decltype(tag)::type;
          run_broadcast_binary<T, T, T>(ctx.pool, ctx.input(0), ctx.input(1), ctx.output(0), g);
        });
      } else {
        run_broadcast_binary<float, float, float>(ctx.pool, ctx.input(0), ctx.input(1), ctx.output(0), g);
      }
      return;
    }
    const bool v_first = full_input_ == 1;
    const float* x = ctx.input(full_input_).data_as<float>();
    ref::ChannelOperand v;
    v.v = ctx.input(1 - full_input_).data_as<float>();
    v.batch_step = v_batch_step_;
    v.channel_step = v_channel_step_;
    float* y = ctx.output(0).data_as<float>();
    const int64_t c = y_shape_[1], h = y_shape_[2], w = y_shape_[3], block = block_;
    parallel_row_bands(ctx.pool, y_shape_, block, ctx.output(0).numel(), [&](int64_t b, int64_t e) {
      ref::channel_broadcast_blocked_ref(v_first, x, v, y, c, h, w, block, b, e, g);
    });
  }

  // With a block: finds the input of the output's shape (it carries the layout) and checks the other.
  void plan_blocked(const std::vector<TensorDesc>& in, const Shape& y) {
    full_input_ = in[0].shape == y ? 0 : in[1].shape == y ? 1 : -1;
    if (full_input_ < 0)
      error("the channel-blocked layout (ng.in_block " + std::to_string(block_) +
            ") needs an input of the output's shape " + shape_str(y) + ", got " + shape_str(in[0].shape) + " and " +
            shape_str(in[1].shape));
    expect_blockable(*this, block_, in[full_input_]);
    const Shape& other = in[1 - full_input_].shape;
    if (other == y) return;  // both blocked alike: element-wise in any layout
    // Left-pad to rank 4 like numpy broadcasting does.
    std::array<int64_t, 4> v = {1, 1, 1, 1};
    const size_t rank = other.size();
    bool ok = rank <= 4;
    for (size_t i = 0; ok && i < rank; ++i) v[4 - rank + i] = other[i];
    ok = ok && v[2] == 1 && v[3] == 1 && (v[0] == 1 || v[0] == y[0]) && (v[1] == 1 || v[1] == y[1]);
    if (!ok)
      error("the channel-blocked layout (ng.in_block " + std::to_string(block_) +
            ") broadcasts only one value per batch and channel ([N or 1, C or 1, 1, 1]) over the blocked input " +
            shape_str(in[full_input_].shape) + ", got " + shape_str(other));
    channel_broadcast_ = true;
    v_channel_step_ = v[1] == 1 ? 0 : 1;
    v_batch_step_ = v[0] == 1 ? 0 : v[1];
    y_shape_ = y;
  }

  int add_input_ = -1;              // ng.add_operand: y = f(a, b) + input add_input_ (-1: none)
  int64_t block_ = 1;              // channel block of the full-shape input(s) and Y (1 = plain NCHW)
  bool channel_broadcast_ = false;  // blocked X against a per-(batch, channel) operand
  int full_input_ = 0;              // which input has the output's shape
  int64_t v_batch_step_ = 0, v_channel_step_ = 0;
  Shape y_shape_;
};

}  // namespace ninegrid
