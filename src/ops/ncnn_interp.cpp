// ng.Interp: ncnn's Interp layer on N x C x H x W, for the cases ONNX Resize does not reproduce exactly
// (fixed output sizes, non-power-of-two scales, align_corner, bicubic). See kernels/ref/ncnn_interp_ref.h.
//
// Attributes: resize_type (1 nearest, 2 bilinear, 3 bicubic), scales [height, width],
// output_size [height, width] (0 = use the scales), align_corner (0/1).
// With ng.in_block = ng.out_block = B > 1 (set by the layout pass) input and output are channel-blocked
// NCHW[B]c.
#include <cmath>
#include <cstring>

#include "kernels/ref/ncnn_interp_blocked_ref.h"
#include "kernels/ref/ncnn_interp_ref.h"
#include "kernels/ref/spatial_blocked_ref.h"
#include "ops/blocked_layout.h"
#include "ops/op.h"
#include "core/thread_pool.h"

namespace ninegrid {
namespace {

// Output sides are bounded (2^20) so a garbled model cannot ask for terabytes of coordinate tables.
constexpr int64_t kMaxSize = int64_t(1) << 20;

class NcnnInterp final : public Op {
 public:
  explicit NcnnInterp(const Node& node) : Op(node) {
    const Attributes& a = node_.attrs;
    resize_type_ = static_cast<int>(a.get_int("resize_type", 2));
    auto scales = a.get_floats("scales", {1.f, 1.f});
    auto size = a.get_ints("output_size", {0, 0});
    align_corner_ = a.get_int("align_corner", 0) != 0;
    if (resize_type_ < 1 || resize_type_ > 3) error("resize_type must be 1 (nearest), 2 (bilinear) or 3 (bicubic)");
    if (scales.size() != 2 || size.size() != 2) error("scales and output_size need 2 values (height, width)");
    for (float s : scales)
      if (!(s > 0.f) || !std::isfinite(s)) error("scales must be positive and finite");
    for (int64_t v : size)
      if (v < 0 || v > kMaxSize) error("output_size must be between 0 and " + std::to_string(kMaxSize));
    height_scale_ = scales[0], width_scale_ = scales[1];
    output_height_ = size[0], output_width_ = size[1];
    block_ = read_spatial_block(*this);
  }

  void infer(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& out) override {
    expect_inputs(in, 1, 1);
    expect_float(in[0], "input");
    expect_blockable(*this, block_, in[0]);
    const Shape& s = in[0].shape;
    if (s.size() != 4) error("input must be 4-D (N x C x H x W), got " + shape_str(s));
    h_ = s[2], w_ = s[3];
    oh_ = output_height_, ow_ = output_width_;
    if (oh_ == 0 || ow_ == 0) {  // ncnn: either size missing means both come from the scales
      oh_ = scaled(h_, height_scale_);
      ow_ = scaled(w_, width_scale_);
    }
    planes_ = s[0] * s[1];
    out[0].dtype = DataType::Float32;
    out[0].shape = {s[0], s[1], oh_, ow_};
    if (h_ <= 0 || w_ <= 0) return;
    if (resize_type_ == 1) {
      const float hs = output_height_ ? static_cast<float>(h_) / static_cast<float>(oh_) : 1.f / height_scale_;
      const float ws = output_width_ ? static_cast<float>(w_) / static_cast<float>(ow_) : 1.f / width_scale_;
      ys_ = ref::ncnn_nearest_index(h_, oh_, hs);
      xs_ = ref::ncnn_nearest_index(w_, ow_, ws);
    } else if (resize_type_ == 2) {
      ytaps_ = ref::ncnn_linear_taps(h_, oh_, align_corner_);
      xtaps_ = ref::ncnn_linear_taps(w_, ow_, align_corner_);
    } else {
      ytaps_ = ref::ncnn_cubic_taps(h_, oh_, align_corner_);
      xtaps_ = ref::ncnn_cubic_taps(w_, ow_, align_corner_);
    }
  }

  void run(OpContext& ctx) override {
    const float* x = ctx.input(0).data_as<float>();
    float* y = ctx.output(0).data_as<float>();
    const int64_t in_plane = h_ * w_, out_plane = oh_ * ow_;
    if (oh_ == h_ && ow_ == w_) {  // ncnn passes the blob through unchanged
      if (y != x) std::memcpy(y, x, ctx.input(0).nbytes());
      return;
    }
    if (block_ > 1) {
      run_blocked(x, y, ctx);
      return;
    }
    auto body = [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {
        if (resize_type_ == 1)
          ref::ncnn_resize_nearest_ref(x + i * in_plane, h_, w_, y + i * out_plane, oh_, ow_, ys_, xs_);
        else
          ref::ncnn_resize_taps_ref(x + i * in_plane, h_, w_, y + i * out_plane, oh_, ow_, ytaps_, xtaps_,
                                    resize_type_ == 2 ? 2 : 4);
      }
    };
    if (ctx.pool) {
      ctx.pool->parallel_for(planes_, body);
    } else {
      body(0, planes_);
    }
  }

 private:
  // ncnn: int(size * scale) in float arithmetic; checked so the conversion is defined.
  int64_t scaled(int64_t size, float scale) const {
    const float v = static_cast<float>(size) * scale;
    if (!(v >= 1.f) || !(v <= static_cast<float>(kMaxSize)))
      error("output size " + std::to_string(size) + " x " + std::to_string(scale) + " is out of range");
    return static_cast<int64_t>(v);
  }

  // Output rows of the block planes ((batch, channel block) pairs) split over the pool.
  void run_blocked(const float* x, float* y, OpContext& ctx) const {
    const int64_t rows = planes_ / block_ * oh_;
    auto fn = [&](int64_t b, int64_t e) {
      if (resize_type_ == 1)
        gather_pixels_blocked_ref(h_, w_, ys_.data(), oh_, xs_.data(), ow_, block_, 0.f, x, y, b, e);
      else
        ncnn_interp_taps_blocked_ref(x, h_, w_, y, oh_, ow_, ytaps_, xtaps_, resize_type_ == 2 ? 2 : 4, block_, b, e);
    };
    if (ctx.pool) ctx.pool->parallel_for(rows, fn);
    else fn(0, rows);
  }

  int64_t block_ = 1;  // channel block of input and output (1 = plain NCHW)
  int resize_type_ = 2;
  bool align_corner_ = false;
  float height_scale_ = 1.f, width_scale_ = 1.f;
  int64_t output_height_ = 0, output_width_ = 0;
  int64_t h_ = 0, w_ = 0, oh_ = 0, ow_ = 0, planes_ = 0;
  std::vector<int64_t> ys_, xs_;
  ref::InterpTaps ytaps_, xtaps_;
};

NINEGRID_REGISTER_OP("ng.Interp", NcnnInterp);

}  // namespace
}  // namespace ninegrid
