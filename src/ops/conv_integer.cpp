// ConvInteger (ONNX opset 10): 2-D convolution of uint8/int8 x and w with zero points, exact int32 sums
// (padding taps add nothing: they hold x's zero point). x_zero_point is a scalar; w_zero_point a scalar or
// one per output channel. Computed by kernels/ref/qconv2d_ref.h's qconv2d_sums_ref, which takes uint8 x
// and int8 w: int8 x is shifted by +128 and uint8 w by -128 together with their zero points (the
// differences, and so the sums, are unchanged); per-channel weight zero points are subtracted afterwards
// as zw[m] times the window's sum of (x - zx).
#include <vector>

#include "kernels/conv_params.h"
#include "kernels/ref/qconv2d_ref.h"
#include "ops/op.h"
#include "ops/sliding_window.h"

namespace ninegrid {
namespace {

bool is_byte_type(DataType t) { return t == DataType::UInt8 || t == DataType::Int8; }

int32_t byte_at(const Tensor& t, int64_t i) {
  return t.dtype() == DataType::UInt8 ? t.data_as<uint8_t>()[i] : t.data_as<int8_t>()[i];
}

class ConvInteger final : public Op {
 public:
  explicit ConvInteger(const Node& node) : Op(node) {
    try {
      window_ = read_window_attrs(node.attrs);
      group_ = node.attrs.get_int("group", 1);
    } catch (const Error& e) {
      error(e.what());
    }
    if (group_ <= 0) error("group must be positive, got " + std::to_string(group_));
  }

  void infer(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& out) override {
    expect_inputs(in, 2, 4);
    const TensorDesc& x = in[0];
    const TensorDesc& w = in[1];
    if (!is_byte_type(x.dtype)) error(std::string("input x must be uint8 or int8, got ") + dtype_name(x.dtype));
    if (!is_byte_type(w.dtype)) error(std::string("input w must be uint8 or int8, got ") + dtype_name(w.dtype));
    if (x.shape.size() != 4 || w.shape.size() != 4)
      error("unsupported: only 2-D convolution (4-D x and w), got " + shape_str(x.shape) + " and " + shape_str(w.shape));
    const int64_t channels = x.shape[1], out_channels = w.shape[0];
    if (w.shape[1] * group_ != channels || out_channels % group_ != 0)
      error("weights " + shape_str(w.shape) + " with group " + std::to_string(group_) + " do not fit input " +
            shape_str(x.shape));
    if (in.size() > 2 && in[2].present) {
      if (in[2].dtype != x.dtype) error("x_zero_point's type differs from x's");
      if (shape_numel(in[2].shape) != 1) error("x_zero_point must be a scalar, got shape " + shape_str(in[2].shape));
    }
    w_zp_per_channel_ = false;
    if (in.size() > 3 && in[3].present) {
      if (in[3].dtype != w.dtype) error("w_zero_point's type differs from w's");
      const int64_t n = shape_numel(in[3].shape);
      if (in[3].shape.size() > 1 || (n != 1 && n != out_channels))
        error("w_zero_point must be a scalar or one value per output channel (" + std::to_string(out_channels) +
              "), got shape " + shape_str(in[3].shape));
      w_zp_per_channel_ = n != 1;
    }
    WindowGeometry geom;
    try {
      geom = resolve_window(window_, {x.shape[2], x.shape[3]}, {w.shape[2], w.shape[3]});
    } catch (const Error& e) {
      error(e.what());
    }
    p_ = Conv2dParams();
    p_.batch = x.shape[0];
    p_.in_channels = channels, p_.out_channels = out_channels, p_.groups = group_;
    p_.in_h = geom.in[0], p_.in_w = geom.in[1];
    p_.out_h = geom.out[0], p_.out_w = geom.out[1];
    p_.kernel_h = geom.kernel[0], p_.kernel_w = geom.kernel[1];
    p_.stride_h = geom.stride[0], p_.stride_w = geom.stride[1];
    p_.dilation_h = geom.dilation[0], p_.dilation_w = geom.dilation[1];
    p_.pad_top = geom.pad_begin[0], p_.pad_left = geom.pad_begin[1];
    p_.pad_bottom = geom.pad_end[0], p_.pad_right = geom.pad_end[1];
    out[0].dtype = DataType::Int32;
    out[0].shape = {p_.batch, out_channels, p_.out_h, p_.out_w};
  }

  void run(OpContext& ctx) override {
    const Tensor& xt = ctx.input(0);
    const Tensor& wt = ctx.input(1);
    const int32_t x_shift = xt.dtype() == DataType::Int8 ? 128 : 0;
    const int32_t w_shift = wt.dtype() == DataType::UInt8 ? -128 : 0;
    std::vector<uint8_t> x(static_cast<size_t>(xt.numel()));
    for (int64_t i = 0; i < xt.numel(); ++i) x[i] = static_cast<uint8_t>(byte_at(xt, i) + x_shift);
    std::vector<int8_t> w(static_cast<size_t>(wt.numel()));
    for (int64_t i = 0; i < wt.numel(); ++i) w[i] = static_cast<int8_t>(byte_at(wt, i) + w_shift);
    const int32_t zx = (ctx.has_input(2) ? byte_at(ctx.input(2), 0) : 0) + x_shift;
    int32_t* y = ctx.output(0).data_as<int32_t>();
    if (!w_zp_per_channel_) {
      const int32_t zw = (ctx.has_input(3) ? byte_at(ctx.input(3), 0) : 0) + w_shift;
      qconv2d_sums_ref(p_, zx, zw, 1, x.data(), w.data(), y);
      return;
    }
    qconv2d_sums_ref(p_, zx, 0, 1, x.data(), w.data(), y);
    const std::vector<int8_t> ones(w.size(), 1);
    std::vector<int32_t> window_sums(static_cast<size_t>(ctx.output(0).numel()));
    qconv2d_sums_ref(p_, zx, 0, 1, x.data(), ones.data(), window_sums.data());
    const int64_t plane = p_.out_h * p_.out_w;
    for (int64_t i = 0; i < ctx.output(0).numel(); ++i) {
      const int64_t m = (i / plane) % p_.out_channels;
      const int32_t zw = byte_at(ctx.input(3), m) + w_shift;
      // Modulo 2^32 like the sums themselves (no signed overflow).
      y[i] = static_cast<int32_t>(static_cast<uint32_t>(y[i]) -
                                  static_cast<uint32_t>(static_cast<int64_t>(zw) * window_sums[i]));
    }
  }

  int64_t macs() const override { return p_.macs(); }

 private:
  WindowAttrs window_;
  int64_t group_ = 1;
  Conv2dParams p_;
  bool w_zp_per_channel_ = false;
};

NINEGRID_REGISTER_OP("ConvInteger", ConvInteger);

}  // namespace
}  // namespace ninegrid
