// ConvTranspose (ONNX opsets 1-22): 1-D, 2-D and 3-D transposed convolution with groups, strides,
// dilations, pads, auto_pad, output_padding and output_shape. Runs kernels/ref/conv_transpose_ref.
//
// Inputs: X [N, C, spatial...], W [C, M / group, kernel...], B [M] (optional). Output [N, M, out...].
// Along each axis the full (unpadded) output has s * (in - 1) + output_padding + (k - 1) * d + 1 values;
// the pads crop it. With output_shape (or auto_pad SAME_*, which asks for out = in * s) the pads follow
// from the requested size as the ONNX specification gives them: SAME_UPPER puts the odd one at the end,
// otherwise at the start. A requested size larger than the full output extends it at the end (with the
// bias alone), as output_padding would.
//
// Fused epilogue, set by graph passes (see ops/fused_activation.h): ng.activation, applied to every output
// value; with ng.activation = PRelu, input 4 holds the slopes (one per output channel or one for all).
// Input 3 is unused (Conv's fused residual; ConvTranspose has none). With ng.in_block = 8 or 16 (set by the
// layout pass) X is channel-blocked, as the GEMM reads it anyway; Y is always plain.
//
// 2-D transposed convolutions with one group and constant weights run ops/conv_transpose_fast.h (a GEMM
// then col2im) on AVX2/AVX-512; the rest run kernels/ref/conv_transpose_ref, then the activation.
#include <algorithm>
#include <memory>
#include <vector>

#include "ir/fused_conv.h"
#include "kernels/conv_params.h"
#include "kernels/ref/conv_transpose_ref.h"
#include "kernels/ref/reorder_ref.h"
#include "ops/conv_transpose_fast.h"
#include "ops/fused_activation.h"
#include "ops/op.h"
#include "ops/sliding_window.h"
#include "core/cpu_features.h"
#include "core/thread_pool.h"

namespace ninegrid {
namespace {

constexpr size_t kUnusedResidualInput = 3;

std::string ints_str(const std::vector<int64_t>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}

class ConvTranspose final : public Op {
 public:
  explicit ConvTranspose(const Node& node) : Op(node) {
    try {
      window_ = read_window_attrs(node.attrs);
      group_ = node.attrs.get_int("group", 1);
      output_padding_ = node.attrs.get_ints("output_padding");
      output_shape_ = node.attrs.get_ints("output_shape");
      activation_ = read_fused_activation(node.attrs);
      x_block_ = node.attrs.get_int(fused::kInBlock, 1);
    } catch (const Error& e) {
      error(e.what());
    }
    if (group_ <= 0) error("group must be positive, got " + std::to_string(group_));
    if (x_block_ != 1 && x_block_ != 8 && x_block_ != 16)
      error("ng.in_block must be 1, 8 or 16, got " + std::to_string(x_block_));
  }

  void infer(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& out) override {
    expect_inputs(in, 2, fused::kSlopeInput + 1);
    const TensorDesc& x = in[0];
    const TensorDesc& w = in[1];
    expect_float(x, "input X");
    expect_float(w, "weights W");
    const int rank = static_cast<int>(x.shape.size());
    if (rank < 3) error("input X must have rank 3 or more ([N, C, spatial...]), got shape " + shape_str(x.shape));
    if (rank > 5)
      error("unsupported: ConvTranspose with " + std::to_string(rank - 2) + " spatial dimensions (1 to 3 supported)");
    if (static_cast<int>(w.shape.size()) != rank)
      error("weights W " + shape_str(w.shape) + " must have the rank of X " + shape_str(x.shape));
    if (w.shape[0] != x.shape[1])
      error("weights W " + shape_str(w.shape) + " expect " + std::to_string(w.shape[0]) + " input channels, X " +
            shape_str(x.shape) + " has " + std::to_string(x.shape[1]));
    if (x_block_ > 1 && (rank != 4 || x.shape[1] % x_block_ != 0))
      error("the channel-blocked input (ng.in_block " + std::to_string(x_block_) +
            ") needs a 4-D X whose channels it divides, got shape " + shape_str(x.shape));
    if (x.shape[1] % group_ != 0)
      error("input channels " + std::to_string(x.shape[1]) + " are not divisible by group " + std::to_string(group_));
    const int64_t out_channels = w.shape[1] * group_;
    if (in.size() > 2 && in[2].present) {
      expect_float(in[2], "bias B");
      if (in[2].shape != Shape{out_channels})
        error("bias B must have shape [" + std::to_string(out_channels) + "], got " + shape_str(in[2].shape));
    }
    if (in.size() > kUnusedResidualInput && in[kUnusedResidualInput].present)
      error("input " + std::to_string(kUnusedResidualInput) + " must be absent (ConvTranspose has no fused residual)");
    const bool has_slope = in.size() > fused::kSlopeInput && in[fused::kSlopeInput].present;
    if (activation_.kind == ActivationKind::PRelu) {
      if (!has_slope) error("fused PRelu needs its slope as input " + std::to_string(fused::kSlopeInput));
      expect_float(in[fused::kSlopeInput], "PRelu slope");
      const int64_t n = shape_numel(in[fused::kSlopeInput].shape);
      if (n != 1 && n != out_channels)
        error("PRelu slope " + shape_str(in[fused::kSlopeInput].shape) + " must hold 1 or " + std::to_string(out_channels) +
              " values (one per output channel)");
    } else if (has_slope) {
      error("input " + std::to_string(fused::kSlopeInput) + " (PRelu slope) is given without ng.activation = PRelu");
    }

    const size_t sr = static_cast<size_t>(rank - 2);
    std::vector<int64_t> in_sp(x.shape.begin() + 2, x.shape.end());
    std::vector<int64_t> kernel(w.shape.begin() + 2, w.shape.end());
    auto per_axis = [&](const std::vector<int64_t>& v, int64_t fallback, const char* name) {
      if (v.empty()) return std::vector<int64_t>(sr, fallback);
      if (v.size() != sr) error(std::string(name) + " " + ints_str(v) + " must have " + std::to_string(sr) + " values");
      return v;
    };
    if (!window_.kernel_shape.empty() && window_.kernel_shape != kernel)
      error("kernel_shape " + ints_str(window_.kernel_shape) + " does not match the weights' kernel " +
            ints_str(kernel));
    stride_ = per_axis(window_.strides, 1, "strides");
    dilation_ = per_axis(window_.dilations, 1, "dilations");
    std::vector<int64_t> adj = per_axis(output_padding_, 0, "output_padding");
    // Begins of every axis, then ends; ignored under auto_pad (ONNX forbids using both).
    std::vector<int64_t> pads(2 * sr, 0);
    if (window_.auto_pad == AutoPad::NotSet && !window_.pads.empty()) {
      if (window_.pads.size() != 2 * sr)
        error("pads " + ints_str(window_.pads) + " must have " + std::to_string(2 * sr) + " values");
      pads = window_.pads;
    }
    std::vector<int64_t> requested;
    if (!output_shape_.empty()) {
      // Spatial sizes; some exporters write the full [N, C, spatial...] shape.
      if (output_shape_.size() == sr) requested = output_shape_;
      else if (output_shape_.size() == sr + 2) requested.assign(output_shape_.begin() + 2, output_shape_.end());
      else error("output_shape " + ints_str(output_shape_) + " must have " + std::to_string(sr) + " values");
    }

    in_ = in_sp;
    kernel_ = kernel;
    pad_begin_.assign(sr, 0);
    out_.assign(sr, 0);
    for (size_t i = 0; i < sr; ++i) {
      auto in_range = [](int64_t v) { return v > 0 && v <= kMaxWindowValue; };
      if (in_sp[i] > (int64_t(1) << 30))
        error("unsupported: spatial size " + ints_str(in_sp) + " (at most 2^30 per axis)");
      if (!in_range(kernel[i])) error("kernel " + ints_str(kernel) + " must be positive (and at most 2^30)");
      if (!in_range(stride_[i])) error("strides " + ints_str(stride_) + " must be positive (and at most 2^30)");
      if (!in_range(dilation_[i])) error("dilations " + ints_str(dilation_) + " must be positive (and at most 2^30)");
      if (adj[i] < 0 || (adj[i] >= stride_[i] && adj[i] >= dilation_[i]))
        error("output_padding " + ints_str(adj) + " must be non-negative and smaller than the stride or dilation");
      const int64_t full = stride_[i] * (in_sp[i] - 1) + adj[i] + (kernel[i] - 1) * dilation_[i] + 1;
      int64_t want = -1;
      if (!requested.empty()) {
        want = requested[i];
        if (want <= 0 || want > full + kMaxWindowValue)
          error("output_shape " + ints_str(output_shape_) + " is out of range for input " + shape_str(x.shape));
      }
      else if (window_.auto_pad == AutoPad::SameUpper || window_.auto_pad == AutoPad::SameLower)
        want = in_sp[i] * stride_[i];
      if (want >= 0) {
        const int64_t total = full - want;
        if (total <= 0) pad_begin_[i] = 0;  // the output extends past the full one
        else if (window_.auto_pad == AutoPad::SameUpper) pad_begin_[i] = total / 2;
        else pad_begin_[i] = total - total / 2;
        out_[i] = want;
      } else {
        if (pads[i] < 0 || pads[sr + i] < 0 || pads[i] > kMaxWindowValue || pads[sr + i] > kMaxWindowValue)
          error("pads " + ints_str(pads) + " must not be negative (nor above 2^30)");
        pad_begin_[i] = pads[i];
        out_[i] = full - pads[i] - pads[sr + i];
      }
      if (out_[i] <= 0)
        error("output size " + ints_str(out_) + " is empty for input " + shape_str(x.shape) + ", kernel " +
              ints_str(kernel) + ", strides " + ints_str(stride_) + " and pads " + ints_str(pads));
    }

    batch_ = x.shape[0];
    in_channels_ = x.shape[1];
    out_channels_ = out_channels;
    Shape y_shape = {x.shape[0], out_channels};
    y_shape.insert(y_shape.end(), out_.begin(), out_.end());
    out[0].dtype = DataType::Float32;
    out[0].shape = y_shape;
    fast_.reset();
  }

  void run(OpContext& ctx) override {
    if (fast_ && (x_block_ == 1 || fast_->accepts_input_block(x_block_))) {
      fast_->run(ctx.input(0).data_as<float>(), ctx.output(0).data_as<float>(), ctx.pool, x_block_);
      return;
    }
    const ConvTransposeParams p = params();
    const float* x = ctx.input(0).data_as<float>();
    std::vector<float> plain_x;  // a blocked input made plain for the reference (the layout pass avoids this)
    if (x_block_ > 1) {
      const Shape& xs = ctx.input(0).shape();
      plain_x.resize(static_cast<size_t>(ctx.input(0).numel()));
      reorder_blocks_ref(x, plain_x.data(), xs[0], xs[1], xs[2] * xs[3], x_block_, 1);
      x = plain_x.data();
    }
    const float* w = ctx.input(1).data_as<float>();
    const float* bias = ctx.has_input(2) ? ctx.input(2).data_as<float>() : nullptr;
    float* y = ctx.output(0).data_as<float>();
    Activation act = activation_;
    if (act.kind == ActivationKind::PRelu) act.slope = expand_slopes(ctx.input(fused::kSlopeInput));
    const int64_t out_plane = p.out[0] * p.out[1] * p.out[2];
    auto fn = [&](int64_t b, int64_t e) {
      conv_transpose_ref_planes(p, x, w, bias, y, b, e);
      if (act.kind == ActivationKind::None && !act.affine_after) return;
      for (int64_t plane = b; plane < e; ++plane) {
        const int64_t channel = plane % p.out_channels;
        float* yp = y + plane * out_plane;
        for (int64_t i = 0; i < out_plane; ++i) yp[i] = apply_activation(act, yp[i], channel);
      }
    };
    const int64_t planes = p.batch * p.out_channels;
    if (ctx.pool) ctx.pool->parallel_for(planes, fn);
    else fn(0, planes);
  }

  int64_t macs() const override { return in_.empty() ? 0 : params().macs(); }

  std::string algorithm() const override { return fast_ ? fast_->name() : std::string("ref"); }

  // The GEMM kernel holds copies of the weights, bias and PRelu slopes: sessions of one model share it.
  std::shared_ptr<const void> prepared_state() const override { return fast_; }
  void adopt_prepared_state(std::shared_ptr<const void> state) override {
    fast_ = std::static_pointer_cast<const FastConvTranspose2d>(std::move(state));
  }
  bool packed_input(size_t i) const override {
    return fast_ && (i == 1 || i == 2 || i == static_cast<size_t>(fused::kSlopeInput));
  }

 private:
  // The GEMM + col2im kernel when it handles this shape on this CPU and the weights (and bias, and PRelu
  // slopes) are known at plan time, as they are in every imported model; it prepacks the weights once per
  // input shape. Otherwise the reference.
  void prepare(const std::vector<TensorDesc>& in, const ExecSettings& settings) override {
    if (!in[1].value) return;
    if (in.size() > 2 && in[2].present && !in[2].value) return;
    if (activation_.kind == ActivationKind::PRelu && !in[fused::kSlopeInput].value) return;
    const ConvTransposeParams p = params();
    const Isa isa = settings.isa;
    if (!FastConvTranspose2d::supports(p, isa)) return;
    Activation act = activation_;
    if (act.kind == ActivationKind::PRelu) act.slope = expand_slopes(*in[fused::kSlopeInput].value);
    const float* bias = in.size() > 2 && in[2].present ? in[2].value->data_as<float>() : nullptr;
    try {
      fast_ = std::make_shared<const FastConvTranspose2d>(p, in[1].value->data_as<float>(), bias, act, isa);
    } catch (const Error& e) {
      error(e.what());
    }
  }

  // PRelu's slopes as one per output channel (a single slope is shared by all), in slopes_.
  const float* expand_slopes(const Tensor& slope) {
    slopes_.assign(static_cast<size_t>(out_channels_), slope.data_as<float>()[0]);
    if (slope.numel() == out_channels_)
      std::copy(slope.data_as<float>(), slope.data_as<float>() + slope.numel(), slopes_.begin());
    return slopes_.data();
  }

  // Spatial axes right-aligned into (depth, height, width).
  ConvTransposeParams params() const {
    ConvTransposeParams p;
    p.batch = batch_;
    p.in_channels = in_channels_;
    p.out_channels = out_channels_;
    p.groups = group_;
    const size_t sr = in_.size(), skip = 3 - sr;
    for (size_t i = 0; i < sr; ++i) {
      p.in[skip + i] = in_[i];
      p.out[skip + i] = out_[i];
      p.kernel[skip + i] = kernel_[i];
      p.stride[skip + i] = stride_[i];
      p.dilation[skip + i] = dilation_[i];
      p.pad_begin[skip + i] = pad_begin_[i];
    }
    return p;
  }

  WindowAttrs window_;
  int64_t group_ = 1;
  std::vector<int64_t> output_padding_, output_shape_;
  Activation activation_;
  std::shared_ptr<const FastConvTranspose2d> fast_;  // when it applies (shared by sessions)
  std::vector<float> slopes_;                   // PRelu slopes expanded to one per output channel
  int64_t x_block_ = 1;                         // ng.in_block: X plain (1) or NCHW8c / NCHW16c
  // Resolved by infer().
  int64_t batch_ = 0, in_channels_ = 0, out_channels_ = 0;
  std::vector<int64_t> in_, out_, kernel_, stride_, dilation_, pad_begin_;
};

NINEGRID_REGISTER_OP("ConvTranspose", ConvTranspose);

}  // namespace
}  // namespace ninegrid
