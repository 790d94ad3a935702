// ng.QConv: a quantised 2-D convolution, what graph/passes/fuse_qdq.cpp makes of
// DequantizeLinear -> Conv [-> Relu/Clip] -> QuantizeLinear. The arithmetic is kernels/quantized.h's.
//
// Inputs: X uint8 [N, C, H, W] (NCHW[ng.in_block]c), W int8 [M, C / group, kh, kw] (constant), B int32 [M]
// (optional, in units of x_scale * w_scale[m]), and at fused::kResidualInput a uint8 residual with Y's
// shape and layout (optional). Output Y uint8 [N, M, oh, ow] (NCHW[ng.out_block]c).
// Attributes: Conv's window attributes and group; x_scale, x_zero_point; w_scale (1 or M values);
// y_scale, y_zero_point; qmin, qmax (the clamp in output units: a fused ReLU is qmin = y_zero_point);
// with a residual, either r_scale and r_zero_point (added before the rounding) or a fused ng.QAdd's
// add_a_*, add_b_*, add_y_*, add_qmin, add_qmax and add_conv_input (ir/quant_attrs.h): the output is then
// the addition's, in add_y's scale and zero point.
#include <cmath>
#include <memory>
#include <vector>

#include "core/thread_pool.h"
#include "ir/fused_conv.h"
#include "kernels/conv_params.h"
#include "kernels/ref/qconv2d_ref.h"
#include "ops/exec_settings.h"
#include "ops/op.h"
#include "ops/conv_select.h"  // ConvTunable
#include "ops/qconv_fast.h"
#include "ops/qconv_select.h"
#include "ir/quant_attrs.h"
#include "ops/sliding_window.h"

namespace ninegrid {
namespace {

class QConv final : public Op, public ConvTunable {
 public:
  explicit QConv(const Node& node) : Op(node) {
    try {
      window_ = read_window_attrs(node.attrs);
      q_ = read_qconv_attrs(node.attrs);
    } catch (const Error& e) {
      error(e.what());
    }
    group_ = node.attrs.get_int("group", 1);
    in_block_ = node.attrs.get_int(fused::kInBlock, 1);
    out_block_ = node.attrs.get_int(fused::kOutBlock, 1);
    if (group_ <= 0) error("group must be positive, got " + std::to_string(group_));
  }

  void infer(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& out) override {
    expect_inputs(in, 2, fused::kResidualInput + 1);
    const TensorDesc& x = in[0];
    const TensorDesc& w = in[1];
    expect_dtype(x, DataType::UInt8, "input X");
    expect_dtype(w, DataType::Int8, "weights W");
    if (x.shape.size() != 4 || w.shape.size() != 4)
      error("needs a 4-D input and 4-D weights, got " + shape_str(x.shape) + " and " + shape_str(w.shape));
    const int64_t channels = x.shape[1], out_channels = w.shape[0];
    if (w.shape[1] * group_ != channels || out_channels % group_ != 0)
      error("weights " + shape_str(w.shape) + " with group " + std::to_string(group_) + " do not fit input " +
            shape_str(x.shape));
    if (!w.value) error("weights W must be constant");
    const bool has_bias = in.size() > 2 && in[2].present;
    if (has_bias) {
      expect_dtype(in[2], DataType::Int32, "bias B");
      if (in[2].shape != Shape{out_channels})
        error("bias B must have shape [" + std::to_string(out_channels) + "], got " + shape_str(in[2].shape));
      if (!in[2].value) error("bias B must be constant");
    }
    const int64_t scales = static_cast<int64_t>(q_.w_scale.size());
    if (scales != 1 && scales != out_channels)
      error("w_scale has " + std::to_string(scales) + " values; it needs 1 or one per output channel (" +
            std::to_string(out_channels) + ")");
    if (in_block_ < 1 || channels % in_block_ != 0 || out_block_ < 1 || out_channels % out_block_ != 0)
      error("channel blocks " + std::to_string(in_block_) + "/" + std::to_string(out_block_) +
            " must divide the channel counts " + std::to_string(channels) + "/" + std::to_string(out_channels));
    // The int32 sum must not overflow: each tap adds at most 255 x 128.
    const int64_t taps = w.shape[1] * w.shape[2] * w.shape[3];
    if (taps * 255 * 128 >= (int64_t(1) << 31))
      error("a quantised sum over " + std::to_string(taps) + " taps could overflow int32 (at most " +
            std::to_string((int64_t(1) << 31) / (255 * 128)) + " taps per output are supported)");

    try {
      geom_ = resolve_window(window_, {x.shape[2], x.shape[3]}, {w.shape[2], w.shape[3]});
    } catch (const Error& e) {
      error(e.what());
    }
    p_ = Conv2dParams();
    p_.batch = x.shape[0];
    p_.in_channels = channels;
    p_.out_channels = out_channels;
    p_.groups = group_;
    p_.in_h = geom_.in[0], p_.in_w = geom_.in[1];
    p_.out_h = geom_.out[0], p_.out_w = geom_.out[1];
    p_.kernel_h = geom_.kernel[0], p_.kernel_w = geom_.kernel[1];
    p_.stride_h = geom_.stride[0], p_.stride_w = geom_.stride[1];
    p_.dilation_h = geom_.dilation[0], p_.dilation_w = geom_.dilation[1];
    p_.pad_top = geom_.pad_begin[0], p_.pad_left = geom_.pad_begin[1];
    p_.pad_bottom = geom_.pad_end[0], p_.pad_right = geom_.pad_end[1];
    const Shape y_shape = {p_.batch, out_channels, p_.out_h, p_.out_w};

    residual_ = in.size() > fused::kResidualInput && in[fused::kResidualInput].present;
    if (residual_) {
      expect_dtype(in[fused::kResidualInput], DataType::UInt8, "fused residual");
      if (in[fused::kResidualInput].shape != y_shape)
        error("fused residual " + shape_str(in[fused::kResidualInput].shape) + " must have the output's shape " +
              shape_str(y_shape));
      if (!q_.has_residual && !q_.has_add)
        error("a fused residual needs r_scale and r_zero_point, or a fused QAdd's add_* attributes");
    } else if (q_.has_add) {
      error("a fused QAdd (add_y_scale) needs the residual input " + std::to_string(fused::kResidualInput));
    }
    multiplier_.resize(static_cast<size_t>(out_channels));
    for (int64_t c = 0; c < out_channels; ++c)
      multiplier_[c] = q_.x_scale * q_.w_scale[scales == 1 ? 0 : c] / q_.y_scale;
    out[0].dtype = DataType::UInt8;
    out[0].shape = y_shape;
    fast_.reset();
  }

  // The fast kernel (ops/qconv_fast.h) of the int8 conv policy's plan (ops/qconv_select.h: the tuned plan
  // for this conv's key, else the rules'), when one fits; otherwise run() keeps the reference.
  // settings.conv_algorithms restricts the plan as it does a float conv's (rule_qconv_plan says how).
  void prepare(const std::vector<TensorDesc>& in, const ExecSettings& settings) override {
    fast_.reset();
    prepared_.reset();
    weights_ = in[1].value->data_as<int8_t>();
    bias_ = in.size() > 2 && in[2].present ? in[2].value->data_as<int32_t>() : nullptr;
    settings_ = settings;
    settings_.tuned_plans.reset();
    if (settings.isa == Isa::Ref) return;
    try {
      key_ = qconv_key(p_, residual_, in_block_, out_block_, settings, weights_);
      plan_ = choose_qconv_plan(key_, settings, &tuned_);
      if (plan_.kernel == ConvKernel::Ref) return;
      // (A tuned plan passed qconv_plan_fits, which holds FastQConv2d's own check: it builds.)
      fast_ = std::make_shared<const FastQConv2d>(p_, weights_, kernel_requantization(), q_.x_zero_point, plan_);
    } catch (const Error& e) {
      error(e.what());
    }
    prepared_ = std::make_shared<const Prepared>(Prepared{fast_, key_, plan_, tuned_});
  }

  void run(OpContext& ctx) override {
    const uint8_t* x = ctx.input(0).data_as<uint8_t>();
    uint8_t* y = ctx.output(0).data_as<uint8_t>();
    if (fast_) {
      const uint8_t* residual = residual_ ? ctx.input(fused::kResidualInput).data_as<uint8_t>() : nullptr;
      fast_->run(x, y, residual, ctx.pool);
      return;
    }
    Requantization q = requantization(ctx);
    const int8_t* w = ctx.input(1).data_as<int8_t>();
    qconv2d_ref(p_, q, q_.x_zero_point, in_block_, out_block_, x, w, y);
  }

  int64_t macs() const override { return p_.macs(); }
  std::string algorithm() const override { return fast_ ? fast_->algorithm() : "int8-ref"; }

  // The fast kernel holds the packed weights and the prepared bias and sums (run() is const, its staging
  // buffer per thread): sessions of one model share it, with the plan it was built from, instead of packing
  // again. The weights stay in the graph (no packed_input): infer() checks them, the reference path reads
  // them, and candidate() builds other plans' kernels on them.
  std::shared_ptr<const void> prepared_state() const override { return fast_ ? prepared_ : nullptr; }
  void adopt_prepared_state(std::shared_ptr<const void> state) override {
    prepared_ = std::static_pointer_cast<const Prepared>(std::move(state));
    fast_ = prepared_->kernel;
    key_ = prepared_->key;
    plan_ = prepared_->plan;
    tuned_ = prepared_->tuned;
    weights_ = nullptr, bias_ = nullptr;  // (this session's plan may hold other constants than the preparer's)
  }

  // The tuner's view (ops/conv_select.h).
  ConvTunable* conv_tunable() override { return fast_ ? this : nullptr; }
  const ConvKey& key() const override { return key_; }
  const ConvPlan& plan() const override { return plan_; }
  bool tuned() const override { return tuned_; }
  std::unique_ptr<ConvCandidate> candidate(const ConvPlan& plan) const override {
    if (!weights_) error("no weights to build another plan's kernel (the session adopted a prepared one)");
    if (!qconv_plan_fits(plan, key_, settings_))
      error("the int8 plan " + describe_plan(plan) + " does not fit this conv (" + format_conv_key(key_) + ")");
    return std::make_unique<Candidate>(
        std::make_shared<const FastQConv2d>(p_, weights_, kernel_requantization(), q_.x_zero_point, plan));
  }

 private:
  struct Prepared {
    std::shared_ptr<const FastQConv2d> kernel;
    ConvKey key;
    ConvPlan plan;
    bool tuned = false;
  };
  class Candidate final : public ConvCandidate {
   public:
    explicit Candidate(std::shared_ptr<const FastQConv2d> conv) : conv_(std::move(conv)) {}
    void run(const void* x, void* y, const void* residual, ThreadPool* pool) const override {
      conv_->run(static_cast<const uint8_t*>(x), static_cast<uint8_t*>(y), static_cast<const uint8_t*>(residual),
                 pool);
    }

   private:
    std::shared_ptr<const FastQConv2d> conv_;
  };

  // The constants the fast kernel folds in: requantisation and bias.
  Requantization kernel_requantization() const {
    Requantization q = requantization_constants();
    q.bias = bias_;
    return q;
  }
  Requantization requantization(const OpContext& ctx) const {
    Requantization q = requantization_constants();
    q.bias = ctx.has_input(2) ? ctx.input(2).data_as<int32_t>() : nullptr;
    if (residual_) q.residual = ctx.input(fused::kResidualInput).data_as<uint8_t>();
    return q;
  }
  // Everything but the tensors.
  Requantization requantization_constants() const {
    Requantization q;
    q.multiplier = multiplier_.data();
    q.out_zero_point = q_.y_zero_point;
    q.qmin = q_.qmin;
    q.qmax = q_.qmax;
    if (residual_ && q_.has_add) {
      // ng.QAdd's own constants (ops/qadd.cpp), so that the fused node gives the unfused graph's bytes.
      q.residual_add = true;
      q.conv_is_first = q_.add_conv_input == 0;
      q.add.a_zero_point = q_.add_a.zero_point, q.add.b_zero_point = q_.add_b.zero_point;
      q.add.out_zero_point = q_.add_y.zero_point;
      q.add.a_multiplier = q_.add_a.scale / q_.add_y.scale;
      q.add.b_multiplier = q_.add_b.scale / q_.add_y.scale;
      q.add.qmin = q_.add_clamp.qmin, q.add.qmax = q_.add_clamp.qmax;
    } else if (residual_) {
      q.residual_zero_point = q_.r_zero_point;
      q.residual_multiplier = q_.r_scale / q_.y_scale;
    }
    return q;
  }

  WindowAttrs window_;
  QConvAttrs q_;
  int64_t group_ = 1, in_block_ = 1, out_block_ = 1;
  WindowGeometry geom_;
  Conv2dParams p_;
  bool residual_ = false;
  std::vector<float> multiplier_;  // per output channel: x_scale * w_scale / y_scale
  std::shared_ptr<const FastQConv2d> fast_;  // set by prepare() when a fast kernel fits, or adopted
  ConvKey key_;                            // what the policy planned for (see ConvTunable)
  ConvPlan plan_;                          // the policy's plan (ConvKernel::Ref: the reference)
  bool tuned_ = false;                     // plan_ came from the tuning cache
  // The graph's constant weights and bias (alive as long as the model), for candidate(); null in a session
  // that adopted the prepared kernel without preparing.
  const int8_t* weights_ = nullptr;
  const int32_t* bias_ = nullptr;
  ExecSettings settings_;  // prepare()'s (without the tuned plans), for candidate()'s check
  std::shared_ptr<const Prepared> prepared_;
};

NINEGRID_REGISTER_OP("ng.QConv", QConv);

}  // namespace
}  // namespace ninegrid
