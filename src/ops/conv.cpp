// Conv (ONNX opsets 1-22): 1-D, 2-D and 3-D convolution with groups, strides, dilations, pads and
// auto_pad; the kernel shape comes from the weights. 2-D convs with constant weights run the vector kernel
// ops/conv_select.h picks for the layer (Winograd, Strassen, direct, indirect); the rest run the reference
// kernels (kernels/ref/conv*_ref).
//
// Inputs: X [N, C, spatial...], W [M, C / group, kernel...], B [M] (optional).
// Fused epilogue, set by graph passes (see ops/fused_activation.h):
//   input 3 (optional): a residual with Y's shape, added before the activation;
//   input 4 (with ng.activation = PRelu): the slopes, one per output channel or one for all.
#include <algorithm>
#include <memory>
#include <vector>

#include "kernels/conv_params.h"
#include "ir/fused_conv.h"
#include "kernels/ref/conv2d_ref.h"
#include "kernels/ref/conv3d_ref.h"
#include "kernels/ref/reorder_ref.h"
#include "ops/conv_select.h"
#include "ops/fused_activation.h"
#include "ops/op.h"
#include "ops/sliding_window.h"
#include "core/thread_pool.h"

namespace ninegrid {
namespace {

// What sessions of one model share of a prepared Conv (Op::prepared_state): the vector kernel, which
// holds its own copies of the weights, bias and PRelu slopes, and the plan it was built from.
struct PreparedConv {
  std::shared_ptr<const Conv2dKernel> kernel;
  ConvKey key;
  ConvPlan plan;
  bool tuned = false;
};

class Conv final : public Op, public ConvTunable {
 public:
  explicit Conv(const Node& node) : Op(node) {
    try {
      window_ = read_window_attrs(node.attrs);
      group_ = node.attrs.get_int("group", 1);
      activation_ = read_fused_activation(node.attrs);
      in_block_ = node.attrs.get_int(fused::kInBlock, 1);
      out_block_ = node.attrs.get_int(fused::kOutBlock, 1);
    } catch (const Error& e) {
      error(e.what());
    }
    if (group_ <= 0) error("group must be positive, got " + std::to_string(group_));
  }

  void infer(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& out) override {
    expect_inputs(in, 2, 5);
    const TensorDesc& x = in[0];
    const TensorDesc& w = in[1];
    expect_float(x, "input X");
    expect_float(w, "weights W");
    const int rank = static_cast<int>(x.shape.size());
    if (rank < 3) error("input X must have rank 3 or more ([N, C, spatial...]), got shape " + shape_str(x.shape));
    if (rank > 5) error("unsupported: Conv with " + std::to_string(rank - 2) + " spatial dimensions (1 to 3 supported)");
    if (static_cast<int>(w.shape.size()) != rank)
      error("weights W " + shape_str(w.shape) + " must have the rank of X " + shape_str(x.shape));
    const int64_t channels = x.shape[1], out_channels = w.shape[0];
    if (w.shape[1] * group_ != channels)
      error("weights W " + shape_str(w.shape) + " with group " + std::to_string(group_) + " expect " +
            std::to_string(w.shape[1] * group_) + " input channels, X " + shape_str(x.shape) + " has " +
            std::to_string(channels));
    if (out_channels % group_ != 0)
      error("output channels " + std::to_string(out_channels) + " (W's first dimension) are not divisible by group " +
            std::to_string(group_));
    if (in.size() > 2 && in[2].present) {
      expect_float(in[2], "bias B");
      if (in[2].shape != Shape{out_channels})
        error("bias B must have shape [" + std::to_string(out_channels) + "], got " + shape_str(in[2].shape));
    }

    std::vector<int64_t> spatial(x.shape.begin() + 2, x.shape.end());
    std::vector<int64_t> kernel(w.shape.begin() + 2, w.shape.end());
    try {
      geom_ = resolve_window(window_, spatial, kernel);
    } catch (const Error& e) {
      error(e.what());
    }
    Shape y_shape = {x.shape[0], out_channels};
    y_shape.insert(y_shape.end(), geom_.out.begin(), geom_.out.end());

    if (in.size() > fused::kResidualInput && in[fused::kResidualInput].present) {
      expect_float(in[fused::kResidualInput], "fused residual");
      if (in[fused::kResidualInput].shape != y_shape)
        error("fused residual " + shape_str(in[fused::kResidualInput].shape) + " must have the output's shape " +
              shape_str(y_shape));
    }
    const bool has_slope = in.size() > fused::kSlopeInput && in[fused::kSlopeInput].present;
    if (activation_.kind == ActivationKind::PRelu) {
      if (!has_slope) error("fused PRelu needs its slope as input " + std::to_string(fused::kSlopeInput));
      expect_float(in[fused::kSlopeInput], "PRelu slope");
      int64_t n = shape_numel(in[fused::kSlopeInput].shape);
      if (n != 1 && n != out_channels)
        error("PRelu slope " + shape_str(in[fused::kSlopeInput].shape) + " must hold 1 or " + std::to_string(out_channels) +
              " values (one per output channel)");
    } else if (has_slope) {
      error("input " + std::to_string(fused::kSlopeInput) + " (PRelu slope) is given without ng.activation = PRelu");
    }

    if (in_block_ != 1 || out_block_ != 1) {
      if (rank != 4) error("channel-blocked layouts (ng.in_block/ng.out_block) need a 2-D convolution");
      if (in_block_ < 1 || channels % in_block_ != 0 || out_block_ < 1 || out_channels % out_block_ != 0)
        error("channel blocks " + std::to_string(in_block_) + "/" + std::to_string(out_block_) +
              " must divide the channel counts " + std::to_string(channels) + "/" + std::to_string(out_channels));
    }
    x_shape_ = x.shape;
    y_shape_ = y_shape;
    fast_.reset();
    prepared_.reset();
    out[0].dtype = DataType::Float32;
    out[0].shape = y_shape;
  }

  void run(OpContext& ctx) override {
    if (fast_) {
      const float* residual = ctx.has_input(fused::kResidualInput) ? ctx.input(fused::kResidualInput).data_as<float>() : nullptr;
      fast_->run(ctx.input(0).data_as<float>(), ctx.output(0).data_as<float>(), residual, ctx.pool);
    } else if (in_block_ != 1 || out_block_ != 1) {
      run_blocked_via_reference(ctx);
    } else {
      run_plain(ctx);
    }
  }

  std::string algorithm() const override {
    return fast_ ? fast_->name() : std::string("ref");
  }

  // The vector kernel holds copies of the weights, bias and PRelu slopes: sessions of one model share it
  // with the plan it was built from (a session that adopts it has no weights to build others: candidate()).
  std::shared_ptr<const void> prepared_state() const override { return prepared_; }
  void adopt_prepared_state(std::shared_ptr<const void> state) override {
    prepared_ = std::static_pointer_cast<const PreparedConv>(std::move(state));
    fast_ = prepared_->kernel;
    key_ = prepared_->key;
    plan_ = prepared_->plan;
    tuned_ = prepared_->tuned;
    weights_ = bias_ = nullptr;
  }
  bool packed_input(size_t i) const override {
    return fast_ && (i == 1 || i == 2 || i == static_cast<size_t>(fused::kSlopeInput));
  }

  ConvTunable* conv_tunable() override { return fast_ ? this : nullptr; }
  const ConvKey& key() const override { return key_; }
  const ConvPlan& plan() const override { return plan_; }
  bool tuned() const override { return tuned_; }
  std::unique_ptr<ConvCandidate> candidate(const ConvPlan& plan) const override {
    if (!weights_)
      error("no weights to build another plan's kernel: this session adopted the kernel the model (or another "
            "session) prepared, whose weights may have been released after packing");
    return std::make_unique<Candidate>(make_conv2d_kernel(plan, key_.p, weights_, bias_, activation_for_kernels_));
  }

  int64_t macs() const override {
    if (y_shape_.empty()) return 0;
    return geom_.rank() == 3 ? params3d().macs() : params2d().macs();
  }

 private:
  // A plan's kernel as the tuner runs it (ConvCandidate: untyped buffers, floats here).
  class Candidate final : public ConvCandidate {
   public:
    explicit Candidate(std::unique_ptr<Conv2dKernel> kernel) : kernel_(std::move(kernel)) {
      if (!kernel_) throw Error("the reference plan has no kernel to time");
    }
    void run(const void* x, void* y, const void* residual, ThreadPool* pool) const override {
      kernel_->run(static_cast<const float*>(x), static_cast<float*>(y), static_cast<const float*>(residual), pool);
    }

   private:
    std::unique_ptr<Conv2dKernel> kernel_;
  };

  // Builds the kernel the conv policy plans for this shape and layout (ops/conv_select.h: the tuned plan,
  // else the rules') when the weights are known at plan time, as they are for every imported model; it
  // prepacks the weights once per input shape. Otherwise the reference.
  void prepare(const std::vector<TensorDesc>& in, const ExecSettings& settings) override {
    if (geom_.rank() != 2 || !in[1].value) return;
    if (in.size() > 2 && in[2].present && !in[2].value) return;
    if (activation_.kind == ActivationKind::PRelu && !in[fused::kSlopeInput].value) return;
    const Conv2dParams p = params2d();
    if (settings.isa == Isa::Ref) return;
    Activation act = activation_;
    if (act.kind == ActivationKind::PRelu) {
      const Tensor& slope = *in[fused::kSlopeInput].value;
      slopes_.assign(static_cast<size_t>(p.out_channels), slope.data_as<float>()[0]);
      if (slope.numel() == p.out_channels)
        std::copy(slope.data_as<float>(), slope.data_as<float>() + slope.numel(), slopes_.begin());
      act.slope = slopes_.data();
    }
    const float* bias = in.size() > 2 && in[2].present ? in[2].value->data_as<float>() : nullptr;
    const bool residual = in.size() > fused::kResidualInput && in[fused::kResidualInput].present;
    // Kept for candidate(): the weights and bias are the plan's constants, alive as long as the session's plan
    // (a model releases constants only after its own load-time prepare, whose kernels its sessions adopt).
    weights_ = in[1].value->data_as<float>();
    bias_ = bias;
    activation_for_kernels_ = act;
    try {
      key_ = conv_key(p, act.kind, residual, in_block_, out_block_, settings);
      plan_ = choose_conv_plan(key_, settings, &tuned_);
      fast_ = make_conv2d_kernel(plan_, p, weights_, bias_, act);
    } catch (const Error& e) {
      error(e.what());
    }
    if (fast_) prepared_ = std::make_shared<const PreparedConv>(PreparedConv{fast_, key_, plan_, tuned_});
  }

  void run_plain(OpContext& ctx) {
    const float* x = ctx.input(0).data_as<float>();
    const float* w = ctx.input(1).data_as<float>();
    const float* bias = ctx.has_input(2) ? ctx.input(2).data_as<float>() : nullptr;
    float* y = ctx.output(0).data_as<float>();

    Epilogue epilogue;
    epilogue.activation = activation_;
    if (ctx.has_input(fused::kResidualInput)) epilogue.residual = ctx.input(fused::kResidualInput).data_as<float>();
    if (activation_.kind == ActivationKind::PRelu) {
      const Tensor& slope = ctx.input(fused::kSlopeInput);
      slopes_.assign(static_cast<size_t>(y_shape_[1]), slope.data_as<float>()[0]);
      if (slope.numel() == y_shape_[1]) std::copy(slope.data_as<float>(), slope.data_as<float>() + slope.numel(), slopes_.begin());
      epilogue.activation.slope = slopes_.data();
    }

    const int64_t planes = y_shape_[0] * y_shape_[1];
    auto for_planes = [&](const std::function<void(int64_t, int64_t)>& fn) {
      if (ctx.pool) ctx.pool->parallel_for(planes, fn);
      else fn(0, planes);
    };
    if (geom_.rank() == 3) {
      const Conv3dParams p = params3d();
      for_planes([&](int64_t b, int64_t e) { conv3d_ref_planes(p, epilogue, x, w, bias, y, b, e); });
    } else {
      const Conv2dParams p = params2d();
      for_planes([&](int64_t b, int64_t e) { conv2d_ref_planes(p, epilogue, x, w, bias, y, b, e); });
    }
  }

  // Blocked input/output with the reference kernel: convert to plain NCHW, convolve, convert back. The
  // oracle for the blocked fast kernels, and the fallback where they do not apply.
  void run_blocked_via_reference(OpContext& ctx) {
    const int64_t n = x_shape_[0], c = x_shape_[1], m = y_shape_[1];
    const int64_t in_plane = x_shape_[2] * x_shape_[3], out_plane = y_shape_[2] * y_shape_[3];
    auto to_plain = [&](const Tensor& t, int64_t channels, int64_t plane, int64_t block) {
      Tensor plain = Tensor::empty(DataType::Float32, t.shape());
      reorder_blocks_ref(t.data_as<float>(), plain.data_as<float>(), n, channels, plane, block, 1);
      return plain;
    };
    Tensor x = to_plain(ctx.input(0), c, in_plane, in_block_);
    Tensor residual;
    if (ctx.has_input(fused::kResidualInput)) residual = to_plain(ctx.input(fused::kResidualInput), m, out_plane, out_block_);
    Tensor y = Tensor::empty(DataType::Float32, y_shape_);
    OpContext plain = ctx;
    plain.inputs[0] = &x;
    if (residual.defined()) plain.inputs[fused::kResidualInput] = &residual;
    plain.outputs[0] = &y;
    run_plain(plain);
    reorder_blocks_ref(y.data_as<float>(), ctx.output(0).data_as<float>(), n, m, out_plane, 1, out_block_);
  }

  // 1-D convs run as 2-D ones with a height of 1.
  Conv2dParams params2d() const {
    Conv2dParams p;
    p.batch = x_shape_[0];
    p.in_channels = x_shape_[1];
    p.out_channels = y_shape_[1];
    p.groups = group_;
    const int last = geom_.rank() - 1;  // W axis
    if (geom_.rank() == 2) {
      p.in_h = geom_.in[0];
      p.out_h = geom_.out[0];
      p.kernel_h = geom_.kernel[0];
      p.stride_h = geom_.stride[0];
      p.dilation_h = geom_.dilation[0];
      p.pad_top = geom_.pad_begin[0];
      p.pad_bottom = geom_.pad_end[0];
    }
    p.in_w = geom_.in[last];
    p.out_w = geom_.out[last];
    p.kernel_w = geom_.kernel[last];
    p.stride_w = geom_.stride[last];
    p.dilation_w = geom_.dilation[last];
    p.pad_left = geom_.pad_begin[last];
    p.pad_right = geom_.pad_end[last];
    return p;
  }

  Conv3dParams params3d() const {
    Conv3dParams p;
    p.batch = x_shape_[0];
    p.in_channels = x_shape_[1];
    p.out_channels = y_shape_[1];
    p.groups = group_;
    p.in_d = geom_.in[0], p.in_h = geom_.in[1], p.in_w = geom_.in[2];
    p.out_d = geom_.out[0], p.out_h = geom_.out[1], p.out_w = geom_.out[2];
    p.kernel_d = geom_.kernel[0], p.kernel_h = geom_.kernel[1], p.kernel_w = geom_.kernel[2];
    p.stride_d = geom_.stride[0], p.stride_h = geom_.stride[1], p.stride_w = geom_.stride[2];
    p.dilation_d = geom_.dilation[0], p.dilation_h = geom_.dilation[1], p.dilation_w = geom_.dilation[2];
    p.pad_front = geom_.pad_begin[0], p.pad_top = geom_.pad_begin[1], p.pad_left = geom_.pad_begin[2];
    return p;
  }

  WindowAttrs window_;
  int64_t group_ = 1;
  Activation activation_;
  int64_t in_block_ = 1, out_block_ = 1;  // channel blocks of X and Y (1 = plain NCHW)
  ConvKey key_;                            // what the policy planned for (see ConvTunable)
  ConvPlan plan_;                          // the policy's plan (ConvKernel::Ref: the reference)
  bool tuned_ = false;                     // plan_ came from the tuning cache
  // The prepared weights and bias (constants of the plan), for candidate(); null after adopt_prepared_state.
  const float* weights_ = nullptr;
  const float* bias_ = nullptr;
  Activation activation_for_kernels_;      // with the expanded PRelu slopes
  std::shared_ptr<const PreparedConv> prepared_;  // what prepare() built or adopt_prepared_state() took
  std::shared_ptr<const Conv2dKernel> fast_;      // the vector kernel, when one applies
  WindowGeometry geom_;
  Shape x_shape_, y_shape_;
  std::vector<float> slopes_;  // PRelu slopes expanded to one per output channel
};

NINEGRID_REGISTER_OP("Conv", Conv);

}  // namespace
}  // namespace ninegrid
