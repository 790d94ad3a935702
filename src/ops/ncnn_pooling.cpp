// ng.Pooling: ncnn's windowed max/average pooling with its exact padding and divisor rules, for the
// cases ONNX MaxPool/AveragePool cannot express (see kernels/ref/ncnn_pooling_ref.h). Input N x C x H x W.
//
// Attributes: pooling_type (0 max, 1 average), kernel_shape [kh, kw], strides [sh, sw],
// pads [top, left, bottom, right], pad_mode (0 full, 1 valid, 2 SAME_UPPER, 3 SAME_LOWER),
// count_include_pad (0/1).
#include "kernels/ref/ncnn_pooling_ref.h"
#include "ops/op.h"
#include "core/thread_pool.h"

namespace ninegrid {
namespace {

class NcnnPooling final : public Op {
 public:
  explicit NcnnPooling(const Node& node) : Op(node) {
    const Attributes& a = node_.attrs;
    p_.pooling_type = static_cast<int>(a.get_int("pooling_type", 0));
    auto kernel = a.get_ints("kernel_shape");
    auto strides = a.get_ints("strides", {1, 1});
    auto pads = a.get_ints("pads", {0, 0, 0, 0});
    p_.pad_mode = static_cast<int>(a.get_int("pad_mode", 0));
    p_.count_include_pad = a.get_int("count_include_pad", 0) != 0;
    if (p_.pooling_type != 0 && p_.pooling_type != 1) error("pooling_type must be 0 (max) or 1 (average)");
    if (kernel.size() != 2 || strides.size() != 2 || pads.size() != 4)
      error("needs kernel_shape and strides of 2 values and pads of 4");
    for (int64_t v : kernel)
      if (v <= 0 || v > (int64_t(1) << 30)) error("kernel_shape values must be positive");
    for (int64_t v : strides)
      if (v <= 0 || v > (int64_t(1) << 30)) error("strides must be positive");
    for (int64_t v : pads)
      if (v < 0 || v > (int64_t(1) << 30)) error("pads must be non-negative");
    if (p_.pad_mode < 0 || p_.pad_mode > 3) error("pad_mode must be 0..3");
    p_.kernel_h = kernel[0], p_.kernel_w = kernel[1];
    p_.stride_h = strides[0], p_.stride_w = strides[1];
    p_.pad_top = pads[0], p_.pad_left = pads[1], p_.pad_bottom = pads[2], p_.pad_right = pads[3];
  }

  void infer(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& out) override {
    expect_inputs(in, 1, 1);
    expect_float(in[0], "input");
    const Shape& s = in[0].shape;
    if (s.size() != 4) error("input must be 4-D (N x C x H x W), got " + shape_str(s));
    if (!ref::ncnn_pooling_geometry(p_, s[2], s[3], &geom_))
      error("the " + std::to_string(p_.kernel_h) + "x" + std::to_string(p_.kernel_w) + " window does not fit input " +
            shape_str(s));
    out[0].dtype = DataType::Float32;
    out[0].shape = {s[0], s[1], geom_.out_h, geom_.out_w};
    planes_ = s[0] * s[1];
    in_h_ = s[2], in_w_ = s[3];
  }

  void run(OpContext& ctx) override {
    const float* x = ctx.input(0).data_as<float>();
    float* y = ctx.output(0).data_as<float>();
    const int64_t in_plane = in_h_ * in_w_, out_plane = geom_.out_h * geom_.out_w;
    auto body = [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i)
        ref::ncnn_pooling_plane_ref(x + i * in_plane, in_h_, in_w_, y + i * out_plane, p_, geom_);
    };
    if (ctx.pool) {
      ctx.pool->parallel_for(planes_, body);
    } else {
      body(0, planes_);
    }
  }

  int64_t macs() const override { return planes_ * geom_.out_h * geom_.out_w * p_.kernel_h * p_.kernel_w; }

 private:
  ref::NcnnPoolingParams p_;
  ref::NcnnPoolingGeometry geom_;
  int64_t planes_ = 0, in_h_ = 0, in_w_ = 0;
};

NINEGRID_REGISTER_OP("ng.Pooling", NcnnPooling);

}  // namespace
}  // namespace ninegrid
